"""Property tests: random trees and random edit sequences, against real repositories.

Each example builds a fresh repository in its own temporary directory (no fixture is shared
between examples), fills it with a random tree (nested directories; names with spaces,
unicode, quotes, glob characters and a non-UTF-8 byte where the filesystem allows; empty and
binary files; exec bits; symlinks to files inside the tree), makes a random user index and
HEAD, then applies a random sequence of edits (create, modify, same-size modify, delete,
chmod, file -> directory, directory -> file, symlink retarget, new symlink).

Properties checked on every example:
  (a) a checkpoint's tree is exactly the tree `git add -A` gives in a scratch index;
  (b) snap, edits, `undo <that checkpoint>` gives back the exact tree state;
  (c) undo then redo gives back the exact edited state;
  (d) the user's index bytes, HEAD, branches and `git status` never change behind their back;
  (e) a `--path` snapshot naming the edited files gives the same tree as a full snapshot;
  (f) `git fsck --strict` is clean and every checkpoint has its note;
and ignored files (node_modules/, *.log) are never captured and never touched.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from helpers import stress
from helpers.workdir import Workdir, git_env
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st


def _fs_allows(name: bytes) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        try:
            with open(os.path.join(os.fsencode(tmp), name), "wb"):
                pass
            return True
        except OSError:
            return False


NAMES = [
    "a", "b", "src", "lib", "x.py", "README", "b c", "trailing ", " lead", "é", "日本語.txt",
    "ünï cödé", "-dash", 'q"uote', "back\\slash", "st*r", "[ab]", "#hash", "!bang", "tab\tname",
    ".hidden", "emoji😀", "new\nline", "CamelCase", "x.tar.gz",
]
if _fs_allows(b"caf\xe9"):
    NAMES.append(os.fsdecode(b"caf\xe9"))

GITIGNORE = b"node_modules/\n*.log\n"
# Ignored files, each with content that appears nowhere else: its blob must never be stored.
IGNORED = {
    "node_modules/pkg/index.js": b"module.exports = 'IGNORED-SECRET-1'\n",
    "debug.log": b"IGNORED-SECRET-2 log line\n",
    "keep/cache.log": b"IGNORED-SECRET-3 in a directory that also gets tracked files\n",
}
PROTECTED_DIRS = {"node_modules", "node_modules/pkg", "keep"}

CONTENT = st.one_of(
    st.just(b""),
    st.binary(max_size=300),
    st.text(max_size=80).map(str.encode),
    st.just(b"line1\r\nline2\r\n"),
    st.just(bytes(range(256)) * 3),
    st.builds(lambda n, b: bytes([b]) * n, st.integers(0, 20000), st.integers(0, 255)),
)
OPS = ["create", "modify", "modify_same_size", "delete", "chmod", "file_to_dir", "dir_to_file",
       "retarget", "create_link"]

# No shrinking: each example runs several git processes, and shrinking a failure could take
# minutes. The draws are labelled, so a failing example reads well enough as it is.
SETTINGS = settings(max_examples=stress.count(25, 5), deadline=None, suppress_health_check=list(HealthCheck),
                    print_blob=True, phases=[Phase.explicit, Phase.reuse, Phase.generate])


# repository and tree helpers ----------------------------------------------------


def _new_repo(tmp: Path) -> tuple[Workdir, Workdir]:
    """A fresh repository, plus an observer whose git never refreshes the user's index."""
    home = tmp / "home"
    home.mkdir()
    env = git_env(home)
    path = tmp / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], env=env, check=True)
    work = Workdir(path, env)
    observer = Workdir(path, {**env, "GIT_OPTIONAL_LOCKS": "0"})
    return work, observer


