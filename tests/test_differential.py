"""Differential test: every whole-tree checkpoint against git's own `add -A` + `write-tree`.

Random operation sequences on a real repository (files with text, CRLF and binary content,
directories, `.gitattributes` lines: eol, text, binary, -text, a real size-changing clean/smudge
filter; `.gitignore` lines with negations; skip-worktree and assume-unchanged bits set and
cleared on tracked files; commits of some files; symlinks; exec bits; a file over
max_file_size), interleaved with `git rewind snap`; and what replaying real histories found
(tests/test_real_history.py): a file whose blob in the user's index has CRLF, a file deleted,
checkpointed and brought back, a commit made elsewhere checked out underneath (the user's index
moves), `snap --path` naming what changed, the file-watcher daemon started and stopped. The
oracle for each checkpoint is git
itself: a copy of the user's index (what the private index is seeded from) with the bits that
make git look away cleared (a skip-worktree file that is absent keeps its bit: a sparse
checkout's), then `git add -A` (untracked files over max_file_size left out) and `write-tree`.

At the end, an undo to a random earlier checkpoint must leave every file of that checkpoint
exactly as `git checkout-index` of its tree writes it under the same attributes and config,
and every other file on disk must be one a checkpoint never captures (ignored or too large).
The user's index bytes never change under `snap` or `undo`.

The same with every command writing its checkpoints in process (objects.in_process, as the daemon writes
them: pygit2 and a long-lived `git update-ref`), on fewer examples.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from helpers import daemon, stress
from helpers.agentcli import disk_files
from helpers.oracle import agree, file_hash, oracle_tree
from helpers.workdir import IN_PROCESS, Workdir, git_env
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

LIMIT = 20_000  # max_file_size of these repositories
# A size-changing clean/smudge pair: the store holds every line prefixed with '>'.
PREFIX_FILTER = """#!/bin/sh
if [ "$1" = clean ]; then sed 's/^/>/'; else sed 's/^>//'; fi
"""
NAMES = ["a.txt", "b.bat", "c.bin", "d.f", "sub/e.txt", "sub/f.crlf", "sub/deep/g.f", "keep.log", "x.log",
         "build/out.o", "build/keep", "h.tmp", "sub/i.tmp", "run.sh"]
BIG = "big.dat"
ATTRIBUTES = ["*.txt text", "*.bat text eol=crlf", "*.bin binary", "*.txt -text", "*.f filter=pfx",
              "* text=auto", "*.crlf eol=crlf", "*.f text eol=crlf", "*.sh -text"]
IGNORES = ["*.log", "!keep.log", "build/", "!build/keep", "*.tmp", "!sub/i.tmp", "sub/deep/", "*.bin"]
CONTENT = st.one_of(
    st.just(b"one\ntwo\n"),
    st.just(b"line1\r\nline2\r\n"),
    st.just(b"mixed\r\nends\nhere"),
    st.just(b""),
    st.text(alphabet="ab \r\n", max_size=40).map(str.encode),
    st.binary(max_size=64),
)
OPS = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), CONTENT),
    st.tuples(st.just("delete"), st.sampled_from(NAMES)),
    st.tuples(st.just("attributes"), st.sampled_from(["", "sub/"]), st.sampled_from(ATTRIBUTES)),
    st.tuples(st.just("ignore"), st.sampled_from(["", "sub/"]), st.sampled_from(IGNORES)),
    st.tuples(st.just("flag"), st.sampled_from(["--skip-worktree", "--no-skip-worktree", "--assume-unchanged",
                                                "--no-assume-unchanged"]), st.integers(0, 20)),
    st.tuples(st.just("commit"), st.lists(st.sampled_from(NAMES + [".gitattributes", ".gitignore"]), max_size=4)),
    st.tuples(st.just("symlink"), st.sampled_from(["link", "sub/link"]), st.sampled_from(NAMES)),
    st.tuples(st.just("chmod"), st.sampled_from(NAMES)),
    st.tuples(st.just("big"), st.binary(min_size=1, max_size=8)),
    st.tuples(st.just("snap")),
    st.tuples(st.just("undo"), st.integers(0, 20)),
    # what replaying real histories found: git's add reads the user's index (tests/test_real_history.py)
    st.tuples(st.just("crlf_index"), st.sampled_from(NAMES)),
    st.tuples(st.just("bring_back"), st.sampled_from(NAMES)),
    st.tuples(st.just("pull"), st.lists(st.sampled_from(NAMES), min_size=1, max_size=3), CONTENT),
    st.tuples(st.just("snap_path")),
    st.tuples(st.just("daemon"), st.booleans()),
)
# One of OPS: its kind, then arguments (str, bytes, int, bool, list[str]) whose types depend on the kind.
Op = tuple[Any, ...]
SETTINGS = settings(max_examples=stress.count(30, 6), deadline=None, suppress_health_check=list(HealthCheck),
                    print_blob=True, phases=[Phase.explicit, Phase.reuse, Phase.generate])
IN_PROCESS_SETTINGS = settings(SETTINGS, max_examples=stress.count(8, 3))  # the writer, not git's add, is new there


def _new_repo(tmp: Path, autocrlf: str | None, in_process: bool = False) -> Workdir:
    home = tmp / "home"
    home.mkdir()
    env = git_env(home)
    env["GIT_REWIND_MAX_FILE_SIZE"] = str(LIMIT)
    path = tmp / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], env=env, check=True)
    w = Workdir(path, env, IN_PROCESS if in_process else None)
    script = tmp / "pfx.sh"  # outside the work tree
    script.write_text(PREFIX_FILTER)
    script.chmod(0o755)
    w.git("config", "filter.pfx.clean", f"{script} clean")
    w.git("config", "filter.pfx.smudge", f"{script} smudge")
    if autocrlf:
        w.git("config", "core.autocrlf", autocrlf)
    for name in ("a.txt", "d.f", "sub/e.txt", "run.sh"):  # tracked files for the index bits to land on
        w.write(name, f"{name}\nfirst\n")
    w.commit_all("base")
    return w


def _apply(w: Workdir, op: Op) -> None:
    """One user action; git refusing it (an ignored path to add, say) is part of the game."""
    kind, *args = op
    if kind == "write":
        path = w.path / args[0]
        if path.is_symlink() or path.exists():
            path.unlink()
        w.write(args[0], args[1])
    # A skip-worktree bit set by hand on a file that is (or becomes) absent after the private index was
    # seeded is not followed (the private index records the deletion; a real sparse checkout is, since
    # `git add` honours its patterns): the operations avoid that case.
    elif kind == "delete":
        if ((w.path / args[0]).is_symlink() or (w.path / args[0]).is_file()) and args[0] not in _skipped(w):
            (w.path / args[0]).unlink()
    elif kind in ("attributes", "ignore"):
        name = (args[0] + (".gitattributes" if kind == "attributes" else ".gitignore"))
        path = w.path / name
        old = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        w.write(name, old + args[1].encode() + b"\n")
    elif kind == "flag":
        tracked = [p for p in w.git("ls-files").split("\n")[:-1] if os.path.lexists(w.path / p)]
        if tracked:
            w.git("update-index", args[0], "--", tracked[args[1] % len(tracked)], check=False)
    elif kind == "commit":
        present = [p for p in args[0] if (w.path / p).is_file() or (w.path / p).is_symlink()]
        if present:
            w.git("add", "--", *present, check=False)
        w.git("commit", "-q", "--allow-empty", "-m", "user commit", check=False)
    elif kind == "symlink":
        path = w.path / args[0]
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.exists():
            path.unlink()
        os.symlink(os.path.relpath(w.path / args[1], path.parent), path)
    elif kind == "chmod":
        path = w.path / args[0]
        if path.is_file() and not path.is_symlink():
            path.chmod(path.stat().st_mode ^ 0o111)
    elif kind == "big":
        w.write(BIG, args[0] * (LIMIT // len(args[0]) + 1))
    elif kind == "crlf_index":  # committed with CRLF before any attribute said otherwise
        path = w.path / args[0]
        if path.is_symlink() or path.is_file():
            path.unlink()
        if not path.is_dir():
            w.write(args[0], b"line1\r\nline2\r\n")
            blob = w.git("hash-object", "-w", "--no-filters", "--", args[0]).strip()
            w.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{args[0]}", check=False)
    elif kind == "pull":  # a commit made elsewhere, checked out: files arrive with the user's index
        _pull(w, args[0], args[1])


def _pull(w: Workdir, paths: list[str], content: bytes) -> None:
    """`git checkout` of a new commit on top of HEAD that sets PATHS to CONTENT (as stored, no filters); git
    refusing it over local changes is part of the game."""
    index = w.path / ".git" / "pull-index"
    env = {**w.env, "GIT_INDEX_FILE": str(index)}

    def git(*args: str, input: bytes | None = None) -> str:
        return subprocess.run(["git", *args], cwd=w.path, env=env, input=input, capture_output=True,
                              check=False).stdout.decode().strip()

    git("read-tree", "HEAD")
    blob = git("hash-object", "-w", "--stdin", "--no-filters", input=content)
    for path in paths:
        git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    tree = git("write-tree")
    index.unlink(missing_ok=True)
    if tree:
        commit = git("commit-tree", tree, "-p", "HEAD", "-m", "pulled")
        w.git("checkout", "-q", commit, check=False)


def _snap(w: Workdir, checkpoints: list[str], oracle: str | None = None, paths: list[str] | None = None) -> None:
    """A checkpoint (of PATHS only, with them), which must hold git's own tree; the user's index untouched."""
    oracle = oracle or oracle_tree(w, LIMIT)
    index_before = _user_index(w)
    named = [a for p in paths or [] for a in ("--path", p)]
    run = w.rewind("snap", *named, "-m", f"step {len(checkpoints)}", "--allow-empty")
    assert run.returncode == 0, run.stderr
    assert _user_index(w) == index_before
    assert agree(w, w.tree_of("refs/rewind/manual"), oracle), (paths, run.stderr)
    checkpoints.append(w.git("rev-parse", "refs/rewind/manual").strip())


def _snap_paths(w: Workdir, checkpoints: list[str]) -> None:
    """`snap --path` naming every path that changed since the newest checkpoint (what a hook names when it
    knows what is about to change), or a whole snap where one is a directory now (--path reads files)."""
    oracle = oracle_tree(w, LIMIT)
    changed = w.git("diff-tree", "-r", "-z", "--name-only", "--no-renames", "refs/rewind/manual", oracle).split("\0")
    changed = [p for p in changed if p]
    if any((w.path / p).is_dir() and not (w.path / p).is_symlink() for p in changed):
        changed = []
    _snap(w, checkpoints, oracle, changed)


def _skipped(w: Workdir) -> set[str]:
    """Paths marked skip-worktree in the user's index."""
    return {r[2:] for r in w.git("ls-files", "-v", "-z").split("\0") if r[:1] == "S"}


