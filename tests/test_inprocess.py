"""inprocess: the pygit2 writer gives the objects fast-import gives, id for id.

Both writers (objects.FastImportWriter, inprocess.InProcessWriter) run on the same repository, the same
sequences of changes and the same times: trees from a base and random edits (files with content, stored
blobs, deletions of files and whole directories, files becoming directories and back, links, gitlinks,
exec bits), the commits on them, notes commits around fast-import's fanout change at 256 notes and over
notes trees fast-import would lay out otherwise (written by `git notes`, mixed fanouts, a second note of
the same commit, entries that are not notes), and attachments' root commits. Every id must be equal, and
`git fsck` clean. Then whole checkpoints (store.save) taken in the test process with the writer switched
on: the same trees as fast-import's, the user's index untouched, no git process spawned per checkpoint.
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest
from helpers.workdir import Workdir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import ModuleType

    from git_rewind.base.writer import Writer

PATHS = ["a", "b.txt", "a/x", "a/y/z", "a/y/w", "d/e/f", "d/e/g", "d/h", "link", "sub", "sub/inner", "é ü",
         "q\"uote", "d/e"]
MODES = [0o100644, 0o100755, 0o120000]


class Change:
    """An edit as the checkpoint code passes it (the shape of snapshot.PathState)."""

    def __init__(self, path: str, mode: int = 0, content: bytes | None = None, oid: str | None = None) -> None:
        self.path, self.mode, self.content, self.oid = path, mode, content, oid


def _writers(w: Workdir) -> tuple[Writer, Writer]:
    from git_rewind.base import inprocess, objects
    from git_rewind.base.repo import Repo

    repo = Repo.discover(str(w.path))
    found = inprocess.for_repo(repo)
    assert found is not None, "pygit2 should write this plain SHA-1 repository"
    return objects.FastImportWriter(repo), found


def _random_edits(rng: random.Random, blobs: list[str]) -> list[Change]:
    edits = []
    for _ in range(rng.randint(1, 6)):
        path = rng.choice(PATHS)
        kind = rng.random()
        if kind < 0.25:
            edits.append(Change(path))  # delete (a whole directory where it is one)
        elif kind < 0.6:
            edits.append(Change(path, rng.choice(MODES), content=rng.choice([b"", b"one\n", os.urandom(20)])))
        elif kind < 0.85:
            edits.append(Change(path, rng.choice(MODES), oid=rng.choice(blobs)))
        else:
            edits.append(Change(path, 0o160000, oid=os.urandom(20).hex()))  # a gitlink: any commit id
    return edits


def test_trees_and_commits_are_fast_imports_id_for_id(repo: Workdir, git_environ: dict[str, str]) -> None:
    w = repo
    for path, body in [("a/x", "x\n"), ("a/y/z", "z\n"), ("d/e/f", "f\n"), ("b.txt", "b\n")]:
        w.write(path, body)
    os.symlink("b.txt", w.path / "link")
    w.commit_all("base")
    blobs = [w.git("rev-parse", f"HEAD:{p}").strip() for p in ("a/x", "a/y/z", "d/e/f", "b.txt")]
    empty_tree = w.git("hash-object", "-t", "tree", "-w", "--stdin").strip()  # git's own empty tree
    base = w.tree_of("HEAD")
    parent = w.git("rev-parse", "HEAD").strip()
    rng = random.Random(27)
    compared = 0
    for step in range(60):
        edits = _random_edits(rng, blobs)
        if step % 7 == 0:
            edits.sort(key=lambda e: e.content is not None or e.oid is not None)  # deletions first, as callers do
        fast, mine = _writers(w)
        when = 1_700_000_000 + step
        with fast:
            tree_a = fast.tree("refs/rewind-scan", base, edits)
            commit_a, ctree_a = fast.commit("refs/rewind/x", f"#{step} step\n".encode(), when, [parent], base, edits)
        with mine:
            tree_b = mine.tree("refs/rewind-scan", base, edits)
            commit_b, ctree_b = mine.commit("refs/rewind/x", f"#{step} step\n".encode(), when, [parent], base, edits)
        shown = [(e.path, e.mode, e.content, e.oid) for e in edits]
        assert (tree_b, commit_b, ctree_b) == (tree_a, commit_a, ctree_a), shown
        assert ctree_a == tree_a
        compared += 1
        base, parent = tree_a, commit_a
        if step == 30:
            base = empty_tree  # from nothing: every path new
    assert compared == 60
    # What they wrote is what git reads: the last tree lists as fast-import's says.
    assert w.git("cat-file", "-t", parent).strip() == "commit"
    w.fsck()


def _commits(w: Workdir, count: int) -> list[str]:
    """COUNT commits (one fast-import stream), oldest first."""
    stream = b"".join(b"commit refs/heads/many\nmark :%d\ncommitter T <t@e> %d +0000\ndata 2\nc\n\n" % (i + 1, i)
                      for i in range(count))
    marks = w.path / ".git" / "marks"
    subprocess.run(["git", "fast-import", "--quiet", f"--export-marks={marks}"], cwd=w.path, env=w.env,
                   input=stream, check=True)
    found = dict(line.split() for line in marks.read_text().splitlines())
    return [found[f":{i + 1}"] for i in range(count)]


def _notes_tree(w: Workdir, entries: dict[str, str]) -> str:
    """A tree of PATH → blob id entries (nested paths make directories), written by git's mktree."""
    top: dict[str, object] = {}
    for path, oid in entries.items():
        node = top
        *dirs, name = path.split("/")
        for part in dirs:
            node = node.setdefault(part, {})  # type: ignore[assignment]
        node[name] = oid

    def make(node: dict[str, object]) -> str:
        lines = []
        for name, value in node.items():
            if isinstance(value, dict):
                lines.append(f"040000 tree {make(value)}\t{name}\n")
            else:
                lines.append(f"100644 blob {value}\t{name}\n")
        return subprocess.run(["git", "mktree"], cwd=w.path, env=w.env, input="".join(lines).encode(),
                              capture_output=True, check=True).stdout.decode().strip()

    return make(top)


