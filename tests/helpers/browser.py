"""The real `git rewind web` on a test repository, and Debian's Chromium to look at it (Playwright drives it).

Playwright's own browser download cannot work here, so the browser is always the system's /usr/bin/chromium
or the one GIT_REWIND_CHROMIUM names (tests/helpers/needs.py: without it the page's tests are skipped, saying
how to install it; .ci/run installs Debian's `chromium` package).
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

from helpers.needs import CHROMIUM
from helpers.workdir import REWIND, Workdir

__all__ = ["CHROMIUM", "serve"]


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
