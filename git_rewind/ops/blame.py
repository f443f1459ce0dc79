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
    from collections.abc import Mapping, Sequence

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

    __slots__ = ("line", "text", "origin", "seq", "session", "agent", "tool", "prompt", "created", "commit",
                 "checkpoint", "model", "noted")
    KEYS = ("line", "text", "origin", "seq", "session", "agent", "tool", "prompt", "created")

    def __init__(self, line: int, text: str, origin: str | None, seq: int | None = None,
                 session: str | None = None, agent: str | None = None, tool: str | None = None,
                 prompt: str | None = None, created: str | None = None) -> None:
        self.line = line  # 1-based
        self.text = text  # without its line ending
        # "agent", "outside", "base", None (unknown: no origins recorded for the step), or for a committed line
        # whose author the commit's authorship note gives: "agent" or "person"
        self.origin = origin
        self.seq = seq  # the checkpoint that first held it (None: base, or changed since the newest one)
        self.session = session
        self.agent = agent
        self.tool = tool
        self.prompt = prompt
        self.created = created
        self.commit: str | None = None  # the commit git's blame names for a committed line
        self.checkpoint: str | None = None  # the commit of checkpoint SEQ (for the authorship notes)
        self.model: str | None = None  # the agent's model, where the checkpoint's data says it
        self.noted = False  # who wrote it comes from COMMIT's authorship note, not from the checkpoints

    def to_json(self) -> dict[str, Json]:
        found: dict[str, Json] = {key: getattr(self, key) for key in self.KEYS}
        if self.commit is not None:
            found["commit"] = self.commit
        if self.model is not None:
            found["model"] = self.model
        return found


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
    lines changed since the newest checkpoint are an agent's (a turn is running) or from outside. Lines git's
    own blame finds committed carry their commit, and where the checkpoints do not know their author (older
    than them, or from outside) the commit's authorship note says who wrote them."""
    from ..store import checkpoints

    _check_file(repo, path)
    items = checkpoints.of_worktree(checkpoints.load_all(repo), repo.worktree)
    if not items:
        raise RewindError("no checkpoints yet in this work tree: nothing to blame against", remedy=NO_CHECKPOINTS)
    engine = Engine(repo, items, now)
    try:
        history = engine.history(path, None)
        if not history.changed and _ignored(repo, path):
            raise RewindError(f"{path} is ignored: git rewind keeps no history of ignored files")
        known = [c for c in history.changed if history.origins(c) is not None]
        if history.changed and not known:
            raise RewindError(f"attribution is unknown for {path}: none of its checkpoints recorded origins "
                              f"({_UNKNOWN_HINT})")
        lines = engine.lines(history)
    finally:
        engine.close()
    _committed(repo, path, lines)
    return Result(path, lines)


def blame_blobs(repo: Repo, blobs: dict[str, str], now: float) -> dict[str, list[Line]]:
    """Who put each line of each blob there, as `blame` would say of a work tree holding it at PATH (BLOBS:
    path -> blob id, text files): the one engine, sharing the checkpoints' reading, one object directory and
    one fast-import across the files. What the commit hook asks of the content it commits. With no
    checkpoints every line is since the newest one (the running turn's, else from outside)."""
    from ..store import checkpoints

    items = checkpoints.of_worktree(checkpoints.load_all(repo), repo.worktree)
    engine = Engine(repo, items, now) if items else None
    try:
        histories = engine.histories(blobs) if engine is not None else {}
        found = engine.lines_of([h for h in histories.values() if h.by_commit.keys() - {h.final}]) \
            if engine is not None else {}
        rest = [path for path in blobs if path not in found]  # no checkpoint holds them: no blame needed
        if rest:
            from ..base import turns
            from ..base.gitcmd import cat_file

            running = turns.running(repo, now) if engine is None else None
            turn = engine.turn if engine is not None else (running[0] if running else None)
            for path, blob in zip(rest, cat_file([blobs[p] for p in rest], repo.root), strict=True):
                found[path] = _unblamed(path, blob[1] if blob is not None else b"", turn)
        return found
    finally:
        if engine is not None:
            engine.close()


def _unblamed(path: str, content: bytes, turn: Turn | None) -> list[Line]:
    """CONTENT's lines, all changed since the newest checkpoint (what git's blame says of a file no checkpoint
    holds, without running it)."""
    rows = content.split(b"\n")  # as git's blame counts lines
    if rows[-1] == b"":
        rows.pop()
    lines = []
    for number, raw in enumerate(rows, 1):
        line = Line(number, (raw[:-1] if raw.endswith(b"\r") else raw).decode("utf-8", "replace"), None)
        _since_newest(line, path, turn)
        lines.append(line)
    return lines


