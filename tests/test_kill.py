"""kill -9 in the middle of `snap` and `undo`: the repository stays consistent and nothing is lost.

On a tree of ~1,500 files the duration of each operation is measured first, then the operation
is started again and killed (SIGKILL) at a random moment inside that duration, with a fixed
seed. Half of the kills take the whole process group (a harness killing the hook's process
tree); the other half take only the git-rewind process, whose git children then finish or
fail on their own (`kill -9 <pid>`), and the checks wait for them. After every kill:
`git fsck` is clean; every ref tip and chain commit has its note and seqs are unique; no work
tree file is half-written (each is exactly its before or its after version); a safety
checkpoint, if one was written, holds the whole pre-rewind tree; the next `snap` works, sweeps
every `*.rewind-tmp` file and records exactly the files on disk; `list` works; and finishing
the interrupted undo gives the exact target tree. The same for a long-lived process writing its checkpoints
in process (objects.in_process: pygit2 and a long-lived `git update-ref`, as the daemon writes them).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import stress
from helpers.workdir import REWIND, Workdir

SEED = 20241122
DIRS, PER_DIR = 50, 30  # 1,500 files
IGNORED = {"node_modules/pkg/index.js": b"ignored, never captured\n", "node_modules/big.bin": b"\0" * 5000}


# processes ----------------------------------------------------------------------


def _procs() -> dict[int, tuple[int, int, str, str]]:
    """pid -> (ppid, pgrp, state, cmdline) for every process we can see."""
    result = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read().decode(errors="replace")
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmdline = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        result[int(name)] = (int(fields[1]), int(fields[2]), fields[0], cmdline)
    return result


def _alive(pid: int) -> bool:
    info = _procs().get(pid)
    return info is not None and info[2] != "Z"


def _wait_group_gone(pgid: int, timeout: float = 60.0) -> None:
    """Wait until every live process of the group (orphaned git children included) has exited."""
    deadline = time.monotonic() + timeout
    while any(pgrp == pgid and state != "Z" for _pp, pgrp, state, _c in _procs().values()):
        assert time.monotonic() < deadline, f"process group {pgid} still running"
        time.sleep(0.01)


def _start(w: Workdir, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*REWIND, *args], cwd=w.path, env=w.env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def _kill_at(proc: subprocess.Popen[bytes], delay: float, whole_group: bool) -> bool:
    """SIGKILL after DELAY seconds; True if the process was still running then."""
    time.sleep(delay)
    return _kill(proc, whole_group)


def _kill_when(proc: subprocess.Popen[bytes], seen: Callable[[], bool], whole_group: bool) -> bool:
    """SIGKILL the moment SEEN() is true (polled without sleeping, so the kill lands within microseconds of
    what it watches for, however loaded the machine); True if the process was still running then."""
    while not seen() and proc.poll() is None:
        pass
    return _kill(proc, whole_group)


def _kill(proc: subprocess.Popen[bytes], whole_group: bool) -> bool:
    running = proc.poll() is None
    try:
        if whole_group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            os.kill(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    _wait_group_gone(proc.pid)
    return running and proc.returncode == -signal.SIGKILL


def _timed(w: Workdir, *args: str) -> float:
    start = time.monotonic()
    w.ok(*args)
    return time.monotonic() - start


# trees ----------------------------------------------------------------------------


def _blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _disk(root: Path) -> dict[str, tuple[str, str]]:
    """Every path outside .git: git mode and blob id (symlinks: of their target)."""
    result = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath == str(root):
            dirnames.remove(".git")
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            if os.path.islink(full):
                result[rel] = ("120000", _blob_oid(os.fsencode(os.readlink(full))))
            else:
                with open(full, "rb") as fh:
                    data = fh.read()
                result[rel] = ("100755" if os.stat(full).st_mode & 0o100 else "100644", _blob_oid(data))
    return result


def _captured(disk: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    return {p: v for p, v in disk.items() if not p.startswith("node_modules/")}


def _tree_listing(w: Workdir, commit: str) -> dict[str, tuple[str, str]]:
    out = subprocess.run(["git", "ls-tree", "-r", "-z", "--full-tree", commit], cwd=w.path, env=w.env,
                         capture_output=True, check=True).stdout
    result = {}
    for entry in out.split(b"\0"):
        if entry:
            meta, _, name = entry.partition(b"\t")
            mode, _kind, oid = meta.decode().split()
            result[os.fsdecode(name)] = (mode, oid)
    return result


def _version_a(rng: random.Random) -> dict[str, tuple[bytes, bool]]:
    files = {}
    for d in range(DIRS):
        for f in range(PER_DIR):
            body = f"A {d}/{f} ".encode() * rng.randint(4, 400)
            files[f"d{d:02}/f{f:02}.txt"] = (body, rng.random() < 0.05)
    return files


def _version_b(a: dict[str, tuple[bytes, bool]], rng: random.Random) -> dict[str, tuple[bytes, bool]]:
    files = {}
    for path, (body, executable) in a.items():
        roll = rng.random()
        if roll < 0.15:
            continue  # deleted in B
        if roll < 0.75:
            body = f"B {path} ".encode() * rng.randint(4, 400)
        if rng.random() < 0.05:
            executable = not executable
        files[path] = (body, executable)
    for n in range(150):  # new in B, in directories A does not have
        files[f"new{n // 30}/sub/g{n:03}.txt"] = (f"B new {n}\n".encode() * rng.randint(1, 200), False)
    return files


def _write_version(root: Path, files: dict[str, tuple[bytes, bool]], links: dict[str, str]) -> None:
    for path, (body, executable) in files.items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_bytes(body)
        full.chmod(0o755 if executable else 0o644)
    for path, target in links.items():
        os.symlink(target, root / path)


def _setup(repo: Workdir, files: dict[str, tuple[bytes, bool]]) -> None:
    repo.write(".gitignore", "node_modules/\n")
    _write_version(repo.path, files, {"link-a": "d00/f00.txt", "d01/link-b": "f01.txt"})
    repo.commit_all("A")
    for rel, content in IGNORED.items():
        repo.write(rel, content)


# store consistency ------------------------------------------------------------------


def _check_store(w: Workdir) -> dict[int, dict[str, Any]]:
    """fsck clean; every chain commit (ref tips first) has its note; seqs unique and rising."""
    w.fsck()
    run = w.rewind("list", "--json", "-n", "0", "--safety")
    assert run.returncode == 0, run.stderr
    items = json.loads(run.stdout)
    seqs = [item["seq"] for item in items]
    assert len(seqs) == len(set(seqs)), f"duplicate seqs {seqs}"
    by_commit = {item["commit"]: item for item in items}
    for ref in w.git("for-each-ref", "--format=%(refname)", "refs/rewind/").split():
        chain = w.git("rev-list", "--first-parent", ref).split()
        assert chain[0] in by_commit, f"the tip of {ref} has no note"
        assert all(c in by_commit for c in chain), f"a checkpoint of {ref} has no note"
        chain_seqs = [by_commit[c]["seq"] for c in chain]
        assert chain_seqs == sorted(chain_seqs, reverse=True) and len(set(chain_seqs)) == len(chain_seqs)
    return {item["seq"]: item for item in items}


def _tmp_files(root: Path) -> list[str]:
    """A restore's temporary files left in the work tree. (.git is not walked: a restore writes none
    there, and a background pack may remove a loose-object directory under the walk.)"""
    found = []
    for folder, dirs, names in os.walk(root):
        if folder == str(root):
            dirs[:] = [d for d in dirs if d != ".git"]
        found += [os.path.relpath(os.path.join(folder, n), root) for n in names + dirs if n.endswith(".rewind-tmp")]
    return found


def _next_snap_is_exact(w: Workdir) -> None:
    """The next command after a kill: works, sweeps temporary files, records exactly the disk."""
    run = w.rewind("snap", "--allow-empty", "-m", "after a kill")
    assert run.returncode == 0, f"the snap after a kill failed: {run.stderr}"
    assert not _tmp_files(w.path), "a *.rewind-tmp file survived the next command"
    assert not (w.path / ".git" / "rewind" / "restore.journal").exists()
    commit = w.git("rev-parse", "refs/rewind/manual").strip()
    disk = _captured(_disk(w.path))
    assert _tree_listing(w, commit) == disk, "the checkpoint after a kill is not the work tree"


# the tests ----------------------------------------------------------------------------


def test_kill_snap_at_random_moments(repo: Workdir) -> None:
    rng = random.Random(SEED)
    files = _version_a(rng)
    _setup(repo, files)
    user_index = (repo.path / ".git" / "index").read_bytes()
    repo.ok("snap")

    def rewrite_all(round_: int) -> None:
        for path, (body, _executable) in files.items():
            (repo.path / path).write_bytes(body + f"round {round_}\n".encode())

    rewrite_all(-1)
    duration = _timed(repo, "snap")
    rewrite_all(0)
    duration = min(duration, _timed(repo, "snap"))
    hits = 0
    # Rounds go on (at most 24) until 8 have run and 4 kills landed mid-snap; a kill that
    # came too late shortens the next delay, so machine load cannot starve the test.
    for round_ in range(1, stress.count(25, 6)):
        if round_ > 8 and hits >= 4:
            break
        rewrite_all(round_)
        before = _disk(repo.path)
        tips = {ref: repo.git("rev-parse", ref).strip()
                for ref in repo.git("for-each-ref", "--format=%(refname)", "refs/").split()}
        proc = _start(repo, "snap", "-m", f"round {round_}")
        hit = _kill_at(proc, rng.uniform(0.02, duration * 0.9), whole_group=round_ % 2 == 0)
        hits += hit
        duration = duration if hit else duration * 0.7
        assert _disk(repo.path) == before, "a snap changed the work tree"
        assert not _tmp_files(repo.path)
        items = _check_store(repo)
        # Refs either moved to a whole new checkpoint or not at all; nothing else moved.
        for ref, tip in tips.items():
            now = repo.git("rev-parse", ref).strip()
            if ref.startswith("refs/heads/"):
                assert now == tip
            elif ref == "refs/rewind/manual" and now != tip:
                assert items[max(items)]["commit"] == now
        _next_snap_is_exact(repo)
        assert (repo.path / ".git" / "index").read_bytes() == user_index
    assert hits >= 4, f"only {hits} of {round_} kills landed inside a snap (last estimate {duration:.2f}s)"


def test_kill_undo_at_random_moments(repo: Workdir) -> None:
    rng = random.Random(SEED + 1)
    files_a = _version_a(rng)
    files_b = _version_b(files_a, rng)
    _setup(repo, files_a)
    user_index = (repo.path / ".git" / "index").read_bytes()
    seq_a = json.loads(repo.ok("snap", "--json"))["seq"]
    state_a = _disk(repo.path)
    for path in files_a:
        if path not in files_b:
            os.unlink(repo.path / path)
    os.unlink(repo.path / "link-a")
    _write_version(repo.path, files_b, {"link-a": "d02/f02.txt", "new0/link-c": "sub/g000.txt"})
    seq_b = json.loads(repo.ok("snap", "--json"))["seq"]
    state_b = _disk(repo.path)
    commits = {seq_a: _commit_of(repo, seq_a), seq_b: _commit_of(repo, seq_b)}
    trees = {seq: repo.tree_of(commit) for seq, commit in commits.items()}
    states = {seq_a: state_a, seq_b: state_b}
    assert _tree_listing(repo, commits[seq_a]) == _captured(state_a)
    assert _tree_listing(repo, commits[seq_b]) == _captured(state_b)

    duration = _timed(repo, "undo", str(seq_a), "--yes")
    assert _disk(repo.path) == state_a
    duration = min(duration, _timed(repo, "undo", str(seq_b), "--yes"))
    assert _disk(repo.path) == state_b

    current, hits, mid_restore = seq_b, 0, 0
    # At most 30 rounds, until 10 have run with 6 kills mid-undo and 2 mid-write (see the snap test).
    for round_ in range(stress.count(30, 6)):
        if round_ >= 10 and hits >= 6 and mid_restore >= 2:
            break
        target = seq_a if current == seq_b else seq_b
        last_seq = max(_check_store(repo))
        proc = _start(repo, "undo", str(target), "--yes")
        hit = _kill_at(proc, rng.uniform(0.02, duration * 0.95), whole_group=round_ % 2 == 0)
        hits += hit
        duration = duration if hit else duration * 0.7

        # No half-written file: each path is exactly its before or its after version.
        disk = _disk(repo.path)
        before, after = states[current], states[target]
        for path, value in disk.items():
            if path.endswith(".rewind-tmp"):
                continue
            assert value in (before.get(path), after.get(path)), f"{path} is neither version after a kill"
        for path in set(before) & set(after):
            assert path in disk, f"{path} exists before and after, but not after a kill"
        changed = [p for p in set(before) | set(after) if before.get(p) != after.get(p)]
        if any(disk.get(p) == before.get(p) for p in changed) and any(disk.get(p) == after.get(p) for p in changed):
            mid_restore += 1

        # Refs and notes consistent; a safety checkpoint, if written, holds the whole tree.
        items = _check_store(repo)
        for seq in sorted(s for s in items if s > last_seq):
            assert items[seq]["trigger"] == "pre-rewind" and items[seq]["rewind"]["to"] == target
            assert repo.tree_of(items[seq]["commit"]) == trees[current], "safety checkpoint lost work"

        _next_snap_is_exact(repo)
        assert repo.rewind("list").returncode == 0
        # Finishing the interrupted undo gives exactly the target.
        repo.ok("undo", str(target), "--yes")
        assert _disk(repo.path) == states[target]
        assert (repo.path / ".git" / "index").read_bytes() == user_index
        for rel, content in IGNORED.items():
            assert (repo.path / rel).read_bytes() == content
        current = target
    assert hits >= 6, f"only {hits} of {round_ + 1} kills landed inside an undo (last estimate {duration:.2f}s)"
    assert mid_restore >= 2, f"only {mid_restore} of {round_ + 1} kills landed while files were being written"
    _check_store(repo)


def _commit_of(w: Workdir, seq: int) -> str:
    items = json.loads(w.ok("list", "--json", "-n", "0", "--safety"))
    commit: str = next(item["commit"] for item in items if item["seq"] == seq)
    return commit


def test_next_snap_while_a_killed_snaps_git_still_runs(repo: Workdir) -> None:
    """`kill -9 <pid>` of a snap leaves its `git add` running; the next snap must still work.

    Made deterministic with SIGSTOP: the orphaned git add of the killed snap holds the private
    index lock; the next snap starts its own git add; the orphan then finishes first. (If the
    next snap waits for the orphan instead, the orphan is let go after a few seconds.)
    """
    files = _version_a(random.Random(SEED + 2))
    _setup(repo, files)
    repo.ok("snap")
    for path, (body, _x) in files.items():
        (repo.path / path).write_bytes(body + b"changed\n")
    lock = repo.path / ".git" / "rewind" / "index.lock"

    def git_add_of(parent: int) -> int | None:
        for pid, (ppid, _g, state, cmdline) in _procs().items():
            if ppid == parent and " add " in cmdline and state != "Z":
                return pid
        return None

    def lock_inode() -> int | None:
        try:
            return os.stat(lock).st_ino
        except FileNotFoundError:
            return None

    stopped: list[int] = []
    first = _start(repo, "snap", "-m", "killed")
    try:
        deadline = time.monotonic() + 30
        while (orphan := git_add_of(first.pid)) is None or lock_inode() is None:
            assert first.poll() is None and time.monotonic() < deadline, "the snap's git add was not seen"
            time.sleep(0.001)
        os.kill(orphan, signal.SIGSTOP)
        stopped.append(orphan)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        orphan_lock = lock_inode()
        second = subprocess.Popen([*REWIND, "snap", "-m", "next"], cwd=repo.path, env=repo.env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and second.poll() is None:
            add = git_add_of(second.pid)
            if add is not None and lock_inode() not in (None, orphan_lock):
                os.kill(add, signal.SIGSTOP)  # the second snap's git add holds a lock of its own
                stopped.append(add)
                break
            time.sleep(0.001)
        os.kill(orphan, signal.SIGCONT)  # the orphan finishes first
        while _alive(orphan):
            time.sleep(0.01)
        for pid in stopped[1:]:
            os.kill(pid, signal.SIGCONT)
        out, err = second.communicate(timeout=60)
    finally:
        for pid in stopped:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        _wait_group_gone(first.pid)
    assert second.returncode == 0, f"the snap after a killed snap failed: {err.decode()}"
    assert out.decode().startswith("#")
    _next_snap_is_exact(repo)
    _check_store(repo)


# a conversation rewind ------------------------------------------------------------------------------


def _droid_session(path: Path, session: str, cwd: Path, turns: int) -> bytes:
    """A Droid session file of TURNS prompt/answer turns (~4 MB: writing and backing it up takes a while)."""
    rows: list[dict[str, Any]] = [{"type": "session_start", "id": session, "title": "t", "version": 2, "cwd": str(cwd)}]
    parent = None
    for turn in range(turns):
        for mid, role, text in ((f"m-p{turn}", "user", f"prompt {turn}"),
                                (f"m-a{turn}", "assistant", f"answer {turn} " + "words " * 300)):
            rows.append({"type": "message", "id": mid, "parentId": parent,
                         "message": {"role": role, "content": [{"type": "text", "text": text}]}})
            parent = mid
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(0o600)
    return data


def _backups(w: Workdir, after: int) -> dict[int, bytes]:
    """seq → the transcript backup a safety checkpoint newer than AFTER holds in git (read through git)."""
    found = {}
    for seq, item in _check_store(w).items():
        if seq <= after:
            continue
        assert item["trigger"] == "pre-rewind" and item["rewind"]["to"] == 1
        blob = item["rewind"]["conversation"]["backup_blob"]
        found[seq] = subprocess.run(["git", "cat-file", "blob", blob], cwd=w.path, env=w.env, capture_output=True,
                                    check=True).stdout
    return found


def test_kill_conversation_undo_at_many_moments(agent_project: Workdir) -> None:
    """kill -9 of `undo --full` on a Droid session (a rewind that rewrites the file): at every moment the
    transcript is whole, old or new; once it changed, its full old content is in git; rerun and redo work."""
    from helpers.session import Agent, transcript_path

    w = agent_project
    agent = Agent(w, agent="droid", session="d-kill", env={"GIT_REWIND_ANTI_SPAM_SECONDS": "0",
                                                           "GIT_REWIND_MIN_CHANGE_CHARS": "0"})
    transcript = Path(transcript_path(w, "droid", "d-kill"))
    agent.transcript = str(transcript)
    turns = 1000
    whole = _droid_session(transcript, "d-kill", w.path, turns)
    assert agent.prompt(f"prompt {turns - 1}", prompt_id=f"m-p{turns - 1}")["seq"] == 1
    w.write("src/app.py", "print('after the checkpoint')\n")
    w.write("new.txt", "made after the checkpoint\n")
    code_before = _disk(w.path)

    start = time.monotonic()
    w.ok("undo", "1", "--full", "--yes")
    duration = time.monotonic() - start
    cut = transcript.read_bytes()
    assert whole.startswith(cut) and json.loads(cut.splitlines()[-1])["id"] == f"m-a{turns - 2}"  # before the prompt
    code_target = _disk(w.path)
    w.ok("redo", "--yes")
    assert transcript.read_bytes() == whole and _disk(w.path) == code_before

    # A sweep of 12 kills over the undo, then kills alternating between a bisection of the moment the
    # transcript changes (between the latest kill that found it old and the earliest that found it new or the
    # undo done), which lands kills just before the change, and a kill the moment the transcript is seen
    # replaced: what is left of the undo after the cut takes a few milliseconds, too short for a timer to hit.
    sweep, hits, backed_up_unchanged, cut_by_killed = 12, 0, 0, 0
    before_cut, after_cut = 0.0, duration
    for round_ in range(36):  # as many in the quick tier: fewer would not hit both sides of the cut
        if round_ >= 2 * sweep and hits >= sweep // 2 and backed_up_unchanged and cut_by_killed:
            break
        last_seq = max(_check_store(w))
        old_inode = transcript.stat().st_ino
        proc = _start(w, "undo", "1", "--full", "--yes")
        delay = duration * (round_ + 0.5) / sweep if round_ < sweep else (before_cut + after_cut) / 2
        if round_ >= sweep and round_ % 2:
            hit = _kill_when(proc, functools.partial(_replaced, transcript, old_inode), whole_group=round_ % 4 == 1)
        else:
            hit = _kill_at(proc, delay, whole_group=round_ % 2 == 0)
        hits += hit

        now = transcript.read_bytes()
        assert now in (whole, cut), f"round {round_}: the transcript is neither old nor new ({len(now)} bytes)"
        backups = _backups(w, last_seq)
        assert all(b == whole for b in backups.values()), "a safety checkpoint holds something else than the transcript"
        if now == cut:
            assert backups, "the transcript was cut before its full content was in git"
            cut_by_killed += hit
            if not (round_ >= sweep and round_ % 2):
                after_cut = min(after_cut, delay)
        else:
            before_cut = max(before_cut, delay)
            backed_up_unchanged += bool(backups)
        if not backups:  # killed before its safety checkpoint: nothing changed; run it again
            assert now == whole and _disk(w.path) == code_before
            w.ok("undo", "1", "--full", "--yes")
            assert transcript.read_bytes() == cut and _disk(w.path) == code_target
        # redo reverses the newest undo, the killed one included: code and transcript as they were before it.
        w.ok("redo", "--yes")
        assert transcript.read_bytes() == whole and _disk(w.path) == code_before
        assert _folder(transcript) == [transcript.name], f"round {round_}: left in Droid's folder"
    assert hits >= sweep // 2, f"only {hits} of {round_ + 1} kills landed inside an undo"
    # Kills landed between the backup and the cut, and after the cut: both sides of the change were hit.
    assert backed_up_unchanged and cut_by_killed, (backed_up_unchanged, cut_by_killed)
    _check_store(w)


def _replaced(path: Path, inode: int) -> bool:
    """PATH is another file than INODE now (a rename put a new one there)."""
    try:
        return path.stat().st_ino != inode
    except FileNotFoundError:  # not expected (the cut is a rename over it), but not this watcher's to judge
        return True


def _folder(transcript: Path) -> list[str]:
    return sorted(p.name for p in transcript.parent.iterdir())


def test_kill_conversation_undo_while_it_writes_the_transcript(agent_project: Workdir) -> None:
    """kill -9 the moment the new transcript's temporary file appears (mid-write, before the rename): the
    transcript is whole, its backup in git, and the next rewind sweeps the temporary file away."""
    from helpers.session import Agent, transcript_path

    w = agent_project
    agent = Agent(w, agent="droid", session="d-kill", env={"GIT_REWIND_ANTI_SPAM_SECONDS": "0"})
    transcript = Path(transcript_path(w, "droid", "d-kill"))
    agent.transcript = str(transcript)
    turns = 2000
    whole = _droid_session(transcript, "d-kill", w.path, turns)
    assert agent.prompt(f"prompt {turns - 1}", prompt_id=f"m-p{turns - 1}")["seq"] == 1
    mid_write = 0
    for attempt in range(12):
        if mid_write >= 2:
            break
        last_seq = max(_check_store(w))
        proc = _start(w, "undo", "1", "--conversation", "--yes")
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if any(".git-rewind-" in name for name in os.listdir(transcript.parent)):
                os.killpg(proc.pid, signal.SIGKILL)
                break
        proc.wait()
        _wait_group_gone(proc.pid)
        left = [name for name in _folder(transcript) if name != transcript.name]
        now = transcript.read_bytes()
        assert now == whole or whole.startswith(now) and json.loads(now.splitlines()[-1])["id"] == f"m-a{turns - 2}"
        if proc.returncode == -signal.SIGKILL and left:
            mid_write += 1
            assert now == whole, "the transcript changed before its new content was whole"
            assert list(_backups(w, last_seq).values()) == [whole]  # its full content went into git first
        # The next rewind works and leaves nothing of the killed one behind; redo brings the whole back.
        w.ok("undo", "1", "--conversation", "--yes")
        assert _folder(transcript) == [transcript.name], f"attempt {attempt}: left in Droid's folder"
        w.ok("redo", "--yes")
        assert transcript.read_bytes() == whole and _folder(transcript) == [transcript.name]
    assert mid_write >= 2, f"only {mid_write} kills landed while the transcript was being written"
    _check_store(w)


def _gc_setup(w: Workdir) -> int:
    """Three sessions of checkpoints, one of them wholly dropped by `gc --keep 6`, and an undo whose safety
    checkpoint (the redo target) is kept whatever gc is told; returns the redo target's seq."""
    _setup(w, {f"d{d:02}/f{f:02}.txt": (f"A {d}/{f}\n".encode() * 50, False) for d in range(10) for f in range(10)})
    for session, count in (("old", 6), ("main", 12), ("side", 6)):
        for i in range(count):
            w.write(f"d{i % 10:02}/f{i % 7:02}.txt", f"{session} {i}\n" * 30)
            w.ok("snap", "--session", session, "-m", f"{session} {i}")
    w.write("notes.txt", "work the undo replaces\n")
    w.ok("undo", "3", "--yes")
    return max(_check_store(w))