def _join(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name


def _listing(root: Path) -> tuple[list[str], list[str], list[str]]:
    """(regular files, symlinks, directories) we may edit: no .git, ignored or protected paths."""
    files: list[str] = []
    links: list[str] = []
    dirs: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir
        for name in list(dirnames):
            rel = _join(rel_dir, name)
            if rel in (".git", "node_modules"):
                dirnames.remove(name)
            elif os.path.islink(os.path.join(dirpath, name)):
                links.append(rel)
                dirnames.remove(name)
            else:
                dirs.append(rel)
        for name in filenames:
            rel = _join(rel_dir, name)
            if rel in IGNORED or rel == ".gitignore":
                continue
            (links if os.path.islink(os.path.join(dirpath, name)) else files).append(rel)
    return sorted(files), sorted(links), sorted(dirs)


def _free(root: Path, rel: str) -> bool:
    """REL can be created as a new file: nothing there, and no file or link above it."""
    if os.path.lexists(root / rel):
        return False
    parts = rel.split("/")
    current = root
    for part in parts[:-1]:
        current = current / part
        if os.path.lexists(current) and (os.path.islink(current) or not current.is_dir()):
            return False
    return True


def _write_file(root: Path, rel: str, content: bytes, executable: bool) -> None:
    full = root / rel
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_bytes(content)
    full.chmod(0o755 if executable else 0o644)


def _link(root: Path, rel: str, target_rel: str) -> None:
    full = root / rel
    full.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(os.path.relpath(root / target_rel, full.parent), full)


def _prune_empty_parents(root: Path, rel: str) -> None:
    """Remove directories left empty above REL (git cannot record empty directories)."""
    parent = os.path.dirname(rel)
    while parent and parent not in PROTECTED_DIRS:
        try:
            os.rmdir(root / parent)
        except OSError:
            return
        parent = os.path.dirname(parent)


def _files_under(root: Path, rel: str) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root / rel):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            out.append(os.path.relpath(os.path.join(dirpath, name), root))
    return out


def _build_tree(w: Workdir, data: st.DataObject) -> None:
    root = w.path
    (root / ".gitignore").write_bytes(GITIGNORE)
    for rel, content in IGNORED.items():
        _write_file(root, rel, content, False)
    entries = data.draw(st.lists(st.tuples(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3),
                                           CONTENT, st.booleans()), min_size=1, max_size=14),
                        label="tree")
    for parts, content, executable in entries:
        rel = "/".join(parts)
        if _free(root, rel):
            _write_file(root, rel, content, executable)
    if data.draw(st.booleans(), label="files in keep/"):
        _write_file(root, "keep/kept.txt", b"tracked beside an ignored file\n", False)
    files, _links, dirs = _listing(root)
    for _ in range(data.draw(st.integers(0, 3), label="links")):
        if not files:
            break
        target = data.draw(st.sampled_from(files))
        rel = _join(data.draw(st.sampled_from([""] + dirs)), data.draw(st.sampled_from(NAMES)))
        if _free(root, rel):
            _link(root, rel, target)


def _user_index_and_head(w: Workdir, data: st.DataObject) -> None:
    """Commit a random subset, then stage one more change: the user's index is not HEAD's tree."""
    files, links, _dirs = _listing(w.path)
    candidates = sorted(files + links + [".gitignore"])
    chosen = data.draw(st.lists(st.sampled_from(candidates), unique=True), label="committed")
    if chosen:
        spec = b"\0".join(os.fsencode(p) for p in chosen)
        subprocess.run(["git", "--literal-pathspecs", "add", "--pathspec-from-file=-", "--pathspec-file-nul"],
                       cwd=w.path, env=w.env, input=spec, check=True, capture_output=True)
        w.git("commit", "-q", "-m", "user commit")
    staged = [p for p in chosen if p in files]
    # bool(): mypy would take the list type of `staged` as the context of the draw on the right of `and`
    if bool(staged) and data.draw(st.booleans(), label="stage a change"):
        rel = data.draw(st.sampled_from(staged))
        (w.path / rel).write_bytes(b"staged version\n")
        subprocess.run(["git", "--literal-pathspecs", "add", "--", rel], cwd=w.path, env=w.env, check=True)
        if data.draw(st.booleans(), label="then modify it again"):
            (w.path / rel).write_bytes(b"working copy after staging\n")


