"""The file-watcher daemon, as the rest of git-rewind sees it: ask it, start it, stop it, describe it.

One daemon per work tree (daemonserver.py) watches the tree's file events and knows which paths
changed since the last checkpoint; a whole-tree scan (snapshot.scan) asks it over a Unix socket
in the work tree's git-rewind directory and then reads only those paths; after a shell command a hook
asks only whether anything changed at all (`changed_since_tip`), and takes no checkpoint when nothing
did. This module is on the hook's path: socket and minijson only, no pygit2, and every wait is
bounded by TIMEOUT. Without an answer (no daemon, a stale socket, a daemon that is killed or stuck,
an upgrade) the caller does the full scan it always did; a daemon in doubt says so, and the caller does the same.
"""

from __future__ import annotations

import os
import sys
import time

from . import daemonlink, layout, minijson

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from _socket import socket
    from collections.abc import Callable

    from .config import Settings
    from .repo import Repo

TIMEOUT = 0.5  # seconds: the longest a command waits on the daemon before scanning itself
SOCKET = layout.DAEMON_SOCKET
STATE = layout.DAEMON_STATE
LOCK = layout.DAEMON_LOCK
COOKIES = layout.DAEMON_COOKIES
RETRY_SECONDS = 600  # after a daemon could not start (watch limit, no events), hooks try again this late


supported = daemonlink.supported
fingerprint = daemonlink.fingerprint
socket_address = daemonlink.socket_address


# In the daemon process itself: the work tree's git-rewind directory and the server's own `answer`. A request
# made there (a hook's checkpoint asking what changed) is answered by a call, not over the socket the
# daemon is busy serving (a deadlock until the timeout).
_here: tuple[str, Callable[[dict[str, object]], dict[str, object]]] | None = None


def answer_in_process(rewind_dir: str, answer: Callable[[dict[str, object]], dict[str, object]] | None) -> None:
    """From now on (None: no longer), every Link to REWIND_DIR's daemon is ANSWER, called in this process
    (daemonserver.py's `Server.answer`, for any request, whatever its op)."""
    global _here
    _here = (os.path.realpath(rewind_dir), answer) if answer is not None else None


class Link:
    """One conversation with the daemon: `begin` (what changed) then `done` (the tree that holds it); or one
    question (`changed`, `status`, `stop`)."""

    def __init__(self, sock: socket | None,
                 answer: Callable[[dict[str, object]], dict[str, object]] | None = None) -> None:
        self.sock = sock
        self._answer = answer  # the daemon's own, in the daemon process
        self._buffer = b""

    @classmethod
    def open(cls, repo: Repo) -> Link | None:
        """Connect to the work tree's daemon, or None (none there, a dead one's socket, not Linux)."""
        return cls.to(repo.rewind_dir)

    @classmethod
    def to(cls, rewind_dir: str, timeout: float = TIMEOUT) -> Link | None:
        """Connect to the daemon serving REWIND_DIR within TIMEOUT, or None."""
        here = cls.here(rewind_dir)
        if here is not None:
            return here
        sock = daemonlink.connect(rewind_dir, timeout)
        return cls(sock) if sock is not None else None

    @classmethod
    def here(cls, rewind_dir: str) -> Link | None:
        """The daemon serving REWIND_DIR when this process is that daemon (answer_in_process), however this
        process found it (the string alike, as a hook's Repo.find gives it, spares the realpath walk), else None:
        what only the daemon's own work asks (a restore's ignored listing) never waits on a socket."""
        if _here is not None and (_here[0] == rewind_dir or _here[0] == os.path.realpath(rewind_dir)):
            return cls(None, _here[1])
        return None

    def ask(self, request: dict[str, object], timeout: float = TIMEOUT) -> dict[str, object] | None:
        """Send REQUEST, wait at most TIMEOUT for the answer; None if none came (the link is then closed)."""
        if self._answer is not None:
            return self._answer(request)
        try:
            answer = minijson.loads(self.exchange(minijson.dumps(request), timeout))
        except (OSError, ValueError):
            self.close()
            return None
        return answer if isinstance(answer, dict) else None

    def exchange(self, line: str, timeout: float) -> str:
        """Send one request LINE, return the answer's line; OSError (TimeoutError: none within TIMEOUT,
        ConnectionError: the daemon closed the link) when there is none. Text that came from bytes
        (surrogate escapes) goes as those bytes, both ways."""
        assert self.sock is not None
        got, self._buffer = daemonlink.exchange(self.sock, line, timeout, self._buffer)
        return got

    def close(self) -> None:
        if self.sock is None:
            return
        try:
            self.sock.close()
        except OSError:
            pass


