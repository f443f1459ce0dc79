"""End to end with the real Gemini CLI: its hooks, installed by `git rewind install`, checkpoint a session.

Gemini runs in `-p` mode against the scripted mock model speaking the Gemini REST API
(tests/helpers/mockmodel_gemini.py: GOOGLE_GEMINI_BASE_URL, an API key, `security.auth.selectedType`
"gemini-api-key"), with a scratch HOME, `--approval-mode yolo` and `--skip-trust`. Each
prompt is one process; the second resumes the first's session with `--resume <id>`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    agentcli,
    mockmodel_gemini,  # noqa: F401 - registers the Gemini API with the mock
)
from helpers.agentcli import (
    DRAFT_1,
    DRAFT_2,
    DRAFT_3,
    PLAN,
    PLAN_FINAL,
    PLAN_V1,
    PLAN_V2,
    PROMPT_1,
    PROMPT_2,
    SHELL_FILE,
    SHELL_TEXT,
    blob,
    decisions,
    e2e,
)
from helpers.mockmodel import MockModel, Text, ToolCall, Turn
from helpers.workdir import Workdir

pytestmark = e2e

CONTINUE = "P3-CONTINUE: carry on from here"
AGAIN = "P4-AGAIN: and once more"
BRANCH = "P5-BRANCH: on the branch"
TRUST_NOTICE = """WARNING: The following project-level hooks have been detected in this workspace:
  - git-rewind

These hooks will be executed. If you did not configure these hooks or do not trust this project,
please review the project settings (.gemini/settings.json) and remove them."""


@pytest.fixture(scope="module")
def gemini() -> Path:
    return agentcli.gemini()


def gemini_env(work: Workdir, model: MockModel, **extra: str) -> dict[str, str]:
    """Scratch HOME whose only model is the mock; no update check, no usage statistics, no telemetry.

    The project is trusted (GEMINI_CLI_TRUST_WORKSPACE, what trusting it in the dialog does): Gemini reads
    no .gemini/settings.json, so runs no project hooks, in a folder it does not trust.

    Session retention is off: at start-up Gemini deletes every session file it finds not resumable,
    and with it every file of the same session id (cleanupExpiredSessions in its bundle). A resumed
    run that crosses a minute leaves such a file (only the session context, under the new minute's
    name), so the next run deleted the whole session in about one run of ten.
    """
    folder = Path(work.env["HOME"]) / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "sessionRetention": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}}))
    return agentcli.agent_env(work.env, GEMINI_API_KEY="test-key", GOOGLE_GEMINI_BASE_URL=model.url,
                              GEMINI_CLI_NO_RELAUNCH="true", GEMINI_CLI_TRUST_WORKSPACE="true", **extra)


def edit_script(plan: str) -> dict[str, list[Turn]]:
    """The Claude Code session in Gemini's tools (write_file, replace, run_shell_command)."""
    return {
        PROMPT_1: [
            ToolCall("write_file", {"file_path": plan, "content": PLAN_V1}),
            ToolCall("replace", {"file_path": plan, "old_string": DRAFT_1, "new_string": DRAFT_2,
                                 "instruction": "rewrite the draft"}),
            ToolCall("run_shell_command", {"command": f"printf '{SHELL_TEXT.strip()}\\n' > {SHELL_FILE}",
                                           "description": "leave a note"}),
            Text("The plan is written."),
        ],
        PROMPT_2: [
            ToolCall("replace", {"file_path": plan, "old_string": DRAFT_2, "new_string": DRAFT_3,
                                 "instruction": "third draft"}),  # the third edit in a row: batched
            ToolCall("replace", {"file_path": plan, "old_string": "third draft", "new_string": "final draft",
                                 "instruction": "final"}),  # small
            Text("Polished."),
        ],
        CONTINUE: [Text("Carrying on.")],
        AGAIN: [Text("Once more.")],
        BRANCH: [Text("On the branch.")],
    }


