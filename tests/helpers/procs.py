"""The processes running on this machine, read from /proc: what tests and benches wait for or count."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path


def processes() -> Iterator[tuple[int, list[bytes], str]]:
    """(pid, argv, working directory) of every process whose /proc entries can be read."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
            cwd = os.readlink(f"/proc/{name}/cwd")
        except OSError:
            continue
        yield int(name), argv, cwd


def wait_for_repack(root: str | Path, timeout: float = 60.0) -> None:
    """Wait while a `git repack` runs in ROOT (store.maybe_pack starts one detached), at most TIMEOUT s."""
    real = os.path.realpath(root)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(b"repack" in argv and cwd == real for _, argv, cwd in processes()):
        time.sleep(0.05)
