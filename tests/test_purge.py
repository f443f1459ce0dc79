"""`git rewind purge`: a secret that got captured (a file, or a text in files, prompts, messages and transcript
backups) leaves every local checkpoint and the object store, and nothing else changes: every other byte of
every checkpoint, the seqs, sessions and dates, the person's index, HEAD and branches."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from helpers.samples import CLAUDE_SAMPLES
from helpers.session import MAIN, PROMPT_ID, Agent
from helpers.workdir import Workdir

SECRET = "sk-live-7f3a9c2e51d04b8b"
EDIT_CALL = "toolu_mock_601f38abdb2f4e42b38d"  # the recorded Edit's tool_use id (tests/test_undo.py)
NO_LIMITS = {"GIT_REWIND_ANTI_SPAM_SECONDS": "0", "GIT_REWIND_MIN_CHANGE_CHARS": "0"}


def notes(w: Workdir) -> dict[int, dict[str, Any]]:
    """Every checkpoint's note, with its commit, by seq."""
    out = {}
    for row in w.git("notes", "--ref=rewind", "list").splitlines():
        _blob, commit = row.split()
        note = json.loads(w.git("notes", "--ref=rewind", "show", commit))
        out[note["seq"]] = {**note, "commit": commit}
    return out


def files(w: Workdir, commit: str) -> dict[str, str]:
    """path → mode and blob of every file of a checkpoint."""
    out = {}
    for line in w.git("ls-tree", "-r", "--full-tree", commit).splitlines():
        meta, path = line.split("\t", 1)
        mode, _kind, oid = meta.split()
        out[path] = f"{mode} {oid}"
    return out


def holding(w: Workdir, text: str) -> set[str]:
    """The objects of the repository whose content holds TEXT (read through `cat-file --batch-all-objects`)."""
    out = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=w.path, env=w.env,
                         capture_output=True, check=True).stdout
    found, pos = set(), 0
    while pos < len(out):
        end = out.index(b"\n", pos)
        oid, _kind, size = out[pos:end].split()
        body = out[end + 1:end + 1 + int(size)]
        if text.encode() in body:
            found.add(oid.decode())
        pos = end + 1 + int(size) + 1
    return found


