"""The store's size on disk, and the `max_store_size` cap hooks enforce in the background.

What the checkpoints cost is what `git rev-list --objects --disk-usage` counts (git >= 2.38) from
refs/rewind/* and refs/notes/rewind, less what the person's own history holds: commits reachable from
their refs, and the trees of HEAD and of every commit a checkpoint was taken on (the note's `head`).
Those trees have to be named: a session's chain shares no commit with the person's history, so
`--not --all` alone would leave every blob the checkpoints share with HEAD counted as ours. Objects
are counted as stored now (a packed delta as its delta), so a repack changes the figure.

The hook path only reaches `maybe_enforce`: one stat call, and at most once per CHECK_INTERVAL an
estimate from the sizes of the object files, then a detached `python -m git_rewind.ops.gc` (gc.cap under
its own lock) when the estimate passes the cap.
"""

from __future__ import annotations

import os
import time

from ..base import layout
from ..base.repo import NOTES_REF, REF_PREFIX, Repo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .checkpoints import Checkpoint

STATE = layout.STORAGE_STATE
STAMP = layout.CAP_CHECK
CAP_LOCK = layout.CAP_LOCK
CHECK_INTERVAL = 300  # seconds between two estimates on the hook path
# rev-list's negative side: every ref but ours (the person's branches, tags, remotes, HEADs, stash, ...).
_NOT_OURS = ["--not", f"--exclude={REF_PREFIX}*", f"--exclude={NOTES_REF}", "--all"]


def measure(repo: Repo, items: list[Checkpoint]) -> int:
    """Bytes on disk of the objects the store's refs hold that the person's history does not (ITEMS: every
    checkpoint, checkpoints.load_all, for the commits they were taken on)."""
    notes = repo.read_ref(NOTES_REF) is not None
    if not notes and not repo.session_refs():
        return 0
    return _disk_usage(repo, [NOTES_REF] if notes else [], _user_trees(repo, items), [f"--glob={REF_PREFIX}*"])


def measure_kept(repo: Repo, kept: list[Checkpoint], commit_sizes: dict[str, int], merges: dict[str, str]) -> int:
    """About what `measure` would say once gc had dropped every checkpoint but KEPT: their trees, the
    attachments MERGES gives (commit → second parent), their note blobs and the notes tree as it is now
    (what the rewrite leaves is a subset), plus their commits at COMMIT_SIZES (the rewritten ones are
    the same commits on a shorter chain)."""
    if not kept:
        return 0
    tips = [f"{c.commit}^{{tree}}" for c in kept] + [str(c.note_blob) for c in kept]
    tips += [merges[c.commit] for c in kept if c.commit in merges]
    if repo.read_ref(NOTES_REF) is not None:
        tips.append(f"{NOTES_REF}^{{tree}}")
    return _disk_usage(repo, tips, _user_trees(repo, kept)) + sum(commit_sizes.get(c.commit, 0) for c in kept)


def _disk_usage(repo: Repo, tips: list[str], user_trees: list[str], options: list[str] | None = None) -> int:
    """`rev-list --disk-usage` of TIPS (and the refs OPTIONS name) less USER_TREES and every ref but ours."""
    lines = tips + [f"^{tree}" for tree in user_trees]
    # --stdin before --not: git reads the lines right there, so they keep their own sign.
    out = repo.git(["rev-list", "--objects", "--disk-usage", *(options or []), "--stdin", *_NOT_OURS],
                   input="".join(line + "\n" for line in lines).encode())
    return int(out.strip() or 0)


def _user_trees(repo: Repo, items: list[Checkpoint]) -> list[str]:
    """The trees of HEAD and of the commits ITEMS were taken on, those that still exist."""
    heads = dict.fromkeys(["HEAD", *(str(c.note.head) for c in items if c.note.head)])
    out = repo.git(["cat-file", "--batch-check=%(objectname) %(objecttype)"],
                   input="".join(f"{head}^{{tree}}\n" for head in heads).encode())
    return [parts[0] for parts in (line.split() for line in out.decode().splitlines())
            if len(parts) == 2 and parts[1] == "tree"]


def commit_sizes(repo: Repo, commits: list[str]) -> dict[str, int]:
    """Each commit's size on disk, through one `git cat-file --batch-check`."""
    if not commits:
        return {}
    out = repo.git(["cat-file", "--batch-check=%(objectname) %(objectsize:disk)"],
                   input="".join(c + "\n" for c in commits).encode())
    sizes = {}
    for line in out.decode().splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            sizes[parts[0]] = int(parts[1])
    return sizes


