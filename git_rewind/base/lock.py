"""An advisory file lock that the kernel releases if its holder dies (kill -9 included)."""

from __future__ import annotations

import fcntl
import os
import time

from .errors import RewindError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType


class Lock:
    """`with Lock(path):` serialises every git-rewind writer on one file."""

    def __init__(self, path: str, timeout: float = 60.0, then: Callable[[], object] | None = None,
                 missing: Callable[[], object] | None = None) -> None:
        self.path = path
        self.timeout = timeout
        self.then = then  # run once the lock is held (what a killed holder left half done); its error releases it
        self.missing = missing  # makes the lock's folder when it is not there (tried first: it usually is)
        self._fd: int | None = None

    def __enter__(self) -> Lock:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except FileNotFoundError:
            if self.missing is None:
                raise
            self.missing()
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        deadline = time.monotonic() + self.timeout
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise RewindError(
                        f"another git-rewind has held {self.path} for {self.timeout:.0f}s"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        self._fd = fd
        if self.then is not None:
            try:
                self.then()
            except BaseException:
                self.__exit__(None, None, None)
                raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
