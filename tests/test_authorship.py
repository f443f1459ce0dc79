"""Authorship at commit: `install --git-hooks`, the note post-commit writes on each commit under
refs/notes/rewind-authorship (store/authorship.py's format), carried through amend, rebase and cherry-pick.

Every story plays an agent's turns through the real `git rewind hook` (helpers.session.Agent) with the
person's edits written directly, asks `git rewind blame --json` just before the commit, commits with git
itself (the hooks installed by the real command), and reads the note back: each line the commit adds
must be given to whom blame gave it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import daemon
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


def test_a_file_whose_name_holds_a_space_is_noted_under_its_own_name(hooked: Workdir) -> None:
    """git ends a `+++ b/NAME` holding a space with a tab; the note names the file, not NAME plus a tab."""
    w = hooked
    agent = Agent(w, env=FAST)
    agent.prompt("write notes")
    agent.write("my notes.txt", "first\nsecond\n")
    w.write("my notes.txt", "first\nsecond\n")
    agent.stop()
    before = blame(w, "my notes.txt")
    w.git("add", "my notes.txt")
    commit(w, "-m", "notes")
    assert sorted(note(w)["files"]) == ["my notes.txt"]
    got = same_as_blame(w, "my notes.txt", before)
    assert [got[n]["origin"] for n in (1, 2)] == ["agent", "agent"]
    w.write("my notes.txt", "zeroth\nfirst\nsecond\n")  # the person, then an amend: the old lines carried
    w.git("add", "my notes.txt")
    commit(w, "--amend", "-m", "notes, amended")
    assert sorted(note(w)["files"]) == ["my notes.txt"]
    assert [authors_of(w, "my notes.txt")[n]["origin"] for n in (1, 2, 3)] == ["person", "agent", "agent"]


def test_with_the_daemon_running_it_writes_the_notes_of_a_commit_and_an_amend(hooked: Workdir,
                                                                               daemons: list[Workdir]) -> None:
    """The work tree's daemon answers the git hooks (`githook`: no interpreter start or imports in the hook, its
    own object writer): the same notes as the hook writes alone, and the daemon's count says it wrote them."""
    w = hooked
    daemons.append(w)
    assert w.rewind("daemon", "start").returncode == 0
    mixed_story(w)
    before = blame(w, "src/app.py")
    made = commit(w, "-am", "logging and goodbye")
    got = same_as_blame(w, "src/app.py", before, made)
    assert [got[n]["origin"] for n in (1, 2, 4, 5)] == ["agent", "agent", "person", "agent"]
    assert (daemon.status(w).get("served") or {}).get("githook") == 1  # post-commit, answered by the daemon
    w.write("src/app.py", w.path.joinpath("src/app.py").read_text() + "# and mine\n")
    amended = commit(w, "-a", "--amend", "-m", "amended")
    app = authors_of(w, "src/app.py", amended)
    assert sorted(app) == [1, 2, 4, 5, 6] and app[6] == {"origin": "person"} and app[2]["prompt"] == "add logging"
    assert (daemon.status(w).get("served") or {}).get("githook") == 3  # the amend's post-commit and post-rewrite


def turn(w: Workdir, agent: Agent, prompt: str, path: str, content: str, prompt_id: str) -> None:
    """One agent turn writing PATH whole."""
    agent.prompt(prompt, prompt_id=prompt_id)
    agent.write(path, content)
    w.write(path, content)
    agent.stop()


def test_partial_staging_notes_the_staged_lines_as_blame_would_say_of_them(hooked: Workdir) -> None:
    """`git add -p`: the committed blob is not the work-tree file. The note covers the staged lines only, each
    given to whom blame gives it: an agent's line by its checkpoint, the person's staged-only line as since the
    newest checkpoint (no turn running: the person)."""
    w = hooked
    agent = Agent(w, env=FAST)
    turn(w, agent, "write the greeting", "src/greet.py", "def greet():\n    return 'hi'\n", "p1")
    w.write("src/greet.py", "def greet():\n    return 'hi'\n# staged by me\n")
    w.git("add", "src/greet.py")  # staged: the agent's two lines and the person's one
    w.write("src/greet.py", "def greet():\n    return 'hi'\n# changed after staging\n# not staged\n")
    before = blame(w, "src/greet.py")
    commit(w, "-m", "greet")
    got = authors_of(w, "src/greet.py")
    assert sorted(got) == [1, 2, 3]  # the committed blob's lines, not the work tree's four
    assert [got[n]["origin"] for n in (1, 2)] == ["agent", "agent"]
    assert got[1]["prompt"] == "write the greeting" and got[1]["seq"] == before[0]["seq"]
    assert got[3] == {"origin": "person"}
    assert w.git("show", "HEAD:src/greet.py").splitlines()[2] == "# staged by me"


