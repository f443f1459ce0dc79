"""The file-watcher daemon in tests: its account of itself, and making sure none outlives its test.

A daemon is found by what it is, not by name: a process whose command line ends in `daemon run` and
whose working directory (the work tree it was started in) lies under the test's own directory.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

from helpers.procs import alive, processes
from helpers.workdir import Workdir

HANG = 10.0  # seconds: a command that takes longer hangs (a bound for hangs, never a timing measure)


def status(w: Workdir, cwd: Path | None = None) -> dict[str, Any]:
    """`git rewind daemon status --json`."""
    info: dict[str, Any] = json.loads(w.ok("daemon", "status", "--json", cwd=cwd))
    return info


def answered(w: Workdir, cwd: Path | None = None) -> dict[str, int]:
    """How the running daemon answered `begin` so far: {"changes": n, "full": n}."""
    info = status(w, cwd)
    assert info["running"], info
    counts: dict[str, int] = info["answered"]
    return counts


def start(w: Workdir, daemons: list[Workdir]) -> int:
    """`git rewind daemon start` in W (stopped after the test: DAEMONS is the `daemons` fixture); its pid."""
    daemons.append(w)
    run = w.rewind("daemon", "start")
    assert run.returncode == 0, run.stderr
    return int(status(w)["pid"])


def served(w: Workdir, op: str) -> int:
    """How many requests of OP (`hook`, `undo`, …) the running daemon has served."""
    info = status(w)
    assert info["running"], info
    return int((info.get("served") or {}).get(op, 0))


def state(gitdir: Path) -> dict[str, Any]:
    """rewind/daemon.json of a git directory (a linked worktree's own under .git/worktrees/<name>)."""
    try:
        data: dict[str, Any] = json.loads((gitdir / "rewind" / "daemon.json").read_text())
        return data
    except (FileNotFoundError, ValueError):
        return {}


def pids_under(root: Path) -> list[int]:
    """Daemons (`… daemon run`) running in a work tree under ROOT."""
    real = os.path.realpath(root)
    return [pid for pid, argv, cwd in processes()
            if argv[-3:-1] == [b"daemon", b"run"] and (cwd == real or cwd.startswith(real + "/")) and alive(pid)]


def wait_gone(pid: int, timeout: float = HANG) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def reap(root: Path) -> list[int]:
    """Kill (SIGCONT, then SIGKILL) every daemon left under ROOT; returns their pids."""
    left = pids_under(root)
    for pid in left:
        for sig in (signal.SIGCONT, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
    for pid in left:
        wait_gone(pid)
    return left


def stop(w: Workdir) -> None:
    """`git rewind daemon stop`, then whatever did not go is killed."""
    w.rewind("daemon", "stop")
    reap(w.path)
