"""hook/client.py: the hook as a thin client, answered by the work tree's daemon.

Every hook here runs the command `install` writes (`<python> -I -S …/git_rewind/hook/entry.py hook --agent
NAME`) as a real process, against a real daemon (`git rewind daemon start`) in a real repository. What the
daemon answers must be exactly what the hook process answers without it: the same events played on two
identical repositories, one with a daemon and one without, leave the same stdout and stderr, the same
checkpoint trees, notes and hook.log decisions. The daemon's own count of the hook calls it answered
(`daemon status --json`: `served`) proves which path ran. When the daemon cannot answer (another work tree,
an upgrade, SIGKILL, SIGSTOP), the hook runs in its own process, says why on stderr when something went
wrong, and still exits 0 within its bound.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import daemon, installed
from helpers.session import decisions
from helpers.workdir import Run, Workdir

from git_rewind.hook import client, hook

HANG = daemon.HANG
THIN = installed.hook_program()  # what the installed git-rewind writes at user and local scope, before `hook`


def _thin(w: Workdir, payload: dict[str, Any] | str, agent: str | None, env: dict[str, str] | None = None,
          cwd: Path | None = None, timeout: float = HANG, python: list[str] | None = None) -> Run:
    """One hook call through the installed command, as an agent makes it."""
    args = [*(python or THIN[:1]), *THIN[1:], "hook", *(("--agent", agent) if agent else ())]
    proc = subprocess.run(args, cwd=cwd or w.path, env={**w.env, **(env or {})}, capture_output=True, text=True,
                          input=payload if isinstance(payload, str) else json.dumps(payload), timeout=timeout)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def _start(w: Workdir, daemons: list[Workdir]) -> int:
    return daemon.start(w, daemons)


def _served(w: Workdir) -> int:
    return daemon.served(w, "hook")


def _repo(path: Path, env: dict[str, str]) -> Workdir:
    """A small repository whose commit is the same wherever it is made (fixed dates)."""
    path.mkdir()
    w = Workdir(path, {**env, "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"})
    w.git("init", "-q", "-b", "main")
    w.write(".gitignore", "*.log\n")
    w.write("src/app.py", "print('hello')\n")
    w.write("README.md", "# demo\n")
    w.git("add", "-A")
    w.git("commit", "-qm", "init")
    w.env = env
    w.write("notes.txt", "untracked work\n")
    return w


# The events each agent sends, as functions of the work tree (payload, then what the agent does after it).
BIG = "".join(f"line {i}: real work\n" for i in range(20))


def _claude(root: Path) -> list[tuple[dict[str, Any], str | None]]:
    base = {"session_id": "sess-claude", "cwd": str(root)}
    return [({**base, "hook_event_name": "SessionStart", "source": "startup"}, None),
            ({**base, "hook_event_name": "UserPromptSubmit", "prompt": "add a module", "prompt_id": "p1"}, None),
            ({**base, "hook_event_name": "PreToolUse", "tool_name": "Write", "tool_use_id": "t1",
              "tool_input": {"file_path": str(root / "src/mod.py"), "content": BIG}}, "src/mod.py"),
            ({**base, "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "t2",
              "tool_input": {"command": "make"}}, "build.txt"),
            ({**base, "hook_event_name": "Stop", "stop_hook_active": False}, None),
            ({**base, "hook_event_name": "SessionStart", "source": "resume"}, None)]


def _cursor(root: Path) -> list[tuple[dict[str, Any], str | None]]:
    base = {"conversation_id": "c0ffee00-1111-4222-8333-444455556666", "generation_id": "gen-1",
            "workspace_roots": [str(root)], "cursor_version": "1.7.0"}
    return [({**base, "hook_event_name": "beforeSubmitPrompt", "prompt": "add a module"}, None),
            ({**base, "hook_event_name": "preToolUse", "tool_name": "Write", "tool_use_id": "tu_1",
              "tool_input": {"file_path": str(root / "src/mod.py"), "contents": BIG}}, "src/mod.py"),
            ({**base, "hook_event_name": "beforeShellExecution", "command": "make", "cwd": str(root)}, "build.txt"),
            ({**base, "hook_event_name": "stop", "status": "completed"}, None)]


def _gemini(root: Path) -> list[tuple[dict[str, Any], str | None]]:
    base = {"session_id": "gem-1", "cwd": str(root), "timestamp": "2026-01-01T00:00:00Z"}
    return [({**base, "hook_event_name": "SessionStart", "source": "startup"}, None),
            ({**base, "hook_event_name": "BeforeAgent", "prompt": "add a module"}, None),
            ({**base, "hook_event_name": "BeforeTool", "tool_name": "write_file",
              "tool_input": {"file_path": str(root / "src/mod.py"), "content": BIG}}, "src/mod.py"),
            ({**base, "hook_event_name": "AfterTool", "tool_name": "run_shell_command",
              "tool_input": {"command": "make"}}, "build.txt"),
            ({**base, "hook_event_name": "AfterAgent", "prompt": "add a module", "prompt_response": "done"}, None)]


AGENTS = {"claude-code": (_claude, {"CLAUDECODE": "1"}), "cursor": (_cursor, {}),
          "gemini": (_gemini, {"GEMINI_SESSION_ID": "gem-1"})}


def _comparable(entries: list[dict[str, Any]], root: Path) -> list[Any]:
    """Decisions as logged, less their time and duration, with the work tree's path taken out."""
    # `daemon_said`: why the daemon, asked after a shell command, said the tree changed: only a daemon says it.
    return [json.loads(json.dumps({k: v for k, v in e.items() if k not in ("time", "ms", "daemon_said")})
                       .replace(str(root), "ROOT"))
            for e in entries]