def test_an_amend_keeps_the_notes_lines_and_gives_new_lines_as_blame_said(hooked: Workdir) -> None:
    w = hooked
    agent = mixed_story(w)
    commit(w, "-am", "first")
    first = w.git("rev-parse", "HEAD").strip()
    first_note = note(w, first)
    turn(w, agent, "add a footer", "src/footer.py", "FOOTER = 1\n", "p3")
    w.write("src/app.py", w.path.joinpath("src/app.py").read_text() + "# and mine\n")
    before = {p: blame(w, p) for p in ("src/app.py", "src/footer.py")}
    w.git("add", "src/footer.py")
    amended = commit(w, "-a", "--amend", "-m", "first, amended")
    assert amended != first
    for path in ("src/app.py", "src/footer.py"):
        same_as_blame(w, path, before[path], amended)
    app = authors_of(w, "src/app.py", amended)
    assert sorted(app) == [1, 2, 4, 5, 6] and app[6] == {"origin": "person"}
    assert authors_of(w, "src/footer.py", amended)[1]["prompt"] == "add a footer"
    assert note(w, first) == first_note  # the old commit's note stays as it was


def test_an_interactive_rebase_that_reorders_and_squashes_carries_each_line(hooked: Workdir, tmp_path: Path) -> None:
    """Three commits (agent, person, agent), reordered and the third squashed into the first, with the person's
    notes.rewriteRef set (whose default mode concatenates notes): one valid note per new commit, each line's
    author the one its old commit's note gave it, at its line in the new commit."""
    w = hooked
    w.git("config", "notes.rewriteRef", REF)
    agent = Agent(w, env=FAST)
    turn(w, agent, "first lines", "src/a.py", "a1\na2\n", "p1")
    c1 = _commit_all(w, "a")
    w.write("src/b.py", "b1 by me\n")
    c2 = _commit_all(w, "b")
    turn(w, agent, "more lines", "src/a.py", "a0\na1\na2\na3\n", "p2")
    c3 = _commit_all(w, "a again")
    old = {c: note(w, c) for c in (c1, c2, c3)}
    todo = tmp_path / "todo.sh"
    todo.write_text(f"#!/bin/sh\nprintf 'pick {c2}\\npick {c1}\\nsquash {c3}\\n' > \"$1\"\n")
    todo.chmod(0o755)
    run = git_run(w, "rebase", "-q", "-i", f"{c1}~1", env={"GIT_SEQUENCE_EDITOR": str(todo)})
    assert run.returncode == 0, run.stderr
    assert "git-rewind" not in run.stderr
    new_b, squashed = w.git("rev-list", "--reverse", f"{c1}~1..HEAD").split()
    assert w.git("log", "-1", "--format=%s", new_b).strip() == "b"
    assert authors_of(w, "src/b.py", new_b) == {1: {"origin": "person"}}
    got = authors_of(w, "src/a.py", squashed)
    assert sorted(got) == [1, 2, 3, 4]
    assert [got[n]["prompt"] for n in (1, 2, 3, 4)] == ["more lines", "first lines", "first lines", "more lines"]
    first_turn = {tuple(a.items()) for a in old[c1]["authors"]}
    assert tuple(got[2].items()) in first_turn
    assert note(w, squashed)["v"] == 1  # valid JSON: the concatenation git made was replaced


def _commit_all(w: Workdir, message: str) -> str:
    w.git("add", "-A")
    return commit(w, "-m", message)


def test_a_cherry_pick_takes_the_picked_commits_note(hooked: Workdir) -> None:
    w = hooked
    base = w.git("rev-parse", "HEAD").strip()
    agent = Agent(w, env=FAST)
    turn(w, agent, "helper", "src/util.py", "def helper():\n    return 1\n", "p1")
    w.write("src/util.py", "def helper():\n    return 1\n# person\n")
    picked = _commit_all(w, "util")
    w.git("checkout", "-q", "-b", "other", base)
    w.write("other.txt", "elsewhere\n")
    _commit_all(w, "other work")
    run = git_run(w, "cherry-pick", picked)
    assert run.returncode == 0 and "git-rewind" not in run.stderr, run.stderr
    new = w.git("rev-parse", "HEAD").strip()
    assert new != picked
    assert authors_of(w, "src/util.py", new) == authors_of(w, "src/util.py", picked)
    assert authors_of(w, "src/util.py", new)[1]["prompt"] == "helper"


