"""Concurrent writers: parallel `git rewind snap` processes never lose a checkpoint or reuse a seq.

Several workers run at once, each a sequence of real `git rewind snap` processes (full scans,
--path snapshots, --allow-empty, sessions by option or by $GIT_REWIND_SESSION, JSON and plain
output), each editing only its own files between snaps. Afterwards every reported checkpoint
must exist with its note, sequence ids must be unique repository-wide and increase along every
chain and within every worker, each session's chain must hold exactly the checkpoints reported
for it, every checkpoint must hold the content its worker had just written, the user's index
must be byte-identical and `git fsck` clean. The same from two linked work trees, which share
the sequence and the store but keep private indexes of their own. And with half of the workers writing
their checkpoints in process (objects.in_process: pygit2 and a long-lived `git update-ref`, as the daemon
writes them) while the others go through fast-import.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers import stress
from helpers.workdir import IN_PROCESS, Workdir

WORKERS = stress.count(8, 3)
SNAPS = stress.count(6, 2)


@dataclass
class Report:
    """One `snap` as its caller saw it."""

    worker: int
    step: int
    session: str
    path: str  # the file the worker wrote just before
    content: str
    created: bool
    seq: int
    commit: str  # full id (JSON output) or the printed short id
    note: dict[str, Any] | None
    worktree: str = "main"


def _content(worker: int, step: int, worktree: str) -> str:
    return f"{worktree} worker {worker} step {step}\n"


def _run_worker(w: Workdir, worker: int, sessions: list[str], worktree: str = "main") -> list[Report]:
    reports = []
    for step in range(SNAPS):
        rel = f"{worktree}-w{worker}/f{step % 2}.txt"
        content = _content(worker, step, worktree)
        w.write(rel, content)
        session = sessions[(worker + step) % len(sessions)]
        variant = (worker + step) % 4
        # A message makes a checkpoint even of an unchanged tree; the JSON variants leave it out every
        # other step, so parallel snaps still meet trees another worker's snap already recorded.
        named = variant not in (0, 1) or step % 2 == 0
        args = ["snap", "-m", f"{worktree} w{worker} s{step}"] if named else ["snap"]
        env = None
        if variant == 0:  # full scan, session by option, JSON
            args += ["--session", session, "--json"]
        elif variant == 1:  # known path, JSON
            args += ["--session", session, "--path", rel, "--json"]
        elif variant == 2:  # full scan, session from the environment, plain output
            env = {"GIT_REWIND_SESSION": session}
        else:  # known path, allowed to be empty, plain output
            args += ["--session", session, "--path", rel, "--allow-empty"]
        out = w.ok(*args, env=env)
        if "--json" in args:
            data = json.loads(out)
            created = not data.get("unchanged")
            reports.append(Report(worker, step, session, rel, content, created, data["seq"], data["commit"],
                                  data if created else None, worktree))
        else:
            line = out.strip()
            match = re.fullmatch(r"#(\d+) ([0-9a-f]{7,}) (.*?)(?: \(same tree as #\d+\))?", line)
            if match:
                assert match.group(3) == f"{worktree} w{worker} s{step}", line
                reports.append(Report(worker, step, session, rel, content, True, int(match.group(1)),
                                      match.group(2), None, worktree))
            else:
                match = re.fullmatch(r"unchanged since #(\d+)", line)
                assert match, f"unexpected snap output: {out!r}"
                reports.append(Report(worker, step, session, rel, content, False, int(match.group(1)), "",
                                      None, worktree))
    return reports


def _run_parallel(jobs: list[tuple[Workdir, int, list[str], str]]) -> list[Report]:
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = [pool.submit(_run_worker, *job) for job in jobs]
        return [report for future in futures for report in future.result()]


def _check(w: Workdir, reports: list[Report]) -> dict[int, dict[str, Any]]:
    """Everything the reports claim is in the store, and nothing else; returns notes by seq."""
    items = json.loads(w.ok("list", "--json", "-n", "0", "--safety", "--all-worktrees"))
    seqs = [item["seq"] for item in items]
    assert len(seqs) == len(set(seqs)), f"duplicate sequence ids: {sorted(seqs)}"
    by_seq = {item["seq"]: item for item in items}
    by_commit = {item["commit"]: item for item in items}

    created = [r for r in reports if r.created]
    reported = [r.seq for r in created]
    assert len(reported) == len(set(reported)), f"two snaps reported the same seq: {sorted(reported)}"
    assert set(reported) == set(by_seq), (
        f"checkpoints reported but missing: {set(reported) - set(by_seq)}; "
        f"present but never reported: {set(by_seq) - set(reported)}")

    for r in created:
        item = by_seq[r.seq]
        assert item["commit"].startswith(r.commit), (r, item["commit"])
        assert item["session"] == r.session, (r, item)
        assert w.git("cat-file", "-t", item["commit"]).strip() == "commit"
        if r.note is not None:
            assert r.note["commit"] == item["commit"] and r.note["seq"] == item["seq"]
        # The checkpoint holds what its worker had just written (nobody else writes that file).
        shown = w.git("show", f"{item['commit']}:{r.path}", check=False)
        assert shown == r.content, f"#{r.seq} of worker {r.worker} step {r.step} holds {shown!r}"
        assert w.git("notes", "--ref=rewind", "show", item["commit"]).strip().startswith("{")
    for r in reports:
        if not r.created:  # an unchanged snap names a checkpoint of its own session that exists
            assert r.seq in by_seq and by_seq[r.seq]["session"] == r.session, r

    # Within one worker, one snap after the other: seqs strictly increase.
    for worker in {(r.worktree, r.worker) for r in reports}:
        mine = [r.seq for r in created if (r.worktree, r.worker) == worker]
        assert mine == sorted(mine) and len(set(mine)) == len(mine), (worker, mine)

    # Each session's chain holds exactly the checkpoints reported for it, seqs rising to the tip.
    sessions = {r.session for r in reports}
    refs = w.git("for-each-ref", "--format=%(refname)", "refs/rewind/").split()
    assert sorted(refs) == sorted(f"refs/rewind/{s}" for s in sessions if any(
        c.session == s for c in created))
    for session in sessions:
        expected = {by_seq[r.seq]["commit"] for r in created if r.session == session}
        if not expected:
            continue
        chain = w.git("rev-list", "--first-parent", f"refs/rewind/{session}").split()
        assert len(chain) == len(set(chain))
        assert set(chain) == expected, f"session {session}: chain and reports differ"
        chain_seqs = [by_commit[c]["seq"] for c in chain]
        assert chain_seqs == sorted(chain_seqs, reverse=True), (session, chain_seqs)
        parents = w.git("rev-list", "--parents", "-n", "1", chain[-1]).split()
        assert len(parents) == 1, f"the first checkpoint of {session} has a parent"
    w.fsck()
    return by_seq


def _start(repo: Workdir) -> None:
    repo.write(".gitignore", "node_modules/\n")
    repo.write("README.md", "# shared\n")
    for i in range(200):
        repo.write(f"src/m{i // 20}/f{i}.py", f"value = {i}\n")
    repo.commit_all("init")
    repo.write("node_modules/x/index.js", "ignored\n")


def test_parallel_snaps_never_lose_or_reuse(repo: Workdir) -> None:
    _start(repo)
    index = repo.path / ".git" / "index"
    before = index.read_bytes()
    head = repo.git("rev-parse", "HEAD")
    sessions = ["s0", "s1", "s2"]
    reports = _run_parallel([(repo, i, sessions, "main") for i in range(WORKERS)])
    assert len(reports) == WORKERS * SNAPS
    assert sum(r.created for r in reports) >= WORKERS  # the contention was real
    _check(repo, reports)
    assert index.read_bytes() == before
    assert repo.git("rev-parse", "HEAD") == head
    assert not list(repo.path.rglob("*.rewind-tmp"))
    # The store still works and still equals `git add -A`.
    repo.ok("snap", "--session", "final")
    assert repo.tree_of("refs/rewind/final") == repo.add_all_tree()
    assert "node_modules/x/index.js" not in repo.git("ls-tree", "-r", "--name-only", "refs/rewind/final")


def test_parallel_snaps_in_process_and_by_fast_import_never_lose_or_reuse(repo: Workdir) -> None:
    _start(repo)
    index = (repo.path / ".git" / "index").read_bytes()
    in_process = Workdir(repo.path, repo.env, IN_PROCESS)
    sessions = ["s0", "s1"]
    reports = _run_parallel([(in_process if i % 2 else repo, i, sessions, "main") for i in range(WORKERS)])
    assert sum(r.created for r in reports) >= WORKERS
    _check(repo, reports)
    assert (repo.path / ".git" / "index").read_bytes() == index
    in_process.ok("snap", "--session", "final")
    assert repo.tree_of("refs/rewind/final") == repo.add_all_tree()


def test_parallel_snaps_from_two_linked_worktrees(repo: Workdir, tmp_path: Path) -> None:
    _start(repo)
    trees: dict[str, Workdir] = {}
    for name in ("wt1", "wt2"):
        repo.git("worktree", "add", "-q", "-b", name, str(tmp_path / name))
        trees[name] = Workdir(tmp_path / name, repo.env)
        trees[name].write("node_modules/y/index.js", f"ignored in {name}\n")
    gitdir = repo.path / ".git"
    indexes = {name: gitdir / "worktrees" / name / "index" for name in trees}
    before = {name: path.read_bytes() for name, path in indexes.items()}
    main_index = (gitdir / "index").read_bytes()

    # Two workers per work tree; sessions of their own, and one session shared by both trees.
    jobs = []
    for name, wt in trees.items():
        for i in range(2):
            jobs.append((wt, i, [f"{name}-own", "shared"], name))
    reports = _run_parallel(jobs)
    by_seq = _check(repo, reports)

    for name in trees:
        private = gitdir / "worktrees" / name / "rewind" / "index"
        assert private.exists(), f"{name} has no private index of its own"
        assert indexes[name].read_bytes() == before[name], f"{name}'s index was written"
        mine = [r for r in reports if r.worktree == name and r.created and r.note is not None]
        for r in mine:  # the note records the work tree's own branch
            assert by_seq[r.seq]["branch"] == name, (r, by_seq[r.seq]["branch"])
    assert not (gitdir / "rewind" / "index").exists(), "the main work tree's private index was used"
    assert (gitdir / "index").read_bytes() == main_index
    assert (gitdir / "worktrees" / "wt1" / "rewind" / "index").read_bytes() != b""

    # Each work tree's own full snapshot is its own `git add -A`, not the other's.
    for name, wt in trees.items():
        wt.ok("snap", "--session", f"{name}-final")
        tree = wt.tree_of(f"refs/rewind/{name}-final")
        assert tree == wt.add_all_tree()
        files = wt.git("ls-tree", "-r", "--name-only", tree).split("\n")
        assert any(f.startswith(f"{name}-w0/") for f in files)
        other = "wt2" if name == "wt1" else "wt1"
        assert not any(f.startswith(f"{other}-w") for f in files)
    seqs = [item["seq"] for item in json.loads(repo.ok("list", "--json", "-n", "0", "--safety", "--all-worktrees"))]
    assert len(seqs) == len(set(seqs))
    repo.fsck()
