"""`git rewind gc`: old checkpoints go, so that `git gc` can prune them; kept ones stay intact."""

from __future__ import annotations

import json
import os
import subprocess
import sys

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
# max_store_size --------------------------------------------------------------------------------------------


def _big_snaps(w: Workdir, versions: list[int], size: int = 100 * 1024) -> None:
    """A checkpoint of session s per version of big.bin: SIZE random bytes each (incompressible)."""
    for i in versions:
        (w.path / "big.bin").write_bytes(os.urandom(size))
        w.ok("snap", "--session", "s", "-m", f"v{i}", env={"GIT_REWIND_MAX_STORE_SIZE": "0"})


def _store_bytes(w: Workdir) -> int:
    return int(json.loads(w.ok("status", "--json"))["store"]["bytes"])


def test_max_size_drops_the_oldest_until_the_store_fits(project: Workdir) -> None:
    _big_snaps(project, [1, 2, 3, 4, 5])
    assert _store_bytes(project) > 500 * 1024
    out = project.ok("gc", "--max-size", "250K", "--dry-run")
    assert "would drop 3 checkpoints (#1..#3) for max_store_size 250.0 KiB, kept 2" in out
    assert len(listing(project)) == 5
    out = project.ok("gc", "--max-size", "250K")
    assert "dropped 3 checkpoints (#1..#3) for max_store_size 250.0 KiB, kept 2" in out
    assert [d["seq"] for d in listing(project)] == [5, 4]
    assert 200 * 1024 < _store_bytes(project) <= 250 * 1024
    assert "nothing to drop (2 checkpoints kept)" in project.ok("gc", "--max-size", "250K")
    project.fsck()


def test_the_cap_comes_from_config_and_zero_is_none(project: Workdir) -> None:
    _big_snaps(project, [1, 2, 3])
    project.write(".git-rewind.toml", 'max_store_size = "150K"\n')
    assert "(no max_store_size)" in project.ok("gc", "--max-size", "0")
    assert len(listing(project)) == 3
    assert "dropped 2 checkpoints (#1..#2) for max_store_size 150.0 KiB" in project.ok("gc")


def test_the_cap_never_drops_what_redo_needs_and_says_when_it_cannot_be_met(project: Workdir) -> None:
    _big_snaps(project, [1, 2, 3])
    project.ok("undo", "1", "--yes")  # #4: the safety checkpoint redo goes back to, holding v3
    (project.path / "big.bin").unlink()
    project.write("notes.txt", "small\n")
    project.ok("snap", "--session", "s", "-m", "small")  # #5
    project.write("notes.txt", "smaller\n")
    project.ok("snap", "--session", "s", "-m", "smaller")  # #6
    out = project.ok("gc", "--max-size", "50K")
    assert "dropped 4 checkpoints (#1..#3, #5) for max_store_size 50.0 KiB, kept 2" in out
    assert "the store still takes" in out and "over max_store_size 50.0 KiB" in out
    assert [d["seq"] for d in listing(project)] == [6, 4]
    project.ok("redo", "--yes")
    assert len((project.path / "big.bin").read_bytes()) == 100 * 1024  # v3 is back
    project.fsck()


def test_the_cap_leaves_checkpoints_held_by_other_refs_alone(project: Workdir) -> None:
    """A checkpoint whose commit lives outside refs/rewind/ (as a fetched one will) keeps its note and its ref."""
    _big_snaps(project, [1, 2, 3])
    first = listing(project)[-1]
    note = {k: v for k, v in first.items() if k != "commit"}
    elsewhere = project.git("commit-tree", "-m", "#0 fetched", project.tree_of(first["commit"])).strip()
    project.git("update-ref", "refs/rewind-fetched/origin/s", elsewhere)
    project.git("notes", "--ref=rewind", "add", "-m", json.dumps({**note, "seq": 0}), elsewhere)
    project.ok("gc", "--max-size", "150K")
    kept = {d["seq"]: d["commit"] for d in listing(project)}
    assert 1 not in kept and kept[0] == elsewhere
    assert project.git("rev-list", "refs/rewind/s").split() == [kept[3]]
    assert project.git("rev-parse", "refs/rewind-fetched/origin/s").strip() == elsewhere