class Engine:
    """git's blame over the work tree's checkpoints (ITEMS), for one file or several: a quarantined object
    directory, the synthetic histories written through one fast-import, `git blame` of each."""

    def __init__(self, repo: Repo, items: list[Checkpoint], now: float) -> None:
        from ..base import turns
        from ..base.fsutil import scratch_dir

        self.repo = repo
        self.items = items
        repo.ensure_dirs()
        self.quarantine = scratch_dir(repo.rewind_dir, layout.SCRATCH_BLAME)
        os.mkdir(os.path.join(self.quarantine, "pack"))
        self.env = _quarantine_env(repo, self.quarantine)
        running = turns.running(repo, now)
        self.turn = running[0] if running else None

    def close(self) -> None:
        import shutil

        shutil.rmtree(self.quarantine, ignore_errors=True)

    def history(self, path: str, blob: str | None) -> _History:
        """PATH's synthetic history ending in BLOB (None: the work tree's file as `git add` would store it)."""
        return self.histories({path: blob})[path]

    def histories(self, blobs: Mapping[str, str | None]) -> dict[str, _History]:
        """Each path's synthetic history ending in its blob (None: the work tree's file), in one fast-import."""
        from ..base.gitcmd import FastImport

        found = {}
        states = self._states(list(blobs)) if len(blobs) > 1 else {}
        with FastImport(self.repo.root, env=self.env) as fi:
            base = 0
            for number, (path, blob) in enumerate(blobs.items()):
                history = _History(self.repo, path, self.items, self.env, base, f"{_REF}-{number}")
                history.build(fi, blob, states.get(path))
                base = history.top
                found[path] = history
            marks = [m for h in found.values() for m in h.marks]
            oids = dict(zip(marks, fi.get_marks(marks), strict=True))
            for number in range(len(found)):
                fi.write(f"reset {_REF}-{number}\n\n".encode())  # no ref is written when the stream ends
        for history in found.values():
            history.resolve(oids)
        return found

    def _states(self, paths: list[str]) -> dict[str, list[tuple[int, str] | None]]:
        """(mode, object) of each of PATHS in every checkpoint, oldest first (None: absent), for several files at
        once: the first checkpoint's `ls-tree` and one `diff-tree --stdin` of each checkpoint against the one
        before, instead of one `ls` per file and checkpoint (7,000 for 100 files over 70 checkpoints: ~0.5 s).
        Empty where a command line of PATHS would be too long: then each history asks fast-import."""
        if not self.items or len(paths) > 500:
            return {}
        env = {"GIT_LITERAL_PATHSPECS": "1"}
        current: dict[str, tuple[int, str] | None] = dict.fromkeys(paths)
        listed = self.repo.git(["ls-tree", "-r", "-z", self.items[0].commit, "--", *paths], env=env)
        for record in listed.split(b"\0"):
            if record:
                meta, _, name = record.partition(b"\t")
                mode, _kind, oid = meta.split()
                current[name.decode("utf-8", "surrogateescape")] = (int(mode, 8), oid.decode())
        steps = zip(self.items, self.items[1:], strict=False)
        pairs = "".join(f"{item.commit} {before.commit}\n" for before, item in steps)
        out = self.repo.git(["diff-tree", "--stdin", "-r", "-z", "--no-renames", "--", *paths], env=env,
                            input=pairs.encode()) if pairs else b""
        changes: dict[str, list[tuple[str, tuple[int, str] | None]]] = {}
        tokens = out.split(b"\0")
        at, i = "", 0
        while i < len(tokens):
            token = tokens[i]
            if token.startswith(b":"):
                _old, mode, _was, oid, _status = token[1:].split(b" ")
                path = tokens[i + 1].decode("utf-8", "surrogateescape")
                state = (int(mode, 8), oid.decode()) if int(mode, 8) else None
                changes.setdefault(at, []).append((path, state))
                i += 2
                continue
            if token:
                at = token.decode()  # the checkpoint whose changes against the one before follow
            i += 1
        found: dict[str, list[tuple[int, str] | None]] = {path: [current[path]] for path in paths}
        for item in self.items[1:]:
            for path, state in changes.get(item.commit, ()):
                if path in current:
                    current[path] = state
            for path in paths:
                found[path].append(current[path])
        return found

    def lines(self, history: _History) -> list[Line]:
        commits = _blame(self.repo, history.path, history.final, self.env)
        return _lines(history, commits, self.turn)

    def lines_of(self, histories: list[_History]) -> dict[str, list[Line]]:
        """`lines` of several histories, their `git blame`s run side by side (as many at once as there are CPUs)."""
        from ..base.gitcmd import Background

        found: dict[str, list[Line]] = {}
        width = max(1, os.cpu_count() or 1)
        for start in range(0, len(histories), width):
            batch = histories[start:start + width]
            running = [Background(_blame_args(h.final, h.path), cwd=self.repo.root, env=self.env) for h in batch]
            for history, job in zip(batch, running, strict=True):
                found[history.path] = _lines(history, _parse_blame(job.result()), self.turn)
        return found


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
    # fastimport.unpackLimit=0: fast-import's objects stay one pack, with no `unpack-objects` process after it (the
    # quarantine goes whole; ~20 ms of each blame)
    found = {"GIT_OBJECT_DIRECTORY": quarantine, "GIT_ALTERNATE_OBJECT_DIRECTORIES": os.pathsep.join(alternates)}
    count = int(os.environ.get("GIT_CONFIG_COUNT") or 0)  # settings given this way before ours are kept
    found.update({"GIT_CONFIG_COUNT": str(count + 1), f"GIT_CONFIG_KEY_{count}": "fastimport.unpackLimit",
                  f"GIT_CONFIG_VALUE_{count}": "0"})
    return found


