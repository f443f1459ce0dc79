"""`git rewind watch`: a real program (a Python script) wrapped in a real repository, as a person runs an
agent with no hooks.

The wrapped script waits for the checkpoints it expects (it polls the session's ref with git) instead of
sleeping for a guessed time, so nothing here depends on the machine's speed; every wait is bounded by
HANG seconds, which only a hang exceeds. Checkpoints are read back with git: their notes (agent,
trigger), their trees (the oracle's `git add -A`), and never an ignored file.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import termios
import textwrap
import time
from pathlib import Path

import pytest
from helpers.oracle import oracle_tree
from helpers.procs import processes
from helpers.webserver import Served
from helpers.workdir import REWIND, Workdir

from git_rewind.base.repo import check_session
from git_rewind.faces import mcp
from git_rewind.watching.watch import session_name

HANG = 30.0
SESSION = "w1"
LIMIT = 50 * 1024 * 1024

# What every wrapped script starts with: wait(n) returns once the session holds N checkpoints.
PRELUDE = textwrap.dedent("""\
    import os, signal, subprocess, sys, time
    def count():
        out = subprocess.run(["git", "rev-list", "--count", "refs/rewind/" + os.environ["SESSION"]],
                             capture_output=True, text=True).stdout.strip()
        return int(out or 0)
    def wait(n):
        deadline = time.monotonic() + 20
        while count() < n:
            assert time.monotonic() < deadline, f"no checkpoint #{n}"
            time.sleep(0.02)
    def write(path, text):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)
    """)


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / f"prog{len(list(tmp_path.glob('prog*.py')))}.py"
    path.write_text(PRELUDE + textwrap.dedent(body))
    return str(path)


def _env(w: Workdir, settle: int = 200, **extra: str) -> dict[str, str]:
    return {**w.env, "SESSION": SESSION, "GIT_REWIND_WATCH_SETTLE_MS": str(settle), **extra}


def _watch(w: Workdir, *command: str, session: str | None = SESSION, env: dict[str, str] | None = None,
           cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    args = [*REWIND, "watch", *(["--session", session] if session else []), "--", *command]
    return subprocess.run(args, cwd=cwd or w.path, env=env or _env(w), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=HANG)


def _notes(w: Workdir, session: str = SESSION) -> list[dict[str, object]]:
    """The session's checkpoints' notes, oldest first."""
    commits = w.git("rev-list", "--reverse", "--first-parent", f"refs/rewind/{session}").split()
    return [json.loads(w.git("notes", "--ref=rewind", "show", c)) | {"commit": c} for c in commits]


def _files(w: Workdir, commit: object) -> set[str]:
    return set(w.git("ls-tree", "-r", "--name-only", str(commit)).split("\n")) - {""}


def _no_watch_left(w: Workdir) -> None:
    """No watch process and no cookie directory of one is left in W."""
    real = os.path.realpath(w.path)
    assert not [argv for _pid, argv, cwd in processes() if b"watch" in argv and cwd == real]
    rewind = w.path / ".git" / "rewind"
    assert not list(rewind.glob("watch-cookies-*")) if rewind.exists() else True


# wrapping a program --------------------------------------------------------------------------------------


def test_a_program_gets_a_checkpoint_at_start_one_each_time_the_tree_settles_and_one_at_exit(
        project: Workdir, tmp_path: Path) -> None:
    prog = _script(tmp_path, """\
        wait(1)                              # the start checkpoint holds the tree before any change of ours
        write("src/app.py", "print('changed')\\n")
        write("node_modules/pkg/new.js", "ignored\\n")
        write("trace.log", "ignored\\n")
        wait(2)                              # quiet for 200 ms: a checkpoint
        write("src/new.py", "new\\n")
        os.remove("README.md")
        sys.exit(3)
        """)
    before = oracle_tree(project, LIMIT)
    run = _watch(project, sys.executable, prog)
    assert run.returncode == 3, run.stderr
    notes = _notes(project)
    assert [n["agent"] for n in notes] == [os.path.basename(sys.executable)] * 3
    assert {n["trigger"] for n in notes} == {"watch"}
    assert project.tree_of(str(notes[0]["commit"])) == before
    assert notes[1]["paths"] == ["src/app.py"]
    assert notes[2]["message"] == f"{os.path.basename(sys.executable)} exited with 3"
    assert project.tree_of(str(notes[2]["commit"])) == oracle_tree(project, LIMIT)
    for note in notes:
        assert not {p for p in _files(project, note["commit"]) if p.endswith(".log") or "node_modules" in p}
    assert (f"3 checkpoints (#{notes[0]['seq']}–#{notes[2]['seq']}) in session {SESSION}; "
            f"git rewind undo {notes[0]['seq']} --agent-only takes back what {notes[0]['agent']} changed") in run.stderr
    assert notes[1]["origins"] == {"src/app.py": "agent"}  # the program's turn: undo --agent-only takes it back
    _no_watch_left(project)


def test_a_programs_first_edit_is_its_own_and_agent_only_takes_it_back(project: Workdir, tmp_path: Path) -> None:
    """A formatter writes at once, before a checkpoint taken while it starts could have read the file: the start
    checkpoint is taken before the program starts, so that edit is the program's and the hint's undo takes it
    back, keeping what the person changed."""
    w = project
    w.write("notes.txt", "the person's own edit\n")  # before watch: outside, and kept
    fmt = tmp_path / "fmt.sh"
    fmt.write_text("#!/bin/sh\nprintf 'formatted\\n' > src/app.py\nsleep 0.6\nprintf 'more\\n' > README.md\n")
    fmt.chmod(0o755)
    run = _watch(w, str(fmt))
    assert run.returncode == 0, run.stderr
    notes = _notes(w)
    start = notes[0]["seq"]
    assert w.ok("cat", str(start), "src/app.py") == "print('hello')\n"  # before the program's first write
    origins: dict[str, object] = {}
    for note in notes[1:]:
        origins.update(json.loads(json.dumps(note["origins"])))
    assert origins == {"src/app.py": "agent", "README.md": "agent"}
    hint = f"git rewind undo {start} --agent-only takes back what fmt.sh changed"
    assert hint in run.stderr
    w.ok("undo", str(start), "--agent-only", "--yes")
    assert (w.path / "src/app.py").read_text() == "print('hello')\n"
    assert (w.path / "README.md").read_text() == w.ok("cat", str(start), "README.md")
    assert (w.path / "notes.txt").read_text() == "the person's own edit\n"


def test_a_message_names_only_files_a_checkpoint_holds_not_an_editors_passing_temporary(
        project: Workdir, tmp_path: Path) -> None:
    """`sed -i` writes a temporary file beside the file and renames it over: the temporary came and went between
    two looks, and no checkpoint names it."""
    w = project
    prog = _script(tmp_path, """\
        wait(1)
        subprocess.run(["sed", "-i", "s/hello/bonjour/", "src/app.py"], check=True)
        wait(2)
        os.remove("README.md")
        wait(3)
        """)
    run = _watch(w, sys.executable, prog)
    assert run.returncode == 0, run.stderr
    program = os.path.basename(sys.executable)
    messages = [str(n["message"]) for n in _notes(w)][1:]
    assert messages == [f"{program} changed src/app.py", f"{program} changed README.md"]  # a deletion is named


def test_a_program_killed_by_sigkill_is_exit_137_as_a_shell_says(project: Workdir) -> None:
    run = _watch(project, "sh", "-c", "echo x > killed.txt; kill -9 $$")
    assert (run.returncode, run.stderr.count("Traceback")) == (137, 0), run.stderr
    last = _notes(project)[-1]
    assert last["message"] == "sh killed by SIGKILL" and "killed.txt" in _files(project, last["commit"])


@pytest.mark.parametrize("code", [0, 1, 42])
def test_the_exit_status_is_the_programs(project: Workdir, code: int) -> None:
    assert _watch(project, sys.executable, "-c", f"import sys; sys.exit({code})").returncode == code


def test_options_after_the_double_dash_are_the_programs(project: Workdir) -> None:
    run = _watch(project, sys.executable, "-c", "import sys; print(sys.argv[1:])", "--model", "x", "--session",
                 "y", "--")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "['--model', 'x', '--session', 'y', '--']\n"


def test_a_program_killed_by_a_signal_still_gets_its_last_checkpoint_and_the_signal_is_passed_on(
        project: Workdir, tmp_path: Path) -> None:
    prog = _script(tmp_path, """\
        wait(1)
        write("killed.txt", "last words\\n")
        os.kill(os.getpid(), signal.SIGTERM)
        """)
    run = _watch(project, sys.executable, prog)
    assert run.returncode == -signal.SIGTERM
    last = _notes(project)[-1]
    assert last["message"] == f"{os.path.basename(sys.executable)} killed by SIGTERM"
    assert "killed.txt" in _files(project, last["commit"])
    _no_watch_left(project)


def test_a_signal_sent_to_watch_reaches_the_program_once(project: Workdir, tmp_path: Path) -> None:
    prog = _script(tmp_path, """\
        got = []
        def on_term(signo, frame):
            got.append(signo)
        signal.signal(signal.SIGTERM, on_term)
        wait(1)
        print("ready", flush=True)
        deadline = time.monotonic() + 20
        while not got and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)                      # a second copy would come now
        write("handled.txt", f"{len(got)}\\n")
        sys.exit(7)
        """)
    proc = subprocess.Popen([*REWIND, "watch", "--session", SESSION, "--", sys.executable, prog], cwd=project.path,
                            env=_env(project), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 7, err
    assert (project.path / "handled.txt").read_text() == "1\n"
    assert "handled.txt" in _files(project, _notes(project)[-1]["commit"])


# the terminal ---------------------------------------------------------------------------------------------


def _on_terminal(args: list[str], cwd: Path, env: dict[str, str],
                 typing: list[tuple[bytes, bytes]]) -> tuple[int, str]:
    """Run ARGS as the session leader of a new pseudo-terminal (its controlling terminal, so the terminal's
    line discipline sends Ctrl-C to the foreground process group, as a person's terminal does); for each
    (WHEN, KEYS) of TYPING in turn, type KEYS once WHEN is shown."""
    controller, terminal = os.openpty()

    def controlling() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=terminal, stdout=terminal, stderr=terminal,
                            preexec_fn=controlling, close_fds=True)
    os.close(terminal)
    shown, pending = b"", list(typing)
    deadline = time.monotonic() + HANG
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 0.1)
            if not ready:
                continue
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: every holder of the terminal closed it
                break
            if not chunk:
                break
            shown += chunk
            if pending and pending[0][0] in shown:
                os.write(controller, pending.pop(0)[1])
        else:
            proc.kill()
            raise AssertionError(f"no end in {HANG} s; shown: {shown!r}")
    finally:
        os.close(controller)
    return proc.wait(timeout=HANG), shown.replace(b"\r\n", b"\n").decode(errors="replace")


TERMINAL_PROG = """\
    import termios
    ints = []
    signal.signal(signal.SIGINT, lambda signo, frame: ints.append(signo))
    wait(1)
    fg = os.tcgetpgrp(0) == os.getpgrp()
    print(f"tty {os.isatty(0)} {os.isatty(1)} {os.isatty(2)} foreground {fg}", flush=True)
    print(f"read {input('your name? ')!r}", flush=True)
    print("press Ctrl-C", flush=True)
    deadline = time.monotonic() + 20
    while not ints and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.5)                          # a second copy (git relaying it, watch relaying it) would come now
    print(f"interrupted {len(ints)} time(s)", flush=True)
    sys.exit(5)
    """


@pytest.mark.parametrize("through_git", [False, True], ids=["git-rewind", "git rewind"])
def test_the_program_has_the_terminal_and_ctrl_c_reaches_it_once(project: Workdir, tmp_path: Path,
                                                                 through_git: bool) -> None:
    prog = _script(tmp_path, TERMINAL_PROG)
    env = {**_env(project), "TERM": "dumb"}
    if through_git:  # git runs git-rewind as its child and relays its own Ctrl-C to it
        env["PATH"] = os.path.dirname(REWIND[0]) + os.pathsep + env["PATH"] if len(REWIND) == 1 else env["PATH"]
        if len(REWIND) != 1:
            pytest.fail("git rewind needs the git-rewind script on PATH (pip install -e .)")
        args = ["git", "rewind", "watch", "--session", SESSION, "--", sys.executable, prog]
    else:
        args = [*REWIND, "watch", "--session", SESSION, "--", sys.executable, prog]
    code, shown = _on_terminal(args, project.path, env, [(b"your name? ", b"ada\r"), (b"press Ctrl-C", b"\x03")])
    assert "tty True True True foreground True" in shown
    assert "read 'ada'" in shown
    assert "interrupted 1 time(s)" in shown
    # The program's status; git itself, as for any of its external commands, waits for its child after a
    # Ctrl-C and then dies of the signal it got.
    assert code == (-signal.SIGINT if through_git else 5), shown


# run alone -------------------------------------------------------------------------------------------------


def test_run_alone_it_checkpoints_what_changes_until_ctrl_c(project: Workdir) -> None:
    proc = subprocess.Popen([*REWIND, "watch", "--session", SESSION], cwd=project.path, env=_env(project),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None and proc.stdout is not None
    assert "Ctrl-C stops" in proc.stderr.readline()
    project.write("src/app.py", "print('by hand')\n")
    assert proc.stdout.readline().startswith("#1 watch start")
    assert proc.stdout.readline().startswith("#2 watch changed src/app.py")
    project.write("later.txt", "x\n")
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 0, err
    notes = _notes(project)
    assert {n["agent"] for n in notes} == {"watch"}
    assert project.tree_of(str(notes[-1]["commit"])) == oracle_tree(project, LIMIT)
    assert notes[1]["origins"] == {"src/app.py": "outside"}  # no program: what changes is the person's
    _no_watch_left(project)


# what cannot start: nothing left behind ---------------------------------------------------------------------


def _nothing_left(w: Workdir) -> None:
    assert w.git("for-each-ref", "refs/rewind", "refs/notes") == ""
    assert not (w.path / ".git" / "rewind").exists()
    _no_watch_left(w)


def test_a_program_that_does_not_exist_exits_127_and_leaves_nothing(project: Workdir) -> None:
    run = _watch(project, "no-such-program-xyz", "--flag")
    assert run.returncode == 127
    assert run.stderr == "git rewind watch: no-such-program-xyz: command not found\n"
    run = _watch(project, "./missing.sh")
    assert (run.returncode, run.stderr) == (127, "git rewind watch: ./missing.sh: no such file\n")
    _nothing_left(project)


def test_a_program_that_cannot_run_exits_126_and_leaves_nothing(project: Workdir) -> None:
    project.write("plain.sh", "echo hi\n", mode=0o644)
    run = _watch(project, "./plain.sh")
    assert (run.returncode, run.stderr) == (126, "git rewind watch: ./plain.sh: permission denied (not executable)\n")
    run = _watch(project, "./src")
    assert (run.returncode, run.stderr) == (126, "git rewind watch: ./src: is a directory\n")
    _nothing_left(project)
    project.write("garbage.bin", b"\x7fELF\x00garbage", mode=0o755)  # executable bit, but no program the kernel runs
    run = _watch(project, "./garbage.bin")
    assert run.returncode == 126, run.stderr
    assert run.stderr.startswith("git rewind watch: ./garbage.bin: ")
    # Only the kernel can say so, after the start checkpoint: that one stays (the tree as it was), no turn is open.
    assert [c["message"] for c in json.loads(project.ok("list", "--json"))] == ["watch start: ./garbage.bin"]
    assert not list((project.path / ".git" / "rewind").glob("turns/*.json"))
    _no_watch_left(project)


def test_outside_a_repository_or_with_a_bad_session_watch_fails_with_125_before_the_program_runs(
        project: Workdir, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    marker = tmp_path / "ran"
    touch = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    run = _watch(project, *touch, cwd=outside)
    assert run.returncode == 125
    assert "not a git repository" in run.stderr and run.stderr.count("\n") == 1
    run = _watch(project, *touch, session="../bad")
    assert (run.returncode, run.stderr.count("\n")) == (125, 1)
    assert "invalid session name" in run.stderr
    run = _watch(project, *touch, env=_env(project, settle=0))
    assert (run.returncode, run.stderr) == (125, "git rewind watch: GIT_REWIND_WATCH_SETTLE_MS: must be at least 1: "
                                                  "'0'\n")
    for args in (["--session"], ["--sesion", "x", "--", *touch]):
        run = subprocess.run([*REWIND, "watch", *args], cwd=project.path, env=_env(project), capture_output=True,
                             text=True, timeout=HANG)
        assert run.returncode == 125 and run.stderr.startswith(("Error: ", "Usage: git rewind watch")), run.stderr
    assert not marker.exists()
    _nothing_left(project)


# a tree that goes, never settles, or cannot be watched --------------------------------------------------------


@pytest.mark.parametrize("what", ["git directory", "work tree"])
def test_a_repository_that_disappears_stops_the_watch_not_the_program(repo: Workdir, tmp_path: Path,
                                                                      what: str) -> None:
    repo.write("a.txt", "a\n")
    repo.commit_all()
    gone = ".git" if what == "git directory" else ""
    prog = _script(tmp_path, f"""\
        import shutil
        wait(1)
        here = os.getcwd()
        doomed = os.path.join(here, {gone!r}) if {gone!r} else here
        while os.path.exists(doomed):        # as rm -rf again: watch may write in .git meanwhile
            shutil.rmtree(doomed, ignore_errors=True)
        time.sleep(0.5)
        if {gone!r}:                          # the work tree is still there: a change after .git went
            write("after.txt", "x\\n")
        print("still running", flush=True)
        sys.exit(4)
        """)
    run = _watch(repo, sys.executable, prog)
    assert run.returncode == 4, run.stderr
    assert run.stdout == "still running\n"
    lines = [line for line in run.stderr.splitlines() if "no longer" in line]
    assert lines == [f"git rewind watch: {repo.path} is no longer a git work tree (removed or moved); "
                     f"no longer watching ({os.path.basename(sys.executable)} runs on)"]
    assert "Traceback" not in run.stderr
    assert not (repo.path / ".git").exists() if what == "git directory" else not repo.path.exists()


def test_run_alone_it_ends_when_the_repository_goes(project: Workdir) -> None:
    proc = subprocess.Popen([*REWIND, "watch", "--session", SESSION], cwd=project.path, env=_env(project),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("#1 watch start")
    import shutil

    shutil.rmtree(project.path / ".git")
    _out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 1
    assert f"git rewind watch: {project.path} is no longer a git work tree (removed or moved); no longer watching\n" \
        in err


def test_a_tree_that_never_settles_is_checkpointed_all_the_same(project: Workdir, tmp_path: Path) -> None:
    prog = _script(tmp_path, """\
        wait(1)
        i = 0
        while count() < 3:                   # 20 × 50 ms of unbroken writes: a checkpoint without a pause
            i += 1
            write("busy.txt", f"{i}\\n")
            time.sleep(0.01)
        """)
    run = _watch(project, sys.executable, prog, env=_env(project, settle=50))
    assert run.returncode == 0, run.stderr
    assert len(_notes(project)) >= 3


def test_without_file_events_it_looks_for_changes_on_a_timer(project: Workdir, tmp_path: Path) -> None:
    prog = _script(tmp_path, """\
        wait(1)
        write("src/polled.py", "x\\n")
        wait(2)                              # found by a look every 20 × 50 ms
        """)
    run = _watch(project, sys.executable, prog, env=_env(project, settle=50, GIT_REWIND_DAEMON_MAX_WATCHES="1"))
    assert run.returncode == 0, run.stderr
    assert "inotify watch limit reached (1 watches); looking for changes every 1 s instead" in run.stderr
    assert _notes(project)[1]["paths"] == ["src/polled.py"]
    _no_watch_left(project)


def test_a_program_that_only_touches_ignored_files_gets_no_checkpoint_for_them(project: Workdir,
                                                                               tmp_path: Path) -> None:
    prog = _script(tmp_path, """\
        wait(1)
        for i in range(5):
            write(f"node_modules/dep/{i}.js", "x\\n")
            write("build.log", f"{i}\\n")
            write(".env", f"SECRET={i}\\n")
            time.sleep(0.3)
        """)
    run = _watch(project, sys.executable, prog)
    assert run.returncode == 0, run.stderr
    notes = _notes(project)
    assert len(notes) == 1, notes
    assert not {p for p in _files(project, notes[0]["commit"]) if p.endswith((".log", ".env"))
                or p.startswith("node_modules/")}


def test_a_checkpoint_message_names_only_the_files_it_holds(project: Workdir, tmp_path: Path) -> None:
    """An ignored file changed with a kept one (Aider's .aider.chat.history.md beside its edit) is not named."""
    prog = _script(tmp_path, """\
        wait(1)
        write("build.log", "x\\n")
        write("src/new.py", "print(1)\\n")
        wait(2)
        """)
    run = _watch(project, sys.executable, prog)
    assert run.returncode == 0, run.stderr
    settled = _notes(project)[1]
    assert "src/new.py" in str(settled["message"]) and "build.log" not in str(settled["message"]), settled
    assert "build.log" not in _files(project, settled["commit"])


def test_in_a_large_repository_it_starts_the_daemon_as_hooks_do_with_signals_it_can_be_stopped_by(
        project: Workdir, daemons: list[Workdir]) -> None:
    daemons.append(project)
    run = _watch(project, sys.executable, "-c", "pass", env=_env(project, GIT_REWIND_DAEMON="on"))
    assert run.returncode == 0, run.stderr
    deadline = time.monotonic() + HANG
    while not (info := json.loads(project.ok("daemon", "status", "--json")))["running"]:
        assert time.monotonic() < deadline, info
        time.sleep(0.05)
    status = Path(f"/proc/{info['pid']}/status").read_text()
    assert "SigBlk:\t0000000000000000" in status  # watch's blocked signals are not the daemon's


def test_a_directory_no_longer_ignored_is_watched_from_then_on(project: Workdir, tmp_path: Path) -> None:
    prog = _script(tmp_path, """\
        wait(1)
        write(".gitignore", "*.log\\n.env\\n")   # node_modules/ is no longer ignored
        wait(2)
        write("node_modules/pkg/new.js", "now tracked\\n")
        wait(3)                              # seen by the watcher: a checkpoint once quiet
        time.sleep(1)
        """)
    run = _watch(project, sys.executable, prog)
    assert run.returncode == 0, run.stderr
    notes = _notes(project)
    assert "node_modules/pkg/index.js" in _files(project, notes[1]["commit"])
    assert notes[2]["paths"] == ["node_modules/pkg/new.js"]


# the rest of git rewind with a program's name as the agent ---------------------------------------------------


def test_checkpoints_of_an_unknown_program_work_with_list_show_status_undo_mcp_and_web(
        project: Workdir, tmp_path: Path, git_environ: dict[str, str]) -> None:
    prog = _script(tmp_path, """\
        wait(1)
        write("src/app.py", "print('by the program')\\n")
        """)
    project.write("notes.txt", "the person's own work\n")
    assert _watch(project, sys.executable, prog).returncode == 0
    agent = os.path.basename(sys.executable)
    assert agent in project.ok("list")
    shown = json.loads(project.ok("show", "@", "--json"))
    assert shown["agent"] == agent and shown["trigger"] == "watch"
    assert project.rewind("status").returncode == 0
    tools = mcp.Tools(str(project.path), None)
    assert [c["agent"] for c in tools.list_checkpoints()[1]["checkpoints"]] == [agent, agent]
    assert tools.show("@")[1]["agent"] == agent
    server = Served(project, "--read-only")
    try:
        assert [i["agent"] for i in server.get("/api/checkpoints")["items"]] == [agent, agent]
        assert server.request("GET", "/api/checkpoints/@").status == 200
    finally:
        server.stop()
    run = project.rewind("undo", "--conversation", "@~1", "--yes")
    assert run.returncode == 1
    assert f"has no conversation to rewind (taken by {agent}); use --code" in run.stderr
    start = _notes(project)[0]["seq"]
    undone = project.rewind("undo", str(start), "--agent-only", "--yes")
    assert undone.returncode == 0, undone.stderr
    assert (project.path / "src/app.py").read_text() == "print('hello')\n"
    assert (project.path / "notes.txt").read_text() == "the person's own work\n"


def test_a_generated_session_names_the_program_and_the_time_and_is_a_valid_session() -> None:
    assert session_name("/usr/bin/python3.11", 0) == "watch-python3.11-19700101-000000"
    assert session_name("aider", 86400 + 61) == "watch-aider-19700102-000101"
    for odd in ("..", "a b!c", "-x-", ".hidden", None, "é" * 50):
        assert check_session(session_name(odd, 0)) == session_name(odd, 0)
