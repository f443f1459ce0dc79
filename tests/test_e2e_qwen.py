"""End to end with the real Qwen Code: its hooks, installed by `git rewind install`, checkpoint a session.

Qwen runs in `-p` mode against the scripted mock model speaking the OpenAI chat-completions API
(OPENAI_BASE_URL=<mock>/v1, the "openai" auth type in the scratch HOME's ~/.qwen/settings.json), with
`--yolo`. Each prompt is one process; the first is given its session id (`--session-id`), the second
resumes it with `--resume <id>`. In -p mode Qwen fires no SessionStart or SessionEnd, and fires
UserPromptSubmit again with an empty prompt before every request that carries tool results back.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from helpers import agentcli
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
# What the scratch HOME's ~/.qwen/settings.json holds before anything of ours (shared/agents/copilot-qwen.md B).
OFFLINE_SETTINGS = {"security": {"auth": {"selectedType": "openai"}}, "model": {"name": "mock-model"},
                    "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
                    "general": {"disableAutoUpdate": True, "disableUpdateNag": True}}


@pytest.fixture(scope="module")
def qwen() -> Path:
    return agentcli.qwen()


def qwen_env(work: Workdir, model: MockModel, **extra: str) -> dict[str, str]:
    """Scratch HOME whose only model is the mock; no update check, no usage statistics, no telemetry."""
    folder = Path(work.env["HOME"]) / ".qwen"
    folder.mkdir(parents=True, exist_ok=True)
    settings = folder / "settings.json"
    if not settings.exists():
        settings.write_text(json.dumps(OFFLINE_SETTINGS, indent=2) + "\n")
    return agentcli.agent_env(work.env, OPENAI_BASE_URL=f"{model.url}/v1", OPENAI_API_KEY="test-key",
                              OPENAI_MODEL="mock-model", QWEN_CODE_NO_RELAUNCH="true", **extra)


def edit_script(plan: str) -> dict[str, list[Turn]]:
    """The Claude Code session in Qwen's tools (write_file, edit, run_shell_command)."""
    return {
        PROMPT_1: [
            ToolCall("write_file", {"file_path": plan, "content": PLAN_V1}),
            ToolCall("edit", {"file_path": plan, "old_string": DRAFT_1, "new_string": DRAFT_2}),
            ToolCall("run_shell_command", {"command": f"printf '{SHELL_TEXT.strip()}\\n' > {SHELL_FILE}",
                                           "description": "leave a note", "is_background": False}),
            Text("The plan is written."),
        ],
        PROMPT_2: [
            ToolCall("read_file", {"file_path": plan}),  # a resumed Qwen edits only a file it has read
            ToolCall("edit", {"file_path": plan, "old_string": DRAFT_2, "new_string": DRAFT_3}),  # 3rd edit: batch
            ToolCall("edit", {"file_path": plan, "old_string": "third draft", "new_string": "final draft"}),  # small
            Text("Polished."),
        ],
        CONTINUE: [Text("Carrying on.")],
        AGAIN: [Text("Once more.")],
    }


def run_qwen(qwen: Path, work: Workdir, env: dict[str, str], prompt: str, session: str, resume: bool) -> None:
    """`qwen -p PROMPT --yolo` as session SESSION (a new one, or resumed); checks it ended well."""
    command = [str(qwen), "--resume" if resume else "--session-id", session, "-p", prompt, "--yolo"]
    proc = agentcli.run(command, work.path, env)
    assert proc.returncode == 0, f"qwen exited {proc.returncode}: {proc.stderr[-3000:]}{proc.stdout[-2000:]}"
    # A hook of ours never shows up as a warning, a message or a blocked tool.
    assert "git-rewind" not in proc.stderr + proc.stdout, proc.stderr[-3000:] + proc.stdout[-2000:]


def sent(model: MockModel, prompt: str) -> str:
    """The conversation of PROMPT's first request to the model, as JSON text."""
    requests = model.main_requests(prompt)
    assert requests, f"no request for {prompt!r}"
    return json.dumps(requests[0].body["messages"])


