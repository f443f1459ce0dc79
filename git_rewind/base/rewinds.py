"""The rewinds made in this work tree, so that the agent sessions living in it hear of them.

An undo, a revert or a redo changes files under an agent that remembers them as they were. Each
rewind that wrote or removed files appends one JSON line to .git[/worktrees/X]/rewind/rewinds.jsonl
(restore.rewind, under the work tree's lock). Each session's hook state keeps a `mark` of the log as
it last saw it (its size and mtime, the newest seq); at the session's next prompt the hook tells the
agent about the rewinds since, except those the session asked for itself (`by`). A session's first
hook call marks the log as it is then, so a session that starts after a rewind is not told about it.

Pure file work, no git: with nothing new, the prompt hook pays one stat.
"""

from __future__ import annotations

import os

from . import layout, minijson

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .repo import Repo

NAME = layout.REWINDS
MAX_BYTES = 64 * 1024  # past this, the log is rewritten with its newest KEEP lines
KEEP = 50
PATHS_KEPT = 20  # paths recorded per rewind
PATHS_SHOWN = 3  # named in the text an agent reads
SHOWN = 5  # rewinds described at one prompt (the newest)


class Rewind:
    """One rewind of the work tree: its safety checkpoint, what it restored, which paths, when, asked by whom."""

    __slots__ = ("seq", "action", "to", "paths", "count", "time", "by")

    def __init__(self, seq: int, action: str, to: int, paths: list[str], count: int, time: float,
                 by: str | None = None) -> None:
        self.seq = seq  # the safety checkpoint it took
        self.action = action  # undo, redo, revert…
        self.to = to  # the checkpoint it restored
        self.paths = paths  # the first PATHS_KEPT written or removed
        self.count = count  # how many were
        self.time = time  # seconds since the epoch
        self.by = by  # the agent session that asked for it (through MCP, within its own turn), if known

    def to_json(self) -> dict[str, object]:
        return {"seq": self.seq, "action": self.action, "to": self.to, "paths": self.paths, "count": self.count,
                "time": self.time, "by": self.by}

    @classmethod
    def from_json(cls, data: object) -> Rewind | None:
        if not isinstance(data, dict):
            return None
        seq, to, count, when = data.get("seq"), data.get("to"), data.get("count"), data.get("time")
        if not (isinstance(seq, int) and isinstance(to, int) and isinstance(count, int)
                and isinstance(when, (int, float))):
            return None
        paths = data.get("paths")
        by = data.get("by")
        return cls(seq, str(data.get("action") or "rewind"), to,
                   [str(p) for p in paths] if isinstance(paths, list) else [], count, float(when),
                   by if isinstance(by, str) else None)

    def describe(self) -> str:
        """`undo to #12 (3 files: a.py, b.py, c.py) at 10:02 UTC` (`revert of #12 …`)."""
        import time

        shown = ", ".join(self.paths[:PATHS_SHOWN]) + (", …" if self.count > PATHS_SHOWN else "")
        files = f"{self.count} file{'s' if self.count != 1 else ''}"
        where = "of" if self.action == "revert" else "to"  # a revert takes back the turn #to began
        return (f"{self.action} {where} #{self.to} ({files}: {shown}) at "
                f"{time.strftime('%H:%M', time.gmtime(self.time))} UTC")


def _path(repo: Repo) -> str:
    return os.path.join(repo.rewind_dir, NAME)


def record(repo: Repo, rewind: Rewind) -> None:
    """Append REWIND to this work tree's log. Hold the work tree's lock (the log is rewritten past MAX_BYTES).
    Paths that are not UTF-8 go through as git-rewind reads them (surrogateescape), as in hook.log."""
    from .fsutil import write_atomic

    path = _path(repo)
    line = (minijson.dumps(rewind.to_json()) + "\n").encode("utf-8", "surrogateescape")
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        size = 0
    if size + len(line) > MAX_BYTES:
        with open(path, "rb") as fh:
            kept = fh.read().splitlines(keepends=True)[-(KEEP - 1):]
        write_atomic(path, b"".join(kept) + line, makedirs=True)
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _stat(path: str) -> list[int]:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return [0, 0]
    return [st.st_size, st.st_mtime_ns]


def _read(path: str) -> list[Rewind]:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        return []
    found = []
    for line in lines:
        try:
            item = Rewind.from_json(minijson.loads(line))
        except ValueError:
            continue  # a line a killed writer left half-written
        if item is not None:
            found.append(item)
    return found


def mark(repo: Repo) -> dict[str, object]:
    """The log as it is now, for a session's state: what it need not be told about."""
    path = _path(repo)
    stat = _stat(path)
    seen = _read(path) if stat[0] else []
    return {"stat": stat, "seq": max((r.seq for r in seen), default=0)}


def news(repo: Repo, seen: object, session: str) -> tuple[list[Rewind], dict[str, object]] | None:
    """The rewinds since SEEN (a session's mark) that SESSION did not ask for itself, and the new mark;
    None when the log has not changed (one stat)."""
    path = _path(repo)
    stat = _stat(path)
    old = seen if isinstance(seen, dict) else {}
    if old.get("stat") == stat:
        return None
    last = old.get("seq")
    last = last if isinstance(last, int) else 0
    every = _read(path)
    new = [r for r in every if r.seq > last]
    return [r for r in new if r.by != session], {"stat": stat, "seq": max([last] + [r.seq for r in every])}


def context(rewinds: list[Rewind]) -> str:
    """What the agent is told at its prompt, in one paragraph."""
    shown = rewinds[-SHOWN:]
    earlier = f"{len(rewinds) - len(shown)} earlier rewinds, then " if len(rewinds) > len(shown) else ""
    return ("git-rewind: the working tree was rewound from outside this session: " + earlier
            + ", then ".join(r.describe() for r in shown)
            + "; re-read files before editing them, they may differ from what you remember.")
