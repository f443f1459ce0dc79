"""Agents' session transcripts (JSONL): reading them, finding a checkpoint's place, changing them safely.

A conversation rewind never loses a word: the transcript's full content goes into git first
(as the safety checkpoint's second parent, see store.Attachments), then the agent module
either appends a line the agent honours (Claude Code's `last-prompt`) or rewrites the file
through a temporary file and a rename. Everything here reads; agents/<agent>.py decides.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from .errors import RewindError


class Transcript:
    """One session file as it is now: its bytes, and each line parsed (None: not a JSON object)."""

    __slots__ = ("path", "data", "raw", "lines", "ends")

    def __init__(self, path: str, data: bytes) -> None:
        self.path = path
        self.data = data
        self.raw: list[bytes] = data.splitlines(keepends=True)
        self.lines: list[dict[str, Any] | None] = []
        self.ends: list[int] = []  # byte offset just past each line
        offset = 0
        import jsonlines

        reader = jsonlines.Reader(self.raw)  # one line per read(); a bad line raises and is consumed
        for raw in self.raw:
            offset += len(raw)
            self.ends.append(offset)
            try:
                value = reader.read()
            except jsonlines.InvalidLineError:
                value = None
            self.lines.append(value if isinstance(value, dict) else None)

    @classmethod
    def load(cls, path: str | None, what: str = "transcript") -> Transcript:
        """Read PATH; a clear error when it is gone (moved, deleted) or unreadable."""
        if not path:
            raise RewindError(f"the checkpoint records no {what} path")
        from .fsutil import NotRegular, read_regular

        try:
            return cls(path, read_regular(path))
        except NotRegular:
            raise RewindError(f"{what} is not a regular file: {path}") from None
        except FileNotFoundError:
            raise RewindError(f"{what} not found: {path} (moved or deleted?)") from None
        except OSError as exc:
            raise RewindError(f"cannot read {what} {path}: {exc.strerror}") from None

    def at(self, index: int) -> dict[str, Any]:
        """Line INDEX parsed; a line that is not a JSON object reads as an empty one."""
        return self.lines[index] or {}

    def index_where(self, test: Callable[[dict[str, Any]], object], start: int = 0) -> int | None:
        """The first line index from START whose parsed object passes TEST."""
        for i in range(start, len(self.lines)):
            line = self.lines[i]
            if line is not None and test(line):
                return i
        return None

    def lines_within(self, offset: int) -> int:
        """How many whole lines the file held when it was OFFSET bytes long."""
        count = 0
        for end in self.ends:
            if end > offset:
                break
            count += 1
        return count


class Plan:
    """A conversation rewind worked out before anything changes; the agent module applies it."""

    __slots__ = ("agent", "session", "transcript", "target_uuid", "leaf", "cut", "prompt", "fork", "empty",
                 "where", "resource")

    def __init__(self, agent: str, session: str, transcript: Transcript) -> None:
        self.agent = agent
        self.session = session  # the agent's own session id
        self.transcript = transcript
        self.target_uuid: str | None = None  # the message the checkpoint stands at (recorded in its note)
        self.leaf: str | None = None  # the last message kept (None: nothing is kept)
        self.cut: int | None = None  # lines kept, for agents whose file is cut
        self.prompt: str | None = None  # a prompt checkpoint's prompt, to send again
        self.fork = False
        self.empty = False  # nothing of the conversation is kept
        self.where = ""  # where the cut is, in words
        self.resource: object = None  # what the plan step opened for the apply step (OpenCode: its server)

    @property
    def kept_lines(self) -> int:
        """`cut`, for the agents that cut a file (their plan always sets it)."""
        if self.cut is None:
            raise RewindError(f"no cut was planned for {self.agent}")
        return self.cut


class Applied:
    """What a conversation rewind did: the session to resume and how."""

    __slots__ = ("session", "resume", "transcript", "detail")

    def __init__(self, session: str | None, resume: str, transcript: str | None, detail: str) -> None:
        self.session = session
        self.resume = resume
        self.transcript = transcript
        self.detail = detail

    def as_json(self) -> dict[str, Any]:
        return {"session": self.session, "resume": self.resume, "transcript": self.transcript,
                "detail": self.detail}


def append_line(path: str, obj: dict[str, Any], expected_size: int) -> None:
    """Append one JSON line in one write (O_APPEND: whole, even beside an agent appending its own).

    Lines the agent added since EXPECTED_SIZE are kept (they are after the cut point, so they
    only extend the dead branch); a file that shrank was rewritten meanwhile: refuse.
    """
    import stat

    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_NONBLOCK | os.O_CLOEXEC)  # never blocks on a FIFO
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise RewindError(f"{path} is not a regular file; nothing was appended")
        size = st.st_size
        if size < expected_size:
            raise RewindError(f"{path} was rewritten while rewinding (is the agent still running?); "
                              "nothing was appended")
        prefix = b"" if size == 0 or os.pread(fd, 1, size - 1) == b"\n" else b"\n"
        os.write(fd, prefix + json.dumps(obj, separators=(",", ":")).encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)


def backup_name(path: str) -> str:
    """The file name a transcript gets in its backup commit's tree."""
    return os.path.basename(path) or "transcript.jsonl"
