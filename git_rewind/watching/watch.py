"""`git rewind watch [--session NAME] [-- COMMAND...]`: an undo history for a program with no hooks.

Run as a wrapper: watch resolves the program (127 not found, 126 not executable, as `env`; 125 for its
own failure, before anything is written), starts watching the tree, takes the start checkpoint and opens
the program's turn (turns.py), and only then spawns it, with the terminal, process group and signal
dispositions it would have had without watch, and goes on at a lower priority (NICE). So everything the
program changes, from its first write, is its turn's and after the start checkpoint: `undo <start>
--agent-only` takes back exactly that. The program's start waits for that checkpoint (a whole-tree scan,
or with the daemon running a question to it; bench/watch_bench.py measures it).

Then the kernel's file events (watcher.Watcher, the daemon's, ignoring what git ignores) tell when the
tree changed; once quiet for `watch_settle_ms` (or after BUSY_FACTOR times that of unbroken change) a
checkpoint is taken, and a last one when the program ends. Its exit status is passed on: a program
killed by signal N takes watch down with N after that checkpoint.

Signals: the terminal's (Ctrl-C, Ctrl-\\, a hangup) reach the program directly, as it stays in the
foreground process group; one sent to watch by a process (kill, a supervisor, git relaying its own
Ctrl-C) is passed to the program, except the copy of one the terminal just sent. Run alone, watch
watches until SIGINT, SIGTERM, SIGHUP or SIGQUIT, takes a last checkpoint and exits 0.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

from ..base import layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..agents.base import Agent
    from ..base.config import Settings
    from ..base.repo import Repo
    from ..store.store import Result
    from .watcher import Watcher

EXIT_FAILED, EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND = 125, 126, 127  # as env(1)
NICE = 10  # watch's own priority below the program's (see _yield_cpu)
BUSY_FACTOR = 20  # a tree that never settles is checkpointed every 20 × watch_settle_ms (30 s by default)
RELAYED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)  # end a watch run alone
_SI_KERNEL = 0x80  # si_code of a signal the kernel sent: the terminal's, to the whole foreground group
_DUPLICATE_SECONDS = 1.0  # git relays the terminal's Ctrl-C to us a moment after the terminal sent it
_POLL_SECONDS = 1.0  # how often the work tree's presence is checked while nothing happens
_CORE = (signal.SIGQUIT, signal.SIGILL, signal.SIGABRT, signal.SIGFPE, signal.SIGSEGV, signal.SIGBUS,
         signal.SIGSYS, signal.SIGTRAP, signal.SIGXCPU, signal.SIGXFSZ)


def _say(text: str) -> None:
    print(f"git rewind watch: {text}", file=sys.stderr, flush=True)


class Failure(Exception):
    """Watch could not start the program: the line to print and the exit status (125, 126, 127)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def resolve(program: str, path_env: str | None) -> str:
    """The file PROGRAM runs, as execvp finds it: a name with a slash as it is, else the first executable
    file of that name on PATH_ENV. Failure 127 when there is none, 126 when only one that cannot run is."""
    if "/" in program:
        candidates = [program]
    else:
        candidates = [os.path.join(d or ".", program) for d in (path_env or os.defpath).split(os.pathsep)]
    denied = None
    for candidate in candidates:
        if not os.path.exists(candidate):
            continue
        if os.path.isdir(candidate) or not os.access(candidate, os.X_OK):
            denied = denied or candidate
            continue
        return candidate
    if denied is not None:
        what = "is a directory" if os.path.isdir(denied) else "permission denied (not executable)"
        raise Failure(f"{program}: {what}", EXIT_NOT_EXECUTABLE)
    raise Failure(f"{program}: command not found" if "/" not in program else f"{program}: no such file",
                  EXIT_NOT_FOUND)


def session_name(program: str | None, now: float) -> str:
    """A readable session for a watch run: watch-<program>-<UTC date and time>."""
    import re

    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", os.path.basename(program or ""))
    name = re.sub(r"\.\.+", ".", name).strip("-.")[:40]
    return f"watch-{name}-{stamp}" if name else f"watch-{stamp}"


# the program: spawned, waited for, signals relayed ---------------------------------------------------