class _History:
    """The synthetic linear history of one file, written through one fast-import: which commit is which."""

    def __init__(self, repo: Repo, path: str, items: list[Checkpoint], env: dict[str, str], base: int = 0,
                 ref: str = _REF) -> None:
        self.repo = repo
        self.base = base  # its marks are above BASE: several histories share one fast-import
        self.ref = ref
        self.top = base  # the highest mark used
        self.path = path
        self.items = items
        self.env = env
        self.by_commit: dict[str, Checkpoint | None] = {}  # synthetic commit -> its checkpoint (None: base)
        self.first: str | None = None  # the commit of the earliest checkpoint holding the file
        self.final = ""  # the commit holding the file as it is now
        self.changed: list[Checkpoint] = []  # the checkpoints at which the file's content changed
        self._marks: dict[int, Checkpoint | None] = {}
        self._first_mark: int | None = None
        self._final_mark = 0
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

    @property
    def marks(self) -> list[int]:
        return list(self._marks)

    def build(self, fi: FastImport, blob: str | None, states: Sequence[tuple[int, str] | None] | None = None) -> None:
        """Write the history into FI, ending in BLOB (None: the work tree's file now); STATES: the file's (mode,
        object) in each checkpoint when the caller knows them (else fast-import is asked)."""
        now_blob = blob if blob is not None else self._hash_now()
        raw = os.fsencode(self.path)
        previous: str | None = None
        mark = self.base
        restored: int | None = None  # the seq an undo just restored: the next change merges from it
        answers = states if states is not None else fi.ls_many([(item.commit, raw) for item in self.items])
        for item, found in zip(self.items, answers, strict=True):
            blob = found[1] if found is not None and found[0] != 0o160000 else None
            if blob != previous and (blob is not None or mark != self.base):
                if mark == self.base and blob is not None:
                    mark = self._base_from_head(fi, item, blob)
                merge = self._mark_at(restored) if restored is not None else None
                mark = self._commit(fi, mark, item, blob, merge)
                if self._first_mark is None and blob is not None:
                    self._first_mark = mark
                self.changed.append(item)
                previous = blob
            restored = item.note.rewind.to if item.note.rewind is not None and item.note.rewind.code else None
            if mark != self.base:
                self._at.append((item.seq, mark))
        self._final_mark = self._commit(fi, mark, None, now_blob, None)
        self.top = self._final_mark

    def resolve(self, oids: Mapping[int, str]) -> None:
        """Learn the commits fast-import made for the marks (OIDS: every mark's)."""
        self.by_commit = {oids[m]: item for m, item in self._marks.items()}
        self.first = oids[self._first_mark] if self._first_mark is not None else None
        self.final = oids[self._final_mark]

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
        (what that checkpoint was compared with) becomes a base commit before it; returns the mark used (BASE: none)."""
        note = item.note
        if item is not self.items[0] or not note.origins or self.path not in note.origins or not note.head:
            return self.base
        if not self.repo.git(["rev-parse", "-q", "--verify", note.head + "^{commit}"], check=False).strip():
            return self.base  # HEAD moved on and its commit was pruned
        found = fi.ls(note.head, os.fsencode(self.path))
        if found is None or found[0] == 0o160000 or found[1] == blob:
            return self.base
        mark = self.base + 1
        self._marks[mark] = None
        self._emit(fi, mark, 0, note.created, "base", found[1], None)
        return mark

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
        self._emit(fi, mark, parent if parent != self.base else 0, when, message, blob,
                   merge if merge != parent else None)
        return mark

    def _emit(self, fi: FastImport, mark: int, parent: int, created: str | None, message: str, blob: str | None,
              merge: int | None) -> None:
        from ..base.clock import parse_utc
        from ..base.gitcmd import quote_path

        stamp = int(parse_utc(created) or 0)
        body = message.encode()
        fi.commit(self.ref, body, stamp, mark=mark, parents=[f":{p}" for p in (parent, merge) if p])
        path = quote_path(os.fsencode(self.path))
        fi.write(b"M 100644 " + blob.encode() + b" " + path + b"\n" if blob is not None else b"D " + path + b"\n")
        fi.write(b"\n")


def _blame(repo: Repo, path: str, final: str, env: dict[str, str]) -> list[tuple[str, bytes]]:
    """(commit, text) of each line of PATH in FINAL, from `git blame --porcelain`."""
    return _parse_blame(repo.git(_blame_args(final, path), env=env))


def _blame_args(final: str, path: str) -> list[str]:
    # --no-ignore-revs-file: a blame.ignoreRevsFile of the user's names commits of their own history (a missing
    # one would even fail the blame).
    return ["blame", "--porcelain", "--no-ignore-revs-file", final, "--", path]


def _parse_blame(out: bytes) -> list[tuple[str, bytes]]:
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


def _lines(history: _History, commits: list[tuple[str, bytes]], turn: Turn | None) -> list[Line]:
    path = history.path
    lines = []
    for number, (commit, raw) in enumerate(commits, 1):
        text = raw[:-1] if raw.endswith(b"\r") else raw
        line = Line(number, text.decode("utf-8", "replace"), None)
        if commit == history.final:
            _since_newest(line, path, turn)
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
    line.origin, line.seq, line.created, line.checkpoint = origin, item.seq, note.created, item.commit
    if origin == AGENT and note.turn is not None:
        turn = note.turn
        tools = turn.get("tools")
        line.session, line.agent, line.prompt = _text(turn.get("session")), _text(turn.get("agent")), \
            _text(turn.get("prompt"))
        line.tool = _text(tools.get(path)) if isinstance(tools, dict) else None
        line.model = _text(turn.get("model")) or _text(note.extra.get("model"))


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


def _committed(repo: Repo, path: str, lines: list[Line]) -> None:
    """Follow LINES into committed history: git's blame of the work tree's file names the commit of each committed
    line, which the line then carries; where the checkpoints do not give the line to an agent, that commit's
    authorship note (when it has one for the line) says who wrote it: an agent, or the person."""
    from ..store import authorship

    found = _blame_worktree(repo, path)
    if len(found) != len(lines):
        return  # the file changed between the two blames: leave the checkpoints' answer
    notes = authorship.read_many(repo, sorted({commit for commit, _, _ in found if commit}))
    for line, (commit, original, number) in zip(lines, found, strict=True):
        if not commit:
            continue
        line.commit = commit
        note = notes.get(commit)
        author = note.author_of(original, number) if note is not None else None
        if author is None or author.origin == authorship.UNKNOWN or line.origin == AGENT:
            continue
        line.origin, line.noted = author.origin, True
        line.seq, line.created, line.checkpoint = author.seq, None, author.checkpoint
        line.session, line.agent, line.tool, line.prompt = author.session, author.agent, author.tool, author.prompt
        line.model = author.model


def _blame_worktree(repo: Repo, path: str) -> list[tuple[str | None, str, int]]:
    """(commit or None when not committed, the path in that commit, the line's number there) for each line of
    PATH in the work tree, from `git blame --porcelain` (nothing where PATH is not in HEAD, or there is none)."""
    from ..base.gitcmd import GitError

    try:
        out = repo.git(["blame", "--porcelain", "--no-ignore-revs-file", "--", path])
    except GitError:
        return []
    found: list[tuple[str | None, str, int]] = []
    names: dict[str, str] = {}
    head: list[bytes] | None = None
    for row in out.split(b"\n"):
        if head is None:
            if row:
                head = row.split(b" ")
        elif row.startswith(b"\t"):
            commit = head[0].decode()
            committed = commit.strip("0") != ""
            found.append((commit if committed else None, names.get(commit, path), int(head[1])))
            head = None
        elif row.startswith(b"filename "):
            names[head[0].decode()] = _unquote(row[len(b"filename "):])
    return found


def _unquote(raw: bytes) -> str:
    """A path as git's porcelain prints it (C-quoted when unusual)."""
    if not raw.startswith(b'"'):
        return raw.decode("utf-8", "surrogateescape")
    import codecs

    return codecs.escape_decode(raw[1:-1])[0].decode("utf-8", "surrogateescape")


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
