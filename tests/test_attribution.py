"""Attribution: each agent's prompt opens a turn and its turn end closes it, through the real hook with that
agent's payload shapes; what changed inside is the agent's, what changed between turns is outside."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.workdir import Workdir

from git_rewind.base import turns


def _claude(event: str, root: Path, **fields: Any) -> dict[str, Any]:
    return {"session_id": "s-1", "transcript_path": None, "cwd": str(root), "hook_event_name": event, **fields}


# agent → (prompt payload, turn-end payload), in the shapes each agent sends (see its own tests)
def payloads(agent: str, root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    if agent in ("claude-code", "droid"):
        return (_claude("UserPromptSubmit", root, prompt="do the work"),
                _claude("Stop", root, stop_hook_active=False))
    if agent == "codex":
        common: dict[str, Any] = {"model": "gpt-5.5", "permission_mode": "bypassPermissions", "turn_id": "turn-1"}
        return (_claude("UserPromptSubmit", root, prompt="do the work", **common),
                _claude("Stop", root, last_assistant_message="done", **common))
    if agent == "gemini":
        return (_claude("BeforeAgent", root, prompt="do the work", timestamp="2026-11-25T10:00:00Z"),
                _claude("AfterAgent", root, prompt="do the work", prompt_response="done",
                        timestamp="2026-11-25T10:00:09Z"))
    if agent == "opencode":
        common = {"sessionID": "ses_1", "directory": str(root), "worktree": str(root),
                  "serverUrl": "http://127.0.0.1:4096/"}
        return ({"event": "chat.message", "messageID": "msg_1", "prompt": "do the work", **common},
                {"event": "session.idle", **common})
    common = {"conversation_id": "conv-1", "generation_id": "gen-1", "model": "m", "cursor_version": "1.7.0",
              "workspace_roots": [str(root)], "user_email": "dev@example.com"}
    return ({"hook_event_name": "beforeSubmitPrompt", "prompt": "do the work", "attachments": [], **common},
            {"hook_event_name": "stop", "status": "completed", "loop_count": 0, **common})


def notes(w: Workdir) -> list[dict[str, Any]]:
    return sorted(json.loads(w.ok("list", "--json", "-n", "0", "--safety")), key=lambda n: n["seq"])


@pytest.mark.parametrize("agent", ["claude-code", "droid", "codex", "gemini", "opencode", "cursor"])
def test_each_agents_turn_is_bracketed_and_attributed(agent_project: Workdir, agent: str) -> None:
    w = agent_project
    prompt, end = payloads(agent, w.path)

    def hook(data: dict[str, Any]) -> None:
        run = w.rewind("hook", "--agent", agent, input=json.dumps(data))
        assert run.returncode == 0 and "hook skipped" not in run.stderr, run

    w.write("before.txt", "the person, before the turn\n")
    hook(prompt)
    w.write("src/app.py", "print('changed by the agent')\n")
    w.write("made.txt", "made by the agent\n")
    hook(end)
    w.write("after.txt", "the person, after the turn\n")
    hook(prompt)
    found = notes(w)
    first, turn_end, second = found[-3:]
    assert "prompt" in first["tags"] and set(first["origins"].values()) == {"outside"}
    assert "before.txt" in first["origins"]
    assert turn_end["origins"] == {"src/app.py": "agent", "made.txt": "agent"}
    assert turn_end["turn"]["prompt"] == "do the work" and turn_end["turn"]["seq"] == first["seq"]
    assert turn_end["turn"]["agent"] == agent
    assert second["origins"] == {"after.txt": "outside"}


def test_a_tool_call_without_a_prompt_hook_opens_the_turn(agent_project: Workdir) -> None:
    """`droid exec "…"` sends no UserPromptSubmit: the first tool call opens the turn, so what the agent
    changes is the agent's (it was all taken for outside), and what came before stays outside."""
    w = agent_project

    def hook(data: dict[str, Any]) -> None:
        run = w.rewind("hook", "--agent", "droid", input=json.dumps(data))
        assert run.returncode == 0 and "hook skipped" not in run.stderr, run

    w.write("before.txt", "the person, before the agent started\n")
    hook(_claude("SessionStart", w.path, source="startup"))
    plan = w.path / "plan.md"
    hook(_claude("PreToolUse", w.path, tool_name="Create", tool_input={"file_path": str(plan), "content": "x\n"}))
    plan.write_text("the agent's plan\n" * 20)
    hook(_claude("PreToolUse", w.path, tool_name="Edit", tool_input={
        "file_path": str(plan), "old_string": "the agent's plan\n" * 20, "new_string": "a new plan\n" * 20}))
    plan.write_text("a new plan\n" * 20)
    w.write("shell.txt", "made by the agent's shell\n")
    hook(_claude("Stop", w.path, stop_hook_active=False))
    start, edit, turn_end = notes(w)[-3:]
    assert start["trigger"] == "SessionStart" and start["origins"]["before.txt"] == "outside"
    assert edit["trigger"] == "PreToolUse" and edit["origins"] == {"plan.md": "agent"}
    assert turn_end["origins"] == {"plan.md": "agent", "shell.txt": "agent"}
    assert turn_end["turn"]["prompt"] is None and turn_end["turn"]["tools"] == {"plan.md": "Edit"}
    assert not (w.path / ".git" / "rewind" / "turns" / "s-1.json").exists()  # the turn end closed it