class Child:
    """The wrapped program: spawned untouched, its end reported on a pipe, signals relayed to it."""

    def __init__(self, path: str, argv: list[str], env: dict[str, str], wake: int) -> None:
        # Python ignores SIGPIPE and SIGXFSZ for itself; the program gets them back as a shell gives them.
        # Everything else is as watch got it (a signal ignored by whoever started watch stays ignored).
        self.pid = os.posix_spawn(path, argv, env, setsigmask=(), setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
        try:  # signals go through a pidfd: never to another process that took the pid of one that ended
            self.pidfd: int | None = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            self.pidfd = None
        self.status: int | None = None
        self._wake = wake
        threading.Thread(target=self._wait, daemon=True).start()

    def _wait(self) -> None:
        _pid, status = os.waitpid(self.pid, 0)
        self.status = status
        os.write(self._wake, b"x")

    def relay(self, info: Any, last_kernel: dict[int, float]) -> bool:
        """Pass a signal watch received on to the program, unless the program already has it; True if sent."""
        signo, now = info.si_signo, time.monotonic()
        if info.si_code == _SI_KERNEL:  # the terminal's: sent to the foreground group, the program included
            last_kernel[signo] = now
            return False
        if info.si_pid == self.pid:  # the program signalled its own group (kill 0)
            return False
        if info.si_pid == os.getppid() and now - last_kernel.get(signo, -1e9) < _DUPLICATE_SECONDS:
            return False  # git relaying the terminal's Ctrl-C to its child, us
        if self.status is not None:
            return False
        try:
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, signo)
            else:
                os.kill(self.pid, signo)
        except ProcessLookupError:
            return False
        return True


def _signal_thread(child: Child | None, wake: int, stop: threading.Event) -> None:
    """Wait for the RELAYED signals (blocked in every thread): relay them, or (run alone) stop the watch."""
    last_kernel: dict[int, float] = {}
    while True:
        info = signal.sigwaitinfo(RELAYED)
        if child is not None:
            child.relay(info, last_kernel)
        elif info.si_signo in STOPPING:
            stop.set()
            os.write(wake, b"s")


def exit_with(status: int) -> int:
    """The program's wait status as ours: its exit code, or death by the same signal (as a shell reports 128+N)."""
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    if os.WIFSIGNALED(status):
        signo = os.WTERMSIG(status)
        sys.stdout.flush()
        sys.stderr.flush()
        if signo in _CORE:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
        if signo in (signal.SIGKILL, signal.SIGSTOP):  # no disposition to set: said as a shell says it
            return 128 + signo
        signal.signal(signo, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signo])
        os.kill(os.getpid(), signo)
        return 128 + signo  # a signal whose default is to be ignored: say it as a shell would
    return EXIT_FAILED


# the checkpoints ---------------------------------------------------------------------------------------


