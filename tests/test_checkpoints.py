"""The one reader of checkpoints, id lookup and selection, checked against git's own view of the notes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from git_rewind.base.errors import RewindError
from git_rewind.base.note import Note, Oid
from git_rewind.base.repo import Repo
from git_rewind.store import checkpoints
from git_rewind.store.checkpoints import Checkpoint


def _item(seq: int, commit: str, session: str = "s", tags: list[str] | None = None) -> Checkpoint:
    note = Note(seq, session, "2026-11-22T10:00:00Z", tags=tags or [])
    return Checkpoint(Oid(commit), note, Oid("0" * 40))


ITEMS = [_item(1, "abc1234" + "0" * 33), _item(2, "abc1299" + "1" * 33, "t", ["x"]),
         _item(5, "def0000" + "2" * 33, "s", ["x", "y"]), _item(12, "1200aaa" + "3" * 33)]
NO_REPO: Any = None  # lookup reads nothing when it is given the checkpoints and the work tree


@pytest.mark.parametrize(("ident", "seq"), [
    ("@", 12), ("latest", 12), ("HEAD", 12), ("@~1", 5), ("latest~3", 1), ("5", 5), ("#2", 2), (" 1 ", 1),
    ("abc123", 1), ("ABC129", 2), ("def0", 5), ("def0000" + "2" * 33, 5),
    ("1200aaa", 12),  # seven digits or more that are no seq: a commit id
])
def test_lookup_resolves_every_kind_of_id(ident: str, seq: int) -> None:
    assert checkpoints.lookup(NO_REPO, ident, ITEMS, worktree=None).seq == seq


@pytest.mark.parametrize(("ident", "error"), [
    ("abc1", "ambiguous checkpoint id: abc1"),  # a prefix of two commits
    ("@~4", "unknown checkpoint: @~4 (only 4 checkpoints)"),
    ("7", "unknown checkpoint: 7"),  # a number that is no seq is not read as a short commit id
    ("fff", "unknown checkpoint: fff"),  # too short to be a commit id
    ("zz9", "unknown checkpoint: zz9"),
])
def test_lookup_refuses_what_it_cannot_name_exactly(ident: str, error: str) -> None:
    with pytest.raises(RewindError, match=error.replace("(", r"\(").replace(")", r"\)")):
        checkpoints.lookup(NO_REPO, ident, ITEMS, worktree=None)
    with pytest.raises(RewindError, match="no checkpoints yet"):
        checkpoints.lookup(NO_REPO, "@", [], worktree=None)


def test_newest_first_counts_the_rest() -> None:
    def seqs(items: list[Checkpoint]) -> list[int]:
        return [c.seq for c in items]

    shown, more = checkpoints.newest_first(ITEMS)
    assert (seqs(shown), more) == ([12, 5, 2, 1], 0)
    shown, more = checkpoints.newest_first(ITEMS, limit=3)
    assert (seqs(shown), more) == ([12, 5, 2], 1)


def test_load_all_reads_exactly_what_git_notes_holds(project: Any) -> None:
    project.ok("snap", "-m", "one", "--tag", "a")
    project.write("src/app.py", "print('two')\n")
    project.ok("snap", "-m", "two", "--session", "other")
    project.write("src/app.py", "print('three')\n")
    project.ok("snap", "-m", "three")
    # A note that is not ours (someone's hand-made note on a checkpoint ref's commit) is passed over.
    stray = project.git("rev-parse", "HEAD").strip()
    project.git("notes", "--ref", "rewind", "add", "-m", "just a comment", stray)

    repo = Repo.discover(str(project.path))
    items = checkpoints.load_all(repo)
    assert [(c.seq, c.session, c.message) for c in items] == [(1, "manual", "one"), (2, "other", "two"),
                                                               (3, "manual", "three")]
    listed = dict(line.split()[::-1] for line in project.git("notes", "--ref", "rewind", "list").splitlines())
    for item in items:
        assert item.note_blob == listed[item.commit]
        assert item.note.to_json() == json.loads(project.git("notes", "--ref", "rewind", "show", item.commit))
        assert project.git("rev-parse", f"refs/rewind/{item.session}").strip() in (item.commit,
                                                                                   items[-1].commit)
    assert items[0].note.tags == ["a"] and items[0].time > 0
    one = checkpoints.load_one(repo, items[1].commit)
    assert one is not None and one.note == items[1].note and one.note_blob == items[1].note_blob
    assert checkpoints.load_one(repo, stray) is None
    assert checkpoints.load_one(repo, Oid("0" * 40)) is None


def test_an_empty_store_reads_as_nothing(repo: Any) -> None:
    r = Repo.discover(str(repo.path))
    assert checkpoints.load_all(r) == [] and checkpoints.load_one(r, "HEAD") is None


def _safety(seq: int, trigger: str, to: int | None = None, worktree: str | None = None) -> Checkpoint:
    from git_rewind.base.note import RewindRecord

    record = RewindRecord(to, None, [], "code") if trigger.startswith("pre-") else None
    note = Note(seq, "manual", "2026-11-22T10:00:00Z", trigger=trigger, rewind=record, worktree=worktree)
    return Checkpoint(Oid(f"{seq:040x}"), note, Oid("0" * 40))


def test_the_redo_stack_pushes_undos_pops_the_redo_naming_the_top_and_ignores_the_rest() -> None:
    items = [_safety(1, "manual"), _safety(2, "pre-rewind", 1), _safety(3, "PreToolUse"),
             _safety(4, "pre-rewind", 1), _safety(5, "pre-rewind", 1), _safety(6, "pre-redo", 5),
             _safety(7, "UserPromptSubmit"), _safety(8, "pre-redo", 2),  # names no top: an old double redo
             _safety(9, "pre-rewind", 6)]  # an undo of the redo #6
    assert [c.seq for c in checkpoints.redo_stack(items)] == [2, 4, 9]
    assert [c.seq for c in checkpoints.redo_stack(items + [_safety(10, "pre-redo", 9),
                                                           _safety(11, "pre-redo", 4)])] == [2]
    assert checkpoints.redo_stack([]) == []
    other = [_safety(12, "pre-rewind", 1, worktree="feat")]
    assert sorted(c.seq for c in checkpoints.redo_targets(items + other)) == [2, 4, 9, 12]
