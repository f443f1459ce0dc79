"""`git rewind blame`: who put each line of a file there, told by git's own blame.

The work tree's checkpoints, in seq order across its sessions, become a linear history made for
the purpose: one synthetic commit holding only the file each time its content changed (a merge
with the restored checkpoint's commit after an undo, so restored lines keep their authors), then
one holding the file as it is now. `git blame` of that last commit gives, for every line, the
checkpoint that first held it; the checkpoint's note (`origins`, `turn`) says who made that change.

The synthetic objects go into a temporary object directory under .git/rewind/ (the real objects
reached as alternates), removed afterwards: blame leaves nothing in the user's object store, and
no index, HEAD or ref is read or written.
"""

from __future__ import annotations

import os

from ..base import layout
from ..base.errors import NO_CHECKPOINTS, RewindError
from ..base.note import AGENT, OUTSIDE
from ..base.repo import SCRATCH_BLAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..base.gitcmd import FastImport
    from ..base.note import Json
    from ..base.repo import Repo
    from ..base.turns import Turn
    from ..store.checkpoints import Checkpoint

BASE = "base"  # a line older than the file's first checkpoint
BINARY_PROBE = 8000  # bytes git looks at for a NUL to call a file binary
_REF = SCRATCH_BLAME  # fast-import needs a branch name; it is reset at the end, never written
_UNKNOWN_HINT = "minimal tier, or checkpoints from before origins were recorded"


class Line:
    """One line of the file as it is now, and who put it there (None: unknown, or not from a checkpoint)."""

    __slots__ = ("line", "text", "origin", "seq", "session", "agent", "tool", "prompt", "created")
    KEYS = ("line", "text", "origin", "seq", "session", "agent", "tool", "prompt", "created")

    def __init__(self, line: int, text: str, origin: str | None, seq: int | None = None,
                 session: str | None = None, agent: str | None = None, tool: str | None = None,
                 prompt: str | None = None, created: str | None = None) -> None:
        self.line = line  # 1-based
        self.text = text  # without its line ending
        self.origin = origin  # "agent", "outside", "base", or None (unknown: no origins recorded for the step)
        self.seq = seq  # the checkpoint that first held it (None: base, or changed since the newest one)
        self.session = session
        self.agent = agent
        self.tool = tool
        self.prompt = prompt
        self.created = created

    def to_json(self) -> dict[str, Json]:
        return {key: getattr(self, key) for key in self.KEYS}


class Result:
    """The blame of one file: its lines, and how many of them come from checkpoints without origins."""

    __slots__ = ("path", "lines", "unknown")

    def __init__(self, path: str, lines: list[Line]) -> None:
        self.path = path
        self.lines = lines
        self.unknown = sum(1 for line in lines if line.origin is None)

    @property
    def warning(self) -> str | None:
        """One line for stderr when some lines' origin is unknown."""
        if not self.unknown:
            return None
        return (f"{self.unknown} line{'s' if self.unknown != 1 else ''} of {self.path} come from checkpoints "
                f"whose origins are unknown ({_UNKNOWN_HINT}, or one deleted before them): origin null")


def blame(repo: Repo, path: str, now: float) -> Result:
    """Who put each line of PATH (relative to the work tree's root, '/'-separated) there; NOW decides whether
    lines changed since the newest checkpoint are an agent's (a turn is running) or from outside."""
    import shutil

    from ..base.fsutil import scratch_dir
    from ..store import checkpoints

    _check_file(repo, path)
    items = checkpoints.of_worktree(checkpoints.load_all(repo), repo.worktree)
    if not items:
        raise RewindError("no checkpoints yet in this work tree: nothing to blame against", remedy=NO_CHECKPOINTS)
    repo.ensure_dirs()
    quarantine = scratch_dir(repo.rewind_dir, layout.SCRATCH_BLAME)
    try:
        os.mkdir(os.path.join(quarantine, "pack"))
        env = _quarantine_env(repo, quarantine)
        history = _History(repo, path, items, env)
        history.build()
        if not history.changed and _ignored(repo, path):
            raise RewindError(f"{path} is ignored: git rewind keeps no history of ignored files")
        commits = _blame(repo, path, history.final, env)
    finally:
        shutil.rmtree(quarantine, ignore_errors=True)
    return Result(path, _lines(repo, path, history, commits, now))


def _check_file(repo: Repo, path: str) -> None:
    """A regular text file of the work tree, or a one-line error saying what PATH is instead."""
    import stat

    full = os.path.join(repo.root, path)
    try:
        info = os.lstat(full)
    except FileNotFoundError:
        raise RewindError(f"{path or '.'} does not exist in the working tree "
                          "(git rewind files ID --all lists what a checkpoint holds)") from None
    if stat.S_ISLNK(info.st_mode):
        raise RewindError(f"{path} is a symbolic link: blame reads files")
    if stat.S_ISDIR(info.st_mode):
        raise RewindError(f"{path or '.'} is a directory: blame reads one file")
    if not stat.S_ISREG(info.st_mode):
        raise RewindError(f"{path} is not a regular file")
    with open(full, "rb") as fh:
        if b"\0" in fh.read(BINARY_PROBE):
            raise RewindError(f"{path} is a binary file: blame reads text")


