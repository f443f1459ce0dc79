"""The tree a checkpoint must hold, asked of git itself: `git add -A` + `write-tree` in a copy of the user's
index, as git-rewind's private index is seeded from it (tests/test_differential.py, tests/test_watcher.py)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Mapping

from helpers.workdir import Workdir


def oracle_tree(w: Workdir, limit: int) -> str:
    """`git add -A` + `write-tree` in a copy of the user's index, as a checkpoint's private index means it:
    the bits that make git look away cleared (a skip-worktree file that is absent keeps its bit: a sparse
    checkout's), and untracked files larger than LIMIT left out (max_file_size)."""
    index = w.path / ".git" / "index"
    scratch = w.path / ".git" / "oracle-index"
    if index.exists():
        shutil.copy2(index, scratch)  # its mtime too: git re-hashes entries as new as the index file
    env = {**w.env, "GIT_INDEX_FILE": str(scratch)}

    def git(*args: str, input: bytes | None = None) -> bytes:
        return subprocess.run(["git", *args], cwd=w.path, env=env, input=input, capture_output=True,
                              check=True).stdout

    if index.exists():
        listed = git("ls-files", "-v", "-z").split(b"\0")
        assumed = [r[2:] for r in listed if r[:1].islower()]
        skipped = [r[2:] for r in listed if r[:1].upper() == b"S" and os.path.lexists(w.path / os.fsdecode(r[2:]))]
        for flag, paths in (("--no-assume-unchanged", assumed), ("--no-skip-worktree", skipped)):
            if paths:
                git("update-index", flag, "-z", "--stdin", input=b"".join(p + b"\0" for p in paths))
    spec = [b"."]
    for path in git("ls-files", "-z", "-o", "--exclude-standard").split(b"\0"):
        if path:
            st = os.lstat(w.path / os.fsdecode(path))
            if stat.S_ISREG(st.st_mode) and st.st_size > limit:
                spec.append(b":(exclude,literal,top)" + path)
    git("add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul", input=b"\0".join(spec))
    tree = git("write-tree").decode().strip()
    scratch.unlink()
    return tree


def agree(w: Workdir, ours: str, oracle: str, kept: Mapping[str, str] | None = None) -> bool:
    """The trees are equal, or differ only where git's own answer depends on timing.

    After an attribute change, a file that did not change keeps its old blob while its index entry is
    stat-clean, and is cleaned afresh when the entry is "racily clean" (as new as the index file): the
    private index and the oracle's copy of the user's index have different mtimes, so either may hold
    either blob. Such a path is accepted when one tree has the old blob (the user's index blob, or KEPT's:
    the blob an earlier checkpoint holds for a file unchanged on disk since) and the other the blob git
    makes of the file now.
    """
    if ours == oracle:
        return True
    out = w.git("diff-tree", "-r", "-z", "--no-renames", ours, oracle).split("\0")
    for meta, path in zip(out[0:-1:2], out[1::2], strict=True):
        _old_mode, _new_mode, mine, theirs, status = meta.lstrip(":").split()
        staged = w.git("ls-files", "-s", "--", path).split()
        old = {staged[1]} if staged else set()
        if kept and path in kept:
            old.add(kept[path])
        if status != "M" or not any({mine, theirs} == {blob, file_hash(w, path)} for blob in old):
            return False
    return True


def file_hash(w: Workdir, path: str) -> str:
    """The blob git makes of PATH as it is on disk (its filters and eol conversion applied)."""
    full = w.path / path
    if full.is_symlink():
        return subprocess.run(["git", "hash-object", "--stdin"], input=os.fsencode(os.readlink(full)), cwd=w.path,
                              env=w.env, capture_output=True, check=True).stdout.decode().strip()
    return w.git("hash-object", "--path", path, "--", path).strip()