def test_a_turn_end_with_nothing_changed_takes_no_checkpoint(agent_project: Workdir) -> None:
    w = agent_project
    prompt, end = payloads("claude-code", w.path)
    for data in (prompt, end):
        assert w.rewind("hook", "--agent", "claude-code", input=json.dumps(data)).returncode == 0
    assert [n["trigger"] for n in notes(w)] == ["UserPromptSubmit"]


def test_snap_while_a_turn_runs_is_the_agents_and_after_it_outside(agent_project: Workdir) -> None:
    w = agent_project
    prompt, end = payloads("claude-code", w.path)
    w.rewind("hook", "--agent", "claude-code", input=json.dumps(prompt))
    w.write("during.txt", "x\n")
    w.ok("snap", "-m", "during")
    w.rewind("hook", "--agent", "claude-code", input=json.dumps(end))
    w.write("later.txt", "y\n")
    w.ok("snap", "-m", "later")
    by_message = {n["message"]: n for n in notes(w)}
    assert by_message["during"]["origins"] == {"during.txt": "agent"}
    assert by_message["during"]["turn"]["session"] == "s-1"
    assert by_message["later"]["origins"] == {"later.txt": "outside"}


def test_under_minimal_no_origins_are_recorded(agent_project: Workdir) -> None:
    w = agent_project
    w.ok("config", "set", "tier", "minimal")
    w.write("x.txt", "x\n")
    w.ok("snap", "-m", "by hand")
    assert "origins" not in notes(w)[-1]
    assert "unknown" in w.ok("show", "@")


def test_a_turn_quiet_for_long_is_over_for_others_but_claims_only_what_it_wrote(
        agent_project: Workdir, git_environ: dict[str, str]) -> None:
    """A turn whose agent has not called a hook for LIVE_SECONDS is not live: a snap then gives a file to it
    only when the file was modified while the turn was at work."""
    import os

    from git_rewind.base.repo import Repo

    w = agent_project
    w.ok("snap", "-m", "start")
    repo = Repo.discover(str(w.path))
    long_ago = time.time() - turns.LIVE_SECONDS - 600
    turns.start(repo, turns.Turn("s-old", "claude-code", "old work", 1, long_ago - 60))
    os.utime(Path(repo.rewind_dir) / "turns" / "s-old.json", (long_ago, long_ago))
    assert turns.running(repo, time.time()) == [] and len(turns.open_turns(repo, time.time())) == 1
    old = w.write("old.txt", "written while it worked\n")
    os.utime(old, (long_ago - 30, long_ago - 30))
    w.write("new.txt", "written now\n")
    w.ok("snap", "-m", "now")
    assert notes(w)[-1]["origins"] == {"old.txt": "agent", "new.txt": "outside"}
    assert notes(w)[-1]["turn"]["session"] == "s-old"


def test_turn_files_survive_garbage(agent_project: Workdir, git_environ: dict[str, str]) -> None:
    """A turn file that is not JSON, or names no session, is ignored, never an error."""
    from git_rewind.base.repo import Repo

    w = agent_project
    w.ok("snap", "-m", "start")
    repo = Repo.discover(str(w.path))
    folder = Path(repo.rewind_dir) / "turns"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bad.json").write_text("{not json")
    (folder / "empty.json").write_text("{}")
    assert turns.open_turns(repo, time.time()) == []
    w.write("x.txt", "x\n")
    w.ok("snap", "-m", "fine")
    assert notes(w)[-1]["origins"] == {"x.txt": "outside"}