def _chain(w: Workdir) -> list[tuple[str, dict[str, Any]]]:
    """(tree, note less its creation time, paths taken out) of every checkpoint, oldest first."""
    out = []
    for ref in sorted(w.git("for-each-ref", "--format=%(refname)", "refs/rewind/").split()):
        for commit in reversed(w.git("log", "--first-parent", "--format=%H", ref).split()):
            note = json.loads(w.git("notes", "--ref=rewind", "show", commit).replace(str(w.path), "ROOT"))
            note.pop("created", None)
            out.append((w.tree_of(commit), note))
    return out


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_the_daemon_answers_exactly_what_the_hook_process_would(tmp_path: Path, env: dict[str, str],
                                                                 daemons: list[Workdir], agent: str) -> None:
    events, agent_env = AGENTS[agent]
    served = _repo(tmp_path / "served", env)
    alone = _repo(tmp_path / "alone", env)
    _start(served, daemons)
    outputs: dict[str, list[tuple[str, str]]] = {"served": [], "alone": []}
    for name, w in (("served", served), ("alone", alone)):
        for payload, then in events(w.path):
            # The aggressive tier: the balanced one checkpoints after a shell command only while a daemon runs
            # (issue 27 item 4), which would tell the two apart for a reason other than who answers.
            run = _thin(w, payload, agent, {**agent_env, "CLAUDE_PROJECT_DIR": str(w.path),
                                            "GIT_REWIND_TIER": "aggressive"})
            assert run.returncode == 0
            outputs[name].append((run.stdout.replace(str(w.path), "ROOT"), run.stderr))
            if then:
                w.write(then, BIG)
    calls = len(events(served.path))
    assert _served(served) == calls  # every call answered by the daemon
    assert not (alone.path / ".git" / "rewind" / "daemon.sock").exists()
    assert outputs["served"] == outputs["alone"]
    if agent != "claude-code":
        assert all(out for out, _ in outputs["served"])  # these agents read JSON on stdout at every call
    else:
        assert outputs["served"][-1][0].startswith('{"hookSpecificOutput"')  # the resumed session's context
    assert _comparable(decisions(served), served.path) == _comparable(decisions(alone), alone.path)
    assert any(e["action"] == "checkpoint" for e in decisions(served))
    assert _chain(served) == _chain(alone)


