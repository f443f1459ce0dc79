"""Codex CLI: its hook payloads, `git rewind install --agent codex` with the trust Codex asks for,
and its conversation rewind (a new rollout under a new id; the original never changes).

The payloads and hashes below were recorded from the real codex-cli 0.169.0 (the end-to-end
test, tests/test_e2e_codex.py, runs it); here they are checked without it.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from helpers import installed
from helpers.workdir import Workdir

from git_rewind import agents
from git_rewind.agents import codex, install
from git_rewind.agents import event as ev
from git_rewind.base.errors import RewindError
from git_rewind.base.note import Note

ROOT = Path(__file__).resolve().parent.parent
SESSION = "01a209a6-456d-7881-bac0-fed42950f067"
TURN_1 = "01a209a6-4570-7160-a56c-1c5fc40b6c9d"
TURN_2 = "01a209a6-5000-7160-a56c-1c5fc40b6c9d"
EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd", "PreCompact"]


def payload(event: str, cwd: Path, transcript: Path | None = None, **fields: Any) -> dict[str, Any]:
    """A hook payload as Codex sends it (fields as recorded live)."""
    return {"session_id": SESSION, "transcript_path": str(transcript) if transcript else None, "cwd": str(cwd),
            "hook_event_name": event, "model": "gpt-5.5", "permission_mode": "bypassPermissions", **fields}


def apply_patch(cwd: Path, patch: str, call_id: str = "call_1", turn: str = TURN_1,
                transcript: Path | None = None) -> dict[str, Any]:
    return payload("PreToolUse", cwd, transcript, turn_id=turn, tool_name="apply_patch",
                   tool_input={"command": patch}, tool_use_id=call_id)


# payloads → Events ---------------------------------------------------------------------------


def test_a_patch_names_every_file_it_adds_updates_deletes_or_moves(tmp_path: Path) -> None:
    (tmp_path / "gone.txt").write_text("x" * 40)
    patch = ("*** Begin Patch\n*** Add File: new.txt\n+hello\n"
             f"*** Update File: {tmp_path}/src/app.py\n@@\n-old line\n+new line\n"
             "*** Delete File: gone.txt\n"
             "*** Update File: a.md\n*** Move to: docs/a.md\n@@\n-x\n+y\n*** End Patch\n")
    event = codex.parse(apply_patch(tmp_path, patch))
    # It adds a file: a creation (the minimal tier checkpoints it), as for Droid and OpenCode.
    assert (event.agent, event.kind, event.tool, event.tool_kind) == ("codex", ev.PRE_TOOL, "apply_patch", ev.WRITE)
    assert event.paths == ["new.txt", f"{tmp_path}/src/app.py", "gone.txt", "a.md", "docs/a.md"]
    # + and - lines (without their marker), and the deleted file's size.
    assert event.change_chars == len("hello") + len("old line") + len("new line") + 40 + 2
    assert (event.prompt_id, event.tool_use_id) == (TURN_1, "call_1")  # the turn stands for its prompt

    only_new = codex.parse(apply_patch(tmp_path, "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n"))
    assert only_new.tool_kind == ev.WRITE  # only new files: "before a file is created"


def test_the_other_events_and_the_shell(tmp_path: Path) -> None:
    prompt = codex.parse(payload("UserPromptSubmit", tmp_path, turn_id=TURN_1, prompt="fix it"))
    assert (prompt.kind, prompt.prompt, prompt.prompt_id) == (ev.PROMPT, "fix it", TURN_1)
    shell = codex.parse(payload("PostToolUse", tmp_path, turn_id=TURN_1, tool_name="Bash",
                                tool_input={"command": "make"}, tool_use_id="call_2", tool_response="ok"))
    assert (shell.kind, shell.tool_kind, shell.paths) == (ev.POST_TOOL, ev.SHELL, [])
    start = codex.parse(payload("SessionStart", tmp_path, source="resume"))
    assert (start.kind, start.source, start.transcript) == (ev.SESSION_START, "resume", None)  # may be null
    end = codex.parse(payload("SessionEnd", tmp_path, reason="other"))
    assert (end.kind, end.source) == (ev.SESSION_END, "other")
    mcp = codex.parse(payload("PreToolUse", tmp_path, turn_id=TURN_1, tool_name="mcp__fs__write",
                              tool_input={"path": "x"}, tool_use_id="c"))
    assert (mcp.tool_kind, mcp.paths) == (None, [])
    odd = codex.parse(payload("PreToolUse", tmp_path, tool_name="apply_patch", tool_input="not a patch"))
    assert odd.paths == [] and odd.change_chars == 0


def test_codex_is_detected_from_its_payloads() -> None:
    # Codex sets no variable of its own in a hook's environment (checked live): the payload tells.
    assert agents.detect({"turn_id": TURN_1, "hook_event_name": "Stop"}, {}) == "codex"
    assert agents.detect({"tool_name": "apply_patch"}, {}) == "codex"
    assert agents.detect({"turn_id": TURN_1}, {"FACTORY_PROJECT_DIR": "/p"}) == "droid"
    assert agents.detect({"prompt_id": "p"}, {"CLAUDECODE": "1"}) == "claude-code"


# install: hooks.json and the trust in config.toml --------------------------------------------

COMMAND = "/tmp/venv-codex/bin/git-rewind hook --agent codex"


def test_the_trust_hash_is_the_one_codex_computes() -> None:
    # currentHash as `codex app-server` reported it (hooks/list) for these handlers.
    handler = {"type": "command", "command": COMMAND, "timeout": 30}
    assert codex.trusted_hash("PreToolUse", "apply_patch", handler) == \
        "sha256:668eb8b56a0807a2ce0f3451ba3b51d3a6dc72c1798f5a4005a115d5ce3c1336"
    assert codex.trusted_hash("SessionStart", None, handler) == \
        "sha256:f822a09be22b5759ea7e4923e4770b435fb869ec4e77a6757c22313abacca9f8"
    # SessionEnd handlers are clamped to 3 s, and hashed so.
    assert codex.trusted_hash("SessionEnd", None, handler) == \
        "sha256:7c6a59284bbf089eee44568c64e57d06aa110cadd9bcb9f0f07c7a000e780fa7"


def test_the_file_under_hooks_is_what_install_writes() -> None:
    readable = json.loads((ROOT / "hooks" / "codex" / "hooks.json").read_text())
    assert readable == install.template("codex")
    assert list(readable) == ["hooks"] and list(readable["hooks"]) == EVENTS
    assert readable["hooks"]["PreToolUse"][0]["matcher"] == "apply_patch"
    assert readable["hooks"]["PostToolUse"][0]["matcher"] == "Bash"


USER_CONFIG = """# my Codex settings
model = "gpt-5.5"  # the one I like