def _ignored(repo: Repo, path: str) -> bool:
    """PATH is ignored (asked only of a file no checkpoint ever held)."""
    import subprocess

    return subprocess.run(["git", "check-ignore", "-q", "--", path], cwd=repo.root, capture_output=True).returncode == 0


def _quarantine_env(repo: Repo, quarantine: str) -> dict[str, str]:
    """git writes new objects into QUARANTINE and reads the repository's own (and its alternates) beside them."""
    objects = os.environ.get("GIT_OBJECT_DIRECTORY") or os.path.join(repo.commondir, "objects")
    alternates = [objects] + [p for p in os.environ.get("GIT_ALTERNATE_OBJECT_DIRECTORIES", "").split(os.pathsep)
                              if p]
    return {"GIT_OBJECT_DIRECTORY": quarantine, "GIT_ALTERNATE_OBJECT_DIRECTORIES": os.pathsep.join(alternates)}


class _History:
    """The synthetic linear history of one file, written through one fast-import: which commit is which."""

    def __init__(self, repo: Repo, path: str, items: list[Checkpoint], env: dict[str, str]) -> None:
        self.repo = repo
        self.path = path
        self.items = items
        self.env = env
        self.by_commit: dict[str, Checkpoint | None] = {}  # synthetic commit -> its checkpoint (None: base)
        self.first: str | None = None  # the commit of the earliest checkpoint holding the file
        self.final = ""  # the commit holding the file as it is now
        self.changed: list[Checkpoint] = []  # the checkpoints at which the file's content changed
        self._marks: dict[int, Checkpoint | None] = {}
        self._first_mark: int | None = None
        self._at: list[tuple[int, int]] = []  # (seq, the mark current from that checkpoint on)
        self._prior = {item.seq: before.seq for before, item in zip(items, items[1:], strict=False)}

    def origins(self, item: Checkpoint) -> dict[str, str] | None:
        """ITEM's origins when they cover the step from the work tree's checkpoint before it (None: unknown).

        Origins computed against another checkpoint (one deleted or gc'd in between, or none known then)
        cover part of the change only.
        """
        note = item.note
        prior = self._prior.get(item.seq)
        if prior is not None and note.origins_since != prior:
            return None
        return note.origins

    def build(self) -> None:
        from ..base.gitcmd import FastImport

        now_blob = self._hash_now()
        raw = os.fsencode(self.path)
        with FastImport(self.repo.root, env=self.env) as fi:
            previous: str | None = None
            mark = 0
            restored: int | None = None  # the seq an undo just restored: the next change merges from it
            answers = fi.ls_many([(item.commit, raw) for item in self.items])
            for item, found in zip(self.items, answers, strict=True):
                blob = found[1] if found is not None and found[0] != 0o160000 else None
                if blob != previous and (blob is not None or mark):
                    if mark == 0 and blob is not None:
                        mark = self._base_from_head(fi, item, blob)
                    merge = self._mark_at(restored) if restored is not None else None
                    mark = self._commit(fi, mark, item, blob, merge)
                    if self._first_mark is None and blob is not None:
                        self._first_mark = mark
                    self.changed.append(item)
                    previous = blob
                restored = item.note.rewind.to if item.note.rewind is not None and item.note.rewind.code else None
                if mark:
                    self._at.append((item.seq, mark))
            mark = self._commit(fi, mark, None, now_blob, None)
            oids = dict(zip(self._marks, fi.get_marks(list(self._marks)), strict=True))
            fi.write(f"reset {_REF}\n\n".encode())  # no ref is written when the stream ends
        self.by_commit = {oids[m]: item for m, item in self._marks.items()}
        self.first = oids[self._first_mark] if self._first_mark is not None else None
        self.final = oids[mark]

    def _hash_now(self) -> str:
        """The file as a checkpoint would store it now (`git add` with the user's index: its clean filter and eol
        conversion, CRLF kept where the index's blob has it), in the quarantine."""
        from ..store import conversion

        scratch = os.path.join(self.env["GIT_OBJECT_DIRECTORY"], "index")
        found = conversion.hash_as_added(self.repo, [self.path], scratch, self.env).get(self.path)
        if found is None:
            raise RewindError(f"{self.path} went away while it was blamed")
        return found[1]

    def _base_from_head(self, fi: FastImport, item: Checkpoint, blob: str) -> int:
        """When the work tree's first checkpoint records the file as changed, the file as HEAD held it then
        (what that checkpoint was compared with) becomes a base commit before it; returns the mark used (0: none)."""
        note = item.note
        if item is not self.items[0] or not note.origins or self.path not in note.origins or not note.head:
            return 0
        if not self.repo.git(["rev-parse", "-q", "--verify", note.head + "^{commit}"], check=False).strip():
            return 0  # HEAD moved on and its commit was pruned
        found = fi.ls(note.head, os.fsencode(self.path))
        if found is None or found[0] == 0o160000 or found[1] == blob:
            return 0
        self._marks[1] = None
        self._emit(fi, 1, 0, note.created, "base", found[1], None)
        return 1

    def _mark_at(self, seq: int) -> int | None:
        """The mark holding the file as checkpoint SEQ had it (None: not in this history)."""
        marks = [mark for at, mark in self._at if at <= seq]
        return marks[-1] if marks else None

    def _commit(self, fi: FastImport, parent: int, item: Checkpoint | None, blob: str | None,
                merge: int | None) -> int:
        mark = parent + 1
        self._marks[mark] = item
        when = item.note.created if item is not None else None
        message = f"#{item.seq}" if item is not None else "not yet checkpointed"
        self._emit(fi, mark, parent, when, message, blob, merge if merge != parent else None)
        return mark

    def _emit(self, fi: FastImport, mark: int, parent: int, created: str | None, message: str, blob: str | None,
              merge: int | None) -> None:
        from ..base.clock import parse_utc
        from ..base.gitcmd import quote_path

        stamp = int(parse_utc(created) or 0)
        body = message.encode()
        fi.commit(_REF, body, stamp, mark=mark, parents=[f":{p}" for p in (parent, merge) if p])
        path = quote_path(os.fsencode(self.path))
        fi.write(b"M 100644 " + blob.encode() + b" " + path + b"\n" if blob is not None else b"D " + path + b"\n")
        fi.write(b"\n")