def test_the_hooks_environment_decides_not_the_daemons(project: Workdir, daemons: list[Workdir]) -> None:
    """GIT_REWIND_TIER set only in the hook's environment changes what the daemon decides, for that call."""
    w = project
    pid = _start(w, daemons)
    cwd_before = os.readlink(f"/proc/{pid}/cwd")
    shell = {"session_id": "s1", "cwd": str(w.path), "hook_event_name": "PostToolUse", "tool_name": "Bash",
             "tool_input": {"command": "make"}}
    _thin(w, {**shell, "hook_event_name": "UserPromptSubmit", "prompt": "go"}, "claude-code")
    w.write("build.txt", "built\n")
    assert _thin(w, shell, "claude-code", {"GIT_REWIND_TIER": "minimal"}).returncode == 0
    assert decisions(w)[-1]["action"] == "skip"  # minimal: a shell command alone is no checkpoint
    assert _thin(w, shell, "claude-code").returncode == 0
    assert decisions(w)[-1]["action"] == "checkpoint"  # balanced, the daemon running: after each shell command
    w.write("build.txt", "built again\n")
    assert _thin(w, shell, "claude-code", {"GIT_REWIND_TIER": "minimal"}).returncode == 0
    assert decisions(w)[-1]["action"] == "skip"
    assert _served(w) == 4
    assert os.readlink(f"/proc/{pid}/cwd") == cwd_before  # the daemon's own directory, as before


def test_a_call_runs_under_its_own_environment_directory_and_umask_and_leaves_this_processs_as_they_were(
        project: Workdir, tmp_path: Path) -> None:
    """hook.run as the daemon runs it, in this process: the call's environment, directory and umask while it
    runs (its decision follows them), this process's own again after, even when the call fails."""
    w = project
    before = (dict(os.environ), os.getcwd(), os.umask(0o022))
    os.umask(before[2])
    payload = {"session_id": "s1", "cwd": str(w.path), "hook_event_name": "UserPromptSubmit", "prompt": "go"}
    call = hook.Call(json.dumps(payload).encode(), ["--agent", "claude-code"],
                     env={**w.env, "GIT_REWIND_TIER": "minimal"}, cwd=str(w.path / "src"), umask=0o077, parent=1)
    reply = hook.run(call, within=None)
    assert (reply.out, reply.err) == ([], [])
    assert decisions(w)[-1]["reason"].startswith("minimal")  # the call's environment decided
    assert (dict(os.environ), os.getcwd(), os.umask(0o022)) == before
    os.umask(before[2])
    broken = hook.Call(b"{not json", ["--agent", "claude-code"], env={**w.env}, cwd=str(w.path), umask=0o077)
    assert "hook skipped" in "".join(hook.run(broken).err)
    assert (dict(os.environ), os.getcwd(), os.umask(0o022)) == before
    os.umask(before[2])
    gone = hook.Call(b"{}", [], env={}, cwd=str(tmp_path / "gone"), umask=0o022)
    with pytest.raises(hook.Elsewhere):
        hook.run(gone)
    assert (dict(os.environ), os.getcwd(), os.umask(0o022)) == before
    os.umask(before[2])
    odd = hook.Call(b"{}", [], env={"A": "1", "B": "nul\0byte"}, cwd=str(w.path), umask=0o077)
    with pytest.raises(hook.Elsewhere):
        hook.run(odd)
    assert (dict(os.environ), os.getcwd(), os.umask(0o022)) == before
    os.umask(before[2])


def test_a_payload_for_another_repository_is_handled_there_by_the_hook_itself(
        project: Workdir, daemons: list[Workdir], tmp_path: Path, env: dict[str, str]) -> None:
    w = project
    _start(w, daemons)
    other = _repo(tmp_path / "other", env)
    run = _thin(w, {"session_id": "s1", "cwd": str(other.path), "hook_event_name": "UserPromptSubmit",
                    "prompt": "go"}, "claude-code")
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    assert _served(w) == 1  # asked, and said no
    assert decisions(w) == []
    assert decisions(other)[-1]["action"] == "checkpoint"
    assert other.git("for-each-ref", "refs/rewind/s1")