def test_kill_gc_at_a_sweep_of_moments(tmp_path: Path, repo: Workdir) -> None:
    """`git rewind gc` killed at moments spread over its whole run, on a copy of the same repository each
    time: refs and notes stay consistent (fsck, list, every checkpoint's commit there with its note and
    restorable), the redo target survives, and gc run again completes with what an uncut gc keeps."""
    redo_seq = _gc_setup(repo)
    pristine = tmp_path / "pristine"
    shutil.copytree(repo.path, pristine, symlinks=True)
    repo.ok("gc", "--keep", "6")  # what gc keeps when nothing cuts it short
    expected = sorted(_check_store(repo))
    assert redo_seq in expected and len(expected) == 6 + (redo_seq not in expected[-6:])
    shutil.rmtree(repo.path)
    shutil.copytree(pristine, repo.path, symlinks=True)
    duration = _timed(repo, "gc", "--keep", "6")
    rounds, hits = 16, 0
    for round_ in range(rounds):
        shutil.rmtree(repo.path)
        shutil.copytree(pristine, repo.path, symlinks=True)
        proc = _start(repo, "gc", "--keep", "6")
        hits += _kill_at(proc, duration * round_ / rounds, whole_group=round_ % 2 == 0)
        items = _check_store(repo)
        assert redo_seq in items, "gc dropped the redo target"
        for seq in (min(items), max(items)):
            repo.git("cat-file", "-e", items[seq]["commit"])
            run = repo.rewind("undo", str(seq), "--dry-run")
            assert run.returncode == 0 and len(run.stderr.strip().splitlines()) <= 1, run.stderr
        run = repo.rewind("redo", "--dry-run")
        assert run.returncode == 0, run.stderr
        repo.ok("gc", "--keep", "6")
        assert sorted(_check_store(repo)) == expected
    assert hits >= 4, f"only {hits} of {rounds} kills landed inside gc ({duration:.2f}s)"