def _commit_tree(w: Workdir, tree: str) -> str:
    return w.git("commit-tree", tree, "-m", "notes").strip()


def _both_notes(w: Workdir, tip: str | None, commit: str, content: bytes, when: int) -> str:
    fast, mine = _writers(w)
    with fast:
        a = fast.note("refs/notes/rewind", tip, commit, content, b"checkpoint #1\n", when)
    with mine:
        b = mine.note("refs/notes/rewind", tip, commit, content, b"checkpoint #1\n", when)
    assert a == b, f"notes commits differ over {tip}: fast-import {a}, in-process {b}"
    return str(a)


def test_notes_follow_fast_imports_fanout_id_for_id(repo: Workdir, git_environ: dict[str, str]) -> None:
    w = repo
    commits = _commits(w, 262)
    blob = w.git("hash-object", "-w", "--stdin").strip()
    # From no notes at all, one at a time up to 250 (fanout 0), in one stream to save time, then one note per
    # writer across the change at 256 notes (every note moves into 2-digit directories) and past it.
    tip = None
    for i, commit in enumerate(commits[:3]):
        tip = _both_notes(w, tip, commit, f"note {i}\n".encode(), 100 + i)
    tree = _notes_tree(w, {c: blob for c in commits[:252]})
    tip = _commit_tree(w, tree)
    for i, commit in enumerate(commits[252:260]):
        tip = _both_notes(w, tip, commit, f"note {i}\n".encode(), 200 + i)
        if i == 0:
            assert "\t" + commit in w.git("ls-tree", tip)  # 253 notes: still flat
    listed = w.git("ls-tree", tip)
    assert all(line.startswith("040000 tree") for line in listed.splitlines()), "256 notes fan out"
    # A note changed again (the same commit) where fast-import finds it, and where it does not.
    tip = _both_notes(w, tip, commits[255], b"changed\n", 300)
    tip = _both_notes(w, tip, commits[0], b"changed\n", 301)
    # Trees fast-import would not have laid out so: notes one level down below 256 notes, a note of the same
    # commit flat and fanned out, entries that are not notes, a note deeper than the fanout, a README.
    odd = {f"{c[:2]}/{c[2:]}": blob for c in commits[:40]}
    odd.update({c: blob for c in commits[40:60]})
    odd[commits[5]] = blob
    odd["README"] = blob
    odd["abc"] = blob
    odd[f"{commits[70][:2]}/{commits[70][2:4]}/{commits[70][4:]}"] = blob
    tip = _commit_tree(w, _notes_tree(w, odd))
    for i, commit in enumerate([commits[5], commits[10], commits[50], commits[200], commits[70]]):
        tip = _both_notes(w, tip, commit, f"again {i}\n".encode(), 400 + i)
    # 255 notes in git's own layout (git notes fans out by its own rule), then the 256th.
    crowded = {f"{c[:2]}/{c[2:]}": blob for c in commits[:128]}
    crowded.update({c: blob for c in commits[128:255]})
    tip = _commit_tree(w, _notes_tree(w, crowded))
    tip = _both_notes(w, tip, commits[255], b"the 256th\n", 500)
    tip = _both_notes(w, tip, commits[256], b"the 257th\n", 501)
    w.fsck()


