"""`git rewind cat`: one file of a checkpoint, byte for byte as `undo ID --only PATH` would write it now.

A restore writes what `git checkout` of the checkpoint would: the stored bytes, or, where git may
convert them (conversion.converts: eol attributes, clean/smudge filters, working-tree-encoding,
core.autocrlf), what git's filters make of them under the checkpoint's own attributes. So does this,
the same way, through restore's own `check_out`: `git checkout-index` from an index of the
checkpoint's tree into a directory under .git/rewind/ that stands in for the work tree (git reads
.gitattributes from that index, never from the person's work tree, whose attributes may have
changed since). `git cat-file
--filters` would skip the copy, but it reads attributes only from the work tree (git 2.39 has no
--attr-source).
"""

from __future__ import annotations

import os
import subprocess
import sys

from ..base import layout
from ..base.errors import RewindError
from ..base.repo import Repo
from ..store.checkpoints import Checkpoint

MODE_LINK = "120000"


def entry(repo: Repo, item: Checkpoint, rel: str) -> tuple[str, str]:
    """(mode, blob id) of the file REL in ITEM; a one-line error when it is not a file there."""
    if not rel:
        raise RewindError(f"name a file: the top of the work tree is a directory in checkpoint #{item.seq}")
    parent, _, name = rel.rpartition("/")
    listing = repo.git(["ls-tree", "-z", f"{item.commit}:{parent}"], check=False)
    for raw in listing.split(b"\0"):
        meta, _, found = raw.partition(b"\t")
        if found != os.fsencode(name):
            continue
        mode, kind, oid = meta.decode().split()
        if kind == "tree":
            raise RewindError(f"{rel} is a directory in checkpoint #{item.seq} (git rewind files {item.seq} --all)")
        if kind == "commit":
            raise RewindError(f"{rel} is a nested repository in checkpoint #{item.seq}, not a file")
        return mode, oid
    raise RewindError(f"no file {rel} in checkpoint #{item.seq}")


def cat(repo: Repo, item: Checkpoint, rel: str) -> None:
    """Write REL as ITEM holds it to stdout, filtered as a restore of it would write it now (a link: its
    target). The same choice as restore's: the stored bytes unless conversion.converts says git may change
    them, then what checkout-index writes."""
    import shutil

    from ..base.fsutil import scratch_dir
    from ..store import conversion
    from .restore import check_out

    mode, oid = entry(repo, item, rel)
    if mode == MODE_LINK or not conversion.converts(repo, [rel]):
        _stream(["cat-file", "blob", oid], repo.root)
        return
    repo.ensure_dirs()
    stage = scratch_dir(repo.rewind_dir, layout.SCRATCH_CAT)
    try:
        files = check_out(repo, item.commit, [rel], stage)
        sys.stdout.flush()
        with open(os.path.join(files, rel), "rb") as fh:
            shutil.copyfileobj(fh, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _stream(args: list[str], cwd: str) -> None:
    """Run git with our stdout as its own, so the bytes go straight through; its failure as one line (its
    death by SIGPIPE as the BrokenPipeError our own write would have met)."""
    from ..base.gitcmd import GitError

    sys.stdout.flush()
    proc = subprocess.run(["git", *args], cwd=cwd, stderr=subprocess.PIPE)
    if proc.returncode in (-13, 141):
        raise BrokenPipeError
    if proc.returncode:
        raise GitError(args, proc.returncode, proc.stderr.decode("utf-8", "replace"))
