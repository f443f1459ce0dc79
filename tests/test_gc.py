"""`git rewind gc`: old checkpoints go, so that `git gc` can prune them; kept ones stay intact."""

from __future__ import annotations

import json
import subprocess

from helpers.checkpoints import listing, snaps
from helpers.workdir import Workdir


def test_keep_newest_drops_the_rest_and_git_gc_prunes_them(project: Workdir) -> None:
    snaps(project, 5)
    before = {d["seq"]: (project.tree_of(d["commit"]), d) for d in listing(project)}
    dropped_commits = [d["commit"] for d in listing(project) if d["seq"] <= 3]
    assert "would drop 3 checkpoints (#1..#3)" in project.ok("gc", "--keep", "2", "--dry-run")
    assert len(listing(project)) == 5
    out = project.ok("gc", "--keep", "2")
    assert "dropped 3 checkpoints (#1..#3), kept 2" in out
    after = listing(project)
    assert [d["seq"] for d in after] == [5, 4]
    for d in after:
        tree, note = before[d["seq"]]
        assert project.tree_of(d["commit"]) == tree
        assert {k: v for k, v in d.items() if k != "commit"} == {k: v for k, v in note.items() if k != "commit"}
    assert project.git("rev-list", "--count", "refs/rewind/s").strip() == "2"
    assert project.git("log", "--format=%s", "refs/rewind/s").splitlines() == ["#5 v4", "#4 v3"]
    project.fsck()
    project.git("reflog", "expire", "--expire=now", "--all")
    project.git("gc", "-q", "--prune=now")
    for commit in dropped_commits:
        assert subprocess.run(["git", "cat-file", "-e", commit], cwd=project.path,
                              env=project.env).returncode != 0
    # the store keeps working: ids, undo and new checkpoints
    project.ok("undo", "4", "--yes")
    assert (project.path / "notes.txt").read_text() == "version 3\n"
    project.write("notes.txt", "later\n")
    assert project.ok("snap", "--session", "s").startswith("#7 ")


def test_older_than_days_and_whole_sessions(project: Workdir) -> None:
    snaps(project, 2, session="old")
    snaps(project, 2, session="new")
    for d in listing(project):
        if d["session"] == "old":
            note = {k: v for k, v in d.items() if k != "commit"}
            note["created"] = "2020-01-01T00:00:00Z"
            project.git("notes", "--ref=rewind", "add", "-f", "-m", json.dumps(note), d["commit"])
    out = project.ok("gc", "--older-than", "30")
    assert "dropped 2 checkpoints (#1..#2)" in out and "dropped session old" in out
    assert project.git("for-each-ref", "refs/rewind/old") == ""
    assert [d["session"] for d in listing(project)] == ["new", "new"]
    project.fsck()


def test_defaults_come_from_config(project: Workdir) -> None:
    snaps(project, 4)
    project.write(".git-rewind.toml", "gc_keep = 1\n")
    assert "dropped 3 checkpoints" in project.ok("gc")
    assert "nothing to drop (1 checkpoints kept)" in project.ok("gc")


def test_dropping_everything_removes_the_notes_ref(project: Workdir) -> None:
    snaps(project, 2)
    project.ok("gc", "--keep", "0")
    assert project.git("for-each-ref", "refs/rewind/", "refs/notes/rewind") == ""
    assert project.ok("list").strip() == "no checkpoints"
    project.write("notes.txt", "fresh\n")
    assert project.ok("snap").startswith("#3 ")  # sequence ids are never reused


def test_a_packed_refs_lock_left_by_a_killed_git_does_not_stop_gc(project: Workdir) -> None:
    """gc killed while git deleted a packed session ref leaves `packed-refs.lock` behind (no process owns
    it; git tells the person to remove it by hand): the next gc clears the stale lock and completes."""
    import os
    import time

    snaps(project, 2, session="old")
    snaps(project, 2, session="new")
    project.git("pack-refs", "--all")
    lock = project.path / ".git" / "packed-refs.lock"
    lock.write_text("")
    old = time.time() - 60
    os.utime(lock, (old, old))
    out = project.ok("gc", "--keep", "2")
    assert "dropped session old" in out and not lock.exists()
    assert project.git("for-each-ref", "refs/rewind/old") == ""
    project.fsck()


def test_checkpoints_go_on_after_gc_drops_everything_and_git_prunes_it(project: Workdir) -> None:
    """`gc --keep 0` then the `git gc --prune=now` it suggests: the private index and the last scan named
    objects only those checkpoints held (an untracked file's blob), git prunes them (it does not see our
    index), and the next checkpoint rebuilds its cache instead of failing on a missing object."""
    project.write("untracked.txt", "only a checkpoint holds this\n")
    snaps(project, 2)
    project.ok("gc", "--keep", "0")
    project.git("reflog", "expire", "--expire=now", "--all")
    project.git("gc", "-q", "--prune=now")
    project.write("notes.txt", "after the prune\n")
    assert project.ok("snap", "--session", "s").startswith("#3 ")
    assert project.tree_of("refs/rewind/s") == project.add_all_tree()
    project.fsck()
