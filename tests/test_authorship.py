"""Authorship at commit: `install --git-hooks`, the note post-commit writes on each commit under
refs/notes/rewind-authorship (store/authorship.py's format), carried through amend, rebase and cherry-pick.

Every story plays an agent's turns through the real `git rewind hook` (helpers.session.Agent) with the
person's edits written directly, asks `git rewind blame --json` just before the commit, commits with git
itself (the hooks installed by the real command), and reads the note back: each line the commit adds
must be given to whom blame gave it.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.session import Agent
from helpers.workdir import Run, Workdir

FAST = {"GIT_REWIND_ANTI_SPAM_SECONDS": "0", "GIT_REWIND_MIN_CHANGE_CHARS": "0"}
REF = "refs/notes/rewind-authorship"


def note(w: Workdir, commit: str = "HEAD") -> dict[str, Any]:
    """The commit's authorship note as git shows it (one JSON object, or the test fails)."""
    data: dict[str, Any] = json.loads(w.git("notes", "--ref", REF, "show", commit))
    return data


def authors_of(w: Workdir, path: str, commit: str = "HEAD") -> dict[int, dict[str, Any]]:
    """Line number → author dict, for the lines COMMIT's note gives for PATH."""
    data = note(w, commit)
    found = {}
    for first, last, index in data["files"].get(path, []):
        for number in range(first, last + 1):
            found[number] = data["authors"][index]
    return found


def commit(w: Workdir, *args: str) -> str:
    """`git commit ARGS` through git itself (hooks run); it must succeed with no word from git-rewind."""
    run = git_run(w, "commit", "-q", *args)
    assert run.returncode == 0, run.stderr
    assert "git-rewind" not in run.stderr, run.stderr
    assert not (w.path / ".git" / "rewind" / "git-hook-errors.log").exists()
    return w.git("rev-parse", "HEAD").strip()


def git_run(w: Workdir, *args: str, env: dict[str, str] | None = None, input: str = "") -> Run:
    proc = subprocess.run(["git", *args], cwd=w.path, env={**w.env, "GIT_EDITOR": "true", **(env or {})},
                          capture_output=True, text=True, input=input)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def blame(w: Workdir, path: str) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = json.loads(w.ok("blame", "--json", path))
    return lines


def expected(line: dict[str, Any]) -> dict[str, Any]:
    """What the note must say of a line `blame` described as LINE."""
    if line["origin"] == "agent":
        found = {"origin": "agent", "agent": line["agent"], "session": line["session"], "prompt": line["prompt"],
                 "tool": line["tool"]}
        if line["seq"] is not None:
            found["seq"] = line["seq"]
        return found
    return {"origin": "person" if line["origin"] in ("outside", "person") else "unknown"}


def same_as_blame(w: Workdir, path: str, before: list[dict[str, Any]], commit: str = "HEAD") -> dict[int, Any]:
    """The note's authors of PATH's added lines equal what BEFORE (blame just before the commit) said."""
    got = authors_of(w, path, commit)
    assert got, f"no lines of {path} in the note"
    for number, author in got.items():
        want = expected(before[number - 1])
        assert {k: author.get(k) for k in want} == want, (number, before[number - 1]["text"], author)
        if author["origin"] == "agent" and "seq" in want:
            checkpoint = w.git("rev-list", "-1", f"{author['checkpoint']}").strip()
            assert json.loads(w.git("notes", "--ref=rewind", "show", checkpoint))["seq"] == author["seq"]
    return got


@pytest.fixture
def hooked(agent_project: Workdir) -> Workdir:
    w = agent_project
    out = w.ok("install", "--git-hooks")
    assert out.count("installed git hook") == 3
    return w


def mixed_story(w: Workdir) -> Agent:
    """src/app.py written by an agent (two turns) and the person between them, uncommitted."""
    agent = Agent(w, env=FAST)
    agent.prompt("add logging")
    agent.edit("src/app.py", "print('hello')", "log('start')\nprint('hello')")
    w.write("src/app.py", "import log\nlog('start')\nprint('hello')\n")
    agent.stop()
    w.write("src/app.py", "import log\nlog('start')\nprint('hello')\n# reviewed by me\n")  # the person
    agent.prompt("say goodbye too", prompt_id="prompt-2")
    agent.edit("src/app.py", "# reviewed by me", "# reviewed by me\nprint('bye')")
    w.write("src/app.py", "import log\nlog('start')\nprint('hello')\n# reviewed by me\nprint('bye')\n")
    agent.stop()
    return agent


def test_a_commit_notes_who_wrote_each_added_line_as_blame_said(hooked: Workdir) -> None:
    w = hooked
    mixed_story(w)
    before = blame(w, "src/app.py")
    assert {line["origin"] for line in before} >= {"agent", "outside"}
    index_before = (w.path / ".git" / "index").read_bytes()
    made = commit(w, "-am", "logging and goodbye")
    got = same_as_blame(w, "src/app.py", before)
    assert sorted(got) == [1, 2, 4, 5]  # line 3, print('hello'), was already committed
    assert [got[n]["origin"] for n in (1, 2, 4, 5)] == ["agent", "agent", "person", "agent"]
    assert got[2]["prompt"] == "add logging" and got[5]["prompt"] == "say goodbye too"
    assert got[2]["tool"] == "Edit" and got[2]["agent"] == "claude-code" and got[2]["session"] == "sess-1"
    assert (w.path / ".git" / "index").read_bytes() != index_before  # git's own commit, not ours
    assert w.git("notes", "--ref", REF, "list", made).strip()
