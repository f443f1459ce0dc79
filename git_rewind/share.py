"""The shareable copy: this machine's checkpoints, redacted, as one notes ref that `push` sends.

Local checkpoints (`refs/rewind/*`, `refs/notes/rewind`) never leave the machine. `push` builds, from
them, new commits whose trees leave out secret-looking files and whose messages and notes are redacted,
and one notes commit per push (the "machine commit") whose tree maps each copy to its redacted note and
whose parents keep the copies reachable. The copy lives at `refs/notes/rewind-share/<sync_name>`.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .repo import Repo

SHARE_PREFIX = "refs/notes/rewind-share/"  # this machine's copy (and nothing fetched)
REMOTE_PREFIX = "refs/notes/rewind-remote/"  # <label>/<sync_name>: other machines' copies, fetched


def share_dir(repo: Repo) -> str:
    """Where the copy's caches live (per repository)."""
    return os.path.join(repo.store_dir, "share")


def purged_marker(repo: Repo) -> str:
    """Present after a purge: the next push must replace the remote copy (`push --prune`)."""
    return os.path.join(share_dir(repo), "purged")


def discard_copy(repo: Repo) -> None:
    """Drop this machine's local copy and its caches (after a purge rewrote the checkpoints it was built
    from), and mark that the next push must be `push --prune`: merging with the remote's old copy would
    bring back what the purge removed. Hold the store lock."""
    import shutil

    from .fsutil import write_atomic

    refs = repo.git(["for-each-ref", "--format=%(refname) %(objectname)", SHARE_PREFIX]).decode().split("\n")
    old = {ref: oid for ref, oid in (line.split(" ") for line in refs if line)}
    if old:
        repo.move_refs(dict.fromkeys(old), dict(old))
    shutil.rmtree(share_dir(repo), ignore_errors=True)
    os.makedirs(share_dir(repo), exist_ok=True)
    write_atomic(purged_marker(repo), b"push --prune must replace this machine's copy on the remote\n")
