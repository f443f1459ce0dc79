"""Running git's own CLI: one-shot commands and a long-lived fast-import stream.

git's CLI is the fastest correct tool for scanning a working tree and the only one that
writes commits, notes and refs in one process without pygit2's ~100 ms import, so the
hot path (snap) goes through here.
"""

from __future__ import annotations

import os
import subprocess

from .errors import RewindError
from .note import Oid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import IO

# Settings that keep our writes private and byte-exact, whatever the user's config says.
_QUIET = ("-c", "advice.addEmbeddedRepo=false", "-c", "core.splitIndex=false")


class GitError(RewindError):
    """A git command failed; carries its stderr so callers can react to known messages."""

    def __init__(self, args: Sequence[str], returncode: int, stderr: str) -> None:
        first = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit {returncode}"
        words = list(args)
        while words[:1] == ["-c"]:
            words = words[2:]
        super().__init__(f"git {words[0] if words else ''} failed: {first}")
        self.returncode = returncode
        self.stderr = stderr


def run(
    args: Sequence[str],
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    input: bytes | None = None,
    check: bool = True,
) -> bytes:
    """Run `git ARGS` and return its stdout; raise GitError on failure when `check`."""
    full_env = None
    if env:
        full_env = dict(os.environ)
        full_env.update(env)
    proc = subprocess.run(
        ["git", *_QUIET, *args],
        cwd=cwd,
        env=full_env,
        input=input,
        capture_output=True,
    )
    if check and proc.returncode != 0:
        raise GitError(args, proc.returncode, proc.stderr.decode("utf-8", "replace"))
    return proc.stdout


_detached: list[subprocess.Popen[bytes]] = []  # started by `detached` and not yet seen to end


def detached(args: list[str], cwd: str, log: str | None = None) -> subprocess.Popen[bytes]:
    """Start ARGS fully detached: its own session, no inherited pipes or descriptors, so nobody (an agent
    waiting on a hook's output) waits for it; its output goes to the file LOG (appended) or nowhere.
    A long-lived process (the daemon, which runs hooks) reaps it with `reap`, or it stays a zombie."""
    reap()
    out = open(log, "ab") if log else None  # noqa: SIM115 - closed below, once the child has its copy
    try:
        proc = subprocess.Popen(args, cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=out if out is not None else subprocess.DEVNULL,
                                stderr=out if out is not None else subprocess.DEVNULL,
                                start_new_session=True, close_fds=True)
    finally:
        if out is not None:
            out.close()
    _detached.append(proc)
    return proc


def reap() -> int:
    """Collect the exit status of every `detached` process that has ended (none is left a zombie); how many
    still run."""
    _detached[:] = [proc for proc in _detached if proc.poll() is None]
    return len(_detached)


class Background:
    """`git ARGS` started now and read later (`result`): a command whose answer is needed only after
    other work, which it runs beside (the machine's other core). Its output is read at the end, so it
    suits commands that print little; `close` ends one whose answer is no longer wanted."""

    def __init__(self, args: Sequence[str], cwd: str | None = None, env: Mapping[str, str] | None = None) -> None:
        self._args = list(args)
        self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            ["git", *_QUIET, *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env={**os.environ, **env} if env else None)

    def result(self) -> bytes:
        """Its stdout, once it has ended; GitError if it failed."""
        assert self._proc is not None, "result() read twice"
        proc, self._proc = self._proc, None
        out, err = proc.communicate()
        if proc.returncode != 0:
            raise GitError(self._args, proc.returncode, err.decode("utf-8", "replace"))
        return out

    def close(self) -> None:
        """Stop it, if it still runs and its answer was not read."""
        if self._proc is not None:
            proc, self._proc = self._proc, None
            proc.kill()
            proc.communicate()


def cat_file(oids: Sequence[str], cwd: str) -> list[tuple[str, bytes] | None]:
    """(type, content) of each object in OIDS, in order, through one `git cat-file --batch`; None for a
    missing one. Objects as stored: no filters (callers that need checked-out bytes use checkout-index)."""
    if not oids:
        return []
    out = run(["cat-file", "--batch"], cwd=cwd, input="".join(f"{oid}\n" for oid in oids).encode())
    found: list[tuple[str, bytes] | None] = []
    pos = 0
    for _oid in oids:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3:  # "<oid> missing"
            found.append(None)
            continue
        size = int(header[2])
        found.append((header[1].decode(), out[pos:pos + size]))
        pos += size + 1
    return found


