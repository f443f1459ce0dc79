"""An undo or redo while an agent is in the middle of a turn in the work tree asks first, and without a
terminal refuses unless --yes (turns.at_work, cli.ask_if_agents_at_work), through the real CLI and hook."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.workdir import REWIND, Workdir

SESSION = "4f9eba75-a32a-4359-9724-af1840817a93"


def claude(w: Workdir, event: str, **fields: object) -> None:
    data = {"session_id": SESSION, "transcript_path": None, "cwd": str(w.path), "hook_event_name": event, **fields}
    run = w.rewind("hook", "--agent", "claude-code", input=json.dumps(data))
    assert (run.returncode, run.stderr) == (0, ""), run.stderr


@pytest.fixture
def busy(agent_project: Workdir) -> Workdir:
    """Checkpoint #1, an agent turn that started after it and is still running, and a changed file."""
    w = agent_project
    w.ok("snap", "-m", "before the agent")
    claude(w, "UserPromptSubmit", prompt="refactor the whole app, carefully")
    w.write("src/app.py", "print('agent at work')\n")
    return w


def count(w: Workdir) -> int:
    return len(json.loads(w.ok("list", "--json", "-n", "0", "--safety")))


def test_without_a_terminal_undo_and_redo_refuse_in_one_line_naming_yes(busy: Workdir) -> None:
    w = busy
    before, checkpoints = w.state(), count(w)
    run = w.rewind("undo", "1")
    assert run.returncode == 1 and run.stderr.count("\n") == 1, run.stderr
    assert run.stderr.startswith(f"error: claude-code session {SESSION[:8]}… is in the middle of a turn "
                                 "(prompt: refactor the whole app, carefully, last activity ")
    assert "s ago); rewinding now may fight with it" in run.stderr and "--yes" in run.stderr
    assert w.state() == before and count(w) == checkpoints  # nothing changed, no safety checkpoint
    w.ok("undo", "1", "--yes")  # --yes goes ahead
    assert (w.path / "src/app.py").read_text() == "print('hello')\n"
    run = w.rewind("redo")
    assert run.returncode == 1 and "is in the middle of a turn" in run.stderr and "--yes" in run.stderr
    assert (w.path / "src/app.py").read_text() == "print('hello')\n"
    w.ok("redo", "--yes")
    assert (w.path / "src/app.py").read_text() == "print('agent at work')\n"


def test_a_dry_run_does_not_ask_and_a_finished_turn_is_not_asked_about(busy: Workdir) -> None:
    w = busy
    run = w.rewind("undo", "1", "--dry-run")
    assert run.returncode == 0 and "write   src/app.py" in run.stdout and "middle of a turn" not in run.stderr
    claude(w, "Stop", stop_hook_active=False)  # the turn ended
    w.ok("undo", "1")
    assert (w.path / "src/app.py").read_text() == "print('hello')\n"


def test_a_turn_quiet_for_longer_than_live_seconds_is_not_asked_about(busy: Workdir) -> None:
    from git_rewind.base import turns

    w = busy
    (turn,) = (w.path / ".git" / "rewind" / "turns").glob("*.json")
    old = time.time() - turns.LIVE_SECONDS - 60  # its agent was killed: no turn end ever came
    os.utime(turn, (old, old))
    w.ok("undo", "1")


