"""`git rewind gc`: old checkpoints go, so that `git gc` can prune them; kept ones stay intact."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers.workdir import Workdir


def _snaps(w: Workdir, n: int, session: str = "s") -> None:
    for i in range(n):
        w.write("notes.txt", f"version {i}\n")
        w.ok("snap", "--session", session, "-m", f"v{i}")


def _listing(w: Workdir) -> list[dict]:
    return json.loads(w.ok("list", "--json", "-n", "0"))


def test_keep_newest_drops_the_rest_and_git_gc_prunes_them(project: Workdir) -> None:
    _snaps(project, 5)
    before = {d["seq"]: (project.tree_of(d["commit"]), d) for d in _listing(project)}
    dropped_commits = [d["commit"] for d in _listing(project) if d["seq"] <= 3]
    assert "would drop 3 checkpoints (#1..#3)" in project.ok("gc", "--keep", "2", "--dry-run")
    assert len(_listing(project)) == 5
    out = project.ok("gc", "--keep", "2")
    assert "dropped 3 checkpoints (#1..#3), kept 2" in out
    after = _listing(project)
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
    _snaps(project, 2, session="old")
    _snaps(project, 2, session="new")
    for d in _listing(project):
        if d["session"] == "old":
            note = {k: v for k, v in d.items() if k != "commit"}
            note["created"] = "2020-01-01T00:00:00Z"
            project.git("notes", "--ref=rewind", "add", "-f", "-m", json.dumps(note), d["commit"])
    out = project.ok("gc", "--older-than", "30")
    assert "dropped 2 checkpoints (#1..#2)" in out and "dropped session old" in out
    assert project.git("for-each-ref", "refs/rewind/old") == ""
    assert [d["session"] for d in _listing(project)] == ["new", "new"]
    project.fsck()


def test_defaults_come_from_config(project: Workdir) -> None:
    _snaps(project, 4)
    project.write(".git-rewind.toml", "gc_keep = 1\n")
    assert "dropped 3 checkpoints" in project.ok("gc")
    assert "nothing to drop (1 checkpoints kept)" in project.ok("gc")


def test_dropping_everything_removes_the_notes_ref(project: Workdir) -> None:
    _snaps(project, 2)
    project.ok("gc", "--keep", "0")
    assert project.git("for-each-ref", "refs/rewind/", "refs/notes/rewind") == ""
    assert project.ok("list").strip() == "no checkpoints"
    project.write("notes.txt", "fresh\n")
    assert project.ok("snap").startswith("#3 ")  # sequence ids are never reused


def test_gc_keeps_what_redo_needs(project: Workdir) -> None:
    """`gc --older-than 0` (or --keep 0) must not drop the safety checkpoint of the newest undo: redo
    restores it (issue 12, item 13)."""
    _snaps(project, 3)
    project.write("notes.txt", "work the undo replaces\n")
    project.ok("undo", "1", "--yes")  # safety checkpoint #4 holds that work
    out = project.ok("gc", "--older-than", "0")
    assert "dropped 3 checkpoints (#1..#3), kept 1" in out
    assert [(d["seq"], d["trigger"]) for d in _listing(project)] == [(4, "pre-rewind")]
    assert "nothing to drop (1 checkpoints kept)" in project.ok("gc", "--keep", "0")
    project.ok("redo", "--yes")
    assert (project.path / "notes.txt").read_text() == "work the undo replaces\n"
    project.fsck()


def test_a_sha256_repository_works_end_to_end(tmp_path: Path, env: dict[str, str]) -> None:
    """libgit2 cannot open SHA-256 repositories: nothing may depend on it. Named-path checkpoints hash in
    the repository's format (an unchanged file says so), undo, redo and a gc rewrite all work (issue 12,
    item 7)."""
    path = tmp_path / "sha256"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", "-b", "main", str(path)], env=env, check=True)
    w = Workdir(path, env)
    w.write("a.txt", "one\n")
    w.commit_all("init")
    _snaps(w, 3)
    assert w.ok("snap", "--session", "s", "--path", "notes.txt").startswith("unchanged since #3")
    assert len(w.git("rev-parse", "refs/rewind/s").strip()) == 64
    assert w.tree_of("refs/rewind/s") == w.add_all_tree()
    assert "restored #1" in w.ok("undo", "1", "--yes")
    assert (path / "notes.txt").read_text() == "version 0\n"
    w.ok("redo", "--yes")
    assert (path / "notes.txt").read_text() == "version 2\n"
    assert "dropped 3 checkpoints (#1..#3), kept 2" in w.ok("gc", "--keep", "2")  # a chain rewrite
    assert [(d["seq"], d["trigger"]) for d in _listing(w)] == [(5, "pre-redo"), (4, "pre-rewind")]
    assert "notes.txt" in w.ok("show", "4")  # its first checkpoint now: against the empty tree of sha256
    w.fsck()


@pytest.mark.parametrize("setup", ["split-index", "sparse-index"])
def test_split_and_sparse_index_repositories_work_end_to_end(tmp_path: Path, env: dict[str, str], setup: str) -> None:
    """Indexes libgit2 cannot read: list, undo, redo and gc go through git's own CLI (issue 12, item 7)."""
    path = tmp_path / setup
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], env=env, check=True)
    w = Workdir(path, env)
    if setup == "split-index":
        w.git("config", "core.splitIndex", "true")
    w.write("d/a.txt", "a\n")
    w.write("e/b.txt", "b\n")
    w.commit_all("init")
    if setup == "split-index":
        assert [p for p in (path / ".git").iterdir() if p.name.startswith("sharedindex.")]
    else:
        w.git("sparse-checkout", "set", "--sparse-index", "d")
        assert not (path / "e").exists() and w.git("config", "index.sparse").strip() == "true"
    w.ok("snap", "-m", "one")
    w.write("d/a.txt", "changed\n")
    assert "restored #1" in w.ok("undo", "1", "--yes")
    assert (path / "d" / "a.txt").read_text() == "a\n"
    w.ok("redo", "--yes")
    assert (path / "d" / "a.txt").read_text() == "changed\n"
    assert "#1" in w.ok("list") and "dropped" in w.ok("gc", "--keep", "1")
    assert w.git("ls-tree", "-r", "--name-only", "refs/rewind/manual").split() == ["d/a.txt", "e/b.txt"]
    w.fsck()
