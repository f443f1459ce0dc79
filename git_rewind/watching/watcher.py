"""What changed in a work tree since a moment, from the kernel's file events (Linux inotify).

The daemon (daemonserver.py) keeps one Watcher per work tree. Every directory of the tree is
watched except `.git`, nested repositories and directories git ignores whole; an event marks
its path dirty with the current epoch. A barrier (`settle`) makes a cookie file in a watched
directory of our own and reads events until the cookie's arrives: inotify queues the events of
one instance in the order they happened, so every change made before the barrier is then seen.

Anything the watcher cannot follow exactly sets `doubt` instead of guessing: a queue overflow, a
directory moved or a nested repository appearing, a .gitignore edited (ignored directories may
stop being ignored), too many dirty paths, a watch that could not be added. A checkpoint taken
in doubt is a full scan (snapshot.scan), whose result then becomes the base again.
"""

from __future__ import annotations

import os
import time

from inotify_simple import INotify, flags

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_DIR_MASK = (flags.CREATE | flags.DELETE | flags.MODIFY | flags.CLOSE_WRITE | flags.ATTRIB | flags.MOVED_FROM
             | flags.MOVED_TO | flags.DELETE_SELF | flags.MOVE_SELF | flags.DONT_FOLLOW | flags.ONLYDIR
             | flags.EXCL_UNLINK)
_COOKIE_MASK = flags.CREATE | flags.ONLYDIR
MAX_DIRTY = 5000  # past this many changed paths a full scan is cheaper than reading each
_NAME_EVENTS = flags.CREATE | flags.DELETE | flags.MOVED_FROM | flags.MOVED_TO

# What stood at a path before its first name event (Watcher.names): nothing (it was created), a file (or
# link), a directory (it was deleted or moved away), or not known (something was renamed onto it).
ABSENT, FILE, DIR, UNKNOWN = "absent", "file", "dir", "unknown"


# Filesystems whose changes made elsewhere (another machine, the host of a VM) send no inotify events.
NO_EVENT_FILESYSTEMS = ("nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "fuse.sshfs", "afs", "ceph", "glusterfs",
                        "lustre", "gpfs", "fuse.rclone", "davfs", "fuse.s3fs")


def filesystem_type(path: str) -> str:
    """The mount type holding PATH (from /proc/self/mountinfo: the longest mount point above it)."""
    best, kind = "", ""
    real = os.path.realpath(path)
    try:
        with open("/proc/self/mountinfo", "rb") as fh:
            for raw in fh:
                fields = raw.split()
                try:
                    sep = fields.index(b"-")
                except ValueError:
                    continue
                point = os.fsdecode(fields[4]).replace("\\040", " ")
                inside = real == point or real.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(best):
                    best, kind = point, os.fsdecode(fields[sep + 1])
    except OSError:
        return ""
    return kind


class WatchError(Exception):
    """The tree cannot be watched (the watch limit, a filesystem without events): no daemon."""


