"""write_atomic: readers see the old bytes or the new, modes are kept, links followed only when asked,
and a failure leaves the target and no temporary file behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_rewind.base.fsutil import folders_above, write_atomic


def test_replaces_the_bytes_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    target.write_text("old")
    target.chmod(0o640)
    write_atomic(str(target), "new ü")
    assert target.read_bytes() == "new ü".encode() and (target.stat().st_mode & 0o777) == 0o640
    assert os.listdir(tmp_path) == ["settings.json"]


def test_a_new_file_gets_new_mode_less_the_umask_or_the_mode_of_like(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(str(tmp_path / "a"), b"x")
        write_atomic(str(tmp_path / "b"), b"x", new_mode=0o600, sync=True)
        like = tmp_path / "like"
        like.write_bytes(b"")
        like.chmod(0o604)
        write_atomic(str(tmp_path / "c"), b"x", like=str(like))
    finally:
        os.umask(old)
    modes = {name: (tmp_path / name).stat().st_mode & 0o777 for name in ("a", "b", "c")}
    assert modes == {"a": 0o644, "b": 0o600, "c": 0o604}


def test_links_are_replaced_unless_followed(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    assert write_atomic(str(link), "followed", follow=True) == str(real)
    assert link.is_symlink() and real.read_text() == "followed"
    write_atomic(str(link), "replaced")
    assert not link.is_symlink() and link.read_text() == "replaced" and real.read_text() == "followed"


def test_makedirs_and_a_failed_write_leaves_nothing(tmp_path: Path) -> None:
    write_atomic(str(tmp_path / "a" / "b" / "c.txt"), "x", makedirs=True)
    assert (tmp_path / "a" / "b" / "c.txt").read_text() == "x"
    with pytest.raises(FileNotFoundError):
        write_atomic(str(tmp_path / "missing" / "c.txt"), "x")
    target = tmp_path / "dir"
    target.mkdir()  # a directory stands where the file would go: the rename fails
    with pytest.raises(OSError):
        write_atomic(str(target), "x")
    assert target.is_dir() and sorted(os.listdir(tmp_path)) == ["a", "dir"]


def test_read_regular_reads_files_and_refuses_fifos_without_blocking(tmp_path: Path) -> None:
    from git_rewind.base.fsutil import NotRegular, read_regular

    path = tmp_path / "f"
    path.write_bytes(b"0123456789" * 300_000)
    assert read_regular(str(path)) == path.read_bytes()
    assert read_regular(str(path), 15) == b"012345678901234"
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotRegular):
        read_regular(str(fifo))  # no writer: an ordinary open would wait forever
    with pytest.raises(NotRegular):
        read_regular(str(tmp_path))
    with pytest.raises(FileNotFoundError):
        read_regular(str(tmp_path / "missing"))


def test_sweep_removes_only_the_temporaries_of_processes_that_are_gone(tmp_path: Path) -> None:
    import subprocess

    from git_rewind.base.fsutil import sweep_temporaries

    dead_pid = subprocess.Popen(["true"])
    dead_pid.wait()
    names = {f"s.jsonl.git-rewind-{dead_pid.pid}.tmp": "killed mid-write",
             f"s.jsonl.git-rewind-{os.getppid()}.tmp": "a live process's",
             f"s.jsonl.git-rewind-{os.getpid()}.tmp": "this process's",
             "s.jsonl": "the transcript", "notes.git-rewind-x.tmp": "not a pid", "other.tmp": "not ours"}
    for name, text in names.items():
        (tmp_path / name).write_text(text)
    assert sweep_temporaries(str(tmp_path)) == [f"s.jsonl.git-rewind-{dead_pid.pid}.tmp"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(set(names) - {f"s.jsonl.git-rewind-{dead_pid.pid}.tmp"})
    assert sweep_temporaries(str(tmp_path / "missing")) == []


def test_scratch_dir_removes_what_killed_commands_left_and_keeps_the_living_ones(tmp_path: Path) -> None:
    import subprocess

    from git_rewind.base.fsutil import scratch_dir

    dead = subprocess.Popen(["true"])
    dead.wait()
    gone = [f"{kind}-{dead.pid}-abc123" for kind in ("blame", "cat", "patch", "restore")]
    kept = [f"restore-{os.getppid()}-live", f"cat-{os.getpid()}-mine", "restore-notapid", "daemon-cookies",
            f"other-{dead.pid}-x", "gitignores"]
    for name in gone + kept:
        (tmp_path / name).mkdir()
        (tmp_path / name / "index").write_text("staged\n")
    made = scratch_dir(str(tmp_path), "cat")
    assert os.path.basename(made).startswith(f"cat-{os.getpid()}-") and os.path.isdir(made)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept + [os.path.basename(made)])


def test_a_killed_cat_leaves_nothing_the_next_one_does_not_sweep(project: object) -> None:
    import subprocess
    import sys

    from helpers.workdir import REWIND, Workdir

    assert isinstance(project, Workdir)
    w = project
    w.write(".gitattributes", "*.txt text eol=crlf\n")
    w.write("a.txt", "one\ntwo\n")
    w.ok("snap", "-m", "crlf")
    rewind_dir = w.path / ".git" / "rewind"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = rewind_dir / f"cat-{dead.pid}-killed"
    left.mkdir()
    (left / "files").mkdir()
    (left / "files" / "a.txt").write_text("half\n")
    out = subprocess.run([*REWIND, "cat", "1", "a.txt"], cwd=w.path, env=w.env, capture_output=True, check=True)
    assert out.stdout == b"one\r\ntwo\r\n"  # through the staging directory: git's eol conversion
    assert not left.exists()
    assert not [p.name for p in rewind_dir.iterdir() if p.name.startswith("cat-")]  # its own is gone too


def test_folders_above_names_every_folder_once_and_the_top() -> None:
    assert folders_above(["a/b/c.txt", "a/b/d.txt", "a/e.txt", "top.txt", "x/y/z/w"]) == \
        {"", "a", "a/b", "x", "x/y", "x/y/z"}
    assert folders_above([]) == {""}
