"""End to end with the real Claude Code: /checkpoint saves a summary, the next session is told about it.

A user installs git-rewind's hooks and slash commands into the project, runs `/checkpoint` in a
first `claude -p` session (the scripted model answers the command by running the
`git rewind snap --summary -` it asks for), then starts a fresh session. What the second
session's first request to the model carries is the ground truth: the SessionStart hook's
additionalContext, "Resumed from checkpoint #N: …" with the summary and the files changed since.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import agentcli
from helpers.agentcli import e2e
from helpers.mockmodel import MockModel, Text, ToolCall, Turn
from helpers.workdir import Workdir

pytestmark = e2e

CHECKPOINT = "P-CKPT: plan drafted"
NEXT = "P-NEXT: where were we?"
SUMMARY = """Done: drafted the plan in notes/plan.md
State: the plan is a first draft; nothing is implemented yet
Next: review the plan with the team
Files:
- notes/plan.md
"""


@pytest.fixture(scope="module")
def claude() -> Path:
    return agentcli.claude_code()


def claude_env(work: Workdir, model: MockModel) -> dict[str, str]:
    return agentcli.agent_env(
        work.env, ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="test-key", DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
        IS_SANDBOX="1")


def run_claude(claude: Path, work: Workdir, env: dict[str, str], prompt: str) -> str:
    """A fresh `claude -p PROMPT` session in the work tree; returns its session id."""
    proc = agentcli.run([str(claude), "-p", prompt, "--permission-mode", "bypassPermissions",
                         "--output-format", "stream-json", "--verbose"], work.path, env)
    assert proc.returncode == 0, f"claude exited {proc.returncode}: {proc.stderr[-2000:]}{proc.stdout[-2000:]}"
    result = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")][-1]
    assert result.get("type") == "result" and not result.get("is_error"), result
    return str(result["session_id"])


def test_checkpoint_command_then_a_new_session_is_told_where_the_work_stands(
        claude: Path, agent_project: Workdir) -> None:
    work = agent_project
    out = work.rewind("install", "--agent", "claude-code", "--scope", "project", env=agentcli.agent_env(work.env))
    assert out.returncode == 0 and "installed command /checkpoint" in out.stdout, out.stderr
    plan = work.path / "notes" / "plan.md"
    snap = (f"git rewind snap --allow-empty --agent claude-code --trigger /checkpoint --tag summary "
            f"-m 'plan drafted' --summary - <<'SUMMARY'\n{SUMMARY}SUMMARY")
    script: dict[str, list[Turn]] = {
        CHECKPOINT: [
            ToolCall("Write", {"file_path": str(plan), "content": "# Plan\n- first draft\n"}),
            ToolCall("Bash", {"command": snap, "description": "save a checkpoint with a summary"}),
            Text("Saved."),
        ],
        NEXT: [Text("Picking up from the plan.")],
    }
    with MockModel(script) as model:
        env = claude_env(work, model)
        first = run_claude(claude, work, env, f"/checkpoint {CHECKPOINT}")
        assert model.played(CHECKPOINT) == script[CHECKPOINT]
        # The command file's instructions reached the model, with the arguments in place.
        asked = json.dumps(model.main_requests(CHECKPOINT)[0].body["messages"])
        assert "Save a git-rewind checkpoint of this project" in asked and "git rewind snap" in asked
        ran = model.tool_results(CHECKPOINT)[model.tool_use_ids(CHECKPOINT)[1]]
        assert ran["is_error"] is False and "plan drafted" in ran["content"], ran

        # The turn end after it is the session's own checkpoint of the same tree (issue 26: each session keeps
        # its own anchors, and this one holds the conversation); the summary is the snap's, one older.
        (tagged,) = json.loads(work.ok("list", "--tag", "summary", "--json"))
        saved = json.loads(work.ok("show", str(tagged["seq"]), "--json"))
        newest = json.loads(work.ok("show", "@", "--json"))
        assert newest["message"] == "turn end" and newest["seq"] > saved["seq"]
        assert work.git("rev-parse", newest["commit"] + "^{tree}") == work.git("rev-parse", saved["commit"] + "^{tree}")
        assert saved["summary"]["state"] == "the plan is a first draft; nothing is implemented yet"
        assert saved["summary"]["files"] == ["notes/plan.md"] and saved["tags"] == ["summary"]
        plan.write_text("# Plan\n- first draft\n- one more idea, written by hand\n")  # after the checkpoint

        second = run_claude(claude, work, env, NEXT)
    assert second != first

    # Everything the second session sent the model, as one JSON text.
    sent = json.dumps(model.main_requests(NEXT)[0].body)
    seq, at = saved["seq"], newest["seq"]
    context = (f"Resumed from checkpoint #{at}: turn end (saved just now).\n"
               f"Latest summary, saved with checkpoint #{seq} (just now):\n"
               "  Done: drafted the plan in notes/plan.md\n"
               "  State: the plan is a first draft; nothing is implemented yet")
    assert json.dumps(context)[1:-1] in sent, sent[:3000]
    assert "SessionStart hook additional context" in sent
    for line in ("  Next: review the plan with the team", "  Files: notes/plan.md",
                 f"Files changed since #{at} (1):", "  modified notes/plan.md",
                 f"`git rewind undo {at}` restores the code as it was at #{at}; `git rewind undo {at} --full` "
                 "restores the code and the conversation"):
        assert json.dumps(line)[1:-1] in sent, line
    assert "hookSpecificOutput" not in sent  # the agent read the JSON, it did not pass it on as text

    log = agentcli.hook_log(work, second)
    assert log[0]["event"] == "SessionStart" and log[0]["context"] == {"from": at, "changed": 1, "summary": seq}
    assert agentcli.hook_errors(work) == ""
