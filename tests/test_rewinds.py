"""Agents hear of rewinds made under them: a session living in the work tree is told at its next prompt,
through the real `git rewind hook`, what an undo or redo from outside it changed (rewinds.py)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.workdir import REWIND, Run, Workdir

from git_rewind import agents
from git_rewind.base import rewinds

NO_LIMITS = {"GIT_REWIND_ANTI_SPAM_SECONDS": "0", "GIT_REWIND_MIN_CHANGE_CHARS": "0"}
HEADER = "git-rewind: the working tree was rewound from outside this session: "


def hook(w: Workdir, agent: str, data: dict[str, Any]) -> Run:
    run = w.rewind("hook", "--agent", agent, input=json.dumps(data), env=NO_LIMITS)
    assert (run.returncode, run.stderr) == (0, ""), run.stderr
    return run


def claude(w: Workdir, session: str, event: str, **fields: Any) -> Run:
    return hook(w, "claude-code", {"session_id": session, "transcript_path": None, "cwd": str(w.path),
                                   "hook_event_name": event, **fields})


def told(run: Run, event: str = "UserPromptSubmit") -> str | None:
    """The rewind news in a prompt hook's output (None: the hook said nothing of rewinds)."""
    if not run.stdout.strip():
        return None
    out = json.loads(run.stdout)
    assert list(out) == ["hookSpecificOutput"] and run.stdout.count("\n") == 1
    assert out["hookSpecificOutput"]["hookEventName"] == event
    context = out["hookSpecificOutput"]["additionalContext"]
    return context[context.index(HEADER):] if HEADER in context else None


def three_files(w: Workdir) -> None:
    for name in ("a.py", "b.py", "c.py", "d.py"):
        w.write(name, f"{name} one\n")
    w.ok("snap", "-m", "one")
    for name in ("a.py", "b.py", "c.py"):
        w.write(name, f"{name} two\n")


def test_a_living_session_is_told_once_at_its_next_prompt_what_an_undo_and_a_redo_changed(
        agent_project: Workdir) -> None:
    w = agent_project
    three_files(w)
    claude(w, "living", "SessionStart", source="startup")
    assert told(claude(w, "living", "UserPromptSubmit", prompt="first")) is None
    claude(w, "living", "Stop")
    w.ok("undo", "1", "--yes")
    safety = json.loads(w.ok("list", "--json", "-n", "1", "--safety"))[0]["seq"]
    run = claude(w, "living", "UserPromptSubmit", prompt="second")
    at = time.strftime("%H:%M", time.gmtime(_time_of(w, safety)))
    assert told(run) == (f"{HEADER}undo to #1 (3 files: a.py, b.py, c.py) at {at} UTC; "
                         "re-read files before editing them, they may differ from what you remember.")
    claude(w, "living", "Stop")
    assert claude(w, "living", "UserPromptSubmit", prompt="third").stdout == ""  # told once
    claude(w, "living", "Stop")
    w.ok("redo", "--yes")
    text = told(claude(w, "living", "UserPromptSubmit", prompt="fourth"))
    assert text is not None and text.startswith(f"{HEADER}redo to #{safety} (3 files: a.py, b.py, c.py) at ")
    log = [json.loads(line) for line in (w.path / ".git" / "rewind" / "hook.log").read_text().splitlines()]
    assert [e.get("rewound") for e in log if e["event"] == "UserPromptSubmit"] == [None, "told", None, "told"]


def _time_of(w: Workdir, safety: int) -> float:
    (entry,) = [json.loads(line) for line in (w.path / ".git" / "rewind" / rewinds.NAME).read_text().splitlines()
                if json.loads(line)["seq"] == safety]
    return float(entry["time"])


def test_a_session_started_after_the_rewind_is_not_told(agent_project: Workdir) -> None:
    w = agent_project
    three_files(w)
    w.ok("undo", "1", "--yes")
    claude(w, "newcomer", "SessionStart", source="startup")
    assert told(claude(w, "newcomer", "UserPromptSubmit", prompt="hi")) is None
    claude(w, "first-call-is-a-prompt", "UserPromptSubmit", prompt="hi")  # no session start hook: the same
    claude(w, "first-call-is-a-prompt", "Stop")
    assert told(claude(w, "first-call-is-a-prompt", "UserPromptSubmit", prompt="again")) is None