def _checked_out(w: Workdir, commit: str, tmp: Path) -> Path:
    """What `git checkout-index` writes of COMMIT's tree, under its attributes and the repository's config."""
    out = tmp / "checkout"
    if out.exists():
        shutil.rmtree(out)
    env = {**w.env, "GIT_INDEX_FILE": str(tmp / "checkout-index")}
    subprocess.run(["git", "read-tree", commit], cwd=w.path, env=env, check=True)
    subprocess.run(["git", "checkout-index", "-a", f"--prefix={out}/"], cwd=w.path, env=env, check=True,
                   capture_output=True)
    return out


def _user_index(w: Workdir) -> bytes:
    """The user's index file as it is (read directly: a `git status` would refresh and rewrite it)."""
    return (w.path / ".git" / "index").read_bytes()


def _blobs(w: Workdir, commit: str) -> dict[str, str]:
    out = w.git("ls-tree", "-r", "-z", "--full-tree", commit)
    return {entry.split("\t", 1)[1]: entry.split()[2] for entry in out.split("\0") if entry}


def _not_capturable(w: Workdir, paths: list[str]) -> set[str]:
    """Of PATHS, those a restore leaves as they are: ignored by the current rules, too large and untracked,
    or marked skip-worktree in the user's index (a sparse checkout's: git's checkout does not write them)."""
    out = subprocess.run(["git", "check-ignore", "--no-index", "-z", "--stdin"], cwd=w.path, env=w.env,
                         input=b"".join(os.fsencode(p) + b"\0" for p in paths), capture_output=True).stdout
    found = {os.fsdecode(p) for p in out.split(b"\0") if p}
    sparse = _skipped(w)
    return found | {p for p in paths if p == BIG or p in sparse}