# the in-process writer ------------------------------------------------------------------------------

# A long-lived process writing checkpoints in process (objects.in_process, as the daemon does): every round
# changes files and takes a checkpoint (a whole scan, or the changed paths named), printing each seq.
IN_PROCESS_DRIVER = """
import os, sys
from git_rewind.base import objects
from git_rewind.base.repo import Repo
from git_rewind.store import store

objects.in_process(True)
repo = Repo.discover(sys.argv[1])
for i in range(1, 100000):
    named = [f"loop/f{(i + n) % 5}.txt" for n in range(3)]
    for rel in named:
        os.makedirs(os.path.join(repo.root, "loop"), exist_ok=True)
        with open(os.path.join(repo.root, rel), "w") as fh:
            fh.write(f"{os.getpid()} round {i} {rel}\\n")
    done = store.save(repo, store.Request(session="driver", message=f"loop {i}", paths=named if i % 2 else None))
    print(done.seq, flush=True)
"""


def test_kill_a_process_writing_in_process_at_random_moments(repo: Workdir, tmp_path: Path) -> None:
    """A process that writes its checkpoints in process, killed (SIGKILL) at random moments while it takes them
    one after the other, half the time with its process group (its long-lived `git update-ref` too): fsck clean,
    every checkpoint with its note, refs never moved halfway, no seq ever reused, and the next command works."""
    rng = random.Random(SEED + 27)
    _setup(repo, _version_a(rng))
    repo.ok("snap")
    driver = tmp_path / "driver.py"
    driver.write_text(IN_PROCESS_DRIVER)
    seen = 0  # the highest seq taken so far
    for round_ in range(stress.count(8, 3)):
        proc = subprocess.Popen([sys.executable, str(driver), str(repo.path)], cwd=repo.path, env=repo.env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        assert proc.stdout is not None
        first = proc.stdout.readline()  # writing in process from now on (pygit2 imported, one checkpoint taken)
        assert first.strip().isdigit(), proc.stderr.read() if proc.stderr else first
        assert int(first) > seen, "a seq was taken again"
        time.sleep(rng.uniform(0.0, 0.4))
        try:
            if round_ % 2:
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        printed = [int(line) for line in [first, *proc.stdout.read().split()] if line.strip()]
        proc.wait()
        _wait_group_gone(proc.pid)
        assert proc.returncode == -signal.SIGKILL, proc.stderr.read() if proc.stderr else proc.returncode
        assert printed == sorted(set(printed))
        items = _check_store(repo)  # fsck, every chain commit with its note, seqs unique and rising
        # Both refs moved together or not at all: the session's tip is a checkpoint the notes know, and each one
        # it printed is there.
        tip = repo.git("rev-parse", "refs/rewind/driver").strip()
        assert tip in {item["commit"] for item in items.values()}
        assert set(printed) <= set(items)
        assert min(printed) > seen
        _next_snap_is_exact(repo)
        seen = max(items) + 1  # the snap after the kill took one more


# a ref transaction torn between git's two lock renames --------------------------------------------------------

# `git update-ref --stdin` under strace, killed (SIGKILL) as it enters its second rename: the first ref of the
# transaction moved, the second still locked where it was. KILL_CALLER: the git-rewind that ran it is killed too
# (a kill of the whole process group), so nobody sees the failure; else it sees update-ref die and goes on.
TEARING_GIT = """#!/bin/sh
case " $* " in *" update-ref --stdin "*)
    strace -f -qq -o /dev/null -e trace=rename,renameat,renameat2 \\
        -e inject=rename,renameat,renameat2:signal=SIGKILL:when=2 {git} "$@"
    status=$?
    if [ $status -eq 137 ] && [ -n "$KILL_CALLER" ]; then kill -9 $PPID; fi
    exit $status
esac
exec {git} "$@"
"""


@pytest.mark.needs("strace")
@pytest.mark.parametrize("kill_caller", [False, True], ids=["git-killed", "group-killed"])
def test_a_checkpoint_whose_ref_transaction_is_torn_is_completed(repo: Workdir, tmp_path: Path,
                                                                 kill_caller: bool) -> None:
    """git's files backend moves the refs of one transaction one lock rename after the other. A kill between
    the two renames of a checkpoint (its note, its chain) never leaves a checkpoint without its note, and the
    transaction is whole again at once (its own git killed) or at the next write (the whole group killed)."""
    repo.write("a.txt", "one\n")
    repo.commit_all("A")
    first = repo.ok("snap", "-m", "first")
    assert first.startswith("#1")
    wrapper = tmp_path / "tearing-bin"
    wrapper.mkdir()
    (wrapper / "git").write_text(TEARING_GIT.replace("{git}", shutil.which("git") or "git"))
    (wrapper / "git").chmod(0o755)
    env = {**repo.env, "PATH": f"{wrapper}{os.pathsep}{repo.env.get('PATH', os.environ['PATH'])}"}
    if kill_caller:
        env["KILL_CALLER"] = "1"
    repo.write("a.txt", "two\n")
    run = subprocess.run([*REWIND, "snap", "-m", "second"], cwd=repo.path, env=env, capture_output=True, text=True)
    journal = repo.path / ".git" / "rewind" / "ref-moves"
    if kill_caller:
        assert run.returncode == -signal.SIGKILL, run
        assert journal.exists(), "the transaction was not written down before it ran"
        # Torn: the note moved, the chain did not (the note goes first); a reader sees a note beside no chain.
        assert (repo.path / ".git" / "refs" / "rewind").is_dir()
        assert os.path.exists(repo.path / ".git" / f"refs/rewind/{_session_of(repo)}.lock")
        items = _check_store(repo)
        assert [items[seq]["message"] for seq in sorted(items)] == ["first", "second"]
        repo.write("a.txt", "three\n")
        repo.ok("snap", "-m", "third")  # the next writer completes it first
    else:
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith("#2")
    assert not journal.exists()
    items = _check_store(repo)  # every chain commit with its note
    session = _session_of(repo)
    chain = repo.git("rev-list", "--first-parent", f"refs/rewind/{session}").split()
    by_commit = {item["commit"]: item for item in items.values()}
    messages = [by_commit[c]["message"] for c in chain]
    assert messages == (["third", "second", "first"] if kill_caller else ["second", "first"])
    second = next(c for c in chain if by_commit[c]["message"] == "second")
    assert repo.git("show", f"{second}:a.txt") == "two\n"
    assert not os.path.exists(repo.path / ".git" / f"refs/rewind/{session}.lock")
    _next_snap_is_exact(repo)


def _session_of(w: Workdir) -> str:
    refs = w.git("for-each-ref", "--format=%(refname)", "refs/rewind/").split()
    assert len(refs) == 1, refs
    return refs[0][len("refs/rewind/"):]