def test_a_merge_gets_no_note_and_blame_names_the_commits_its_lines_came_from(hooked: Workdir) -> None:
    w = hooked
    agent = Agent(w, env=FAST)
    turn(w, agent, "helper", "src/util.py", "x = 1\n", "p1")
    w.git("checkout", "-q", "-b", "side")
    made = _commit_all(w, "util")
    w.git("checkout", "-q", "main")
    w.write("main.txt", "on main\n")
    _commit_all(w, "main work")
    run = git_run(w, "merge", "--no-ff", "-q", "-m", "merge side", "side")
    assert run.returncode == 0 and "git-rewind" not in run.stderr, run.stderr
    assert not w.git("notes", "--ref", REF, "list", "HEAD", check=False).strip()
    line = blame(w, "src/util.py")[0]
    assert (line["commit"], line["origin"], line["prompt"]) == (made, "agent", "helper")


def test_a_broken_note_or_an_internal_error_never_fails_a_commit(hooked: Workdir) -> None:
    w = hooked
    agent = Agent(w, env=FAST)
    turn(w, agent, "helper", "src/util.py", "x = 1\n", "p1")
    picked = _commit_all(w, "util")
    # Someone's note on the picked commit that is not JSON: the pick's note is blamed afresh instead.
    w.git("notes", "--ref", REF, "add", "-f", "-m", "not json {", picked)
    w.git("checkout", "-q", "-b", "other", f"{picked}~1")
    run = git_run(w, "cherry-pick", picked)
    assert run.returncode == 0 and "git-rewind" not in run.stderr, run.stderr
    assert authors_of(w, "src/util.py")[1]["origin"] == "agent"
    # The notes ref pointing at a blob: writing fails inside the hook; the commit is made all the same.
    blob = _blob(w)
    w.git("update-ref", REF, blob)
    w.write("src/util.py", "x = 2\n")
    run = git_run(w, "commit", "-qam", "despite a broken notes ref")
    assert run.returncode == 0, run.stderr
    assert w.git("log", "-1", "--format=%s").strip() == "despite a broken notes ref"
    said = [line for line in run.stderr.splitlines() if "git-rewind" in line]
    assert len(said) == 1 and "post-commit hook skipped" in said[0]
    log = (w.path / ".git" / "rewind" / "git-hook-errors.log").read_text()
    assert "Traceback" in log and "post-commit" in log


def _blob(w: Workdir) -> str:
    proc = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=w.path, env=w.env, input="x", text=True,
                          capture_output=True, check=True)
    return proc.stdout.strip()


def test_the_assisted_by_trailer_names_the_agents_of_the_staged_lines(hooked: Workdir) -> None:
    w = hooked
    agent = Agent(w, env=FAST)
    turn(w, agent, "helper", "src/util.py", "x = 1\n", "p1")
    w.write("mine.txt", "by me\n")
    w.git("add", "mine.txt")
    commit(w, "-m", "mine only")  # off by default, and only the person's lines staged anyway
    assert "Assisted-by" not in w.git("log", "-1", "--format=%B")
    (w.path / ".git-rewind.toml").write_text("commit_trailer = true\n")
    w.git("add", "src/util.py")
    commit(w, "-m", "util")
    assert w.git("log", "-1", "--format=%(trailers:key=Assisted-by,valueonly)").strip() == "claude-code:unknown"
    w.write("mine.txt", "by me, again\n")
    w.git("add", "mine.txt")
    commit(w, "-m", "mine again")
    assert "Assisted-by" not in w.git("log", "-1", "--format=%B")


def test_the_model_a_payload_names_reaches_the_note_blame_and_the_trailer(hooked: Workdir) -> None:
    """Codex names the model in every hook payload (Cursor in most): the turn keeps it, the checkpoints' notes
    carry it, and from them blame, the commit's authorship note and the Assisted-by trailer; a turn whose
    payloads name none stays without (the trailer's `unknown`)."""
    w = hooked
    (w.path / ".git-rewind.toml").write_text("commit_trailer = true\n")
    w.git("add", ".git-rewind.toml")
    commit(w, "-m", "settings")
    agent = Agent(w, env=FAST)
    agent.send("UserPromptSubmit", prompt="write the helper", prompt_id="p1", model="gpt-5.5-codex")
    agent.write("src/util.py", "x = 1\n")
    w.write("src/util.py", "x = 1\n")
    agent.stop()
    assert blame(w, "src/util.py")[0]["model"] == "gpt-5.5-codex"
    w.git("add", "src/util.py")
    commit(w, "-m", "util")
    assert authors_of(w, "src/util.py")[1]["model"] == "gpt-5.5-codex"
    assert w.git("log", "-1", "--format=%(trailers:key=Assisted-by,valueonly)").strip() == "claude-code:gpt-5.5-codex"
    other = Agent(w, session="sess-2", env=FAST)
    turn(w, other, "and another", "src/more.py", "y = 2\n", "p2")  # no model in its payloads
    w.git("add", "src/more.py")
    commit(w, "-m", "more")
    assert "model" not in authors_of(w, "src/more.py")[1]
    assert w.git("log", "-1", "--format=%(trailers:key=Assisted-by,valueonly)").strip() == "claude-code:unknown"
