"""Qwen Code (`--agent qwen`): its payloads, its settings file, and its conversation rewind, from what 0.15.10 sent.

The recorded session (tests/samples/qwen/) is replayed through the real `git rewind hook` into a project, as
Qwen's hooks would have delivered it with our matchers, the session file growing as it grew: TASK1 in a new
session, TASK2 resumed, each with a write_file and a run_shell_command; the file also holds a third run,
TASK3, no replayed hook saw. Qwen's resume (sessionService.reconstructHistory: from the file's last record
up its parentUuid chain) is written out here as `resumed`, the oracle of every conversation rewind.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.workdir import Workdir

from git_rewind import agents
from git_rewind.agents import install, qwen
from git_rewind.agents.event import OTHER, POST_TOOL, PRE_TOOL, PROMPT, SHELL, STOP, WRITE
from git_rewind.base.errors import RewindError
from git_rewind.base.note import Note

SAMPLES = Path(__file__).parent / "samples" / "qwen"
SESSION = "78ed24d6-0987-4370-9d7e-bf3d9cd993d5"
SAMPLE_ROOT = "/home/dev/work/repo-qwen"
SAMPLE_TRANSCRIPT = ("/home/dev/work/home-qwen/.qwen/projects/-tmp-sa-agents1-repo-qwen/chats/"
                     f"{SESSION}.jsonl")
NO_LIMITS = {"GIT_REWIND_ANTI_SPAM_SECONDS": "0", "GIT_REWIND_MIN_CHANGE_CHARS": "0"}
TASK1 = "TASK1: create a file and run a shell command"
TASK2 = "TASK2: create a file and run a shell command"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def resumed(path: Path) -> list[dict[str, Any]]:
    """What `qwen --resume` rebuilds from the file: the last record, then its parents up to the root."""
    records = lines(path)
    by_uuid: dict[str, dict[str, Any]] = {}
    for record in records:
        by_uuid.setdefault(record["uuid"], record)
    chain, uuid, seen = [], records[-1]["uuid"], set()
    while uuid and uuid in by_uuid and uuid not in seen:
        seen.add(uuid)
        chain.append(by_uuid[uuid])
        uuid = by_uuid[uuid].get("parentUuid")
    return list(reversed(chain))


def said(path: Path) -> list[str]:
    """The conversation Qwen would send after a resume, in short: each message's texts, calls and results."""
    out = []
    for record in resumed(path):
        for part in (record.get("message") or {}).get("parts") or []:
            if "text" in part:
                out.append(part["text"])
            elif "functionCall" in part:
                out.append(f"call {part['functionCall']['id']}")
            elif "functionResponse" in part:
                out.append(f"result {part['functionResponse']['id']}")
    return out


class Session:
    """The recorded Qwen session, replayed into a project through `git rewind hook`."""

    def __init__(self, w: Workdir, home: Path, env: dict[str, str] | None = None) -> None:
        self.w = w
        root = str(w.path)
        self.transcript = home / ".qwen" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", root) / "chats" / \
            f"{SESSION}.jsonl"
        self.transcript.parent.mkdir(parents=True, exist_ok=True)
        self.env = {"QWEN_PROJECT_DIR": root, "GEMINI_PROJECT_DIR": root, "CLAUDE_PROJECT_DIR": root,
                    **NO_LIMITS, **(env or {})}
        move = [(SAMPLE_TRANSCRIPT, str(self.transcript)), (SAMPLE_ROOT, root)]
        self.payloads = [json.loads(moved(line, move)) for name in ("hooks-run1-new.jsonl", "hooks-run2-resume.jsonl")
                         for line in (SAMPLES / name).read_text().splitlines()]
        self.records = [moved(line, move).encode() + b"\n"
                        for line in (SAMPLES / "transcript.jsonl").read_text().splitlines()]

    def delivered(self) -> list[dict[str, Any]]:
        """The payloads our install asks for: its events, its matchers (the recording's hooks matched all)."""
        out = []
        for payload in self.payloads:
            matcher = qwen.HOOKS.get(payload["hook_event_name"], "-")
            if matcher == "-" or (matcher and not re.search(matcher, payload.get("tool_name", ""))):
                continue
            out.append(payload)
        return out

    def play(self) -> list[dict[str, Any]]:
        """Every delivered payload through the hook (no --agent: Qwen's environment says who it is); the decisions."""
        for payload in self.delivered():
            stamp = payload["timestamp"]
            self.transcript.write_bytes(b"".join(r for r in self.records if json.loads(r)["timestamp"] <= stamp))
            event = payload["hook_event_name"]
            if event == "PostToolUse":  # the command ran before its hook
                subprocess.run(["sh", "-c", payload["tool_input"]["command"]], cwd=self.w.path, check=True)
            run = self.w.rewind("hook", input=json.dumps(payload), env=self.env)
            assert (run.returncode, run.stdout, run.stderr) == (0, "", ""), run
            if event == "PreToolUse" and payload["tool_name"] == "write_file":
                Path(payload["tool_input"]["file_path"]).write_text(payload["tool_input"]["content"])
        self.transcript.write_bytes(b"".join(self.records))
        log = self.w.path / ".git" / "rewind" / "hook.log"
        return [json.loads(line) for line in log.read_text().splitlines()]

    def checkpoints(self) -> list[dict[str, Any]]:
        out = []
        for commit in self.w.git("log", "--first-parent", "--format=%H", f"refs/rewind/{SESSION}").split():
            out.append(json.loads(self.w.git("notes", "--ref=rewind", "show", commit)))
        return list(reversed(out))

    def seq(self, trigger: str, prompt: str) -> int:
        return next(int(n["seq"]) for n in self.checkpoints() if n["trigger"] == trigger and n["prompt"] == prompt)


