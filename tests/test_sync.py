"""Sharing checkpoints through a git remote (a bare repository on disk here; tests/test_sync_servers.py goes
through git daemon, smart HTTP and sshd): push, fetch, list --remote, fetched ids, merging, bad input."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest
from helpers.session import Agent
from helpers.workdir import Workdir, git_env

AWS = "AKIAIOSFODNN7EXAMPLE"  # a planted secret the scanner must catch (AWS's documented example key)
ENV_LINE = "STRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc"


def objects(bare: Path) -> bytes:
    """Every object in BARE, as `git cat-file --batch` prints them: what a server holds."""
    out = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=bare, capture_output=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def refs(bare: Path) -> list[str]:
    out = subprocess.run(["git", "for-each-ref", "--format=%(refname)"], cwd=bare, capture_output=True, text=True)
    return out.stdout.split()


@pytest.fixture
def bare(tmp_path: Path, env: dict[str, str]) -> Path:
    path = tmp_path / "shared.git"
    subprocess.run(["git", "init", "-q", "--bare", str(path)], env=env, check=True)
    return path


def clone(tmp_path: Path, name: str, origin: Path) -> Workdir:
    """A second person's clone: its own HOME (own git identity), origin = ORIGIN."""
    home = tmp_path / f"home-{name}"
    home.mkdir()
    env = git_env(home)
    env.update(GIT_AUTHOR_NAME=name.title(), GIT_COMMITTER_NAME=name.title())
    path = tmp_path / name
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], env=env, check=True)
    w = Workdir(path, env)
    w.git("config", "user.name", name.title())
    w.git("remote", "add", "origin", str(origin))
    return w


@pytest.fixture
def alice(project: Workdir, bare: Path) -> Workdir:
    """The project with secrets in a checkpoint's message and in a file that is not ignored, pushed to BARE."""
    project.git("config", "user.name", "Alice")
    project.git("remote", "add", "origin", str(bare))
    project.write(".gitignore", "node_modules/\n*.log\n")  # .env no longer ignored: a captured secret
    project.write(".env", ENV_LINE + "\n")
    project.ok("snap", "-m", f"deploy with {AWS}")
    project.write("src/app.py", "print('hello, world')\n")
    project.ok("snap", "-m", "greet the world")
    return project


def test_push_needs_a_remote_named_and_never_uses_origin_by_default(alice: Workdir, bare: Path) -> None:
    run = alice.rewind("push")
    assert run.returncode == 1 and "no remote" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert refs(bare) == []  # origin exists, and nothing went there
    assert alice.git("for-each-ref", "refs/notes/rewind-share/") == ""  # and nothing was even built


def test_push_sends_one_redacted_ref_and_nothing_else(alice: Workdir, bare: Path) -> None:
    before = alice.user_state()
    local = alice.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/rewind/", "refs/notes/rewind")
    out = alice.ok("push", "origin")
    assert "pushed 2 new checkpoints to origin" in out
    assert "left out: .env" in out and "AWS" in out  # it says what it replaced and left out
    # One ref: this machine's, named by default from git's user.name and the host.
    assert refs(bare) == [f"refs/notes/rewind-share/alice-{_host()}"]
    (ref,) = refs(bare)
    held = objects(bare)
    assert AWS.encode() not in held and ENV_LINE.encode() not in held
    assert b"[REDACTED:" in held
    # The local store is as it was: the user's index, HEAD, branches; the local checkpoints and notes.
    assert alice.user_state() == before
    assert alice.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/rewind/", "refs/notes/rewind") == local
    # Plain git reads the copy: its notes and its history.
    listed = alice.git("notes", "--ref", ref.removeprefix("refs/notes/"), "list").split("\n")
    assert len([line for line in listed if line]) == 2
    assert "greet the world" in alice.git("log", "--format=%s", ref)


def _host() -> str:
    import socket

    return socket.gethostname().split(".")[0].lower()


