"""faces/undocmd.py: `git rewind undo [ID] --yes` without click, answered by the work tree's daemon.

Every undo here is the real command in a real repository, against a real daemon (`git rewind daemon start`).
What the daemon answers must be what the command prints without it: the same undos on two identical
repositories, one with a daemon and one without, give the same stdout (commit ids aside), stderr, exit code
and files. The daemon's own count of the undos it ran (`daemon status --json`: `served`) proves which path
ran. Without an answer (no daemon, a killed one, another work tree, another installation) the undo runs in
the command's own process, with nothing said.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
from pathlib import Path

from helpers import daemon
from helpers.workdir import Run, Workdir

from git_rewind.faces import undocmd


def _start(w: Workdir, daemons: list[Workdir]) -> int:
    return daemon.start(w, daemons)


def _served(w: Workdir) -> int:
    return daemon.served(w, "undo")


def _repo(path: Path, env: dict[str, str]) -> Workdir:
    """A repository with two checkpoints (#1: the first state, #2: files edited, added, removed, an exec bit)."""
    path.mkdir()
    w = Workdir(path, env)
    w.git("init", "-q", "-b", "main")
    w.write(".gitignore", "*.log\n")
    w.write("src/app.py", "print('hello')\n")
    w.write("README.md", "# demo\n")
    w.write("run.sh", "#!/bin/sh\n", mode=0o644)
    w.git("add", "-A")
    w.git("commit", "-qm", "init")
    w.write("notes.txt", "untracked work\n")
    w.ok("snap", "-m", "first")
    w.write("src/app.py", "print('changed')\n")
    w.write("src/new.py", "new\n")
    (path / "README.md").unlink()
    os.chmod(path / "run.sh", 0o755)
    w.ok("snap", "-m", "second")
    w.write("src/app.py", "print('after')\n")
    return w


def _comparable(run: Run) -> tuple[int, str, str]:
    """RUN with the commit ids (which hold the time they were made) and times masked."""
    def mask(text: str) -> str:
        text = re.sub(r"\b[0-9a-f]{7,40}\b", "<id>", text)
        return re.sub(r"\b\d+ (second|minute)s? ago\b|just now", "<age>", text)

    return run.returncode, mask(run.stdout), mask(run.stderr)


def _files(w: Workdir) -> dict[str, tuple[bytes, bool]]:
    found = {}
    for base, dirs, names in os.walk(w.path):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            full = os.path.join(base, name)
            with open(full, "rb") as fh:
                found[os.path.relpath(full, w.path)] = (fh.read(), os.access(full, os.X_OK))
    return found


def test_the_daemon_answers_a_plain_undo_exactly_as_the_command_would(tmp_path: Path, env: dict[str, str],
                                                                      daemons: list[Workdir]) -> None:
    served, alone = _repo(tmp_path / "served", env), _repo(tmp_path / "alone", env)
    _start(served, daemons)
    steps = [("1", "--yes"), ("99", "--yes"), ("2", "-y", "--code"), ("2", "--yes"), ("--yes",), ("1", "--yes")]
    for count, args in enumerate(steps, 1):
        with_daemon, without = served.rewind("undo", *args), alone.rewind("undo", *args)
        assert _comparable(with_daemon) == _comparable(without), args
        assert _served(served) == count  # the daemon ran it (the command only printed its answer)
        assert _files(served) == _files(alone)
    assert _comparable(served.rewind("undo", "99", "--yes"))[0] == 1  # an error: its exit code, as without
    assert served.rewind("undo", "99", "--yes").stderr.startswith("error: unknown checkpoint: 99; git rewind list")


def test_the_safety_checkpoint_the_daemon_takes_holds_the_files_as_they_were(project: Workdir,
                                                                                 daemons: list[Workdir]) -> None:
    w = project
    w.ok("snap", "-m", "target")
    _start(w, daemons)
    w.write("src/app.py", "print('unsaved work')\n")
    w.write("brand-new.txt", "never checkpointed\n")
    run = w.rewind("undo", "1", "--yes")
    assert run.returncode == 0, run.stderr
    assert _served(w) == 1
    safety = re.search(r"safety checkpoint #(\d+) ([0-9a-f]+)", run.stdout)
    assert safety is not None, run.stdout
    assert w.git("show", f"{safety.group(2)}:src/app.py") == "print('unsaved work')\n"
    assert w.git("show", f"{safety.group(2)}:brand-new.txt") == "never checkpointed\n"
    assert (w.path / "src/app.py").read_text() == "print('hello')\n"
    assert not (w.path / "brand-new.txt").exists()
    assert "restored #1: 1 written, 1 removed (verified)" in run.stdout


def test_a_restore_the_daemon_writes_is_byte_exact_under_eol_settings(project: Workdir,
                                                                      daemons: list[Workdir]) -> None:
    """core.autocrlf and .gitattributes eol: the daemon writes what `git checkout` writes, byte for byte."""
    w = project
    w.git("config", "core.autocrlf", "true")
    w.write(".gitattributes", "*.crlf text eol=crlf\n*.lf text eol=lf\n*.bin -text\n")
    w.write("a.crlf", b"one\ntwo\n")
    w.write("b.lf", b"one\r\ntwo\r\n")
    w.write("c.txt", b"auto\nlines\n")
    w.write("d.bin", b"raw\r\nbytes\n")
    w.commit_all("eol")
    expected = {name: (w.path / name).read_bytes() for name in ("a.crlf", "b.lf", "c.txt", "d.bin")}
    for name in expected:  # git's own checkout is the oracle
        (w.path / name).unlink()
    w.git("checkout", "--", ".")
    expected = {name: (w.path / name).read_bytes() for name in expected}
    w.ok("snap", "-m", "target")
    _start(w, daemons)
    for name in expected:
        w.write(name, b"edited\n")
    run = w.rewind("undo", "1", "--yes")
    assert run.returncode == 0, run.stderr
    assert _served(w) == 1
    assert {name: (w.path / name).read_bytes() for name in expected} == expected
    assert expected["a.crlf"] == b"one\r\ntwo\r\n" and expected["b.lf"] == b"one\ntwo\n"


def test_without_a_running_daemon_the_undo_runs_in_the_command(project: Workdir, daemons: list[Workdir]) -> None:
    w = project
    w.ok("snap", "-m", "target")
    pid = _start(w, daemons)
    w.ok("daemon", "stop")
    assert daemon.wait_gone(pid)
    w.write("src/app.py", "print('edited')\n")
    run = w.rewind("undo", "1", "--yes")
    assert run.returncode == 0 and "git-rewind:" not in run.stderr  # nothing said of a daemon
    assert "restored #1: 1 written, 0 removed (verified)" in run.stdout
    pid = _start(w, daemons)
    os.kill(pid, signal.SIGKILL)  # its socket stays behind: nobody answers it
    assert daemon.wait_gone(pid)
    w.write("src/app.py", "print('edited again')\n")
    run = w.rewind("undo", "1", "--yes")
    assert run.returncode == 0 and "git-rewind:" not in run.stderr  # nothing said of a daemon
    assert (w.path / "src/app.py").read_text() == "print('hello')\n"


def _raw(w: Workdir, request: dict[str, object]) -> dict[str, object]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(daemon.HANG)
        sock.connect(str(w.path / ".git" / "rewind" / "daemon.sock"))
        sock.sendall(json.dumps(request).encode() + b"\n")
        answer: dict[str, object] = json.loads(sock.makefile("rb").readline())
    return answer


def test_the_daemon_leaves_an_undo_of_another_work_tree_or_installation_to_the_command(
        tmp_path: Path, env: dict[str, str], project: Workdir, daemons: list[Workdir]) -> None:
    from helpers.installed import daemon_fingerprint

    w = project
    w.ok("snap", "-m", "target")
    other = _repo(tmp_path / "other", env)
    pid = _start(w, daemons)
    request = {"op": "undo", "fingerprint": daemon_fingerprint(), "argv": ["undo", "1", "--yes"], "payload": "",
               "cwd": str(other.path), "env": other.env, "umask": 0o022, "parent": 1}
    answer = _raw(w, request)
    assert answer == {"fallback": f"another work tree ({os.path.realpath(other.path)})"}
    assert (other.path / "src/app.py").read_text() == "print('after')\n"  # nothing ran there
    assert _raw(w, {**request, "argv": ["undo", "1", "--dry-run"]}) == \
        {"fallback": "a request this daemon does not understand"}
    answer = _raw(w, {**request, "cwd": str(w.path), "fingerprint": "0.0.1 another installation"})
    assert answer == {"stopping": True, "why": "upgraded"}
    assert daemon.wait_gone(pid)
    w.write("src/app.py", "print('edited')\n")
    run = w.rewind("undo", "1", "--yes")
    assert run.returncode == 0 and "git-rewind:" not in run.stderr  # the command ran it, saying nothing of a daemon
    assert (w.path / "src/app.py").read_text() == "print('hello')\n"


def test_parse_takes_only_the_plain_scripted_form() -> None:
    assert undocmd.parse(["3", "--yes"]) == ("3",)
    assert undocmd.parse(["-y"]) == (None,)
    assert undocmd.parse(["3", "--code", "--yes"]) == ("3",)
    assert undocmd.parse(["3"]) is None
    assert undocmd.parse(["3", "--dry-run", "--yes"]) is None
    assert undocmd.parse(["3", "4", "--yes"]) is None