class Watcher:
    """Dirty paths of one work tree, each with the epoch it changed in."""

    def __init__(self, root: str, cookie_dir: str, ignored_dirs: Callable[[str], set[str]],
                 max_watches: int | None = None) -> None:
        self.root = root
        self.cookie_dir = cookie_dir
        self._ignored_dirs = ignored_dirs  # relative dir (""=root) -> ignored dirs under it, relative to root
        self.max_watches = max_watches
        self.inotify = INotify(nonblocking=True)
        self.paths: dict[int, str] = {}  # wd -> directory relative to root ("" for the root)
        self.wds: dict[str, int] = {}
        self.nested: set[str] = set()  # nested repositories (never watched inside)
        self.ignored: set[str] = set()
        self.dirty: dict[str, int] = {}  # path -> epoch of its last change
        self.doubt: int | None = 0  # epoch of the first change that could not be followed exactly
        self.epoch = 1
        self.events = 0
        self.root_gone = False
        self.rewatch = False  # a .gitignore changed: a directory ignored whole (so unwatched) may no longer be
        # Names made, removed or renamed since `forget_names`: path -> (epoch of the first such event, what stood
        # there before it, epoch of the last). What is ignored is a matter of names and rules only: the
        # daemon's kept listing of ignored files (daemonserver.Server.ignored) is checked against these.
        self.names: dict[str, tuple[int, str, int]] = {}
        self.names_lost = 0  # epoch of the last change after which names could not be followed
        self._cookie_seq = 0
        self._proven = False  # a cookie came back: this instance is sent events
        self._cookie_wd = self.inotify.add_watch(cookie_dir, _COOKIE_MASK)
        self.watch_all()

    # watches -----------------------------------------------------------------------------

    def watch_all(self) -> None:
        """(Re)watch the whole tree; what changed meanwhile is in doubt until the next full scan."""
        for wd in list(self.paths):
            try:
                self.inotify.rm_watch(wd)
            except OSError:
                pass
        self.paths.clear()
        self.wds.clear()
        self.nested.clear()
        self.ignored = self._ignored_dirs("")
        self.rewatch = False
        self._mark_doubt()
        self._lose_names()
        self._watch_tree("")

    def _watch_tree(self, top: str) -> list[str]:
        """Watch TOP and every directory below it; returns the files found (for a new directory)."""
        files: list[str] = []
        stack = [top]
        while stack:
            rel = stack.pop()
            if rel in self.ignored:
                continue
            full = os.path.join(self.root, rel) if rel else self.root
            if rel and os.path.lexists(os.path.join(full, ".git")):
                self.nested.add(rel)
                continue
            if not self._add_watch(rel, full):
                continue
            try:
                entries = list(os.scandir(full))
            except OSError:
                continue  # gone again: its parent's event says so
            for entry in entries:
                child = f"{rel}/{entry.name}" if rel else entry.name
                if not rel and entry.name == ".git":
                    continue
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                if is_dir:
                    stack.append(child)
                else:
                    files.append(child)
        return files

    def _add_watch(self, rel: str, full: str) -> bool:
        if self.max_watches is not None and len(self.paths) >= self.max_watches:
            raise WatchError(f"inotify watch limit reached ({self.max_watches} watches)")
        try:
            wd = self.inotify.add_watch(full, _DIR_MASK)
        except OSError as exc:
            if exc.errno == 28:  # ENOSPC: fs.inotify.max_user_watches, shared by the whole machine
                raise WatchError("inotify watch limit reached (fs.inotify.max_user_watches)") from None
            if exc.errno in (2, 20):  # gone, or no longer a directory
                return False
            raise WatchError(f"cannot watch {full}: {exc.strerror}") from None
        old = self.paths.get(wd)
        if old is not None and old != rel:
            self.wds.pop(old, None)
        self.paths[wd] = rel
        self.wds[rel] = wd
        return True

    # events ------------------------------------------------------------------------------

    def _mark_doubt(self) -> None:
        if self.doubt is None:
            self.doubt = self.epoch

    def _mark(self, path: str) -> None:
        self.dirty[path] = self.epoch
        if len(self.dirty) > MAX_DIRTY:
            self._mark_doubt()
            self.dirty.clear()

    def _lose_names(self) -> None:
        self.names_lost = self.epoch
        self.names.clear()

    def _name(self, path: str, mask: int) -> None:
        """A name event at PATH (MASK): the first since forget_names says what stood there before."""
        if not mask & _NAME_EVENTS:
            return
        known = self.names.get(path)
        if known is not None:
            self.names[path] = (known[0], known[1], self.epoch)
            return
        if mask & flags.CREATE:
            before = ABSENT
        elif mask & (flags.DELETE | flags.MOVED_FROM):
            before = DIR if mask & flags.ISDIR else FILE
        else:
            before = UNKNOWN
        self.names[path] = (self.epoch, before, self.epoch)
        if len(self.names) > MAX_DIRTY:
            self._lose_names()

    def read(self, timeout_ms: int | None = 0) -> bool:
        """Take in the events queued now (waiting up to TIMEOUT_MS for the first); True if a cookie came."""
        cookie = False
        for event in self.inotify.read(timeout=timeout_ms):
            self.events += 1
            if event.mask & flags.Q_OVERFLOW:
                self._mark_doubt()
                self._lose_names()
                continue
            if event.wd == self._cookie_wd:
                cookie = cookie or event.name == f"c{self._cookie_seq}"
                continue
            parent = self.paths.get(event.wd)
            if parent is None:
                continue
            if event.mask & flags.IGNORED:  # the watch went with its directory
                self.paths.pop(event.wd, None)
                if self.wds.get(parent) == event.wd:
                    del self.wds[parent]
                if parent == "":
                    self.root_gone = True
                continue
            if event.mask & (flags.DELETE_SELF | flags.MOVE_SELF):
                if parent == "" and event.mask & flags.MOVE_SELF:
                    self.root_gone = True
                continue  # the parent's own event names it
            name = event.name
            if not name:
                continue
            path = f"{parent}/{name}" if parent else name
            if not parent and name == ".git":
                continue
            if name == ".git":  # a repository appears or goes inside the tree: its parent changes kind
                self._mark(parent)
                self.watch_all()  # stop (or start) looking inside it; in doubt until a full scan
                continue
            if name == ".gitignore":  # rules changed: what is ignored, and so watched, may change
                self._mark(path)
                self._mark_doubt()
                self._lose_names()
                self.rewatch = True
                continue
            self._name(path, event.mask)
            if event.mask & flags.ISDIR:
                if event.mask & (flags.MOVED_FROM | flags.MOVED_TO):
                    self._mark_doubt()  # whole subtrees moved: rewatch, then a full scan
                    self.watch_all()
                elif event.mask & flags.CREATE:
                    self._mark(path)
                    if self._is_ignored_dir(path):
                        continue
                    for found in self._watch_tree(path):  # files made before the watch was there
                        self._mark(found)
                        self._name(found, flags.CREATE)
                elif event.mask & flags.DELETE:
                    self._mark(path)
                continue
            self._mark(path)
        return cookie

    def _is_ignored_dir(self, path: str) -> bool:
        found = self._ignored_dirs(path)
        self.ignored |= found
        return path in found

    def settle(self, timeout: float) -> int | None:
        """The barrier: every change made before this call has been read. Returns the epoch the dirty
        paths up to now carry (changes after it carry a later one), or None when the cookie did not
        arrive in TIMEOUT seconds (no events on this filesystem?): then nothing can be trusted.

        The kernel queues a change's event before the call that made it returns (fsnotify runs inside
        write, rename, unlink and close), so once one cookie has come back, proving this instance is
        sent events at all, taking in what is queued now is the barrier: no cookie file and no wait on
        the path of every hook."""
        if self._proven:
            self.read(0)
        elif not self._cookie(timeout):
            return None
        done = self.epoch
        self.epoch += 1
        return done

    def _cookie(self, timeout: float) -> bool:
        """Make a cookie file and read events until its own arrives, for up to TIMEOUT seconds."""
        self._cookie_seq += 1
        name = os.path.join(self.cookie_dir, f"c{self._cookie_seq}")
        fd = os.open(name, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600)
        os.close(fd)
        deadline = time.monotonic() + timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                if self.read(max(1, int(left * 1000))):
                    self._proven = True
                    return True
        finally:
            try:
                os.unlink(name)
            except OSError:
                pass

    def forget(self, epoch: int) -> None:
        """A checkpoint's tree holds every change up to EPOCH: they are no longer dirty."""
        self.dirty = {p: e for p, e in self.dirty.items() if e > epoch}
        if self.doubt is not None and self.doubt <= epoch:
            self.doubt = None

    def forget_names(self, epoch: int) -> None:
        """What stood at each path at EPOCH (a settle's) is known otherwise: only later events are told from now
        on. A path with events before and after it keeps (EPOCH, UNKNOWN): what stood there then is not known."""
        self.names = {p: (first, before, last) if first > epoch else (epoch, UNKNOWN, last)
                      for p, (first, before, last) in self.names.items() if last > epoch}

    def close(self) -> None:
        self.inotify.close()