def _blame(repo: Repo, path: str, final: str, env: dict[str, str]) -> list[tuple[str, bytes]]:
    """(commit, text) of each line of PATH in FINAL, from `git blame --porcelain`."""
    # --no-ignore-revs-file: a blame.ignoreRevsFile of the user's names commits of their own history (a missing
    # one would even fail the blame).
    out = repo.git(["blame", "--porcelain", "--no-ignore-revs-file", final, "--", path], env=env)
    found: list[tuple[str, bytes]] = []
    commit: str | None = None
    for row in out.split(b"\n"):
        if commit is None:
            if row:
                commit = row.split(b" ", 1)[0].decode()
        elif row.startswith(b"\t"):
            found.append((commit, row[1:]))
            commit = None
    return found


def _lines(repo: Repo, path: str, history: _History, commits: list[tuple[str, bytes]], now: float) -> list[Line]:
    from ..base import turns

    known = [c for c in history.changed if history.origins(c) is not None]
    if history.changed and not known:
        raise RewindError(f"attribution is unknown for {path}: none of its checkpoints recorded origins "
                          f"({_UNKNOWN_HINT})")
    running = turns.running(repo, now)
    lines = []
    for number, (commit, raw) in enumerate(commits, 1):
        text = raw[:-1] if raw.endswith(b"\r") else raw
        line = Line(number, text.decode("utf-8", "replace"), None)
        if commit == history.final:
            _since_newest(line, path, running[0] if running else None)
        elif commit not in history.by_commit or history.by_commit[commit] is None:
            line.origin = BASE
        else:
            item = history.by_commit[commit]
            assert item is not None
            _from_checkpoint(line, path, item, history.origins(item), first=commit == history.first)
        lines.append(line)
    return lines


def _since_newest(line: Line, path: str, turn: Turn | None) -> None:
    """A line changed since the newest checkpoint: the running turn's, else from outside."""
    if turn is None:
        line.origin = OUTSIDE
        return
    line.origin, line.session, line.agent, line.prompt = AGENT, turn.session, turn.agent, turn.prompt
    line.tool = turn.tools.get(path)


def _from_checkpoint(line: Line, path: str, item: Checkpoint, origins: dict[str, str] | None, first: bool) -> None:
    """A line checkpoint ITEM first held: PATH's origin in ORIGINS (the note's, when they cover its step); lines
    the file's first checkpoint already held are base, unless that checkpoint records the file as changed."""
    note = item.note
    origin = origin_of(origins, note.origins_omitted, path)
    if first and origin is None:
        line.origin = BASE
        return
    line.origin, line.seq, line.created = origin, item.seq, note.created
    if origin == AGENT and note.turn is not None:
        turn = note.turn
        tools = turn.get("tools")
        line.session, line.agent, line.prompt = _text(turn.get("session")), _text(turn.get("agent")), \
            _text(turn.get("prompt"))
        line.tool = _text(tools.get(path)) if isinstance(tools, dict) else None


def origin_of(origins: dict[str, str] | None, omitted: int | None, path: str) -> str | None:
    """PATH's origin in a note (None: unknown). Paths left out past the note's limit share the listed ones' origin."""
    if origins is None:
        return None
    if path in origins:
        return origins[path]
    values = set(origins.values())
    if omitted and len(values) == 1:
        return values.pop()
    return None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