[hooks.state."/elsewhere/.codex/hooks.json:stop:0:0"]
trusted_hash = "sha256:someone-elses"

[projects."/work/x"]
trust_level = "trusted"
"""
USER_HOOKS: dict[str, Any] = {"description": "mine", "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}],
}}


def note_of(data: dict[str, Any]) -> Note:
    """The note DATA reads as (the tests below hand over only notes that do)."""
    note = Note.from_json(data)
    assert note is not None, data
    return note


def state_of(config: Path) -> dict[str, Any]:
    import tomlkit

    return dict(tomlkit.parse(config.read_text()).unwrap().get("hooks", {}).get("state", {}))


@pytest.fixture
def codex_home(tmp_path: Path, project: Workdir, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$CODEX_HOME, away from ~/.codex: for the commands run and for calls in this process."""
    home = tmp_path / "elsewhere-codex"
    project.env["CODEX_HOME"] = str(home)
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home


def test_install_at_user_scope_follows_codex_home_trusts_ours_and_uninstall_gives_both_files_back(
        project: Workdir, home: Path, codex_home: Path) -> None:
    w = project
    codex_home.mkdir()
    config, hooks = codex_home / "config.toml", codex_home / "hooks.json"
    config.write_text(USER_CONFIG)
    hooks.write_text(json.dumps(USER_HOOKS, indent=4))
    before = (config.read_bytes(), hooks.read_bytes())

    out = w.ok("install", "--agent", "codex", "--scope", "user")
    assert f"installed codex hooks (user) in {hooks}" in out
    assert f"backed up {config} to {config}{install.BACKUP_SUFFIX}" in out
    assert f"trusted the 7 hooks in {config}" in out
    assert not (home / ".codex").exists()
    command = installed.hook_command("codex")
    data = json.loads(hooks.read_text())
    assert data["description"] == "mine" and data["hooks"]["PreToolUse"][0] == USER_HOOKS["hooks"]["PreToolUse"][0]
    # Ours come after the user's groups: their trust keys carry the index Codex will see.
    state = state_of(config)
    assert state.pop("/elsewhere/.codex/hooks.json:stop:0:0") == {"trusted_hash": "sha256:someone-elses"}
    where = str(hooks)
    handler = {"type": "command", "command": command, "timeout": 30}
    assert state == {
        f"{where}:session_start:0:0": {"trusted_hash": codex.trusted_hash("SessionStart", None, handler)},
        f"{where}:user_prompt_submit:0:0": {"trusted_hash": codex.trusted_hash("UserPromptSubmit", None, handler)},
        f"{where}:pre_tool_use:1:0": {"trusted_hash": codex.trusted_hash("PreToolUse", "apply_patch", handler)},
        f"{where}:post_tool_use:0:0": {"trusted_hash": codex.trusted_hash("PostToolUse", "Bash", handler)},
        f"{where}:stop:1:0": {"trusted_hash": codex.trusted_hash("Stop", None, handler)},
        f"{where}:session_end:0:0": {"trusted_hash": codex.trusted_hash("SessionEnd", None, handler)},
        f"{where}:pre_compact:0:0": {"trusted_hash": codex.trusted_hash("PreCompact", None, handler)},
    }
    text = config.read_text()
    assert text.startswith(USER_CONFIG.split("[projects")[0])  # comments and every other table kept
    assert '[projects."/work/x"]\ntrust_level = "trusted"\n' in text

    after = (config.read_bytes(), hooks.read_bytes())
    assert "already installed" in w.ok("install", "--agent", "codex", "--scope", "user")
    assert (config.read_bytes(), hooks.read_bytes()) == after
    assert f"codex        user     {hooks}" in w.ok("status")

    out = w.ok("uninstall", "--agent", "codex", "--scope", "user")
    assert f"removed codex hooks (user) from {hooks}" in out and f"removed their trust entries from {config}" in out
    assert (config.read_bytes(), hooks.read_bytes()) == before


