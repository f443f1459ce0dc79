"""daemonlink: the way to the daemon without `os` finds what git finds, and sees the environment os.environ has."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.workdir import Workdir

from git_rewind.base import daemonlink

TOP = str(Path(daemonlink.__file__).resolve().parents[2])


def _git_says(cwd: Path, env: dict[str, str]) -> tuple[str, str, str]:
    """git's own work tree root, git directory and common directory from CWD, absolute and resolved."""
    out = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir",
                          "--git-common-dir"], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    root, gitdir, common = out.stdout.splitlines()
    return os.path.realpath(root), os.path.realpath(gitdir), os.path.realpath(common)


def _real(found: tuple[str, str, str] | None) -> tuple[str, ...] | None:
    return tuple(os.path.realpath(p) for p in found) if found is not None else None


def test_the_layout_is_the_one_git_finds_from_the_root_a_folder_and_a_linked_work_tree(
        project: Workdir, tmp_path: Path) -> None:
    w = project
    (w.path / "src" / "deep").mkdir(parents=True, exist_ok=True)
    linked = tmp_path / "linked"
    w.git("worktree", "add", "-q", str(linked))
    (linked / "src" / "deep").mkdir(parents=True, exist_ok=True)
    for where in (w.path, w.path / "src" / "deep", linked, linked / "src" / "deep"):
        found = daemonlink.layout_of(os.path.realpath(where))
        assert _real(found) == _git_says(where, w.env), where
    linked_found = daemonlink.layout_of(os.path.realpath(linked))
    assert linked_found is not None and linked_found[1] != linked_found[2]  # its own git dir, the common one


def test_what_only_git_can_decide_is_left_to_it(project: Workdir, tmp_path: Path) -> None:
    w = project
    assert daemonlink.layout_of(os.path.realpath(tmp_path)) is None  # not a repository (tmp_path is outside)
    assert daemonlink.layout_of(os.path.realpath(w.path / ".git")) is None  # inside the git directory
    w.git("config", "core.worktree", str(w.path))
    assert daemonlink.layout_of(os.path.realpath(w.path)) is None
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True, env=w.env)
    assert daemonlink.layout_of(os.path.realpath(bare)) is None


@pytest.mark.parametrize("value", ["plain", "é ü", "a=b=c", ""])
def test_the_environment_without_os_is_the_one_os_environ_has(value: str, env: dict[str, str]) -> None:
    code = (f"import sys; sys.path.insert(0, {TOP!r}); from git_rewind.base import daemonlink; "
            "seen = daemonlink.environment(); assert 'os' not in sys.modules, 'os was imported'; "
            "import os; assert seen == dict(os.environ), (seen, dict(os.environ)); print(seen['PROBE'].encode("
            "'utf-8', 'surrogateescape').hex())")
    environ = {k.encode(): v.encode() for k, v in env.items()}
    environ[b"PROBE"] = value.encode("utf-8")
    environ[b"ODD\xff"] = b"not utf-8 \xff\xfe"  # os.environ decodes it with surrogate escapes: so must this
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code], env=environ, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert bytes.fromhex(proc.stdout.strip()) == value.encode("utf-8")


def test_the_fingerprint_is_the_daemons() -> None:
    from git_rewind.base import daemon

    assert daemon.fingerprint() == daemonlink.fingerprint()
    assert daemonlink.fingerprint().split()[0] == __import__("git_rewind").__version__
    assert "-" not in daemonlink.fingerprint().split()[1:]  # every file it stamps was found


def test_no_socket_is_no_link_and_costs_no_socket_import(tmp_path: Path) -> None:
    code = (f"import sys; sys.path.insert(0, {TOP!r}); from git_rewind.base import daemonlink; "
            f"print(daemonlink.connect({str(tmp_path)!r}, 0.5), '_socket' in sys.modules, 'os' in sys.modules)")
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ["None", "False", "False"]
