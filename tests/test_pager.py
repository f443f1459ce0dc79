"""Paging and colour as git's own commands do them: `list`, `show` and `diff` run in a real pseudo-terminal
with core.pager set to a script that records each call and what it was given."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers import terminal
from helpers.workdir import REWIND, Workdir

from git_rewind.faces import output, pager

COMMANDS = (["list"], ["show", "2"], ["show", "2", "--patch"], ["diff", "1", "2"])


class Pager:
    """core.pager: a script that appends one line per call (with the LESS and LV it saw) and keeps what it
    was given, colours included, then shows it."""

    def __init__(self, w: Workdir, tmp_path: Path) -> None:
        self.calls = tmp_path / "pager-calls"
        self.seen = tmp_path / "pager-seen"
        script = tmp_path / "pager.sh"
        script.write_text(f'#!/bin/sh\necho "LESS=$LESS LV=$LV" >> {self.calls}\ntee -a {self.seen}\n')
        script.chmod(0o755)
        w.git("config", "core.pager", str(script))
        for key in ("GIT_PAGER", "PAGER", "LESS", "LV"):  # git_env sets GIT_PAGER=cat, which beats core.pager
            w.env.pop(key, None)
        self.w = w

    def called(self) -> list[str]:
        return self.calls.read_text().splitlines() if self.calls.exists() else []

    def given(self) -> str:
        return self.seen.read_text() if self.seen.exists() else ""

    def reset(self) -> None:
        for path in (self.calls, self.seen):
            path.unlink(missing_ok=True)


@pytest.fixture
def paging(project: Workdir, tmp_path: Path) -> Pager:
    project.ok("snap", "-m", "one", "--tag", "start")
    project.write("src/app.py", "print('two')\n")
    project.ok("snap", "-m", "two")
    return Pager(project, tmp_path)


def _on_terminal(w: Workdir, *args: str, env: dict[str, str] | None = None, term: str = "xterm") -> str:
    code, shown = terminal.run([*REWIND, *args], w.path, {**w.env, **(env or {})}, [], term=term)
    assert code == 0, shown
    return shown


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_paged_on_a_terminal_not_when_piped_nor_with_no_pager(paging: Pager, args: list[str]) -> None:
    shown = _on_terminal(paging.w, *args)
    assert paging.called() == ["LESS=FRX LV=-c"], shown  # once, with git's defaults for less and lv
    assert paging.given().strip() and _plain(paging.given()) == _plain(shown)
    paging.reset()
    piped = paging.w.ok(*args)
    assert paging.called() == [] and piped.strip()
    for quiet in ([*args, "--no-pager"], ["--no-pager", *args]):
        again = _on_terminal(paging.w, *quiet)
        assert paging.called() == [], quiet
        assert _plain(piped) == _plain(again)


def test_the_person_s_less_settings_are_kept(paging: Pager) -> None:
    _on_terminal(paging.w, "list", env={"LESS": "-R", "LV": "-x"})
    assert paging.called() == ["LESS=-R LV=-x"]


def test_cat_or_an_empty_pager_means_none(paging: Pager) -> None:
    for value in ("cat", ""):
        paging.w.git("config", "core.pager", value)
        assert "two" in _on_terminal(paging.w, "list")
    assert paging.called() == []


def test_a_pager_that_cannot_start_leaves_the_output_on_the_terminal(paging: Pager, tmp_path: Path) -> None:
    paging.w.git("config", "core.pager", str(tmp_path / "no-such-pager"))
    shown = _on_terminal(paging.w, "list")
    assert "#2" in shown and "#1" in shown


def test_under_git_s_own_pager_no_second_one(paging: Pager) -> None:
    """`git -p rewind list`: git pages the command and says so (GIT_PAGER_IN_USE); it is not paged again,
    and colours are on, as for git's own commands in a pager."""
    code, _shown = terminal.run(["git", "-p", "rewind", "list"], paging.w.path, paging.w.env, [], term="xterm")
    assert code == 0
    assert len(paging.called()) == 1
    assert "\x1b[33m#2" in paging.given()


def test_colours_in_the_pager_by_default_and_as_color_ui_says(paging: Pager) -> None:
    _on_terminal(paging.w, "list")
    assert "\x1b[33m#2\x1b[m" in paging.given() and "\x1b[1;33mstart\x1b[m" in paging.given()
    paging.reset()
    _on_terminal(paging.w, "show", "2", "--patch")
    assert "\x1b[33m#2 " in paging.given() and "\x1b[32mprint('two')" in paging.given()
    paging.reset()
    paging.w.git("config", "color.pager", "false")
    _on_terminal(paging.w, "list")
    assert "\x1b" not in paging.given()
    paging.w.git("config", "--unset", "color.pager")
    paging.reset()
    paging.w.git("config", "color.ui", "never")
    for args in COMMANDS:
        _on_terminal(paging.w, *args)
    assert paging.given().strip() and "\x1b" not in paging.given()
    paging.w.git("config", "--unset", "color.ui")
    paging.reset()
    for args in COMMANDS:  # as git, never on a terminal that calls itself dumb
        _on_terminal(paging.w, *args, term="dumb")
    assert paging.given().strip() and "\x1b" not in paging.given()


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_colours_when_asked_and_never_piped_by_default(paging: Pager, args: list[str]) -> None:
    w = paging.w
    assert "\x1b[" not in w.ok(*args)
    assert "\x1b[" not in w.ok(*args, "--color=never")
    for forced in (w.ok(*args, "--color=always"), w.ok(*args, "--color"),
                   w.ok(*args, env={"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "color.ui",
                                    "GIT_CONFIG_VALUE_0": "always"})):
        assert "\x1b[" in forced
        assert _plain(forced) == _plain(w.ok(*args))
    w.git("config", "color.ui", "always")
    assert "\x1b[" in w.ok(*args) and "\x1b[" not in w.ok(*args, "--color=never")


