"""The real git servers the sync tests push to (tests/helpers/gitservers.py), proved with plain git: a push
from one clone reaches another clone with its own HOME, a pre-receive hook's no reaches the client, and a
server killed mid-push leaves the client with an error and takes the push again once restarted."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from helpers.gitservers import HANG, GitServer, pack_entries
from helpers.workdir import Workdir, git_env


def clone(server: GitServer, tmp_path: Path, name: str) -> Workdir:
    """A clone of the server's repository in its own directory, with its own HOME."""
    home = tmp_path / f"home-{name}"
    home.mkdir()
    env = server.client_env(git_env(home))
    path = tmp_path / name
    run = subprocess.run(["git", "clone", "-q", server.url, str(path)], env=env, capture_output=True, text=True,
                         timeout=HANG)
    assert run.returncode == 0, f"git clone {server.url} failed: {run.stderr}"
    w = Workdir(path, env)
    w.git("checkout", "-q", "-B", "main")  # a first clone of an empty repository has no branch yet
    return w


def push(w: Workdir, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "push", *args], cwd=w.path, env=w.env, capture_output=True, text=True,
                          timeout=HANG)


def test_a_push_reaches_a_clone_with_another_home(any_server: GitServer, tmp_path: Path) -> None:
    a = clone(any_server, tmp_path, "a")
    a.write("src/app.py", "print('pushed through the server: MARKER-31c6')\n")
    a.commit_all("first")
    run = push(a, "origin", "main")
    assert run.returncode == 0, run.stderr
    head = a.git("rev-parse", "main").strip()
    assert any_server.refs() == {"refs/heads/main": head}

    b = clone(any_server, tmp_path, "b")
    assert b.env["HOME"] != a.env["HOME"]
    assert b.git("rev-parse", "HEAD").strip() == head
    assert (b.path / "src/app.py").read_text() == "print('pushed through the server: MARKER-31c6')\n"

    a.write("src/app.py", "print('second')\n")
    a.commit_all("second")
    assert push(a, "origin", "main").returncode == 0
    b.git("fetch", "-q", "origin")
    assert b.git("rev-parse", "origin/main").strip() == a.git("rev-parse", "main").strip()

    # what the server holds is read in full: the pushed text is found, a text never pushed is not
    assert any_server.leaks("MARKER-31c6", "NEVER-PUSHED-9f2e") == ["MARKER-31c6"]


def test_a_pre_receive_hook_that_says_no(any_server: GitServer, tmp_path: Path) -> None:
    a = clone(any_server, tmp_path, "a")
    a.write("file.txt", "refused\n")
    a.commit_all()
    any_server.reject("this remote takes no pushes today")
    run = push(a, "origin", "main")
    assert run.returncode != 0
    assert "remote: this remote takes no pushes today" in run.stderr, run.stderr
    assert "! [remote rejected] main -> main (pre-receive hook declined)" in run.stderr, run.stderr
    assert any_server.refs() == {}


def test_a_server_killed_mid_push_then_restarted(any_server: GitServer, tmp_path: Path) -> None:
    a = clone(any_server, tmp_path, "a")
    a.write("big.bin", os.urandom(8 << 20))  # incompressible: the client packs and sends it for a while
    a.write("small.txt", "small\n")
    a.commit_all("big")
    head = a.git("rev-parse", "main").strip()

    client = subprocess.Popen(["git", "push", "origin", "main"], cwd=a.path, env=a.env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert any_server.wait_for_pack_reader(), f"the server never read the pack:\n{any_server.log_tail()}"
        assert client.poll() is None, "the push finished before the kill: make it bigger"
        any_server.kill()
        _out, err = client.communicate(timeout=HANG)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    assert client.returncode != 0, f"the push succeeded although the server was killed under it: {err}"
    assert "refs/heads/main" not in any_server.refs()
    assert a.git("rev-parse", "main").strip() == head
    a.fsck()

    any_server.start()
    run = push(a, "origin", "main")
    assert run.returncode == 0, run.stderr
    assert any_server.refs() == {"refs/heads/main": head}
    any_server.git("fsck", "--no-progress")
    assert any_server.git("rev-parse", "main:big.bin") == a.git("rev-parse", "main:big.bin")


def test_pack_entries_reads_a_pack_cut_short(tmp_path: Path) -> None:
    """A push killed midway can leave half a pack on the server: its beginning is still searched."""
    w = Workdir(tmp_path / "r", git_env(tmp_path))
    w.git("init", "-q", str(w.path), cwd=tmp_path)
    blob = w.path / "blob"
    blob.write_bytes(b"SECRET-AT-THE-START " + os.urandom(200_000) + b" SECRET-AT-THE-END")
    oid = w.git("hash-object", "-w", str(blob)).strip()
    pack = subprocess.run(["git", "pack-objects", "--stdout"], cwd=w.path, env=w.env, input=oid.encode() + b"\n",
                          capture_output=True, check=True).stdout
    whole = b"".join(pack_entries(pack))
    assert b"SECRET-AT-THE-START" in whole and b"SECRET-AT-THE-END" in whole
    half = b"".join(pack_entries(pack[: len(pack) // 2]))
    assert b"SECRET-AT-THE-START" in half and b"SECRET-AT-THE-END" not in half