class Changes:
    """The daemon's answer to `begin`: the paths changed since BASE (its last checkpointed tree), or
    `full` (a reason) when a full scan is needed. Report the resulting tree with `done`."""

    __slots__ = ("link", "epoch", "base", "paths", "nested", "full")

    def __init__(self, link: Link, answer: dict[str, object]) -> None:
        self.link = link
        self.epoch = answer.get("epoch")
        base, paths = answer.get("base"), answer.get("paths")
        from .note import Oid

        self.base = Oid(base) if isinstance(base, str) else None
        self.paths = [p for p in paths if isinstance(p, str)] if isinstance(paths, list) else None
        nested = answer.get("nested")
        self.nested = [p for p in nested if isinstance(p, str)] if isinstance(nested, list) else []
        full = answer.get("full")
        self.full = full if isinstance(full, str) else (None if self.base and self.paths is not None else "no base")

    def done(self, tree: str) -> None:
        """TREE holds every change the answer covered: the daemon's next answer is relative to it."""
        if isinstance(self.epoch, int):
            self.link.ask({"op": "done", "epoch": self.epoch, "tree": tree})
        self.link.close()

    def close(self) -> None:
        self.link.close()


def begin(repo: Repo, rules: Callable[[Repo], str]) -> Changes | None:
    """What changed since the daemon's base, for a scan under the work-tree lock; None: no daemon.
    RULES gives the signature of the ignore files outside the tree as this process sees them."""
    link = Link.open(repo)
    if link is None:
        return None
    answer = link.ask({"op": "begin", "fingerprint": fingerprint(), "rules": rules(repo)})
    if answer is None:
        return None
    if answer.get("stopping"):
        link.close()
        return None
    return Changes(link, answer)


def changed_since_tip(repo: Repo, session: str) -> tuple[bool, str] | None:
    """Whether anything may have changed in the work tree since SESSION's newest checkpoint here, as the
    daemon knows it without a scan: (False, why) only when no path is dirty since its base (after its settle
    barrier, so a command's own writes are seen) and that base is the session's tip tree; (True, why) when a
    checkpoint must look. None: no daemon answered (the caller does what it does without one)."""
    link = Link.open(repo)
    if link is None:
        return None
    try:
        answer = link.ask({"op": "changed", "session": session, "fingerprint": fingerprint()})
    finally:
        link.close()
    if answer is None or not isinstance(answer.get("changed"), bool):
        return None
    why = answer.get("why")
    return bool(answer["changed"]), why if isinstance(why, str) else "the daemon says so"


# running it ------------------------------------------------------------------------------


def read_state(repo: Repo) -> dict[str, object]:
    return minijson.load_file(os.path.join(repo.rewind_dir, STATE))


def ours(repo: Repo, pid: object) -> bool:
    """PID is a daemon of this work tree: not a process that took the pid of one that died without a word."""
    from .fsutil import alive

    if not alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            args = fh.read().split(b"\0")
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return False
    root = os.path.realpath(repo.root)
    return args[-3:-1] == [b"daemon", b"run"] and (cwd == root or cwd.startswith(root.rstrip("/") + "/"))


def spawn(repo: Repo) -> subprocess.Popen[bytes]:
    """Start the daemon fully detached: its own session, no inherited pipes, so nobody waits on it."""
    from .gitcmd import detached

    os.makedirs(repo.rewind_dir, exist_ok=True)
    return detached([sys.executable, "-m", "git_rewind", "daemon", "run"], repo.root)


