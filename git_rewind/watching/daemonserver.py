"""The daemon process: `git rewind daemon run`, one per work tree, started detached by `daemon start`
or by a hook.

It holds `daemon.lock` for its whole life (a second one exits at once), binds `daemon.sock` (a
socket left by a dead daemon is stale: the lock says so, and it is replaced) and serves newline-
delimited JSON requests one at a time, between reading file events (watcher.py):

- `begin` {fingerprint, rules}: settle the events, answer {epoch, base, paths} (what changed since
  the tree of the last checkpoint) or {epoch, full: why} when only a full scan can be trusted;
- `done` {epoch, tree}: TREE holds every change up to EPOCH: it is the base from now on;
- `changed` {session, fingerprint}: settle the events, answer {changed: false, why} only when no path is
  dirty since the base and the base is SESSION's newest checkpoint's tree (nothing a checkpoint would add),
  else {changed: true, why}: what a hook asks after a shell command, to skip without scanning;
- `status`, `stop`;
- in its own process only (IN_PROCESS), for a restore it runs: `ignored`, the listing of the ignored files git
  gave for the same rules and index, kept while no name in the tree changed in a way that could change it
  (watcher.names), with `ignored_done`, `ignored_mark` and `ignored_kept` (restore._Ignored);
- any op its starter adds (`handlers`): `hook` {fingerprint, argv, payload, env, cwd, umask, parent}, a whole
  hook call answered here (hook.serve, given by `git rewind daemon run`: this layer does not know the hook);
  `undo`, the same for a plain `git rewind undo ID --yes` (undocmd.serve).

A request that carries a fingerprint not the daemon's own comes from another installation (an upgrade):
the daemon answers {stopping, why: "upgraded"} and steps down. In this process a request of its own (the
hook's checkpoint asking `begin`) is answered by `answer` directly (daemon.answer_in_process), never over
the socket it is serving.

It exits after `daemon_idle_minutes` without a `begin` (0: never for that), on `stop`, when the work tree or its git
directory goes away, and when a command of another installation asks (an upgrade).
"""

from __future__ import annotations

import os
import selectors
import socket
import time

from ..base import daemon, gitcmd, minijson
from ..base.clock import utc_now
from ..base.fsutil import write_atomic
from ..base.repo import Repo
from .watcher import ABSENT, DIR, FILE, NO_EVENT_FILESYSTEMS, UNKNOWN, Watcher, WatchError, filesystem_type

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    # An op the daemon's starter adds: (the daemon's repo, the request) -> the answer.
    Handler = Callable[[Repo, dict[str, object]], dict[str, object]]

# Ops only the daemon's own work asks, in its process (base/daemon.Link.here): never answered over the socket.
IN_PROCESS = ("ignored", "ignored_done", "ignored_mark", "ignored_kept")
SETTLE_TIMEOUT = 0.3  # seconds for the cookie's event; a filesystem without events never sends it
REAP_SECONDS = 1.0  # how often the loop wakes to reap the detached processes a hook started (gitcmd.reap)


