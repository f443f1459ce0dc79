"""Checkpoints made and read through the real `git rewind` command, for tests that need a few of them."""

from __future__ import annotations

import json
from typing import Any

from helpers.workdir import Workdir


def snaps(w: Workdir, n: int, session: str = "s") -> None:
    """N checkpoints on SESSION, each after a change to notes.txt ("version 0", "version 1", ...)."""
    for i in range(n):
        w.write("notes.txt", f"version {i}\n")
        w.ok("snap", "--session", session, "-m", f"v{i}")


def listing(w: Workdir) -> list[dict[str, Any]]:
    """Every checkpoint as `list --json --safety` gives it, newest first."""
    items: list[dict[str, Any]] = json.loads(w.ok("list", "--json", "-n", "0", "--safety"))
    return items