def test_a_reinstall_moves_the_trust_of_a_group_our_groups_shifted(project: Workdir, codex_home: Path) -> None:
    w = project
    w.ok("install", "--agent", "codex", "--scope", "user")
    hooks, config = codex_home / "hooks.json", codex_home / "config.toml"
    # The user adds a Stop group after ours, and trusts it in Codex (/hooks).
    data = json.loads(hooks.read_text())
    theirs = {"type": "command", "command": "notify-send done", "timeout": 5}
    data["hooks"]["Stop"].append({"hooks": [theirs]})
    hooks.write_text(json.dumps(data))
    with config.open("a") as fh:
        fh.write(f'\n[hooks.state."{hooks}:stop:1:0"]\ntrusted_hash = "sha256:theirs"\nenabled = true\n')
    # An install from elsewhere (a new git-rewind path) takes ours out and appends them again.
    program = ["/opt/other/git-rewind"]
    install.install("codex", "user", None, program=program)
    data = json.loads(hooks.read_text())
    assert data["hooks"]["Stop"][0]["hooks"] == [theirs]
    state = state_of(config)
    assert state[f"{hooks}:stop:0:0"] == {"trusted_hash": "sha256:theirs", "enabled": True}  # moved with it
    handler = {"type": "command", "command": "/opt/other/git-rewind hook --agent codex", "timeout": 30}
    assert state[f"{hooks}:stop:1:0"] == {"trusted_hash": codex.trusted_hash("Stop", None, handler)}

    install.uninstall("codex", "user", None)
    assert state_of(config) == {f"{hooks}:stop:0:0": {"trusted_hash": "sha256:theirs", "enabled": True}}
    assert json.loads(hooks.read_text()) == {"hooks": {"Stop": [{"hooks": [theirs]}]}}


def test_a_fresh_install_then_uninstall_leaves_nothing_and_project_scope_needs_a_trusted_project(
        project: Workdir, codex_home: Path) -> None:
    w = project
    out = w.ok("install", "--agent", "codex", "--scope", "project")
    hooks = w.path / ".codex" / "hooks.json"
    config = codex_home / "config.toml"
    assert f"installed codex hooks (project) in {hooks}" in out and "backed up" not in out
    assert f"Codex reads {w.path}/.codex only in a trusted project" in out
    assert all(key.startswith(f"{hooks}:") for key in state_of(config)) and len(state_of(config)) == 7
    command = shlex.split(installed.hook_command("codex"))
    assert command[-3:] == ["hook", "--agent", "codex"]
    out = w.ok("uninstall", "--agent", "codex", "--scope", "project")
    assert f"removed {hooks}" in out
    assert not hooks.parent.exists() and not codex_home.exists()  # both were ours alone


