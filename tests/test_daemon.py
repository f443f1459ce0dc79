"""The file-watcher daemon as a person and a hook meet it: `git rewind daemon start|stop|status`, hooks that
start it, and everything that can go wrong around it.

Whatever happens to the daemon (a filesystem without events, the machine's watch limit, SIGKILL, SIGSTOP
in the middle of a question, a second daemon, a socket left by a dead one, another installation asking),
every checkpoint is still git's own `add -A` tree, `status` says in one line what is going on, and no
command hangs: each is run with a bound (helpers.daemon.HANG, 10 s) that only a hang exceeds, never a
timing measure. The daemon's own count of how it answered (`daemon status --json`) proves which path, its
paths or the fallback scan, built a checkpoint. Every daemon a test starts is stopped after it (the
`daemons` fixture).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from helpers import daemon
from helpers.session import Agent, decisions
from helpers.workdir import REWIND, Run, Workdir

HANG = daemon.HANG


def _run(w: Workdir, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> Run:
    """`git rewind ARGS`, which must return before HANG seconds (a hang fails the test, not a slow machine)."""
    proc = subprocess.run([*REWIND, *args], cwd=cwd or w.path, env={**w.env, **(env or {})}, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=HANG)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def _snap(w: Workdir, cwd: Path | None = None, ref: str = "refs/rewind/manual") -> str:
    """A checkpoint, whose tree must be git's own `add -A`; returns it."""
    run = _run(w, "snap", "--allow-empty", "-m", "checkpoint", cwd=cwd)
    assert run.returncode == 0, run.stderr
    tree = w.git("rev-parse", f"{ref}^{{tree}}", cwd=cwd).strip()
    expected = Workdir(cwd, w.env).add_all_tree() if cwd else w.add_all_tree()
    assert tree == expected
    return tree


def _start(w: Workdir, daemons: list[Workdir], cwd: Path | None = None, env: dict[str, str] | None = None) -> int:
    daemons.append(Workdir(cwd, w.env) if cwd else w)
    run = _run(w, "daemon", "start", cwd=cwd, env=env)
    assert run.returncode == 0, run.stderr
    info = daemon.status(w, cwd)
    assert info["running"], info
    return int(info["pid"])