def moved(text: str, replacements: list[tuple[str, str]]) -> str:
    for old, new in replacements:
        text = text.replace(old, new)
    return text


@pytest.fixture
def session(project: Workdir, home: Path) -> Session:
    return Session(project, home)


# payloads ------------------------------------------------------------------------------------


def sample_payloads() -> list[dict[str, Any]]:
    return [json.loads(line) for name in ("hooks-run1-new.jsonl", "hooks-run2-resume.jsonl")
            for line in (SAMPLES / name).read_text().splitlines()]


def test_every_recorded_payload_becomes_an_event() -> None:
    seen = []
    for payload in sample_payloads():
        event = qwen.parse(payload)
        assert (event.agent, event.session, event.cwd, event.transcript) == (
            "qwen", SESSION, SAMPLE_ROOT, SAMPLE_TRANSCRIPT)
        seen.append((event.name, event.kind, event.tool, event.tool_kind))
    assert seen[:9] == [
        ("Notification", OTHER, None, None),
        ("UserPromptSubmit", PROMPT, None, None),
        ("PreToolUse", PRE_TOOL, "write_file", WRITE),
        ("PostToolUse", POST_TOOL, "write_file", WRITE),
        ("UserPromptSubmit", OTHER, None, None),  # prompt "": tool results going back, no new turn
        ("PreToolUse", PRE_TOOL, "run_shell_command", SHELL),
        ("PostToolUse", POST_TOOL, "run_shell_command", SHELL),
        ("UserPromptSubmit", OTHER, None, None),
        ("Stop", STOP, None, None),  # stop_hook_active is always true in Qwen: nothing reads it
    ]
    write = qwen.parse(sample_payloads()[2])
    assert write.paths == [f"{SAMPLE_ROOT}/task1_written.txt"]
    assert write.change_chars == len("written by mock tool call for TASK1\n")
    assert write.prompt_id is None and write.tool_use_id and write.tool_use_id.startswith("toolu_")


def test_an_edit_is_sized_by_what_it_changes_and_an_unknown_tool_is_no_edit() -> None:
    edit = qwen.parse({"session_id": "s", "cwd": "/p", "hook_event_name": "PreToolUse", "tool_name": "edit",
                       "tool_input": {"file_path": "/p/a.py", "old_string": "x = 1\ny = 2\n",
                                      "new_string": "x = 1\ny = 3\n", "replace_all": False}})
    assert (edit.paths, edit.change_chars, edit.tool_kind) == (["/p/a.py"], 1, "edit")
    unknown = qwen.parse({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "notebook_magic",
                          "tool_input": {"file_path": "/p/a.ipynb"}})
    assert (unknown.kind, unknown.tool, unknown.tool_kind) == (PRE_TOOL, "notebook_magic", None)