def _prompt(w: Workdir, text: str) -> dict[str, Any]:
    return {"session_id": "s1", "cwd": str(w.path), "hook_event_name": "UserPromptSubmit", "prompt": text}


def test_a_daemon_killed_mid_request_costs_one_line_and_loses_nothing(project: Workdir, daemons: list[Workdir],
                                                                     tmp_path: Path) -> None:
    w = project
    pid = _start(w, daemons)
    os.kill(pid, signal.SIGSTOP)  # it accepts (the kernel does) but cannot answer
    w.write("src/app.py", "print('changed')\n")
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps(_prompt(w, "go")))
    with payload.open("rb") as stdin:
        proc = subprocess.Popen([*THIN, "hook", "--agent", "claude-code"], cwd=w.path, env=w.env, stdin=stdin,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)  # the hook has sent its request and waits
    assert proc.poll() is None
    os.kill(pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=HANG)
    assert (proc.returncode, out) == (0, "")
    lines = err.splitlines()
    assert len(lines) == 1 and "daemon did not answer" in lines[0], err
    entry = decisions(w)[-1]
    assert entry["action"] == "checkpoint" and "daemon_failed" in entry
    assert w.tree_of("refs/rewind/s1") == w.add_all_tree()  # the change is in the checkpoint
    w.fsck()


def test_a_stopped_daemon_costs_the_answer_bound_then_the_hook_runs_itself(project: Workdir,
                                                                            daemons: list[Workdir]) -> None:
    w = project
    pid = _start(w, daemons)
    os.kill(pid, signal.SIGSTOP)
    try:
        w.write("src/app.py", "print('changed')\n")
        started = time.monotonic()
        run = _thin(w, _prompt(w, "go"), "claude-code", timeout=client.ANSWER_TIMEOUT + HANG)
        assert time.monotonic() - started < 30  # the agents' own hook timeout
        assert (run.returncode, run.stdout) == (0, "")
        assert run.stderr.count("\n") == 1 and f"did not answer within {client.ANSWER_TIMEOUT:g} s" in run.stderr
        assert w.tree_of("refs/rewind/s1") == w.add_all_tree()
    finally:
        os.kill(pid, signal.SIGCONT)
    # Continued, the daemon finds the hook gone and leaves its request alone: one decision, one checkpoint.
    for _ in range(3):  # a few turns of its loop: the waiting request's included
        assert _served(w) == 0
        time.sleep(0.2)
    assert [e["action"] for e in decisions(w)] == ["checkpoint"]
    w.fsck()


def test_another_installation_makes_the_daemon_step_down_and_the_hook_run_itself(
        project: Workdir, daemons: list[Workdir]) -> None:
    w = project
    pid = _start(w, daemons)
    sock_path = str(w.path / ".git" / "rewind" / "daemon.sock")
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(HANG)
        sock.connect(sock_path)
        request = {"op": "hook", "fingerprint": "0.0.1 another installation", "argv": [], "payload": "{}",
                   "cwd": str(w.path), "env": {}, "umask": 18, "parent": 1}
        sock.sendall(json.dumps(request).encode() + b"\n")
        answer = json.loads(sock.makefile("rb").readline())
    assert answer == {"stopping": True, "why": "upgraded"}
    assert daemon.wait_gone(pid)
    assert decisions(w) == []  # the daemon ran nothing of the other installation's call
    run = _thin(w, _prompt(w, "go"), "claude-code")
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    assert decisions(w)[-1]["action"] == "checkpoint"