def _wait(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + HANG
    while not condition():
        assert time.monotonic() < deadline, f"still waiting after {HANG} s for {what}"
        time.sleep(0.05)


def _one_line_error(run: Run, *words: str) -> None:
    assert run.returncode != 0
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert all(word in lines[0] for word in words), run.stderr


def _status_line(w: Workdir) -> str:
    lines = [x for x in w.ok("status").splitlines() if x.startswith("daemon: ")]
    assert len(lines) == 1
    return lines[0]


@pytest.fixture
def tree(project: Workdir) -> Workdir:
    """`project` with a few more directories than a small watch limit allows."""
    for rel in ("lib/a/x.py", "lib/b/y.py", "docs/guide/intro.md"):
        project.write(rel, f"{rel}\n")
    return project


# the fast path, proved ---------------------------------------------------------------------------


def test_a_running_daemon_names_what_changed_and_the_checkpoint_is_gits_own(tree: Workdir,
                                                                           daemons: list[Workdir]) -> None:
    pid = _start(tree, daemons)
    _snap(tree)  # its first question: it scanned the whole tree when it started, so it names the changes
    assert daemon.status(tree)["last_full"] is None
    assert daemon.answered(tree) == {"changes": 1, "full": 0}
    tree.write("src/app.py", "print('changed')\n")
    tree.write("lib/c/new.py", "new\n")
    (tree.path / "notes.txt").unlink()
    _snap(tree)
    assert daemon.answered(tree) == {"changes": 2, "full": 0}
    line = _status_line(tree)
    assert f"(pid {pid})" in line and "running since" in line
    assert _run(tree, "daemon", "stop").stdout.strip() == "daemon stopped"
    assert daemon.wait_gone(pid)
    assert not (tree.path / ".git" / "rewind" / "daemon.sock").exists()
    assert _run(tree, "daemon", "stop").stdout.strip() == "no daemon was running"


# where it cannot run -----------------------------------------------------------------------------


def test_on_a_filesystem_without_events_start_fails_in_one_line_and_says_why(tree: Workdir,
                                                                              daemons: list[Workdir]) -> None:
    daemons.append(tree)
    run = _run(tree, "daemon", "start", env={"GIT_REWIND_DAEMON_FSTYPE": "nfs"})
    _one_line_error(run, "could not start", "nfs")
    info = daemon.status(tree)
    assert not info["running"] and "nfs" in info["reason"], info
    assert "not running (the work tree is on nfs" in _status_line(tree)
    assert daemon.pids_under(tree.path) == []
    tree.write("src/app.py", "print('changed')\n")
    _snap(tree)
    _snap(tree)


def test_at_the_watch_limit_start_fails_in_one_line_and_says_why(tree: Workdir, daemons: list[Workdir]) -> None:
    daemons.append(tree)
    run = _run(tree, "daemon", "start", env={"GIT_REWIND_DAEMON_MAX_WATCHES": "2"})
    _one_line_error(run, "could not start", "watch limit")
    info = daemon.status(tree)
    assert not info["running"] and "watch limit" in info["reason"], info
    assert "watch limit reached" in _status_line(tree)
    assert daemon.pids_under(tree.path) == []
    tree.write("lib/a/x.py", "changed\n")
    _snap(tree)
    # Once the limit is no longer reached, it starts.
    _start(tree, daemons)
    _snap(tree)
    tree.write("lib/b/y.py", "changed\n")
    _snap(tree)
    assert daemon.answered(tree)["changes"] == 2  # the snap right after the start too


# killed, stopped, stale ---------------------------------------------------------------------------


def test_a_stopped_then_killed_daemon_costs_a_full_scan_never_a_hang_and_start_replaces_it(
        tree: Workdir, daemons: list[Workdir]) -> None:
    pid = _start(tree, daemons)
    _snap(tree)
    os.kill(pid, signal.SIGSTOP)  # stuck in the middle of every question from now on
    try:
        tree.write("src/app.py", "print('while stopped')\n")
        _snap(tree)  # it waits half a second for an answer, then scans the whole tree itself
        info = daemon.status(tree)
        assert not info["running"] and info["reason"] == "not answering", info
        assert "not running (not answering)" in _status_line(tree)
    finally:
        os.kill(pid, signal.SIGKILL)
    assert daemon.wait_gone(pid)
    assert (tree.path / ".git" / "rewind" / "daemon.sock").exists()  # left behind, refusing connections
    tree.write("src/app.py", "print('after the kill')\n")
    _snap(tree)
    assert not daemon.status(tree)["running"]
    new = _start(tree, daemons)
    assert new != pid
    _snap(tree)
    tree.write("lib/a/x.py", "changed\n")
    _snap(tree)
    assert daemon.answered(tree) == {"changes": 2, "full": 0}


def test_start_and_stop_with_a_daemon_that_does_not_answer(tree: Workdir, daemons: list[Workdir]) -> None:
    """kill -STOP (a debugger, a suspended terminal): start says so instead of waiting 30 s, stop ends it."""
    pid = _start(tree, daemons)
    os.kill(pid, signal.SIGSTOP)
    try:
        _one_line_error(_run(tree, "daemon", "start"), f"pid {pid}", "does not answer")
        assert _run(tree, "daemon", "stop").stdout.strip() == "daemon stopped"
        assert daemon.wait_gone(pid)
    finally:
        daemon.reap(tree.path)
    _snap(tree)


def test_stop_never_signals_a_process_that_took_a_dead_daemons_pid(tree: Workdir, daemons: list[Workdir]) -> None:
    daemons.append(tree)
    other = subprocess.Popen(["sleep", "60"], cwd=tree.path)
    try:
        rewind = tree.path / ".git" / "rewind"
        rewind.mkdir(parents=True, exist_ok=True)
        (rewind / "daemon.json").write_text(json.dumps({"pid": other.pid, "started": "2026-01-01T00:00:00Z"}))
        assert _run(tree, "daemon", "stop").stdout.strip() == "no daemon was running"
        assert daemon.status(tree) == {"running": False}
        assert other.poll() is None
        _start(tree, daemons)  # and a hook or start does not take it for a running daemon
    finally:
        other.kill()
        other.wait()


def test_a_daemon_killed_while_the_scanner_waits_for_its_answer(tree: Workdir, daemons: list[Workdir]) -> None:
    pid = _start(tree, daemons)
    _snap(tree)
    os.kill(pid, signal.SIGSTOP)
    tree.write("src/app.py", "print('asked, then killed')\n")
    snap = subprocess.Popen([*REWIND, "snap", "--allow-empty"], cwd=tree.path, env=tree.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    time.sleep(0.2)  # most likely waiting for the answer now; either way the result is the same
    os.kill(pid, signal.SIGKILL)
    out, err = snap.communicate(timeout=HANG)
    assert snap.returncode == 0, err
    assert tree.tree_of("refs/rewind/manual") == tree.add_all_tree()
    assert daemon.wait_gone(pid)
    tree.fsck()


def test_a_socket_left_by_a_dead_daemon_is_passed_over_and_start_replaces_it(tree: Workdir,
                                                                              daemons: list[Workdir]) -> None:
    rewind = tree.path / ".git" / "rewind"
    rewind.mkdir(parents=True, exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(rewind / "daemon.sock"))
    stale.close()  # bound, never listened to, not removed: what a SIGKILLed daemon leaves
    (rewind / "daemon.json").write_text(json.dumps({"pid": 2**22 + 12345, "started": "2026-01-01T00:00:00Z"}))
    _snap(tree)
    assert daemon.status(tree) == {"running": False}
    assert _status_line(tree) == "daemon: not running"
    _start(tree, daemons)
    _snap(tree)
    tree.write("src/app.py", "print('changed')\n")
    _snap(tree)
    assert daemon.answered(tree)["changes"] == 2  # the snap right after the start too


def test_two_daemons_started_at_once_leave_exactly_one(tree: Workdir, daemons: list[Workdir]) -> None:
    daemons.append(tree)
    procs = [subprocess.Popen([*REWIND, "daemon", "run"], cwd=tree.path, env=tree.env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(2)]
    try:
        _wait(lambda: any(p.poll() is not None for p in procs), "one of two daemons to step down")
        loser = next(p for p in procs if p.poll() is not None)
        winner = next(p for p in procs if p is not loser)
        assert loser.returncode == 0
        _wait(lambda: daemon.status(tree)["running"], "the other daemon to answer")
        assert daemon.status(tree)["pid"] == winner.pid and winner.poll() is None
        assert daemon.pids_under(tree.path) == [winner.pid]
        _snap(tree)
        tree.write("src/app.py", "print('changed')\n")
        _snap(tree)
        assert daemon.answered(tree)["changes"] == 2  # the snap right after the start too
        assert _run(tree, "daemon", "stop").returncode == 0
        assert winner.wait(timeout=HANG) == 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


# when it exits by itself -------------------------------------------------------------------------


def test_an_idle_daemon_exits_and_the_next_checkpoint_scans_the_tree(tree: Workdir,
                                                                     daemons: list[Workdir]) -> None:
    pid = _start(tree, daemons, env={"GIT_REWIND_DAEMON_IDLE_MINUTES": "0.02"})  # 1.2 s without a question
    _snap(tree)
    assert daemon.wait_gone(pid)
    assert not (tree.path / ".git" / "rewind" / "daemon.sock").exists()
    assert daemon.status(tree) == {"running": False}
    tree.write("src/app.py", "print('changed')\n")
    _snap(tree)


def test_an_idle_time_of_zero_means_the_daemon_never_idles_out(tree: Workdir, daemons: list[Workdir]) -> None:
    """0 is "never", not "at once" (a daemon that exits as it starts would have hooks start one every 10 s)."""
    pid = _start(tree, daemons, env={"GIT_REWIND_DAEMON_IDLE_MINUTES": "0"})
    time.sleep(1.5)  # longer than the 1.2 s the idle test above waits out
    assert daemon.status(tree)["pid"] == pid
    tree.write("src/app.py", "print('changed')\n")
    _snap(tree)
    assert daemon.answered(tree)["changes"] == 1


def test_a_daemon_exits_when_its_work_tree_is_deleted(tree: Workdir, daemons: list[Workdir]) -> None:
    pid = _start(tree, daemons)
    _snap(tree)
    import shutil

    shutil.rmtree(tree.path)
    assert daemon.wait_gone(pid)


def test_a_daemon_steps_down_when_another_installation_asks(tree: Workdir, daemons: list[Workdir]) -> None:
    pid = _start(tree, daemons)
    _snap(tree)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(HANG)
        sock.connect(str(tree.path / ".git" / "rewind" / "daemon.sock"))
        sock.sendall(json.dumps({"op": "begin", "fingerprint": "0.0.1 another installation", "rules": ""}).encode()
                     + b"\n")
        answer = json.loads(sock.makefile("rb").readline())
    assert answer == {"stopping": True, "why": "upgraded"}
    assert daemon.wait_gone(pid)
    tree.write("src/app.py", "print('changed')\n")
    _snap(tree)


# started by a hook -------------------------------------------------------------------------------


def test_a_hook_in_a_repository_past_daemon_min_files_starts_it_detached(agent_project: Workdir,
                                                                         daemons: list[Workdir]) -> None:
    w = agent_project
    daemons.append(w)
    agent = Agent(w, env={"GIT_REWIND_DAEMON_MIN_FILES": "3", "GIT_REWIND_ANTI_SPAM_SECONDS": "0"})
    payload = json.dumps(agent.payload("UserPromptSubmit", prompt="go", prompt_id="p1"))
    hook = subprocess.Popen([*REWIND, "hook"], cwd=w.path, env={**w.env, **agent.env}, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Returns once the hook exits and nothing else holds its pipes: the daemon inherited none of them.
    out, err = hook.communicate(payload.encode(), timeout=HANG)
    assert (hook.returncode, err) == (0, b"")
    _wait(lambda: daemon.status(w)["running"], "the daemon the hook started")
    assert decisions(w)[-1]["daemon"] == "started"
    pid = daemon.status(w)["pid"]
    assert daemon.pids_under(w.path) == [pid] and pid != hook.pid
    # The next hooks see it running and start no other; it scanned the tree when it started, so both are
    # answered with the changed paths.
    for n in (2, 3):
        w.write("src/app.py", f"print('change {n}, which the daemon names')\n" * 5)
        assert "daemon" not in agent.send("UserPromptSubmit", prompt=f"prompt {n}", prompt_id=f"p{n}")
    assert daemon.answered(w) == {"changes": 2, "full": 0}
    assert w.tree_of("refs/rewind/sess-1") == w.add_all_tree()
    assert daemon.pids_under(w.path) == [pid]


def test_a_hook_below_daemon_min_files_starts_none(agent_project: Workdir, daemons: list[Workdir]) -> None:
    daemons.append(agent_project)
    agent = Agent(agent_project, env={"GIT_REWIND_DAEMON_MIN_FILES": "100"})
    agent.prompt("go")
    assert "daemon" not in decisions(agent_project)[-1]
    assert daemon.pids_under(agent_project.path) == []


# linked worktrees --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["linked", "w" * 120])
def test_a_linked_worktree_has_its_own_daemon(tree: Workdir, daemons: list[Workdir], tmp_path: Path,
                                              name: str) -> None:
    linked = tmp_path / name
    tree.git("worktree", "add", "-q", str(linked))
    gitdir = tree.path / ".git" / "worktrees" / name / "rewind"
    assert name == "linked" or len(os.fsencode(gitdir / "daemon.sock")) > 107
    pid = _start(tree, daemons, cwd=linked)
    assert (gitdir / "daemon.sock").exists()
    assert not (tree.path / ".git" / "rewind" / "daemon.sock").exists()
    assert daemon.state(tree.path / ".git" / "worktrees" / name)["pid"] == pid
    _snap(tree, cwd=linked)
    (linked / "src" / "app.py").write_text("print('in the linked worktree')\n")
    _snap(tree, cwd=linked)
    assert daemon.answered(tree, cwd=linked) == {"changes": 2, "full": 0}
    assert not daemon.status(tree)["running"]  # the main work tree has none of its own
    _snap(tree)
    main = _start(tree, daemons)
    assert main != pid and sorted(daemon.pids_under(tmp_path)) == sorted([main, pid])


# a restore under a running daemon ----------------------------------------------------------------


def test_an_undo_with_the_daemon_running_is_byte_exact_and_the_next_checkpoint_sees_it(
        tree: Workdir, daemons: list[Workdir]) -> None:
    _start(tree, daemons)
    _snap(tree)
    first = json.loads(tree.ok("list", "--json", "-n", "1"))[0]["seq"]
    state = tree.state()
    tree.write("src/app.py", "print('edited')\n")
    tree.write("lib/new/module.py", "new\n")
    (tree.path / "lib" / "a" / "x.py").unlink()
    (tree.path / "bin" / "run.sh").chmod(0o644)
    _snap(tree)
    run = _run(tree, "undo", str(first), "--yes")
    assert run.returncode == 0, run.stderr
    assert tree.state() == state
    _snap(tree)
    tree.write("docs/after.md", "after the undo\n")
    _snap(tree)
    assert daemon.answered(tree)["changes"] >= 2


def _served_undo(tree: Workdir, seq: int, trace: Path) -> tuple[list[str], Run]:
    """`undo SEQ --yes`, which the daemon must have run: (the git commands it started, by git's own trace;
    none at all leaves no trace file), the run."""
    served = daemon.served(tree, "undo")
    run = _run(tree, "undo", str(seq), "--yes", env={"GIT_TRACE2_EVENT": str(trace)})
    assert run.returncode == 0, run.stderr
    assert daemon.served(tree, "undo") == served + 1  # the daemon ran it
    return (_git_commands(trace) if trace.exists() else []), run


def test_the_daemon_asks_git_what_the_index_stages_again_only_when_head_or_the_index_moved(
        tree: Workdir, daemons: list[Workdir], tmp_path: Path) -> None:
    """An undo the daemon answers checks the person's index against the files it wrote (staging.Asked): git's
    `diff-index --cached` runs for the first one, and again only once HEAD or the index file changed; what
    the index stages is still named after the index changed."""
    _start(tree, daemons)
    _snap(tree)
    first = json.loads(tree.ok("list", "--json", "-n", "1"))[0]["seq"]
    time.sleep(2.1)  # the index written by the fixture's commit is no longer racy (staging.RACY_SECONDS)

    def undo(tag: str) -> tuple[list[str], str]:
        tree.write("src/app.py", f"print('{tag}')\n")
        commands, run = _served_undo(tree, first, tmp_path / f"{tag}.json")
        assert (tree.path / "src" / "app.py").read_text() == "print('hello')\n"
        return commands, run.stdout

    assert "diff-index" in undo("one")[0]
    again, out = undo("two")
    assert "diff-index" not in again and "stages" not in out, again
    tree.write("src/app.py", "print('staged')\n")
    tree.git("add", "src/app.py")
    time.sleep(2.1)
    moved, out = undo("three")
    assert "diff-index" in moved
    assert "the index still stages something else for a path this undo changed" in out, out
    assert "git restore --staged src/app.py" in out


def test_the_daemon_lists_the_ignored_files_again_only_when_a_name_changed_that_could_change_them(
        tree: Workdir, daemons: list[Workdir], tmp_path: Path) -> None:
    """An undo names the ignored files changed since its checkpoint (git's `ls-files -o -i`). The daemon keeps
    git's listing while no name in the tree is made, removed or renamed onto (its own restores' writes over the
    files it found excepted): files edited in place start no `ls-files`; a new ignored file, one renamed onto
    an ignored file, or one removed, has git list them again, and the warning says what git says."""
    hour_ago = time.time() - 3600
    for name in tree.git("ls-files", "-o", "-i", "--exclude-standard", "--directory").splitlines():
        os.utime(tree.path / name, (hour_ago, hour_ago))  # older than #1: a file of #1's second counts as changed
    _start(tree, daemons)
    _snap(tree)
    first = json.loads(tree.ok("list", "--json", "-n", "1"))[0]["seq"]
    time.sleep(2.1)  # the index written by the fixture's commit is no longer racy (staging.RACY_SECONDS)
    count = iter(range(100))

    def undo() -> tuple[list[str], str]:
        tag = next(count)
        tree.write("src/app.py", f"print('{tag}')\n")  # edited in place, as the undo puts it back
        tree.write("lib/a/x.py", f"{tag}\n")
        commands, run = _served_undo(tree, first, tmp_path / f"{tag}.json")
        assert "2 written, 0 removed (verified)" in run.stdout, run.stdout
        return commands, run.stderr

    commands, err = undo()
    assert "ls-files" in commands and "ignored files" not in err, (commands, err)
    for _ in range(2):
        commands, err = undo()
        assert "ls-files" not in commands and "ignored files" not in err, (commands, err)
    tree.write("new.log", "a new ignored file\n")
    commands, err = undo()
    assert "ls-files" in commands and "ignored files changed since #1, left as they are: new.log" in err, err
    commands, err = undo()
    assert "ls-files" not in commands and "left as they are: new.log" in err, (commands, err)
    tree.write("elsewhere.tmp", "renamed onto an ignored file\n")  # (*.tmp is not ignored: seen as changed)
    os.replace(tree.path / "elsewhere.tmp", tree.path / "debug.log")
    commands, err = undo()
    assert "ls-files" in commands and "left as they are: debug.log, new.log" in err, err
    (tree.path / "new.log").unlink()
    commands, err = undo()
    assert "ls-files" in commands and "left as they are: debug.log\n" in err, err
    assert "ls-files" not in undo()[0]


Answered = tuple[dict[str, int] | None, dict[str, int] | None]  # the daemon's counts before and after


def _undo_across_an_ignore_change(w: Workdir, daemons: list[Workdir] | None) -> tuple[Answered, dict[str, object]]:
    """Pitfall 2, with the daemon running (DAEMONS given) or not: #1 taken under rules that ignore node_modules/
    and .env, then the agent's .gitignore ignores build/ instead (the next checkpoint captures node_modules and
    .env, as those rules say), then a secret changed, one installed, build output and edits; undo to #1.
    What the safety checkpoint holds, what is on disk after, and which blobs reached the object database."""
    w.write("build/out.txt", "built\n")
    if daemons is not None:
        _start(w, daemons)
    _snap(w)
    w.write(".gitignore", "*.log\nbuild/\n")
    _snap(w)
    w.write(".env", "SECRET=2\n")
    w.write("node_modules/pkg/fresh.js", "TOKEN=fresh\n")
    w.write("build/out.txt", "rebuilt\n")
    w.write("src/app.py", "print('edited')\n")
    w.write("notes2.txt", "new work\n")
    user = w.user_state()[0]
    before = daemon.answered(w) if daemons is not None else None
    run = _run(w, "undo", "1", "--yes")
    assert run.returncode == 0, run.stderr
    assert w.user_state()[0] == user
    safety = json.loads(w.ok("list", "--json", "-n", "1", "--safety"))[0]
    assert safety["trigger"] == "pre-rewind"
    after = daemon.answered(w) if daemons is not None else None
    blobs = {}
    for text in ("SECRET=2\n", "TOKEN=fresh\n", "rebuilt\n"):
        oid = subprocess.run(["git", "hash-object", "--stdin"], input=text, capture_output=True, text=True,
                             cwd=w.path, env=w.env, check=True).stdout.strip()
        blobs[text] = subprocess.run(["git", "cat-file", "-e", oid], cwd=w.path, env=w.env).returncode == 0
    return (before, after), {"tree": w.tree_of(safety["commit"]),
            "captured": w.git("ls-tree", "-r", "--name-only", safety["commit"]).split(),
            "disk": {p: (w.path / p).read_text() for p in (".env", "node_modules/pkg/fresh.js",
                                                            "node_modules/pkg/index.js", "build/out.txt",
                                                            ".gitignore", "src/app.py")},
            "stored": blobs, "notes2": (w.path / "notes2.txt").exists()}


def test_an_undo_across_an_ignore_change_takes_the_daemons_tree_and_does_what_a_full_scan_does(
        project: Workdir, daemons: list[Workdir], tmp_path: Path) -> None:
    """The safety checkpoint of a restore whose target has other .gitignore rules is answered by the daemon
    (its changed paths read, none of them a path the target's rules ignore), and it is exactly what the full
    scan without a daemon records: nothing ignored under either rule set captured, stored or touched."""
    alone = Workdir(tmp_path / "alone", project.env)
    subprocess.run(["cp", "-a", str(project.path), str(alone.path)], check=True)
    (before, after), with_daemon = _undo_across_an_ignore_change(project, daemons)
    assert before is not None and after is not None
    assert after == {"changes": before["changes"] + 1, "full": before["full"]}  # read only what changed
    _, without = _undo_across_an_ignore_change(alone, None)
    assert with_daemon == without  # the same safety tree, the same disk, the same objects
    captured = with_daemon["captured"]
    assert isinstance(captured, list)
    assert "src/app.py" in captured and "notes2.txt" in captured
    assert not [p for p in captured if p == ".env" or p.startswith(("node_modules/", "build/"))]
    assert with_daemon["disk"] == {".env": "SECRET=2\n", "node_modules/pkg/fresh.js": "TOKEN=fresh\n",
                                   "node_modules/pkg/index.js": "ignored\n", "build/out.txt": "rebuilt\n",
                                   ".gitignore": "node_modules/\n*.log\n.env\n", "src/app.py": "print('hello')\n"}
    assert with_daemon["stored"] == {"SECRET=2\n": False, "TOKEN=fresh\n": False, "rebuilt\n": False}
    assert with_daemon["notes2"] is False  # #1 did not have it: removed (it is in the safety checkpoint)
    # The daemon goes on from a tree of the work tree's own rules: the next checkpoint is still git's own.
    _snap(project)
    project.write("src/after.py", "after\n")
    _snap(project)
    project.fsck()


def _git_commands(trace: Path) -> list[str]:
    """The git subcommands a traced command ran itself (GIT_TRACE2_EVENT), in order."""
    found = []
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        if event.get("event") == "cmd_name" and "/" not in event.get("sid", ""):  # not a git's own child
            found.append(event["name"])
    return found


def test_a_full_scan_the_daemon_was_not_told_of_leaves_its_next_answer_incremental(
        tree: Workdir, daemons: list[Workdir], tmp_path: Path) -> None:
    """A scan without the daemon (its socket away, as while a command could not reach it) checks its own tree
    against the person's index; the daemon's base stays checked too, so the next checkpoint it answers reads
    only what changed: no comparison of the whole tree with the person's index (diff-index) again."""
    _start(tree, daemons)
    _snap(tree)
    sock = tree.path / ".git" / "rewind" / "daemon.sock"
    aside = sock.with_name("daemon.sock.aside")
    sock.rename(aside)
    tree.write("lib/a/x.py", "changed without the daemon\n")
    _snap(tree)
    aside.rename(sock)
    tree.write("src/app.py", "print('with the daemon')\n")
    before = daemon.answered(tree)
    trace = tmp_path / "trace.json"
    run = _run(tree, "snap", "-m", "after", env={"GIT_TRACE2_EVENT": str(trace)})
    assert run.returncode == 0, run.stderr
    assert daemon.answered(tree) == {"changes": before["changes"] + 1, "full": before["full"]}
    assert tree.git("rev-parse", "refs/rewind/manual^{tree}").strip() == tree.add_all_tree()
    commands = _git_commands(trace)
    assert "fast-import" in commands and "diff-index" not in commands, commands