def test_many_rewinds_and_many_files_are_summed_up(agent_project: Workdir) -> None:
    w = agent_project
    for n in range(8):
        w.write(f"f{n}.txt", "one\n")
    w.ok("snap", "-m", "one")
    claude(w, "living", "SessionStart", source="startup")
    for n in range(8):
        w.write(f"f{n}.txt", "two\n")
    for _ in range(4):  # undo, redo, undo, …
        w.ok("undo", "1", "--yes")
        w.ok("redo", "--yes")
    text = told(claude(w, "living", "UserPromptSubmit", prompt="what now"))
    assert text is not None and text.startswith(f"{HEADER}3 earlier rewinds, then ")
    assert text.count(" to #") == rewinds.SHOWN and "(8 files: f0.txt, f1.txt, f2.txt, …)" in text


def test_gemini_and_codex_are_told_with_their_prompt_event_and_cursor_is_not(agent_project: Workdir) -> None:
    w = agent_project
    three_files(w)
    gemini = {"session_id": "gem-1", "transcript_path": None, "cwd": str(w.path), "timestamp": "2026-11-25T10:00:00Z"}
    codex = {"session_id": "019a0000-0000-7000-8000-000000000001", "transcript_path": None, "cwd": str(w.path),
             "model": "gpt-5.5", "permission_mode": "bypassPermissions"}
    cursor = {"conversation_id": "cur-1", "generation_id": "gen-1", "workspace_roots": [str(w.path)],
              "cursor_version": "1.7.0"}
    hook(w, "gemini", {**gemini, "hook_event_name": "SessionStart", "source": "startup"})
    hook(w, "codex", {**codex, "hook_event_name": "SessionStart", "source": "startup"})
    hook(w, "cursor", {**cursor, "hook_event_name": "beforeSubmitPrompt", "prompt": "one", "attachments": []})
    hook(w, "cursor", {**cursor, "hook_event_name": "stop", "status": "completed", "loop_count": 0})
    w.ok("undo", "1", "--yes")
    said = told(hook(w, "gemini", {**gemini, "hook_event_name": "BeforeAgent", "prompt": "go on"}), "BeforeAgent")
    assert said is not None and said.startswith(f"{HEADER}undo to #1 (3 files")
    said = told(hook(w, "codex", {**codex, "hook_event_name": "UserPromptSubmit", "turn_id": "t2", "prompt": "go"}))
    assert said is not None and said.startswith(f"{HEADER}undo to #1 (3 files")
    run = hook(w, "cursor", {**cursor, "hook_event_name": "beforeSubmitPrompt", "prompt": "two", "attachments": []})
    assert HEADER not in run.stdout  # Cursor's prompt hook answers only {"continue": …}: nothing reaches the agent
    assert {name: agents.get(name).prompt_context for name in agents.NAMES} == {
        "claude-code": True, "droid": True, "gemini": True, "codex": True, "cursor": False, "opencode": False,
        "copilot": True, "qwen": True, "kilo": False, "cline": False, "aider": False}


def test_a_rewind_that_changed_no_file_is_not_told(agent_project: Workdir) -> None:
    w = agent_project
    three_files(w)
    w.ok("snap", "-m", "two")
    claude(w, "living", "SessionStart", source="startup")
    w.ok("undo", "2", "--yes")  # the tree already is #2: no safety checkpoint, nothing written
    assert told(claude(w, "living", "UserPromptSubmit", prompt="hi")) is None
    assert not (w.path / ".git" / "rewind" / rewinds.NAME).exists()


def test_a_rewind_through_mcp_within_a_turn_is_told_to_the_others_not_to_the_caller(agent_project: Workdir) -> None:
    from git_rewind.faces.mcp import Tools

    w = agent_project
    three_files(w)
    claude(w, "caller", "SessionStart", source="startup")
    claude(w, "other", "SessionStart", source="startup")
    claude(w, "caller", "UserPromptSubmit", prompt="rewind the files please")  # its turn is running
    tools = Tools(str(w.path), None)
    _text, data = tools.rewind("1", "code", token=tools.rewind("1", "code", preview=True)[1]["token"])
    assert data["safety_checkpoint"] is not None
    claude(w, "caller", "Stop")
    assert told(claude(w, "caller", "UserPromptSubmit", prompt="next")) is None
    said = told(claude(w, "other", "UserPromptSubmit", prompt="next"))
    assert said is not None and said.startswith(f"{HEADER}undo to #1 (3 files")