def attachments(repo: Repo) -> dict[str, str]:
    """Every checkpoint commit with attachments (a second parent), and that parent."""
    if not repo.session_refs():
        return {}
    out = repo.git(["rev-list", "--merges", "--parents", f"--glob={REF_PREFIX}*"]).decode()
    return {parts[0]: parts[2] for parts in (line.split() for line in out.splitlines()) if len(parts) >= 3}


def on_our_chains(repo: Repo) -> set[str]:
    """Every commit reachable from refs/rewind/*: checkpoints held anywhere else (fetched ones) are not ours
    to drop."""
    if not repo.session_refs():
        return set()
    return set(repo.git(["rev-list", f"--glob={REF_PREFIX}*"]).decode().split())


# the hook path: a cheap estimate, a detached enforcement -------------------------------------------


LOOSE_SAMPLE = 2000  # loose objects stat'ed at most per estimate; beyond, the rest is extrapolated


def objects_bytes(repo: Repo) -> int:
    """The repository's object store on disk, from stat calls alone: every pack and index, and the loose
    objects (a large file's blob is often one), every one while there are up to LOOSE_SAMPLE of them
    (auto_pack keeps them near 2000), else those of the fan-out directories read by then, extrapolated
    (starting at a directory that changes every second, so no directory is always left out)."""
    objects = os.path.join(repo.commondir, "objects")
    try:
        fanout = sorted(name for name in os.listdir(objects) if len(name) == 2)
    except FileNotFoundError:
        return 0
    total = _sizes(os.path.join(objects, "pack"), (".pack", ".idx"))[0]
    start = int(time.time()) % len(fanout) if fanout else 0
    loose = seen = read = 0
    for name in fanout[start:] + fanout[:start]:
        size, count = _sizes(os.path.join(objects, name))
        loose, seen, read = loose + size, seen + count, read + 1
        if seen >= LOOSE_SAMPLE:
            break
    return total + (loose * len(fanout) // read if read else 0)


def _sizes(folder: str, suffixes: tuple[str, ...] | None = None) -> tuple[int, int]:
    """The bytes and the number of the files in FOLDER (those ending in SUFFIXES)."""
    size = count = 0
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if suffixes and not entry.name.endswith(suffixes):
                    continue
                try:
                    size += entry.stat(follow_symlinks=False).st_size
                    count += 1
                except FileNotFoundError:  # a repack removed it meanwhile
                    pass
    except (FileNotFoundError, NotADirectoryError):
        pass
    return size, count


def read_state(repo: Repo) -> dict[str, Any]:
    """What the last enforcement found (an empty dict before the first)."""
    from ..base import minijson

    return minijson.load_file(os.path.join(repo.store_dir, STATE))


def write_state(repo: Repo, state: dict[str, Any]) -> None:
    from ..base import minijson

    minijson.dump_file(os.path.join(repo.store_dir, STATE), state)


def estimate(repo: Repo) -> int:
    """The store's size, estimated without git: the last exact measure plus whatever the object store
    grew by since (all of it counted as ours); before any measure, the whole object store."""
    now = objects_bytes(repo)
    state = read_state(repo)
    measured, then = state.get("bytes"), state.get("objects")
    if not isinstance(measured, int) or not isinstance(then, int):
        return now
    return measured + max(0, now - then)


def maybe_enforce(repo: Repo, cap: int) -> bool:
    """Start a detached enforcement of CAP when the estimate passes it; at most one estimate every
    CHECK_INTERVAL seconds, so a checkpoint pays one stat call. The caller never waits for it."""
    if not cap:
        return False
    stamp = os.path.join(repo.store_dir, STAMP)
    try:
        if time.time() - os.stat(stamp).st_mtime < CHECK_INTERVAL:
            return False
    except FileNotFoundError:
        pass
    from ..base.fsutil import write_atomic

    write_atomic(stamp, f"{int(time.time())}\n")
    if estimate(repo) <= cap:
        return False
    import sys

    from ..base.gitcmd import detached

    detached([sys.executable, "-m", "git_rewind.ops.gc"], repo.root)
    return True


def human(size: int) -> str:
    """1536 → '1.5 KiB': powers of 1024, as max_store_size reads them."""
    if size < 1024:
        return f"{size} B"
    value = size / 1024
    for unit in ("KiB", "MiB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"
