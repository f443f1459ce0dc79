"""The file watcher (watcher.py, through the daemon): a checkpoint built from the paths it names is the
checkpoint a whole-tree scan builds, and both are git's own `add -A` + `write-tree`.

The Watcher itself: the cookie barrier and epochs, a .gitignore edit, the watch limit.

Differential: random sequences of what people and agents do to a tree (writes, same-size rewrites in
the same second, deletes, new nested directories, directory renames, `rm -rf`, exec bits, symbolic
links to files, to directories and to nothing, a file becoming a directory and back, `.gitignore`
files in the root and below, `.git/info/exclude`, `core.excludesFile`, `.gitattributes` eol and text
rules, a file over max_file_size) are applied in lockstep to two repositories, one with
a daemon running and one without, with a checkpoint after every step. Each checkpoint's tree must be
the oracle's (helpers/oracle.py) and the two repositories' trees the same; the daemon's own count of
how it answered proves that its paths, not the fallback, built checkpoints.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from helpers import daemon
from helpers.agentcli import disk_files
from helpers.oracle import agree, file_hash, oracle_tree
from helpers.workdir import Workdir, git_env
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from git_rewind.watching.watcher import Watcher, WatchError

# the Watcher itself -----------------------------------------------------------------------------


def _watcher(tmp_path: Path, ignored: frozenset[str] = frozenset(), max_watches: int | None = None) -> Watcher:
    (tmp_path / "cookies").mkdir(exist_ok=True)
    return Watcher(str(tmp_path / "tree"), str(tmp_path / "cookies"),
                   lambda under: {d for d in ignored if d.startswith(under)}, max_watches)


def test_names_say_what_stood_at_each_path_before_its_first_name_event(tmp_path: Path) -> None:
    """What the daemon's kept listing of ignored files is checked against (Server.ignored): only names made,
    removed or renamed onto count (an edit in place does not), each with what stood there before the first
    one; a .gitignore event loses them all; forget_names keeps only what came after its epoch."""
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "kept.py").write_text("a\n")
    (tree / "src" / "gone.py").write_text("a\n")
    (tree / "old").mkdir()
    watcher = _watcher(tmp_path)
    try:
        start = watcher.settle(2.0)
        assert start is not None
        watcher.forget_names(start)
        (tree / "src" / "kept.py").write_text("edited in place\n")
        (tree / "src" / "new.py").write_text("new\n")
        (tree / "src" / "gone.py").unlink()
        (tree / "old").rmdir()
        (tree / "tmp").write_text("renamed onto kept.py\n")
        os.replace(tree / "tmp", tree / "src" / "kept.py")
        epoch = watcher.settle(2.0)
        assert epoch is not None and watcher.names_lost <= start
        assert {p: before for p, (_first, before, _last) in watcher.names.items()} == {
            "src/new.py": "absent", "src/gone.py": "file", "old": "dir", "tmp": "absent", "src/kept.py": "unknown"}
        (tree / "src" / "new.py").unlink()  # after the epoch: the first event still says what stood there
        later = watcher.settle(2.0)
        assert later is not None and watcher.names["src/new.py"][:2] == (epoch, "absent")
        watcher.forget_names(epoch)
        assert watcher.names == {"src/new.py": (epoch, "unknown", later)}  # what stood there at EPOCH: not known
        watcher.forget_names(later)
        assert watcher.names == {}
        (tree / "src" / ".gitignore").write_text("*.log\n")
        lost = watcher.settle(2.0)
        assert lost is not None and watcher.names_lost > later and watcher.names == {}
    finally:
        watcher.close()


def test_the_barrier_sees_every_change_made_before_it_and_forget_keeps_later_ones(tmp_path: Path) -> None:
    (tmp_path / "tree" / "src").mkdir(parents=True)
    watcher = _watcher(tmp_path)
    try:
        first = watcher.settle(2.0)
        assert first is not None and watcher.doubt is not None  # a new watcher knows no base
        watcher.forget(first)
        assert watcher.doubt is None and watcher.dirty == {}
        (tmp_path / "tree" / "src" / "a.py").write_text("a\n")
        (tmp_path / "tree" / "new" / "deep").mkdir(parents=True)  # before its watch is there
        (tmp_path / "tree" / "new" / "deep" / "b.py").write_text("b\n")
        epoch = watcher.settle(2.0)
        assert epoch is not None
        assert {"src/a.py", "new", "new/deep/b.py"} <= set(watcher.dirty)
        (tmp_path / "tree" / "new" / "deep" / "c.py").write_text("c\n")  # after the barrier: a later epoch
        later = watcher.settle(2.0)
        assert later is not None and watcher.dirty["new/deep/c.py"] > epoch
        watcher.forget(epoch)
        assert set(watcher.dirty) == {"new/deep/c.py"} and watcher.doubt is None
    finally:
        watcher.close()


def test_after_the_first_cookie_the_barrier_takes_in_what_is_queued_without_a_file_of_its_own(
        tmp_path: Path) -> None:
    """The kernel queues an event before the write, rename or unlink that made it returns: once one cookie
    proved events arrive, later barriers only read the queue (no cookie file, no wait) and still see every
    change made before them, however many."""
    (tmp_path / "tree" / "src").mkdir(parents=True)
    watcher = _watcher(tmp_path)
    try:
        watcher.forget(watcher.settle(2.0) or 0)
        (tmp_path / "cookies").rmdir()  # a cookie now could not be made: os.open would raise
        for round_ in range(50):
            made = [tmp_path / "tree" / "src" / f"r{round_}-{i}.py" for i in range(round_ % 7 + 1)]
            for path in made:
                path.write_text(f"{round_}\n")
            epoch = watcher.settle(2.0)
            assert epoch is not None
            assert {f"src/{p.name}" for p in made} <= {p for p, e in watcher.dirty.items() if e <= epoch}
            watcher.forget(epoch)
        (tmp_path / "tree" / "src" / "r0-0.py").unlink()
        (tmp_path / "tree" / "src" / "r1-0.py").rename(tmp_path / "tree" / "moved.py")
        epoch = watcher.settle(2.0)
        assert {"src/r0-0.py", "src/r1-0.py", "moved.py"} <= {p for p, e in watcher.dirty.items() if e == epoch}
    finally:
        watcher.close()


def test_a_gitignore_edit_puts_the_watcher_in_doubt_and_asks_for_a_rewatch(tmp_path: Path) -> None:
    (tmp_path / "tree" / "build").mkdir(parents=True)
    watcher = _watcher(tmp_path, ignored=frozenset({"build"}))
    try:
        assert "build" not in watcher.wds  # ignored whole: never watched
        watcher.forget(watcher.settle(2.0) or 0)
        (tmp_path / "tree" / ".gitignore").write_text("")
        epoch = watcher.settle(2.0)
        assert epoch is not None and watcher.doubt is not None and watcher.rewatch
        watcher._ignored_dirs = lambda under: set()  # the rule is gone
        watcher.watch_all()
        assert "build" in watcher.wds and not watcher.rewatch
    finally:
        watcher.close()


def test_a_tree_with_more_directories_than_the_watch_limit_cannot_be_watched(tmp_path: Path) -> None:
    for rel in ("a", "b", "c/d"):
        (tmp_path / "tree" / rel).mkdir(parents=True)
    with pytest.raises(WatchError, match="watch limit"):
        _watcher(tmp_path, max_watches=3)


# the daemon against git's own add -A -------------------------------------------------------------


LIMIT = 2_000  # max_file_size of these repositories
FILES = ["a.txt", "b.txt", "c.crlf", "run.sh", "sub/d.txt", "sub/deep/e.bin", "new/n1/f.txt", "new/n1/n2/g.txt",
         "x.log", "node_modules/p/i.js", "build/out.o", "build/keep", "big.dat"]
DIRS = ["sub", "sub/deep", "new", "new/n1", "build", "node_modules"]
LINKS = ["l1", "sub/l2", "sub", "new/n1"]  # a link may take the place of a directory
GITIGNORE = "node_modules/\n*.log\n"
IGNORES = ["*.txt", "sub/", "deep/", "n1/", "*.bin", "build/", "!build/keep", "e.bin", "a.txt", "!x.log"]
ATTRIBUTES = ["*.txt text", "*.crlf text eol=crlf", "*.bin binary", "* text=auto", "*.txt -text", "*.sh eol=lf"]
CONTENT = st.one_of(
    st.just(b"one\ntwo\n"),
    st.just(b"line1\r\nline2\r\n"),
    st.just(b""),
    st.text(alphabet="ab \r\n", max_size=30).map(str.encode),
    st.binary(max_size=40),
)
OPS = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(FILES), CONTENT),
    st.tuples(st.just("rewrite"), st.sampled_from(FILES)),
    st.tuples(st.just("delete"), st.sampled_from(FILES + LINKS[:2])),
    st.tuples(st.just("rmtree"), st.sampled_from(DIRS)),
    st.tuples(st.just("rename"), st.sampled_from(DIRS), st.sampled_from(["moved", "sub/moved", "new"])),
    st.tuples(st.just("chmod"), st.sampled_from(FILES)),
    st.tuples(st.just("symlink"), st.sampled_from(LINKS), st.sampled_from(FILES[:6] + DIRS[:3] + ["missing"])),
    st.tuples(st.just("to_dir"), st.sampled_from(FILES[:5])),
    st.tuples(st.just("to_file"), st.sampled_from(DIRS + [f + "/inner" for f in FILES[:2]])),
    st.tuples(st.just("ignore"), st.sampled_from(["", "sub/", "new/"]), st.sampled_from(IGNORES)),
    st.tuples(st.just("exclude"), st.sampled_from(["info", "global"]), st.sampled_from(IGNORES)),
    st.tuples(st.just("attributes"), st.sampled_from(ATTRIBUTES)),
    st.tuples(st.just("big"), st.binary(min_size=1, max_size=4)),
)
# One of OPS: its kind, then str or bytes arguments whose types depend on the kind (_apply reads them as such).
Op = tuple[Any, ...]
SETTINGS = settings(max_examples=int(os.environ.get("WATCH_EXAMPLES", "6")), deadline=None,  # more: a longer hunt
                    suppress_health_check=list(HealthCheck), print_blob=True,
                    phases=[Phase.explicit, Phase.reuse, Phase.generate])



def _new_repo(tmp: Path) -> Workdir:
    home = tmp / "home"
    home.mkdir()
    env = git_env(home)
    env["GIT_REWIND_MAX_FILE_SIZE"] = str(LIMIT)
    env["GIT_REWIND_DAEMON"] = "off"  # no hook starts one behind the test's back
    path = tmp / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], env=env, check=True)
    w = Workdir(path, env)
    (tmp / "excludes").write_text("")
    w.git("config", "core.excludesFile", str(tmp / "excludes"))
    w.write(".gitignore", GITIGNORE)
    w.write(".gitattributes", "*.crlf text eol=crlf\n")
    # Tracked files no rule here ignores: a tracked file that is ignored, deleted and made again is left out
    # of checkpoints (test_snapshot.py), whether the daemon runs or not.
    w.write("run.sh", "run.sh\r\nfirst\n")
    w.commit_all("base")
    for name in ("a.txt", "sub/d.txt"):
        w.write(name, f"{name}\r\nfirst\n")
    w.write("x.log", "ignored\n")
    w.write("node_modules/p/i.js", "ignored\n")
    w.write("new/n1/f.txt", "untracked\n")
    w.write("build/out.o", "built\n")
    return w


def _make_room(root: Path, rel: str) -> None:
    """What `mkdir -p` of REL's directory and a write of REL need: no file or link above it, no directory at it."""
    parts = rel.split("/")
    for i in range(1, len(parts)):
        above = root.joinpath(*parts[:i])
        if above.is_symlink() or (above.exists() and not above.is_dir()):
            above.unlink()
    full = root / rel
    if full.is_symlink() or full.is_file():
        full.unlink()
    elif full.is_dir():
        shutil.rmtree(full)


