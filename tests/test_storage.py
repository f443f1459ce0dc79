"""The store's size (storage.measure) and the max_store_size cap the hooks enforce in the background."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.checkpoints import listing
from helpers.session import Agent
from helpers.workdir import Workdir

from git_rewind.base.lock import Lock
from git_rewind.base.repo import Repo
from git_rewind.store import checkpoints, storage

KIB = 1024
NO_CAP = {"GIT_REWIND_MAX_STORE_SIZE": "0"}  # setup checkpoints start no enforcement of their own


def measure(repo: Repo) -> int:
    return storage.measure(repo, checkpoints.load_all(repo))


def random_file(w: Workdir, rel: str, size: int) -> None:
    """Incompressible content: its blob costs SIZE bytes on disk, give or take a few."""
    w.write(rel, os.urandom(size))


def big_snaps(w: Workdir, n: int, size: int = 100 * KIB) -> None:
    """N checkpoints of session s, each holding a new version of big.bin (only the newest is in the work tree)."""
    for i in range(n):
        random_file(w, "big.bin", size)
        w.ok("snap", "--session", "s", "-m", f"v{i}", env=NO_CAP)


@pytest.fixture
def repo_here(project: Workdir, git_environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Repo:
    """The project as the library sees it, this process in its work tree."""
    monkeypatch.chdir(project.path)
    return Repo.discover(str(project.path))


def test_the_size_counts_what_checkpoints_add_not_the_history_they_share(project: Workdir,
                                                                          repo_here: Repo) -> None:
    random_file(project, "committed.bin", 300 * KIB)  # in HEAD: every checkpoint's tree holds it too
    project.commit_all("a big file")
    assert measure(repo_here) == 0  # no store yet
    project.ok("snap", "--session", "s", env=NO_CAP)
    small = measure(repo_here)
    assert 0 < small < 20 * KIB  # commits, trees, notes and notes.txt: not the committed file
    random_file(project, "untracked.bin", 100 * KIB)
    project.ok("snap", "--session", "s", env=NO_CAP)
    assert 100 * KIB < measure(repo_here) - small < 110 * KIB
    status = json.loads(project.ok("status", "--json"))["store"]
    assert status["bytes"] == measure(repo_here) and status["over"] is False


def test_the_hooks_estimate_follows_the_object_store(project: Workdir, repo_here: Repo) -> None:
    big_snaps(project, 1)
    before = storage.objects_bytes(repo_here)
    assert before > 100 * KIB
    assert storage.estimate(repo_here) == before  # nothing measured yet: the whole object store
    storage.write_state(repo_here, {"bytes": 1000, "objects": before})
    big_snaps(project, 1)
    grown = storage.objects_bytes(repo_here) - before
    assert grown > 100 * KIB and storage.estimate(repo_here) == 1000 + grown


def test_a_hook_starts_the_enforcement_and_does_not_wait_for_it(agent_project: Workdir) -> None:
    w = agent_project
    big_snaps(w, 4)  # #1..#4, 100 KiB each
    w.write(".git-rewind.toml", 'max_store_size = "250K"\n')
    store_dir = w.path / ".git" / "rewind"
    assert not (store_dir / storage.STAMP).exists()
    agent = Agent(w)
    random_file(w, "big.bin", 100 * KIB)
    # The enforcement runs under the cap lock: held here, it cannot get on, but the hook must.
    with Lock(str(store_dir / storage.CAP_LOCK)):
        started = time.monotonic()
        taken = agent.start()
        elapsed = time.monotonic() - started
        assert taken["action"] == "checkpoint" and elapsed < 8  # a waiting hook would hang on the lock
        time.sleep(0.5)
        assert len(listing(w)) == 5 and not (store_dir / storage.STATE).exists()  # nothing dropped yet
    deadline = time.monotonic() + 60
    while not (store_dir / storage.STATE).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    state = json.loads((store_dir / storage.STATE).read_text())
    assert "error" not in state, (store_dir / "hook-errors.log").read_text()
    assert state["unmet"] is False and state["bytes"] <= 250 * KIB
    assert [d["seq"] for d in listing(w)] == [5, 4]  # oldest first: #1..#3 went
    w.fsck()


def test_the_estimate_runs_once_per_interval(project: Workdir, repo_here: Repo) -> None:
    big_snaps(project, 2)
    assert storage.maybe_enforce(repo_here, 10 * KIB)  # over: started
    assert not storage.maybe_enforce(repo_here, 10 * KIB)  # looked a moment ago
    stamp = Path(repo_here.store_dir) / storage.STAMP
    old = time.time() - storage.CHECK_INTERVAL - 1
    os.utime(stamp, (old, old))
    assert not storage.maybe_enforce(repo_here, 10 * 1024 * KIB)  # looked again: under this cap
    assert not storage.maybe_enforce(repo_here, 0)  # no cap: never looks
    project.wait_for_repack()
    deadline = time.monotonic() + 60
    while not (Path(repo_here.store_dir) / storage.STATE).exists() and time.monotonic() < deadline:
        time.sleep(0.1)


@pytest.mark.parametrize("size,text", [(0, "0 B"), (1023, "1023 B"), (1536, "1.5 KiB"), (5 << 20, "5.0 MiB"),
                                       (3 << 30, "3.0 GiB")])
def test_human_sizes(size: int, text: Any) -> None:
    assert storage.human(size) == text