# tagged checkpoints ---------------------------------------------------------------------------------------


def test_count_and_age_keep_a_tagged_checkpoint_unless_include_tagged(project: Workdir) -> None:
    """A tag given on purpose marks a checkpoint to come back to: --keep and --older-than leave it; the tags
    git-rewind gives by itself (every prompt's `prompt`) do not keep anything; --include-tagged drops it."""
    snaps(project, 5)
    project.ok("tag", "2", "good-state")
    project.ok("tag", "3", "prompt")  # as the hooks tag every prompt: not a reason to keep it
    dry = project.ok("gc", "--keep", "1", "--dry-run")
    assert "would drop 3 checkpoints (#1, #3..#4), kept 2" in dry
    assert "kept 1 tagged checkpoint as old as that (#2 good-state); --include-tagged drops them" in dry
    out = project.ok("gc", "--keep", "1")
    assert "dropped 3 checkpoints (#1, #3..#4), kept 2" in out
    assert [(d["seq"], d["tags"]) for d in listing(project)] == [(5, []), (2, ["good-state"])]
    assert project.git("log", "--format=%s", "refs/rewind/s").splitlines() == ["#5 v4", "#2 v1"]
    project.ok("undo", "2", "--yes")  # the kept one still restores
    assert (project.path / "notes.txt").read_text() == "version 1\n"
    out = project.ok("gc", "--keep", "0", "--older-than", "0", "--include-tagged")
    assert "#2" in out and "good-state" not in out
    assert 2 not in [d["seq"] for d in listing(project)]
    project.fsck()


def test_the_cap_drops_tagged_checkpoints_last_and_says_so(project: Workdir) -> None:
    _big_snaps(project, [1, 2, 3, 4, 5])
    project.ok("tag", "1", "release")
    out = project.ok("gc", "--max-size", "250K", "--dry-run")
    assert "would drop 3 checkpoints (#2..#4) for max_store_size 250.0 KiB, kept 2" in out
    assert "tagged" not in out
    out = project.ok("gc", "--max-size", "150K", "--dry-run")  # only #5 fits: #1 goes, after every other
    assert "would drop 4 checkpoints (#1..#4)" in out
    assert "they would include 1 tagged (#1 release): no untagged checkpoint was left to drop" in out
    out = project.ok("gc", "--max-size", "250K")
    assert "dropped 3 checkpoints (#2..#4) for max_store_size 250.0 KiB, kept 2" in out
    assert [(d["seq"], d["tags"]) for d in listing(project)] == [(5, []), (1, ["release"])]
    assert json.loads(project.ok("status", "--json"))["store"]["tagged_dropped"] == []
    out = project.ok("gc", "--max-size", "150K")
    assert "they included 1 tagged (#1 release)" in out and [d["seq"] for d in listing(project)] == [5]
    project.fsck()


def test_status_names_the_tagged_checkpoints_a_background_enforcement_dropped(project: Workdir) -> None:
    """The enforcement hooks start in the background prints to nobody: `status` says it took tagged ones."""
    _big_snaps(project, [1, 2, 3])
    project.ok("tag", "1", "release")
    run = subprocess.run([sys.executable, "-m", "git_rewind.ops.gc"], cwd=project.path,
                         env={**project.env, "GIT_REWIND_MAX_STORE_SIZE": "150K"}, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert [d["seq"] for d in listing(project)] == [3]
    store = json.loads(project.ok("status", "--json", env={"GIT_REWIND_MAX_STORE_SIZE": "150K"}))["store"]
    assert store["tagged_dropped"] == [1]
    assert "dropped tagged checkpoints (#1)" in store["warning"]
