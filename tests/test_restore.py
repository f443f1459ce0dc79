"""`git rewind undo` / `redo`: back to any checkpoint, and back again, losing nothing."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import time

from helpers.workdir import REWIND, Workdir


def _notes(w: Workdir) -> list[dict]:
    return json.loads(w.ok("list", "--json", "-n", "0"))


def test_undo_restores_exact_tree_after_a_safety_checkpoint(project: Workdir) -> None:
    project.ok("snap", "-m", "good")
    good = project.state()
    before_user = project.user_state()
    project.write("src/app.py", "broken\n")
    project.write("src/extra/deep/new.py", "new\n")
    os.unlink(project.path / "notes.txt")
    (project.path / "bin" / "run.sh").chmod(0o644)
    os.symlink("README.md", project.path / "link")
    broken = project.state()
    out = project.ok("undo", "1", "--yes")
    assert out.splitlines()[0].startswith("safety checkpoint #2 ")
    assert project.state() == good
    assert not (project.path / "src" / "extra").exists()  # emptied directories go too
    notes = _notes(project)
    safety = notes[0]
    assert safety["seq"] == 2 and safety["trigger"] == "pre-rewind" and safety["rewind"]["to"] == 1
    assert project.tree_of(safety["commit"]) != project.tree_of(notes[1]["commit"])
    assert project.user_state()[:3] == before_user[:3]
    # the safety checkpoint holds the broken state: redo brings it back
    out = project.ok("redo")
    assert "restored #2" in out
    assert project.state() == broken
    project.fsck()


def test_undo_defaults_to_newest_and_accepts_every_id_form(project: Workdir) -> None:
    project.ok("snap")
    project.write("notes.txt", "two\n")
    project.ok("snap")
    project.write("notes.txt", "three\n")
    assert "restored #2" in project.ok("undo", "--yes")
    assert (project.path / "notes.txt").read_text() == "two\n"
    first = _notes(project)[-1]["commit"]
    assert "restored #1" in project.ok("undo", first[:8], "--yes")
    assert (project.path / "notes.txt").read_text() == "untracked work\n"
    # @ is the safety checkpoint just taken (#4, "two"); @~1 the one before it (#3, "three")
    assert "restored #3" in project.ok("undo", "@~1", "--yes")
    assert (project.path / "notes.txt").read_text() == "three\n"
    assert "restored #4" in project.ok("undo", "latest~1", "--yes")
    assert (project.path / "notes.txt").read_text() == "two\n"


def test_dry_run_changes_nothing(project: Workdir) -> None:
    project.ok("snap")
    project.write("src/app.py", "changed\n")
    project.write("new.txt", "new\n")
    state = project.state()
    refs = project.git("for-each-ref")
    out = project.ok("undo", "1", "--dry-run")
    assert "write   src/app.py" in out and "remove  new.txt" in out
    assert project.state() == state
    assert project.git("for-each-ref") == refs


def test_only_limits_the_restore(project: Workdir) -> None:
    project.ok("snap")
    project.write("src/app.py", "changed\n")
    project.write("notes.txt", "keep my change\n")
    project.ok("undo", "1", "--yes", "--only", "src")
    assert (project.path / "src" / "app.py").read_text() == "print('hello')\n"
    assert (project.path / "notes.txt").read_text() == "keep my change\n"
    run = project.rewind("undo", "1", "--yes", "--only", "../elsewhere")
    assert run.returncode == 1 and "outside the working tree" in run.stderr


def test_ignored_files_are_never_touched(project: Workdir) -> None:
    project.ok("snap")
    ignored = {p: (project.path / p).read_bytes() for p in ("node_modules/pkg/index.js", "debug.log", ".env")}
    project.write("node_modules/pkg/other.js", "also ignored\n")
    project.write("src/app.py", "changed\n")
    project.ok("undo", "1", "--yes")
    for p, content in ignored.items():
        assert (project.path / p).read_bytes() == content
    assert (project.path / "node_modules/pkg/other.js").exists()


def test_gitignore_change_neither_captures_nor_deletes_ignored_files(project: Workdir) -> None:
    """Pitfall: the agent deleted .gitignore; a naive safety snapshot captures node_modules and .env."""
    project.ok("snap")
    os.unlink(project.path / ".gitignore")
    project.write("src/app.py", "changed\n")
    out = project.ok("undo", "1", "--yes")
    safety = _notes(project)[0]
    captured = project.git("ls-tree", "-r", "--name-only", safety["commit"]).split()
    assert ".env" not in captured and not any(p.startswith("node_modules") for p in captured)
    assert "debug.log" not in captured
    assert (project.path / ".env").read_text() == "SECRET=1\n"
    assert (project.path / "node_modules/pkg/index.js").exists()
    assert (project.path / ".gitignore").exists()
    assert "restored #1" in out
    # the secret never reached the object database
    secret_blob = project.git("hash-object", ".env").strip()
    assert project.git("cat-file", "-e", secret_blob, check=False) == ""
    assert subprocess.run(["git", "cat-file", "-e", secret_blob], cwd=project.path,
                          env=project.env).returncode != 0


def test_ignored_file_where_the_checkpoint_has_a_tracked_one_is_left_alone(project: Workdir) -> None:
    project.write("build.out", "checkpointed\n")
    project.ok("snap")
    os.unlink(project.path / "build.out")
    project.write(".gitignore", "node_modules/\n*.log\n.env\nbuild.out\n")
    project.write("build.out", "now ignored, fresh content\n")
    out = project.ok("undo", "1", "--yes")
    assert (project.path / "build.out").read_text() == "now ignored, fresh content\n"
    assert "left alone" in project.rewind("undo", "1", "--dry-run").stdout or "restored" in out


def test_file_replaced_by_directory_and_back(project: Workdir) -> None:
    project.ok("snap")
    os.unlink(project.path / "notes.txt")
    project.write("notes.txt/inside.txt", "now a directory\n")
    os.rename(project.path / "src", project.path / "src_old")
    project.write("src", "now a file\n")
    state_dir = project.state()
    project.ok("snap")
    project.ok("undo", "1", "--yes")
    assert (project.path / "notes.txt").read_text() == "untracked work\n"
    assert (project.path / "src" / "app.py").exists()
    project.ok("redo")
    assert project.state() == state_dir


def test_redo_without_undo_and_unknown_ids_are_one_line_errors(project: Workdir) -> None:
    run = project.rewind("undo", "--yes")
    assert run.returncode == 1 and run.stderr.strip() == "error: no checkpoints yet in this repository"
    project.ok("snap")
    run = project.rewind("redo")
    assert run.returncode == 1 and run.stderr.startswith("error: nothing to redo")
    for bad in ("99", "@~5", "deadbeef", "nonsense"):
        run = project.rewind("undo", bad, "--yes")
        assert run.returncode == 1, bad
        assert run.stderr.startswith("error: unknown checkpoint") and len(run.stderr.splitlines()) == 1


def test_undo_to_current_state_does_nothing(project: Workdir) -> None:
    project.ok("snap")
    out = project.ok("undo", "--yes")
    assert "already matches #1" in out
    assert len(_notes(project)) == 1


def test_undo_from_subdirectory(project: Workdir) -> None:
    project.ok("snap")
    project.write("src/app.py", "changed\n")
    project.ok("undo", "1", "--yes", "--only", "app.py", cwd=project.path / "src")
    assert (project.path / "src" / "app.py").read_text() == "print('hello')\n"


def _run_on_tty(w: Workdir, args: list[str], answer: bytes) -> tuple[int, bytes]:
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(w.path)
        os.execvpe(REWIND[0], [*REWIND, *args], w.env)
    output = b""
    deadline = time.monotonic() + 30
    sent = False
    while time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
        if not sent and b"[y/N]" in output:
            os.write(fd, answer)
            sent = True
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), output


def test_tty_asks_before_restoring(project: Workdir) -> None:
    project.ok("snap")
    project.write("src/app.py", "changed\n")
    code, out = _run_on_tty(project, ["undo", "1"], b"n\n")
    assert b"Rewind the working tree to #1?" in out and code == 1
    assert (project.path / "src" / "app.py").read_text() == "changed\n"
    code, out = _run_on_tty(project, ["undo", "1"], b"y\n")
    assert code == 0 and b"restored #1" in out
    assert (project.path / "src" / "app.py").read_text() == "print('hello')\n"


def test_leftover_temporary_files_of_a_killed_restore_are_swept(project: Workdir) -> None:
    project.ok("snap")
    tmp = project.write("src/.app.py.rewind-tmp", "half written")
    (project.path / ".git" / "rewind" / "restore.journal").write_bytes(b"src/.app.py.rewind-tmp\0")
    project.write("notes.txt", "v2\n")
    project.ok("snap")
    assert not tmp.exists()
    files = project.git("ls-tree", "-r", "--name-only", "refs/rewind/manual").split()
    assert "src/.app.py.rewind-tmp" not in files
