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


def parents() -> dict[int, int]:
    """pid → parent pid of every process whose /proc entry can be read."""
    result: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                result[int(name)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return result


def tree(pid: int) -> list[int]:
    """PID and every process descended from it (children first found, then theirs), as /proc shows them now."""
    children: dict[int, list[int]] = {}
    for child, parent in parents().items():
        children.setdefault(parent, []).append(child)
    found = [pid]
    for p in found:
        found.extend(children.get(p, []))
    return found


def alive(pid: int) -> bool:
    """PID runs (a zombie no longer does: it only waits for a parent to reap it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def listens(pid: int, port: int) -> bool:
    """PID itself holds a TCP socket listening on 127.0.0.1:PORT (not merely someone on that port)."""
    inodes = set()
    try:
        with open("/proc/net/tcp") as fh:
            for line in fh.readlines()[1:]:
                fields = line.split()
                if fields[1] == f"0100007F:{port:04X}" and fields[3] == "0A":  # 0A: LISTEN
                    inodes.add(f"socket:[{fields[9]}]")
        fds = os.listdir(f"/proc/{pid}/fd")
    except (OSError, IndexError):
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                return True
        except OSError:
            continue
    return False
