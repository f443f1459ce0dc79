"""Finding the repository and its work tree, our private directories, locks and refs.

Refs are read straight from the files git keeps (loose refs, packed-refs), which costs
microseconds instead of a process; repositories using the reftable backend fall back to git.
"""

from __future__ import annotations

import os

from . import layout
from .daemonlink import DISCOVERY_ENV, git_dirs, layout_of
from .errors import NotARepository, RewindError

__all__ = ["DISCOVERY_ENV", "git_dirs"]  # daemonlink.py has them: the thin client uses them without `os`

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .lock import Lock
    from .note import Oid

REF_PREFIX = "refs/rewind/"
NOTES_REF = "refs/notes/rewind"
AUTHORSHIP_REF = "refs/notes/rewind-authorship"  # the commits' authorship notes (store/authorship.py)
SHARE_PREFIX = "refs/notes/rewind-share/"  # <sync_name>: this machine's shareable copy (share.py)
REMOTE_PREFIX = "refs/notes/rewind-remote/"  # <remote>/<sync_name>: other machines' copies, fetched (sync.py)
INCOMING_PREFIX = "refs/notes/rewind-incoming/"  # a fetch's refs while they are checked (sync.py; never left)
# Names fast-import needs for a branch while it writes: reset at the end of the stream, never left as refs
# (but a kill at the wrong moment could leave one, so they count as ours).
SCRATCH_ATTACHMENTS = "refs/rewind-attachments/pending"  # a rewind's transcript copy (store, purge)
SCRATCH_TAKEBACK = "refs/rewind-tmp/takeback"  # an agent-only undo's or revert's two ends (takeback)
SCRATCH_SCAN = "refs/rewind-scan"  # a scan's tree written through fast-import (snapshot)
SCRATCH_BLAME = "refs/rewind-blame/scratch"  # one file's history for git blame (blame)
SCRATCH_SHARE = "refs/rewind-share/pending"  # the shareable copies while they are written (share)
SCRATCH_REFS = (SCRATCH_ATTACHMENTS, SCRATCH_TAKEBACK, SCRATCH_SCAN, SCRATCH_BLAME, SCRATCH_SHARE)
# Every ref git-rewind may write, as `git for-each-ref` patterns (a pattern matches whole name components):
# what a reader of all of ours, gc, purge, sync and the drop-the-store commands go through.
NAMESPACES = ("refs/rewind", NOTES_REF, AUTHORSHIP_REF, SHARE_PREFIX.rstrip("/"), REMOTE_PREFIX.rstrip("/"),
              INCOMING_PREFIX.rstrip("/"), *SCRATCH_REFS)


def is_ours(ref: str) -> bool:
    """REF is in one of git-rewind's NAMESPACES (matched by whole name components, as for-each-ref does)."""
    return any(ref == space or ref.startswith(space + "/") for space in NAMESPACES)


_NO_WORK_TREE = "this is a bare repository or a .git directory; git rewind needs a work tree"


_SESSION_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def check_session(name: str) -> str:
    """A session name must be usable as one ref component (letters, digits, '.', '_', '-')."""
    if (not name or len(name) > 128 or name[0] in ".-" or not _SESSION_CHARS.issuperset(name)
            or name.endswith(".lock") or ".." in name):
        raise RewindError(f"invalid session name: {name!r} (letters, digits, '.', '_', '-')")
    return name


STALE_LOCK = 10.0  # seconds


def clear_stale_lock(path: str) -> None:
    """Remove a git lock file (`*.lock`) a killed git left; wait while one may still be held.

    Callers hold our own lock, so no live git-rewind owns PATH. But `kill -9` of git-rewind
    leaves its git child running to completion: deleting its lock then would let it rename
    over what we write. A lock that has not gone after STALE_LOCK seconds is stale.
    """
    import time

    while True:
        try:
            age = time.time() - os.stat(path).st_mtime
        except FileNotFoundError:
            return
        if age > STALE_LOCK:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            return
        time.sleep(0.05)


def _pin_environment(gitdir: str, root: str, outside: bool) -> None:
    """Name the repository to the git processes we run at the work tree's root as git found it from here.

    GIT_DIR and GIT_WORK_TREE become absolute (a relative one would name something else from
    the root); when we started OUTSIDE the work tree (GIT_WORK_TREE, or core.worktree pointing
    away from the git directory), the root may not lead back to the git directory: both are set.
    """
    if outside or "GIT_DIR" in os.environ:
        os.environ["GIT_DIR"] = gitdir
    if outside or "GIT_WORK_TREE" in os.environ:
        os.environ["GIT_WORK_TREE"] = root