def check_tools_ran(model: MockModel, script: dict[str, list[Turn]], prompts: tuple[str, ...]) -> None:
    """Every scripted turn was played and every tool result came back without an error."""
    results = model.tool_results()
    for prompt in prompts:
        assert model.played(prompt) == script[prompt]
        for call_id in model.tool_use_ids(prompt).values():
            assert call_id in results, (call_id, list(results))
            content = results[call_id]["content"].lower().replace("error: (none)", "")  # a shell result's line
            assert "error" not in content and "blocked" not in content, results[call_id]
            assert "before editing" not in content, results[call_id]


def transcript_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_two_prompts_checkpoint_at_prompt_edit_and_turn_end_then_undo_full_and_redo(
        qwen: Path, agent_project: Workdir) -> None:
    work = agent_project
    hooks = agentcli.install_hooks(work, "qwen", "project", work.env)
    installed = hooks.read_bytes()
    work.user_state()  # git status may refresh a racily clean index once: the second call is the reference
    user = work.user_state()
    ignored = agentcli.ignored_files(work)
    script = edit_script(str(work.path / PLAN))
    session = str(uuid.uuid4())
    with MockModel(script) as model:
        env = qwen_env(work, model, GIT_REWIND_ANTI_SPAM_SECONDS="0")
        run_qwen(qwen, work, env, PROMPT_1, session, resume=False)
        run_qwen(qwen, work, env, PROMPT_2, session, resume=True)
        check_tools_ran(model, script, (PROMPT_1, PROMPT_2))
        assert (work.path / PLAN).read_text() == PLAN_FINAL, model.tool_results(PROMPT_2)
        assert (work.path / SHELL_FILE).read_text() == SHELL_TEXT
        assert PROMPT_1 in sent(model, PROMPT_2)  # the resumed session carried the first prompt's conversation
        assert agentcli.hook_errors(work) == ""
        # Qwen stamps "$version" into a settings file it loads: ours already carries it, so it is left as written.
        assert hooks.read_bytes() == installed
        assert json.loads((Path(work.env["HOME"]) / ".qwen" / "settings.json").read_text())["$version"] == 4

        log = agentcli.hook_log(work, session)
        assert decisions(log) == [
            ("UserPromptSubmit", None, "checkpoint"),
            ("PreToolUse", "write_file", "unchanged"),  # a new file: the tree equals the prompt's checkpoint
            ("UserPromptSubmit", None, "skip"),  # the write_file result going back: prompt "", no new turn
            ("PreToolUse", "edit", "checkpoint"),
            ("UserPromptSubmit", None, "skip"),
            ("PostToolUse", "run_shell_command", "skip"),  # balanced tier: nothing after a shell command
            ("UserPromptSubmit", None, "skip"),
            ("Stop", None, "checkpoint"),  # the turn end: files changed since the prompt
            ("UserPromptSubmit", None, "checkpoint"),  # resumed, second prompt
            ("UserPromptSubmit", None, "skip"),  # the read_file result (read_file runs no hook of ours)
            ("PreToolUse", "edit", "skip"),  # the third edit within a minute: the batch has its checkpoint
            ("UserPromptSubmit", None, "skip"),
            ("PreToolUse", "edit", "skip"),  # small
            ("UserPromptSubmit", None, "skip"),
            ("Stop", None, "checkpoint"),
        ], json.dumps(log, indent=1)
        assert "batch" in log[10]["reason"] and "small" in log[12]["reason"], log
        assert agentcli.sessions(work) == [session]
        found = agentcli.checkpoints(work, session)
        assert [c.trigger for c in found] == ["UserPromptSubmit", "PreToolUse", "Stop", "UserPromptSubmit", "Stop"]
        agentcli.check_chain(work, found)
        prompt_1, edit, stop_1, prompt_2, stop_2 = found
        assert all(c.note["agent"] == "qwen" and c.note["session"] == session for c in found)
        assert (edit.note["tool"], edit.note["paths"]) == ("edit", [PLAN])
        assert prompt_1.note["prompt"] == PROMPT_1 and edit.note["prompt"] == PROMPT_1
        assert prompt_2.note["prompt"] == PROMPT_2
        # Turns: opened by each real prompt (the empty ones open none), closed by Stop; the changes are the agent's.
        assert edit.note["origins"] == {PLAN: "agent"}, edit.note
        assert stop_1.note["origins"] == {PLAN: "agent", SHELL_FILE: "agent"}, stop_1.note
        assert prompt_2.note["origins"] == {}, prompt_2.note
        assert stop_2.note["origins"] == {PLAN: "agent"}, stop_2.note
        for stop, prompt in ((stop_1, prompt_1), (stop_2, prompt_2)):
            assert (stop.note["turn"]["session"], stop.note["turn"]["seq"]) == (session, prompt.seq), stop.note
        transcript = Path(prompt_1.note["conversation"]["transcript"])
        folder = re.sub(r"[^a-zA-Z0-9]", "-", str(work.path.resolve()))  # Qwen's sanitizeCwd
        assert transcript == Path(work.env["HOME"]) / ".qwen" / "projects" / folder / "chats" / f"{session}.jsonl"
        assert all(c.note["conversation"]["transcript"] == str(transcript) for c in found)
        assert blob(work, prompt_1.commit, PLAN) is None and blob(work, prompt_1.commit, SHELL_FILE) is None
        assert blob(work, prompt_1.commit, ".qwen/settings.json") == hooks.read_text()
        assert blob(work, edit.commit, PLAN) == PLAN_V1 and blob(work, edit.commit, SHELL_FILE) is None
        assert blob(work, stop_1.commit, PLAN) == PLAN_V2 and blob(work, stop_1.commit, SHELL_FILE) == SHELL_TEXT
        assert work.tree_of(prompt_2.commit) == work.tree_of(stop_1.commit)

        # Back to the second prompt: the files of that moment; the resumed session sends the first prompt's
        # conversation and nothing of the second, and is told its files were rewound under it.
        p1_ids, p2_ids = model.tool_use_ids(PROMPT_1).values(), model.tool_use_ids(PROMPT_2).values()
        whole = transcript.read_bytes()
        finished = agentcli.disk_files(work.path)
        run = work.rewind("undo", str(prompt_2.seq), "--full", "--yes", env=env)
        assert run.returncode == 0, run.stderr
        assert f"resume with: qwen --resume {session}" in run.stdout and PROMPT_2 in run.stdout, run.stdout
        agentcli.assert_tree_on_disk(work, prompt_2.commit, ignored, "after undo --full")
        cut = transcript.read_bytes()
        assert cut.startswith(whole)
        record = json.loads(cut[len(whole):])
        assert (record["type"], record["subtype"], record["sessionId"]) == ("system", "rewind", session), record
        prompt_2_record = next(r for r in transcript_records(transcript) if r["type"] == "user"
                               and r["message"]["parts"][0]["text"] == PROMPT_2)
        assert record["parentUuid"] == prompt_2_record["parentUuid"]
        safety = agentcli.checkpoints(work, session)[-1]
        assert work.git("show", f"{safety.commit}^2:{transcript.name}").encode() == whole
        run_qwen(qwen, work, env, CONTINUE, session, resume=True)
        after_undo = sent(model, CONTINUE)
        for kept in (PROMPT_1, *p1_ids):
            assert kept in after_undo, kept
        for gone in (PROMPT_2, *p2_ids):
            assert gone not in after_undo, gone
        assert "rewound from outside this session" in after_undo, after_undo[-3000:]

        # redo: the files and the whole conversation back; what was said after the undo stays in the file, a branch.
        run = work.rewind("redo", "--yes", env=env)
        assert run.returncode == 0, run.stderr
        assert agentcli.disk_files(work.path) == finished
        run_qwen(qwen, work, env, AGAIN, session, resume=True)
        after_redo = sent(model, AGAIN)
        for back in (PROMPT_1, PROMPT_2, *p1_ids, *p2_ids):
            assert back in after_redo, back
        assert CONTINUE not in after_redo
        assert CONTINUE.encode() in transcript.read_bytes()

        # The code alone, back to the edit's checkpoint: the files before the edit, the conversation untouched.
        before = transcript.read_bytes()
        agentcli.assert_undo_restores(work, edit, ignored)
        assert transcript.read_bytes() == before

        # Back to the first prompt: nothing of the conversation is left; Qwen resumes the session empty.
        run = work.rewind("undo", str(prompt_1.seq), "--conversation", "--yes", env=env)
        assert run.returncode == 0, run.stderr
        assert "nothing of it is kept" in run.stdout and f"qwen --resume {session}" in run.stdout, run.stdout
        run_qwen(qwen, work, env, CONTINUE, session, resume=True)
        emptied = json.dumps(model.main_requests(CONTINUE)[-1].body["messages"])
        for gone in (PROMPT_1, PROMPT_2, AGAIN, *p1_ids, *p2_ids):
            assert gone not in emptied, gone
        agentcli.assert_undo_restores(work, prompt_1, ignored)  # and the code: every file as before the session
    assert agentcli.hook_errors(work) == ""
    assert work.user_state() == user
    work.fsck()