def run_gemini(gemini: Path, work: Workdir, env: dict[str, str], prompt: str, resume: str | None = None) -> str:
    """`gemini -p PROMPT` (resuming RESUME); checks it ended well; returns the session id."""
    command = [str(gemini)]
    if resume:
        command += ["--resume", resume]
    command += ["-p", prompt, "--approval-mode", "yolo", "--skip-trust", "--output-format", "json"]
    proc = agentcli.run(command, work.path, env)
    assert proc.returncode == 0, f"gemini exited {proc.returncode}: {proc.stderr[-3000:]}{proc.stdout[-2000:]}"
    result = json.loads(proc.stdout)
    assert not result.get("error"), result
    # A hook of ours never shows up as a warning, a message or a blocked tool; the one mention allowed is
    # Gemini's own notice, the first time, that the project's settings bring hooks.
    said = proc.stderr.replace(TRUST_NOTICE, "")
    assert "git-rewind" not in said and "hook" not in said.lower(), proc.stderr[-3000:]
    assert "git-rewind" not in json.dumps(result.get("response")), result
    return str(result["session_id"])


def sent(model: MockModel, prompt: str) -> str:
    """The conversation of PROMPT's first request to the model, as JSON text."""
    requests = model.main_requests(prompt)
    assert requests, f"no request for {prompt!r}"
    return json.dumps(requests[0].body["contents"])


def gemini_decisions(work: Workdir, session: str) -> list[tuple[Any, ...]]:
    """The hook's decisions of SESSION; PreCompress (auto, before every model call) must all be skips."""
    log = agentcli.hook_log(work, session)
    compress = [e for e in log if e["event"] == "PreCompress"]
    assert compress and all(e["action"] == "skip" for e in compress), compress
    return decisions([e for e in log if e["event"] != "PreCompress"])


def check_tools_ran(model: MockModel, script: dict[str, list[Turn]], prompts: tuple[str, ...]) -> None:
    results = model.tool_results()
    for prompt in prompts:
        assert model.played(prompt) == script[prompt]
        for call_id in model.tool_use_ids(prompt).values():
            assert call_id in results, (call_id, list(results))
            assert "error" not in results[call_id]["content"].lower(), results[call_id]


def two_prompts(gemini: Path, work: Workdir, model: MockModel, env: dict[str, str]) -> str:
    session = run_gemini(gemini, work, env, PROMPT_1)
    assert run_gemini(gemini, work, env, PROMPT_2, resume=session) == session
    return session