def test_a_second_push_of_nothing_new_does_no_work_and_a_tag_updates_one_note(alice: Workdir, bare: Path) -> None:
    alice.ok("push", "origin")
    (ref,) = refs(bare)
    tip = _tip(bare, ref)
    assert "nothing new to push" in alice.ok("push", "origin")
    assert _tip(bare, ref) == tip
    alice.ok("tag", "1", "reviewed")
    out = alice.ok("push", "origin")
    assert "1 updated note" in out
    assert _tip(bare, ref) != tip
    assert subprocess.run(["git", "merge-base", "--is-ancestor", tip, _tip(bare, ref)], cwd=bare).returncode == 0


def _tip(bare: Path, ref: str) -> str:
    return subprocess.run(["git", "rev-parse", ref], cwd=bare, capture_output=True, text=True).stdout.strip()


def test_a_teammate_fetches_lists_and_uses_fetched_ids(alice: Workdir, bare: Path, tmp_path: Path) -> None:
    alice.ok("tag", "2", "good")
    alice.ok("push", "origin")
    bob = clone(tmp_path, "bob", bare)
    out = bob.ok("fetch", "origin")
    assert "2 checkpoints (2 new)" in out
    listed = json.loads(bob.ok("list", "--remote", "origin", "--json"))
    assert [d["seq"] for d in listed] == [2, 1]
    ids = [d["id"] for d in listed]
    assert all(i.startswith("origin/alice-") and i.endswith(f"/{d['seq']}") for i, d in zip(ids, listed, strict=True))
    assert listed[0]["shared"]["user"] == "Alice" and listed[0]["tags"] == ["good"]
    assert AWS not in json.dumps(listed)
    table = bob.ok("list", "--remote", "origin")
    assert table.splitlines()[0].split()[:3] == ["id", "age", "by"] and "Alice" in table
    # Plain list, @ and @{DATE} stay local: bob has no checkpoints of his own.
    assert bob.ok("list").strip() == "no checkpoints"
    assert bob.rewind("show", "@").returncode == 1
    # Every command that takes an id takes a fetched one.
    second = ids[0]
    shown = bob.ok("show", second)
    assert f"checkpoint: {second} " in shown and "by:" in shown and "src/app.py" in shown
    assert "print('hello, world')" in bob.ok("diff", ids[1], second)
    files = bob.ok("files", second).split()
    assert "src/app.py" in files and ".env" not in files  # left out of the copy
    assert bob.ok("cat", second, "src/app.py") == "print('hello, world')\n"
    assert bob.ok("tag", second).split()[-1] == "good"  # its tags can be read; only its own machine changes them
    refused = bob.rewind("tag", second, "mine")
    assert refused.returncode == 1 and "fetched from another machine" in refused.stderr
    json_shown = json.loads(bob.ok("show", second, "--json"))
    assert json_shown["id"] == second and json_shown["commit"] == listed[0]["commit"]
    # undo --code to a fetched checkpoint: the files come back, and bob's own work was checkpointed first.
    bob.write("mine.txt", "bob's own work\n")
    assert f"restored {second}:" in bob.ok("undo", second, "--code", "--yes")
    assert (bob.path / "src/app.py").read_text() == "print('hello, world')\n"
    assert not (bob.path / ".env").exists()
    mine = json.loads(bob.ok("list", "--json", "--safety"))
    assert mine and mine[0]["trigger"] == "pre-rewind"  # the safety checkpoint is bob's own
    assert bob.git("show", f"{mine[0]['commit']}:mine.txt") == "bob's own work\n"


def test_the_safety_checkpoint_before_undoing_a_fetched_checkpoint_names_its_full_id(
        alice: Workdir, bare: Path, tmp_path: Path) -> None:
    alice.ok("push", "origin")
    bob = clone(tmp_path, "bob", bare)
    bob.ok("fetch", "origin")
    (second,) = [d["id"] for d in json.loads(bob.ok("list", "--remote", "origin", "--json")) if d["seq"] == 2]
    bob.write("mine.txt", "bob's own work\n")
    bob.ok("undo", second, "--yes")
    bob.ok("snap", "-m", "two")
    bob.ok("undo", "1", "--yes")  # bob's own #1, never alice's
    safety = [d["message"] for d in json.loads(bob.ok("list", "--safety", "--json")) if d["trigger"] == "pre-rewind"]
    assert safety == ["pre-rewind to #1", f"pre-rewind to {second}"]
    assert f"rewind:     safety checkpoint before restoring {second}\n" in bob.ok("show", "1")
    assert "rewind:     safety checkpoint before restoring #1\n" in bob.ok("show", "3")