def test_user_hooks_undo_to_the_edit_with_fork_and_uninstall_gives_back_the_settings_qwen_stamped(
        qwen: Path, agent_project: Workdir) -> None:
    """Hooks in ~/.qwen/settings.json beside the user's own settings: `undo <edit> --full --fork` writes a new
    session holding the prompt and the write_file call but not the edit, resumed with `qwen --resume <new id>`,
    the original untouched; Qwen stamps "$version" into the file, and uninstall still gives its bytes back."""
    work = agent_project
    ignored = agentcli.ignored_files(work)
    script = edit_script(str(work.path / PLAN))
    session = str(uuid.uuid4())
    with MockModel(script) as model:
        env = qwen_env(work, model, GIT_REWIND_ANTI_SPAM_SECONDS="0")
        settings = Path(env["HOME"]) / ".qwen" / "settings.json"
        original = settings.read_bytes()
        agentcli.install_hooks(work, "qwen", "user", env)
        run_qwen(qwen, work, env, PROMPT_1, session, resume=False)
        check_tools_ran(model, script, (PROMPT_1,))
        stamped = json.loads(settings.read_text())
        assert stamped["$version"] == 4 and "$version" not in json.loads(original)  # Qwen rewrote the file
        edit = next(c for c in agentcli.checkpoints(work, session) if c.trigger == "PreToolUse")
        assert edit.note["tool"] == "edit"
        write_id, edit_id, shell_id = (model.tool_use_ids(PROMPT_1)[i] for i in range(3))
        transcript = Path(edit.note["conversation"]["transcript"])
        whole = transcript.read_bytes()

        run = work.rewind("undo", str(edit.seq), "--full", "--fork", "--yes", env=env)
        assert run.returncode == 0, run.stderr
        agentcli.assert_tree_on_disk(work, edit.commit, ignored, "after undo --full --fork")
        assert transcript.read_bytes() == whole
        forks = [p for p in transcript.parent.glob("*.jsonl") if p != transcript]
        assert len(forks) == 1
        new = forks[0].stem
        assert new != session and f"qwen --resume {new}" in run.stdout, run.stdout
        assert {r["sessionId"] for r in transcript_records(forks[0])} == {new}
        run_qwen(qwen, work, env, CONTINUE, new, resume=True)
        conversation = sent(model, CONTINUE)
        assert PROMPT_1 in conversation and write_id in conversation
        assert edit_id not in conversation and shell_id not in conversation

        run = work.rewind("uninstall", "--agent", "qwen", "--scope", "user", env=env)
        assert run.returncode == 0, run.stderr
        assert settings.read_bytes() == original  # "$version" was Qwen's, the rest the user's: their bytes back
    assert agentcli.hook_errors(work) == ""
    work.fsck()