@pytest.mark.parametrize("garbage", [b"not json\n", b'{"seq": "x"}\n', b'{"seq": 1, "to": 1, "count": 1, "time": 1'])
def test_a_damaged_log_line_is_skipped(agent_project: Workdir, garbage: bytes) -> None:
    w = agent_project
    three_files(w)
    claude(w, "living", "SessionStart", source="startup")
    log = w.path / ".git" / "rewind" / rewinds.NAME
    log.write_bytes(garbage + b"\n")
    w.ok("undo", "1", "--yes")
    said = told(claude(w, "living", "UserPromptSubmit", prompt="hi"))
    assert said is not None and said.count(" to #") == 1


def test_the_log_keeps_its_newest_lines(tmp_path: Path, agent_project: Workdir) -> None:
    from git_rewind.base.repo import Repo

    repo = Repo.discover(str(agent_project.path))
    for seq in range(1, 400):
        rewinds.record(repo, rewinds.Rewind(seq, "undo", 1, [f"file-{seq}.txt" * 20], 1, 0.0))
    path = Path(repo.rewind_dir) / rewinds.NAME
    seqs = [json.loads(line)["seq"] for line in path.read_text().splitlines()]
    assert path.stat().st_size <= rewinds.MAX_BYTES and seqs[-1] == 399 and seqs == sorted(seqs)
    mark = rewinds.mark(repo)
    assert mark["seq"] == 399 and rewinds.news(repo, mark, "s") is None


@pytest.mark.needs("strace")
def test_a_skip_never_looks_at_the_log_and_a_prompt_with_nothing_new_stats_it_once(agent_project: Workdir,
                                                                                     tmp_path: Path) -> None:
    w = agent_project
    three_files(w)
    claude(w, "living", "SessionStart", source="startup")
    w.ok("undo", "1", "--yes")
    assert told(claude(w, "living", "UserPromptSubmit", prompt="first")) is not None

    def calls(event: str, **fields: Any) -> list[str]:
        trace = tmp_path / f"{event}.trace"
        data = {"session_id": "living", "transcript_path": None, "cwd": str(w.path), "hook_event_name": event,
                **fields}
        proc = subprocess.run(["strace", "-f", "-qq", "-e", "trace=%file", "-o", str(trace), *REWIND, "hook",
                               "--agent", "claude-code"], cwd=w.path, env={**w.env, **NO_LIMITS},
                              input=json.dumps(data), capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        return [line for line in trace.read_text().splitlines() if rewinds.NAME in line]

    assert calls("PreToolUse", tool_name="Read", tool_use_id="t1", tool_input={"file_path": str(w.path / "a.py")}) \
        == []
    seen = calls("UserPromptSubmit", prompt="second")
    assert len(seen) == 1 and "stat" in seen[0].split("(")[0], seen


def test_each_kind_of_rewind_is_named_for_the_agent() -> None:
    assert rewinds.Rewind(5, "revert", 2, ["a.py"], 1, 0.0).describe() == "revert of #2 (1 file: a.py) at 00:00 UTC"
    assert rewinds.Rewind(5, "undo --agent-only", 2, ["a.py", "b", "c", "d"], 4, 0.0).describe() == \
        "undo --agent-only to #2 (4 files: a.py, b, c, …) at 00:00 UTC"


def test_a_file_name_that_is_not_utf8_is_told_as_git_rewind_reads_it(agent_project: Workdir) -> None:
    w = agent_project
    name = os.fsdecode(b"caf\xe9.txt")
    w.write(name, "one\n")
    w.ok("snap", "-m", "one")
    claude(w, "living", "SessionStart", source="startup")
    w.write(name, "two\n")
    w.ok("undo", "1", "--yes")
    assert (w.path / name).read_text() == "one\n"
    said = told(claude(w, "living", "UserPromptSubmit", prompt="hi"))
    assert said is not None and f"(1 file: {name}) at " in said