@pytest.mark.parametrize("payload", [
    {},
    {"hook_event_name": 7, "session_id": ["x"], "cwd": {"a": 1}, "prompt": 3},
    {"session_id": "s", "hook_event_name": "UserPromptSubmit", "prompt": None},
    {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "edit", "tool_input": "not an object"},
    {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "write_file",
     "tool_input": {"file_path": 12, "content": ["x"]}},
    {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "edit",
     "tool_input": {"file_path": "/p/a", "old_string": {"x": 1}, "new_string": None}},
    {"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": ["run_shell_command"]},
], ids=["empty", "wrong-types", "null-prompt", "input-a-string", "path-a-number", "strings-objects", "tool-a-list"])
def test_fields_of_the_wrong_type_or_missing_still_parse_to_a_harmless_event(payload: dict[str, Any]) -> None:
    event = qwen.parse(payload)
    assert event.kind in (OTHER, PRE_TOOL, POST_TOOL)
    assert event.paths == [] or event.paths == ["/p/a"]


def test_qwens_environment_names_it_before_gemini_and_claude_whose_variables_it_also_sets() -> None:
    payload = sample_payloads()[1]
    both = {"QWEN_PROJECT_DIR": "/p", "GEMINI_PROJECT_DIR": "/p", "CLAUDE_PROJECT_DIR": "/p"}
    assert agents.detect(payload, both) == "qwen"
    assert agents.detect({"hook_event_name": "PreToolUse", "tool_name": "edit"}, {}) == "qwen"
    assert agents.detect({"hook_event_name": "PostToolUse", "tool_name": "run_shell_command"}, {}) == "qwen"
    assert agents.detect({"hook_event_name": "AfterTool", "tool_name": "run_shell_command"}, {}) == "gemini"
    assert agents.detect(payload, {"GEMINI_PROJECT_DIR": "/p"}) == "gemini"


# the hook, replayed ---------------------------------------------------------------------------


def test_the_replayed_session_checkpoints_prompts_and_turn_ends_and_empty_prompts_are_skips(
        session: Session) -> None:
    log = session.play()
    assert [(e["event"], e.get("tool"), e["action"]) for e in log] == [
        ("UserPromptSubmit", None, "checkpoint"),
        ("PreToolUse", "write_file", "unchanged"),  # a new file: nothing to keep before it
        ("UserPromptSubmit", None, "skip"),
        ("PostToolUse", "run_shell_command", "skip"),
        ("UserPromptSubmit", None, "skip"),
        ("Stop", None, "checkpoint"),
        ("UserPromptSubmit", None, "checkpoint"),
        ("PreToolUse", "write_file", "unchanged"),
        ("UserPromptSubmit", None, "skip"),
        ("PostToolUse", "run_shell_command", "skip"),
        ("UserPromptSubmit", None, "skip"),
        ("Stop", None, "checkpoint"),
    ]
    assert all(e["agent"] == "qwen" and e["session"] == SESSION for e in log)
    notes = session.checkpoints()
    assert [(n["trigger"], n["prompt"]) for n in notes] == [
        ("UserPromptSubmit", TASK1), ("Stop", TASK1), ("UserPromptSubmit", TASK2), ("Stop", TASK2)]
    prompt_1, stop_1, prompt_2, stop_2 = notes
    # The empty prompts opened no turn: each turn end closes the turn its prompt opened, and the files are the agent's.
    assert stop_1["turn"]["seq"] == prompt_1["seq"] and stop_2["turn"]["seq"] == prompt_2["seq"]
    assert stop_1["origins"] == {"task1_written.txt": "agent", "from_shell.txt": "agent"}, stop_1
    assert stop_2["origins"] == {"task2_written.txt": "agent"}, stop_2
    assert all(n["conversation"]["transcript"] == str(session.transcript) for n in notes)
    assert not (session.w.path / ".git" / "rewind" / "turns" / f"{SESSION}.json").exists()  # the last turn ended


def test_the_hook_exits_0_and_prints_nothing_on_garbage_and_a_transcript_elsewhere_is_not_recorded(
        session: Session) -> None:
    """Qwen blocks a tool whose PreToolUse hook exits 2, and shows stdout: nothing but exit 0 and silence."""
    for stdin in ("not json", "[1, 2]", json.dumps({"hook_event_name": "PreToolUse", "tool_name": "edit"})):
        run = session.w.rewind("hook", "--agent", "qwen", input=stdin, env=session.env)
        assert run.returncode == 0 and run.stdout == "" and run.stderr.startswith("git-rewind: hook skipped"), run
    payload = {**session.payloads[1], "transcript_path": "/etc/passwd"}
    run = session.w.rewind("hook", input=json.dumps(payload), env=session.env)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    assert session.checkpoints()[-1]["conversation"] is None


# install / uninstall --------------------------------------------------------------------------