class Session:
    """The checkpoints of one watch run: which session, which program, and what its agent adds."""

    def __init__(self, repo: Repo, settings: Settings, session: str, program: str | None) -> None:
        from .. import agents

        self.repo = repo
        self.settings = settings
        self.session = session
        self.program = program
        self.agent_name = os.path.basename(program) if program else "watch"
        self.agent: Agent | None = agents.for_program(program) if program else None
        self.memo: dict[str, Any] = {}  # the agent's, between its watch_context calls
        self.pending_commits: list[str] = []
        self.pending_prompt: str | None = None
        self.taken: list[int] = []
        self.anchor: int | None = None  # the start checkpoint, or the session's newest when nothing had changed
        self.failed = False

    def save(self, message: str | None = None) -> Result | None:
        """Take a checkpoint now (None: nothing changed since the last). What the program's agent knows (its
        prompt, its conversation, the commits it made) goes into the note; what it said when no checkpoint
        came of it (the tree unchanged) goes into the next one. MESSAGE None: `<program> changed <paths>`, the
        paths the checkpoint changed."""
        from ..base.note import Position
        from ..store import store

        context: dict[str, Any] = {}
        if self.agent is not None:
            try:
                context = self.agent.watch_context(self.repo.root, self.memo)
            except Exception:  # noqa: BLE001 - it promises not to raise; the checkpoint matters more
                context = {}
        commits = context.get("commits")
        if isinstance(commits, list):
            self.pending_commits += [str(c) for c in commits if str(c) not in self.pending_commits]
        if isinstance(context.get("prompt"), str):
            self.pending_prompt = context["prompt"]
        position = context.get("conversation")
        request = store.Request(
            session=self.session, message=message, agent=self.agent_name, trigger="watch",
            prompt=self.pending_prompt, conversation=position if isinstance(position, Position) else None,
            max_file_size=self.settings["max_file_size"], auto_pack=self.settings["auto_pack"],
            max_store_size=self.settings["max_store_size"], attribute=self.settings["tier"] != "minimal",
            extra={"commits": list(self.pending_commits)} if self.pending_commits else None,
            describe=lambda paths: f"{self.agent_name} changed " + (_shown(paths) if paths else "files"),
        )
        result = store.save(self.repo, request)
        if self.anchor is None:
            self.anchor = result.seq
        if not result.created:
            return None
        self.pending_commits, self.pending_prompt = [], None
        self.taken.append(result.seq)
        if self.program is None:  # run alone, on its own terminal: each checkpoint as it is taken
            print(f"#{result.seq} {result.note.message if result.note is not None else message}", flush=True)
        return result

    def open_turn(self, started: float, seq: int | None) -> None:
        """The program's turn: from its start to its end, what changes in the tree is the program's."""
        from ..base import turns

        if os.path.isdir(self.repo.rewind_dir):  # never make a deleted repository's directories again
            turns.start(self.repo, turns.Turn(self.session, self.agent_name, None, seq, started,
                                              pid=turns.own_process()))  # a killed watch ends it

    def touch_turn(self) -> None:
        from ..base import turns

        turns.touch(self.repo, self.session)

    def close_turn(self) -> None:
        from ..base import turns

        turns.end(self.repo, self.session)


def _shown(paths: list[str]) -> str:
    return " ".join(paths[:3]) + (f" (+{len(paths) - 3})" if len(paths) > 3 else "")