def plain_layout(path: str) -> tuple[str, str, str] | None:
    """(work tree root, git directory, common directory) of PATH read from the files alone, for the plain
    layouts hooks meet: walks up from PATH to the first `.git` directory or `.git` file (linked work trees).
    None for anything only git can decide (GIT_DIR-style environment, core.worktree, a bare repository,
    not a repository at all): `Repo.find` then asks git, and the hook's thin client (hook/client.py) lets
    the full hook do so."""
    if any(name in os.environ for name in DISCOVERY_ENV):
        return None
    return layout_of(os.path.realpath(path))


class Repo:
    """One work tree of a repository, as git-rewind sees it."""

    def __init__(self, root: str, gitdir: str, commondir: str) -> None:
        self.root = root
        self.gitdir = gitdir
        self.commondir = commondir
        # Per work tree: the private index (our stat cache), its lock, the log.
        self.rewind_dir = os.path.join(gitdir, "rewind")
        # Per repository: sequence counter, session state, the store lock.
        self.store_dir = os.path.join(commondir, "rewind")
        self.share_dir = os.path.join(self.store_dir, layout.SHARE)  # what push keeps (share.py, sync.py, redact.py)
        self._object_format: str | None = None
        self.lock_timeout = 60.0  # seconds; commands set it from config

    @classmethod
    def discover(cls, path: str | None = None) -> Repo:
        """The repository holding PATH (default: the current directory)."""
        from . import gitcmd

        cwd = path or os.getcwd()
        if not os.path.isdir(cwd):
            raise NotARepository(f"not a directory: {cwd}")
        try:
            out = gitcmd.run(
                ["rev-parse", "--is-bare-repository", "--is-inside-work-tree",
                 "--path-format=absolute", "--git-dir", "--git-common-dir", "--show-toplevel"],
                cwd=cwd,
            )
        except gitcmd.GitError as exc:
            if "not a git repository" in exc.stderr:
                raise NotARepository(f"not a git repository: {cwd}") from None
            if "must be run in a work tree" in exc.stderr:
                raise NotARepository(_NO_WORK_TREE) from None
            raise NotARepository(str(exc)) from None
        lines = os.fsdecode(out).splitlines()
        # Not "inside the work tree" is fine when git still names one: GIT_DIR and GIT_WORK_TREE
        # (or core.worktree) with the current directory outside it, where git's own CLI works too.
        if len(lines) < 5 or lines[0] == "true":
            raise NotARepository(_NO_WORK_TREE)
        _pin_environment(gitdir=lines[2], root=lines[4], outside=lines[1] != "true")
        return cls(root=lines[4], gitdir=lines[2], commondir=lines[3])

    @classmethod
    def find(cls, path: str) -> Repo:
        """`discover` without a process, for the plain layouts hooks meet (`plain_layout`); anything else asks git."""
        found = plain_layout(path)
        if found is None:
            return cls.discover(path)
        root, gitdir, commondir = found
        return cls(root=root, gitdir=gitdir, commondir=commondir)

    @property
    def worktree(self) -> str | None:
        """This work tree's name as checkpoint notes record it: None for the main work tree, a linked
        work tree's name under .git/worktrees/ otherwise (git's own name for it, stable across moves)."""
        if os.path.normpath(self.gitdir) == os.path.normpath(self.commondir):
            return None
        return os.path.basename(os.path.normpath(self.gitdir))

    def linked_worktrees(self) -> list[str]:
        """The names of the repository's linked work trees (under .git/worktrees/), whichever one this is."""
        try:
            return sorted(os.listdir(os.path.join(self.commondir, "worktrees")))
        except (FileNotFoundError, NotADirectoryError):
            return []

    def ensure_dirs(self) -> None:
        """Create .git/rewind/ (per work tree) and the shared store directory, never the git directory they are
        in: one deleted meanwhile (`rm -rf .git` while a watched program runs) stays deleted, and this fails."""
        for folder in dict.fromkeys((self.rewind_dir, self.store_dir)):  # one folder in the main work tree
            try:
                os.mkdir(folder)
            except FileExistsError:
                pass
            except FileNotFoundError:
                raise NotARepository(f"{os.path.dirname(folder)} is gone: not a git repository any more") from None

    def worktree_lock(self) -> Lock:
        """Serialises scans of this work tree through its private index. Its folders are made when the lock
        file cannot be opened (ensure_dirs), not tried on every lock; a linked work tree's store elsewhere is
        made sure of each time, as what runs under this lock may write there."""
        if self.store_dir != self.rewind_dir:
            self.ensure_dirs()
        from .lock import Lock  # here: the hook's thin client reads this module and takes no lock

        return Lock(os.path.join(self.rewind_dir, layout.LOCK), self.lock_timeout, missing=self.ensure_dirs)

    def store_lock(self) -> Lock:
        """Serialises sequence ids, notes and refs across all work trees (its folders made as worktree_lock's)."""
        if self.store_dir != self.rewind_dir:
            self.ensure_dirs()
        from .lock import Lock

        return Lock(os.path.join(self.store_dir, layout.STORE_LOCK), self.lock_timeout, then=self._finish_ref_moves,
                    missing=self.ensure_dirs)

    @property
    def object_format(self) -> str:
        """"sha1" or "sha256": how this repository names objects (git is asked only when its config says)."""
        if self._object_format is None:
            self._object_format = "sha1"
            try:
                with open(os.path.join(self.commondir, "config"), "rb") as fh:
                    mentioned = b"objectformat" in fh.read().lower()
            except OSError:
                mentioned = True
            if mentioned:
                out = self.git(["rev-parse", "--show-object-format"], check=False).decode().strip()
                self._object_format = out or "sha1"
        return self._object_format

    @property
    def private_index(self) -> str:
        return os.path.join(self.rewind_dir, layout.INDEX)

    def git(self, args: list[str], **kwargs: Any) -> bytes:
        """Run git at the work tree's root."""
        from . import gitcmd  # subprocess costs ~5 ms of import; a hook that skips needs no git

        return gitcmd.run(args, cwd=self.root, **kwargs)

    # refs -------------------------------------------------------------------

    def move_refs(self, moves: dict[str, str | None], old: dict[str, str | None]) -> None:
        """Update or delete (None) every ref of MOVES in one `update-ref --stdin` transaction, each checked
        against its OLD value (None: must not exist yet), in MOVES' order (gitcmd.update_refs: a process of its
        own, or the long-lived one). Hold the store lock when moving more than one.

        git's files backend commits such a transaction ref by ref (a lock file renamed each), so a kill between
        two renames would leave some refs moved and some not: a checkpoint without its note. The moves are
        written to a journal first (layout.REF_MOVES) and the next holder of the store lock completes them
        (_finish_ref_moves), so every transaction is done whole or not at all by the time anyone writes again.
        Callers order MOVES so that what a reader may see meanwhile is harmless (a note before its chain)."""
        moves = {ref: new for ref, new in moves.items() if new is not None or old.get(ref) is not None}
        if len(moves) < 2:  # one ref: git's rename of its lock is all or nothing (and the caller may not hold the lock)
            if moves:
                self._update_refs(moves, old)
            return
        from .fsutil import write_atomic

        path = os.path.join(self.store_dir, layout.REF_MOVES)
        write_atomic(path, "".join(f"{ref} {old.get(ref) or '-'} {new or '-'}\n" for ref, new in moves.items()))
        try:
            self._update_refs(moves, old)
        except BaseException:
            if self._finish_ref_moves():  # its git was killed between two refs: the transaction is whole now
                return
            raise
        _unlink(path)

    def _finish_ref_moves(self) -> bool:
        """Complete the ref transaction a killed process left in its journal when it is torn: some refs moved,
        the others still where it found them. One that moved none is dropped (nothing of it happened: the
        objects it wrote are garbage). Refs moved otherwise since are left alone. True when every ref of the
        journal is at its new value now. Hold the store lock."""
        path = os.path.join(self.store_dir, layout.REF_MOVES)
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                rows = [line.split(" ") for line in fh.read().splitlines()]
        except FileNotFoundError:
            return False
        entries = {row[0]: (None if row[1] == "-" else row[1], None if row[2] == "-" else row[2])
                   for row in rows if len(row) == 3}
        now = {ref: self.read_ref(ref) for ref in entries}
        pending = {ref: new for ref, (_, new) in entries.items() if now[ref] != new}
        started = len(pending) < len(entries)
        if pending and started and all(now[ref] == old for ref, (old, _) in entries.items() if ref in pending):
            self._update_refs(pending, now)
            pending = {}
        _unlink(path)
        return not pending

    def _update_refs(self, moves: dict[str, str | None], old: dict[str, str | None]) -> None:
        """The `update-ref --stdin` transaction of move_refs (no journal)."""
        from . import gitcmd

        self.clear_ref_locks(list(moves))  # a git killed while moving them leaves their locks
        script = [f"update {ref} {new} {old.get(ref) or '0' * len(new)}\n" if new is not None
                  else f"delete {ref} {old[ref]}\n" for ref, new in moves.items()]
        gitcmd.update_refs(self.root, self.commondir, "".join(script).encode())

    def clear_ref_locks(self, refs: list[str]) -> None:
        """Clear the lock files a killed git left on REFS (only git-rewind writes them, under the store lock),
        and the repository-wide ones a ref transaction also takes: `packed-refs.lock` (a delete of a packed
        ref rewrites packed-refs) and reftable's `tables.list.lock`. Those are shared with the person's own
        git, so clear_stale_lock waits while one may be held and removes only one older than STALE_LOCK."""
        for ref in refs:
            clear_stale_lock(os.path.join(self.commondir, ref + ".lock"))
        clear_stale_lock(os.path.join(self.commondir, "packed-refs.lock"))
        clear_stale_lock(os.path.join(self.commondir, "reftable", "tables.list.lock"))

    def read_ref(self, name: str) -> str | None:
        """The object id REF points to, or None."""
        if os.path.isdir(os.path.join(self.commondir, "reftable")):
            out = self.git(["rev-parse", "--verify", "-q", name + "^{}"], check=False)
            return out.decode().strip() or None
        base = self.gitdir if name == "HEAD" else self.commondir
        from .fsutil import read_bytes

        try:
            value = read_bytes(os.path.join(base, name)).strip().decode()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return self._packed_refs().get(name)
        if value.startswith("ref: "):
            return self.read_ref(value[5:])
        return value or None

    def _packed_refs(self) -> dict[str, str]:
        refs: dict[str, str] = {}
        try:
            with open(os.path.join(self.commondir, "packed-refs"), "rb") as fh:
                for raw in fh:
                    if raw.startswith((b"#", b"^")):
                        continue
                    oid, _, ref = raw.strip().partition(b" ")
                    refs[ref.decode()] = oid.decode()
        except FileNotFoundError:
            pass
        return refs

    def tree_of(self, commit: str) -> Oid:
        """The tree id of COMMIT (an id or any name git reads)."""
        from .note import Oid  # not at load: a hook that skips never needs it

        return Oid(self.git(["rev-parse", commit + "^{tree}"]).decode().strip())

    def session_refs(self) -> dict[str, str]:
        """Every session name with the commit its ref points to."""
        from .gitobjects import refs_under

        return {ref[len(REF_PREFIX):]: oid for ref, oid in refs_under(self, REF_PREFIX).items()}

    def head(self) -> tuple[str | None, str | None]:
        """(HEAD commit or None when unborn, branch name or None when detached)."""
        from .fsutil import read_bytes

        try:
            value = read_bytes(os.path.join(self.gitdir, "HEAD")).strip().decode()
        except FileNotFoundError:
            return None, None
        if value.startswith("ref: "):
            ref = value[5:]
            branch = ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else ref
            return self.read_ref(ref), branch
        return value, None

    # paths ------------------------------------------------------------------

    def pathspec_base(self, cwd: str | None) -> str:
        """Where git should read the pathspecs a person typed from: CWD when it lies in the work tree (the
        path as given, so git's own prefix is right), else the root (GIT_WORK_TREE set, run from outside)."""
        if cwd is None:
            return self.root
        rel = os.path.relpath(os.path.realpath(cwd), os.path.realpath(self.root))
        return self.root if rel in (".", "..") or rel.startswith("../") else os.path.join(self.root, rel)

    def relpath(self, path: str, base: str | None = None) -> str:
        """PATH (absolute, or relative to BASE/cwd) as a '/'-separated path inside the work tree.

        Refuses anything outside the work tree, inside .git, or reached through a symlink.
        """
        base = base or os.getcwd()
        absolute = os.path.normpath(os.path.join(base, path))
        root = self.root
        # PATH may reach the root through an alias (~/work -> /data/work, /var -> /private/var):
        # find the ancestor that is the root and re-anchor there. Symlinks below it are still refused.
        if absolute != root and not absolute.startswith(root.rstrip("/") + "/"):
            real_root = os.path.realpath(root)
            anchor = absolute
            while os.path.realpath(anchor) != real_root:
                parent = os.path.dirname(anchor)
                if parent == anchor:
                    raise RewindError(f"path outside the working tree: {path}")
                anchor = parent
            absolute = os.path.normpath(os.path.join(root, os.path.relpath(absolute, anchor)))
        rel = os.path.relpath(absolute, root).replace(os.sep, "/")
        if rel == ".":
            return ""
        parts = rel.split("/")
        if parts[0] == ".git" or ".." in parts:
            raise RewindError(f"path outside the working tree: {path}")
        current = root
        for part in parts[:-1]:
            current = os.path.join(current, part)
            if os.path.islink(current):
                raise RewindError(f"path is behind a symbolic link: {path}")
        return rel


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