def launch(repo: Repo, wait: float = 30.0) -> dict[str, object]:
    """`daemon start`: spawn one unless one answers, and wait until it does; its status, or a RewindError
    that says why it did not start. What an earlier daemon left in the state (why it failed or stopped) is
    forgotten first, so that what the state says from now on is about this one."""
    from .errors import RewindError
    from .fsutil import write_atomic

    if not supported():
        raise RewindError("the daemon needs Linux inotify; without it every command scans the tree")
    proc = None
    if ask_status(repo) is None:
        os.makedirs(repo.rewind_dir, exist_ok=True)
        state = {k: v for k, v in read_state(repo).items() if k not in ("failed", "stopped")}
        write_atomic(os.path.join(repo.rewind_dir, STATE), minijson.dumps({**state, "tried": time.time()}) + "\n")
        proc = spawn(repo)
    stuck = 0.0
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        live = ask_status(repo)
        if live is not None:
            return live
        state = read_state(repo)
        if isinstance(state.get("failed"), str):
            raise RewindError(f"the daemon could not start: {state['failed']}")
        # Exit status 0 without having run: another daemon holds the lock, and answers soon (unless it is stuck).
        if proc is not None and proc.poll() is not None and (proc.returncode or "stopped" in state):
            raise RewindError(f"the daemon exited as soon as it started (exit status {proc.returncode})")
        if proc is not None and proc.poll() == 0 and ours(repo, state.get("pid")):
            stuck = stuck or time.monotonic()
            if time.monotonic() - stuck > 2:
                raise RewindError(f"a daemon (pid {state['pid']}) runs but does not answer; "
                                  "git rewind daemon stop ends it")
        time.sleep(0.05)
    raise RewindError(f"the daemon did not answer within {wait:.0f} s (see git rewind status)")


def index_entries(repo: Repo) -> int:
    """Files the person's index tracks, from its header (12 bytes: no index parse)."""
    try:
        with open(os.path.join(repo.gitdir, "index"), "rb") as fh:
            header = fh.read(12)
    except OSError:
        return 0
    if len(header) < 12 or header[:4] != b"DIRC":
        return 0
    return int.from_bytes(header[8:12], "big")


def maybe_start(repo: Repo, settings: Settings) -> bool:
    """At a hook's event: start the daemon when config says so and none runs (`daemon = "auto"`: the
    repository is larger than `daemon_min_files`). A few stats when one runs already."""
    mode = settings.get("daemon")
    if mode == "off" or not supported() or _here is not None:  # in the daemon: this one runs
        return False
    state = read_state(repo)
    if ours(repo, state.get("pid")) and os.path.exists(os.path.join(repo.rewind_dir, SOCKET)):
        return False
    now = time.time()
    tried = state.get("tried")
    if isinstance(tried, (int, float)) and now - tried < (RETRY_SECONDS if state.get("failed") else 10):
        return False
    minimum = settings.get("daemon_min_files")
    if mode == "auto" and index_entries(repo) <= (minimum if isinstance(minimum, int) else 5000):
        return False
    from .fsutil import write_atomic

    write_atomic(os.path.join(repo.rewind_dir, STATE), minijson.dumps({**state, "tried": now}) + "\n")
    spawn(repo)
    return True


def ask_status(repo: Repo) -> dict[str, object] | None:
    """The running daemon's own account (watched directories, dirty paths), or None."""
    link = Link.open(repo)
    if link is None:
        return None
    try:
        return link.ask({"op": "status"})
    finally:
        link.close()


def memory_kib(pid: int) -> int | None:
    """Resident memory of PID (VmRSS), in KiB."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def describe(repo: Repo) -> dict[str, object]:
    """For `status`: whether it runs, since when, how many directories it watches, its memory; else why not."""
    state = read_state(repo)
    live = ask_status(repo)
    if live is not None and isinstance(live.get("pid"), int):
        pid = live["pid"]
        assert isinstance(pid, int)
        return {"running": True, "pid": pid, "since": live.get("started"), "watched": live.get("watched"),
                "dirty": live.get("dirty"), "nested": live.get("nested"), "memory_kib": memory_kib(pid),
                "answered": live.get("answered"), "last_full": live.get("last_full"), "served": live.get("served")}
    info: dict[str, object] = {"running": False}
    if not supported():
        info["reason"] = "not available on this system (it needs Linux inotify); every command scans the tree"
    elif isinstance(state.get("failed"), str):
        info["reason"] = state["failed"]
    elif ours(repo, state.get("pid")):
        info["reason"] = "not answering"
    return info


def stop(repo: Repo, wait: float = 5.0) -> bool:
    """Ask the daemon to exit (SIGTERM if it does not answer); True if one was running."""
    state = read_state(repo)
    pid = state.get("pid")
    link = Link.open(repo)
    answered = link is not None and link.ask({"op": "stop"}) is not None
    if link is not None:
        link.close()
    if not answered and ours(repo, pid):
        import signal

        assert isinstance(pid, int)
        try:
            os.kill(pid, signal.SIGTERM)
            os.kill(pid, signal.SIGCONT)  # a stopped one (kill -STOP, a debugger) takes its SIGTERM once continued
        except OSError:
            pass
    elif not answered:
        return False
    from .fsutil import alive

    deadline = time.monotonic() + wait
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return True
