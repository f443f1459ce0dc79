"""`git rewind push`, `fetch` and `list --remote` end to end through real servers on 127.0.0.1 (git daemon,
smart HTTP behind lighttpd, sshd: tests/helpers/gitservers.py), each clone with its own HOME, and after every
push the server's bytes searched for the secrets planted in the checkpoints: none may be there."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pytest
from helpers.gitservers import HANG, GitServer
from helpers.samples import AGENT_ENV
from helpers.session import Agent
from helpers.workdir import REWIND, Run, Workdir, git_env

AWS_IN_MESSAGE = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key: the scanner must catch it
AWS_IN_PROMPT = "AKIAPROMPTSECRET0001"  # the same shape, typed into the agent's prompt
ENV_LINE = "STRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc"  # in a .env file that is not ignored
SECRETS = (AWS_IN_MESSAGE, AWS_IN_PROMPT, ENV_LINE)
SHARE = "refs/notes/rewind-share/"


def person(server: GitServer, tmp_path: Path, name: str, *, clone: bool = True) -> Workdir:
    """NAME's machine: its own HOME and git identity, a clone of the server's repository (or, CLONE false, a
    new repository with the server as origin), no agent in its environment."""
    home = tmp_path / f"home-{name}"
    home.mkdir()
    env = server.client_env(git_env(home))
    for key in AGENT_ENV:
        env.pop(key, None)
    env.update(XDG_STATE_HOME=str(home / ".local" / "state"), GIT_AUTHOR_NAME=name.title(),
               GIT_COMMITTER_NAME=name.title())
    path = tmp_path / name
    if clone:
        run = subprocess.run(["git", "clone", "-q", server.url, str(path)], env=env, capture_output=True,
                             text=True, timeout=HANG)
        assert run.returncode == 0, f"git clone {server.url}: {run.stderr}"
    else:
        subprocess.run(["git", "init", "-q", "-b", "main", str(path)], env=env, check=True, timeout=HANG)
    w = Workdir(path, env)
    w.git("config", "user.name", name.title())
    if not clone:
        w.git("remote", "add", "origin", server.url)
    return w


def alice_with_secrets(server: GitServer, tmp_path: Path) -> Workdir:
    """Alice's project, its branch pushed with plain git; then checkpoints holding the planted secrets: an
    agent's prompt and transcript, a checkpoint's message, and a .env file that is not ignored."""
    alice = person(server, tmp_path, "alice", clone=False)
    alice.write(".gitignore", "node_modules/\n*.log\n")
    alice.write("src/app.py", "print('hello')\n")
    alice.commit_all("init")
    run = subprocess.run(["git", "push", "-q", "origin", "main"], cwd=alice.path, env=alice.env,
                         capture_output=True, text=True, timeout=HANG)
    assert run.returncode == 0, run.stderr
    alice.write(".env", ENV_LINE + "\n")
    agent = Agent(alice)
    Path(agent.transcript).parent.mkdir(parents=True, exist_ok=True)  # the agent's own file, as it writes it
    Path(agent.transcript).write_text(json.dumps({
        "type": "user", "uuid": "u1", "parentUuid": None, "sessionId": agent.session, "cwd": str(alice.path),
        "message": {"role": "user", "content": f"please deploy with the key {AWS_IN_PROMPT}"}}) + "\n")
    agent.start()
    agent.prompt(f"deploy with the key {AWS_IN_PROMPT}")
    agent.edit("src/app.py", "hello", "hello, world")
    alice.write("src/app.py", "print('hello, world')\n")
    agent.stop()
    alice.ok("snap", "-m", f"deploy with {AWS_IN_MESSAGE}")
    # the secrets are in the local checkpoints (so their absence on the server means something)
    local = json.loads(alice.ok("list", "--json", "-n", "0", "--safety"))
    assert any(AWS_IN_PROMPT in (c.get("prompt") or "") for c in local), local
    assert any(AWS_IN_MESSAGE in (c.get("message") or "") for c in local), local
    assert ENV_LINE in alice.git("show", f"{local[0]['commit']}:.env")
    return alice


def local_store(w: Workdir) -> str:
    """The local checkpoints and their notes, which a push never changes."""
    return w.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/rewind/", "refs/notes/rewind")


def share_refs(server: GitServer) -> list[str]:
    return sorted(ref for ref in server.refs() if ref.startswith(SHARE))


def one_line_error(run: Run) -> str:
    """The error of a failed command: exit status 1 and exactly one line on stderr."""
    assert run.returncode == 1, (run.returncode, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    return lines[0]


def test_push_fetch_list_show_undo_through_a_server(any_server: GitServer, tmp_path: Path) -> None:
    alice = alice_with_secrets(any_server, tmp_path)
    mine = local_store(alice)
    out = alice.ok("push", "origin", "--with-conversation")
    assert "pushed" in out and "1 transcript" in out and "to origin" in out, out
    assert "left out: .env" in out, out
    assert local_store(alice) == mine
    assert len(share_refs(any_server)) == 1 and "refs/heads/main" in any_server.refs()
    assert any_server.leaks(*SECRETS) == []
    # the copy and the transcript are there, the secrets in them replaced
    there = ("print('hello, world')", "please deploy with the key [REDACTED:")
    assert any_server.leaks(*there) == list(there)

    bob = person(any_server, tmp_path, "bob")
    assert bob.env["HOME"] != alice.env["HOME"]
    seqs = [c["seq"] for c in json.loads(alice.ok("list", "--json", "-n", "0", "--safety"))]
    fetched = bob.ok("fetch", "origin")
    assert f"{len(seqs)} checkpoints ({len(seqs)} new, 1 transcript)" in fetched, fetched
    listed = json.loads(bob.ok("list", "--remote", "origin", "--json", "-n", "0"))
    assert [c["seq"] for c in listed] == seqs
    assert all(c["id"].startswith("origin/alice-") for c in listed), listed
    assert not any(secret in json.dumps(listed) for secret in SECRETS)
    assert any(c["shared"]["left_out"] == [".env"] for c in listed), listed
    assert any(c["shared"]["transcript"] for c in listed), listed

    newest = listed[0]["id"]
    assert f"checkpoint: {newest} " in bob.ok("show", newest)
    bob.write("src/app.py", "print('bob was here')\n")
    bob.ok("undo", newest, "--code", "--yes")
    assert (bob.path / "src/app.py").read_text() == "print('hello, world')\n"
    assert not (bob.path / ".env").exists()  # left out of the copy, so never brought back
    assert json.loads(bob.ok("list", "--json", "--safety"))[0]["trigger"] == "pre-rewind"  # bob's own work kept first

    # the server's URL works where a remote's name does: what it brings is kept under a label made of the URL
    bob.ok("fetch", any_server.url)
    by_url = json.loads(bob.ok("list", "--remote", any_server.url, "--json", "-n", "0"))
    assert [c["seq"] for c in by_url] == seqs and not by_url[0]["id"].startswith("origin/"), by_url

    assert "nothing new to push" in alice.ok("push", "origin")
    assert any_server.leaks(*SECRETS) == []


@pytest.mark.parametrize("same_name, lock_held", [
    (False, False),
    (True, False),
    (True, True),
], ids=["two-names", "one-name", "one-name-lock-held"])
def test_two_clones_pushing_at_the_same_moment_both_land(any_server: GitServer, tmp_path: Path,
                                                         same_name: bool, lock_held: bool) -> None:
    alice = alice_with_secrets(any_server, tmp_path)
    carol = person(any_server, tmp_path, "carol")
    carol.write("src/carol.py", "print('carol')\n")
    carol.ok("snap", "-m", "carol's work")
    # The server holds the first push in its pre-receive hook until the second arrives there too: both were
    # told the same state of the refs, and both ask to move them at once (a push after those two passes).
    meet = any_server.root / "meet"
    meet.mkdir()
    any_server.install_hook("pre-receive", f"""#!/bin/sh