def test_unknown_fetched_ids_are_one_line_errors(alice: Workdir, bare: Path, tmp_path: Path) -> None:
    alice.ok("push", "origin")
    bob = clone(tmp_path, "bob", bare)
    bob.ok("fetch", "origin")
    (first,) = [d["id"] for d in json.loads(bob.ok("list", "--remote", "origin", "--json")) if d["seq"] == 1]
    for ident, words in ((first.rsplit("/", 1)[0] + "/99", "has no #99"), ("origin/nobody/1", "nothing fetched"),
                         ("elsewhere/x/1", "nothing fetched")):
        run = bob.rewind("show", ident)
        assert run.returncode == 1 and words in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_two_clones_pushing_under_one_name_at_once_both_land(project: Workdir, bare: Path, tmp_path: Path) -> None:
    one, two = clone(tmp_path, "one", bare), clone(tmp_path, "two", bare)
    for w, word in ((one, "first"), (two, "second")):
        w.write("file.txt", f"{word}\n")
        w.ok("snap", "-m", f"{word} clone's work")
    same = {"GIT_REWIND_SYNC_NAME": "laptop"}
    runs = {}

    def push(w: Workdir) -> None:
        runs[w.path.name] = w.rewind("push", "origin", env=same)

    for round in range(2):  # the ref is created at once, then moved at once
        if round:
            for w in (one, two):
                w.write("file.txt", "again\n")
                w.ok("snap", "-m", "again")
        threads = [threading.Thread(target=push, args=(w,)) for w in (one, two)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(r.returncode == 0 for r in runs.values()), {k: r.stderr for k, r in runs.items()}
    assert refs(bare) == ["refs/notes/rewind-share/laptop"]
    third = clone(tmp_path, "third", bare)
    third.ok("fetch", "origin")
    messages = {d["message"] for d in json.loads(third.ok("list", "--remote", "origin", "--json"))}
    assert messages == {"first clone's work", "second clone's work", "again"}
    assert len(json.loads(third.ok("list", "--remote", "origin", "--json"))) == 4
    # Both numbered #1 on their own clone: the id says so instead of picking one.
    run = third.rewind("show", "origin/laptop/1")
    assert run.returncode == 1 and "ambiguous" in run.stderr


def test_two_machines_write_two_refs(project: Workdir, bare: Path, tmp_path: Path) -> None:
    one, two = clone(tmp_path, "one", bare), clone(tmp_path, "two", bare)
    for w in (one, two):
        w.write("file.txt", f"{w.path.name}\n")
        w.ok("snap", "-m", "work")
        w.ok("push", "origin", env={"GIT_REWIND_SYNC_NAME": w.path.name})
    assert refs(bare) == ["refs/notes/rewind-share/one", "refs/notes/rewind-share/two"]
    one.ok("fetch", "origin")
    assert {d["id"] for d in json.loads(one.ok("list", "--remote", "origin", "--json"))} == {"origin/one/1",
                                                                                           "origin/two/1"}


def test_notes_merge_field_by_field_by_when_each_changed() -> None:
    from git_rewind.sharing.sync import merge_notes

    base = {"seq": 1, "created": "2026-01-01T00:00:00Z", "message": "m", "tags": [], "summary": None}
    ours = {**base, "tags": ["a"], "shared": {"by": "x", "times": {"tags": "2026-01-03T00:00:00Z"}}}
    theirs = {**base, "tags": ["b"], "summary": "later", "shared": {"by": "x", "times": {
        "tags": "2026-01-02T00:00:00Z", "summary": "2026-01-04T00:00:00Z"}}}
    merged = merge_notes(ours, theirs)
    assert merged["tags"] == ["a"]  # ours changed it last
    assert merged["summary"] == "later"  # theirs changed it, ours never did
    assert merged["message"] == "m"
    assert merged["shared"]["times"] == {"tags": "2026-01-03T00:00:00Z", "summary": "2026-01-04T00:00:00Z"}
    assert merge_notes(theirs, ours)["tags"] == ["a"]  # the same either way round


def test_bad_remotes_are_one_line_errors_and_change_nothing(alice: Workdir, tmp_path: Path) -> None:
    before = alice.git("for-each-ref")
    for remote, words in (("nowhere", "no such remote"), ("origin;touch pwned", "no such remote"),
                          ("$(touch pwned)", "no such remote"), ("http://127.0.0.1:9/x.git", "push to"),
                          (str(tmp_path / "missing.git"), "push to")):
        run = alice.rewind("push", remote)
        assert run.returncode == 1 and words in run.stderr, (remote, run.stderr)
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr
        fetch = alice.rewind("fetch", remote)
        assert fetch.returncode == 1 and len(fetch.stderr.strip().splitlines()) == 1, fetch.stderr
    assert not (alice.path / "pwned").exists()
    after = alice.git("for-each-ref")
    assert {line for line in after.splitlines() if "rewind-share" not in line} == set(before.splitlines())
    assert "error" in json.loads(alice.ok("status", "--json"))["sync"]
    assert "the last push failed" in alice.ok("status")


def _plant(bare: Path, env: dict[str, str], note: str, tmp_path: Path, name: str = "mallory") -> None:
    """A copy on BARE whose one note is NOTE, shaped as copies are (the annotated commit a parent of the notes
    commit, so it travels with it): what anyone with push access could put there."""
    work = tmp_path / "forge"
    subprocess.run(["git", "init", "-q", str(work)], env=env, check=True)
    (work / "f").write_text("x\n")

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=work, env=env, check=True, capture_output=True, text=True)
        return done.stdout.strip()

    git("add", "f")
    git("commit", "-qm", "x")
    ref = f"refs/notes/rewind-share/{name}"
    git("notes", "--ref", ref, "add", "-m", note)
    machine = git("commit-tree", f"{ref}^{{tree}}", "-p", ref, "-p", "HEAD", "-m", "forged")
    git("update-ref", ref, machine)
    git("push", "-q", str(bare), ref)