def quote_path(path: bytes) -> bytes:
    """C-quote a path the way fast-import reads it, so any byte (LF, quotes, non-UTF-8) survives."""
    out = bytearray(b'"')
    for byte in path:
        if byte == 0x22:
            out += b'\\"'
        elif byte == 0x5C:
            out += b"\\\\"
        elif byte < 0x20 or byte >= 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    out += b'"'
    return bytes(out)


COMMITTER = b"git-rewind <git-rewind@localhost>"  # the one identity every commit git-rewind writes is made by


def null_oid(object_format: str) -> str:
    """The all-zero id of OBJECT_FORMAT (fast-import refuses 40 zeros under SHA-256)."""
    return "0" * (64 if object_format == "sha256" else 40)


class FastImport:
    """A `git fast-import` process: builds commits and notes and moves refs atomically at the end.

    Refs are only updated when the stream finishes cleanly, so a kill at any moment leaves
    every ref as it was and the repository fsck-clean. Use it as a context manager: leaving the
    block normally finishes the stream (refs move), leaving it by an exception aborts it (no ref
    moves); `finish` or `abort` inside the block end it early, and nested blocks end it once.
    """

    def __init__(self, cwd: str, force: bool = False, env: Mapping[str, str] | None = None) -> None:
        # --depth=0: no deltas. fast-import deltas a blob only against the blob before it in the stream (another
        # file, in a checkpoint), which cost 40% of a 1,000-file checkpoint's stream and made its pack no smaller
        # (bench/README); a stream under the unpack limit is exploded into whole loose objects anyway, and
        # `git gc` finds the real deltas. The objects, and their ids, are the same.
        args = ["git", "-c", "core.logAllRefUpdates=false", "fast-import", "--quiet", "--done",
                "--date-format=raw", "--depth=0"]
        if force:
            args.append("--force")
        self._proc = subprocess.Popen(
            args, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, **env} if env else None,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in: IO[bytes] = self._proc.stdin
        self._out: IO[bytes] = self._proc.stdout
        self._ended = False
        self._sent = False  # anything that makes objects or moves refs (not just `ls` questions)

    def __enter__(self) -> FastImport:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if self._ended:
            return
        if kind is None:
            self.finish()
        else:
            self.abort()

    def write(self, data: bytes) -> None:
        """Send raw stream text."""
        self._sent = True
        self._in.write(data)

    def data(self, payload: bytes) -> None:
        """Send a `data` block."""
        self._sent = True
        self._in.write(b"data %d\n" % len(payload))
        self._in.write(payload)
        self._in.write(b"\n")

    def commit(self, ref: str, message: bytes, when: int, *, mark: int | None = None,
               parents: Sequence[str] = (), ident: bytes | None = None) -> None:
        """A commit's header on REF (fast-import's branch name): MARK, git-rewind as its committer at WHEN
        (IDENT instead: the author and committer lines of a commit rewritten as it was), MESSAGE, and its
        PARENTS (ids or `:marks`; the first is `from`, the rest `merge`). Its file commands follow, then
        a blank line."""
        head = b"commit " + ref.encode() + b"\n" + (b"mark :%d\n" % mark if mark is not None else b"")
        self.write(head + (ident if ident is not None else b"committer " + COMMITTER + b" %d +0000\n" % when))
        self.data(message)
        for i, parent in enumerate(parents):
            self.write((b"merge " if i else b"from ") + parent.encode() + b"\n")

    def reset(self, ref: str, to: str | None = None) -> None:
        """Forget what the stream built on REF (TO: start it there; a null id deletes it at the end)."""
        self.write(b"reset " + ref.encode() + b"\n" + (b"from " + to.encode() + b"\n" if to else b"") + b"\n")

    def ls(self, dataref: str, path: bytes) -> tuple[int, Oid] | None:
        """Mode and object id of PATH inside commit or tree DATAREF, or None if absent."""
        self._in.write(b"ls " + dataref.encode() + b" " + quote_path(path) + b"\n")
        self._in.flush()
        return self._ls_answer()

    def ls_many(self, questions: Sequence[tuple[str, bytes]]) -> list[tuple[int, Oid] | None]:
        """`ls` of each (dataref, path) in QUESTIONS, asked in batches instead of one round trip each.

        A batch's answers must fit in the pipe while it is being asked (fast-import blocks writing them
        otherwise, and then so would we): a batch stops at about 32 KiB of expected answers.
        """
        found: list[tuple[int, Oid] | None] = []
        start = 0
        while start < len(questions):
            end, size = start, 0
            while end < len(questions) and (end == start or size < 32768):
                size += len(questions[end][1]) * 4 + 160  # mode, type, oid, the path (C-quoted at worst), newline
                end += 1
            for dataref, path in questions[start:end]:
                self._in.write(b"ls " + dataref.encode() + b" " + quote_path(path) + b"\n")
            self._in.flush()
            found.extend(self._ls_answer() for _ in range(end - start))
            start = end
        return found

    def _ls_answer(self) -> tuple[int, Oid] | None:
        line = self._out.readline()
        if not line:
            raise self._failure()
        if line.startswith(b"missing "):
            return None
        mode, _kind, rest = line.split(b" ", 2)
        return int(mode, 8), Oid(rest.split(b"\t", 1)[0].decode())

    def get_mark(self, mark: int) -> Oid:
        """The object id a mark was given."""
        self._in.write(b"get-mark :%d\n" % mark)
        self._in.flush()
        line = self._out.readline()
        if not line:
            raise self._failure()
        return Oid(line.strip().decode())

    def get_marks(self, marks: Sequence[int]) -> list[Oid]:
        """The object id of each of MARKS, asked in batches (an answer is at most 65 bytes)."""
        found: list[Oid] = []
        for start in range(0, len(marks), 400):
            batch = marks[start:start + 400]
            self._in.write(b"".join(b"get-mark :%d\n" % mark for mark in batch))
            self._in.flush()
            for _ in batch:
                line = self._out.readline()
                if not line:
                    raise self._failure()
                found.append(Oid(line.strip().decode()))
        return found

    def finish(self) -> None:
        """End the stream; refs move now, or not at all."""
        self._ended = True
        self._in.write(b"done\n")
        self._in.close()
        self._out.read()
        err = self._proc.stderr.read() if self._proc.stderr else b""
        if self._proc.wait() != 0:
            raise GitError(["fast-import"], self._proc.returncode, err.decode("utf-8", "replace"))

    def abort(self) -> None:
        """Stop without touching any ref.

        A stream that only asked questions ends cleanly (a killed fast-import leaves its empty
        `tmp_pack_*` behind: garbage after every unchanged `--path` checkpoint); one that sent
        commands is killed, so that none of them takes effect.
        """
        if not self._sent and self._proc.poll() is None:
            try:
                self.finish()
                return
            except (GitError, OSError):
                pass  # it is ending anyway; kill below makes sure
        self._ended = True
        self._proc.kill()  # before closing stdin: an early EOF would make it dump a crash report
        self._proc.wait()
        try:
            self._in.close()
        except OSError:
            pass

    def _failure(self) -> GitError:
        err = self._proc.stderr.read() if self._proc.stderr else b""
        self._proc.wait()
        return GitError(["fast-import"], self._proc.returncode, err.decode("utf-8", "replace"))