def _on_terminal(w: Workdir, args: list[str], answer: str) -> tuple[int, str]:
    """Run `git rewind ARGS` with a terminal on stdin, typing ANSWER; (exit code, what it printed)."""
    main, secondary = pty.openpty()
    proc = subprocess.Popen([*REWIND, *args], cwd=w.path, env=w.env, stdin=secondary, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    os.close(secondary)
    os.write(main, answer.encode() + b"\n" * 3)  # the turn question, then the preview's own question
    out, _ = proc.communicate(timeout=60)
    os.close(main)
    return proc.returncode, out.decode()


def test_on_a_terminal_it_asks_and_no_changes_nothing(busy: Workdir) -> None:
    w = busy
    before, checkpoints = w.state(), count(w)
    code, out = _on_terminal(w, ["undo", "1"], "n")
    assert code == 1 and "is in the middle of a turn" in out and "Continue? [y/N]" in out, out
    assert "nothing changed" in out
    assert w.state() == before and count(w) == checkpoints


def test_on_a_terminal_yes_goes_on_to_the_preview(busy: Workdir, tmp_path: Path) -> None:
    w = busy
    main, secondary = pty.openpty()
    proc = subprocess.Popen([*REWIND, "undo", "1"], cwd=w.path, env=w.env, stdin=secondary,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    os.close(secondary)
    os.write(main, b"y\ny\n")
    out, _ = proc.communicate(timeout=60)
    os.close(main)
    text = out.decode()
    assert proc.returncode == 0, text
    assert "Continue? [y/N]" in text and "Rewind the working tree to #1? [y/N]" in text
    assert (w.path / "src/app.py").read_text() == "print('hello')\n"


def test_the_question_names_each_running_turn(busy: Workdir) -> None:
    from git_rewind.base import turns
    from git_rewind.base.repo import Repo

    w = busy
    data = {"session_id": "gem-2", "transcript_path": None, "cwd": str(w.path), "hook_event_name": "BeforeAgent",
            "prompt": "x" * 100, "timestamp": "2026-11-25T10:00:00Z"}
    assert w.rewind("hook", "--agent", "gemini", input=json.dumps(data)).returncode == 0
    said = turns.at_work(Repo.discover(str(w.path)), time.time())
    assert said is not None and said.count("is in the middle of a turn") == 2
    assert "gemini session gem-2 is in the middle of a turn (prompt: " + "x" * 60 + "…, last activity" in said
    assert said.endswith("; rewinding now may fight with them")
    assert turns.at_work(Repo.discover(str(w.path)), time.time() + turns.LIVE_SECONDS + 1) is None


def test_revert_and_agent_only_ask_the_same_way(busy: Workdir) -> None:
    w = busy
    claude(w, "UserPromptSubmit", prompt="and now the tests")  # #3: the turn of #2 is over, this one runs
    before = w.state()
    for args in (["revert", "2"], ["undo", "1", "--agent-only"]):  # #2: the prompt checkpoint of the turn
        run = w.rewind(*args)
        assert run.returncode == 1 and "is in the middle of a turn" in run.stderr and "--yes" in run.stderr, run
        assert run.stderr.count("\n") == 1 and w.state() == before


def _turn_file(w: Workdir) -> Path:
    (turn,) = (w.path / ".git" / "rewind" / "turns").glob("*.json")
    return turn


def test_a_turn_quiet_for_turn_timeout_minutes_is_over_and_status_says_why(busy: Workdir) -> None:
    w = busy
    old = time.time() - 11 * 60  # interrupted eleven minutes ago: no turn end ever came, its agent still open
    os.utime(_turn_file(w), (old, old))
    run = w.rewind("undo", "1", env={"GIT_REWIND_TURN_TIMEOUT_MINUTES": "60"})  # a longer timeout: still at work
    assert run.returncode == 1 and "is in the middle of a turn" in run.stderr and "11 min ago" in run.stderr
    status = w.ok("status").splitlines()
    line = status[status.index("open turns:") + 1]
    assert line == (f"  claude-code session {SESSION[:8]}…: over: no hook call for 11 min "
                    "(prompt: refactor the whole app, carefully, last activity 11 min ago)")
    (turn,) = json.loads(w.ok("status", "--json"))["turns"]
    assert (turn["session"], turn["running"], turn["over"]) == (SESSION, False, "no hook call for 11 min")
    w.ok("undo", "1")  # the default ten minutes: over, nothing to ask
    assert (w.path / "src/app.py").read_text() == "print('hello')\n"


def _agent(w: Workdir, tmp_path: Path, event: dict[str, object]) -> subprocess.Popen[bytes]:
    """An agent process (not a shell) that runs one hook call through `sh -c`, as agents do, and stays until
    killed."""
    script = tmp_path / "agent.py"
    script.write_text(
        "import subprocess, sys, time\n"
        "subprocess.run(['sh', '-c', sys.argv[1] + ' hook --agent claude-code; true'], input=sys.argv[2].encode(),"
        " check=True)\n"
        "print('hooked', flush=True)\n"
        "time.sleep(600)\n")
    import shlex

    agent = subprocess.Popen([sys.executable, str(script), shlex.join(REWIND), json.dumps(event)], cwd=w.path,
                             env=w.env, stdout=subprocess.PIPE)
    assert agent.stdout is not None and agent.stdout.readline() == b"hooked\n"
    return agent


def test_a_turn_whose_agent_process_is_gone_is_over_at_once(agent_project: Workdir, tmp_path: Path) -> None:
    w = agent_project
    w.ok("snap", "-m", "before the agent")
    prompt: dict[str, object] = {"session_id": SESSION, "transcript_path": None, "cwd": str(w.path),
                                 "hook_event_name": "UserPromptSubmit", "prompt": "refactor"}
    agent = _agent(w, tmp_path, prompt)
    w.write("src/app.py", "print('agent at work')\n")
    try:
        run = w.rewind("undo", "1")
        assert run.returncode == 1 and "is in the middle of a turn" in run.stderr, run  # its agent runs
        assert "  claude-code session 4f9eba75…: running (prompt: refactor, " in w.ok("status")
    finally:
        agent.kill()
        agent.wait()
    # Killed: no turn end will ever come, and nothing is at work any more.
    status = w.ok("status")
    assert f"  claude-code session 4f9eba75…: over: its agent process {agent.pid} is gone (prompt: refactor" in status
    w.ok("undo", "1")
    assert (w.path / "src/app.py").read_text() == "print('hello')\n"