class Server:
    def __init__(self, repo: Repo, idle_minutes: float, max_watches: int | None,
                 handlers: Mapping[str, Handler] | None = None) -> None:
        self.repo = repo
        self.idle = idle_minutes * 60
        self.max_watches = max_watches
        self.fingerprint = daemon.fingerprint()
        self.started = utc_now()
        self.base: str | None = None
        self.base_epoch = 0
        self.rules: str | None = None
        self.last_request = time.monotonic()
        self.clients: dict[socket.socket, bytearray] = {}
        self.running = True
        self.handlers = dict(handlers or {})
        self.answered = {"changes": 0, "full": 0}  # how `begin` was answered: paths, or a full scan
        self.served: dict[str, int] = {}  # requests of the handlers' ops, by op
        self.last_full: str | None = None
        self.listing: tuple[object, int, list[str]] | None = None  # (key, epoch, names): restore's ignored listing
        self.replaced: dict[str, int] = {}  # path -> epoch after which a restore wrote it over what stood there
        self.watcher: Watcher | None = None
        self.listener: socket.socket | None = None

    # life ------------------------------------------------------------------------------------

    def run(self) -> int:
        from ..store import snapshot

        rewind_dir = self.repo.rewind_dir
        kind = os.environ.get("GIT_REWIND_DAEMON_FSTYPE") or filesystem_type(self.repo.root)
        if kind in NO_EVENT_FILESYSTEMS:
            return self.fail(f"the work tree is on {kind}, which gives no reliable file events")
        cookie_dir = os.path.join(rewind_dir, daemon.COOKIES)
        os.makedirs(cookie_dir, exist_ok=True)
        for name in os.listdir(cookie_dir):
            try:
                os.unlink(os.path.join(cookie_dir, name))
            except OSError:
                pass
        limit = os.environ.get("GIT_REWIND_DAEMON_MAX_WATCHES")  # to test the machine-wide limit
        try:
            self.rules = snapshot.rules_signature(self.repo)
            self.watcher = Watcher(self.repo.root, cookie_dir, lambda under: snapshot.ignored_dirs(self.repo, under),
                                   int(limit) if limit else self.max_watches)
        except WatchError as exc:
            return self.fail(str(exc))
        address, fd = daemon.socket_address(rewind_dir)
        try:
            os.unlink(os.path.join(rewind_dir, daemon.SOCKET))  # we hold the lock: any socket here is stale
        except FileNotFoundError:
            pass
        self.first_scan()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(address)
        if fd is not None:
            os.close(fd)
        self.listener.listen(16)
        self.listener.setblocking(False)
        write_atomic(os.path.join(rewind_dir, daemon.STATE),
                     minijson.dumps({"pid": os.getpid(), "started": self.started}) + "\n")
        daemon.answer_in_process(rewind_dir, self.answer)
        try:
            self.loop()
        finally:
            daemon.answer_in_process(rewind_dir, None)
            self.shutdown()
        return 0

    def first_scan(self) -> None:
        """Scan the whole tree once before answering anyone, so that the first checkpoint asked of the daemon
        already reads only what changed (a hook starts it after its own full scan). Commands meanwhile find
        no socket and scan as they always did; on any failure the first command's full scan sets the base.
        Its base is the work tree's newest checkpoint, as a checkpoint's own scan has: a file larger than
        max_file_size that no checkpoint holds is left out of the daemon's tree too (git decides the rest)."""
        from ..base import config
        from ..store import snapshot, store

        assert self.watcher is not None
        try:
            limit = int(config.load_or_defaults(self.repo.root)[0]["max_file_size"].value)
            with self.repo.worktree_lock():
                epoch = self.watcher.settle(SETTLE_TIMEOUT)
                if epoch is None:
                    return
                newest = store.worktree_last(self.repo)
                base = newest.tree if newest is not None else store.head_tree(self.repo)
                tree = snapshot.scan(self.repo, limit, base_tree=base).tree
            self.base, self.base_epoch = tree, epoch
            self.watcher.forget(epoch)
        except Exception:  # noqa: BLE001 - a cache warming up; the daemon still serves
            return

    def fail(self, reason: str) -> int:
        """Could not watch: say why for `status`, and hooks wait RETRY_SECONDS before trying again."""
        write_atomic(os.path.join(self.repo.rewind_dir, daemon.STATE),
                     minijson.dumps({"failed": reason, "tried": time.time(), "at": utc_now()}) + "\n")
        return 1

    def shutdown(self) -> None:
        try:
            os.unlink(os.path.join(self.repo.rewind_dir, daemon.SOCKET))
        except OSError:
            pass
        state = os.path.join(self.repo.rewind_dir, daemon.STATE)
        if os.path.isdir(self.repo.rewind_dir):
            write_atomic(state, minijson.dumps({"stopped": utc_now()}) + "\n")
        if self.watcher is not None:
            self.watcher.close()

    def loop(self) -> None:
        assert self.watcher is not None and self.listener is not None
        sel = selectors.DefaultSelector()
        sel.register(self.watcher.inotify.fileno(), selectors.EVENT_READ, "events")
        sel.register(self.listener, selectors.EVENT_READ, "listen")
        checked = time.monotonic()
        while self.running:
            left = self.idle - (time.monotonic() - self.last_request) if self.idle else 60.0  # 0: never idles out
            if left <= 0:
                return
            wake = REAP_SECONDS if gitcmd.reap() else 60.0  # children a hook started: no zombies left behind
            for key, _mask in sel.select(timeout=min(left, wake)):
                if key.data == "events":
                    self.watcher.read(0)
                elif key.data == "listen":
                    try:
                        conn, _ = self.listener.accept()
                    except OSError:
                        continue
                    conn.setblocking(False)
                    self.clients[conn] = bytearray()
                    sel.register(conn, selectors.EVENT_READ, "client")
                else:
                    client = key.fileobj
                    assert isinstance(client, socket.socket)
                    if not self.serve(client):
                        sel.unregister(client)
                        self.clients.pop(client, None)
                        client.close()
                if not self.running:
                    break
            if self.watcher.root_gone or not os.path.isdir(self.repo.rewind_dir):
                return
            if time.monotonic() - checked > 60:  # installed anew (an upgrade): the next command starts its own
                checked = time.monotonic()
                if daemon.fingerprint() != self.fingerprint:
                    return

    # requests --------------------------------------------------------------------------------

    def serve(self, conn: socket.socket) -> bool:
        """Read what CONN sent and answer each whole line; False when it closed."""
        try:
            chunk = conn.recv(65536)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if not chunk:
            return False
        buffer = self.clients[conn]
        buffer += chunk
        while b"\n" in buffer:
            line, _, rest = bytes(buffer).partition(b"\n")
            buffer[:] = rest
            try:
                request = minijson.loads(line.decode("utf-8", "surrogateescape"))
            except ValueError:
                return False
            if not isinstance(request, dict):
                return False
            if request.get("op") in IN_PROCESS:  # another process's: answered as unknown
                request.clear()
                request["op"] = "(in process only)"
            if request.get("op") in self.handlers and _hung_up(conn):
                return False  # it gave up waiting (a daemon stopped meanwhile) and ran the call itself
            answer = self.answer(request)
            try:
                conn.setblocking(True)
                conn.settimeout(2.0)
                conn.sendall(minijson.dumps(answer).encode("utf-8", "surrogateescape") + b"\n")
                conn.setblocking(False)
            except OSError:
                return False
        return True

    def answer(self, request: dict[str, object]) -> dict[str, object]:
        assert self.watcher is not None
        op = request.get("op")
        if op == "status":
            return {"pid": os.getpid(), "started": self.started, "watched": len(self.watcher.paths),
                    "dirty": len(self.watcher.dirty), "nested": len(self.watcher.nested),
                    "doubt": self.watcher.doubt is not None, "events": self.watcher.events,
                    "answered": dict(self.answered), "last_full": self.last_full, "served": dict(self.served)}
        if op == "stop":
            self.running = False
            return {"stopping": True}
        if op == "begin" or ("fingerprint" in request and op in self.handlers):
            self.last_request = time.monotonic()
            if request.get("fingerprint") != self.fingerprint:
                self.running = False  # another installation asks: an upgrade; it starts its own
                return {"stopping": True, "why": "upgraded"}
        if op == "begin":
            return self.begin(request)
        if op == "done":
            return self.done(request)
        if op == "changed":
            self.last_request = time.monotonic()
            try:
                changed, why = self.changed(request)
            except Exception as exc:  # noqa: BLE001 - a bad session name, a ref git cannot read: a checkpoint looks
                changed, why = True, f"could not tell ({type(exc).__name__}: {exc})"
            return {"changed": changed, "why": why}
        if op in IN_PROCESS:
            return self.ignored(op, request)
        handler = self.handlers.get(op) if isinstance(op, str) else None
        if handler is not None and isinstance(op, str):
            self.served[op] = self.served.get(op, 0) + 1
            try:
                return handler(self.repo, request)
            except Exception as exc:  # noqa: BLE001 - one request's failure, never the daemon's end
                return {"error": f"{type(exc).__name__}: {exc}"}
        return {"error": f"unknown request {op!r}"}

    def begin(self, request: dict[str, object]) -> dict[str, object]:
        answer = self._begin(request)
        if "paths" in answer:
            self.answered["changes"] += 1
        else:
            self.answered["full"] += 1
            self.last_full = str(answer.get("full"))
        return answer

    def _begin(self, request: dict[str, object]) -> dict[str, object]:
        from ..store import snapshot

        watcher = self.watcher
        assert watcher is not None
        rules = snapshot.rules_signature(self.repo)
        if rules != self.rules:  # info/exclude or the global ignore file changed: what is watched may too
            self.rules = rules
            watcher.watch_all()
        epoch = watcher.settle(SETTLE_TIMEOUT)
        if epoch is None:
            return {"full": "file events did not arrive"}
        if watcher.rewatch:  # before the full scan the doubt asks for, so a directory no longer ignored is seen
            watcher.watch_all()
        if request.get("rules") != rules:  # its scan would follow other rules: it must not become the base
            return {"full": "the command's ignore files are not the daemon's"}
        if self.base is None:
            return {"epoch": epoch, "full": "no base yet"}
        if watcher.doubt is not None:
            return {"epoch": epoch, "full": "changes the watcher could not follow exactly"}
        paths = sorted(p for p, e in watcher.dirty.items() if e <= epoch)
        return {"epoch": epoch, "base": self.base, "paths": paths, "nested": sorted(watcher.nested)}

    def changed(self, request: dict[str, object]) -> tuple[bool, str]:
        """Whether a checkpoint of REQUEST's session could hold anything new, and why (see `changed` above).

        Nothing new only when every source of a different tree is ruled out: no path dirty up to the settle
        barrier, nothing in doubt, the same ignore files, no nested repository (whose checked-out commit
        moves without an event here), the base the session's own newest tree, and the person's index and
        git's settings as they were when the base was checked (conversion.py's key).
        """
        from ..base.repo import check_session
        from ..store import conversion, snapshot, store

        watcher = self.watcher
        assert watcher is not None
        session = request.get("session")
        if not isinstance(session, str):
            return True, "no session named"
        check_session(session)  # a name that is no ref component never reaches a path
        if request.get("fingerprint") != self.fingerprint:
            return True, "the daemon is another installation's"  # the checkpoint's `begin` replaces it
        if snapshot.rules_signature(self.repo) != self.rules:
            return True, "the ignore files outside the tree changed"
        epoch = watcher.settle(SETTLE_TIMEOUT)
        if epoch is None:
            return True, "file events did not arrive"
        if self.base is None:
            return True, "the daemon has no base yet"
        if watcher.doubt is not None:
            return True, "changes the watcher could not follow exactly"
        dirty = sum(1 for e in watcher.dirty.values() if e <= epoch)
        if dirty:
            return True, f"{dirty} path{'s' if dirty != 1 else ''} changed since the last checkpoint"
        if watcher.nested:
            return True, "nested repositories, which the daemon does not look inside"
        tip = store.session_tip(self.repo, session)
        if tip is None:
            return True, "the session has no checkpoint in this work tree yet"
        if tip.tree != self.base:
            return True, f"the session's last checkpoint #{tip.seq} holds another tree than the daemon's base"
        if conversion.stale(conversion.verified(self.repo, self.base), conversion.reference_key(self.repo), []):
            return True, "the person's index or git's settings changed since"
        return False, f"no file changed since #{tip.seq}"

    # a restore's listing of the ignored files (restore._Ignored) -------------------------------------

    def ignored(self, op: object, request: dict[str, object]) -> dict[str, object]:
        """`ignored` {key}: {listing} (the names git listed for KEY, still what it would list), or {epoch} to
        give git's with `ignored_done` {epoch, key, listing}; `ignored_mark` (before a restore writes) {epoch},
        then `ignored_kept` {since, paths}: PATHS stood as files since that epoch, and the restore renamed files
        onto them. {} when the events cannot be trusted."""
        watcher = self.watcher
        assert watcher is not None
        if op == "ignored_done":
            epoch, listing = request.get("epoch"), request.get("listing")
            if isinstance(epoch, int) and isinstance(listing, list):
                self.listing = None
                self._keep(request.get("key"), epoch, [str(name) for name in listing])
            return {}
        if op == "ignored_kept":
            since, paths = request.get("since"), request.get("paths")
            if self.listing is not None and isinstance(since, int) and isinstance(paths, list):
                for path in paths:
                    self.replaced[str(path)] = min(self.replaced.get(str(path), since), since)
            return {}
        epoch = watcher.settle(SETTLE_TIMEOUT)
        if epoch is None:
            return {}
        kept = self.listing
        if op == "ignored" and kept is not None and kept[0] == request.get("key") and self._listing_holds(kept[1]):
            self._keep(kept[0], epoch, kept[2])  # it holds at EPOCH too, if nothing moved while it was checked
            return {"listing": kept[2]}
        return {"epoch": epoch}

    def _keep(self, key: object, epoch: int, names: list[str]) -> None:
        """NAMES are what git lists at EPOCH, provided no name changed after it: told by a settle now (git ran,
        or the disk was looked at, after EPOCH's settle); from then on only later name events are checked."""
        watcher = self.watcher
        assert watcher is not None
        if watcher.settle(SETTLE_TIMEOUT) is None or watcher.names_lost > epoch \
                or any(last > epoch for _first, _before, last in watcher.names.values()):
            return
        self.listing = (key, epoch, names)
        self.replaced = {}
        watcher.forget_names(epoch)

    def _listing_holds(self, since: int) -> bool:
        """No name changed after the epoch SINCE in a way that could change what git lists as ignored: every path
        with a name event since stands as it stood then (nothing, a file or a directory), as the first event
        says, or, where a rename onto it hides that, as a restore that found a file there says (`replaced`)."""
        watcher = self.watcher
        assert watcher is not None
        if watcher.names_lost > since:
            return False
        for path, (first, before, last) in watcher.names.items():
            if last <= since:
                continue
            if first <= since:
                return False
            if before == UNKNOWN:
                found = self.replaced.get(path)
                if found is None or first <= found:
                    return False
                before = FILE
            if before != _standing(os.path.join(self.repo.root, path)):
                return False
        return True

    def done(self, request: dict[str, object]) -> dict[str, object]:
        epoch, tree = request.get("epoch"), request.get("tree")
        if not isinstance(epoch, int) or not isinstance(tree, str) or epoch <= self.base_epoch:
            return {"ok": False}
        assert self.watcher is not None
        self.base, self.base_epoch = tree, epoch
        self.watcher.forget(epoch)
        return {"ok": True}


