"""What some tests need beyond git and Python, and the one command that installs each.

A fresh Debian or Ubuntu machine has git, python3, python3-venv and pipx; the README's test command must
pass there. A test that needs more says so: `@pytest.mark.needs("strace")` (tests/conftest.py checks the
marker before any fixture runs) or `needs.need("lighttpd")` where a fixture finds out (a git server, an
agent CLI to install with npm). With the program missing the test is skipped, its reason one line naming
the command that installs it. Under CI=true a skip is a failure (tests/conftest.py), so CI runs everything:
`.ci/run` installs what `python3 tests/helpers/needs.py` prints (the Debian packages missing here).

This module imports nothing but the standard library (pytest only when a test is skipped), so .ci/run can
run it before any virtual environment exists.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field

CHROMIUM = os.environ.get("GIT_REWIND_CHROMIUM", "/usr/bin/chromium")  # GIT_REWIND_CHROMIUM names another
# Where daemons live, off a normal user's PATH on Debian (GIT_REWIND_TEST_SBIN: elsewhere, for the tests of this).
SBIN = os.environ.get("GIT_REWIND_TEST_SBIN", "/usr/local/sbin:/usr/sbin:/sbin")


def _is_man_db() -> bool:
    """`man` is man-db itself, not the stub a minimized Ubuntu puts in its place."""
    try:
        run = subprocess.run(["man", "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return run.returncode == 0 and re.match(r"man \d", run.stdout) is not None


@dataclass(frozen=True)
class Need:
    """Programs a test runs (a name is looked up on PATH and in the sbin directories), and the Debian
    package that has them."""

    programs: tuple[str, ...]
    package: str
    works: Callable[[], bool] | None = field(default=None, compare=False)  # a probe beyond being there
    hint: str = ""  # said after the command, where Ubuntu differs
    broken: str = ""  # said when the program is there but fails the probe

    def missing(self) -> str | None:
        """Why the Need is not met: the first program not found, or the probe failed; None when it is met."""
        for program in self.programs:
            if find(program) is None:
                return program
        if self.works is not None and not self.works():
            return f"{self.package} ({self.programs[0]} is not it{': ' + self.broken if self.broken else ''})"
        return None

    def install(self) -> str:
        """The one command that installs it."""
        return f"sudo apt install {self.package}" + (f" ({self.hint})" if self.hint else "")


NEEDS: dict[str, Need] = {
    "lighttpd": Need(("lighttpd",), "lighttpd"),  # git http-backend behind it (tests/helpers/gitservers.py)
    "sshd": Need(("sshd", "ssh", "ssh-keygen"), "openssh-server"),
    "chromium": Need((CHROMIUM,), "chromium",
                     hint="Ubuntu: sudo snap install chromium, then GIT_REWIND_CHROMIUM=/snap/bin/chromium"),
    "man": Need(("man",), "man-db", works=_is_man_db, broken="a minimized Ubuntu's stub? sudo unminimize"),
    "groff": Need(("groff",), "groff-base"),
    "npm": Need(("npm", "node"), "npm"),  # the agent CLIs come from the npm registry (tests/helpers/agentcli.py)
    "strace": Need(("strace",), "strace"),
}


def find(program: str) -> str | None:
    """Where PROGRAM is: a path as given if it can be run, else the name looked up on PATH, then in SBIN."""
    if os.sep in program:
        return program if os.path.isfile(program) and os.access(program, os.X_OK) else None
    return shutil.which(program, path=os.pathsep.join((os.environ.get("PATH", os.defpath), SBIN)))


def reason(name: str) -> str | None:
    """Why a test needing NAME cannot run here (one line, with the command that installs it), or None."""
    gone = NEEDS[name].missing()
    return None if gone is None else f"needs {gone}: {NEEDS[name].install()}"


def need(*names: str) -> None:
    """Skip the calling test unless every one of NAMES is here (a failure under CI=true: tests/conftest.py)."""
    for name in names:
        why = reason(name)
        if why is not None:
            import pytest

            pytest.skip(why)


def missing_packages() -> list[str]:
    """The Debian packages of every need missing on this machine (what .ci/run installs)."""
    return sorted({need.package for need in NEEDS.values() if need.missing() is not None})


if __name__ == "__main__":
    print(" ".join(missing_packages()))
