"""Files read and written safely: a writer's readers see the old bytes or the new ones, never half;
a reader never blocks on a FIFO or a device a path names.

Every file git-rewind replaces (its own state, agents' settings and transcripts, config files)
goes through `write_atomic`: a temporary file beside the target, then a rename. A restore of
the user's working tree has its own writer (restore.py), because its temporary names are
journalled for crash recovery. Every file a hook payload, a note or a checkpoint names is read
through `read_regular`.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_TMP_MARK, _TMP_END = ".git-rewind-", ".tmp"  # write_atomic's temporary file: <target>.git-rewind-<pid>.tmp


def sweep_temporaries(folder: str) -> list[str]:
    """Remove the temporary files write_atomic left in FOLDER when its process was killed (their process is
    gone); returns their names. A kill between the write and the rename leaves the whole or a part of the
    new content there (a transcript's, in an agent's own folder)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    swept = []
    for name in names:
        pid = name.rpartition(_TMP_MARK)[2][:-len(_TMP_END)] if name.endswith(_TMP_END) else ""
        if _TMP_MARK not in name or not pid.isdigit() or int(pid) == os.getpid() or alive(int(pid)):
            continue
        try:
            os.unlink(os.path.join(folder, name))
            swept.append(name)
        except OSError:
            continue
    return swept


SCRATCH_KINDS = ("blame", "cat", "patch", "restore")  # what commands stage under .git/rewind/ while they run


def scratch_dir(parent: str, kind: str) -> str:
    """A new private directory PARENT/KIND-<pid>-XXXXXXXX for one command's work, after removing those of
    every kind whose process is gone: what a killed blame, cat, `undo --patch` or restore left behind (a
    directory whose process lives, or whose pid was taken by another, is kept)."""
    import shutil
    import tempfile

    for name in os.listdir(parent):
        kind_, _, rest = name.partition("-")
        pid = rest.partition("-")[0]
        if kind_ in SCRATCH_KINDS and pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(os.path.join(parent, name), ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"{kind}-{os.getpid()}-", dir=parent)


def alive(pid: object) -> bool:
    """Whether a process PID exists (one of another user counts)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_atomic(path: str, data: bytes | str, *, like: str | None = None, new_mode: int = 0o666,
                 sync: bool = False, follow: bool = False, makedirs: bool = False) -> str:
    """Replace PATH with DATA (str: UTF-8) through a temporary file and a rename; returns the path written.

    The file keeps the mode of what it replaces (or of LIKE, when given and present); a new one
    gets NEW_MODE less the umask. SYNC: fsync before the rename (transcripts, which must survive a
    crash). FOLLOW: write through a symbolic link to its target (a settings file kept in a dotfiles
    repository stays linked). MAKEDIRS: create missing parent directories.
    """
    target = os.path.realpath(path) if follow else path
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    keep = None
    for source in (like, target):
        if source is None:
            continue
        try:
            keep = os.stat(source).st_mode & 0o7777
            break
        except OSError:
            continue
    tmp = f"{target}{_TMP_MARK}{os.getpid()}{_TMP_END}"
    fd = _create(tmp, new_mode, os.path.dirname(target) if makedirs else None)
    try:
        try:
            if keep is not None:
                os.fchmod(fd, keep)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return target


def _create(tmp: str, mode: int, folder: str | None) -> int:
    """A new file TMP, opened for writing: one left by a killed process that had our pid is replaced, and
    FOLDER (when given) is made when missing. Each is done only when the first try says so, not every time."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    for _ in range(2):
        try:
            return os.open(tmp, flags, mode)
        except FileExistsError:
            os.unlink(tmp)
        except FileNotFoundError:
            if folder is None:
                raise
            os.makedirs(folder or ".", exist_ok=True)
            folder = None
    return os.open(tmp, flags, mode)


def read_bytes(path: str) -> bytes:
    """The whole of PATH, read with os.open and os.read: a small state file read on a hook's path costs three
    system calls, where a buffered open() adds an fstat, an isatty ioctl and seeks. Raises what open() raises
    (FileNotFoundError, NotADirectoryError; IsADirectoryError for a directory)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks: list[bytes] = []
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


def write_new(path: str, data: bytes, *, new_mode: int = 0o600) -> str:
    """Create PATH holding DATA, whole or not at all, never replacing a file (FileExistsError): a temporary
    file beside it, synced, then a hard link to PATH (which fails if PATH exists) instead of a rename."""
    tmp = f"{path}{_TMP_MARK}{os.getpid()}{_TMP_END}"
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, new_mode)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(tmp, path, follow_symlinks=False)
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return path


class NotRegular(OSError):
    """The path names something other than a regular file (a FIFO, a socket, a device, a directory)."""


def read_regular(path: str, limit: int = -1, *, nofollow: bool = False, offset: int = 0) -> bytes:
    """PATH's bytes from OFFSET (at most LIMIT; -1: all) if it is a regular file, without ever blocking.

    The file is opened non-blocking and checked with fstat on the opened descriptor, so a FIFO
    (which would block an ordinary open until a writer comes) or a path swapped for one after a
    stat is refused with NotRegular; OSError as usual for a missing or unreadable file.
    NOFOLLOW: a symbolic link as the last component is refused too (OSError ELOOP).
    """
    import stat

    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | (os.O_NOFOLLOW if nofollow else 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(f"not a regular file: {path}")
        if offset:
            os.lseek(fd, offset, os.SEEK_SET)
        chunks = []
        left = limit
        while left != 0:
            chunk = os.read(fd, 1 << 20 if left < 0 else min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left = left - len(chunk) if left > 0 else left
        return b"".join(chunks)
    finally:
        os.close(fd)


def within(path: str, folders: tuple[str, ...]) -> str | None:
    """PATH with its folder's symbolic links resolved, when that folder is one of FOLDERS or below one
    (their own links resolved too); None otherwise, and for a relative PATH.

    The last component is left as it is: a caller opens it without following a link.
    """
    if not os.path.isabs(path):
        return None
    parent = os.path.realpath(os.path.dirname(os.path.normpath(path)))
    for folder in folders:
        real = os.path.realpath(folder)
        if parent == real or parent.startswith(real.rstrip(os.sep) + os.sep):
            return os.path.join(parent, os.path.basename(os.path.normpath(path)))
    return None


def folders_above(paths: Iterable[str]) -> set[str]:
    """Every folder that holds one of PATHS (work-tree paths, `/`-separated), however deep, and "" (the work
    tree's top): each walked up to once, since a restore may name 100,000 paths in the same few folders."""
    found = {""}
    for path in paths:
        folder = path.rpartition("/")[0]
        while folder not in found:
            found.add(folder)
            folder = folder.rpartition("/")[0]
    return found
