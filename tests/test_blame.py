"""`git rewind blame`: who put each line there, on histories the real hook and `snap` leave behind.

Each story plays turns through `git rewind hook` (Claude Code-shaped payloads) with a person's edits
between them, then reads `git rewind blame --json` line by line; the lines are also checked against
what git's own blame says of the same versions committed in a scratch repository, and the user's
object store, refs, index and HEAD are checked untouched.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.session import Agent
from helpers.workdir import Workdir

FAST = {"GIT_REWIND_ANTI_SPAM_SECONDS": "0"}


def blame(w: Workdir, path: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    run = w.rewind("blame", "--json", path, cwd=cwd, env=env)
    assert run.returncode == 0, run.stderr
    lines: list[dict[str, Any]] = json.loads(run.stdout)
    assert [line["line"] for line in lines] == list(range(1, len(lines) + 1))
    return lines


def who(lines: list[dict[str, Any]]) -> list[tuple[str, str | None, int | None]]:
    return [(line["text"], line["origin"], line["seq"]) for line in lines]


def notes(w: Workdir) -> list[dict[str, Any]]:
    """Every checkpoint's note with its commit, oldest first."""
    rows = [row.split()[1] for row in w.git("notes", "--ref=rewind", "list").splitlines()]
    return sorted((json.loads(w.git("notes", "--ref=rewind", "show", c)) | {"commit": c} for c in rows),
                  key=lambda n: n["seq"])


def objects(w: Workdir) -> tuple[str, list[str]]:
    """Every object git can count (loose and packed) and every file under .git/objects."""
    counted = w.git("count-objects", "-v")
    files = sorted(str(p.relative_to(w.path)) for p in (w.path / ".git" / "objects").rglob("*") if p.is_file())
    return counted, files


# The story --------------------------------------------------------------------------------------------


def test_two_turns_and_a_person_between_them(agent_project: Workdir) -> None:
    """A prompt, the agent's edit and turn end, the person's edit, a second turn: each line's author."""
    w = agent_project
    w.write("src/app.py", "import sys\nprint('hello')\n")
    w.commit_all("two lines")
    agent = Agent(w, env=FAST)
    agent.prompt("add logging")
    agent.edit("src/app.py", "print('hello')", "log('start')\nprint('hello')")
    w.write("src/app.py", "import sys\nlog('start')\nprint('hello')\n")
    agent.stop()
    w.write("src/app.py", "import sys\nlog('start')\nprint('hello')\n# reviewed\n")  # the person
    agent.prompt("now write a test", prompt_id="prompt-2")
    agent.write("tests/test_app.py", "def test_app():\n    assert True\n")
    w.write("tests/test_app.py", "def test_app():\n    assert True\n")
    agent.edit("src/app.py", "print('hello')", "print('hello, world')")
    w.write("src/app.py", "import sys\nlog('start')\nprint('hello, world')\n# reviewed\n")
    agent.stop()
    w.write("src/app.py", "import sys\nlog('start')\nprint('hello, world')\n# reviewed\n# not yet\n")

    found = notes(w)
    first_prompt, first_end, second_prompt, second_end = (n["seq"] for n in found)
    assert [n["trigger"] for n in found] == ["UserPromptSubmit", "Stop", "UserPromptSubmit", "Stop"]
    lines = blame(w, "src/app.py")
    assert who(lines) == [("import sys", "base", None), ("log('start')", "agent", first_end),
                          ("print('hello, world')", "agent", second_end), ("# reviewed", "outside", second_prompt),
                          ("# not yet", "outside", None)]
    assert first_prompt < first_end
    log, hello, reviewed, later = lines[1], lines[2], lines[3], lines[4]
    assert (log["session"], log["agent"], log["tool"], log["prompt"]) == ("sess-1", "claude-code", "Edit",
                                                                          "add logging")
    assert log["created"] == found[1]["created"]
    assert (hello["prompt"], hello["tool"]) == ("now write a test", "Edit")
    assert all(reviewed[k] is None for k in ("session", "agent", "tool", "prompt"))
    assert reviewed["created"] == found[2]["created"]
    assert later["created"] is None and later["agent"] is None
    assert lines[0]["created"] is None

    # A file the agent created: its first checkpoint is the turn end that recorded it as the agent's.
    created = blame(w, "tests/test_app.py")
    assert [(line["origin"], line["seq"], line["tool"], line["prompt"]) for line in created] == [
        ("agent", second_end, "Write", "now write a test")] * 2

    # The plain output reads like git blame, aligned, from a subdirectory.
    run = w.rewind("blame", "app.py", cwd=w.path / "src")
    assert run.returncode == 0 and run.stderr == ""
    rows = run.stdout.splitlines()
    assert len(rows) == 5 and len({row.index(")") for row in rows}) == 1
    assert rows[1].startswith(f"#{first_end} (agent ") and "claude-code Edit" in rows[1]
    assert rows[1].endswith(" 2) log('start')")
    assert rows[0].split() == ["(base", "1)", "import", "sys"]
    assert "(outside" in rows[4] and "not checkpointed" in rows[4] and rows[4].endswith("5) # not yet")


