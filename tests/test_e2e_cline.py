"""End to end with the real Cline CLI (npm `cline`): its hooks, installed by `git rewind install`, checkpoint a task.

`cline --json "PROMPT"` (headless, every tool auto-approved) runs against the scripted mock model as the
openai-compatible provider that `cline auth` configures in the scratch HOME, with
CLINE_SESSION_BACKEND_MODE=local (without it each run leaves a background "hub" process behind) and
CLINE_NO_AUTO_UPDATE=1. In this mode the CLI runs TaskStart detached (the mock answers once it has
landed, as a real model's first answer would come after it), PreToolUse and PostToolUse blocking, and
TaskComplete detached, possibly after it exited; it sends no UserPromptSubmit (docs/agents/cline.md).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import agentcli
from helpers.agentcli import DRAFT_1, DRAFT_2, PLAN, PLAN_V1, PLAN_V2, SHELL_FILE, SHELL_TEXT, blob, decisions, e2e
from helpers.mockmodel import MockModel, Text, ToolCall, Turn
from helpers.workdir import Workdir

pytestmark = e2e

PROMPT = "P1-PLAN: write the plan, rewrite it, and leave a note from the shell"
SETTLE = 30.0  # seconds a detached hook of Cline's may take to land


@pytest.fixture(scope="module")
def cline() -> Path:
    return agentcli.cline()


def edit_script(plan: str) -> dict[str, list[Turn]]:
    """The Claude Code session's first prompt in the CLI's tools (editor, run_commands)."""
    return {PROMPT: [
        ToolCall("editor", {"path": plan, "new_text": PLAN_V1}),
        ToolCall("editor", {"path": plan, "old_text": DRAFT_1, "new_text": DRAFT_2}),
        ToolCall("run_commands", {"commands": [f"printf '{SHELL_TEXT.strip()}\\n' > {SHELL_FILE}"]}),
        Text("The plan is written."),
    ]}


def cline_env(cline: Path, work: Workdir, model: MockModel, **extra: str) -> dict[str, str]:
    """The scratch HOME with the mock as Cline's provider, set as a user would: `cline auth`."""
    env = agentcli.agent_env(work.env, CLINE_SESSION_BACKEND_MODE="local", CLINE_NO_AUTO_UPDATE="1", **extra)
    proc = agentcli.run([str(cline), "auth", "-p", "openai-compatible", "-k", "test-key", "-m", "mock-model",
                         "-b", f"{model.url}/v1"], work.path, env)
    assert proc.returncode == 0, proc.stderr[-2000:] + proc.stdout[-2000:]
    return env


def settled(work: Workdir, event: str) -> list[dict[str, Any]]:
    """The hook log once an entry for EVENT is in it (a detached hook of Cline's ends after it returned)."""
    deadline = time.monotonic() + SETTLE
    while time.monotonic() < deadline:
        log = agentcli.hook_log(work)
        if any(e.get("event") == event for e in log):
            return log
        time.sleep(0.1)
    pytest.fail(f"no {event} in the hook log after {SETTLE} s: {agentcli.hook_log(work)}", pytrace=False)


def test_a_task_checkpoints_at_start_edit_and_shell_and_undo_takes_back_the_edit(
        cline: Path, agent_project: Workdir) -> None:
    work = agent_project
    hook = agentcli.install_hooks(work, "cline", "project", work.env)
    installed = hook.read_bytes()
    work.user_state()  # git status may refresh a racily clean index once: the second call is the reference
    user = work.user_state()
    ignored = agentcli.ignored_files(work)
    script = edit_script(str(work.path / PLAN))
    with MockModel(script, ready=lambda: any(e.get("event") == "TaskStart" for e in agentcli.hook_log(work))) \
            as model:
        env = cline_env(cline, work, model, GIT_REWIND_TIER="aggressive", GIT_REWIND_ANTI_SPAM_SECONDS="0")
        proc = agentcli.run([str(cline), "--json", PROMPT], work.path, env)
        assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-2000:]
        assert model.played(PROMPT) == script[PROMPT]
        results = model.tool_results(PROMPT)
        assert len(results) == 3 and not any(r.get("is_error") for r in results.values()), results
    log = settled(work, "TaskComplete")
    assert agentcli.hook_errors(work) == ""
    # A hook of ours never shows up as a warning, a message or a cancelled tool.
    assert "git-rewind" not in proc.stdout and '"cancel":true' not in proc.stdout.replace(" ", "")
    assert (work.path / PLAN).read_text() == PLAN_V2 and (work.path / SHELL_FILE).read_text() == SHELL_TEXT
    assert hook.read_bytes() == installed

    assert decisions(log) == [
        ("TaskStart", None, "checkpoint"),
        ("PreToolUse", "editor", "unchanged"),  # creates the file: the tree is still the task start's
        ("PostToolUse", "editor", "skip"),
        ("PreToolUse", "editor", "checkpoint"),  # the rewrite: before it, the first draft
        ("PostToolUse", "editor", "skip"),
        ("PreToolUse", "run_commands", "skip"),  # a shell command is checkpointed after it ran
        ("PostToolUse", "run_commands", "checkpoint"),  # aggressive tier: what the shell changed
        ("TaskComplete", None, "unchanged"),
    ], json.dumps(log, indent=1)
    # The session is the CLI's own: the folder of its session files, what `cline --id` resumes.
    sessions = [p.name for p in (Path(env["HOME"]) / ".cline" / "data" / "sessions").iterdir()]
    assert agentcli.sessions(work) == sessions and len(sessions) == 1
    found = agentcli.checkpoints(work, sessions[0])
    assert [(c.trigger, c.note["tool"]) for c in found] == [
        ("TaskStart", None), ("PreToolUse", "editor"), ("PostToolUse", "run_commands")]
    agentcli.check_chain(work, found)
    start, edit, shell = found
    assert all(c.note["agent"] == "cline" for c in found)
    assert edit.note["paths"] == [PLAN] and edit.note["conversation"]["tool_use_id"].startswith("call_mock_")
    assert shell.note["message"] == f"after run_commands: printf '{SHELL_TEXT.strip()}\\n' > {SHELL_FILE}"
    assert blob(work, start.commit, PLAN) is None and blob(work, start.commit, ".clinerules/hooks/PreToolUse")
    assert blob(work, edit.commit, PLAN) == PLAN_V1 and blob(work, edit.commit, SHELL_FILE) is None
    assert blob(work, shell.commit, PLAN) == PLAN_V2 and blob(work, shell.commit, SHELL_FILE) == SHELL_TEXT
    # No prompt hook came: the first tool call opened the turn, so what the task changed is the agent's.
    assert shell.note["origins"] == {PLAN: "agent", SHELL_FILE: "agent"}, shell.note

    # `git rewind undo` to the edit's checkpoint takes back the rewrite and the shell's file, nothing else.
    refused = work.rewind("undo", str(edit.seq), "--full", "--yes")
    assert refused.returncode != 0 and "Cline's task history cannot be rewound" in refused.stderr
    agentcli.assert_undo_restores(work, edit, ignored)
    assert (work.path / PLAN).read_text() == PLAN_V1 and not (work.path / SHELL_FILE).exists()
    assert hook.read_bytes() == installed  # the hooks are in the work tree: a restore keeps them
    assert work.user_state()[:3] == user[:3]  # index, HEAD, branches (the status has the first draft now)