@SETTINGS
# The daemon started after a file larger than max_file_size appeared: its first scan had no base, so it kept
# the file in the tree its answers build on, and the next checkpoint held it (found by this test).
@example(autocrlf=None, ops=[("snap_path",), ("flag", "--no-skip-worktree", 4), ("snap_path",), ("write", "h.tmp", b""),
                             ("undo", 3), ("snap",), ("symlink", "sub/link", "sub/e.txt"), ("ignore", "", "!keep.log"),
                             ("ignore", "sub/", "sub/deep/"), ("big", b"\xe2"), ("daemon", True),
                             ("chmod", "build/keep")], pick=86)
@example(autocrlf=None, ops=[("flag", "--skip-worktree", 0), ("flag", "--assume-unchanged", 1),
                             ("write", "a.txt", b"edited\n"), ("write", "d.f", b"edited\n")], pick=0)
@example(autocrlf="true", ops=[("attributes", "", "*.f filter=pfx"), ("write", "sub/f.crlf", b"x\r\ny\n"),
                               ("snap",), ("ignore", "", "*.tmp"), ("ignore", "", "!h.tmp"), ("write", "h.tmp", b"t"),
                               ("write", "d.f", b"changed\n"), ("big", b"z")], pick=0)
@example(autocrlf="true", ops=[("write", "h.tmp", b"one\ntwo\n"), ("snap",), ("chmod", "h.tmp")], pick=0)
@example(autocrlf=None, ops=[("flag", "--no-skip-worktree", 2), ("attributes", "sub/", "*.bat text eol=crlf"),
                             ("chmod", "x.log"), ("big", b"missing "), ("snap",), ("delete", "h.tmp"),
                             ("chmod", "h.tmp"), ("ignore", "sub/", "!sub/i.tmp"), ("write", "sub/deep/g.f", b""),
                             ("ignore", "", "sub/deep/"), ("snap",)], pick=42)