@pytest.mark.parametrize("note, words", [
    ("this is not json", "not a git-rewind note"),
    (json.dumps({"seq": 1, "session": "s", "paths": ["../../etc/passwd"]}), "outside the repository"),
    (json.dumps({"seq": 1, "session": "s", "paths": ["/etc/passwd"]}), "outside the repository"),
    (json.dumps({"seq": 1, "session": "s", "paths": [".git/hooks/post-checkout"]}), "outside the repository"),
    (json.dumps({"seq": 1, "session": "../s", "paths": []}), "no valid session"),
    (json.dumps({"seq": 1, "session": "s", "shared": {"transcript": "/home/x/.bashrc"}}), "transcript"),
])
def test_a_fetched_copy_that_is_not_sound_is_refused_whole(alice: Workdir, bare: Path, tmp_path: Path,
                                                           env: dict[str, str], note: str, words: str) -> None:
    alice.ok("push", "origin")
    _plant(bare, env, note, tmp_path)
    bob = clone(tmp_path, "bob", bare)
    run = bob.rewind("fetch", "origin")
    assert run.returncode == 1 and words in run.stderr and "nothing was fetched" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert bob.git("for-each-ref") == ""  # neither the bad copy nor the good one, and no staging refs left


def test_gc_keeps_fetched_checkpoints_unless_told(alice: Workdir, bare: Path, tmp_path: Path) -> None:
    alice.ok("push", "origin")
    bob = clone(tmp_path, "bob", bare)
    bob.write("x.txt", "x\n")
    bob.ok("snap", "-m", "bob's")
    bob.ok("fetch", "origin")
    bob.ok("gc", "--keep", "0", "--older-than", "0")
    assert len(json.loads(bob.ok("list", "--remote", "origin", "--json"))) == 2
    assert "would drop" in bob.ok("gc", "--remote", "origin", "--dry-run")
    assert len(json.loads(bob.ok("list", "--remote", "origin", "--json"))) == 2
    out = bob.ok("gc", "--remote", "origin")
    assert "dropped what was fetched from origin" in out
    assert json.loads(bob.ok("list", "--remote", "origin", "--json")) == []


