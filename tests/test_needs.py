"""What the tests need beyond git and Python (tests/helpers/needs.py), as a newcomer on a fresh machine
meets it: the README's test command run with a program missing skips the tests needing it, each saying
the one command that installs it, and passes; under CI=true the same skip fails the run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import needs

ROOT = Path(__file__).resolve().parent.parent


def pytest_run(tmp_path: Path, test: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m pytest TEST -rs` from the clone, as the README runs it, with ENV over this environment
    (CI unset unless ENV sets it)."""
    environ = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    environ.update(env)
    return subprocess.run([sys.executable, "-m", "pytest", test, "-q", "-rs", "-p", "no:cacheprovider",
                           "--basetemp", str(tmp_path / "basetemp")], cwd=ROOT, env=environ,
                          capture_output=True, text=True, timeout=600)


def without(tmp_path: Path, *programs: str) -> str:
    """A PATH holding this one's programs less PROGRAMS (links in a folder of its own), and no sbin folder
    holding them either: a machine where they were never installed."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            link = bin_dir / name
            if name not in programs and not link.exists() and os.access(os.path.join(folder, name), os.X_OK):
                link.symlink_to(os.path.join(folder, name))
    return str(bin_dir)


def test_a_missing_program_is_named_with_the_command_that_installs_it(tmp_path: Path) -> None:
    assert needs.reason("groff") is None  # this machine (CI) has them all
    gone = needs.Need((str(tmp_path / "lighttpd"),), "lighttpd")
    assert gone.missing() == str(tmp_path / "lighttpd") and gone.install() == "sudo apt install lighttpd"
    assert needs.Need(("sh",), "dash").missing() is None
    broken = needs.Need(("sh",), "man-db", works=lambda: False, broken="a stub?")
    assert broken.missing() == "man-db (sh is not it: a stub?)"
    assert "strace" in {n.package for n in needs.NEEDS.values()}


def test_without_the_browser_the_pages_tests_skip_saying_how_to_install_it(tmp_path: Path) -> None:
    """GIT_REWIND_CHROMIUM names a browser this machine does not have: skipped, not an error."""
    test = "tests/test_web_page.py::test_read_only_shows_no_actions"
    run = pytest_run(tmp_path, test, GIT_REWIND_CHROMIUM=str(tmp_path / "no-chromium"))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 skipped" in run.stdout and "error" not in run.stdout.lower(), run.stdout
    assert f"needs {tmp_path / 'no-chromium'}: sudo apt install chromium" in run.stdout, run.stdout

    ci = pytest_run(tmp_path, test, GIT_REWIND_CHROMIUM=str(tmp_path / "no-chromium"), CI="true")
    assert ci.returncode == 1, ci.stdout + ci.stderr
    assert "skipped under CI=true, where every test must run: needs" in ci.stdout, ci.stdout
    assert "1 skipped" not in ci.stdout


def test_a_fresh_machine_without_npm_skips_the_agent_tests_instead_of_failing_them(tmp_path: Path) -> None:
    """No npm on PATH and an empty agent cache (a fresh machine): the end-to-end test that would install
    Claude Code is skipped with `sudo apt install npm`; under CI=true it fails."""
    path = without(tmp_path, "npm", "node", "nodejs")
    cache = tmp_path / "agents"
    test = "tests/test_e2e_resume.py"
    run = pytest_run(tmp_path, test, PATH=path, GIT_REWIND_AGENT_CACHE=str(cache))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "needs npm: sudo apt install npm" in run.stdout and "passed" not in run.stdout, run.stdout
    assert not (cache / "claude-code" / "node_modules").exists()

    ci = pytest_run(tmp_path, test, PATH=path, GIT_REWIND_AGENT_CACHE=str(cache), CI="true")
    assert ci.returncode == 1 and "skipped under CI=true" in ci.stdout, ci.stdout


def test_a_missing_git_server_program_skips_the_servers_tests(tmp_path: Path) -> None:
    """lighttpd and sshd found through PATH and the sbin folders: the server fixtures skip before starting
    anything when the helper's lookup finds neither (PATH without them, sbin folders named elsewhere)."""
    path = without(tmp_path, "lighttpd", "sshd")
    test = "tests/test_gitservers.py::test_a_pre_receive_hook_that_says_no"
    run = pytest_run(tmp_path, test, PATH=path, GIT_REWIND_TEST_SBIN=str(tmp_path / "no-sbin"))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed, 2 skipped" in run.stdout, run.stdout  # git daemon runs; http and ssh skip
    assert "needs lighttpd: sudo apt install lighttpd" in run.stdout
    assert "needs sshd: sudo apt install openssh-server" in run.stdout
