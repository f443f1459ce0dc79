"""An index file of git-rewind's own for one job, and a tree made from another with some entries changed.

git's plumbing works through an index; the user's (`.git/index`) is never one of them. Every throwaway
index goes through `scratch_index`: named once (layout.SCRATCH_INDEX, by process and job), a lock a killed
git left on it cleared, the file gone afterwards whatever happened.
"""

from __future__ import annotations

import itertools
import os
from contextlib import contextmanager

from . import layout
from .note import Oid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from .repo import Repo

_jobs = itertools.count()


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


@contextmanager
def scratch_index(repo: Repo, path: str | None = None) -> Iterator[dict[str, str]]:
    """The environment that points git at an empty index file of our own (PATH, or a fresh name in this work
    tree's folder); the file is removed when the block ends."""
    from .repo import clear_stale_lock

    path = path or os.path.join(repo.rewind_dir, f"{layout.SCRATCH_INDEX}{os.getpid()}-{next(_jobs)}")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    clear_stale_lock(path + ".lock")
    _unlink(path)
    try:
        yield {"GIT_INDEX_FILE": path}
    finally:
        _unlink(path)


def edited_tree(repo: Repo, tree: Oid, entries: dict[str, tuple[str, str] | None]) -> Oid:
    """TREE with ENTRIES set ((octal mode, object id)) or removed (None), through a scratch index."""
    if not entries:
        return tree
    zero = "0" * len(tree)
    lines = b"".join(f"{mode} {oid}\t".encode() + os.fsencode(path) + b"\0"
                     for path, (mode, oid) in ((p, e if e is not None else ("0", zero)) for p, e in entries.items()))
    with scratch_index(repo) as env:
        repo.git(["read-tree", tree], env=env)
        repo.git(["update-index", "-z", "--index-info"], env=env, input=lines)
        return Oid(repo.git(["write-tree"], env=env).decode().strip())
