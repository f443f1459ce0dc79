"""The work tree's checkpoints as the page wants them, read once per change of the store.

`checkpoints.load_all` costs one `git notes list` and one `git cat-file --batch` (hundreds of
milliseconds at 10,000 checkpoints), so the server keeps what it read, and the items already
turned into JSON, until the notes ref moves: every checkpoint, tag or gc rewrites that ref, and
reading it is one small file read.
"""

from __future__ import annotations

import threading

from .. import checkpoints
from ..checkpoints import Checkpoint
from ..repo import NOTES_REF, Repo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PROMPT_CUT = 500
PATHS_CUT = 50


def item_json(item: Checkpoint) -> dict[str, Any]:
    """ITEM as a row of the list (the contract's ITEM): the prompt and paths cut."""
    note = item.note
    prompt = note.prompt
    out: dict[str, Any] = {
        "seq": note.seq, "commit": item.commit, "session": note.session, "agent": note.agent,
        "trigger": note.trigger, "tool": note.tool, "created": note.created, "time": item.time,
        "message": note.message, "prompt": prompt[:PROMPT_CUT] if prompt else prompt,
        "paths": note.paths[:PATHS_CUT], "tags": list(note.tags), "origins": note.origins,
        "branch": note.branch, "rewind": {"to": note.rewind.to} if note.rewind is not None else None,
    }
    if len(note.paths) > PATHS_CUT:
        out["paths_more"] = len(note.paths) - PATHS_CUT
    return out


def detail_json(item: Checkpoint, parent: Checkpoint | None) -> dict[str, Any]:
    """ITEM whole, for the detail panel: the row's fields uncut, the note, the previous checkpoint."""
    note = item.note
    data = note.to_json()
    return {**item_json(item), "prompt": note.prompt, "paths": list(note.paths), "summary": note.summary,
            "turn": note.turn, "skipped": list(note.skipped), "conversation": data["conversation"],
            "head": note.head, "worktree": note.worktree, "parent": parent.seq if parent is not None else None,
            "note": data}


def sessions_json(items: list[Checkpoint]) -> list[dict[str, Any]]:
    """One entry per session of ITEMS (oldest first), for the timeline's lanes."""
    lanes: dict[str, dict[str, Any]] = {}
    for item in items:
        lane = lanes.get(item.session)
        when = item.time
        if lane is None:
            lanes[item.session] = {"session": item.session, "agent": item.note.agent, "branch": item.note.branch,
                                   "first_prompt": item.note.prompt, "first": when, "last": when, "count": 1}
            continue
        lane["count"] += 1
        lane["first"] = min(lane["first"], when)
        lane["last"] = max(lane["last"], when)
        if lane["first_prompt"] is None and item.note.prompt:
            lane["first_prompt"] = item.note.prompt
        if lane["agent"] is None and item.note.agent:
            lane["agent"] = item.note.agent
    for lane in lanes.values():
        if lane["first_prompt"]:
            lane["first_prompt"] = lane["first_prompt"][:PROMPT_CUT]
    return list(lanes.values())


class View:
    """What was read at one state of the notes ref: every checkpoint, this work tree's, their JSON."""

    __slots__ = ("key", "every", "items", "rows", "sessions", "by_seq")

    def __init__(self, key: str | None, every: list[Checkpoint], worktree: str | None) -> None:
        self.key = key
        self.every = every
        self.items = checkpoints.of_worktree(every, worktree)  # oldest first
        self.rows = [item_json(item) for item in reversed(self.items)]  # newest first
        self.sessions = sessions_json(self.items)
        self.by_seq = {item.seq: item for item in self.items}

    @property
    def newest(self) -> int | None:
        return self.items[-1].seq if self.items else None


class Listing:
    """The repository's checkpoints, re-read only when the notes ref has moved (thread-safe)."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self._lock = threading.Lock()
        self._view: View | None = None

    def state(self) -> str | None:
        """The notes ref's value: what every change of the checkpoints changes."""
        return self.repo.read_ref(NOTES_REF)

    def view(self) -> View:
        key = self.state()
        with self._lock:
            if self._view is None or self._view.key != key:
                self._view = View(key, checkpoints.load_all(self.repo), self.repo.worktree)
            return self._view

    def lookup(self, ident: str) -> Checkpoint:
        """IDENT as the CLI reads it, among this work tree's checkpoints."""
        view = self.view()
        return checkpoints.lookup(self.repo, ident, view.every, self.repo.worktree)

    def previous(self, item: Checkpoint) -> Checkpoint | None:
        """The checkpoint `show` compares ITEM with, when it is one (checkpoints.previous)."""
        return checkpoints.previous(self.view().every, item)
