"""The Checkpoint value, its JSON note, sequence ids and id lookup.

A checkpoint is a commit on refs/rewind/<session>; its metadata is a JSON note in
refs/notes/rewind. Reading all of them goes through pygit2 (interactive commands only).
"""

from __future__ import annotations

import json
import os
import re
import time

from . import gitcmd
from .errors import RewindError
from .repo import NOTES_REF, Repo
from .repo import check_session as check_session  # re-exported: callers know it from here

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

NOTE_VERSION = 1


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def new_note(**fields: Any) -> dict[str, Any]:
    """A note with every key of the schema present, in a stable order."""
    note: dict[str, Any] = {
        "v": NOTE_VERSION, "seq": None, "session": None, "agent": None, "trigger": None,
        "tool": None, "paths": [], "message": "", "prompt": None, "summary": None, "tags": [],
        "head": None, "branch": None, "created": utc_now(), "conversation": None, "skipped": [],
    }
    note.update(fields)
    return note


def dump_note(note: dict[str, Any]) -> bytes:
    """The note's text as stored: one JSON object, readable in `git notes show`."""
    return (json.dumps(note, ensure_ascii=True, indent=1) + "\n").encode()


class Checkpoint:
    """A checkpoint commit and its note."""

    __slots__ = ("commit", "note")

    def __init__(self, commit: str, note: dict[str, Any]) -> None:
        self.commit = commit
        self.note = note

    @property
    def seq(self) -> int:
        return int(self.note.get("seq") or 0)

    @property
    def session(self) -> str:
        return str(self.note.get("session") or "")

    @property
    def message(self) -> str:
        return str(self.note.get("message") or "")

    @property
    def created(self) -> datetime:
        from datetime import datetime, timezone

        try:
            return datetime.strptime(str(self.note["created"]), "%Y-%m-%dT%H:%M:%SZ").replace(
                tzinfo=timezone.utc
            )
        except (KeyError, ValueError):
            return datetime.fromtimestamp(0, timezone.utc)

    def as_json(self) -> dict[str, Any]:
        return {**self.note, "commit": self.commit}


# sequence ids ------------------------------------------------------------------


def _seq_file(repo: Repo) -> str:
    return os.path.join(repo.store_dir, "seq")


def next_seq(repo: Repo) -> int:
    """Reserve the next sequence id. Hold the store lock. Gaps are fine; reuse never happens."""
    path = _seq_file(repo)
    try:
        with open(path) as fh:
            last = int(fh.read().strip() or 0)
    except (FileNotFoundError, ValueError):
        last = max((c.seq for c in load_all(repo)), default=0)
    seq = last + 1
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(f"{seq}\n")
    os.replace(tmp, path)
    return seq


# reading -----------------------------------------------------------------------


def load_all(repo: Repo) -> list[Checkpoint]:
    """Every checkpoint of the repository, oldest first (by seq)."""
    if repo.read_ref(NOTES_REF) is None:
        return []
    pyrepo = repo.pygit
    result = []
    for note in pyrepo.notes(NOTES_REF):  # type: ignore[call-arg]  # the stub omits ref
        try:
            data = json.loads(note.message)
        except ValueError:
            continue
        if isinstance(data, dict) and "seq" in data:
            result.append(Checkpoint(commit=str(note.annotated_id), note=data))
    result.sort(key=lambda c: c.seq)
    return result


def read_note(repo: Repo, commit: str) -> dict[str, Any] | None:
    """The note of one commit, through git (no pygit2 import)."""
    try:
        out = repo.git(["notes", "--ref", NOTES_REF, "show", commit])
    except gitcmd.GitError:
        return None
    try:
        data = json.loads(out)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def lookup(repo: Repo, ident: str, checkpoints: list[Checkpoint] | None = None) -> Checkpoint:
    """Resolve an id: a sequence number, `@`/`latest`, `@~N`, or a (short) commit id."""
    items = checkpoints if checkpoints is not None else load_all(repo)
    ident = ident.strip()
    if not items:
        raise RewindError("no checkpoints yet in this repository")
    if ident in ("@", "latest", "HEAD"):
        return items[-1]
    match = re.fullmatch(r"(?:@|latest)~(\d+)", ident)
    if match:
        back = int(match.group(1))
        if back >= len(items):
            raise RewindError(f"unknown checkpoint: {ident} (only {len(items)} checkpoints)")
        return items[-1 - back]
    if ident.lstrip("#").isdigit():
        seq = int(ident.lstrip("#"))
        for item in items:
            if item.seq == seq:
                return item
        if len(ident) < 7:
            raise RewindError(f"unknown checkpoint: {ident}")
    if re.fullmatch(r"[0-9a-fA-F]{4,64}", ident):
        found = [c for c in items if c.commit.startswith(ident.lower())]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise RewindError(f"ambiguous checkpoint id: {ident}")
    raise RewindError(f"unknown checkpoint: {ident}")


def since_previous(repo: Repo, commit: str) -> tuple[str, str]:
    """(the previous checkpoint of COMMIT's session, or the empty tree; `git diff --stat --summary` from it)."""
    from .snapshot import EMPTY_TREE

    parent = repo.git(["rev-parse", "--verify", "-q", commit + "^"], check=False).decode().strip() or EMPTY_TREE
    return parent, repo.git(["diff", "--stat", "--summary", parent, commit]).decode("utf-8", "replace")


def stats(repo: Repo) -> dict[str, Any]:
    """Counts, sessions, the disk the checkpoints' own objects use, and the oldest and newest."""
    items = load_all(repo)
    sessions: dict[str, int] = {}
    for item in items:
        sessions[item.session] = sessions.get(item.session, 0) + 1
    storage = 0
    refs = [f"refs/rewind/{name}" for name in repo.session_refs()]
    if items and refs:
        # Objects reachable from our refs and not from the user's own history: what we add.
        out = repo.git(["rev-list", "--objects", "--disk-usage", *refs, NOTES_REF, "--not", "--branches", "--tags"])
        storage = int(out.strip() or 0)

    def brief(item: Checkpoint) -> dict[str, Any]:
        return {"seq": item.seq, "created": item.note.get("created"), "message": item.message}

    return {
        "checkpoints": len(items),
        "sessions": dict(sorted(sessions.items(), key=lambda kv: -kv[1])),
        "storage_bytes": storage,
        "oldest": brief(items[0]) if items else None,
        "newest": brief(items[-1]) if items else None,
        "with_summary": sum(1 for item in items if item.note.get("summary")),
        "safety": sum(1 for item in items if str(item.note.get("trigger") or "").startswith("pre-")),
    }
