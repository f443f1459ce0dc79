"""Other machines' checkpoints, as `git rewind fetch` brought them: read-only, in their own namespace.

Each machine's copy sits at `refs/notes/rewind-remote/<remote>/<sync_name>` (share.py says what a copy
is). A fetched checkpoint's id is `<remote>/<sync_name>/<seq>`, its own machine's sequence number: stable
across fetches, and never one of this repository's numbers, so plain ids, `@` and `@{DATE}` stay local.
"""

from __future__ import annotations

import re

from .checkpoints import Checkpoint
from .errors import RewindError
from .share import REMOTE_PREFIX

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .repo import Repo

_ID = re.compile(r"(?P<source>(?P<label>[^\s/]+)/(?P<name>[A-Za-z0-9_][A-Za-z0-9._-]*))/#?(?P<seq>\d+)")


def is_id(ident: str) -> bool:
    """IDENT has the shape of a fetched checkpoint's id."""
    return _ID.fullmatch(ident.strip()) is not None


def machines(repo: Repo, label: str | None = None) -> dict[str, str]:
    """`<remote>/<sync_name>` → its machine commit, for every fetched copy (of remote LABEL only, if given)."""
    prefix = REMOTE_PREFIX + (label + "/" if label else "")
    out = repo.git(["for-each-ref", "--format=%(refname) %(objectname)", prefix]).decode()
    found = {}
    for line in out.splitlines():
        ref, _, oid = line.rpartition(" ")
        found[ref[len(REMOTE_PREFIX):]] = oid
    return found


def load(repo: Repo, label: str | None = None, source: str | None = None) -> list[Checkpoint]:
    """The fetched checkpoints of remote LABEL (every remote: None), or of one machine SOURCE, oldest first
    (by time; a machine's own order by its seq)."""
    from .checkpoints import read_listed

    found: list[Checkpoint] = []
    for name, machine in sorted(machines(repo, label).items()):
        if source is not None and name != source:
            continue
        listing = repo.git(["notes", "--ref", REMOTE_PREFIX + name, "list"])
        for item in read_listed(repo, listing):
            item.source = name
            found.append(item)
        del machine
    found.sort(key=lambda c: (c.time, c.source or "", c.seq))
    return found


def lookup(repo: Repo, ident: str) -> Checkpoint:
    """The fetched checkpoint `<remote>/<sync_name>/<seq>`."""
    match = _ID.fullmatch(ident.strip())
    if match is None:
        raise RewindError(f"unknown checkpoint: {ident}")
    source, seq = match.group("source"), int(match.group("seq"))
    if source not in machines(repo, match.group("label")):
        raise RewindError(f"unknown checkpoint: {ident} (nothing fetched from machine {match.group('name')} of "
                          f"{match.group('label')}: `git rewind fetch {match.group('label')}` brings it)")
    found = [c for c in load(repo, source=source) if c.seq == seq]
    if not found:
        raise RewindError(f"unknown checkpoint: {ident} (machine {source} has no #{seq})")
    if len(found) > 1:  # two clones pushed under one sync_name: their numbers may meet
        raise RewindError(f"ambiguous checkpoint id: {ident} (two checkpoints of {source} are #{seq}: "
                          f"name one by its commit, {found[0].commit[:12]} or {found[1].commit[:12]})")
    return found[0]


def by_commit(repo: Repo, prefix: str) -> Checkpoint | None:
    """The fetched checkpoint whose copy commit starts with PREFIX (at least 7 hex digits), if exactly one."""
    if not re.fullmatch(r"[0-9a-fA-F]{7,64}", prefix):
        return None
    found = [c for c in load(repo) if c.commit.startswith(prefix.lower())]
    return found[0] if len(found) == 1 else None