class Loop:
    """File events read until the program ends (or, run alone, until stopped); a checkpoint whenever the tree
    settles. Without file events (the watch limit, a network filesystem) it looks every busy period."""

    def __init__(self, run: Session, settle_ms: int) -> None:
        self.run = run
        self.repo = run.repo
        self.settle = settle_ms / 1000.0
        self.busy = self.settle * BUSY_FACTOR
        self.watcher: Watcher | None = None
        self.cookie_dir = os.path.join(self.repo.rewind_dir, f"{layout.WATCH_COOKIES}{os.getpid()}")
        self.first_change: float | None = None  # monotonic times of the first and last change not checkpointed
        self.last_change = 0.0
        self.gone = False
        self.rules: str | None = None  # the ignore files outside the tree, as the watcher last followed them

    def open(self) -> None:
        """Start watching (after the start checkpoint: the program's start waits for nothing of it); without file
        events, say so once and look every busy period instead."""
        _sweep_cookies(self.repo)
        if not sys.platform.startswith("linux"):
            _say(f"file events need Linux inotify; looking for changes every {self.busy:g} s instead")
            return
        from .watcher import NO_EVENT_FILESYSTEMS, filesystem_type

        kind = os.environ.get("GIT_REWIND_DAEMON_FSTYPE") or filesystem_type(self.repo.root)
        if kind in NO_EVENT_FILESYSTEMS:
            _say(f"the work tree is on {kind}, which gives no reliable file events; "
                 f"looking for changes every {self.busy:g} s instead")
            return
        from ..base.gitcmd import GitError
        from ..store import snapshot
        from .watcher import Watcher, WatchError

        limit = os.environ.get("GIT_REWIND_DAEMON_MAX_WATCHES")  # to test the machine-wide limit
        try:
            os.mkdir(self.cookie_dir)  # never made again (makedirs) in a repository deleted since the start
            self.watcher = Watcher(self.repo.root, self.cookie_dir,
                                   lambda under: snapshot.ignored_dirs(self.repo, under),
                                   int(limit) if limit else None)
            self.rules = snapshot.rules_signature(self.repo)
        except WatchError as exc:
            self.close()
            _say(f"{exc}; looking for changes every {self.busy:g} s instead")
            return
        except (OSError, GitError):
            self.close()
            if self.still_there():  # not the repository going away (the program may delete it at once)
                raise
            return
        # Watching began after the start checkpoint: what changed in between is in doubt (the watcher starts so),
        # and a look once the tree has settled (a whole-tree scan, a checkpoint only if something changed) finds it.
        self.first_change = self.last_change = time.monotonic()

    def close(self) -> None:
        """Stop watching and remove the cookie directory (nothing of a watch run stays behind)."""
        import shutil

        if self.watcher is not None:
            self.watcher.close()
            self.watcher = None
        shutil.rmtree(self.cookie_dir, ignore_errors=True)

    def still_there(self) -> bool:
        """The work tree and its git directory still exist; else say so once and stop watching."""
        if self.gone:
            return False
        root_gone = (self.watcher is not None and self.watcher.root_gone) or not os.path.isdir(self.repo.root)
        # A git directory without HEAD is no repository, whatever a save in flight when it went wrote there again.
        if root_gone or not os.path.isdir(self.repo.rewind_dir) or not os.path.isfile(
                os.path.join(self.repo.gitdir, "HEAD")):
            self.gone = True
            self.close()
            _say(f"{self.repo.root} is no longer a git work tree (removed or moved); no longer watching"
                 + (f" ({self.run.agent_name} runs on)" if self.run.program else ""))
            return False
        return True

    def wait(self, reader: int, stop: threading.Event, child: Child | None) -> None:
        """Watch until the program ends (CHILD) or a signal stops a watch run alone (STOP)."""
        import select

        while (child is None or child.status is None) and not stop.is_set() and not (self.gone and child is None):
            fds = [reader] + ([self.watcher.inotify.fileno()] if self.watcher is not None else [])
            ready, _, _ = select.select(fds, [], [], self._timeout())
            if reader in ready:
                os.read(reader, 64)
            if self.gone:
                continue
            if self.watcher is not None and self.watcher.inotify.fileno() in ready:
                self._read_events()
            if self.still_there():
                self._maybe_checkpoint()

    def _timeout(self) -> float:
        if self.gone:
            return 60.0
        if self.watcher is None:
            return _POLL_SECONDS
        if self.first_change is None:
            return _POLL_SECONDS
        due = min(self.last_change + self.settle, self.first_change + self.busy)
        return max(0.0, min(due - time.monotonic(), _POLL_SECONDS))

    def _read_events(self) -> None:
        assert self.watcher is not None
        before = self.watcher.events
        self.watcher.read(0)
        if self.watcher.events != before and (self.watcher.dirty or self.watcher.doubt is not None):
            now = time.monotonic()
            self.last_change = now
            if self.first_change is None:
                self.first_change = now
            self.run.touch_turn()  # the program is at work: what it writes now is its turn's

    def _maybe_checkpoint(self) -> None:
        now = time.monotonic()
        if self.watcher is None:  # no file events: a look every busy period (a checkpoint only if changed)
            if self.first_change is None:
                self.first_change = now
            elif now - self.first_change >= self.busy:
                self.checkpoint()
            return
        if self.first_change is not None and (now - self.last_change >= self.settle
                                              or now - self.first_change >= self.busy):
            self.checkpoint()

    def checkpoint(self, message: str | None = None, final: bool = False) -> Result | None:
        """A checkpoint of what changed, unless only ignored files did. In doubt (or without events) the
        whole-tree scan decides; a failure is said once and watching goes on."""
        from ..base.errors import RewindError
        from ..base.gitcmd import GitError
        from ..store import snapshot

        self.first_change = None
        if not self.still_there():  # a save would make the git directory again (a deleted tree's, even)
            return None
        watcher = self.watcher
        epoch = None
        if watcher is not None:
            rules = snapshot.rules_signature(self.repo)
            if rules != self.rules:  # info/exclude or the global ignore file changed: what is watched may too
                self.rules = rules
                watcher.watch_all()
            epoch = watcher.settle(0.3)
            if watcher.rewatch:  # a .gitignore changed: a directory ignored whole (so unwatched) may not be now
                watcher.watch_all()
        changed: list[str] = []
        if watcher is not None and epoch is not None and watcher.doubt is None:
            changed = sorted(p for p, e in watcher.dirty.items() if e <= epoch)
            if not changed and not final:
                return None
            ignored = snapshot.ignored(self.repo, changed)
            if changed and len(ignored) == len(changed):
                watcher.forget(epoch)  # only ignored files changed: nothing a checkpoint would hold
                if not final:
                    self._later(watcher)
                    return None
        try:
            if self.run.program:
                self.run.touch_turn()
            result = self.run.save(message)
        except (RewindError, GitError, OSError) as exc:
            if self.still_there() and not self.run.failed:
                _say(f"no checkpoint: {exc}")
                self.run.failed = True
            return None
        if watcher is not None and epoch is not None:
            watcher.forget(epoch)
            self._later(watcher)
        return result

    def _later(self, watcher: Watcher) -> None:
        """Changes made while a checkpoint was taken are still dirty: they get their own once the tree settles,
        even if no event comes after them."""
        if watcher.dirty or watcher.doubt is not None:
            self.first_change = self.last_change = time.monotonic()