def test_attachments_root_commit_is_fast_imports(repo: Workdir, git_environ: dict[str, str]) -> None:
    repo.write("f", "x\n")
    repo.commit_all("base")
    fast, mine = _writers(repo)
    files = {"transcript.jsonl": b'{"a": 1}\n', "more/deep.txt": b"deep\n", "z": b""}
    with fast:
        a = fast.attachments("refs/rewind-attachments/pending", b"conversation before undo\n", files, 7)
    with mine:
        b = mine.attachments("refs/rewind-attachments/pending", b"conversation before undo\n", files, 7)
    assert a == b
    assert repo.git("show", f"{a}:more/deep.txt") == "deep\n"
    assert "refs/rewind-attachments" not in repo.git("for-each-ref")


def test_a_missing_blob_is_refused_as_fast_import_refuses_it(repo: Workdir, git_environ: dict[str, str]) -> None:
    from git_rewind.base.gitcmd import GitError

    repo.write("f", "x\n")
    repo.commit_all("base")
    _fast, mine = _writers(repo)
    with pytest.raises(GitError), mine:
        mine.tree("refs/rewind-scan", repo.tree_of("HEAD"), [Change("g", 0o100644, oid="1" * 40)])


# whole checkpoints ---------------------------------------------------------------------------------


@pytest.fixture
def in_process() -> Iterator[ModuleType]:
    """The writer switched on in the test process, and off again after."""
    from git_rewind.base import objects

    objects.in_process(True)
    yield objects
    objects.close()


def test_checkpoints_written_in_process_hold_fast_imports_trees(project: Workdir, tmp_path: Path,
                                                                git_environ: dict[str, str],
                                                                in_process: ModuleType) -> None:
    """The same sequence of work checkpointed by fast-import (a copy of the repository) and in process:
    every checkpoint's tree is the same, and `git add -A`'s; notes, refs, seqs as the store promises."""
    import shutil

    from git_rewind.base import objects
    from git_rewind.base.repo import Repo
    from git_rewind.store import store

    twin = tmp_path / "twin"
    shutil.copytree(project.path, twin, symlinks=True)
    index = (project.path / ".git" / "index").read_bytes()
    rng = random.Random(5)
    trees: dict[str, list[str]] = {"in": [], "fi": []}
    for step in range(12):
        name = rng.choice(["src/app.py", "src/new/mod.py", "notes.txt", "bin/run.sh", "top.md"])
        content = f"step {step}\n"
        gone = rng.random() < 0.2
        paths = [name] if step % 3 == 0 else None
        for where, on in ((project.path, True), (twin, False)):
            target = where / name
            if gone and target.exists():
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(content)
            objects.in_process(on)
            result = store.save(Repo.discover(str(where)), store.Request(message=f"step {step}", paths=paths,
                                                                         allow_empty=True))
            trees["in" if on else "fi"].append(str(result.tree))
    assert trees["in"] == trees["fi"]
    assert trees["in"][-1] == project.add_all_tree()
    assert (project.path / ".git" / "index").read_bytes() == index
    listed = project.git("notes", "--ref=rewind", "list").splitlines()
    assert len(listed) == 12
    chain = project.git("rev-list", "refs/rewind/manual").split()
    assert {line.split()[1] for line in listed} == set(chain)
    project.fsck()