def test_after_a_purge_only_push_prune_replaces_the_copy(alice: Workdir, bare: Path) -> None:
    alice.ok("push", "origin")
    (ref,) = refs(bare)
    assert b"hello, world" in objects(bare)
    alice.write("src/app.py", "print('hi')\n")  # the file is not left on disk to be captured again
    alice.ok("purge", "--text", "hello, world")
    run = alice.rewind("push", "origin")
    assert run.returncode == 1 and "push --prune" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    old = _tip(bare, ref)
    assert "pushed" in alice.ok("push", "--prune", "origin")
    new = _tip(bare, ref)
    assert new != old and subprocess.run(["git", "merge-base", "--is-ancestor", old, new], cwd=bare).returncode == 1
    assert "nothing new" in alice.ok("push", "origin")
    subprocess.run(["git", "gc", "-q", "--prune=now"], cwd=bare, check=True)  # what the server keeps
    assert b"hello, world" not in objects(bare)

def test_with_conversation_the_transcript_goes_redacted(project: Workdir, bare: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from git_rewind.base.repo import Repo
    from git_rewind.sharing.share import transcript_of
    from git_rewind.store.checkpoints import lookup_fetched

    project.git("remote", "add", "origin", str(bare))
    agent = Agent(project)
    Path(agent.transcript).parent.mkdir(parents=True, exist_ok=True)  # the agent's own file, as it writes it
    Path(agent.transcript).write_text(json.dumps({
        "type": "user", "uuid": "u1", "parentUuid": None, "sessionId": agent.session, "cwd": str(project.path),
        "message": {"role": "user", "content": f"use the key {AWS} to deploy"}}) + "\n")
    agent.start()
    agent.prompt(f"use the key {AWS} to deploy")
    project.write("src/app.py", "print('deployed')\n" * 20)
    agent.stop()
    out = project.ok("push", "origin", "--with-conversation")
    assert "1 transcript" in out
    held = objects(bare)
    assert AWS.encode() not in held
    assert "nothing new to push" in project.ok("push", "origin", "--with-conversation")  # unchanged: not sent
    with open(agent.transcript, "a") as fh:  # the session goes on
        fh.write(json.dumps({"type": "user", "uuid": "u2", "parentUuid": "u1", "sessionId": agent.session,
                             "cwd": str(project.path), "message": {"role": "user", "content": "and more"}}) + "\n")
    assert "pushed 1 transcript" in project.ok("push", "origin", "--with-conversation")
    bob = clone(tmp_path, "bob", bare)
    bob.ok("fetch", "origin")
    (item,) = json.loads(bob.ok("list", "--remote", "origin", "--json", "-n", "1"))
    assert item["shared"]["transcript"] == f"transcripts/{agent.session}.jsonl"
    for key, value in bob.env.items():
        monkeypatch.setenv(key, value)
    repo = Repo.discover(str(bob.path))
    raw = transcript_of(repo, lookup_fetched(repo, item["id"]))
    assert raw is not None and b"[REDACTED:" in raw and AWS.encode() not in raw


def test_a_fetch_that_brings_only_transcripts_or_notes_says_so(project: Workdir, bare: Path, tmp_path: Path) -> None:
    project.git("remote", "add", "origin", str(bare))
    agent = Agent(project)
    Path(agent.transcript).parent.mkdir(parents=True, exist_ok=True)
    line = {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": agent.session, "cwd": str(project.path),
            "message": {"role": "user", "content": "add a greeting"}}
    Path(agent.transcript).write_text(json.dumps(line) + "\n")
    agent.prompt("add a greeting")
    project.write("src/app.py", "print('greeting')\n" * 20)
    agent.stop()
    project.ok("push", "origin")
    bob = clone(tmp_path, "bob", bare)
    assert "2 checkpoints (2 new)" in bob.ok("fetch", "origin")
    assert "2 checkpoints (nothing new)" in bob.ok("fetch", "origin")
    assert "pushed 1 transcript" in project.ok("push", "origin", "--with-conversation")  # no new checkpoint
    assert "2 checkpoints (1 transcript)" in bob.ok("fetch", "origin")
    with open(agent.transcript, "a") as fh:  # the conversation goes on
        fh.write(json.dumps({**line, "uuid": "u2", "parentUuid": "u1"}) + "\n")
    project.ok("tag", "1", "reviewed")
    project.ok("push", "origin", "--with-conversation")
    assert "2 checkpoints (1 updated note, 1 transcript)" in bob.ok("fetch", "origin")
    assert "2 checkpoints (nothing new)" in bob.ok("fetch", "origin")


def test_sync_auto_pushes_after_a_turn_in_the_background(project: Workdir, bare: Path) -> None:
    import time

    project.git("remote", "add", "origin", str(bare))
    project.ok("config", "set", "sync_auto", "true")
    assert "sync_remote is not set" in project.ok("status")  # on, but with nowhere to push: said, not silent
    project.ok("config", "set", "sync_remote", "origin")
    agent = Agent(project)
    agent.start()
    agent.prompt("do the thing")
    project.write("src/app.py", "print('done')\n" * 20)
    agent.stop()
    deadline = time.monotonic() + 60
    while not refs(bare) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert refs(bare), (project.path / ".git/rewind/share/auto-push.log").read_text()
    while not json.loads(project.ok("status", "--json"))["sync"].get("last_ok") and time.monotonic() < deadline:
        time.sleep(0.2)
    status = json.loads(project.ok("status", "--json"))["sync"]
    assert status["auto"] is True and status["last_ok"] and status["error"] is None
    assert "after each turn" in project.ok("status")


def test_an_agent_lists_and_reads_fetched_checkpoints_through_mcp(alice: Workdir, bare: Path, tmp_path: Path) -> None:
    from helpers.mcpclient import session

    alice.ok("push", "origin")
    bob = clone(tmp_path, "bob", bare)
    bob.ok("fetch", "origin")

    def story(call: object) -> None:
        listed = call("checkpoint_list", remote="origin")  # type: ignore[operator]
        ids = [c["id"] for c in listed.data["checkpoints"]]
        assert len(ids) == 2 and all(i.startswith("origin/alice-") for i in ids)
        shown = call("checkpoint_show", checkpoint_id=ids[0])  # type: ignore[operator]
        assert not shown.error and shown.data["id"] == ids[0] and "greet the world" in shown.text
        assert AWS not in listed.text and AWS not in shown.text
        mine = call("checkpoint_list")  # type: ignore[operator]
        assert mine.data["checkpoints"] == []  # local stays local
        bad = call("checkpoint_list", remote="nowhere")  # type: ignore[operator]
        assert bad.error and "no such remote" in bad.text

    session(bob, story)


def test_push_and_fetch_between_sha256_repositories(tmp_path: Path, env: dict[str, str]) -> None:
    remote = tmp_path / "r.git"
    subprocess.run(["git", "init", "-q", "--bare", "--object-format=sha256", str(remote)], env=env, check=True)
    sides = []
    for name in ("a", "b"):
        subprocess.run(["git", "init", "-q", "--object-format=sha256", str(tmp_path / name)], env=env, check=True)
        sides.append(Workdir(tmp_path / name, env))
    a, b = sides
    a.write("f.txt", "one\n")
    a.ok("snap", "-m", f"one {AWS}")
    a.write("f.txt", "one\ntwo\n")
    a.ok("snap", "-m", "two")
    a.ok("push", str(remote))
    assert AWS.encode() not in objects(remote)
    b.ok("fetch", str(remote))
    listed = json.loads(b.ok("list", "--remote", str(remote), "--json"))
    assert [len(d["commit"]) for d in listed] == [64, 64]
    assert "+two" in b.ok("diff", listed[1]["id"], listed[0]["id"])


GHP = "ghp_R8f3kQz1Lm0XcV7bN2pW9yT4sA6dJ5hG3uE1"


def test_a_path_holding_a_secret_is_left_out_everywhere_a_path_goes(project: Workdir, bare: Path,
                                                                    tmp_path: Path) -> None:
    """A file (and a folder) whose name holds a token: out of every pushed tree, note (`paths`, `origins`,
    `skipped`, `shared.left_out`) and message, said so with the name redacted; unchanged later, it stays out."""
    w = project
    w.git("remote", "add", "origin", str(bare))
    w.write(f"backup-{GHP}.txt", "nothing secret inside\n")
    w.write(f"cache/{GHP}/data.json", "{}\n")
    w.write(f"link-{GHP}", "")
    (w.path / f"link-{GHP}").unlink()
    (w.path / f"link-{GHP}").symlink_to("src/app.py")
    w.ok("snap", "-m", "one")
    out = w.ok("push", "origin")
    assert out.count("left out: ") == 3 and "[REDACTED:GitHub Token]" in out and GHP not in out
    assert "left out: backup-[REDACTED:GitHub Token].txt (its name holds a GitHub Token)" in out
    w.write("src/app.py", "print('two')\n")
    w.ok("snap", "-m", "two")  # the token-named files unchanged: still out, though only redacted in the note
    (w.path / f"backup-{GHP}.txt").unlink()
    w.ok("snap", "-m", f"three: removed backup-{GHP}.txt")  # its path in this note's paths and origins
    out = w.ok("push", "origin")
    assert "pushed 2 new checkpoints" in out and GHP not in out
    held = objects(bare)
    assert GHP.encode() not in held  # no tree entry, note key or value, message
    assert b"[REDACTED:GitHub Token]" in held
    (ref,) = refs(bare)
    noted = subprocess.run(["git", "notes", "--ref", ref, "list"], cwd=bare, capture_output=True, text=True,
                           check=True).stdout.split()[1::2]
    assert len(noted) == 3
    for copy in noted:
        listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", copy], cwd=bare, capture_output=True,
                                text=True, check=True).stdout.split()
        assert "src/app.py" in listed and not [p for p in listed if "ghp_" in p or "cache/" in p], listed
    bob = clone(tmp_path, "bob", bare)  # the copy is sound: a teammate fetches it and reads the notes
    assert "3 checkpoints" in bob.ok("fetch", "origin")
    fetched = bob.ok("list", "--remote", "origin")
    assert "src/app.py" in fetched and GHP not in fetched
    # What stays local is as it was: the checkpoints keep the files.
    (session,) = w.git("for-each-ref", "--format=%(refname)", "refs/rewind/").split()
    assert f"backup-{GHP}.txt" in w.git("ls-tree", "-r", "--name-only", session + "~1")