def _standing(full: str) -> str:
    """What stands at FULL now: nothing, a directory, or a file (a link or anything else not a directory)."""
    import stat

    try:
        return DIR if stat.S_ISDIR(os.lstat(full).st_mode) else FILE
    except OSError:
        return ABSENT


def _hung_up(conn: socket.socket) -> bool:
    """CONN's other end has closed it: nobody waits for an answer."""
    try:
        return conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def run(repo: Repo, handlers: Mapping[str, Handler] | None = None) -> int:
    """`git rewind daemon run`: serve until idle, stopped, or the work tree goes away; HANDLERS: the ops it
    answers beyond its own (`hook`)."""
    import signal

    from ..base import config
    from ..base.lock import Lock

    # A process that blocked signals for itself (`git rewind watch` takes them with sigwaitinfo) passes its
    # mask on to what it starts: the daemon must still end on `daemon stop`'s SIGTERM.
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    from ..store import checkpoints

    checkpoints.LONG_LIVED = True  # the hooks it answers read notes: their reads must not pin garbage for good
    os.makedirs(repo.rewind_dir, exist_ok=True)
    lock = Lock(os.path.join(repo.rewind_dir, daemon.LOCK), timeout=0)
    try:
        lock.__enter__()
    except Exception:  # another daemon holds it: one per work tree
        return 0
    try:
        settings = config.load_or_defaults(repo.root)[0]
        idle = float(settings["daemon_idle_minutes"].value)
        from ..base import objects

        objects.in_process(True)  # a long-lived process: checkpoints written here spawn no git per checkpoint
        return Server(repo, idle, None, handlers).run()
    finally:
        lock.__exit__(None, None, None)