def test_lines_changed_during_a_running_turn_are_the_agents(agent_project: Workdir) -> None:
    w = agent_project
    agent = Agent(w, env=FAST)
    agent.prompt("rename the greeting")
    agent.edit("src/app.py", "hello", "hi")
    w.write("src/app.py", "print('hi')\n")  # not checkpointed yet; the turn is still running
    lines = blame(w, "src/app.py")
    assert [(line["origin"], line["seq"], line["session"], line["tool"], line["prompt"]) for line in lines] == [
        ("agent", None, "sess-1", "Edit", "rename the greeting")]
    agent.stop()  # the turn end checkpoints it
    end = notes(w)[-1]["seq"]
    assert [(line["origin"], line["seq"]) for line in blame(w, "src/app.py")] == [("agent", end)]


def test_an_undo_gives_restored_lines_back_to_their_authors(agent_project: Workdir) -> None:
    """The agent adds a line, the person deletes it, an undo brings it back: still the agent's line."""
    w = agent_project
    agent = Agent(w, env=FAST)
    agent.prompt("add a line")
    w.write("src/app.py", "print('hello')\nprint('agent')\n")
    agent.stop()
    end = notes(w)[-1]["seq"]
    w.write("src/app.py", "print('hello')\n")
    w.ok("snap", "-m", "the person removed it")
    w.ok("undo", str(end), "--yes")
    w.ok("snap", "-m", "after the undo")
    assert [n["trigger"] for n in notes(w)][-2] == "pre-rewind"
    assert who(blame(w, "src/app.py")) == [("print('hello')", "base", None), ("print('agent')", "agent", end)]


def test_a_linked_work_tree_blames_over_its_own_checkpoints(project: Workdir, tmp_path: Path) -> None:
    w = project
    w.write("src/app.py", "print('hello')\nprint('main')\n")
    main_seq = int(w.ok("snap", "-m", "main").split()[0].lstrip("#"))
    w.git("worktree", "add", "-q", str(tmp_path / "linked"))
    linked = Workdir(tmp_path / "linked", w.env)
    linked.write("src/app.py", "print('hello')\nprint('linked')\n")
    linked_seq = int(linked.ok("snap", "-m", "linked").split()[0].lstrip("#"))
    assert who(blame(linked, "src/app.py")) == [("print('hello')", "base", None),
                                                ("print('linked')", "outside", linked_seq)]
    assert who(blame(w, "src/app.py")) == [("print('hello')", "base", None), ("print('main')", "outside", main_seq)]
    assert not list((w.path / ".git" / "worktrees" / "linked" / "rewind").glob("blame-*"))


# Compared with git --------------------------------------------------------------------------------------


VERSIONS = [
    "a\nb\nc\nd\ne\n",
    "a\nB\nc\nd\ne\nf\n",
    "a\nB\nd\ne\nf\n",
    "x\na\nB\nd\ne\nf\ng\n",
    "x\na\nB\nd\nE\nf\ng\n",
]