def _sweep_cookies(repo: Repo) -> None:
    """Cookie directories of watch runs that were killed (their pid is gone)."""
    import shutil

    from ..base.fsutil import alive

    try:
        names = os.listdir(repo.rewind_dir)
    except OSError:
        return
    for name in names:
        if name.startswith("watch-cookies-"):
            pid = name.rsplit("-", 1)[1]
            if pid.isdigit() and not alive(int(pid)):
                shutil.rmtree(os.path.join(repo.rewind_dir, name), ignore_errors=True)


# the command -------------------------------------------------------------------------------------------


def _prepare(command: list[str], session: str | None) -> tuple[Repo, Settings, str, str | None]:
    """Everything that can fail before the program starts: the repository, the settings, the session, the
    program's file. Nothing is written."""
    from ..base import config
    from ..base.errors import RewindError
    from ..base.repo import Repo, check_session

    if not hasattr(signal, "sigwaitinfo"):  # who sent a signal (the terminal, or a process) is Linux's to say
        raise RewindError("watch needs Linux (it tells the terminal's signals from others' with sigwaitinfo)")
    repo = Repo.find(os.getcwd())
    settings = config.for_repo(repo)
    name = check_session(session or session_name(command[0] if command else None, time.time()))
    path = resolve(command[0], os.environ.get("PATH")) if command else None
    return repo, settings, name, path


def _yield_cpu() -> None:
    """From here on watch's work (its checkpoints, their git processes) gives way to the program's: on a
    busy machine the start checkpoint, taken while the program starts, must not slow that start down."""
    try:
        os.nice(NICE)
    except OSError:
        pass


def _start_daemon(watch: Session) -> None:
    """As a hook would: in a large repository the daemon lets every later checkpoint read only what changed."""
    from ..base import daemon

    try:
        daemon.maybe_start(watch.repo, watch.settings)
    except OSError:
        pass  # checkpoints scan the whole tree, as without a daemon


def _ended(program: str, status: int) -> str:
    if os.WIFSIGNALED(status):
        signo = os.WTERMSIG(status)
        return f"{program} killed by {signal.Signals(signo).name}"
    return f"{program} exited with {os.WEXITSTATUS(status)}"