def test_json_never_carries_colours(paging: Pager) -> None:
    paging.w.git("config", "color.ui", "always")
    shown = paging.w.ok("show", "2", "--json", "--patch")
    assert "\x1b" not in shown and "src/app.py | 2 +-" in shown


def test_color_rewind_decides_before_color_ui(paging: Pager) -> None:
    paging.w.git("config", "color.ui", "always")
    paging.w.git("config", "color.rewind", "never")
    assert "\x1b[" not in paging.w.ok("list") and "\x1b[" not in paging.w.ok("show", "1")


def test_quitting_the_pager_early_is_quiet(paging: Pager, tmp_path: Path) -> None:
    """A pager that exits without reading (as `q` in less) while more than a pipe holds is still to come, from
    us (a long summary) and from git (a long patch): no traceback, no broken-pipe message, exit status 0."""
    quitter = tmp_path / "quit.sh"
    quitter.write_text("#!/bin/sh\nexit 0\n")
    quitter.chmod(0o755)
    paging.w.git("config", "core.pager", str(quitter))
    paging.w.write("big.txt", "a line of a large file\n" * 20000)
    paging.w.ok("snap", "--summary", "-", "-m", "big", input="Done: a lot\n" + "- one more thing done\n" * 20000)
    for args in (["show", "@"], ["show", "@", "--patch"], ["list"]):
        shown = _on_terminal(paging.w, *args)
        assert "Traceback" not in shown and "Broken pipe" not in shown and "BrokenPipe" not in shown, shown


def test_a_reader_that_stops_early_ends_the_output_quietly(paging: Pager) -> None:
    """`| head`, with more to write than a pipe holds: no traceback and no error, from us or from git."""
    import shlex

    paging.w.write("big.txt", "a line of a large file\n" * 50000)
    paging.w.ok("snap", "--summary", "-", "-m", "big", input="Done: a lot\n" + "- one more thing done\n" * 20000)
    command = " ".join(shlex.quote(part) for part in REWIND)
    for args, status in (("cat @ big.txt", 0), ("show @", 0), ("show @ --patch", 0), ("diff 1 @", 141)):
        run = subprocess.run(["bash", "-c", f"{command} {args} | head -c 10; exit ${{PIPESTATUS[0]}}"],
                             cwd=paging.w.path, env=paging.w.env, capture_output=True)
        assert len(run.stdout) == 10 and run.stderr == b"", (args, run.stderr)
        assert run.returncode == status, args


def test_a_message_is_cut_to_the_terminal_s_width_never_when_piped(paging: Pager) -> None:
    long = "word " * 60
    paging.w.ok("snap", "-m", long, "--allow-empty")
    shown = _on_terminal(paging.w, "list", "--no-pager", env={"COLUMNS": "100"})
    rows = [line for line in shown.splitlines() if line.startswith("#")]
    assert rows and all(len(row) <= 100 for row in rows)
    assert rows[0].endswith("…")
    piped = paging.w.ok("list", env={"COLUMNS": "100"})
    assert piped.splitlines()[1].endswith(long.strip())


def _plain(text: str) -> str:
    """TEXT without colours, ages or column padding (an age may tick over between two runs)."""
    import re

    return " ".join(re.sub(r"\d+[smhd] ago", "", re.sub(r"\x1b\[[0-9;]*m", "", text)).split())


# the decision itself, in this process -------------------------------------------------------------


def test_choose_follows_the_options_and_git(project: Workdir, git_environ: dict[str, str]) -> None:
    root = str(project.path)
    assert pager.choose("always", cwd=root).color and not pager.choose("never", cwd=root).color
    piped = pager.choose(cwd=root)  # pytest captures stdout: not a terminal
    assert piped.pager is None and piped.width is None and not piped.color
    project.git("config", "color.ui", "always")
    assert pager.choose(cwd=root).color
    view = pager.choose("always", cwd=root)
    assert view.paint("#1", "color.diff.commit", "yellow") == "\x1b[33m#1\x1b[m"
    project.git("config", "color.diff.commit", "blue bold")
    assert pager.choose("always", cwd=root).paint("#1", "color.diff.commit", "yellow") == "\x1b[1;34m#1\x1b[m"
    assert pager.choose("never", cwd=root).paint("#1", "color.diff.commit", "yellow") == "#1"


def test_no_pager_at_the_top_is_git_s_own_no_pager(project: Workdir, git_environ: dict[str, str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIT_PAGER", raising=False)
    project.git("config", "core.pager", "less")
    pager.refuse()
    assert subprocess.run(["git", "var", "GIT_PAGER"], cwd=project.path, capture_output=True,
                          text=True).stdout.strip() == "cat"
    assert output.MESSAGE_ROOM > 0
