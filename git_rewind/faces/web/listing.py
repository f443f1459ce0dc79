"""The work tree's checkpoints as the page wants them, read once per change of the store.

`checkpoints.load_all` reads every note through the notes cache (store/notecache.py: ~0.2 s at 10,000
checkpoints, about a second without it), and each row is JSON made from one, so the server keeps what it
read, and the rows already turned into JSON, until the notes ref moves: every checkpoint, tag or gc rewrites
that ref, and reading it is one small file read. When it moves, the ref's own history (`git diff-tree` of its two
commits) names the notes added, changed or removed, and only those are read again.
"""

from __future__ import annotations

import threading

from ...base.errors import RewindError
from ...base.repo import NOTES_REF, Repo
from ...store import checkpoints
from ...store.checkpoints import Checkpoint

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
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
    """What was read at one state of the notes ref: every checkpoint, this work tree's, their JSON rows
    (each also kept encoded once asked for: a page of 5,000 rows is then joined, not encoded again)."""

    __slots__ = ("key", "every", "items", "rows", "sessions", "index", "_blobs", "_encoded", "_sessions")

    def __init__(self, key: str | None, every: list[Checkpoint], worktree: str | None,
                 before: View | None = None) -> None:
        self.key = key
        self.every = checkpoints.with_notes(every)  # every row reads its note
        self.items = checkpoints.of_worktree(every, worktree)  # oldest first
        newest_first = self.items[::-1]
        self._blobs = [item.note_blob for item in newest_first]
        made = before.row_cache() if before is not None else {}  # a note that did not change keeps its row
        self.rows = [made.get(item.note_blob) or item_json(item) for item in newest_first]
        kept = before._encoded if before is not None else {}
        self._encoded: dict[str, bytes] = {blob: kept[blob] for blob in self._blobs if blob in kept}
        self.sessions = sessions_json(self.items)
        self._sessions: bytes | None = None
        self.index = {row["seq"]: i for i, row in enumerate(self.rows)}  # seq → position in rows

    def numbered(self, ident: str) -> Checkpoint | None:
        """This work tree's checkpoint whose number IDENT is (as `checkpoints.lookup` reads a number first), by
        the index; None for any other id (lookup reads those)."""
        position = self.index.get(int(ident)) if ident.isdigit() and ident.isascii() else None
        return self.items[len(self.items) - 1 - position] if position is not None else None

    def previous(self, item: Checkpoint) -> Checkpoint | None:
        """`checkpoints.previous` of ITEM, by the index when it is one of this work tree's (items are in seq
        order: the one before it), else by that walk over every checkpoint."""
        position = self.index.get(item.seq)
        at = len(self.items) - 1 - position if position is not None else -1
        if at < 0 or self.items[at] is not item:
            return checkpoints.previous(self.every, item)
        return self.items[at - 1] if at > 0 else None

    @property
    def newest(self) -> int | None:
        return self.items[-1].seq if self.items else None

    def row_cache(self) -> dict[str, dict[str, Any]]:
        """Each row by its note's blob id."""
        return dict(zip(self._blobs, self.rows, strict=True))

    def encoded(self, positions: Sequence[int]) -> bytes:
        """The rows at POSITIONS as a compact JSON array."""
        out = []
        for i in positions:
            raw = self._encoded.get(self._blobs[i])
            if raw is None:
                raw = self._encoded[self._blobs[i]] = compact(self.rows[i])
            out.append(raw)
        return b"[" + b",".join(out) + b"]"

    def encoded_sessions(self) -> bytes:
        if self._sessions is None:
            self._sessions = compact(self.sessions)
        return self._sessions


def compact(value: Any) -> bytes:
    """VALUE as JSON without spaces (the biggest answers are lists of thousands of rows)."""
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def changed_since(repo: Repo, old: str, new: str) -> tuple[bytes, set[str]] | None:
    """The notes that changed between two states of the notes ref, from its own history: (`git notes
    list`-shaped lines of the added or changed ones, the commits whose notes went or changed); None
    when git cannot tell (then everything is read again)."""
    from ...base.gitcmd import GitError

    try:
        out = repo.git(["diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", old, new])
    except GitError:
        return None
    from ...base.gitobjects import raw_diff

    listing = bytearray()
    touched: set[str] = set()
    for entry in raw_diff(out):
        commit = entry.path.replace("/", "")  # a notes tree's fan-out
        touched.add(commit)
        if entry.status != "D":
            listing += f"{entry.new_oid} {commit}\n".encode()
    return bytes(listing), touched


class Listing:
    """The repository's checkpoints, re-read only when the notes ref has moved (thread-safe)."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self._lock = threading.Lock()
        self._view: View | None = None

    def state(self) -> str | None:
        """The notes ref's value: what every change of the checkpoints changes."""
        return self.repo.read_ref(NOTES_REF)

    def warm(self) -> None:
        """Read the checkpoints in a background thread now; the first request waits for it (the lock)."""
        ready = threading.Event()

        def read() -> None:
            with self._lock:
                ready.set()
                try:
                    self._view = View(self.state(), checkpoints.load_all(self.repo), self.repo.worktree)
                except RewindError:
                    pass  # the first request reads again and answers the error

        threading.Thread(target=read, name="rewind-web-warm", daemon=True).start()
        ready.wait()  # the lock is taken: no request can come first and read them twice

    def view(self) -> View:
        """The checkpoints as the notes ref says they are now."""
        key = self.state()
        with self._lock:
            view = self._view
            if view is None or view.key != key:
                view = self._view = self._read(key, view)
            return view

    def _read(self, key: str | None, old: View | None) -> View:
        """The view at KEY: from OLD and the notes that changed since, when git can tell which; else all."""
        changed = changed_since(self.repo, old.key, key) if old is not None and old.key and key else None
        if old is None or changed is None:
            return View(key, checkpoints.load_all(self.repo), self.repo.worktree)
        listing, touched = changed
        every = [c for c in old.every if c.commit not in touched] + checkpoints.read_listed(self.repo, listing)
        every.sort(key=lambda c: c.seq)
        return View(key, every, self.repo.worktree, old)

    def current(self) -> View | None:
        """The view when it is the notes ref's present state and no read is under way (answering from it then
        reads one small file and runs no git: the event loop may do it); else None."""
        view = self._view
        if view is None or self._lock.locked() or view.key != self.state():
            return None
        return view

    def lookup(self, ident: str) -> Checkpoint:
        """IDENT as the CLI reads it, among this work tree's checkpoints."""
        view = self.view()
        found = view.numbered(ident)
        return found if found is not None else checkpoints.lookup(self.repo, ident, view.every, self.repo.worktree)

    def previous(self, item: Checkpoint) -> Checkpoint | None:
        """The checkpoint `show` compares ITEM with, when it is one: the work tree's previous (checkpoints.previous)."""
        return self.view().previous(item)