def test_the_lines_match_git_blame_of_the_same_versions(repo: Workdir, tmp_path: Path) -> None:
    """Every version a checkpoint held, committed in order in a scratch repository: git blame there gives
    the same checkpoint for every line."""
    w = repo
    w.write("f.txt", VERSIONS[0])
    w.commit_all("init")
    seqs = []
    for text in VERSIONS[1:]:
        w.write("f.txt", text)
        w.write("other.txt", text[::-1])  # checkpoints where other files change too
        seqs.append(w.ok("snap", "-m", "v").split()[0])
        w.write("other.txt", "unrelated\n")
        w.ok("snap", "-m", "other")
    w.write("f.txt", "x\na\nB\nnew\nd\nE\nf\ng\n")
    ours = blame(w, "f.txt")

    scratch = Workdir(tmp_path / "scratch", w.env)
    subprocess.run(["git", "init", "-q", str(scratch.path)], env=w.env, check=True)
    for label, text in [("base", VERSIONS[0]), *zip(seqs, VERSIONS[1:], strict=True),
                        ("now", "x\na\nB\nnew\nd\nE\nf\ng\n")]:
        scratch.write("f.txt", text)
        scratch.commit_all(label)
    porcelain = scratch.git("blame", "--line-porcelain", "f.txt").splitlines()
    theirs = [row.split(" ", 1)[1] for row in porcelain if row.startswith("summary ")]
    expected = [{"base": "base", "now": None}.get(label, label) for label in theirs]
    got = ["base" if line["origin"] == "base" else (f"#{line['seq']}" if line["seq"] else None) for line in ours]
    assert got == expected
    assert set(got) >= {"base", None, *seqs[:1]}


def test_blame_leaves_no_object_ref_or_index_change(agent_project: Workdir) -> None:
    w = agent_project
    agent = Agent(w, env=FAST)
    agent.prompt("edit")
    w.write("src/app.py", "print('hello')\nprint('more')\n")
    agent.stop()
    w.write("src/app.py", "print('hello')\nprint('more')\nprint('mine')\n")
    w.wait_for_repack()
    w.ok("list")  # any reader of the notes keeps its cache of them (notes-cache): made before the look
    before = (objects(w), w.user_state(), w.git("for-each-ref"), w.git("notes", "--ref=rewind", "list"))
    rewind_dir = sorted(os.listdir(w.path / ".git" / "rewind"))
    assert len(blame(w, "src/app.py")) == 3
    assert w.rewind("blame", "src").returncode == 1
    after = (objects(w), w.user_state(), w.git("for-each-ref"), w.git("notes", "--ref=rewind", "list"))
    assert after == before
    assert sorted(os.listdir(w.path / ".git" / "rewind")) == rewind_dir  # the quarantine is gone
    assert not list((w.path / ".git").glob("fast_import_crash_*"))
    w.fsck()


# Object formats and line endings --------------------------------------------------------------------------


def test_a_sha256_repository(tmp_path: Path, env: dict[str, str]) -> None:
    path = tmp_path / "sha256"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", str(path)], env=env, check=True)
    w = Workdir(path, env)
    w.write("f.txt", "one\ntwo\n")
    w.commit_all("init")
    w.write("f.txt", "one\nTWO\n")
    seq = int(w.ok("snap", "-m", "edit").split()[0].lstrip("#"))
    w.write("f.txt", "one\nTWO\nthree\n")
    before = objects(w)
    assert who(blame(w, "f.txt")) == [("one", "base", None), ("TWO", "outside", seq), ("three", "outside", None)]
    assert objects(w) == before


def test_crlf_files_under_autocrlf_compare_as_git_sees_them(repo: Workdir) -> None:
    w = repo
    w.git("config", "core.autocrlf", "true")
    w.git("config", "blame.ignoreRevsFile", ".git-blame-ignore-revs")  # missing: plain git blame would fail
    w.write("win.txt", b"one\r\ntwo\r\nthree\r\n")
    w.commit_all("init")
    w.write("win.txt", b"one\r\nTWO\r\nthree\r\n")
    seq = int(w.ok("snap", "-m", "edit").split()[0].lstrip("#"))
    assert w.git("cat-file", "-p", f"{notes(w)[-1]['commit']}:win.txt") == "one\nTWO\nthree\n"  # stored as LF
    w.write("win.txt", b"one\r\nTWO\r\nthree\r\nfour\r\n")
    assert who(blame(w, "win.txt")) == [("one", "base", None), ("TWO", "outside", seq), ("three", "base", None),
                                        ("four", "outside", None)]


