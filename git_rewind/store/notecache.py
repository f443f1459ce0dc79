"""Parsed notes kept on disk, by note blob id: what lets a reader of 10,000 notes skip reading and parsing them.

A note's blob id changes whenever its content does, so a parsed note kept under its blob id is exact for as
long as that blob is a note. With each notes ref the file also keeps the ref's commit and tree and the listing
read there (`<blob> <annotated commit>`), so a reader that finds the ref where it was runs no git process at
all, and one that finds it moved asks git only what changed since (checkpoints.py does the reading).

One file per kind of notes ref, in the store (Repo.store_dir): `layout.NOTES_CACHE` for refs/notes/rewind,
`layout.FETCHED_NOTES_CACHE` for every fetched copy (refs/notes/rewind-remote/...). Each is written whole from
what its reader has just read, so it holds the notes those refs hold now and nothing else (bounded by them:
a checkpoint gc dropped, a note a tag rewrote, a machine `gc --remote` forgot leave it at the next read).

The file is one header line, `git-rewind notes cache <FORMAT> <length> <index length> <crc32>`, then the index,
compact JSON of each ref's listing (with what choosing among checkpoints reads of each note: seq, time, ...),
then every note's state, one after another, unparsed until a reader asks for that note. It is replaced by a
rename (`fsutil.write_atomic`), so two processes writing at once leave one whole file or the
other; a file that is cut short, of another format (FORMAT also covers the fields a Note has, so a version
that adds one never reads an older file as its own), or whose length or checksum does not match, is not
read: the reader reads git as if there were none and writes it anew. Notes hold prompts: `purge --text`
drops the file (layout.PURGE "drop").
"""

from __future__ import annotations

import _thread
import os

from ..base.note import ConversationRecord, Note, Position, RewindRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..base.repo import Repo

# The shape of every cached note: Note.state's fields, in order, of the four classes it is made of.
_FIELDS = "|".join(",".join(cls.__slots__) for cls in (Note, Position, ConversationRecord, RewindRecord))
_MAGIC = b"git-rewind notes cache "
_WRITING = _thread.allocate_lock()  # threads of one process (the web server's) share write_atomic's temporary name


def _format() -> bytes:
    import zlib

    return b"4.%08x" % zlib.crc32(_FIELDS.encode())


class Listed:
    """One notes ref as it was read: its commit and tree, and each note in it as [blob, annotated commit, its
    Note.state as JSON (bytes), checkpoints.index_of it] (the last two None for a note that is not one of ours)."""

    __slots__ = ("commit", "tree", "entries")

    def __init__(self, commit: str, tree: str, entries: list[list[Any]]) -> None:
        self.commit = commit
        self.tree = tree
        self.entries = entries


def path(repo: Repo, name: str) -> str:
    return os.path.join(repo.store_dir, name)


def read(repo: Repo, name: str) -> dict[str, Listed]:
    """The refs the cache file NAME holds, ref → Listed; empty when there is none, or it is not a whole file
    of this format."""
    import json
    import zlib

    try:
        with open(path(repo, name), "rb") as fh:
            data = fh.read()
    except OSError:
        return {}
    end = data.find(b"\n")
    fields = data[len(_MAGIC):end].split(b" ") if data.startswith(_MAGIC) and end > 0 else []
    body = memoryview(data)[end + 1:]  # 30 MB at 50,000 notes: not copied
    if len(fields) != 4 or fields[0] != _format() or fields[1] != b"%d" % len(body) \
            or fields[3] != b"%08x" % zlib.crc32(body) or not fields[2].isdigit() or int(fields[2]) > len(body):
        return {}
    at = start = end + 1 + int(fields[2])
    try:
        found = {ref: Listed(commit, tree, entries)
                 for ref, (commit, tree, entries) in json.loads(bytes(body[:start - end - 1])).items()}
        for listed in found.values():
            for entry in listed.entries:  # [blob, commit, length of its state or None, index]
                size = entry[2]
                if size is not None:
                    entry[2] = data[at:at + size]
                    at += size
    except (ValueError, TypeError, AttributeError, IndexError):
        return {}
    if at != len(data) or any(len(entry) != 4 for listed in found.values() for entry in listed.entries):
        return {}
    return found


def write(repo: Repo, name: str, refs: dict[str, Listed]) -> None:
    """Replace the cache file NAME with REFS. A cache that cannot be written is only a slower next read."""
    import json
    import zlib

    from ..base.fsutil import write_atomic

    states = [entry[2] for listed in refs.values() for entry in listed.entries if entry[2] is not None]
    index = json.dumps({ref: [listed.commit, listed.tree, [[blob, commit, len(state) if state is not None else None,
                                                            facts] for blob, commit, state, facts in listed.entries]]
                        for ref, listed in refs.items()},
                       separators=(",", ":")).encode()  # ASCII: any string, lone surrogates too, comes back as it was
    body = index + b"".join(states)
    data = b"%s%s %d %d %08x\n%s" % (_MAGIC, _format(), len(body), len(index), zlib.crc32(body), body)
    with _WRITING:
        try:
            write_atomic(path(repo, name), data, makedirs=True)
        except OSError:
            pass
