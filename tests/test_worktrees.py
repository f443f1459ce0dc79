"""Linked work trees (`git worktree add`): one store, but each work tree its own history.

People run parallel agents in linked work trees of one repository. Every checkpoint records the
work tree it was taken in (`worktree` in the note: null for the main one); `@`, `@~N`, a bare
`undo`, `redo`, a new session's resume context and `--path` checkpoints resolve within the current
work tree, and `--worktree NAME` reaches another one on purpose.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.workdir import Workdir


@pytest.fixture
def two(project: Workdir, tmp_path: Path) -> tuple[Workdir, Workdir]:
    """The project (main work tree, checkpoint #1) and a linked work tree `feat` (checkpoint #2),
    then a second checkpoint in the main one (#3)."""
    project.ok("snap", "-m", "main one")
    linked = Workdir(tmp_path / "feat", project.env)
    project.git("worktree", "add", "-q", "-b", "feature", str(linked.path))
    linked.write("feature.txt", "feature work\n")
    linked.ok("snap", "-m", "feat one")
    project.write("src/app.py", "print('main edit')\n")
    project.write("main-only.txt", "main\n")
    project.ok("snap", "-m", "main two")
    return project, linked


def _seqs(out: str) -> list[str]:
    return [line.split()[0] for line in out.splitlines() if line.startswith("#")]


def test_notes_record_the_work_tree(two: tuple[Workdir, Workdir]) -> None:
    main, linked = two
    notes = {n["seq"]: n for n in json.loads(main.ok("list", "--all-worktrees", "--json", "-n", "0", "--safety"))}
    assert notes[1]["worktree"] is None and notes[3]["worktree"] is None
    assert notes[2]["worktree"] == "feat" and notes[2]["branch"] == "feature"
    # The key is written even when null: `git notes show` says where every checkpoint was taken.
    shown = json.loads(main.git("notes", "--ref=rewind", "show", notes[1]["commit"]))
    assert "worktree" in shown and shown["worktree"] is None


def test_list_shows_this_work_tree_unless_asked(two: tuple[Workdir, Workdir]) -> None:
    main, linked = two
    assert _seqs(main.ok("list")) == ["#3", "#1"]
    assert _seqs(linked.ok("list")) == ["#2"]
    assert _seqs(linked.ok("list", "--worktree", "main-worktree")) == ["#3", "#1"]
    assert _seqs(main.ok("list", "--worktree", "feat")) == ["#2"]
    assert _seqs(main.ok("list", "--worktree", str(linked.path))) == ["#2"]  # or its path
    every = main.ok("list", "--all-worktrees").splitlines()[1:]  # under the header
    assert _seqs("\n".join(every)) == ["#3", "#2", "#1"]
    assert "feat" in every[1].split() and "main-worktree" in every[0].split()
    bad = main.rewind("list", "--worktree", "nope")
    assert bad.returncode != 0 and "no work tree named nope" in bad.stderr and "Traceback" not in bad.stderr


def test_a_bare_undo_in_a_linked_work_tree_restores_its_own_checkpoint(two: tuple[Workdir, Workdir]) -> None:
    """The issue's case: a plain undo in a feature work tree restored the main work tree's newest
    checkpoint (writing its files, removing the feature's)."""
    main, linked = two
    linked.write("feature.txt", "broken by the agent\n")
    main_before = main.state()
    out = linked.ok("undo", "--yes")
    assert "restored #2" in out
    assert (linked.path / "feature.txt").read_text() == "feature work\n"
    assert not (linked.path / "main-only.txt").exists()
    assert (linked.path / "src/app.py").read_text() == "print('hello')\n"
    assert main.state() == main_before  # the main work tree is not touched either
    # `@` is this work tree's newest: the safety checkpoint the undo just took there.
    assert json.loads(linked.ok("show", "@", "--json"))["worktree"] == "feat"
    assert json.loads(main.ok("show", "@", "--json"))["seq"] == 3


def test_an_id_from_another_work_tree_is_refused_with_the_way_to_ask(two: tuple[Workdir, Workdir]) -> None:
    main, linked = two
    before = linked.state()
    run = linked.rewind("undo", "3", "--yes")
    assert run.returncode != 0
    assert run.stderr.strip().splitlines()[-1].endswith("add --worktree main-worktree to use it")
    assert linked.state() == before
    commit = json.loads(main.ok("show", "3", "--json"))["commit"]
    assert linked.rewind("show", commit[:10]).returncode != 0  # a commit id too
    # Asked for on purpose, another work tree's checkpoint is restored into this one.
    out = linked.ok("undo", "3", "--worktree", "main-worktree", "--yes")
    assert "restored #3" in out and (linked.path / "main-only.txt").read_text() == "main\n"
    assert "main-only.txt" in linked.ok("files", "3", "--worktree", "main-worktree")
    assert "main-only.txt" in linked.ok("diff", "1", "3", "--worktree", "main-worktree", "--name-status")


def test_at_tilde_and_redo_stay_in_the_work_tree(two: tuple[Workdir, Workdir]) -> None:
    main, linked = two
    assert linked.rewind("show", "@~1").returncode != 0  # feat has one checkpoint only
    assert json.loads(main.ok("show", "@~1", "--json"))["seq"] == 1
    main.write("main-only.txt", "changed\n")
    main.ok("undo", "3", "--yes")
    nothing = linked.rewind("redo", "--yes")
    assert nothing.returncode != 0 and "nothing to redo" in nothing.stderr
    assert main.ok("redo", "--yes").splitlines()[1].startswith("safety checkpoint")
    assert (main.path / "main-only.txt").read_text() == "changed\n"


def test_a_shared_session_carries_each_work_trees_own_files(two: tuple[Workdir, Workdir]) -> None:
    """Both work trees use the default `manual` session: one ref, one chain, but each checkpoint's
    tree is its own work tree's (`--path` carries the rest from this work tree's newest, and
    "unchanged" compares with it), exactly git's own `add -A` there."""
    main, linked = two
    assert main.ok("snap").startswith("unchanged since #3")  # not "changed" against feat's #2
    linked.write("feature.txt", "second\n")
    linked.ok("snap", "--path", "feature.txt")
    main.write("src/app.py", "print('third')\n")
    out = main.ok("snap", "--path", "src/app.py")
    assert out.startswith("#5 ")
    assert main.tree_of("refs/rewind/manual") == main.add_all_tree()
    assert main.tree_of("refs/rewind/manual~1") == linked.add_all_tree()
    assert "feature.txt" not in main.git("ls-tree", "-r", "--name-only", "refs/rewind/manual")
    # `show` compares with the previous checkpoint of the same work tree, not the chain's parent.
    shown = main.ok("show", "5")
    assert "src/app.py | 2 +-" in shown and "feature.txt" not in shown


def test_gc_keeps_every_work_trees_redo_target(two: tuple[Workdir, Workdir]) -> None:
    main, linked = two
    main.ok("undo", "1", "--yes")
    linked.write("feature.txt", "x\n")
    linked.ok("undo", "2", "--yes")
    main.ok("gc", "--older-than", "0")
    assert main.ok("redo", "--yes") and linked.ok("redo", "--yes")
    assert (linked.path / "feature.txt").read_text() == "x\n"
    assert (main.path / "main-only.txt").read_text() == "main\n"  # main's own redo, not feat's
    assert not (main.path / "feature.txt").exists()


def test_a_new_session_in_a_linked_work_tree_resumes_from_its_own(two: tuple[Workdir, Workdir]) -> None:
    main, linked = two
    payload = {"session_id": "new-session", "cwd": str(linked.path), "hook_event_name": "SessionStart",
               "source": "startup", "transcript_path": str(linked.path.parent / "t.jsonl")}
    run = linked.rewind("hook", "--agent", "claude-code", input=json.dumps(payload),
                        env={"CLAUDE_PROJECT_DIR": str(linked.path)})
    assert run.returncode == 0, run.stderr
    context = json.loads(run.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("Resumed from checkpoint #2: feat one"), context
