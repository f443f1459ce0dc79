"""The way to the work tree's daemon, built only from what an interpreter started `-I -S` has loaded already.

The hook's installed command (hook/entry.py) starts without `site`, and then `os` is not imported: with
`stat`, `posixpath` and `_collections_abc` it is ~1.5 ms, a tenth of the whole interpreter's start. What
the thin client needs (hook/client.py: find the git directory, the daemon's socket, one request) is
here on `posix`, `_socket` and minijson alone, and base/daemon.py and base/repo.py use the same functions:
one implementation of the layout walk, the socket's address, the exchange and the fingerprint.
Anything unusual (a `.git` file, a `commondir`: a linked work tree) imports `os` and reads it as git does.
"""

# No `from __future__ import annotations`: importing __future__ is a module more on the hook's path (the
# annotations here are all valid at run time on Python 3.10).
import posix
import sys
import time

from . import layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _socket import socket

# The environment that changes how git finds a repository: with any of it, only git itself can say.
DISCOVERY_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
                 "GIT_DISCOVERY_ACROSS_FILESYSTEM")
_MAX_SUN_PATH = 100  # sockaddr_un holds 108 bytes with the NUL; leave a margin
_S_IFMT, _S_IFDIR, _S_IFREG = 0o170000, 0o040000, 0o100000


def supported() -> bool:
    """The daemon needs inotify (Linux). Elsewhere every command scans the tree itself."""
    return sys.platform.startswith("linux")


def _kind(path: str) -> int:
    """The file type bits of PATH, links followed (os.path.isdir/isfile's stat); 0 when it is not there."""
    try:
        return posix.stat(path).st_mode & _S_IFMT
    except (OSError, ValueError):
        return 0


def is_dir(path: str) -> bool:
    return _kind(path) == _S_IFDIR


def is_file(path: str) -> bool:
    return _kind(path) == _S_IFREG


def fingerprint() -> str:
    """This installation: a daemon started by another (an upgrade) steps down when asked by this one."""
    from .. import __version__

    here = __file__.rsplit("/", 2)[0]  # …/git_rewind/base/daemonlink.py → …/git_rewind
    if not here.startswith("/"):
        here = posix.getcwd() + "/" + here
    parts = [__version__]
    for name in ("__init__.py", "watching/daemonserver.py", "watching/watcher.py", "store/snapshot.py"):
        try:
            st = posix.stat(here + "/" + name)
            parts.append(f"{st.st_mtime_ns}:{st.st_size}")
        except OSError:
            parts.append("-")
    return " ".join(parts)


def git_dirs(top: str) -> tuple[str, str] | None:
    """The git directory and the common one of the work tree at TOP, read from its files as git reads them:
    `.git` a directory, or a `.git` file saying `gitdir: …`; a `commondir` file there (a linked work tree).
    None when one of them cannot be read."""
    dotgit = top.rstrip("/") + "/.git"
    if is_dir(dotgit) and not _kind(dotgit + "/commondir"):
        return dotgit, dotgit  # the common case: no path to normalise, `os` not needed
    import os

    dotgit = os.path.join(top, ".git")
    gitdir = dotgit
    if os.path.isfile(dotgit):
        try:
            with open(dotgit, encoding="utf-8") as fh:
                line = fh.readline().strip()
        except (OSError, UnicodeDecodeError):
            return None
        if not line.startswith("gitdir: "):
            return None
        gitdir = os.path.normpath(os.path.join(top, line[8:]))
    commondir = gitdir
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as fh:
            commondir = os.path.normpath(os.path.join(gitdir, fh.read().strip()))
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError):
        return None
    return gitdir, commondir


def layout_of(real: str) -> tuple[str, str, str] | None:
    """(work tree root, git directory, common directory) of REAL (an absolute path, links resolved) read from
    the files alone: walks up to the first `.git` directory or `.git` file. None for anything only git can
    decide (core.worktree, a bare repository, not a repository at all). The caller checks its environment
    for DISCOVERY_ENV first (the daemon's os.environ is the call's, not posix.environ)."""
    current = real
    while True:
        dotgit = ("" if current == "/" else current) + "/.git"
        if _kind(dotgit) in (_S_IFDIR, _S_IFREG):
            break
        parent = current.rsplit("/", 1)[0] or "/"
        if parent == current or current.rsplit("/", 1)[-1] == ".git":
            return None  # not a repository, or inside a .git: git words the error
        current = parent
    dirs = git_dirs(current)
    if dirs is None:
        return None
    gitdir, commondir = dirs
    try:
        with open(commondir + "/config", "rb") as fh:
            git_config = fh.read()
    except OSError:
        return None
    if b"worktree" in git_config or b"bare = true" in git_config or not is_file(gitdir + "/HEAD"):
        return None  # core.worktree, bare, or not a git dir at all: git decides
    return current, gitdir, commondir


def socket_address(rewind_dir: str) -> tuple[str, int | None]:
    """The path to bind or connect to, and a directory fd to close after (for a path too long for
    sockaddr_un, the directory is reached through /proc/self/fd)."""
    path = rewind_dir.rstrip("/") + "/" + layout.DAEMON_SOCKET
    if len(path.encode(sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())) <= _MAX_SUN_PATH:
        return path, None
    fd = posix.open(rewind_dir, posix.O_RDONLY | posix.O_DIRECTORY | posix.O_CLOEXEC)
    return f"/proc/self/fd/{fd}/{layout.DAEMON_SOCKET}", fd


def connect(rewind_dir: str, timeout: float) -> "socket | None":
    """A socket connected to the daemon serving REWIND_DIR within TIMEOUT, or None (no socket there: one
    stat; a dead daemon's socket; not Linux)."""
    if not supported() or not _kind(rewind_dir.rstrip("/") + "/" + layout.DAEMON_SOCKET):
        return None  # the common case without a daemon: one stat, no socket import
    import _socket  # `socket` itself builds enums at import: ~10 ms a hook would pay

    address, fd = socket_address(rewind_dir)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(address)
    except OSError:
        sock.close()
        return None
    finally:
        if fd is not None:
            posix.close(fd)
    return sock


def exchange(sock: "socket", line: str, timeout: float, buffer: bytes = b"") -> tuple[str, bytes]:
    """Send one request LINE on SOCK, return the answer's line and what came after it (BUFFER: what came
    before); OSError (TimeoutError: none within TIMEOUT, ConnectionError: the daemon closed the link) when
    there is none. Text that came from bytes (surrogate escapes) goes as those bytes, both ways."""
    sock.sendall(line.encode("utf-8", "surrogateescape") + b"\n")
    deadline = time.monotonic() + timeout
    while b"\n" not in buffer:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no answer within {timeout:g} s")
        sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the daemon closed the connection")
        buffer += chunk
    got, _, rest = buffer.partition(b"\n")
    return got.decode("utf-8", "surrogateescape"), rest


def environment() -> dict[str, str]:
    """This process's environment as os.environ has it (decoded as os does), without importing os."""
    if "os" in sys.modules:  # a process with `site` (`git-rewind hook`): os.environ is the one to trust
        return dict(sys.modules["os"].environ)
    encoding, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    return {name.decode(encoding, errors): value.decode(encoding, errors) for name, value in posix.environ.items()}