def test_two_prompts_checkpoint_at_start_prompt_and_edit_then_undo_full_and_redo(
        gemini: Path, agent_project: Workdir) -> None:
    work = agent_project
    hooks = agentcli.install_hooks(work, "gemini", "project", work.env)
    assert hooks == work.path / ".gemini" / "settings.json"
    work.user_state()  # git status may refresh a racily clean index once: the second call is the reference
    user = work.user_state()
    ignored = agentcli.ignored_files(work)
    script = edit_script(str(work.path / PLAN))
    with MockModel(script) as model:
        env = gemini_env(work, model, GIT_REWIND_ANTI_SPAM_SECONDS="0")
        session = two_prompts(gemini, work, model, env)
        check_tools_ran(model, script, (PROMPT_1, PROMPT_2))
        assert (work.path / PLAN).read_text() == PLAN_FINAL
        assert (work.path / SHELL_FILE).read_text() == SHELL_TEXT
        # The resumed session carried the first prompt's conversation and was told where it stood.
        second = sent(model, PROMPT_2)
        assert PROMPT_1 in second and "Resumed from checkpoint #4: turn end" in second, \
            second[:3000]
        assert agentcli.hook_errors(work) == ""

        assert gemini_decisions(work, session) == [
            ("SessionStart", None, "checkpoint"),
            ("BeforeAgent", None, "checkpoint"),
            ("BeforeTool", "write_file", "unchanged"),  # a new file: the tree equals the prompt's checkpoint
            ("BeforeTool", "replace", "checkpoint"),
            ("AfterTool", "run_shell_command", "skip"),
            ("AfterAgent", None, "checkpoint"),  # the turn end: files changed
            ("SessionEnd", None, "skip"),  # reason "exit": only /clear is checkpointed
            ("SessionStart", None, "unchanged"),  # resumed: nothing changed since the turn end
            ("BeforeAgent", None, "checkpoint"),
            ("BeforeTool", "replace", "skip"),  # batch
            ("BeforeTool", "replace", "skip"),  # small
            ("AfterAgent", None, "checkpoint"),
            ("SessionEnd", None, "skip"),
        ]
        assert agentcli.sessions(work) == [session]
        found = agentcli.checkpoints(work, session)
        assert [c.trigger for c in found] == ["SessionStart", "BeforeAgent", "BeforeTool", "AfterAgent",
                                              "BeforeAgent", "AfterAgent"]
        agentcli.check_chain(work, found)
        start, prompt_1, edit, stop_1, prompt_2, stop_2 = found
        assert stop_1.note["origins"] == {PLAN: "agent", SHELL_FILE: "agent"}, stop_1.note
        assert stop_2.note["origins"] == {PLAN: "agent"}, stop_2.note
        assert stop_1.note["turn"]["seq"] == prompt_1.seq and stop_2.note["turn"]["seq"] == prompt_2.seq
        assert all(c.note["agent"] == "gemini" and c.note["session"] == session for c in found)
        assert (edit.note["tool"], edit.note["paths"]) == ("replace", [PLAN])
        assert prompt_1.note["prompt"] == PROMPT_1 and prompt_2.note["prompt"] == PROMPT_2
        # Gemini names a session file by the minute its process started: a resumed run that starts in a later
        # minute is given a second name (its hooks report it; it holds only the session context) while the
        # messages stay in the first file. The rewinds below find them by the session's id either way.
        transcript = Path(prompt_1.note["conversation"]["transcript"])
        for c in found:
            recorded = Path(c.note["conversation"]["transcript"])
            assert recorded.parent == transcript.parent and recorded.name.endswith(f"-{session[:8]}.jsonl"), recorded
        assert transcript.parent == next((Path(work.env["HOME"]) / ".gemini" / "tmp").glob("*/chats"))
        assert blob(work, prompt_1.commit, PLAN) is None and blob(work, prompt_1.commit, SHELL_FILE) is None
        assert blob(work, prompt_1.commit, ".gemini/settings.json") == hooks.read_text()
        assert blob(work, edit.commit, PLAN) == PLAN_V1 and blob(work, edit.commit, SHELL_FILE) is None
        assert blob(work, prompt_2.commit, PLAN) == PLAN_V2 and blob(work, prompt_2.commit, SHELL_FILE) == SHELL_TEXT
        assert work.tree_of(prompt_2.commit) == work.tree_of(stop_1.commit)

        # Back to the second prompt: the files of that moment; the resumed session sends the first prompt's
        # conversation and nothing of the second.
        p1_ids, p2_ids = model.tool_use_ids(PROMPT_1).values(), model.tool_use_ids(PROMPT_2).values()
        whole = transcript.read_bytes()
        finished = agentcli.disk_files(work.path)
        run = work.rewind("undo", str(prompt_2.seq), "--full", "--yes", env=env)
        assert run.returncode == 0, run.stderr
        assert f"resume with: gemini --resume {session}" in run.stdout and PROMPT_2 in run.stdout, run.stdout
        agentcli.assert_tree_on_disk(work, prompt_2.commit, ignored, "after undo --full")
        cut = transcript.read_bytes()
        assert cut.startswith(whole) and json.loads(cut[len(whole):]).keys() == {"$rewindTo"}
        safety = agentcli.checkpoints(work, session)[-1]
        assert work.git("show", f"{safety.commit}^2:{transcript.name}").encode() == whole
        assert run_gemini(gemini, work, env, CONTINUE, resume=session) == session
        after_undo = sent(model, CONTINUE)
        for kept in (PROMPT_1, *p1_ids):
            assert kept in after_undo, kept
        for gone in (PROMPT_2, *p2_ids):
            assert gone not in after_undo, gone

        # redo: the files and the whole conversation back; what was said after the undo is a session of its own.
        run = work.rewind("redo", "--yes", env=env)
        assert run.returncode == 0, run.stderr
        assert agentcli.disk_files(work.path) == finished
        assert transcript.read_bytes() == whole
        branch = [p for p in transcript.parent.glob("session-*.jsonl")
                  if p != transcript and CONTINUE.encode() in p.read_bytes() and session[:8] not in p.name]
        assert len(branch) == 1, run.stdout
        branch_id = json.loads(branch[0].read_text().splitlines()[0])["sessionId"]
        assert f"gemini --resume {branch_id}" in run.stdout, run.stdout
        assert run_gemini(gemini, work, env, AGAIN, resume=session) == session
        after_redo = sent(model, AGAIN)
        for back in (PROMPT_1, PROMPT_2, *p1_ids, *p2_ids):
            assert back in after_redo, back
        assert CONTINUE not in after_redo
        assert run_gemini(gemini, work, env, BRANCH, resume=branch_id) == branch_id
        on_branch = sent(model, BRANCH)
        assert CONTINUE in on_branch and PROMPT_1 in on_branch and PROMPT_2 not in on_branch

        # Back to the first prompt: nothing of the conversation is left, and Gemini resumes no empty session.
        run = work.rewind("undo", str(prompt_1.seq), "--full", "--yes", env=env)
        assert run.returncode == 0, run.stderr
        assert "nothing of it is kept" in run.stdout and "resume with: gemini\n" in run.stdout, run.stdout
        agentcli.assert_tree_on_disk(work, prompt_1.commit, ignored, "after undo --full to the first prompt")
    assert agentcli.hook_errors(work) == ""
    assert work.user_state() == user
    work.fsck()


