"""Agents' session transcripts (JSONL): reading them, finding a checkpoint's place, changing them safely.

A conversation rewind never loses a word: the transcript's full content goes into git first
(as the safety checkpoint's second parent, see store.Attachments), then the agent module
either appends a line the agent honours (Claude Code's `last-prompt`) or rewrites the file
through a temporary file and a rename. Everything here reads; agents/<agent>.py decides.

Every read and write of a transcript file goes through the agent's `Place`: only a file the
agent module recognises, at the agent's own location, in the agent's format, is ever touched.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from ..base.errors import RewindError


class Transcript:
    """One session file as it is now: its bytes, and each line parsed (None: not a JSON object).

    PLACE: the gate that read it from disk (None: built from what an agent's server answered, no file).
    The lines are parsed when first asked for: an agent whose file is not JSONL (Aider's markdown chat
    history) never pays for it (jsonlines takes ~11 s over 4 MiB of lines that are not JSON).
    """

    __slots__ = ("path", "data", "raw", "_lines", "ends", "place")

    def __init__(self, path: str, data: bytes, place: Place | None = None) -> None:
        self.path = path
        self.data = data
        self.place = place
        self.raw: list[bytes] = data.splitlines(keepends=True)
        self._lines: list[dict[str, Any] | None] | None = None
        self.ends: list[int] = []  # byte offset just past each line
        offset = 0
        for raw in self.raw:
            offset += len(raw)
            self.ends.append(offset)

    @property
    def lines(self) -> list[dict[str, Any] | None]:
        """Each line parsed: a JSON object, or None."""
        if self._lines is None:
            import jsonlines

            lines: list[dict[str, Any] | None] = []
            reader = jsonlines.Reader(self.raw)  # one line per read(); a bad line raises and is consumed
            for _raw in self.raw:
                try:
                    value = reader.read()
                except jsonlines.InvalidLineError:
                    value = None
                lines.append(value if isinstance(value, dict) else None)
            self._lines = lines
        return self._lines

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
                 "where", "resource", "already")

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
        self.already: int | None = None  # the safety checkpoint of an undo that already cut it here: nothing to do

    def close(self) -> None:
        """Let go of what planning opened (a server started for the rewind): after the apply step, a preview,
        or a failure. Closing twice is harmless."""
        close = getattr(self.resource, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> Plan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def kept_lines(self) -> int:
        """`cut`, for the agents that cut a file (their plan always sets it)."""
        if self.cut is None:
            raise RewindError(f"no cut was planned for {self.agent}")
        return self.cut


class Adopted:
    """A conversation handed over from another machine, now where this machine's agent looks for it."""

    __slots__ = ("path", "session", "how", "data", "place")

    def __init__(self, path: str, session: str, how: str, data: bytes, place: Place) -> None:
        self.path = path  # the agent's own file for this clone (never a path the sender named)
        self.session = session  # its session id: the sender's, or a new one when that would replace a file
        self.how = how  # "written", "kept" (already here), "extended" or "forked"
        self.data = data  # what the file holds (or would) from the handover
        self.place = place  # the gate it went through

    def discard(self) -> None:
        """Remove the file this handover created, while it still holds exactly what was written (a plan that
        failed after it: nothing is left changed); a file that was already here is never removed."""
        if self.how in ("written", "forked"):
            self.place.remove_created(self.path, self.data)


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


def uuid_chain(transcript: Transcript, leaf: str, parents: tuple[str, ...] = ("parentUuid",)) -> list[int]:
    """Line indexes of the messages from the root to LEAF, following each line's `uuid` to its parent (the first of
    PARENTS it has), in file order: what Claude Code and Qwen Code resume from a leaf. A message written on
    several lines (the same uuid) keeps them all; its parent is read from its first line, as Qwen Code does."""
    lines: dict[str, list[int]] = {}
    for i, line in enumerate(transcript.lines):
        if line is not None and isinstance(line.get("uuid"), str) and line["uuid"]:
            lines.setdefault(line["uuid"], []).append(i)
    kept: list[int] = []
    seen: set[str] = set()
    uuid: str | None = leaf
    while uuid and uuid in lines and uuid not in seen:
        seen.add(uuid)
        kept.extend(lines[uuid])
        first = transcript.at(lines[uuid][0])
        uuid = next((first[key] for key in parents if isinstance(first.get(key), str) and first[key]), None)
    return sorted(kept)


def jsonl_problem(transcript: Transcript, keys: tuple[str, ...]) -> str | None:
    """Why TRANSCRIPT is not JSONL whose every line is an object with one of KEYS (None: it is).

    A last line without its newline may be one the agent is writing: it is not judged.
    """
    complete = len(transcript.raw) - (0 if transcript.data.endswith(b"\n") else 1)
    if complete <= 0:
        return "no complete line"
    for number in range(complete):
        line = transcript.lines[number]
        if not transcript.raw[number].strip():
            continue
        if line is None:
            return f"line {number + 1} is not a JSON object"
        if not any(key in line for key in keys):
            return f"line {number + 1} has none of the keys {', '.join(keys)}"
    return None


class Place:
    """Where one agent keeps its transcripts and how one looks: the one gate every transcript read and write
    passes (agents.base.Agent.transcripts builds it from what the agent declares).

    A note names its transcript by path, and a note is only data (a hook payload, something anyone could
    write into refs/notes/rewind): nothing is read, backed up or written unless the path is below one of
    the agent's own FOLDERS (links in the folders resolved), is named *SUFFIX, is a regular file and not a
    symbolic link, and its content passes the agent's format CHECK (why not, or None).
    """

    __slots__ = ("agent", "what", "folders", "check", "suffix")

    def __init__(self, agent: str, what: str, folders: tuple[str, ...],
                 check: Callable[[Transcript], str | None], suffix: str = ".jsonl") -> None:
        self.agent = agent
        self.what = what  # "Claude Code transcript"
        self.folders = folders
        self.check = check
        self.suffix = suffix

    def _where(self) -> str:
        return " or ".join(self.folders) if self.folders else "nowhere: git-rewind writes no file of this agent"

    def resolve(self, path: str | None, suffix: str | None = None) -> str:
        """PATH, its folders' links resolved, once it is a name this agent's transcripts may have.

        A missing file is fine here (a fork writes a new one); a link or anything but a regular file is not.
        """
        import stat

        from ..base.fsutil import within

        if not path:
            raise RewindError(f"the checkpoint records no {self.what} path")
        real = within(os.path.expanduser(path), self.folders)
        if real is None:
            raise RewindError(f"{path} is not a {self.what}: it is not under {self._where()}; nothing was changed")
        if not real.endswith(self.suffix if suffix is None else suffix):
            raise RewindError(f"{path} is not a {self.what} (not a *{self.suffix} file); nothing was changed")
        try:
            mode = os.lstat(real).st_mode
        except FileNotFoundError:
            return real
        except OSError as exc:
            raise RewindError(f"cannot read {self.what} {path}: {exc.strerror}") from None
        if stat.S_ISLNK(mode):
            raise RewindError(f"{path} is a symbolic link, not a {self.what}; nothing was changed")
        if not stat.S_ISREG(mode):
            raise RewindError(f"{self.what} is not a regular file: {path}; nothing was changed")
        return real

    def _checked(self, path: str, data: bytes) -> Transcript:
        transcript = Transcript(path, data, self)
        problem = self.check(transcript)
        if problem:
            raise RewindError(f"{path} is not a {self.what} ({problem}); nothing was changed")
        return transcript

    def load(self, path: str | None) -> Transcript:
        """The transcript at PATH, after every check; one clear error otherwise (nothing was read into git)."""
        from ..base.fsutil import NotRegular, read_regular

        real = self.resolve(path)
        try:
            data = read_regular(real, nofollow=True)  # the last component is checked again as it is opened
        except NotRegular:
            raise RewindError(f"{self.what} is not a regular file: {path}; nothing was changed") from None
        except FileNotFoundError:
            raise RewindError(f"{self.what} not found: {path} (moved or deleted?)") from None
        except OSError as exc:
            raise RewindError(f"cannot read {self.what} {path}: {exc.strerror}") from None
        return self._checked(str(path), data)

    def load_if_present(self, path: str | None) -> Transcript | None:
        """load, but None when the file is gone (its name still has to be one the agent's could have)."""
        if not os.path.lexists(self.resolve(path)):
            return None
        return self.load(path)

    def write(self, path: str, data: bytes, like: str | None = None) -> str:
        """Replace (or create) the transcript PATH with DATA, which must itself be one of the agent's (and so
        must what it replaces)."""
        real = self.resolve(path)
        self.load_if_present(path)
        self._checked(path, data)
        return self._write(real, data, like)

    @staticmethod
    def _write(real: str, data: bytes, like: str | None) -> str:
        """Write atomically, first sweeping what a killed rewind left in the folder (its temporary file)."""
        from ..base.fsutil import sweep_temporaries, write_atomic

        sweep_temporaries(os.path.dirname(real))
        return write_atomic(real, data, like=like, new_mode=0o600, sync=True)

    def create(self, path: str, data: bytes) -> str:
        """Write DATA as the new transcript PATH, which must not exist (a handed-over conversation never
        replaces a file: handoff.py decides where it goes); its folders are made as needed (mode 0700)."""
        from ..base.fsutil import write_new

        real = self.resolve(path)
        self._checked(path, data)
        os.makedirs(os.path.dirname(real), mode=0o700, exist_ok=True)
        if self.resolve(path) != real:  # a folder made meanwhile is a link leading elsewhere
            raise RewindError(f"{path} moved while it was being written; nothing was written")
        try:
            return write_new(real, data, new_mode=0o600)
        except FileExistsError:
            raise RewindError(f"{path} appeared while it was being written; it was left as it is") from None

    def remove_created(self, path: str, data: bytes) -> None:
        """Remove the transcript PATH if it holds exactly DATA (what this process created moments ago)."""
        from ..base.fsutil import read_regular

        real = self.resolve(path)
        try:
            if read_regular(real, nofollow=True) == data:
                os.unlink(real)
        except OSError:
            pass

    def read_small(self, path: str, limit: int = 1 << 16) -> bytes | None:
        """A small file of the agent's own below its folders that is not a transcript (Gemini's project marker):
        None when missing, b"" when it is not a regular file or cannot be read."""
        from ..base.fsutil import read_regular

        try:
            return read_regular(self.resolve(path, suffix=""), limit, nofollow=True)
        except FileNotFoundError:
            return None
        except (OSError, RewindError):
            return b""

    def mark(self, path: str, data: bytes) -> bool:
        """Create the small file PATH below the agent's folders (not a transcript: Gemini's project marker) when
        it is not there; False when it already was (never replaced)."""
        from ..base.fsutil import write_new

        real = self.resolve(path, suffix="")
        os.makedirs(os.path.dirname(real), mode=0o700, exist_ok=True)
        try:
            write_new(real, data, new_mode=0o644)
        except FileExistsError:
            return False
        return True

    def read_beside(self, transcript: Transcript, name: str) -> bytes | None:
        """The file NAME beside TRANSCRIPT (an agent's own side file), when it is a regular file."""
        from ..base.fsutil import read_regular

        real = self.resolve(os.path.join(os.path.dirname(transcript.path), name), suffix="")
        try:
            return read_regular(real, nofollow=True)
        except OSError:
            return None

    def write_beside(self, transcript: Transcript, name: str, data: bytes) -> str:
        """Create the side file NAME beside TRANSCRIPT (Droid's settings of a forked session)."""
        real = self.resolve(os.path.join(os.path.dirname(transcript.path), name), suffix="")
        return self._write(real, data, transcript.path)

    def append(self, transcript: Transcript, obj: dict[str, Any]) -> None:
        """Append OBJ as one line to TRANSCRIPT, which this gate read (see append_line)."""
        if transcript.place is not self:
            raise RewindError(f"{transcript.path} was not read as a {self.what}; nothing was appended")
        from ..base.fsutil import sweep_temporaries

        real = self.resolve(transcript.path)
        sweep_temporaries(os.path.dirname(real))
        append_line(real, obj, len(transcript.data))


def append_line(path: str, obj: dict[str, Any], expected_size: int) -> None:
    """Append one JSON line in one write (O_APPEND: whole, even beside an agent appending its own).

    Lines the agent added since EXPECTED_SIZE are kept (they are after the cut point, so they
    only extend the dead branch); a file that shrank was rewritten meanwhile: refuse.
    """
    import stat

    # Never blocks on a FIFO, never follows a link.
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
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