def _edit(w: Workdir, data: st.DataObject) -> set[str]:
    """Apply random edits; return every path they created, changed or removed."""
    root = w.path
    touched: set[str] = set()
    for _ in range(data.draw(st.integers(1, 8), label="number of edits")):
        files, links, dirs = _listing(root)
        editable_dirs = [d for d in dirs if d not in PROTECTED_DIRS]
        op = data.draw(st.sampled_from(OPS), label="op")
        if op == "create":
            rel = _join(data.draw(st.sampled_from([""] + dirs)), data.draw(st.sampled_from(NAMES)))
            if _free(root, rel):
                _write_file(root, rel, data.draw(CONTENT), data.draw(st.booleans()))
                touched.add(rel)
        elif op == "modify" and files:
            rel = data.draw(st.sampled_from(files))
            (root / rel).write_bytes(data.draw(CONTENT))
            touched.add(rel)
        elif op == "modify_same_size" and files:
            rel = data.draw(st.sampled_from(files))
            old = (root / rel).read_bytes()
            with open(root / rel, "r+b") as fh:  # same inode, same size, same second
                fh.write(bytes(b ^ 0x20 for b in old) if old else b"x")
            touched.add(rel)
        elif op == "delete" and files + links:
            rel = data.draw(st.sampled_from(files + links))
            os.unlink(root / rel)
            _prune_empty_parents(root, rel)
            touched.add(rel)
        elif op == "chmod" and files:
            rel = data.draw(st.sampled_from(files))
            mode = os.stat(root / rel).st_mode
            os.chmod(root / rel, 0o644 if mode & 0o100 else 0o755)
            touched.add(rel)
        elif op == "file_to_dir" and files + links:
            rel = data.draw(st.sampled_from(files + links))
            os.unlink(root / rel)
            inner = _join(rel, data.draw(st.sampled_from(NAMES)))
            _write_file(root, inner, data.draw(CONTENT), data.draw(st.booleans()))
            touched |= {rel, inner}
        elif op == "dir_to_file" and editable_dirs:
            rel = data.draw(st.sampled_from(editable_dirs))
            if any(ign.startswith(rel + "/") for ign in IGNORED):
                continue
            touched |= set(_files_under(root, rel))
            shutil.rmtree(root / rel)
            _write_file(root, rel, data.draw(CONTENT), data.draw(st.booleans()))
            touched.add(rel)
        elif op == "retarget" and links and files:
            rel = data.draw(st.sampled_from(links))
            os.unlink(root / rel)
            _link(root, rel, data.draw(st.sampled_from(files)))
            touched.add(rel)
        elif op == "create_link" and files:
            rel = _join(data.draw(st.sampled_from([""] + dirs)), data.draw(st.sampled_from(NAMES)))
            if _free(root, rel):
                _link(root, rel, data.draw(st.sampled_from(files)))
                touched.add(rel)
    # At least one change that git sees, so that undo and redo have something to do.
    marker = "edited marker.txt"
    if _free(root, marker):
        _write_file(root, marker, b"edited\n", False)
        touched.add(marker)
    return touched


# store checks -------------------------------------------------------------------


def _snap_json(w: Workdir, *args: str) -> dict[str, Any]:
    out = w.ok("snap", "--json", *args)
    note: dict[str, Any] = json.loads(out)
    return note


def _safety(stdout: str) -> int:
    match = re.search(r"^safety checkpoint #(\d+) ([0-9a-f]{7,})", stdout, re.M)
    assert match, stdout
    return int(match.group(1))


def _all_notes(w: Workdir) -> list[dict[str, Any]]:
    notes: list[dict[str, Any]] = json.loads(w.ok("list", "--json", "-n", "0", "--safety"))
    return notes


def _check_store(w: Workdir) -> list[dict[str, Any]]:
    """Every chain commit has a note, seqs are unique and increase along each chain, fsck clean."""
    items = _all_notes(w)
    seqs = [item["seq"] for item in items]
    assert len(seqs) == len(set(seqs)), seqs
    by_commit = {item["commit"]: item for item in items}
    assert len(by_commit) == len(items)
    chained = set()
    for line in w.git("for-each-ref", "--format=%(refname)", "refs/rewind/").split():
        session = line[len("refs/rewind/"):]
        chain = w.git("rev-list", "--first-parent", line).split()
        assert all(c in by_commit for c in chain), f"a checkpoint of {session} has no note"
        chain_seqs = [by_commit[c]["seq"] for c in chain]
        assert chain_seqs == sorted(chain_seqs, reverse=True) and len(set(chain_seqs)) == len(chain)
        assert {by_commit[c]["session"] for c in chain} == {session}
        chained |= set(chain)
    assert chained == set(by_commit), "a note annotates a commit on no session chain"
    w.fsck()
    return items