# Unknown attribution -------------------------------------------------------------------------------------


def test_checkpoints_without_origins_say_attribution_is_unknown(project: Workdir) -> None:
    w = project
    minimal = {"GIT_REWIND_TIER": "minimal"}
    w.write("src/app.py", "print('hello')\nprint('two')\n")
    w.ok("snap", "-m", "minimal", env=minimal)
    assert "origins" not in notes(w)[-1]
    run = w.rewind("blame", "src/app.py")
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr == ("error: attribution is unknown for src/app.py: none of its checkpoints recorded origins "
                          "(minimal tier, or checkpoints from before origins were recorded)\n")

    # Later checkpoints record origins: the blame is printed, the older lines' origin is null, and one warning.
    w.write("src/app.py", "print('hello')\nprint('two')\nprint('three')\n")
    w.ok("snap", "-m", "minimal again", env=minimal)
    w.write("src/app.py", "print('hello')\nprint('two')\nprint('three')\nprint('four')\n")
    seq = int(w.ok("snap", "-m", "balanced").split()[0].lstrip("#"))
    run = w.rewind("blame", "--json", "src/app.py")
    assert run.returncode == 0
    lines = json.loads(run.stdout)
    assert [(line["origin"], line["seq"]) for line in lines] == [("base", None), ("base", None),
                                                                 (None, seq - 1), ("outside", seq)]
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("warning: 1 line of src/app.py come from")
    plain = w.rewind("blame", "src/app.py").stdout.splitlines()
    assert f"#{seq - 1} (unknown" in plain[2]


def test_origins_across_a_deleted_checkpoint_are_unknown(project: Workdir, git_environ: dict[str, str]) -> None:
    """Origins computed against a checkpoint that was deleted since cover two steps in one: not guessed."""
    from git_rewind.base.repo import Repo
    from git_rewind.ops import gc

    w = project
    w.ok("snap", "-m", "first")
    w.write("src/app.py", "print('hello')\nprint('two')\n")
    second = int(w.ok("snap", "-m", "second").split()[0].lstrip("#"))
    w.write("src/app.py", "print('hello')\nprint('two')\nprint('three')\n")
    third = int(w.ok("snap", "-m", "third").split()[0].lstrip("#"))
    assert notes(w)[-1]["origins_since"] == second
    gc.delete(Repo.discover(str(w.path)), str(second))
    run = w.rewind("blame", "--json", "src/app.py")
    assert run.returncode == 0, run.stderr
    assert [(line["origin"], line["seq"]) for line in json.loads(run.stdout)] == [
        ("base", None), (None, third), (None, third)]
    assert run.stderr.startswith("warning: 2 lines of src/app.py come from checkpoints whose origins are unknown")