def test_an_invalid_config_or_hooks_file_changes_nothing(project: Workdir, codex_home: Path) -> None:
    w = project
    codex_home.mkdir()
    config, hooks = codex_home / "config.toml", codex_home / "hooks.json"
    config.write_text("model = \n")
    run = w.rewind("install", "--agent", "codex", "--scope", "user")
    assert run.returncode != 0 and f"{config}: not valid TOML" in run.stderr
    assert not hooks.exists() and config.read_text() == "model = \n"
    config.write_text("model = 'x'\n")
    hooks.write_text("{oops")
    run = w.rewind("install", "--agent", "codex", "--scope", "user")
    assert run.returncode != 0 and "not valid JSON" in run.stderr
    assert hooks.read_text() == "{oops" and config.read_text() == "model = 'x'\n"


# conversation rewind -------------------------------------------------------------------------


def line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-11-23T18:00:00.000Z", "type": kind, "payload": payload}


def message(role: str, text: str, turn: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return line("response_item", {"type": "message", "role": role, "content": [{"type": kind, "text": text}],
                                  "internal_chat_message_metadata_passthrough": {"turn_id": turn}})


def rollout_lines() -> list[dict[str, Any]]:
    """Two turns as Codex writes them: the first with an apply_patch and a shell call."""
    return [
        line("session_meta", {"id": SESSION, "session_id": SESSION, "cwd": "/p", "originator": "codex_exec"}),
        line("event_msg", {"type": "task_started", "turn_id": TURN_1, "turn_attribution": {"turn_id": TURN_1}}),
        message("user", "<environment_context>…</environment_context>", TURN_1),
        line("turn_context", {"turn_id": TURN_1}),
        message("user", "PROMPT ONE", TURN_1),
        line("response_item", {"type": "custom_tool_call", "call_id": "call_1", "name": "apply_patch",
                               "input": "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n"}),
        line("token_usage_record", {"thread_id": SESSION, "session_id": SESSION, "turn_id": TURN_1}),
        line("response_item", {"type": "custom_tool_call_output", "call_id": "call_1", "output": "Success."}),
        line("response_item", {"type": "function_call", "call_id": "call_2", "name": "exec_command",
                               "arguments": "{\"cmd\": \"make\"}"}),
        line("response_item", {"type": "function_call_output", "call_id": "call_2", "output": "ok"}),
        message("assistant", "done", TURN_1),
        line("event_msg", {"type": "task_complete", "turn_id": TURN_1}),
        line("event_msg", {"type": "thread_settings_applied", "thread_id": SESSION}),
        line("event_msg", {"type": "task_started", "turn_id": TURN_2, "turn_attribution": {"turn_id": TURN_2}}),
        message("user", "PROMPT TWO", TURN_2),
        message("assistant", "done again", TURN_2),
        line("event_msg", {"type": "task_complete", "turn_id": TURN_2}),
    ]


@pytest.fixture
def rollout(codex_home: Path) -> Path:
    folder = codex_home / "sessions" / "2026" / "11" / "23"
    folder.mkdir(parents=True)
    path = folder / f"rollout-2026-11-23T18-00-00-{SESSION}.jsonl"
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in rollout_lines()))
    path.chmod(0o600)
    return path


def hook(w: Workdir, data: dict[str, Any]) -> dict[str, Any]:
    run = w.rewind("hook", "--agent", "codex", input=json.dumps(data))
    assert (run.returncode, run.stderr) == (0, "")
    log = (w.path / ".git" / "rewind" / "hook.log").read_text().splitlines()
    return dict(json.loads(log[-1]))


def undo_conversation(w: Workdir, seq: int) -> tuple[str, Path, list[dict[str, Any]]]:
    """`git rewind undo SEQ --conversation --yes`: the new session's id, rollout and lines."""
    run = w.rewind("undo", str(seq), "--conversation", "--yes")
    assert run.returncode == 0, run.stderr
    found = re.search(r"resume with: codex resume ([0-9a-f-]{36})", run.stdout)
    assert found, run.stdout
    new = found.group(1)
    assert f"new session {new} with the conversation cut" in run.stdout and f"{SESSION} is unchanged" in run.stdout
    paths = list(Path(w.env["CODEX_HOME"]).glob(f"sessions/*/*/*/rollout-*-{new}.jsonl"))
    assert len(paths) == 1, paths
    return new, paths[0], [json.loads(x) for x in paths[0].read_text().splitlines()]


