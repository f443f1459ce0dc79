"""The fixtures every test file shares: real repositories in temporary directories (helpers in tests/helpers/)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import daemon, needs
from helpers.samples import AGENT_ENV
from helpers.workdir import Workdir, git_env

# the real git servers' fixtures: git_daemon, http_server, ssh_server, any_server
pytest_plugins = ["helpers.gitservers"]

# The tiers (pytest -m unit / invariants / e2e): what a test file is decides its tier.
INVARIANTS = {"test_kill", "test_concurrency", "test_attacks", "test_differential", "test_properties",
              "test_real_history"}  # the promises pushed hard: kills, races, attacks, git as the oracle, real histories
END_TO_END = {"test_gitservers", "test_sync_servers", "test_web_page"}  # real servers and the browser (+ test_e2e_*)


def tier(module: str) -> str:
    """The tier of the test file named MODULE (without .py)."""
    if module.startswith("test_e2e_") or module in END_TO_END:
        return "e2e"
    return "invariants" if module in INVARIANTS else "unit"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(getattr(pytest.mark, tier(item.path.stem)))
        skip_unless_found(item)


# What a test needs beyond git and Python (tests/helpers/needs.py): `@pytest.mark.needs("strace")`, or
# needs.need() in a fixture. Missing, the test is skipped saying how to install it; under CI=true, where
# everything must run, any skip is a failure instead.
CI = os.environ.get("CI") == "true"


def skip_unless_found(item: pytest.Item) -> None:
    """Mark ITEM skipped (before any fixture runs) when a program its `needs` marker names is missing."""
    for marker in item.iter_markers("needs"):
        for name in marker.args:
            why = needs.reason(name)
            if why is not None:
                item.add_marker(pytest.mark.skip(reason=why))
                return


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under CI=true a skipped test fails, its reason kept: CI installs what the tests need, so a skip there
    hides a test that never ran."""
    report = yield
    if CI and report.skipped and not hasattr(report, "wasxfail"):  # type: ignore[attr-defined]
        longrepr = report.longrepr  # type: ignore[attr-defined]
        why = (longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)).removeprefix("Skipped: ")
        report.outcome = "failed"  # type: ignore[attr-defined]
        report.longrepr = f"skipped under CI=true, where every test must run: {why}"  # type: ignore[attr-defined]
    return report


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    return git_env(home)


@pytest.fixture
def git_environ(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """This process's environment set to `env`, for library calls that run git in the test process."""
    for key in [k for k in os.environ if k not in env]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


@pytest.fixture
def repo(tmp_path: Path, env: dict[str, str]) -> Workdir:
    """An empty repository with no commits yet."""
    path = tmp_path / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], env=env, check=True)
    return Workdir(path, env)


@pytest.fixture
def project(repo: Workdir) -> Workdir:
    """A repository with a first commit, an ignore file and some untracked work."""
    repo.write(".gitignore", "node_modules/\n*.log\n.env\n")
    repo.write("README.md", "# demo\n")
    repo.write("src/app.py", "print('hello')\n")
    repo.write("bin/run.sh", "#!/bin/sh\necho run\n", mode=0o755)
    repo.commit_all("init")
    repo.write("notes.txt", "untracked work\n")
    repo.write("node_modules/pkg/index.js", "ignored\n")
    repo.write("debug.log", "ignored log\n")
    repo.write(".env", "SECRET=1\n")
    return repo


@pytest.fixture
def agent_project(project: Workdir, home: Path) -> Workdir:
    """`project` with no agent in its environment and the hook's outside-repository log under HOME."""
    for key in AGENT_ENV:
        project.env.pop(key, None)
    project.env["XDG_STATE_HOME"] = str(home / ".local" / "state")
    return project


@pytest.fixture
def daemons(tmp_path: Path) -> Iterator[list[Workdir]]:
    """Work trees whose file-watcher daemon the test starts: each is stopped after it (`git rewind daemon
    stop`), and any daemon still running under the test's directory is then killed by its pid."""
    started: list[Workdir] = []
    yield started
    for w in started:
        if w.path.is_dir():  # a test may delete its work tree (the daemon then exits by itself)
            w.rewind("daemon", "stop")
    daemon.reap(tmp_path)
