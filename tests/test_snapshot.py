"""Building checkpoint trees: exactly what `git add -A` would record, with nothing lost."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from helpers.workdir import Workdir


def _note(w: Workdir, ref: str = "refs/rewind/manual") -> dict[str, Any]:
    note: dict[str, Any] = json.loads(w.git("notes", "--ref=rewind", "show", ref))
    return note


def test_first_snapshot_is_seeded_from_user_index_and_equals_add_all(project: Workdir) -> None:
    assert not (project.path / ".git" / "rewind" / "index").exists()
    project.ok("snap")
    assert (project.path / ".git" / "rewind" / "index").exists()
    assert project.tree_of("refs/rewind/manual") == project.add_all_tree()


def test_staged_but_modified_file_records_the_working_copy(project: Workdir) -> None:
    project.write("src/app.py", "staged\n")
    project.git("add", "src/app.py")
    project.write("src/app.py", "working copy\n")
    before = project.user_state()
    project.ok("snap")
    assert project.git("show", "refs/rewind/manual:src/app.py") == "working copy\n"
    assert project.user_state() == before
    assert project.git("diff", "--cached", "--name-only").split() == ["src/app.py"]


def test_binary_empty_exec_symlink_and_non_utf8_names_round_trip(project: Workdir) -> None:
    project.write("empty", b"")
    project.write("blob.bin", bytes(range(256)) * 10)
    project.write("tool.sh", "#!/bin/sh\n", mode=0o755)
    os.symlink("src/app.py", project.path / "link")
    os.symlink("does/not/exist", project.path / "dangling")
    weird = os.fsencode(project.path) + b"/caf\xe9 \n name"
    with open(weird, "wb") as fh:
        fh.write(b"latin-1 name\n")
    project.ok("snap")
    assert project.tree_of("refs/rewind/manual") == project.add_all_tree()
    listing = project.git("ls-tree", "-r", "-z", "refs/rewind/manual").split("\0")
    modes = {entry.split("\t", 1)[1]: entry.split()[0] for entry in listing if entry}
    assert modes["tool.sh"] == "100755" and modes["link"] == "120000" and modes["dangling"] == "120000"
    assert os.fsdecode(b"caf\xe9 \n name") in modes
    state = project.state()
    project.write("blob.bin", b"changed")
    os.unlink(project.path / "link")
    os.unlink(weird)
    (project.path / "tool.sh").chmod(0o644)
    project.ok("undo", "1", "--yes")
    assert project.state() == state


def test_large_files_are_left_out_and_listed(project: Workdir) -> None:
    project.write(".git-rewind.toml", 'max_file_size = "1K"\n')
    project.write("big.bin", b"x" * 5000)
    project.write("small.txt", "small\n")
    run = project.rewind("snap")
    assert run.returncode == 0
    assert "left out big.bin" in run.stderr
    files = project.git("ls-tree", "-r", "--name-only", "refs/rewind/manual").split()
    assert "big.bin" not in files and "small.txt" in files
    skipped = _note(project)["skipped"]
    assert skipped == [{"path": "big.bin", "reason": "larger than max_file_size", "size": 5000}]
    # later snapshots keep leaving it out without failing
    project.write("small.txt", "changed\n")
    project.ok("snap")
    assert "big.bin" not in project.git("ls-tree", "-r", "--name-only", "refs/rewind/manual").split()
    # a restore never deletes the file it could not capture
    project.ok("undo", "1", "--yes")
    assert (project.path / "big.bin").read_bytes() == b"x" * 5000
    # once it is small again it is captured
    project.write("big.bin", "tiny\n")
    project.ok("snap")
    assert project.git("show", "refs/rewind/manual:big.bin") == "tiny\n"


def test_large_file_on_the_path_fast_path(project: Workdir) -> None:
    project.ok("snap")
    project.write(".git-rewind.toml", 'max_file_size = 100\n')
    project.write("notes.txt", "y" * 500)
    run = project.rewind("snap", "--path", "notes.txt")
    assert run.returncode == 0 and "left out notes.txt" in run.stderr
    assert "notes.txt" not in project.git("ls-tree", "--name-only", "refs/rewind/manual").split()


def _nested(w: Workdir, rel: str, commit: bool) -> None:
    path = w.path / rel
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], env=w.env, check=True)
    (path / "inner.txt").write_text("inner\n")
    if commit:
        subprocess.run(["git", "add", "-A"], cwd=path, env=w.env, check=True)
        subprocess.run(["git", "commit", "-qm", "inner"], cwd=path, env=w.env, check=True)


def test_nested_repositories_are_gitlinks_and_never_touched(project: Workdir) -> None:
    _nested(project, "vendor/withcommit", commit=True)
    _nested(project, "scratch/empty", commit=False)
    inner_git = {p: sorted(os.listdir(project.path / p / ".git")) for p in ("vendor/withcommit", "scratch/empty")}
    run = project.rewind("snap")
    assert run.returncode == 0, run.stderr
    listing = project.git("ls-tree", "-r", "refs/rewind/manual")
    assert "160000 commit" in listing and "vendor/withcommit" in listing
    assert "scratch/empty" not in listing
    assert {"path": "scratch/empty", "reason": "nested repository with no commit"} in _note(project)["skipped"]
    # the next snapshot still works and still leaves it out
    project.write("notes.txt", "v2\n")
    assert project.rewind("snap").returncode == 0
    # a restore to before they existed leaves both repositories alone
    project.ok("undo", "1", "--yes")
    for p, names in inner_git.items():
        assert sorted(os.listdir(project.path / p / ".git")) == names
        assert (project.path / p / "inner.txt").read_text() == "inner\n"


def test_nested_repository_gains_a_commit(project: Workdir) -> None:
    _nested(project, "sub", commit=False)
    project.ok("snap")
    subprocess.run(["git", "add", "-A"], cwd=project.path / "sub", env=project.env, check=True)
    subprocess.run(["git", "commit", "-qm", "c"], cwd=project.path / "sub", env=project.env, check=True)
    project.ok("snap")
    assert "160000 commit" in project.git("ls-tree", "refs/rewind/manual", "sub")
    assert _note(project)["skipped"] == []


def test_touched_but_unchanged_files_do_not_change_the_tree(project: Workdir) -> None:
    project.ok("snap")
    for path in (project.path / "src" / "app.py", project.path / "README.md"):
        os.utime(path, (1, 1))
    assert project.ok("snap").strip() == "unchanged since #1"


def test_killed_git_index_lock_is_cleared(project: Workdir) -> None:
    project.ok("snap")
    (project.path / ".git" / "rewind" / "index.lock").write_text("")
    project.write("notes.txt", "after a crash\n")
    assert project.ok("snap").startswith("#2 ")


def test_a_sparse_checkouts_absent_files_are_not_recorded_as_deleted(project: Workdir) -> None:
    project.write("docs/guide.md", "guide\n")
    project.write("src/lib/util.py", "util\n")
    project.commit_all("more")
    project.git("sparse-checkout", "set", "--no-cone", "/*", "!/docs/")
    assert not (project.path / "docs").exists()
    project.ok("snap", "-m", "sparse")
    files = project.git("ls-tree", "-r", "--name-only", "refs/rewind/manual").split()
    assert "docs/guide.md" in files and "src/lib/util.py" in files
    assert project.tree_of("refs/rewind/manual") == project.add_all_tree()


def test_files_vanishing_while_git_adds_them_do_not_fail_the_checkpoint(project: Workdir) -> None:
    """An agent deleting and rewriting files while a hook scans: git add stops with "unable to stat 'x': No
    such file or directory" when a file goes between its stat and its read; the scan looks again instead of
    failing the checkpoint (seen as a test_concurrency flake in CI). Nor does it lose what stood still: a
    file changed before each checkpoint is in it (`git add --ignore-errors` dies on that same lstat without
    writing the index, which the scan must not then take as it was)."""
    import threading

    names = [f"churn/f{i:04}.txt" for i in range(2000)]
    for name in names:
        project.write(name, "0\n")
    stop = threading.Event()

    def churn() -> None:
        round_ = 0
        while not stop.is_set():
            round_ += 1
            for name in names[round_ % 7::7]:
                path = project.path / name
                path.unlink(missing_ok=True)
                path.write_text(f"{round_}\n")

    def snap(i: int) -> tuple[str, str]:
        project.write("src/app.py", f"print({i})\n")
        run = project.rewind("snap", "-m", f"s{i}")
        held = project.git("show", "refs/rewind/manual:src/app.py", check=False)
        return run.stderr if run.returncode else "", held

    worker = threading.Thread(target=churn)
    worker.start()
    try:
        runs = [snap(i) for i in range(25)]
    finally:
        stop.set()
        worker.join()
    failures = [err for err, _held in runs if err]
    assert not failures, failures[0]
    assert [held for _err, held in runs] == [f"print({i})\n" for i in range(25)]
    project.ok("snap", "-m", "still")
    assert project.tree_of("refs/rewind/manual") == project.add_all_tree()


_SCAN_AND_DIFF = """
import json
from git_rewind.store import snapshot, store
from git_rewind.base.repo import Repo
repo = Repo.discover()
tip = store.session_tip(repo, "manual")
with repo.worktree_lock():
    scan = snapshot.scan(repo, 10**9, base_tree=tip.tree)