cat >/dev/null
if mkdir {meet}/1 2>/dev/null || mkdir {meet}/2 2>/dev/null; then
    i=0
    while [ ! -d {meet}/2 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
fi
""")
    if lock_held:  # the first to lock the ref holds the lock half a second: the other meets the lock, not the
        # ref (a push's bounded retries wait longer than that in all, so it lands; a lock held for seconds fails)
        any_server.install_hook("reference-transaction", f"""#!/bin/sh
cat >/dev/null
if [ "$1" = prepared ] && mkdir {meet}/held 2>/dev/null; then sleep 0.5; fi
exit 0
""")
    env = {"GIT_REWIND_SYNC_NAME": "laptop"} if same_name else {}
    runs: dict[str, Run] = {}

    def push(w: Workdir) -> None:
        runs[w.path.name] = w.rewind("push", "origin", env=env)

    threads = [threading.Thread(target=push, args=(w,)) for w in (alice, carol)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG * 2)
    assert (meet / "2").is_dir(), "the two pushes never were at the server together"
    assert (meet / "held").is_dir() == lock_held
    failed = {name: (r.returncode, r.stderr) for name, r in runs.items() if r.returncode != 0}
    assert len(runs) == 2 and not failed, failed
    names = share_refs(any_server)
    assert len(names) == (1 if same_name else 2), names
    assert any_server.leaks(*SECRETS) == []

    dave = person(any_server, tmp_path, "dave")
    dave.ok("fetch", "origin")
    messages = {c["message"] for c in json.loads(dave.ok("list", "--remote", "origin", "--json", "-n", "0"))}
    assert "carol's work" in messages, messages
    assert any(m.startswith("deploy with") for m in messages), messages


def test_a_server_killed_mid_push_loses_nothing_and_the_next_push_completes(any_server: GitServer,
                                                                            tmp_path: Path) -> None:
    alice = alice_with_secrets(any_server, tmp_path)
    alice.write("assets/big.bin", os.urandom(8 << 20))  # the copy carries it: a push that takes a while
    alice.ok("snap", "-m", "a big asset")
    mine = local_store(alice)
    listed = alice.ok("list", "--json", "-n", "0", "--safety")

    push = subprocess.Popen([*REWIND, "push", "origin"], cwd=alice.path, env=alice.env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert any_server.wait_for_pack_reader(), f"the server never read the pack:\n{any_server.log_tail()}"
        assert push.poll() is None, "the push finished before the kill: make it bigger"
        any_server.kill()
        out, err = push.communicate(timeout=HANG)
    finally:
        if push.poll() is None:
            push.kill()
            push.wait()
    error = one_line_error(Run(push.returncode, out, err))
    assert "push to origin failed" in error, error
    assert local_store(alice) == mine and alice.ok("list", "--json", "-n", "0", "--safety") == listed
    alice.fsck()
    assert json.loads(alice.ok("status", "--json"))["sync"]["error"]
    assert share_refs(any_server) == []

    any_server.start()
    out = alice.ok("push", "origin")
    assert "pushed" in out, out
    assert len(share_refs(any_server)) == 1
    assert json.loads(alice.ok("status", "--json"))["sync"]["error"] is None
    assert any_server.leaks(*SECRETS) == []
    any_server.git("fsck", "--no-progress")
    bob = person(any_server, tmp_path, "bob")
    bob.ok("fetch", "origin")
    fetched = json.loads(bob.ok("list", "--remote", "origin", "--json", "-n", "0"))
    assert [c["seq"] for c in fetched] == [c["seq"] for c in json.loads(listed)]


def test_a_remote_whose_hook_says_no_is_one_clear_line(any_server: GitServer, tmp_path: Path) -> None:
    alice = alice_with_secrets(any_server, tmp_path)
    mine = local_store(alice)
    any_server.reject("rewind refs are not welcome here")
    error = one_line_error(alice.rewind("push", "origin"))
    assert "push to origin failed" in error and "rewind refs are not welcome here" in error, error
    assert share_refs(any_server) == []
    assert local_store(alice) == mine
    assert "rewind refs are not welcome here" in json.loads(alice.ok("status", "--json"))["sync"]["error"]
    assert any_server.leaks(*SECRETS) == []