USER_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "openai"}}, "model": {"name": "qwen3-coder-plus"},
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5000}]}]}}


def qwen_rewrites(path: Path) -> None:
    """What Qwen 0.15.10 does to a settings file without "$version" when it loads it: stamps it, and writes the
    file again in its own format."""
    data = json.loads(path.read_text())
    if "$version" not in data:
        data["$version"] = qwen.SETTINGS_VERSION
        path.write_text(json.dumps(data, indent=4) + "\n")


def ours(path: Path) -> dict[str, list[dict[str, Any]]]:
    hooks = json.loads(path.read_text()).get("hooks", {})
    return {event: [h for g in groups for h in g["hooks"] if install.is_own(h)] for event, groups in hooks.items()
            if any(install.is_own(h) for g in groups for h in g["hooks"])}


def test_install_writes_claude_style_hooks_with_millisecond_timeouts_and_anchored_matchers(
        project: Workdir, home: Path) -> None:
    project.ok("install", "--agent", "qwen", "--scope", "project")
    path = project.path / ".qwen" / "settings.json"
    data = json.loads(path.read_text())
    assert data["$version"] == qwen.SETTINGS_VERSION  # Qwen leaves a stamped file as it is
    assert list(data["hooks"]) == ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                                   "PostToolUseFailure", "Stop", "SessionEnd", "PreCompact"]
    handlers = [h for groups in data["hooks"].values() for g in groups for h in g["hooks"]]
    assert {h["timeout"] for h in handlers} == {30_000} and {h["name"] for h in handlers} == {"git-rewind"}
    matchers = {event: groups[0].get("matcher") for event, groups in data["hooks"].items()}
    assert re.search(matchers["PreToolUse"], "write_file") and re.search(matchers["PreToolUse"], "edit")
    for other in ("read_file", "run_shell_command", "mcp__x__edit_page", "editor"):
        assert not re.search(matchers["PreToolUse"], other), other
    assert re.search(matchers["PostToolUse"], "run_shell_command") and not re.search(matchers["PostToolUse"], "edit")
    assert data == install.template("qwen")


def test_the_user_file_keeps_its_settings_survives_qwens_rewrite_and_comes_back_byte_for_byte(
        project: Workdir, home: Path) -> None:
    path = home / ".qwen" / "settings.json"
    path.parent.mkdir()
    original = json.dumps(USER_SETTINGS, indent=2) + "\n"
    path.write_text(original)
    out = project.ok("install", "--agent", "qwen", "--scope", "user")
    assert f"backed up {path}" in out
    qwen_rewrites(path)  # Qwen runs: "$version" stamped, the file rewritten in its own layout
    data = json.loads(path.read_text())
    assert data["hooks"]["Stop"][0] == USER_SETTINGS["hooks"]["Stop"][0]  # theirs first, ours after
    assert sorted(ours(path)) == sorted(qwen.HOOKS)
    assert project.ok("install", "--agent", "qwen", "--scope", "user").startswith("already installed")
    assert f"{path}" in project.ok("status")
    project.ok("uninstall", "--agent", "qwen", "--scope", "user")
    assert path.read_text() == original  # "$version" was Qwen's: the user's exact bytes back


def test_a_file_we_created_and_qwen_stamped_goes_on_uninstall(project: Workdir, home: Path) -> None:
    project.ok("install", "--agent", "qwen", "--scope", "project")
    path = project.path / ".qwen" / "settings.json"
    data = json.loads(path.read_text())
    del data["$version"]  # an install of an earlier git-rewind, which Qwen then stamped
    path.write_text(json.dumps(data))
    qwen_rewrites(path)
    assert "removed" in project.ok("uninstall", "--agent", "qwen", "--scope", "project")
    assert not path.exists() and not path.parent.exists()


def test_after_the_user_changed_the_stamped_file_only_ours_go(project: Workdir, home: Path) -> None:
    path = home / ".qwen" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(USER_SETTINGS))
    project.ok("install", "--agent", "qwen", "--scope", "user")
    qwen_rewrites(path)
    data = json.loads(path.read_text())
    data["model"]["name"] = "qwen3-max"
    path.write_text(json.dumps(data, indent=4))
    project.ok("uninstall", "--agent", "qwen", "--scope", "user")
    left = json.loads(path.read_text())
    assert left == {**USER_SETTINGS, "model": {"name": "qwen3-max"}, "$version": qwen.SETTINGS_VERSION}