# Bad input ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "message"), [
    ("../elsewhere.txt", "error: path outside the working tree: ../elsewhere.txt\n"),
    ("src", "error: src is a directory: blame reads one file\n"),
    ("gone.py", "error: gone.py does not exist in the working tree (git rewind files ID --all lists what a "
                "checkpoint holds)\n"),
    ("logo.png", "error: logo.png is a binary file: blame reads text\n"),
    ("link", "error: link is a symbolic link: blame reads files\n"),
    (".env", "error: .env is ignored: git rewind keeps no history of ignored files\n"),
])
def test_bad_paths_are_one_line_errors_that_change_nothing(project: Workdir, path: str, message: str) -> None:
    w = project
    w.write("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    os.symlink("src/app.py", w.path / "link")
    w.ok("snap", "-m", "first")
    before = (objects(w), w.user_state(), w.state())
    run = w.rewind("blame", path)
    assert (run.returncode, run.stdout, run.stderr) == (1, "", message)
    assert (objects(w), w.user_state(), w.state()) == before


def test_no_checkpoint_yet_and_a_file_no_checkpoint_holds(project: Workdir) -> None:
    w = project
    run = w.rewind("blame", "src/app.py")
    assert (run.returncode, run.stderr) == (1, "error: no checkpoints yet in this work tree: nothing to blame "
                                               "against; take one with git rewind snap, or let an agent's hooks "
                                               "take them as it works (git rewind install --agent NAME)\n")
    w.ok("snap", "-m", "first")
    w.write("fresh.py", "a = 1\nb = 2\n")  # made since the newest checkpoint, no turn running: from outside
    assert who(blame(w, "fresh.py")) == [("a = 1", "outside", None), ("b = 2", "outside", None)]
    w.write("empty.txt", "")
    w.ok("snap", "-m", "second")
    assert blame(w, "empty.txt") == []


# Pure parts -----------------------------------------------------------------------------------------------


def test_origin_of_a_path_left_out_past_the_notes_limit() -> None:
    from git_rewind.ops.blame import origin_of

    assert origin_of(None, None, "a") is None
    assert origin_of({"a": "agent"}, None, "a") == "agent"
    assert origin_of({"a": "agent"}, None, "b") is None
    assert origin_of({"a": "agent", "c": "agent"}, 5, "b") == "agent"  # the omitted share the listed origin
    assert origin_of({"a": "agent", "c": "outside"}, 5, "b") is None


def test_plain_rows_leave_out_empty_columns_and_align() -> None:
    from git_rewind.faces.output import blame as rows
    from git_rewind.ops.blame import Line

    lines = [Line(1, "x = 1", "outside", 3, created="2026-11-25T10:00:00Z"),
             Line(2, "", "base"),
             *[Line(n, f"y{n}", None, 12, created="2026-11-25T10:05:09Z") for n in range(3, 11)]]
    out = rows(lines)
    assert out[0] == "#3  (outside 2026-11-25 10:00  1) x = 1"
    assert out[1] == "    (base                      2) "
    assert out[9] == "#12 (unknown 2026-11-25 10:05 10) y10"
    assert rows([]) == []


# Into committed history (install --git-hooks) ----------------------------------------------------------------


def test_blame_follows_lines_into_commits_through_their_authorship_notes(agent_project: Workdir) -> None:
    """Lines older than the checkpoints take their author from the authorship note of the commit git's blame
    names (agent or person), and every committed line carries that commit; uncommitted lines read as before."""
    w = agent_project
    w.ok("install", "--git-hooks")
    init = w.git("rev-parse", "HEAD").strip()
    agent = Agent(w, env=FAST)
    agent.prompt("add logging", prompt_id="p1")
    agent.edit("src/app.py", "print('hello')", "log('start')\nprint('hello')")
    w.write("src/app.py", "log('start')\nprint('hello')\n")
    agent.stop()
    w.write("src/app.py", "log('start')\nprint('hello')\n# mine\n")
    w.git("commit", "-qam", "logging")
    made = w.git("rev-parse", "HEAD").strip()
    # The checkpoints go (as on another clone, or after gc): only the note remembers who wrote what.
    for ref in w.git("for-each-ref", "--format=%(refname)", "refs/rewind/", "refs/notes/rewind").split():
        w.git("update-ref", "-d", ref)
    import shutil
    shutil.rmtree(w.path / ".git" / "rewind")
    agent = Agent(w, session="sess-2", env=FAST)
    agent.prompt("say bye", prompt_id="p2")
    agent.edit("src/app.py", "# mine", "# mine\nprint('bye')")
    w.write("src/app.py", "log('start')\nprint('hello')\n# mine\nprint('bye')\n")
    agent.stop()
    w.write("src/app.py", "log('start')\nprint('hello')\n# mine\nprint('bye')\n# later\n")

    lines = blame(w, "src/app.py")
    assert [(line["text"], line["origin"], line.get("commit")) for line in lines] == [
        ("log('start')", "agent", made), ("print('hello')", "base", init), ("# mine", "person", made),
        ("print('bye')", "agent", None), ("# later", "outside", None)]
    assert (lines[0]["prompt"], lines[0]["session"], lines[0]["tool"]) == ("add logging", "sess-1", "Edit")
    assert lines[3]["prompt"] == "say bye" and "commit" not in lines[3] and "commit" not in lines[4]
    rows = w.ok("blame", "src/app.py").splitlines()
    assert rows[2].startswith(made[:8]) and "(person" in rows[2]