def _toggle(path: Path, line: str) -> None:
    """Add LINE to an ignore or attributes file, or take it out again if it is there."""
    lines = path.read_text().splitlines() if path.is_file() and not path.is_symlink() else []
    lines = [x for x in lines if x != line] if line in lines else [*lines, line]
    if path.is_symlink() or path.is_dir():
        _make_room(path.parent, path.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(x + "\n" for x in lines))


def _apply(w: Workdir, op: Op) -> None:
    """One action on the tree; one a real shell would refuse (no such file) does nothing."""
    root = w.path
    kind, *args = op
    if kind == "nothing":
        return
    if kind == "write":
        _make_room(root, args[0])
        w.write(args[0], args[1])
    elif kind == "rewrite":  # same inode, same size, most likely the same second as the last checkpoint
        full = root / args[0]
        if full.is_file() and not full.is_symlink():
            old = full.read_bytes()
            with open(full, "r+b") as fh:
                fh.write(bytes(b ^ 0x20 for b in old) if old else b"")
    elif kind == "delete":
        full = root / args[0]
        if full.is_symlink() or full.is_file():
            full.unlink()
    elif kind == "rmtree":
        full = root / args[0]
        if full.is_dir() and not full.is_symlink():
            shutil.rmtree(full)
    elif kind == "rename":
        source, target = root / args[0], root / args[1]
        if (source.is_dir() and not source.is_symlink() and not os.path.lexists(target)
                and target.parent.is_dir() and not str(target).startswith(str(source) + "/")):
            os.rename(source, target)
    elif kind == "chmod":
        full = root / args[0]
        if full.is_file() and not full.is_symlink():
            full.chmod(full.stat().st_mode ^ 0o111)
    elif kind == "symlink":
        full = root / args[0]
        _make_room(root, args[0])
        full.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.relpath(root / args[1], full.parent), full)
    elif kind == "to_dir":  # a file replaced by a directory of the same name
        full = root / args[0]
        if full.is_file() and not full.is_symlink():
            full.unlink()
            w.write(args[0] + "/inner", "now a directory\n")
    elif kind == "to_file":  # a directory replaced by a file of the same name
        full = root / args[0]
        if full.is_dir() and not full.is_symlink():
            shutil.rmtree(full)
            w.write(args[0], "now a file\n")
    elif kind == "ignore":
        where = root / args[0]
        if where.is_dir() and not where.is_symlink():  # a shell cannot write into a file or through a link
            _toggle(where / ".gitignore", args[1])
    elif kind == "exclude":
        _toggle(root / ".git" / "info" / "exclude" if args[0] == "info" else root.parent / "excludes", args[1])
    elif kind == "attributes":
        _toggle(root / ".gitattributes", args[0])
    elif kind == "big":
        _make_room(root, "big.dat")
        w.write("big.dat", args[0] * (LIMIT // len(args[0]) + 1))


def _snap(w: Workdir) -> str:
    run = w.rewind("snap", "--allow-empty", "-m", "step")
    assert run.returncode == 0, run.stderr
    return w.tree_of("refs/rewind/manual")


def _kept(w: Workdir, before: dict[str, tuple[str, str]], tree: str | None) -> dict[str, str]:
    """Blobs of TREE (the previous checkpoint) for the files unchanged on disk since it was taken."""
    if tree is None:
        return {}
    now = disk_files(w.path)
    out = w.git("ls-tree", "-r", "-z", "--full-tree", tree)
    blobs = {e.split("\t", 1)[1]: e.split()[2] for e in out.split("\0") if e}
    return {p: blob for p, blob in blobs.items() if p in now and now[p] == before.get(p)}


def _blobs(w: Workdir, tree: str) -> dict[str, tuple[str, str]]:
    out = w.git("ls-tree", "-r", "-z", "--full-tree", tree)
    return {e.split("\t", 1)[1]: (e.split()[0], e.split()[2]) for e in out.split("\0") if e}


def _timing_only(on: Workdir, off: Workdir, on_tree: str, off_tree: str,
                 kept: dict[str, dict[str, str]]) -> bool:
    """The two repositories' trees differ only in files unchanged on disk whose blob in each is either the one git
    makes now or that repository's old one (its last checkpoint's, or the user's index's before the first): an
    attribute change, see helpers.oracle.agree."""
    mine, theirs = _blobs(on, on_tree), _blobs(off, off_tree)
    for path in set(mine) | set(theirs):
        if mine.get(path) == theirs.get(path):
            continue
        if path not in mine or path not in theirs or mine[path][0] != theirs[path][0]:
            return False
        staged = on.git("ls-files", "-s", "--", path).split()
        now = file_hash(on, path)
        for key, blob in (("on", mine[path][1]), ("off", theirs[path][1])):
            if blob != now and blob != kept[key].get(path, staged[1] if staged else None):
                return False
    return True


@SETTINGS
@example(ops=[("ignore", "", "build/"), ("rmtree", "build"), ("write", "build/out.o", b"x"), ("ignore", "", "build/"),
              ("write", "build/out.o", b"changed"), ("write", "build/y", b"new")])
@example(ops=[("to_file", "sub"), ("ignore", "sub/", "*.txt"), ("rename", "new", "sub/moved")])
@example(ops=[("attributes", "*.sh eol=lf"), ("attributes", "*.sh eol=lf"), ("attributes", "*.sh eol=lf")])
@example(ops=[("attributes", "* text=auto"), ("rmtree", "sub"), ("attributes", "* text=auto")])
@given(ops=st.lists(OPS, min_size=3, max_size=7))
def test_every_checkpoint_with_the_daemon_equals_one_without_and_gits_own_add_all(ops: list[Op]) -> None:
    with tempfile.TemporaryDirectory(prefix="rewind-watch-") as name:
        tmp = Path(name)
        (tmp / "on").mkdir()
        (tmp / "off").mkdir()
        watched, plain = _new_repo(tmp / "on"), _new_repo(tmp / "off")
        try:
            watched.ok("daemon", "start")
            before: dict[str, dict[str, tuple[str, str]]] = {"on": {}, "off": {}}
            last: dict[str, str | None] = {"on": None, "off": None}
            first = daemon.answered(watched)
            # A checkpoint before the first action: the daemon's first scan, at its start, filled the private index
            # as an earlier checkpoint would have, so from here both repositories have an old blob per file.
            for step, op in enumerate([("nothing",), *ops, ("write", "final.txt", b"last\n")]):
                trees, kept_by = {}, {}
                for key, w in (("on", watched), ("off", plain)):
                    _apply(w, op)
                    kept = kept_by[key] = _kept(w, before[key], last[key])
                    expected = oracle_tree(w, LIMIT)
                    trees[key] = _snap(w)
                    assert agree(w, trees[key], expected, kept), (key, step, op)
                    before[key], last[key] = disk_files(w.path), trees[key]
                if trees["on"] != trees["off"]:  # only where git's own answer depends on timing
                    assert _timing_only(watched, plain, trees["on"], trees["off"], kept_by), (step, op)
            final = daemon.answered(watched)
            # The last step is a plain write after a checkpoint: the daemon names it, whatever came before.
            assert final["changes"] > first["changes"], (first, final, daemon.status(watched))
            assert sum(final.values()) == len(ops) + 2, final  # every checkpoint asked it
        finally:
            daemon.stop(watched)
            daemon.reap(tmp)


def test_a_directory_replaced_by_a_link_is_the_link_and_nothing_behind_it_is_read(project: Workdir, tmp_path: Path,
                                                                                daemons: list[Workdir]) -> None:
    """`rm -r conf && ln -s /elsewhere conf`: the daemon names conf/settings.py, which now reads through the link
    (outside the work tree here); git's add -A records the link alone, and nothing behind it is read."""
    w = project
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "settings.py").write_text("SECRET = 'outside the work tree'\n")
    w.write("conf/settings.py", "DEBUG = True\n")
    w.write("other/settings.py", "OTHER = 1\n")
    daemons.append(w)
    w.ok("daemon", "start")
    w.ok("snap")
    w.write("src/app.py", "print('a base the daemon builds on')\n")
    w.ok("snap")
    for target in (outside, w.path / "other"):
        shutil.rmtree(w.path / "conf") if not (w.path / "conf").is_symlink() else (w.path / "conf").unlink()
        w.write("conf.txt", f"now {target.name}\n")  # something the daemon surely names beside the link
        os.symlink(target, w.path / "conf")
        w.ok("snap", "--allow-empty")
        assert w.tree_of("refs/rewind/manual") == w.add_all_tree()
        w.git("cat-file", "-e", "refs/rewind/manual:conf")  # the link
        secret = w.git("hash-object", str(outside / "settings.py")).strip()
        assert not _stored(w, secret)
    assert daemon.answered(w)["changes"] >= 2


def _stored(w: Workdir, oid: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", oid], cwd=w.path, env=w.env).returncode == 0


def test_a_repository_made_inside_the_tree_while_the_daemon_runs_stays_a_gitlink(project: Workdir,
                                                                                daemons: list[Workdir]) -> None:
    """`git init vendor/lib` and a commit there while the daemon runs (it watches vendor/lib from its creation): git's
    add -A records the commit, never the files, so a change inside it is no path of the checkpoint's."""
    w = project
    daemons.append(w)
    w.ok("daemon", "start")
    w.ok("snap")
    w.write("vendor/lib/README", "a directory first\n")
    nested = Workdir(w.path / "vendor" / "lib", w.env)
    nested.git("init", "-q")
    nested.commit_all("its own history")
    w.ok("snap")
    assert w.git("ls-tree", "refs/rewind/manual", "vendor/lib").split()[:2] == ["160000", "commit"]
    w.write("vendor/lib/README", "changed inside the nested repository\n")
    w.write("vendor/lib/new.c", "new inside it\n")
    w.ok("snap", "--allow-empty")
    assert w.tree_of("refs/rewind/manual") == w.add_all_tree()
    assert w.git("ls-tree", "refs/rewind/manual", "vendor/lib").split()[:2] == ["160000", "commit"]
    # The last answer names paths (the commit is read from the nested repository's files); the one before is a full
    # scan when the daemon saw .git appear in a directory it watched, paths when vendor/ came with it already there.
    counts = daemon.answered(w)
    assert counts["changes"] >= 1 and sum(counts.values()) == 3, counts