@given(autocrlf=st.sampled_from([None, "true", "input"]), ops=st.lists(OPS, min_size=3, max_size=12),
       pick=st.integers(0, 100))
def test_every_checkpoint_equals_gits_own_add_all_and_an_undo_writes_what_git_checks_out(
        autocrlf: str | None, ops: list[Op], pick: int) -> None:
    _play_in_new_repo(autocrlf, ops, pick, in_process=False)


@IN_PROCESS_SETTINGS
@example(autocrlf=None, ops=[("write", "sub/e.txt", b"x"), ("snap",), ("delete", "sub/e.txt"), ("snap_path",),
                             ("daemon", True), ("write", "a.txt", b"one\n"), ("write", "run.sh", b"#"), ("snap",),
                             ("undo", 0)], pick=1)
@given(autocrlf=st.sampled_from([None, "true", "input"]), ops=st.lists(OPS, min_size=3, max_size=12),
       pick=st.integers(0, 100))
def test_checkpoints_written_in_process_equal_gits_own_add_all_too(
        autocrlf: str | None, ops: list[Op], pick: int) -> None:
    _play_in_new_repo(autocrlf, ops, pick, in_process=True)


def _play_in_new_repo(autocrlf: str | None, ops: list[Op], pick: int, in_process: bool) -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        w = _new_repo(tmp, autocrlf, in_process)
        try:
            _play(w, tmp, ops, pick)
        finally:
            w.rewind("daemon", "stop")
            daemon.reap(tmp)


def _play(w: Workdir, tmp: Path, ops: list[Op], pick: int) -> None:
    checkpoints: list[str] = []
    safety_oracle = ""
    for op in [*ops, ("snap",)]:
        if op[0] == "daemon":
            w.rewind("daemon", "start" if op[1] else "stop")
            continue
        if op[0] == "bring_back":  # deleted, checkpointed, brought back as it was
            path = w.path / op[1]
            if not path.is_file() or path.is_symlink() or op[1] in _skipped(w):
                continue
            content, mode = path.read_bytes(), path.stat().st_mode
            path.unlink()
            _snap(w, checkpoints)
            path.write_bytes(content)
            path.chmod(mode)
            _snap(w, checkpoints)
            continue
        if op[0] == "snap_path" and checkpoints:
            _snap_paths(w, checkpoints)
            continue
        if op[0] == "undo" and checkpoints:  # a restore in the middle; its safety checkpoint is checked too
            index_before = _user_index(w)
            commit = checkpoints[op[1] % len(checkpoints)]
            number = json.loads(w.git("notes", "--ref=rewind", "show", commit))["seq"]
            run = w.rewind("undo", str(number), "--yes")
            assert run.returncode == 0, run.stderr
            assert _user_index(w) == index_before
            if "safety checkpoint" in run.stdout:
                assert agree(w, w.tree_of("refs/rewind/manual"), safety_oracle), (op, run.stdout)
            continue
        _apply(w, op)
        safety_oracle = oracle_tree(w, LIMIT)  # what a checkpoint of this state must hold
        if op[0] == "snap":
            _snap(w, checkpoints, safety_oracle)
    target = checkpoints[pick % len(checkpoints)]
    seq = json.loads(w.git("notes", "--ref=rewind", "show", target))["seq"]
    index_before, disk_before = _user_index(w), disk_files(w.path)
    # A file ignored by the rules before the undo was never captured (not even by its safety checkpoint),
    # so the undo leaves it, though the target's rules no longer ignore it: "ignored under either".
    ignored_before = _not_capturable(w, sorted(disk_before))
    run = w.rewind("undo", str(seq), "--yes")
    assert run.returncode == 0, run.stderr
    assert _user_index(w) == index_before
    expected = disk_files(_checked_out(w, target, tmp))
    disk = disk_files(w.path)
    blobs = _blobs(w, target)
    for path, value in expected.items():
        if path in disk and disk[path] != value:
            # Left as it was, as git's checkout leaves a file it sees as unchanged: the same blob.
            safety = w.git("ls-tree", "refs/rewind/manual", "--", path)
            assert disk[path] == disk_before.get(path) and file_hash(w, path) == blobs[path], (
                path, run.stdout, safety, disk_before.get(path), disk[path], value)
        elif path not in disk:
            # only a path a checkpoint never captures may be missing
            assert path in _not_capturable(w, [path]), path
    extra = sorted(set(disk) - set(expected))
    assert set(extra) <= _not_capturable(w, extra) | ignored_before, extra
    w.fsck()
