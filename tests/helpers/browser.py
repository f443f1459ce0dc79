"""The real `git rewind web` on a test repository, and Debian's Chromium to look at it (Playwright drives it).

Playwright's own browser download cannot work here, so the browser is always the system's /usr/bin/chromium
(.ci/run installs Debian's `chromium` package when it is missing).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

from helpers.workdir import REWIND, Workdir

CHROMIUM = os.environ.get("GIT_REWIND_CHROMIUM", "/usr/bin/chromium")


@contextmanager
def serve(w: Workdir, *args: str) -> Iterator[str]:
    """`git rewind web --no-open --port 0 ARGS` running in W until the block ends; yields its URL (first line)."""
    proc = subprocess.Popen([*REWIND, "web", "--no-open", "--port", "0", *args], cwd=w.path, env=w.env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            proc.kill()
            raise AssertionError(f"git rewind web printed {url!r}: {proc.communicate()[1]}")
        yield url
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()