def test_a_secret_encoded_in_base64_is_left_out_as_the_plain_one_is(project: Workdir, bare: Path) -> None:
    import base64

    line = 'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8vLk2Tn1"\n'
    encoded = base64.b64encode(line.encode()).decode()
    project.git("remote", "add", "origin", str(bare))
    project.write("deploy/plain.txt", line)
    project.write("deploy/encoded.txt", f"# the CI secret, encoded\nsecret: {encoded}\n")
    project.ok("snap", "-m", f"store {encoded} in CI")
    out = project.ok("push", "origin")
    assert "left out: deploy/plain.txt (detect-secrets: AWS Access Key on line 1)" in out
    assert "left out: deploy/encoded.txt (detect-secrets: AWS Access Key (base64) on line 2)" in out
    assert "redacted: 2 AWS Access Key (base64)" in out  # the message, in the commit and in the note
    held = objects(bare)
    assert encoded.encode() not in held and b"wJalrXUtnFEMI" not in held


def test_a_copy_made_by_an_older_scanner_is_looked_at_again(project: Workdir, bare: Path) -> None:
    """Copies are incremental: a file an older scanner let through (a token in its name, before names were
    scanned) would stay in every later copy while it is unchanged. A copy whose note was made by another
    scanner version is not trusted: the next copy of its session looks at every file again."""
    w = project
    w.git("remote", "add", "origin", str(bare))
    w.write(f"backup-{GHP}.txt", "nothing secret inside\n")
    w.ok("snap", "-m", "one")
    w.ok("push", "--allow-secrets", "origin")  # the file goes, as an older scanner would have let it
    share = w.path / ".git" / "rewind" / "share"
    (copies,) = share.glob("*.copies")
    fields = copies.read_text().split()
    note = json.loads(w.git("cat-file", "blob", fields[5]))
    note["shared"].pop("scanner", None)  # what an older push wrote had none
    older = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=w.path, env=w.env, check=True, text=True,
                           input=json.dumps(note), capture_output=True).stdout.strip()
    copies.write_text(copies.read_text().replace(fields[5], older))
    w.write("src/app.py", "print('two')\n")
    w.ok("snap", "-m", "two")
    out = w.ok("push", "origin")
    assert "left out: backup-[REDACTED:GitHub Token].txt (its name holds a GitHub Token)" in out
    (ref,) = refs(bare)
    newest = subprocess.run(["git", "ls-tree", "-r", "--name-only", ref + "^2"], cwd=bare, capture_output=True,
                            text=True, check=True).stdout.split()
    assert "src/app.py" in newest and not [p for p in newest if "ghp_" in p]


