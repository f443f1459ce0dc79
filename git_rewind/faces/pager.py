"""Paging and colour, decided the way git's own commands decide them: the one place `list`, `show` and `diff` ask.

git pages a command's output when stdout is a terminal, through the pager `git var GIT_PAGER` names
(GIT_PAGER, core.pager, PAGER, else git's default; `cat` or empty: none), with LESS=FRX and LV=-c
unless they are set. It colours when `color.<command>` (here `color.rewind`, else `color.ui`, default
auto) says so, auto meaning: into a pager when `color.pager` is true (the default), else when stdout
is a terminal; never on a terminal that calls itself dumb (git's own answer decides that part).
git may already page us (`git -p rewind …`, `pager.rewind`): it sets GIT_PAGER_IN_USE, and we do
not page again. `git --no-pager rewind …` sets GIT_PAGER=cat, which `git var` then reports.
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

SLOT = "color.rewind"  # like git's color.diff or color.status: falls back to color.ui
CHOICES = ("always", "never", "auto")
RESET = "\x1b[m"


class View:
    """How a command's output is shown: through which pager (None: straight out), in colour or not, and the
    terminal's width when stdout is one (None when it is piped: nothing is cut)."""

    __slots__ = ("pager", "color", "width", "_cwd", "_colors")

    def __init__(self, pager: str | None, color: bool, width: int | None, cwd: str | None = None) -> None:
        self.pager = pager
        self.color = color
        self.width = width
        self._cwd = cwd
        self._colors: dict[str, str] = {}

    def paint(self, text: str, slot: str, default: str) -> str:
        """TEXT in the colour git's config gives SLOT (e.g. color.diff.commit, default yellow), when colouring."""
        if not self.color or not text:
            return text
        if slot not in self._colors:
            self._colors[slot] = _git(["config", "--get-color", slot, default], self._cwd)
        code = self._colors[slot]
        return f"{code}{text}{RESET}" if code else text

    def git_color(self) -> str:
        """The `--color=` option that makes a git command colour exactly when this view does."""
        return "--color=always" if self.color else "--color=never"


def choose(color: str | None = None, no_pager: bool = False, cwd: str | None = None) -> View:
    """Decide as git would for a command run now: COLOR is `--color[=WHEN]` (one of CHOICES; None: not
    given), NO_PAGER `--no-pager`. Asks git (`git var`, `git config`) only when the answer depends on it."""
    terminal = os.isatty(sys.stdout.fileno())
    in_pager = os.environ.get("GIT_PAGER_IN_USE", "").lower() in ("1", "true", "yes", "on")
    pager = None
    if terminal and not no_pager and not in_pager:
        named = _git(["var", "GIT_PAGER"], cwd).strip()
        pager = None if named in ("", "cat") else named
    if color == "always":
        colored = True
    elif color == "never":
        colored = False
    else:
        # auto, as git's want_color(): into a pager (ours or git's) as color.pager says, else on a terminal
        auto = _color_pager(cwd) if pager is not None or in_pager else terminal
        colored = _git(["config", "--get-colorbool", SLOT, "true" if auto else "false"], cwd).strip() == "true"
    return View(pager, colored, _width() if terminal or in_pager else None, cwd)


def _width() -> int:
    """The terminal's width: $COLUMNS, else the size of the terminal stdout, stderr or stdin is (git's pager
    may hold stdout), else 80."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    for fd in (1, 2, 0):
        try:
            size = os.get_terminal_size(fd).columns
        except OSError:
            continue
        if size > 0:  # a terminal that does not know its size says 0
            return size
    return 80


def _color_pager(cwd: str | None) -> bool:
    value = _git(["config", "--type=bool", "--default=true", "--get", "color.pager"], cwd).strip()
    return value != "false"


def _git(args: list[str], cwd: str | None) -> str:
    """A git query's output ('' when it fails: an unreadable config decides nothing)."""
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True)
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else ""


def refuse() -> None:
    """`git rewind --no-pager`: what `git --no-pager` does for the commands it runs (GIT_PAGER=cat), so
    ours and every git run under us leave the pager out."""
    os.environ["GIT_PAGER"] = "cat"


_SHELL = set("|&;<>()$`\\\"' \t\n*?[#~=%")  # what makes git run a command through `sh -c` (run-command.c)


@contextmanager
def piped() -> Iterator[None]:
    """Within: a reader that stops early (`| head`, a pager quit with q) ends the output quietly, as git
    does, instead of a traceback; what is still buffered goes nowhere, not onto the terminal."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)


@contextmanager
def paged(view: View) -> Iterator[None]:
    """Within: stdout (ours and every child's) goes to VIEW's pager, as git's setup_pager does; after it, the
    pager is waited for. A pager that cannot be started leaves the output on the terminal, as in git;
    quitting the pager (or the reader of a pipe) early ends the output quietly."""
    if view.pager is None:
        with piped():
            yield
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    sys.stdout.flush()
    shell = any(c in _SHELL for c in view.pager)
    try:
        pager = subprocess.Popen(view.pager if shell else [view.pager], shell=shell, stdin=subprocess.PIPE, env=env)
    except OSError:
        with piped():
            yield
        return
    assert pager.stdin is not None
    saved = os.dup(1)
    os.dup2(pager.stdin.fileno(), 1)
    pager.stdin.close()
    # What git tells the commands it runs under its pager: not to start another, and the terminal's width
    # (a `git diff --stat` we run can no longer ask the terminal).
    os.environ["GIT_PAGER_IN_USE"] = "true"
    ours = "COLUMNS" not in os.environ
    if ours:
        os.environ["COLUMNS"] = str(view.width or 80)
    try:
        with piped():
            yield
    finally:
        os.environ.pop("GIT_PAGER_IN_USE", None)
        if ours:
            os.environ.pop("COLUMNS", None)
        os.dup2(saved, 1)
        os.close(saved)
        try:
            pager.wait()
        except KeyboardInterrupt:  # Ctrl-C reaches the pager too; let it finish drawing
            pager.wait()