def exists(w: Workdir, oid: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", oid], cwd=w.path, env=w.env).returncode == 0


def test_a_captured_file_leaves_every_checkpoint_of_every_session_and_work_tree(project: Workdir,
                                                                                tmp_path: Path) -> None:
    w = project
    w.write("keys/prod.pem", f"-----BEGIN KEY-----\n{SECRET}\n")
    for i in range(3):
        w.write("src/app.py", f"print({i})\n")
        w.ok("snap", "--session", "alpha", "-m", f"alpha {i}")
    w.git("repack", "-adq")  # some checkpoints packed, the later ones loose
    w.git("commit-graph", "write", "--reachable")
    for i in range(3):
        w.write("notes.txt", f"work {i}\n")
        w.ok("snap", "--session", "beta", "-m", f"beta {i}")
    linked = tmp_path / "linked"
    w.git("worktree", "add", "-q", str(linked), "-b", "feature")
    lw = Workdir(linked, w.env)
    lw.write("keys/prod.pem", f"{SECRET}\n")
    lw.write("other.txt", "linked work\n")
    lw.ok("snap", "--session", "alpha", "-m", "linked")
    w.write("src/app.py", "print('after')\n")
    w.ok("snap", "--session", "alpha", "-m", "alpha again")
    w.wait_for_repack()
    before = notes(w)
    trees = {seq: files(w, note["commit"]) for seq, note in before.items()}
    dates = {seq: w.git("log", "-1", "--format=%ct %an %cn %s", note["commit"]) for seq, note in before.items()}
    user = w.user_state()
    linked_index = (w.path / ".git" / "worktrees" / "linked" / "index").read_bytes()
    assert holding(w, SECRET)

    run = w.rewind("purge", "--path", "../keys", cwd=w.path / "src")  # relative to the current directory
    assert run.returncode == 0, run.stderr
    mentions = sum(1 for n in before.values() if "keys" in json.dumps([n["paths"], n.get("origins")]))
    assert f"purged keys from 8 checkpoints (#1..#8): 8 paths removed, {mentions} notes" in run.stdout
    assert f"still on disk: {w.path / 'keys'}" in run.stdout and f"still on disk: {linked / 'keys'}" in run.stdout

    after = notes(w)
    assert sorted(after) == sorted(before)
    for seq, note in after.items():
        old = before[seq]
        assert files(w, note["commit"]) == {p: v for p, v in trees[seq].items() if not p.startswith("keys/")}
        assert w.git("log", "-1", "--format=%ct %an %cn %s", note["commit"]) == dates[seq]
        assert {**note, "commit": None, "paths": None, "origins": None} == \
            {**old, "commit": None, "paths": None, "origins": None}
        assert note["paths"] == [p for p in old["paths"] if not p.startswith("keys")]
        assert note.get("origins") == ({p: o for p, o in old["origins"].items() if not p.startswith("keys")}
                                       if "origins" in old else None)
        if "keys/prod.pem" in trees[seq]:
            assert not exists(w, old["commit"])
            assert not exists(w, trees[seq]["keys/prod.pem"].split()[1])
    assert holding(w, SECRET) == set()
    assert w.user_state() == user
    assert (w.path / ".git" / "worktrees" / "linked" / "index").read_bytes() == linked_index
    w.fsck()

    shutil.rmtree(w.path / "keys")
    w.write("notes.txt", "changed\n")
    assert w.ok("snap", "--session", "alpha").startswith("#9 ")  # the private index named the purged blob
    assert "keys/prod.pem" not in files(w, "refs/rewind/alpha")
    w.ok("undo", "2", "--code", "--yes")
    assert (w.path / "src" / "app.py").read_text() == "print(1)\n" and not (w.path / "keys").exists()
    assert w.user_state()[0] == user[0]
    w.fsck()


def _claude_with_secret(w: Workdir) -> Agent:
    """tests/test_undo.py's recorded Claude Code session, its prompt carrying SECRET (in the payload and the
    transcript); then `undo 2 --full`, whose safety checkpoint attaches the transcript as it was."""
    agent = Agent(w, session=MAIN, env=NO_LIMITS)
    Path(agent.transcript).parent.mkdir(parents=True, exist_ok=True)
    recorded = (CLAUDE_SAMPLES / "transcript_main_print_mode.jsonl").read_text()
    assert "make hello" in recorded
    Path(agent.transcript).write_text(recorded.replace("make hello", f"make hello with {SECRET}"))
    assert agent.prompt(f"make hello with {SECRET}", prompt_id=PROMPT_ID)["action"] == "checkpoint"
    w.write("hello.py", "print('hello')\n")
    decision = agent.send("PreToolUse", tool_name="Edit", tool_use_id=EDIT_CALL, prompt_id=PROMPT_ID,
                          tool_input={"file_path": str(w.path / "hello.py"),
                                      "old_string": "print('hello')", "new_string": "print('hello, world')"})
    assert decision["action"] == "checkpoint"
    w.write("hello.py", "print('hello, world')\n")
    run = w.rewind("undo", "2", "--full", "--yes")
    assert run.returncode == 0, run.stderr
    return agent


def test_a_text_leaves_prompts_messages_files_and_transcript_backups(agent_project: Workdir) -> None:
    w = agent_project
    w.write("docs/setup.md", f"export TOKEN={SECRET}\n")  # committed: the person's own history holds it
    w.commit_all("setup notes")
    main = w.git("rev-parse", "main")
    agent = _claude_with_secret(w)
    w.ok("snap", "--session", "manual", "-m", f"rotate {SECRET} soon")
    before = notes(w)
    safety = next(n for n in before.values() if n["trigger"] == "pre-rewind")
    backup = safety["rewind"]["conversation"]["backup"]
    assert SECRET in w.git("show", f"{safety['commit']}^2:{backup}")
    assert SECRET in (before[1]["prompt"] or "")
    trees = {seq: files(w, note["commit"]) for seq, note in before.items()}
    user = w.user_state()

    dry = w.rewind("purge", "--text", SECRET, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would purge the text from 4 checkpoints (#1..#4)" in dry.stdout
    assert notes(w) == before and holding(w, SECRET) - set(w.git("rev-list", "--objects", "--no-object-names",
                                                                 "main").split())

    run = w.rewind("purge", "--text", SECRET)
    assert run.returncode == 0, run.stderr
    assert "purged the text from 4 checkpoints (#1..#4)" in run.stdout
    assert "2 messages" in run.stdout and "1 transcript backup" in run.stdout  # #1 names its prompt
    assert "still reachable from refs/heads/main: committed history is not rewritten by purge" in run.stdout
    assert f"still in the agent's transcript {agent.transcript}" in run.stdout
    assert f"the text is still in {w.path / 'docs' / 'setup.md'}" in run.stdout
    assert "took the text out of 2 state files" in run.stdout  # the open turn and the session state
    private = [p for p in (w.path / ".git" / "rewind").rglob("*") if p.is_file()]
    assert [p for p in private if SECRET.encode() in p.read_bytes()] == []

    after = notes(w)
    assert sorted(after) == sorted(before)
    assert after[1]["prompt"] == "make hello with [PURGED]"
    assert "[PURGED]" in w.git("log", "-1", "--format=%s", after[4]["commit"])
    purged_safety = next(n for n in after.values() if n["trigger"] == "pre-rewind")
    record = purged_safety["rewind"]
    restored = w.git("show", f"{record['to_commit']}:hello.py")
    assert restored == "print('hello')\n"  # to_commit follows the rewritten checkpoint
    backed_up = w.git("cat-file", "blob", record["conversation"]["backup_blob"])
    assert SECRET not in backed_up and "make hello with [PURGED]" in backed_up
    assert backed_up == w.git("show", f"{purged_safety['commit']}^2:{backup}")
    for seq, note in after.items():
        assert {p: v for p, v in files(w, note["commit"]).items() if p != "docs/setup.md"} == \
            {p: v for p, v in trees[seq].items() if p != "docs/setup.md"}
        assert w.git("show", f"{note['commit']}:docs/setup.md") == "export TOKEN=[PURGED]\n"

    # Only what the branch holds still holds the secret; the branch, the index and HEAD are as they were.
    branch = set(w.git("rev-list", "--objects", "--no-object-names", "main").split())
    assert holding(w, SECRET) and holding(w, SECRET) <= branch
    assert w.git("rev-parse", "main") == main and SECRET in w.git("show", "main:docs/setup.md")
    assert w.user_state() == user
    w.fsck()

    again = w.rewind("purge", "--text", SECRET)
    assert again.returncode == 0 and "nothing to purge" in again.stdout and "nothing changed" in again.stdout
    assert notes(w) == after
    assert w.ok("redo", "--yes")  # the redo reads the purged backup
    w.fsck()


def test_a_dry_run_changes_nothing(project: Workdir) -> None:
    project.write("token.txt", f"{SECRET}\n")
    project.ok("snap", "-m", "one")
    project.ok("snap", "-m", f"two {SECRET}", "--allow-empty")
    project.ok("list")  # any reader of the notes writes the notes cache (notecache.py): it is there before
    refs = project.git("for-each-ref")
    found = holding(project, SECRET)
    listing = sorted(p.name for p in (project.path / ".git" / "rewind").rglob("*"))
    out = project.ok("purge", "--path", "token.txt", "--text", SECRET, "--dry-run")
    assert "would purge token.txt, the text from 2 checkpoints (#1..#2)" in out
    assert project.git("for-each-ref") == refs and holding(project, SECRET) == found
    assert sorted(p.name for p in (project.path / ".git" / "rewind").rglob("*")) == listing


def test_paths_outside_the_repository_are_refused_in_one_line(project: Workdir, tmp_path: Path) -> None:
    project.ok("snap")
    for path in ("../elsewhere", str(tmp_path), ".git/config"):
        run = project.rewind("purge", "--path", path)
        assert run.returncode == 1 and len(run.stderr.strip().splitlines()) == 1, run.stderr
        assert "outside the working tree" in run.stderr
    run = project.rewind("purge")
    assert run.returncode == 2 and "--path PATH or --text TEXT" in run.stderr


def test_a_pushed_copy_is_dropped_and_push_prune_replaces_it(project: Workdir, tmp_path: Path) -> None:
    bare = tmp_path / "shared.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], env=project.env, check=True)
    project.git("remote", "add", "origin", str(bare))
    project.write("config/db.txt", f"password = {SECRET}\n")  # nothing a scanner knows: it went out
    project.ok("snap", "-m", "one")
    project.write("src/app.py", "print('two')\n")
    project.ok("snap", "-m", "two")
    project.ok("push", "origin")
    (ref,) = project.git("for-each-ref", "--format=%(refname)", "refs/notes/rewind-share/").split()

    out = project.ok("purge", "--path", "config")
    assert "purged config from 2 checkpoints (#1..#2)" in out
    assert "`git rewind push --prune` replaces it on the remote" in out
    assert project.git("for-each-ref", "refs/notes/rewind-share/") == ""
    assert holding(project, SECRET) == set()  # the local copy's objects went too
    project.fsck()

    refused = project.rewind("push", "origin")
    assert refused.returncode == 1 and "push --prune" in refused.stderr
    project.ok("push", "--prune", "origin")
    sent = subprocess.run(["git", "rev-list", "--objects", "--no-object-names", ref], cwd=bare,
                          capture_output=True, text=True, check=True).stdout.split()
    contents = subprocess.run(["git", "cat-file", "--batch"], cwd=bare, input=("\n".join(sent) + "\n").encode(),
                              capture_output=True, check=True).stdout
    assert SECRET.encode() not in contents
    assert "nothing to purge" in project.ok("purge", "--path", "config")


def test_what_an_earlier_gc_dropped_goes_and_the_persons_own_unreachable_objects_stay(project: Workdir) -> None:
    w = project
    w.write("token.txt", f"{SECRET}\n")
    w.ok("snap", "-m", "captured")
    (w.path / "token.txt").unlink()
    w.ok("snap", "-m", "gone again")
    w.ok("gc", "--keep", "1")  # #1 dropped: unreachable, but in .git/objects until git prunes it
    assert holding(w, SECRET)
    mine = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=w.path, env=w.env,
                          input=b"my own dangling work\n", capture_output=True).stdout.decode().strip()
    tree = w.git("write-tree").strip()
    dangling = w.git("commit-tree", tree, "-m", "a commit nothing points to").strip()
    head = w.git("rev-parse", "HEAD").strip()

    out = w.ok("purge", "--text", SECRET)
    assert "no checkpoint holds the text; deleted" in out and "an earlier gc's" in out
    assert holding(w, SECRET) == set()
    assert exists(w, mine) and exists(w, dangling)  # not git-rewind's: a purge never deletes them
    assert w.git("rev-parse", "HEAD").strip() == head
    assert "nothing to purge" in w.ok("purge", "--text", SECRET)
    w.fsck()


def test_a_kept_pack_is_left_and_named(project: Workdir) -> None:
    project.write("token.txt", f"{SECRET}\n")
    project.ok("snap", "-m", "captured")
    project.git("repack", "-adq")
    (pack,) = (project.path / ".git" / "objects" / "pack").glob("*.pack")
    pack.with_suffix(".keep").write_text("the person keeps this one\n")
    out = project.ok("purge", "--path", "token.txt")
    assert f"left in {pack.name}: a .keep file asks that it is never rewritten" in out
    assert pack.exists() and "reflog" not in out
    project.fsck()


def test_a_purge_killed_at_any_moment_leaves_a_clean_repository_and_the_next_one_finishes(
        project: Workdir, tmp_path: Path) -> None:
    """kill -9 of the whole process group at moments spread over a purge, on a copy each time: `git fsck` is
    clean, every checkpoint is there with its note, and a purge run again ends as an uncut one."""
    import os
    import signal
    import time

    from helpers.procs import processes
    from helpers.workdir import REWIND

    w = project
    w.write("keys/prod.pem", f"{SECRET}\n")
    for i in range(12):
        w.write("src/app.py", f"print({i})\n")
        w.ok("snap", "--session", "s", "-m", f"step {i} {SECRET if i % 4 == 0 else ''}")
        if i == 6:
            w.git("repack", "-adq")
    w.wait_for_repack()
    pristine = tmp_path / "pristine"
    shutil.copytree(w.path, pristine, symlinks=True)
    started = time.monotonic()
    w.ok("purge", "--path", "keys", "--text", SECRET)
    duration = time.monotonic() - started
    expected = {seq: files(w, n["commit"]) for seq, n in notes(w).items()}
    rounds = 8
    for round_ in range(rounds):
        shutil.rmtree(w.path)
        shutil.copytree(pristine, w.path, symlinks=True)
        proc = subprocess.Popen([*REWIND, "purge", "--path", "keys", "--text", SECRET], cwd=w.path, env=w.env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        time.sleep(duration * (round_ + 0.5) / rounds)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        real = os.path.realpath(w.path)
        while any(cwd == real for _pid, _argv, cwd in processes()):
            time.sleep(0.01)
        w.fsck()
        assert sorted(notes(w)) == sorted(expected)
        w.ok("purge", "--path", "keys", "--text", SECRET)
        assert {seq: files(w, n["commit"]) for seq, n in notes(w).items()} == expected
        assert holding(w, SECRET) == set()
        w.fsck()


def test_sha256_with_a_transcript_backup_a_multi_pack_index_and_a_split_commit_graph(
        tmp_path: Path, env: dict[str, str], git_environ: object) -> None:
    """A SHA-256 repository whose checkpoints sit in two packs under a multi-pack index and a split
    commit-graph, one of them with a transcript backup as its first parent (a session's first checkpoint)."""
    from git_rewind.base.repo import Repo
    from git_rewind.store import store

    path = tmp_path / "sha256"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", "-b", "main", str(path)], env=env, check=True)
    w = Workdir(path, env)
    w.write("README.md", "# demo\n")
    w.commit_all("init")
    w.write("token.txt", f"{SECRET}\n")
    w.ok("snap", "-m", "captured")
    w.git("repack", "-adq")
    repo = Repo.discover(str(path))
    store.save(repo, store.Request(session="agent", message="after a rewind", allow_empty=True,
                                   attachments=store.Attachments(f"transcript backup {SECRET}",
                                                                 {"t.jsonl": f'{{"text": "{SECRET}"}}\n'.encode()})))
    w.git("repack", "-dq")
    w.git("multi-pack-index", "write")
    w.git("commit-graph", "write", "--reachable", "--split")
    out = w.ok("purge", "--text", SECRET)
    assert "purged the text from 2 checkpoints (#1..#2)" in out and "1 transcript backup" in out
    assert w.git("show", "refs/rewind/agent^1:t.jsonl") == '{"text": "[PURGED]"}\n'
    assert "[PURGED]" in w.git("log", "-1", "--format=%s", "refs/rewind/agent^1")
    assert holding(w, SECRET) == set()
    w.git("multi-pack-index", "verify")
    w.git("commit-graph", "verify")
    w.fsck()


TOKEN = "ghp_R8f3kQz1Lm0XcV7bN2pW9yT4sA6dJ5hG3uE1"


def _private_files(w: Workdir) -> list[Path]:
    return [p for p in (w.path / ".git" / "rewind").rglob("*") if p.is_file()]


def test_a_text_in_file_names_leaves_trees_notes_and_every_state_file(project: Workdir) -> None:
    """A token in a file's and a folder's name: purge --text renames the tree entries (the content kept), so
    what `list` shows is what the trees hold and an undo writes; the private index, rewinds.jsonl,
    skipped.json and the caches under .git/rewind lose it too."""
    w = project
    w.write(".git-rewind.toml", 'max_file_size = "1K"\n')
    w.write(f"backup-{TOKEN}.txt", "kept content\n")
    w.write(f"cache/{TOKEN}/data.json", '{"a": 1}\n')
    w.write(f"big-{TOKEN}.bin", "x" * 5000)  # too large: in skipped.json and the note's skipped
    w.ok("snap", "-m", "one")
    w.write(f"backup-{TOKEN}.txt", "changed\n")
    w.write("src/app.py", "print('two')\n")
    w.ok("snap", "-m", "two")
    w.ok("undo", "1", "--code", "--yes")  # rewinds.jsonl names the token's file
    assert TOKEN.encode() in (w.path / ".git" / "rewind" / "rewinds.jsonl").read_bytes()
    agent = Agent(w, session="agent", env=NO_LIMITS)  # hook.log names the file the agent is about to edit
    agent.send("PreToolUse", tool_name="Edit", tool_use_id="toolu_1",
               tool_input={"file_path": str(w.path / f"backup-{TOKEN}.txt"), "old_string": "a", "new_string": "b"})
    assert TOKEN.encode() in (w.path / ".git" / "rewind" / "hook.log").read_bytes()
    assert [p for p in _private_files(w) if TOKEN.encode() in p.read_bytes()]
    before = notes(w)
    trees = {seq: files(w, note["commit"]) for seq, note in before.items()}
    user = w.user_state()

    run = w.rewind("purge", "--text", TOKEN)
    assert run.returncode == 0, run.stderr
    assert "purged the text from 4 checkpoints (#1..#4)" in run.stdout
    assert "file names with the text replaced" in run.stdout
    assert f"the text is still in the name of {w.path / f'backup-{TOKEN}.txt'}" in run.stdout
    assert holding(w, TOKEN) == set()  # no tree, note or commit holds it
    assert [p for p in _private_files(w) if TOKEN.encode() in p.read_bytes()] == []
    after = notes(w)
    for seq, note in after.items():
        renamed = {p.replace(TOKEN, "[PURGED]"): v for p, v in trees[seq].items()}
        assert files(w, note["commit"]) == renamed  # same modes and blobs, under the purged names
        assert TOKEN not in json.dumps(note)
    listed = w.ok("list")
    assert TOKEN not in listed and "backup-[PURGED].txt" in listed
    assert w.user_state() == user
    w.fsck()

    # An undo writes what the checkpoint holds: the purged name, not the token's.
    for stale in (f"backup-{TOKEN}.txt", f"big-{TOKEN}.bin"):
        (w.path / stale).unlink()
    shutil.rmtree(w.path / "cache" / TOKEN)
    w.ok("undo", "1", "--code", "--yes")
    assert (w.path / "backup-[PURGED].txt").read_text() == "kept content\n"
    assert (w.path / "cache" / "[PURGED]" / "data.json").read_text() == '{"a": 1}\n'
    assert not [p for p in w.path.rglob("*") if TOKEN in str(p)]
    w.fsck()


def test_a_text_leaves_the_commits_authorship_notes(agent_project: Workdir) -> None:
    """A prompt holding the text went into a commit's authorship note (install --git-hooks): purge writes the
    notes ref afresh without it, and the old notes go from the object store."""
    w = agent_project
    w.ok("install", "--git-hooks")
    agent = Agent(w, env={"GIT_REWIND_ANTI_SPAM_SECONDS": "0", "GIT_REWIND_MIN_CHANGE_CHARS": "0"})
    agent.prompt(f"deploy with {SECRET}")
    agent.edit("src/app.py", "print('hello')", "deploy()\nprint('hello')")
    w.write("src/app.py", "deploy()\nprint('hello')\n")
    agent.stop()
    w.git("commit", "-qam", "deploy")
    w.write("other.txt", "mine\n")
    w.git("add", "other.txt")
    w.git("commit", "-qm", "mine")  # a second note, without the text
    assert SECRET in w.git("notes", "--ref", "rewind-authorship", "show", "HEAD~1")
    out = w.ok("purge", "--text", SECRET)
    assert "took the text out of 1 commit authorship note (refs/notes/rewind-authorship)" in out
    note = json.loads(w.git("notes", "--ref", "rewind-authorship", "show", "HEAD~1"))
    assert note["authors"][0]["prompt"] == "deploy with [PURGED]" and note["files"] == {"src/app.py": [[1, 1, 0]]}
    assert json.loads(w.git("notes", "--ref", "rewind-authorship", "show", "HEAD"))["authors"] == [
        {"origin": "person"}]
    assert not holding(w, SECRET)