def run_interactive(qwen: Path, work: Workdir, env: dict[str, str], prompt: str, session: str,
                    model: MockModel) -> int:
    """`qwen --resume SESSION --yolo` in a pseudo-terminal (Qwen's interactive mode, where SessionStart and SessionEnd
    fire): PROMPT typed once the SessionStart hook has run, as a person would, then Ctrl-C twice once the model has
    answered it; its exit code."""
    controller, terminal = os.openpty()
    proc = subprocess.Popen([str(qwen), "--resume", session, "--yolo"], cwd=work.path,
                            env={**env, "TERM": "xterm-256color"}, stdin=terminal, stdout=terminal, stderr=terminal,
                            start_new_session=True)
    os.close(terminal)
    deadline = time.monotonic() + agentcli.RUN_TIMEOUT
    typed = answered = None
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if select.select([controller], [], [], 0.2)[0]:
                try:
                    os.read(controller, 1 << 16)  # the screen, drained so the program never blocks on it
                except OSError:
                    break
            if typed is None and any(e["event"] == "SessionStart" for e in agentcli.hook_log(work, session)):
                time.sleep(1)
                os.write(controller, prompt.encode())
                time.sleep(0.5)
                os.write(controller, b"\r")
                typed = time.monotonic()
            elif answered is None and model.played(prompt):
                answered = time.monotonic()
            elif answered is not None and time.monotonic() - answered > 2:
                os.killpg(proc.pid, signal.SIGINT)
                time.sleep(0.5)
                os.killpg(proc.pid, signal.SIGINT)
                answered = deadline  # once
        return proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        os.close(controller)