class RefUpdates:
    """A long-lived `git update-ref --stdin`, one transaction after the other (`start` … `prepare`, `commit`):
    git's own ref backend (locks, reflogs, packed refs) without a process per transaction.

    A transaction is all or nothing as with a process of its own: every ref is locked and checked against its
    old value at `prepare`; if this process dies before `commit` reached git, git sees the end of its input
    and aborts (no ref moved, its locks gone); once `commit` is sent, git finishes it whatever happens here
    (git itself killed between two refs' lock renames leaves it torn: Repo.move_refs' journal completes it).
    A failed transaction ends the process (git dies on it); the next one starts another.
    """

    def __init__(self, cwd: str) -> None:
        self._cwd = cwd
        self._proc: subprocess.Popen[bytes] | None = None
        self._err: IO[bytes]

    def transaction(self, script: bytes, again: bool = True) -> None:
        """Run SCRIPT (`update`, `delete`, `verify` lines) as one transaction; GitError if git refused it."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            import tempfile

            self._err = tempfile.TemporaryFile()  # not a pipe: nobody reads it while git lives
            proc = self._proc = subprocess.Popen(
                ["git", *_QUIET, "update-ref", "--stdin"], cwd=self._cwd, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=self._err)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(b"start\n" + script + b"prepare\ncommit\n")
            proc.stdin.flush()
        except BrokenPipeError:  # it ended between two transactions: nothing of this one reached it
            self._proc = None
            proc.wait()
            if not again:
                raise GitError(["update-ref"], proc.returncode or 1, "git update-ref --stdin ended") from None
            self.transaction(script, again=False)
            return
        answers = [proc.stdout.readline() for _ in range(3)]
        if answers != [b"start: ok\n", b"prepare: ok\n", b"commit: ok\n"]:
            self._proc = None
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass
            proc.wait()
            self._err.seek(0)
            err = self._err.read()
            raise GitError(["update-ref"], proc.returncode or 1, err.decode("utf-8", "replace"))

    def close(self) -> None:
        """End the process (at the end of its input, between transactions, it just exits)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.stdin is not None:
            proc.stdin.close()
            proc.wait()