print(json.dumps({"tree": scan.tree, "changes": scan.changes,
                  "diff": snapshot.changed_paths(repo, tip.tree, scan.tree)}))
"""


def test_a_scan_through_the_daemon_equals_git_and_lists_changes_as_diff_tree_does(repo: Workdir) -> None:
    """Seeded random edits (files, links, directories turned files and back, exec bits, deletions) with the
    daemon answering: each scan's tree is git's own `add -A`, and the changes it lists without running
    diff-tree are exactly what `diff-tree -r` says; the daemon really answered with paths."""
    import random
    import shutil
    import sys

    repo.write("a/b/x", "1\n")
    repo.write("a/y", "2\n")
    repo.write("c", "f\n")
    os.symlink("c", repo.path / "lnk")
    repo.ok("snap", "-m", "start")
    repo.ok("daemon", "start")
    try:
        rng = random.Random(7)
        for step in range(30):
            rel = rng.choice(["a/y", "a/b/x", "c", "lnk", "n1", "d/e/f", "a/z", "a", "a/b"])
            path = repo.path / rel
            op = rng.choice(["write", "write", "remove", "chmod", "link", "dir"])
            if op in ("write", "link", "dir", "remove") and (path.is_symlink() or path.is_file()):
                path.unlink()
            elif op in ("write", "link", "dir", "remove") and path.is_dir():
                shutil.rmtree(path)
            if op in ("write", "link", "dir"):
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                except (FileExistsError, NotADirectoryError):
                    continue  # a parent is a file now
            if op == "write":
                path.write_text(f"{step}\n")
            elif op == "link":
                os.symlink("c", path)
            elif op == "dir":
                path.mkdir()
                (path / "in").write_text("x\n")
            elif op == "chmod" and path.is_file() and not path.is_symlink():
                path.chmod(path.stat().st_mode ^ 0o111)
            run = subprocess.run([sys.executable, "-c", _SCAN_AND_DIFF], cwd=repo.path, env=repo.env,
                                 capture_output=True, text=True, check=True)
            seen = json.loads(run.stdout)
            assert seen["changes"] == seen["diff"], f"step {step}: {op} {rel}"
            assert seen["tree"] == repo.add_all_tree(), f"step {step}: {op} {rel}"
            repo.ok("snap", "-m", f"step {step}", "--allow-empty")
        answered = json.loads(repo.ok("daemon", "status", "--json"))["answered"]
        assert answered["changes"] >= 50, answered  # two scans a step, all but the first answered with paths
    finally:
        repo.ok("daemon", "stop")


def test_a_tracked_file_a_rule_ignores_comes_back_into_checkpoints(project: Workdir) -> None:
    """A file the person tracks though `*.log` ignores it, deleted (a checkpoint drops it from the private
    index) and written again: git add -A in a copy of the person's index tracks it, so the checkpoint holds
    it too; an untracked ignored file beside it stays out."""
    project.write("keep.log", "tracked on purpose\n")
    project.git("add", "-f", "keep.log")
    project.git("commit", "-q", "-m", "track a log")
    project.ok("snap", "-m", "with it")
    (project.path / "keep.log").unlink()
    project.ok("snap", "-m", "without it")
    assert "keep.log" not in project.git("ls-tree", "--name-only", "refs/rewind/manual")
    project.write("keep.log", "back again\n")
    project.write("other.log", "ignored\n")
    project.ok("snap", "-m", "back")
    assert project.git("show", "refs/rewind/manual:keep.log") == "back again\n"
    assert "other.log" not in project.git("ls-tree", "--name-only", "refs/rewind/manual")
    assert project.tree_of("refs/rewind/manual") == project.add_all_tree()


def test_a_tracked_file_that_a_rule_ignores_is_captured_when_it_is_made_again(project: Workdir) -> None:
    """`build/` tracked, then ignored; `rm -r build`, then the build writes build/out.o again: git status shows it
    modified (git tracks it), so a checkpoint holds it, as `git add -A` on a copy of the user's index does."""
    project.write("build/out.o", "one\n")
    project.commit_all("track build output")
    project.ok("snap")
    project.write(".gitignore", "build/\n")
    project.ok("snap")
    (project.path / "build" / "out.o").unlink()
    project.ok("snap")
    project.write("build/out.o", "two\n")
    assert project.git("status", "--porcelain", "--", "build").strip() == "M build/out.o"
    project.ok("snap")
    assert project.git("show", "refs/rewind/manual:build/out.o", check=False) == "two\n"
    assert project.tree_of("refs/rewind/manual") == project.add_all_tree()


def test_a_captured_directory_that_becomes_a_repository_is_a_gitlink(project: Workdir) -> None:
    project.write("vendor/lib/README", "a directory first\n")
    project.ok("snap")
    nested = Workdir(project.path / "vendor" / "lib", project.env)
    nested.git("init", "-q")
    nested.commit_all("its own history")
    project.ok("snap")
    assert project.git("ls-tree", "refs/rewind/manual", "vendor/lib").split()[:2] == ["160000", "commit"]
    assert project.tree_of("refs/rewind/manual") == project.add_all_tree()


def test_a_nested_repository_whose_git_directory_goes_is_its_files_again(project: Workdir) -> None:
    nested = Workdir(project.path / "vendor" / "lib", project.env)
    nested.write("README", "a repository first\n")
    nested.git("init", "-q")
    nested.commit_all("its own history")
    project.ok("snap")
    subprocess.run(["rm", "-rf", str(nested.path / ".git")], check=True)
    project.ok("snap")
    assert project.git("show", "refs/rewind/manual:vendor/lib/README", check=False) == "a repository first\n"
    assert project.tree_of("refs/rewind/manual") == project.add_all_tree()