def test_the_user_scope_follows_qwen_home(project: Workdir, home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "qwen-home"
    run = project.rewind("install", "--agent", "qwen", "--scope", "user", env={"QWEN_HOME": str(elsewhere)})
    assert run.returncode == 0, run.stderr
    assert sorted(ours(elsewhere / "settings.json")) == sorted(qwen.HOOKS)
    assert not (home / ".qwen").exists()


def test_the_mcp_entry_is_what_qwen_mcp_add_writes(project: Workdir, home: Path) -> None:
    project.ok("install", "--agent", "qwen", "--scope", "user", "--mcp")
    entry = json.loads((home / ".qwen" / "settings.json").read_text())["mcpServers"]["git-rewind"]
    assert set(entry) == {"command", "args"} and entry["args"][-1] == "mcp"  # no "type", as `qwen mcp add`


def test_the_session_folders_follow_qwen_runtime_dir_and_qwen_home(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    assert qwen.AGENT.transcript_folders(home, {}) == (f"{home}/.qwen/projects",)
    folders = qwen.AGENT.transcript_folders(home, {"QWEN_RUNTIME_DIR": "/rt", "QWEN_HOME": "/qh"})
    assert folders == ("/rt/projects", "/qh/projects", f"{home}/.qwen/projects")


# the conversation --------------------------------------------------------------------------------


def test_undo_to_the_second_prompt_appends_qwens_rewind_record_and_redo_points_back(session: Session) -> None:
    session.play()
    whole = session.transcript.read_bytes()
    assert said(session.transcript)[-1] == "Done with TASK3: wrote the file and ran the shell command."
    run = session.w.rewind("undo", str(session.seq("UserPromptSubmit", TASK2)), "--conversation", "--yes")
    assert run.returncode == 0, run.stderr
    assert f"resume with: qwen --resume {SESSION}" in run.stdout and TASK2 in run.stdout, run.stdout
    cut = session.transcript.read_bytes()
    assert cut.startswith(whole)  # nothing of the file changed: one record appended
    record = json.loads(cut[len(whole):])
    assert (record["type"], record["subtype"], record["sessionId"], record["cwd"]) == (
        "system", "rewind", SESSION, str(session.w.path))
    assert record["systemPayload"]["truncatedCount"] == 2 * 6  # TASK2's and TASK3's messages
    assert said(session.transcript) == [TASK1, "call call_mock_1", "result call_mock_1", "call call_mock_2",
                                        "result call_mock_2",
                                        "Done with TASK1: wrote the file and ran the shell command."]
    run = session.w.rewind("redo", "--yes")
    assert run.returncode == 0, run.stderr
    assert said(session.transcript)[-1] == "Done with TASK3: wrote the file and ran the shell command."
    assert len(session.transcript.read_bytes().splitlines()) == len(whole.splitlines()) + 2  # appended, again


def test_undo_to_a_turn_end_keeps_the_turns_last_words_written_after_its_hook(session: Session) -> None:
    session.play()
    run = session.w.rewind("undo", str(session.seq("Stop", TASK1)), "--conversation", "--yes")
    assert run.returncode == 0, run.stderr
    assert said(session.transcript)[-1] == "Done with TASK1: wrote the file and ran the shell command."
    assert TASK2 not in said(session.transcript)


def test_undo_to_the_first_prompt_leaves_an_empty_conversation_qwen_still_resumes(session: Session) -> None:
    session.play()
    run = session.w.rewind("undo", str(session.seq("UserPromptSubmit", TASK1)), "--conversation", "--yes")
    assert run.returncode == 0, run.stderr
    assert "nothing of it is kept" in run.stdout, run.stdout
    assert said(session.transcript) == [] and resumed(session.transcript)[-1]["subtype"] == "rewind"


def test_fork_writes_the_kept_chain_as_a_new_session_and_leaves_the_file_alone(session: Session) -> None:
    session.play()
    whole = session.transcript.read_bytes()
    run = session.w.rewind("undo", str(session.seq("UserPromptSubmit", TASK2)), "--conversation", "--fork", "--yes")
    assert run.returncode == 0, run.stderr
    assert session.transcript.read_bytes() == whole
    (fork,) = [p for p in session.transcript.parent.glob("*.jsonl") if p != session.transcript]
    assert f"qwen --resume {fork.stem}" in run.stdout, run.stdout
    assert {r["sessionId"] for r in lines(fork)} == {fork.stem}
    assert said(fork)[0] == TASK1 and said(fork)[-1].startswith("Done with TASK1") and TASK2 not in said(fork)
    assert lines(fork)[0]["cwd"] == str(session.w.path)  # Qwen resumes a file whose first record is the project's


def note(session: Session, trigger: str, tool: str | None, paths: list[str], offset: int) -> Note:
    found = Note.from_json({"v": 1, "seq": 99, "session": SESSION, "agent": "qwen", "trigger": trigger, "tool": tool,
                            "paths": paths, "prompt": TASK1, "conversation": {
                                "transcript": str(session.transcript), "offset": offset}})
    assert found is not None
    return found


def test_a_tool_checkpoint_is_found_by_its_call_before_it_and_its_result_after_it(session: Session) -> None:
    records = [json.loads(r) for r in session.records]
    session.transcript.write_bytes(b"".join(session.records))
    place = qwen.AGENT.transcripts(str(session.transcript.parents[4]), {})
    offset = len(b"".join(session.records[:5]))  # the hook ran once the write_file call was recorded
    plan = qwen.plan_rewind(note(session, "PreToolUse", "write_file", ["task1_written.txt"], offset), False, place)
    call = records[3]
    assert call["message"]["parts"][0]["functionCall"]["name"] == "write_file"
    assert (plan.target_uuid, plan.leaf, plan.where) == (call["uuid"], call["parentUuid"],
                                                         "just before the write_file call")
    offset = len(b"".join(session.records[:10]))
    plan = qwen.plan_rewind(note(session, "PostToolUse", "run_shell_command", [], offset), False, place)
    result = records[10]
    assert result["type"] == "tool_result" and result["message"]["parts"][0]["functionResponse"]["id"] == "call_mock_2"
    assert (plan.target_uuid, plan.leaf) == (result["uuid"], result["uuid"])
    with pytest.raises(RewindError, match="the edit call of #99 is not in"):
        qwen.plan_rewind(note(session, "PreToolUse", "edit", ["nowhere.txt"], offset), False, place)


def test_a_file_that_is_not_a_qwen_session_is_refused_and_left_alone(session: Session, home: Path) -> None:
    session.transcript.write_text('{"type": "user", "message": {"role": "user", "content": "hi"}}\n')
    place = qwen.AGENT.transcripts(str(home), {})
    with pytest.raises(RewindError, match="is not a Qwen Code session file"):
        qwen.plan_rewind(note(session, "Stop", None, [], 10), False, place)
    elsewhere = Note.from_json({"v": 1, "seq": 1, "trigger": "Stop", "conversation": {
        "transcript": "/etc/passwd.jsonl", "offset": 1}})
    assert elsewhere is not None
    with pytest.raises(RewindError, match="is not a Qwen Code session file: it is not under"):
        qwen.plan_rewind(elsewhere, False, place)


def test_a_handed_over_session_goes_where_qwen_resume_looks_in_the_clone_with_its_cwd_moved(tmp_path: Path) -> None:
    root, home = tmp_path / "work" / "bob's clone", tmp_path / "home"
    root.mkdir(parents=True)
    raw = (SAMPLES / "transcript.jsonl").read_bytes()
    adopted = qwen.AGENT.adopt_transcript(raw, SESSION, str(root), str(home), {})
    folder = re.sub(r"[^a-zA-Z0-9]", "-", os.path.realpath(root))
    assert adopted.path == str(home / ".qwen" / "projects" / folder / "chats" / f"{SESSION}.jsonl")
    assert adopted.how == "written"
    written = lines(Path(adopted.path))
    assert {r["cwd"] for r in written} == {os.path.realpath(root)} and {r["sessionId"] for r in written} == {SESSION}
    assert [r["uuid"] for r in written] == [json.loads(line)["uuid"] for line in raw.splitlines()]
    assert qwen.AGENT.adopt_transcript(raw, SESSION, str(root), str(home), {}).how == "kept"
    Path(adopted.path).write_bytes(Path(adopted.path).read_bytes().replace(b"TASK1", b"TASK0"))  # went its own way
    forked = qwen.AGENT.adopt_transcript(raw, SESSION, str(root), str(home), {})
    assert forked.how == "forked" and forked.session != SESSION
    assert {r["sessionId"] for r in lines(Path(forked.path))} == {forked.session}
    runtime = qwen.AGENT.adopt_transcript(raw, SESSION, str(root), str(home),
                                          {"QWEN_RUNTIME_DIR": str(tmp_path / "rt")})
    assert runtime.path.startswith(str(tmp_path / "rt" / "projects" / folder / "chats"))