def test_rewinds_write_a_new_rollout_cut_at_the_checkpoint_and_never_touch_the_original(
        project: Workdir, rollout: Path) -> None:
    w = project
    original = rollout.read_bytes()
    whole = rollout_lines()
    prompt = hook(w, payload("UserPromptSubmit", w.path, rollout, turn_id=TURN_2, prompt="PROMPT TWO"))
    w.write("a.txt", "a change worth a checkpoint, long enough to pass the small-change threshold\n")
    edit = hook(w, apply_patch(w.path, "*** Begin Patch\n*** Update File: a.txt\n@@\n-" + "x" * 60 + "\n+y\n"
                                       "*** End Patch\n", call_id="call_1", transcript=rollout))
    assert prompt["action"] == "checkpoint" and edit["action"] == "checkpoint", (prompt, edit)

    new, path, lines = undo_conversation(w, prompt["seq"])
    assert rollout.read_bytes() == original
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", new)  # a UUIDv7
    assert path.name.startswith("rollout-") and path.stat().st_mode & 0o777 == 0o600
    assert len(lines) == 13  # just before the second turn's task_started
    assert lines[-1]["payload"]["type"] == "thread_settings_applied"
    assert lines[0]["payload"] == {**whole[0]["payload"], "id": new, "session_id": new}
    assert lines[6]["payload"]["thread_id"] == new and lines[12]["payload"]["thread_id"] == new
    assert lines[1:6] == whole[1:6]

    _, _, lines = undo_conversation(w, edit["seq"])
    assert len(lines) == 5 and lines[-1] == whole[4]  # just before the apply_patch call (mid-turn)
    assert rollout.read_bytes() == original

    redo = w.rewind("redo", "--yes")
    assert redo.returncode == 0, redo.stderr
    assert f"resume with: codex resume {SESSION}" in redo.stdout and "was never changed" in redo.stdout
    assert rollout.read_bytes() == original


def test_turn_ends_and_tool_results_cut_after_them(codex_home: Path, rollout: Path) -> None:
    def plan(trigger: str, **conversation: Any) -> Any:
        note = {"seq": 7, "trigger": trigger, "tool": "Bash",
                "conversation": {"transcript": str(rollout), **conversation}}
        return codex.plan_rewind(note_of(note), False, codex.AGENT.transcripts())

    assert plan("Stop", prompt_id=TURN_1).cut == 13  # the end of the turn: before the next one starts
    assert plan("Stop", prompt_id=TURN_2).cut == 17  # the last turn: the whole file
    after = plan("PostToolUse", prompt_id=TURN_1, tool_use_id="call_2")
    assert (after.cut, after.where) == (10, "just after the Bash result")
    assert plan("SessionStart", offset=None).cut == 1 and plan("SessionStart", offset=None).empty
    first = plan("UserPromptSubmit", prompt_id=TURN_1)
    assert (first.cut, first.empty, first.fork) == (1, True, True)  # always a new session


def test_a_checkpoint_not_in_the_rollout_is_an_error_and_writes_nothing(codex_home: Path, rollout: Path) -> None:
    before = sorted(p.name for p in rollout.parent.iterdir())
    for trigger, conversation in [("UserPromptSubmit", {"prompt_id": "no-such-turn"}),
                                  ("PreToolUse", {"tool_use_id": "no-such-call"}),
                                  ("Stop", {})]:
        note = {"seq": 3, "trigger": trigger, "tool": "apply_patch",
                "conversation": {"transcript": str(rollout), **conversation}}
        with pytest.raises(RewindError, match="#3"):
            codex.plan_rewind(note_of(note), False, codex.AGENT.transcripts())
    not_codex = rollout.parent / "other.jsonl"
    not_codex.write_text('{"type":"user"}\n')
    with pytest.raises(RewindError, match="session_meta"):
        codex.plan_rewind(note_of({"seq": 3, "trigger": "Stop", "conversation": {"transcript": str(not_codex)}}),
                          False, codex.AGENT.transcripts())
    not_codex.unlink()
    assert sorted(p.name for p in rollout.parent.iterdir()) == before