def test_no_zombies_after_many_hooks_that_start_detached_processes(project: Workdir, daemons: list[Workdir],
                                                                   tmp_path: Path) -> None:
    """sync_auto starts a detached `git rewind push` at every turn end: in the daemon each one is reaped."""
    w = project
    pid = _start(w, daemons)
    sync = {"GIT_REWIND_SYNC_AUTO": "true", "GIT_REWIND_SYNC_REMOTE": "nowhere"}
    stop = {"session_id": "s1", "cwd": str(w.path), "hook_event_name": "Stop", "stop_hook_active": False}
    for i in range(6):
        w.write("src/app.py", f"print({i})\n")
        assert _thin(w, _prompt(w, f"step {i}"), "claude-code", sync).returncode == 0
        assert _thin(w, stop, "claude-code", sync).returncode == 0
    assert _served(w) == 12
    assert sum(1 for e in decisions(w) if e.get("sync") == "push started") == 6

    def children() -> list[tuple[int, str]]:
        """The daemon's children, less the `git update-ref --stdin` it keeps for its whole life to move refs
        (objects.in_process)."""
        found = []
        for name in os.listdir("/proc"):
            try:
                fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
                argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            except (OSError, IndexError):
                continue
            if int(fields[1]) == pid and not (fields[0] != "Z" and b"update-ref" in argv and b"--stdin" in argv):
                found.append((int(name), fields[0]))
        return found

    deadline = time.monotonic() + 2 * HANG
    while children() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert children() == []  # every push ended and was reaped: none left a zombie


