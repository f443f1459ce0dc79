"""The restore journal: temporary file names a restore is about to create.

A restore writes each file under a temporary name and renames it into place. If it is killed
in between, the names listed here are removed by the next command, before it scans. Each name
carries a token new to the restore (its pid and random bits) and is created exclusively, so it
never names, and a sweep never removes, a file of the user's (such as an ignored
`.app.py.rewind-tmp`).
"""

from __future__ import annotations

import os

from ..base import layout
from ..base.repo import Repo

JOURNAL = layout.JOURNAL


SUFFIX = ".rewind-tmp"
_KEEP = 48  # characters of the file's name kept in its temporary name: 4 bytes each stays under NAME_MAX


def new_token() -> str:
    """What makes one restore's temporary names its own: its pid and 32 random bits."""
    return f"{os.getpid()}-{os.urandom(4).hex()}"


def temp_name(rel: str, token: str) -> str:
    """The temporary sibling REL is written to before the rename (in its directory, so the rename is atomic)."""
    head, _, tail = rel.rpartition("/")
    name = f".{tail[:_KEEP]}.{token}{SUFFIX}"
    return f"{head}/{name}" if head else name


def begin(repo: Repo, paths: list[str]) -> dict[str, str]:
    """Record the temporary names for PATHS before any is created; each path's temporary name."""
    token = new_token()
    names = {p: temp_name(p, token) for p in paths}
    with open(os.path.join(repo.rewind_dir, JOURNAL), "wb") as fh:
        fh.write(b"".join(os.fsencode(n) + b"\0" for n in names.values()))
    return names


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