def test_an_interactive_resume_is_told_with_its_first_prompt_where_the_work_stood(
        qwen: Path, agent_project: Workdir) -> None:
    """Interactive Qwen fires SessionStart but drops its hook's output: the resume context goes with the next
    prompt, which Qwen extends with the prompt hook's additionalContext (context_on_prompt). (With `-i PROMPT`
    the prompt's hook may run before SessionStart's has: the context then goes with the prompt after.)"""
    work = agent_project
    agentcli.install_hooks(work, "qwen", "project", work.env)
    script = edit_script(str(work.path / PLAN))
    session = str(uuid.uuid4())
    with MockModel(script) as model:
        env = qwen_env(work, model, GIT_REWIND_ANTI_SPAM_SECONDS="0")
        run_qwen(qwen, work, env, PROMPT_1, session, resume=False)
        stop = agentcli.checkpoints(work, session)[-1]
        assert stop.trigger == "Stop"
        run_interactive(qwen, work, env, CONTINUE, session, model)
        assert model.played(CONTINUE)[0] == script[CONTINUE][0]  # (interactive Qwen may ask once more after it)
        told = sent(model, CONTINUE)
    assert PROMPT_1 in told and f"Resumed from checkpoint #{stop.seq}: turn end" in told, told[-3000:]
    log = agentcli.hook_log(work, session)
    resumed = log[[e["event"] for e in log].index("SessionStart"):]
    assert [(e["event"], e["action"]) for e in resumed][:2] == [("SessionStart", "unchanged"),
                                                                ("UserPromptSubmit", "checkpoint")], resumed
    assert resumed[0]["context"] == {"from": stop.seq, "changed": 0, "summary": None}, resumed[0]
    assert resumed[1]["context"] == "delivered with the prompt", resumed[1]
    assert agentcli.hook_errors(work) == ""


def test_a_session_handed_over_to_another_clone_is_resumed_there_by_qwen(
        qwen: Path, agent_project: Workdir, tmp_path: Path) -> None:
    """Team sync's handover (Agent.adopt_transcript): the session file put where Qwen looks for another clone (its
    sanitized real path), every record's cwd moved there; `qwen --resume <id>` run in that clone sends it all."""
    from git_rewind import agents

    work = agent_project
    agentcli.install_hooks(work, "qwen", "project", work.env)
    script = edit_script(str(work.path / PLAN))
    session = str(uuid.uuid4())
    clone = tmp_path / "elsewhere" / "the.clone"
    clone.mkdir(parents=True)
    with MockModel(script) as model:
        env = qwen_env(work, model)
        run_qwen(qwen, work, env, PROMPT_1, session, resume=False)
        transcript = Path(agentcli.checkpoints(work, session)[0].note["conversation"]["transcript"])
        adopted = agents.get("qwen").adopt_transcript(transcript.read_bytes(), session, str(clone), env["HOME"], {})
        assert adopted.how == "written" and Path(adopted.path).parent.parent != transcript.parent.parent
        assert {r["cwd"] for r in transcript_records(Path(adopted.path))} == {str(clone.resolve())}
        proc = agentcli.run([str(qwen), "--resume", session, "-p", CONTINUE, "--yolo"], clone, env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        handed = sent(model, CONTINUE)
    for kept in (PROMPT_1, *model.tool_use_ids(PROMPT_1).values()):
        assert kept in handed, kept


def test_the_mcp_server_installed_for_qwen_connects(qwen: Path, agent_project: Workdir) -> None:
    """`git rewind install --agent qwen --mcp`: the real Qwen Code starts the server and completes the handshake."""
    work = agent_project
    with MockModel({}) as model:
        env = qwen_env(work, model)
        run = work.rewind("install", "--agent", "qwen", "--scope", "project", "--mcp", env=env)
        assert run.returncode == 0, run.stderr
        listed = agentcli.run([str(qwen), "mcp", "list"], work.path, env)
    out = listed.stdout + listed.stderr
    assert listed.returncode == 0 and "git-rewind" in out and "Connected" in out, out