_long_lived = False
_updaters: dict[str, RefUpdates] = {}  # per repository (its common git directory), while kept


def long_lived_update_ref(on: bool) -> None:
    """Keep one `git update-ref --stdin` per repository for every transaction from now on (a long-lived
    process: objects.in_process), or go back to a process per transaction (a kept one stays for the next
    time: close_update_refs ends them)."""
    global _long_lived
    _long_lived = on


def close_update_refs() -> None:
    """End every long-lived `git update-ref` (between transactions: each just exits)."""
    for updater in _updaters.values():
        updater.close()
    _updaters.clear()


def update_refs(cwd: str, commondir: str, script: bytes) -> None:
    """Run SCRIPT (`update-ref --stdin` commands) at CWD as one transaction: in a process of its own, or in the
    repository's long-lived one (long_lived_update_ref)."""
    if not _long_lived:
        run(["update-ref", "--stdin"], cwd=cwd, input=script)
        return
    updater = _updaters.get(commondir)
    if updater is None:
        updater = _updaters[commondir] = RefUpdates(cwd)
    updater.transaction(script)


# What `config --type=expiry-date` prints for "now" / "all" (everything has expired) and for "never".
_DATE_NOW = 2**64 - 1
_DATE_NEVER = 0


def dates(cwd: str, texts: Sequence[str | None]) -> list[float | None]:
    """Each date of TEXTS in seconds since the epoch (None for None), read by git's own date parser in
    one process: `config --type=expiry-date`, the careful approxidate that `gc.pruneExpire` uses, so
    "yesterday", "2 hours ago", "last friday" and ISO 8601 work, and a date git cannot read is a one-line
    error naming it (plain approxidate, as `rev-parse --since` uses, would read nonsense as now)."""
    wanted = [(i, t.strip()) for i, t in enumerate(texts) if t is not None]
    result: list[float | None] = [None] * len(texts)
    if not wanted:
        return result
    args: list[str] = []
    for i, text in wanted:
        if text.lower() == "never" or not text:
            raise RewindError(f"not a date: {text!r} (git's date syntax: \"2 hours ago\", \"yesterday\", 2026-11-25)")
        args += ["-c", f"rewind-date.d{i}={text}"]
    try:
        out = run([*args, "config", "--type=expiry-date", "--get-regexp", r"^rewind-date\.d"],
                         cwd=cwd)
    except GitError as exc:
        bad = next((t for _, t in wanted if f"'{t}'" in exc.stderr), wanted[0][1])
        raise RewindError(f"not a date: {bad!r} (git's date syntax: \"2 hours ago\", \"yesterday\", "
                          "2026-11-25 14:00)") from None
    for line in out.decode().splitlines():
        key, _, value = line.partition(" ")
        stamp = int(value)
        import time

        result[int(key.rsplit(".d", 1)[1])] = time.time() if stamp in (_DATE_NOW, _DATE_NEVER) else float(stamp)
    return result