def test_undo_to_a_tool_checkpoint_cuts_before_the_call_and_fork_leaves_the_session_alone(
        gemini: Path, agent_project: Workdir) -> None:
    """`undo <replace checkpoint> --full --fork`: the files before the edit; a new session holding the prompt and
    the write_file call but not the replace, resumed with `gemini --resume <new id>`; the original untouched."""
    work = agent_project
    ignored = agentcli.ignored_files(work)
    script = edit_script(str(work.path / PLAN))
    with MockModel(script) as model:
        env = gemini_env(work, model, GIT_REWIND_ANTI_SPAM_SECONDS="0")
        agentcli.install_hooks(work, "gemini", "user", env)  # beside the mock's settings, which it keeps
        session = run_gemini(gemini, work, env, PROMPT_1)
        check_tools_ran(model, script, (PROMPT_1,))
        edit = next(c for c in agentcli.checkpoints(work, session) if c.trigger == "BeforeTool")
        assert edit.note["tool"] == "replace"
        write_id, replace_id, shell_id = (model.tool_use_ids(PROMPT_1)[i] for i in range(3))
        transcript = Path(edit.note["conversation"]["transcript"])
        whole = transcript.read_bytes()

        run = work.rewind("undo", str(edit.seq), "--full", "--fork", "--yes", env=env)
        assert run.returncode == 0, run.stderr
        agentcli.assert_tree_on_disk(work, edit.commit, ignored, "after undo --full --fork")
        assert transcript.read_bytes() == whole
        forks = [p for p in transcript.parent.glob("session-*.jsonl") if session[:8] not in p.name]
        assert len(forks) == 1
        new = json.loads(forks[0].read_text().splitlines()[0])["sessionId"]
        assert new != session and f"gemini --resume {new}" in run.stdout, run.stdout
        assert run_gemini(gemini, work, env, CONTINUE, resume=new) == new
        conversation = sent(model, CONTINUE)
        assert PROMPT_1 in conversation and write_id in conversation
        assert replace_id not in conversation and shell_id not in conversation
    assert agentcli.hook_errors(work) == ""
    work.fsck()


def test_the_mcp_server_installed_for_gemini_connects(gemini: Path, agent_project: Workdir) -> None:
    """`git rewind install --agent gemini --mcp`: the real Gemini CLI starts the server and completes the handshake."""
    work = agent_project
    with MockModel({}) as model:
        env = gemini_env(work, model)
        run = work.rewind("install", "--agent", "gemini", "--scope", "project", "--mcp", env=env)
        assert run.returncode == 0, run.stderr
        listed = agentcli.run([str(gemini), "mcp", "list"], work.path, env)
    out = listed.stdout + listed.stderr
    assert listed.returncode == 0 and "git-rewind" in out and "Connected" in out, out