def run(command: list[str], session: str | None = None) -> int:
    """`git rewind watch [--session NAME] [-- COMMAND...]`; returns the exit status (see the module)."""
    from ..base.errors import RewindError

    env = dict(os.environ)  # the program's own, before the repository is pinned in ours (GIT_DIR)
    signal.pthread_sigmask(signal.SIG_BLOCK, RELAYED)  # every thread: the signal thread takes them
    try:
        repo, settings, name, path = _prepare(command, session)
    except Failure as exc:
        _say(str(exc))
        return exc.code
    except RewindError as exc:
        _say(str(exc))
        return EXIT_FAILED
    if _stopped():
        return _stopped()
    watch = Session(repo, settings, name, command[0] if command else None)
    watch.memo["argv"] = list(command)  # the agent may read its own options (Aider: --chat-history-file)
    loop = Loop(watch, settings["watch_settle_ms"])
    watching = _begin(watch, loop, command)
    reader, writer = os.pipe()
    child = None
    failed = _stopped()  # stopped while the start checkpoint was taken: the program never starts
    if command and not failed:
        assert path is not None
        try:
            child = _spawn(path, command, env, writer)
        except Failure as exc:
            _say(str(exc))
            failed = exc.code
    if failed:
        loop.close()
        watch.close_turn()
        return failed
    if child is not None:
        _yield_cpu()
    stop = threading.Event()
    threading.Thread(target=_signal_thread, args=(child, writer, stop), daemon=True).start()
    try:
        if watching:
            _watch(watch, loop, reader, stop, child)
    except Exception as exc:  # noqa: BLE001 - the program runs on; watch only stops watching
        loop.close()
        _say(f"stopped watching: {type(exc).__name__}: {exc}")
    finally:
        loop.close()
        while child is not None and child.status is None:
            os.read(reader, 64)
        if child is not None:
            watch.close_turn()
    _report(watch, child is not None)
    if child is None:
        return 1 if loop.gone else 0  # run alone, stopped by its repository going away: not as asked
    assert child.status is not None
    return exit_with(child.status)


def _stopped() -> int:
    """128 + N when a signal that stops watch came before the program started (0: none)."""
    pending = set(signal.sigpending()) & set(RELAYED)
    return 128 + int(min(pending)) if pending else 0


def _spawn(path: str, command: list[str], env: dict[str, str], wake: int) -> Child:
    """The program started; Failure with env's status when it cannot be."""
    try:
        return Child(path, command, env, wake)
    except OSError as exc:
        import errno

        code = EXIT_NOT_FOUND if exc.errno == errno.ENOENT else (
            EXIT_NOT_EXECUTABLE if exc.errno in (errno.EACCES, errno.ENOEXEC, errno.EISDIR, errno.EPERM)
            else EXIT_FAILED)
        raise Failure(f"{command[0]}: {exc.strerror}", code) from None


def _begin(watch: Session, loop: Loop, command: list[str]) -> bool:
    """Before the program starts: the start checkpoint holds the tree as it is, and the program's turn opens,
    so that everything it changes, from its first write, is its own. False: watch failed (said why) and the
    program runs unwatched."""
    try:
        os.makedirs(watch.repo.rewind_dir, exist_ok=True)  # what still_there looks for
        shown = " ".join(" ".join(command).split())
        shown = shown[:60] + "…" if len(shown) > 60 else shown
        loop.checkpoint(f"watch start: {shown}" if command else "watch start", final=True)
        if command:
            watch.open_turn(time.time(), watch.anchor)
    except Exception as exc:  # noqa: BLE001 - the program runs all the same
        loop.close()
        _say(f"not watching: {type(exc).__name__}: {exc}")
        return False
    return True


def _report(watch: Session, program: bool) -> None:
    """The closing line: the checkpoints taken and the undo that takes back what the program changed."""
    if not watch.taken:
        return
    first, last = watch.taken[0], watch.taken[-1]
    ids = f"#{first}" if first == last else f"#{first}–#{last}"
    hint = ""
    if program and watch.anchor is not None and last != watch.anchor:
        hint = f"; git rewind undo {watch.anchor} --agent-only takes back what {watch.agent_name} changed"
    count = len(watch.taken)
    _say(f"{count} checkpoint{'s' if count > 1 else ''} ({ids}) in session {watch.session}{hint}")


def _watch(watch: Session, loop: Loop, reader: int, stop: threading.Event, child: Child | None) -> None:
    """Events until the program ends (or watch is stopped), then the last checkpoint."""
    loop.open()
    if child is None:
        _say(f"watching {watch.repo.root} in session {watch.session}; Ctrl-C stops")
    if loop.still_there():
        _start_daemon(watch)
    loop.wait(reader, stop, child)
    final = _ended(watch.agent_name, child.status) if child is not None and child.status is not None \
        else "watch stopped"
    loop.checkpoint(final, final=True)