def _check_ignored(w: Workdir, items: list[dict[str, Any]]) -> None:
    for rel, content in IGNORED.items():
        assert (w.path / rel).read_bytes() == content, f"ignored {rel} was touched"
        blob = subprocess.run(["git", "hash-object", "--stdin"], cwd=w.path, env=w.env, input=content,
                              capture_output=True, check=True).stdout.decode().strip()
        stored = subprocess.run(["git", "cat-file", "-e", blob], cwd=w.path, env=w.env,
                                capture_output=True).returncode == 0
        assert not stored, f"the ignored file {rel} was stored in .git/objects"
    for item in items:
        names = w.git("ls-tree", "-r", "-z", "--name-only", item["commit"]).split("\0")
        assert not any(n.startswith("node_modules/") or n.endswith(".log") for n in names), item["seq"]


# the properties -----------------------------------------------------------------


@SETTINGS
@given(data=st.data())
def test_snap_undo_redo_round_trip_random_trees(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory(prefix="rewind-prop-") as tmp:
        w, observer = _new_repo(Path(tmp))
        _build_tree(w, data)
        _user_index_and_head(w, data)
        user0 = observer.user_state()
        state0 = w.state()

        # (a) the checkpoint is exactly `git add -A`
        first = _snap_json(w)
        tree0 = w.tree_of(first["commit"])
        assert tree0 == w.add_all_tree()
        assert observer.user_state() == user0
        paths_base = _snap_json(w, "--session", "paths")
        assert w.tree_of(paths_base["commit"]) == tree0

        touched = _edit(w, data)
        state1 = w.state()
        user1 = observer.user_state()
        assert user1[:3] == user0[:3]
        tree1 = w.add_all_tree()
        assert tree1 != tree0

        # (e) naming the edited files (and ignored ones) gives the full snapshot's tree
        named = sorted(touched | set(IGNORED))
        by_path = _snap_json(w, "--session", "paths", *[f"--path={p}" for p in named])
        assert w.tree_of(by_path["commit"]) == tree1, f"--path snapshot of {named} differs from git add -A"
        full = _snap_json(w)
        assert w.tree_of(full["commit"]) == tree1
        assert w.state() == state1 and observer.user_state() == user1

        # a dry run changes nothing, not even the store
        notes_before = _all_notes(w)
        w.ok("undo", str(first["seq"]), "--dry-run")
        assert w.state() == state1 and _all_notes(w) == notes_before

        # (b) undo to the first checkpoint gives back the exact tree
        out = w.ok("undo", str(first["seq"]), "--yes")
        safety = _safety(out)
        items = {item["seq"]: item for item in _all_notes(w)}
        assert items[safety]["trigger"] == "pre-rewind"
        assert w.tree_of(items[safety]["commit"]) == tree1
        assert w.state() == state0
        assert observer.user_state() == user0
        assert w.add_all_tree() == tree0

        # (c) redo gives back the exact edited tree
        out = w.ok("redo", "--yes")
        safety2 = _safety(out)
        items = {item["seq"]: item for item in _all_notes(w)}
        assert items[safety2]["trigger"] == "pre-redo" and safety2 > safety
        assert w.tree_of(items[safety2]["commit"]) == tree0
        assert w.state() == state1
        assert observer.user_state() == user1

        # (f) and the store is consistent; ignored files never captured nor touched
        _check_ignored(w, _check_store(w))
        assert not list(w.path.rglob("*.rewind-tmp"))


def _behind_link(root: Path, rel: str) -> bool:
    parts = rel.split("/")
    return any((root / "/".join(parts[:i])).is_symlink() for i in range(1, len(parts)))


@settings(SETTINGS, max_examples=stress.count(15, 3))
@given(data=st.data())
def test_repeated_snapshots_follow_the_tree(data: st.DataObject) -> None:
    """Several rounds of edits, each followed by a full or --path snap: every checkpoint is
    `git add -A` of its moment, and undo to any of them restores that moment exactly."""
    with tempfile.TemporaryDirectory(prefix="rewind-prop-") as tmp:
        w, observer = _new_repo(Path(tmp))
        _build_tree(w, data)
        _user_index_and_head(w, data)
        user0 = observer.user_state()
        moments: list[tuple[int, dict[str, tuple[str, str]], str]] = []
        first = _snap_json(w)
        moments.append((first["seq"], w.state(), w.tree_of(first["commit"])))
        assert moments[0][2] == w.add_all_tree()
        for _round in range(data.draw(st.integers(1, 3), label="rounds")):
            touched = _edit(w, data)
            (w.path / "edited marker.txt").unlink(missing_ok=True)
            touched.add("edited marker.txt")
            if data.draw(st.booleans(), label="by path"):
                # A path now behind a symbolic link (its directory became a link) is refused, as `git add`
                # refuses it ("beyond a symbolic link"); the link itself is among the touched paths.
                named = [p for p in sorted(touched) if not _behind_link(w.path, p)]
                result = w.ok("snap", *[f"--path={p}" for p in named])
            else:
                result = w.ok("snap")
            expected = w.add_all_tree()
            match = re.match(r"#(\d+) ([0-9a-f]{7}) ", result)
            if match is None:
                assert re.match(r"unchanged since #(\d+)$", result.strip()), result
                assert expected == moments[-1][2]
                continue
            seq = int(match.group(1))
            commit = w.git("rev-parse", "refs/rewind/manual").strip()
            assert commit.startswith(match.group(2))
            assert w.tree_of(commit) == expected
            moments.append((seq, w.state(), expected))
            assert observer.user_state()[:3] == user0[:3]
        index = data.draw(st.integers(0, len(moments) - 1), label="target")
        seq, state, tree = moments[index]
        commit = next(item["commit"] for item in _all_notes(w) if item["seq"] == seq)
        ident = data.draw(st.sampled_from([str(seq), f"#{seq}", commit, commit[:7],
                                           f"@~{len(moments) - 1 - index}"]), label="id form")
        if index == len(moments) - 1:
            ident = data.draw(st.sampled_from([ident, "@", "latest"]), label="newest")
        out = w.ok("undo", ident, "--yes")
        assert w.state() == state, out
        assert w.add_all_tree() == tree
        assert observer.user_state()[:3] == user0[:3]
        _check_ignored(w, _check_store(w))


def test_path_snapshot_of_a_file_whose_directory_became_a_file(repo: Workdir) -> None:
    """Found by the properties above: `rm -r a && echo > a`, then `snap --path a --path a/x`."""
    repo.write("a/x", "inside a directory\n")
    repo.ok("snap")
    shutil.rmtree(repo.path / "a")
    repo.write("a", "now a file\n")
    run = repo.rewind("snap", "--path", "a", "--path", "a/x")
    assert run.returncode == 0, run.stderr
    assert repo.tree_of("refs/rewind/manual") == repo.add_all_tree()
    repo.fsck()


def test_first_snapshot_seeded_from_a_racily_clean_user_index(repo: Workdir) -> None:
    """The private index is seeded from the user's index; the seed must not make git trust stat
    data that the user's own index would re-check (an entry as new as the index file itself).

    `git add f` and a same-size rewrite of f in the same second, then the first snapshot a
    second later: the checkpoint must hold the rewritten content, as `git add -A` does.
    """
    time.sleep(1.05 - time.time() % 1)  # start of a second, so the next three steps share it
    repo.write("f", "aaaa\n")
    repo.git("add", "f")
    with open(repo.path / "f", "r+b") as fh:
        fh.write(b"bbbb\n")
    same_second = int(os.stat(repo.path / "f").st_mtime) == int(os.stat(repo.path / ".git" / "index").st_mtime)
    time.sleep(1.05 - time.time() % 1)
    assert same_second, "the machine was too slow to set up the race; rerun"
    repo.ok("snap")
    assert repo.git("status", "--porcelain").splitlines() == ["AM f"]
    assert repo.git("show", "refs/rewind/manual:f") == "bbbb\n"
    assert repo.tree_of("refs/rewind/manual") == repo.add_all_tree()
