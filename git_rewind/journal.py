"""The restore journal: temporary file names a restore is about to create.

A restore writes each file under a temporary name and renames it into place. If it is killed
in between, the names listed here are removed by the next command, before it scans.
"""

from __future__ import annotations

import os

from .repo import Repo

JOURNAL = "restore.journal"


def temp_name(rel: str) -> str:
    """The temporary sibling REL is written to before the rename."""
    head, _, tail = rel.rpartition("/")
    return f"{head}/.{tail}.rewind-tmp" if head else f".{tail}.rewind-tmp"


def begin(repo: Repo, paths: list[str]) -> None:
    """Record the temporary names for PATHS before any is created."""
    with open(os.path.join(repo.rewind_dir, JOURNAL), "wb") as fh:
        fh.write(b"".join(os.fsencode(temp_name(p)) + b"\0" for p in paths))


def end(repo: Repo) -> None:
    """The restore finished: no temporary file is left."""
    os.unlink(os.path.join(repo.rewind_dir, JOURNAL))


def sweep(repo: Repo) -> None:
    """Remove temporary files a killed restore left behind. Hold the work-tree lock."""
    path = os.path.join(repo.rewind_dir, JOURNAL)
    try:
        with open(path, "rb") as fh:
            names = [n for n in fh.read().split(b"\0") if n]
    except FileNotFoundError:
        return
    root = os.fsencode(repo.root)
    for name in names:
        full = os.path.join(root, name)
        if os.path.islink(full) or os.path.isfile(full):
            os.unlink(full)
    os.unlink(path)
