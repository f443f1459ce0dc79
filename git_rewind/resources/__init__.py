"""The files git-rewind ships to agents, each kept once: `resources/<agent>/…`, installed from here.

hooks/<agent>/ holds readable copies of them (and of the hooks files install writes), generated
from the same source by `python -m git_rewind.resources.readable`; a test checks they match.
"""

from __future__ import annotations

import os

DIR = os.path.dirname(os.path.abspath(__file__))


def path(*parts: str) -> str:
    """Where a shipped file (or folder) is: resources/<agent>/…"""
    return os.path.join(DIR, *parts)


def read(*parts: str) -> bytes:
    """A shipped file's bytes; a RewindError that says the installation is incomplete when it is missing."""
    where = path(*parts)
    try:
        with open(where, "rb") as fh:
            return fh.read()
    except OSError as exc:
        from ..base.errors import RewindError

        raise RewindError(f"{where} is missing ({exc.strerror}): is git-rewind installed whole?") from None


def listing(*parts: str, suffix: str = "") -> dict[str, bytes]:
    """File name → bytes of the shipped files in a folder that end with SUFFIX, sorted by name."""
    folder = path(*parts)
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(suffix))
    except OSError:
        names = []
    if not names:
        from ..base.errors import RewindError

        raise RewindError(f"no {suffix or 'files'} in {folder}: is git-rewind installed whole?")
    return {name: read(*parts, name) for name in names}