def test_an_in_process_checkpoint_spawns_no_git(project: Workdir, tmp_path: Path, git_environ: dict[str, str],
                                                in_process: ModuleType, daemons: list[Workdir],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """With the daemon naming what changed, a checkpoint of one changed file written in process starts no git
    process (GIT_TRACE): the objects are pygit2's, the refs the long-lived `git update-ref`'s."""
    from git_rewind.base.repo import Repo
    from git_rewind.store import store

    project.ok("snap")
    daemons.append(project)
    repo = Repo.discover(str(project.path))
    # The daemon runs this test process's git_rewind (the source tree, where CI's installed command runs a copy of
    # it elsewhere): another installation's daemon steps down when asked (daemon.fingerprint).
    import git_rewind

    source = os.path.dirname(os.path.dirname(os.path.abspath(git_rewind.__file__)))
    monkeypatch.setenv("PYTHONPATH", source)
    from git_rewind.base import daemon as daemons_module

    daemons_module.launch(repo)
    project.write("src/app.py", "print('warm')\n")
    store.save(repo, store.Request(message="warm"))  # the long-lived update-ref starts here, once
    trace = tmp_path / "trace"
    os.environ["GIT_TRACE"] = str(trace)
    try:
        project.write("src/app.py", "print('one change')\n")
        result = store.save(repo, store.Request(message="one file"))
    finally:
        del os.environ["GIT_TRACE"]
    assert result.created
    status = daemons_module.ask_status(repo)  # asked by this process's code, as the daemon's own installation
    assert status is not None and status["answered"]["changes"] >= 1  # type: ignore[index]  # read what it named
    spawned = trace.read_text().splitlines() if trace.exists() else []
    assert [line for line in spawned if "trace: built-in" in line or "trace: exec" in line] == []
    assert project.git("show", "refs/rewind/manual:src/app.py") == "print('one change')\n"


def _loose(w: Workdir) -> int:
    counts = dict(line.split(": ") for line in w.git("count-objects", "-v").splitlines())
    return int(counts["count"])


def test_a_checkpoint_of_many_files_goes_through_fast_import_into_one_pack(project: Workdir,
                                                                          git_environ: dict[str, str],
                                                                          in_process: ModuleType) -> None:
    """In process, one changed file is written loose by pygit2; more than MANY_FILES go through fast-import, as
    one pack (a loose object each would cost more than the process, and leave git's gc a thousand files). The
    trees are `git add -A`'s either way."""
    from git_rewind.base import objects
    from git_rewind.base.repo import Repo
    from git_rewind.store import store

    repo = Repo.discover(str(project.path))
    project.ok("snap")
    project.write("one.txt", "one\n")
    before = _loose(project)
    small = store.save(repo, store.Request(message="one", paths=["one.txt"]))
    assert _loose(project) > before  # pygit2's loose objects: the blob, the trees, the commit, the note
    assert str(small.tree) == project.add_all_tree()

    names = [f"many/f{i}.txt" for i in range(objects.MANY_FILES + 8)]
    for i, name in enumerate(names):
        project.write(name, f"file {i}\n")
    before = _loose(project)
    packs = len(list((project.path / ".git" / "objects" / "pack").glob("*.pack")))
    many = store.save(repo, store.Request(message="many", paths=names))
    assert str(many.tree) == project.add_all_tree()
    assert _loose(project) - before < 10  # the note's objects at most, not one per file
    assert len(list((project.path / ".git" / "objects" / "pack").glob("*.pack"))) == packs + 1
    project.fsck()


def test_repositories_pygit2_cannot_write_as_git_go_through_fast_import(tmp_path: Path, env: dict[str, str],
                                                                         git_environ: dict[str, str],
                                                                         in_process: ModuleType) -> None:
    """SHA-256, core.ignoreCase (fast-import matches names without case there), replace refs: decided before
    anything is written, and the checkpoint still taken, by fast-import, with git's own tree."""
    from git_rewind.base import inprocess, objects
    from git_rewind.base.repo import Repo
    from git_rewind.store import store

    cases = {"sha256": ["init", "-q", "--object-format=sha256"], "ignorecase": ["init", "-q"],
             "replace": ["init", "-q"], "plain": ["init", "-q"]}
    for name, init in cases.items():
        path = tmp_path / name
        subprocess.run(["git", *init, str(path)], env=env, check=True)
        w = Workdir(path, env)
        w.write("src/a.txt", "a\n")
        w.commit_all("base")
        if name == "ignorecase":
            w.git("config", "core.ignoreCase", "true")
        if name == "replace":
            head = w.git("rev-parse", "HEAD").strip()
            w.git("replace", head, w.git("commit-tree", w.tree_of("HEAD"), "-m", "other").strip())
        repo = Repo.discover(str(path))
        chosen = objects.writer(repo)
        chosen.abort()
        assert isinstance(chosen, inprocess.InProcessWriter) == (name == "plain"), name
        w.write("src/b.txt", "b\n")
        result = store.save(repo, store.Request(message=name))
        assert str(result.tree) == w.add_all_tree(), name
        assert w.git("notes", "--ref=rewind", "list", str(result.commit)).strip(), name
        w.fsck()
    # A setting changed while the process runs is seen at the next checkpoint.
    plain = Repo.discover(str(tmp_path / "plain"))
    subprocess.run(["git", "config", "core.ignoreCase", "true"], cwd=plain.root, env=env, check=True)
    chosen = objects.writer(plain)
    chosen.abort()
    assert isinstance(chosen, objects.FastImportWriter)


def test_a_note_updated_in_process_moves_the_notes_ref_checked(project: Workdir, git_environ: dict[str, str],
                                                               in_process: ModuleType) -> None:
    """store.update_note (tags, an undo's records) in process: one notes commit, the ref moved from where it was."""
    from git_rewind.base.note import Oid
    from git_rewind.base.repo import Repo
    from git_rewind.store import store

    repo = Repo.discover(str(project.path))
    taken = store.save(repo, store.Request(message="tag me"))
    before = project.git("rev-parse", "refs/notes/rewind").strip()
    store.update_note(repo, Oid(taken.commit), lambda note: note.tags.append("kept"), "tagged")
    after = project.git("rev-parse", "refs/notes/rewind").strip()
    assert project.git("rev-parse", f"{after}^").strip() == before
    assert '"kept"' in project.git("notes", "--ref=rewind", "show", str(taken.commit))
    assert project.git("log", "-1", "--format=%s", after).strip() == f"checkpoint #{taken.seq}: tagged"


def test_a_tree_pruned_since_it_was_read_is_not_built_on(repo: Workdir, git_environ: dict[str, str]) -> None:
    """A tree the writer read before is read again, not taken from memory, once git gc pruned it: the write
    fails as fast-import's does (and the scan falls back to a whole one) instead of naming missing objects."""
    from git_rewind.base.gitcmd import GitError

    repo.write("keep", "k\n")
    repo.commit_all("base")
    _fast, mine = _writers(repo)
    gone = mine.tree("refs/rewind-scan", repo.tree_of("HEAD"), [Change("dir/sub/f", 0o100644, content=b"soon gone\n")])
    repo.git("-c", "gc.reflogExpire=now", "gc", "-q", "--prune=now")
    assert repo.git("cat-file", "-t", gone, check=False) == ""
    with pytest.raises(GitError):
        mine.tree("refs/rewind-scan", gone, [Change("dir/sub/g", 0o100644, content=b"on a pruned tree\n")])


def test_a_hook_checkpoint_the_daemon_answers_is_written_in_the_daemon(project: Workdir, tmp_path: Path,
                                                                       daemons: list[Workdir]) -> None:
    """Through a running daemon: a hook call it answers (hook/client.py) takes its checkpoint in the daemon's
    process, which writes it in process: no fast-import, no unpack-objects, no update-ref of its own
    (GIT_TRACE in the hook's environment, which the daemon runs the call under), and the checkpoint holds the
    change, with its note."""
    import json

    from helpers import daemon, installed

    daemons.append(project)
    project.ok("daemon", "start")
    thin = installed.hook_program()
    trace = tmp_path / "trace"

    def call(event: dict[str, str], traced: bool) -> None:
        env = {**project.env, "CLAUDECODE": "1", **({"GIT_TRACE": str(trace)} if traced else {})}
        proc = subprocess.run([*thin, "hook", "--agent", "claude-code"], cwd=project.path, env=env, input=json.dumps(
            {"session_id": "s-daemon", "cwd": str(project.path), **event}), capture_output=True, text=True)
        assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr

    prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "work", "prompt_id": "p1"}
    project.write("src/app.py", "print('first')\n")
    call(prompt, False)  # the daemon's writer and its long-lived update-ref start here
    served = daemon.status(project)["served"]["hook"]
    project.write("src/app.py", "print('second')\n")
    call({**prompt, "prompt_id": "p2"}, True)
    assert daemon.status(project)["served"]["hook"] == served + 1, "the daemon answered the call"
    assert project.git("show", "refs/rewind/s-daemon:src/app.py") == "print('second')\n"
    assert project.git("notes", "--ref=rewind", "list", "refs/rewind/s-daemon").strip()
    started = [line for line in (trace.read_text().splitlines() if trace.exists() else [])
               if "trace: built-in" in line or "trace: exec" in line]
    assert not [line for line in started if any(w in line for w in ("fast-import", "unpack-objects",
                                                                    "update-ref"))], started
