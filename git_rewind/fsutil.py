"""Writing a file so that a reader sees the old bytes or the new ones, never half of them.

Every file git-rewind replaces (its own state, agents' settings and transcripts, config files)
goes through `write_atomic`: a temporary file beside the target, then a rename. A restore of
the user's working tree has its own writer (restore.py), because its temporary names are
journalled for crash recovery.
"""

from __future__ import annotations

import os


def write_atomic(path: str, data: bytes | str, *, like: str | None = None, new_mode: int = 0o666,
                 sync: bool = False, follow: bool = False, makedirs: bool = False) -> str:
    """Replace PATH with DATA (str: UTF-8) through a temporary file and a rename; returns the path written.

    The file keeps the mode of what it replaces (or of LIKE, when given and present); a new one
    gets NEW_MODE less the umask. SYNC: fsync before the rename (transcripts, which must survive a
    crash). FOLLOW: write through a symbolic link to its target (a settings file kept in a dotfiles
    repository stays linked). MAKEDIRS: create missing parent directories.
    """
    target = os.path.realpath(path) if follow else path
    if makedirs:
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
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
    tmp = f"{target}.git-rewind-{os.getpid()}.tmp"
    try:
        os.unlink(tmp)  # left by a killed process that had our pid
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, new_mode)
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