def test_the_installed_command_runs_without_site_and_imports_only_the_client(project: Workdir,
                                                                             daemons: list[Workdir]) -> None:
    w = project
    _start(w, daemons)
    w.write("src/app.py", "print('changed')\n")
    run = _thin(w, _prompt(w, "go"), "claude-code", python=[THIN[0], "-X", "importtime"])
    assert run.returncode == 0
    assert _served(w) == 1
    loaded = {line.rsplit("|", 1)[1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}
    assert "git_rewind.hook.client" in loaded
    # Not even `os` (with stat, posixpath and _collections_abc: ~1.5 ms): daemonlink goes on posix alone.
    assert not loaded & {"site", "os", "__future__", "json", "re", "subprocess", "socket", "pygit2", "click",
                         "git_rewind.hook.hook", "git_rewind.base.repo", "git_rewind.base.daemon"}
    assert decisions(w)[-1]["action"] == "checkpoint"


def test_without_a_daemon_the_installed_command_is_the_hook_with_site_as_the_console_script_has_it(
        project: Workdir) -> None:
    w = project
    w.write("src/app.py", "print('changed')\n")
    run = _thin(w, _prompt(w, "go"), "claude-code")
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    assert decisions(w)[-1]["action"] == "checkpoint"
    top = str(Path(client.__file__).resolve().parents[2])
    shown = (f"import sys; sys.path.insert(0, {top!r}); from git_rewind.hook.client import with_site; "
             "with_site(); print(repr(sys.path))")
    for extra in ({}, {"PYTHONPATH": f"{w.path}/lib:{w.path}/vendor"}):  # -I ignores PYTHONPATH: given back
        env = {**w.env, **extra}
        thin = subprocess.run([THIN[0], "-I", "-S", "-c", shown], capture_output=True, text=True, env=env, check=True)
        plain = subprocess.run([THIN[0], "-c", "import sys; print(repr(sys.path))"], capture_output=True, text=True,
                               env=env, check=True, cwd="/")
        thin_path, plain_path = eval(thin.stdout), eval(plain.stdout)  # noqa: S307 - our own repr of a list
        assert [p for p in plain_path if p] == [p for p in thin_path if p not in ("", top)]


def test_git_rewind_hook_goes_through_the_same_client(project: Workdir, daemons: list[Workdir]) -> None:
    w = project
    _start(w, daemons)
    run = w.rewind("hook", "--agent", "claude-code", input=json.dumps(_prompt(w, "go")))
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    assert _served(w) == 1 and decisions(w)[-1]["action"] == "checkpoint"


def test_an_unusual_layout_is_left_to_the_hook_itself(project: Workdir, daemons: list[Workdir]) -> None:
    """GIT_DIR in the hook's environment: only git can say which repository that is; the client asks no daemon."""
    w = project
    _start(w, daemons)
    run = _thin(w, _prompt(w, "go"), "claude-code", {"GIT_DIR": str(w.path / ".git")})
    assert (run.returncode, run.stderr) == (0, "")
    assert _served(w) == 0 and decisions(w)[-1]["action"] == "checkpoint"


def test_the_console_script_and_the_thin_command_are_the_same_interpreter() -> None:
    """install's thin command runs the interpreter the installed git-rewind runs on, on that package's entry."""
    assert THIN[0] == installed.interpreter() and THIN[1:3] == ["-I", "-S"]
    entry = Path(THIN[3])
    assert entry.is_file() and entry.name == "entry.py" and (entry.parent / "client.py").is_file()
    assert entry.parent.name == Path(hook.__file__).parent.name == "hook"


def _traced_hook(w: Workdir, pid: int, payload: dict[str, Any], trace: Path) -> list[str]:
    """The system calls daemon PID makes while it answers one hook call (strace attached to it), one per line."""
    tracer = subprocess.Popen(["strace", "-f", "-o", str(trace), "-p", str(pid)], stderr=subprocess.PIPE, text=True)
    try:
        assert tracer.stderr is not None
        line = tracer.stderr.readline()  # "Process PID attached", or why it cannot be
        if "attached" not in line:
            pytest.skip(f"strace cannot attach to the daemon here: {line.strip()}")
        run = _thin(w, payload, "claude-code")
        assert run.returncode == 0 and run.stderr == "", run.stderr
    finally:
        tracer.send_signal(signal.SIGINT)  # detaches from the daemon, which runs on
        tracer.wait(timeout=HANG)
    return trace.read_text().splitlines()


@pytest.mark.needs("strace")
def test_a_checkpoint_the_daemon_answers_makes_no_folder_twice_and_reads_no_setting_again(
        tmp_path: Path, env: dict[str, str], daemons: list[Workdir]) -> None:
    w = _repo(tmp_path / "work", env)
    pid = _start(w, daemons)
    base = {"session_id": "lean", "cwd": str(w.path), "hook_event_name": "UserPromptSubmit"}
    for i in range(2):  # the first ones open what the daemon then knows (its pygit2 repository, the config)
        w.write("src/app.py", f"print({i})\n")
        assert _thin(w, {**base, "prompt": f"warm {i}"}, "claude-code").returncode == 0
    w.write("src/app.py", "print('traced')\n")
    calls = _traced_hook(w, pid, {**base, "prompt": "traced"}, tmp_path / "hook.trace")
    assert _served(w) == 3
    assert [e["action"] for e in decisions(w)][-1] == "checkpoint"
    # Folders that are there already are not made again at every step (they were, a dozen times a checkpoint).
    made_again = [c for c in calls if "mkdir(" in c and "EEXIST" in c]
    assert len(made_again) <= 1, made_again
    # The git config files the settings come from are read when they changed, not at each question.
    home_config = os.path.join(env["HOME"], ".gitconfig")
    assert [c for c in calls if f'openat(AT_FDCWD, "{home_config}"' in c] == []
    # The work tree's path is resolved once (the hook's Repo.find), not again for each comparison with the daemon's.
    parent = os.path.dirname(os.path.realpath(w.path))
    assert len([c for c in calls if f'"{parent}", ' in c and "AT_SYMLINK_NOFOLLOW" in c]) <= 1
    # A state file is read with one open and a read, never through a buffered file that asks if it is a terminal.
    assert [path for path in _asked_if_terminal(calls) if "/rewind/" in path or path.startswith("/proc/")] == []


def _asked_if_terminal(calls: list[str]) -> list[str]:
    """The files (by the path each was opened with) whose descriptor an isatty ioctl (TCGETS) was made on: what
    Python's buffered open() does, and a plain os.open and read does not."""
    paths: dict[str, str] = {}
    asked = []
    for call in calls:
        name, _, rest = call.partition(" ")[2].partition("(")
        if name == "openat" and '"' in rest:
            paths[rest.rpartition("= ")[2].strip()] = rest.split('"')[1]
        elif name == "ioctl" and "TCGETS" in rest:
            asked.append(paths.get(rest.split(",")[0], "?"))
    return asked