def test_commit_authorship_notes_go_redacted_and_a_teammate_blames_with_them(project: Workdir, bare: Path,
                                                                            tmp_path: Path) -> None:
    """The authorship notes of the person's commits (install --git-hooks) go to the remote's one
    refs/notes/rewind-authorship with prompts redacted as the checkpoints' notes are; a teammate's fetch lets them
    in for the commits it has, and its blame then names the agent and the redacted prompt."""
    w = project
    w.git("remote", "add", "origin", str(bare))
    w.ok("install", "--git-hooks")
    agent = Agent(w, env={"GIT_REWIND_ANTI_SPAM_SECONDS": "0", "GIT_REWIND_MIN_CHANGE_CHARS": "0"})
    agent.prompt(f"use the key {AWS} to deploy", prompt_id="p1")
    agent.edit("src/app.py", "print('hello')", "deploy()\nprint('hello')")
    w.write("src/app.py", "deploy()\nprint('hello')\n")
    agent.stop()
    w.git("commit", "-qam", "deploy")
    made = w.git("rev-parse", "HEAD").strip()
    local_note = w.git("notes", "--ref", "rewind-authorship", "show", made)
    assert AWS in local_note  # here, the note keeps the prompt as typed
    w.git("push", "-q", "origin", "main")
    out = w.ok("push", "origin")
    assert "pushed 1 commit authorship note (refs/notes/rewind-authorship)" in out
    assert "refs/notes/rewind-authorship" in refs(bare)
    held = objects(bare)
    assert AWS.encode() not in held
    shared = json.loads(subprocess.run(["git", "notes", "--ref", "rewind-authorship", "show", made], cwd=bare,
                                       capture_output=True, text=True, check=True).stdout)
    assert shared["authors"][0]["prompt"].startswith("use the key [REDACTED:")
    assert shared["authors"][0]["checkpoint"] == json.loads(local_note)["authors"][0]["checkpoint"]
    assert "authorship" not in w.ok("push", "origin")  # nothing new the second time
    assert w.git("notes", "--ref", "rewind-authorship", "show", made) == local_note  # the local note is untouched

    bob = clone(tmp_path, "bob", bare)
    bob.git("fetch", "-q", "origin", "main")
    bob.git("checkout", "-q", "-b", "main", "FETCH_HEAD")
    out = bob.ok("fetch", "origin")
    assert "fetched 1 commit authorship note" in out
    assert json.loads(bob.git("notes", "--ref", "rewind-authorship", "show", made)) == shared
    bob.ok("snap", "-m", "bob starts")  # blame reads a work tree with checkpoints
    lines = json.loads(bob.ok("blame", "--json", "src/app.py"))
    assert [(line["origin"], line.get("commit")) for line in lines][0] == ("agent", made)
    assert lines[0]["prompt"].startswith("use the key [REDACTED:") and lines[0]["agent"] == "claude-code"
    assert bob.ok("fetch", "origin").count("authorship") == 0  # nothing new: said nothing
