"""Building checkpoint trees from the working tree.

Two ways, both producing exactly the tree `git add -A` with the user's index would:
- `scan`: the whole tree through a private index under .git/rewind/ (git's own CLI: it is
  the fastest scanner, refreshes stat data, and handles every ignore rule); the private index
  is seeded from the user's index on first use so the first scan hashes only what changed.
- `hash_paths`: only the named files, for hooks that know what is about to change.
Where git's add decides from the index it adds to, both decide from the user's (conversion.py).
"""

from __future__ import annotations

import os
import re
import stat

from ..base import gitcmd, layout, minijson, objects
from ..base.config import xdg_config_home
from ..base.fsutil import NotRegular, read_regular, write_atomic
from ..base.note import Oid
from ..base.repo import SCRATCH_SCAN, Repo, clear_stale_lock, git_dirs
from . import conversion, journal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..base import daemon
    from ..base.writer import Writer

try:  # the built-in SHA-1 loads no OpenSSL (hashlib costs ~5 ms of import on a hook)
    from _sha1 import sha1
except ImportError:  # pragma: no cover - builds without it
    from hashlib import sha1

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # in a SHA-1 repository; empty_tree() for any
MODE_FILE = 0o100644
MODE_EXEC = 0o100755
MODE_LINK = 0o120000
MODE_GITLINK = 0o160000
MODE_TREE = 0o040000

# What git says of a file that went or changed while it added it (gone before its lstat or its open, shorter
# when read than when stat'ed), and of the add it then gives up on.
_VANISHED = re.compile(r"unable to stat '.*': No such file or directory|open\(\".*\"\): No such file or directory"
                       r"|short read while indexing|failed to insert into database|unable to index file"
                       r"|(updating|adding) files failed")
_NO_COMMIT = re.compile(r"error: '(.+?)/?' does not have a commit checked out")
VANISHED_TRIES = 3  # whole adds that lost a file midway before one that adds the rest (an agent deleting and
# rewriting files all the time leaves no moment without one)


def _only_vanished(stderr: str) -> bool:
    """Every error git reported is a file that went while it added it."""
    errors = [line for line in stderr.splitlines() if line.startswith(("error:", "fatal:"))]
    return all(_VANISHED.search(line) for line in errors)


class Scan:
    """A whole-tree scan: the tree id and what was left out of it."""

    __slots__ = ("tree", "skipped", "changes", "base", "stream")

    def __init__(self, tree: Oid, skipped: list[dict[str, Any]]) -> None:
        self.tree = tree
        self.skipped = skipped
        self.changes: list[tuple[str, str]] = []  # (status, path) against `base`
        self.base: str | None = None
        self.stream: Writer | None = None  # still writing the tree (scan's KEEP_OPEN)

    def finish_stream(self) -> None:
        """Let the tree reach the repository (before any other git process reads it)."""
        if self.stream is not None:
            stream, self.stream = self.stream, None
            stream.finish()


class PathState:
    """One named path as it is on disk now: None content means it is absent (or left out)."""

    __slots__ = ("path", "mode", "content", "oid", "skipped")

    def __init__(self, path: str) -> None:
        self.path = path
        self.mode = 0
        self.content: bytes | None = None
        self.oid: str | None = None
        self.skipped: dict[str, Any] | None = None

    @property
    def present(self) -> bool:
        """It is there, to be recorded (its content read here, or its blob stored by git)."""
        return self.content is not None or self.oid is not None


_EMPTY_TREES = {"sha1": EMPTY_TREE, "sha256": "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"}


def blob_oid(content: bytes, object_format: str = "sha1") -> str:
    """The id git gives a blob with this content, in a repository of OBJECT_FORMAT (Repo.object_format)."""
    header = b"blob %d\0" % len(content)
    if object_format == "sha256":
        from hashlib import sha256  # only SHA-256 repositories pay for hashlib (and OpenSSL)

        return sha256(header + content).hexdigest()
    return str(sha1(header + content).hexdigest())


def empty_tree(repo: Repo) -> Oid:
    """The id of the empty tree in REPO's object format."""
    return Oid(_EMPTY_TREES[repo.object_format])


# whole-tree scan ---------------------------------------------------------------


def _skip_file(repo: Repo) -> str:
    return os.path.join(repo.rewind_dir, layout.SKIPPED)


def load_skipped(repo: Repo) -> list[dict[str, Any]]:
    """Paths left out of earlier scans (too large, or repositories with no commit)."""
    try:
        with open(_skip_file(repo), encoding="utf-8", errors="surrogateescape") as fh:
            data = minijson.loads(fh.read())
        if not isinstance(data, list):
            return []
        return [entry for entry in data if isinstance(entry, dict) and "path" in entry]
    except (FileNotFoundError, ValueError):
        return []


def _save_skipped(repo: Repo, entries: list[dict[str, Any]]) -> None:
    path = _skip_file(repo)
    if not entries:
        if os.path.exists(path):
            os.unlink(path)
        return
    import json  # rare (the list changed); minijson keeps lone surrogates, which UTF-8 cannot write

    write_atomic(path, json.dumps(entries))


def _still_skipped(repo: Repo, entry: dict[str, Any], limit: int) -> bool:
    full = os.path.join(repo.root, entry["path"])
    if entry.get("reason") == "nested repository with no commit":
        return os.path.isdir(os.path.join(full, ".git")) and not _has_commit(full)
    try:
        st = os.lstat(full)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size > limit


def _has_commit(nested: str) -> bool:
    try:
        return bool(gitcmd.run(["rev-parse", "-q", "--verify", "HEAD"], cwd=nested, check=False).strip())
    except OSError:
        return False


def _seed_private_index(repo: Repo) -> bool:
    """Start the private index as a copy of the user's: its stat data spares hashing every file.

    True when the private index is new (seeded, or absent for want of a user index): then it
    holds nothing but what the user tracks.
    """
    target = repo.private_index
    if os.path.exists(target):
        if not os.path.exists(target + _FLAGS_CLEARED):  # seeded by a version that copied the bits
            _clear_hiding_flags(repo)
        return False
    source = os.path.join(repo.gitdir, "index")
    try:
        with open(source, "rb") as src:
            data = src.read()
    except FileNotFoundError:
        return True
    write_atomic(target, data)
    _clear_hiding_flags(repo)
    # Keep the source's mtime: git re-checks entries as new as the index file ("racily clean");
    # a fresh mtime would make it trust stat data it must not. (Under the work-tree lock: nobody
    # reads the private index between the rename and this.)
    st = os.stat(source)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    return True


_FLAGS_CLEARED = ".flags-cleared"  # beside the private index: its copied flags are gone


def _clear_hiding_flags(repo: Repo) -> None:
    """Drop the assume-unchanged and skip-worktree bits the copy took over from the user's index.

    With them `git add -A` never looks at those files, so a change to them would never reach a
    checkpoint and an undo would lose it. A skip-worktree entry whose file is absent is a sparse
    checkout's: it keeps its bit, so the checkpoint does not record a deletion nobody made.
    """
    env = _index_env(repo)
    listed = gitcmd.run(["ls-files", "-v", "-z"], cwd=repo.root, env=env)
    assumed, skipped = [], []
    for record in listed.split(b"\0"):
        if len(record) < 3:
            continue
        tag, path = record[:1], record[2:]
        if tag.islower():
            assumed.append(path)
        if tag.upper() == b"S" and os.path.lexists(os.path.join(repo.root, os.fsdecode(path))):
            skipped.append(path)
    # One flag a call: update-index applies only one of --no-assume-unchanged / --no-skip-worktree.
    for flag, paths in (("--no-assume-unchanged", assumed), ("--no-skip-worktree", skipped)):
        if paths:
            gitcmd.run(["update-index", flag, "-z", "--stdin"], cwd=repo.root, env=env,
                       input=b"".join(p + b"\0" for p in paths))
    write_atomic(repo.private_index + _FLAGS_CLEARED, "")


def _clear_index_lock(repo: Repo) -> None:
    """Remove an index.lock left by a killed scan; wait for one an orphaned git still holds.

    We hold the work-tree lock, so no live git-rewind owns it. But `kill -9` of git-rewind
    leaves its `git add` running to completion: deleting its lock then would let it rename
    its index over ours.
    """
    clear_stale_lock(repo.private_index + ".lock")


def _index_env(repo: Repo) -> dict[str, str]:
    """The private index, and new objects written to the scan's quarantine (see `_admit_objects`)."""
    alternates = [_objects_dir(repo)]
    if os.environ.get("GIT_ALTERNATE_OBJECT_DIRECTORIES"):
        alternates.append(os.environ["GIT_ALTERNATE_OBJECT_DIRECTORIES"])
    return {"GIT_INDEX_FILE": repo.private_index, "GIT_OBJECT_DIRECTORY": _quarantine(repo),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": os.pathsep.join(alternates)}


# quarantine ------------------------------------------------------------------------
# `git add -A` hashes a file over max_file_size before we can know to leave it out, and
# `git add` has no option to hash without storing. So a scan writes its new objects into a
# directory of its own (the repository's objects as an alternate, as git's own receive-pack
# does) and moves them in at its end, less the blobs of the files it left out.


def _objects_dir(repo: Repo) -> str:
    return os.environ.get("GIT_OBJECT_DIRECTORY") or os.path.join(repo.commondir, "objects")


def _quarantine(repo: Repo) -> str:
    return os.path.join(repo.rewind_dir, layout.OBJECTS)


def _admit_objects(repo: Repo, leave_out: frozenset[str] = frozenset()) -> None:
    """Move the quarantine's objects into the repository, except the loose blobs LEAVE_OUT, which go.

    Also run before a scan: a killed scan's objects are admitted whole, since its private
    index may name them.
    """
    source = _quarantine(repo)
    try:
        names = os.listdir(source)
    except FileNotFoundError:
        return
    target = _objects_dir(repo)
    for name in names:
        if len(name) == 2:
            _admit_loose(os.path.join(source, name), os.path.join(target, name), name, leave_out)
    pack_dir = os.path.join(source, "pack")
    if os.path.isdir(pack_dir):  # blobs over core.bigFileThreshold are streamed into a pack of their own
        _admit_packs(repo, pack_dir, os.path.join(target, "pack"), leave_out)


def _admit_packs(repo: Repo, source: str, target: str, leave_out: frozenset[str]) -> None:
    names = os.listdir(source)
    dropped = set()
    for name in names:
        if leave_out and name.endswith(".idx"):
            with open(os.path.join(source, name), "rb") as fh:
                listed = repo.git(["show-index"], input=fh.read(), check=False).split(b"\n")
            if listed and all(line.split()[1].decode() in leave_out for line in listed if line.strip()):
                dropped.add(name[: -len(".idx")])
    os.makedirs(target, exist_ok=True)
    # The index last: git uses a pack only once its .idx is there.
    for name in sorted(names, key=lambda n: n.endswith(".idx")):
        if name.rsplit(".", 1)[0] in dropped:
            os.unlink(os.path.join(source, name))
        else:
            _move(os.path.join(source, name), os.path.join(target, name))


def _admit_loose(source: str, target: str, prefix: str, leave_out: frozenset[str]) -> None:
    for name in os.listdir(source):
        if prefix + name in leave_out:
            os.unlink(os.path.join(source, name))
            continue
        os.makedirs(target, exist_ok=True)
        _move(os.path.join(source, name), os.path.join(target, name))
    os.rmdir(source)


def _move(source: str, target: str) -> None:
    """Rename SOURCE to TARGET, or drop it when TARGET exists (objects are named by their content)."""
    if os.path.exists(target):
        os.unlink(source)
    else:
        os.rename(source, target)


def _write_tree(repo: Repo) -> Oid:
    return Oid(repo.git(["write-tree"], env=_index_env(repo)).decode().strip())


def _remove_from_index(repo: Repo, paths: list[str]) -> None:
    if paths:
        spec = b"\0".join(os.fsencode(p) for p in paths)
        repo.git(["rm", "--cached", "-f", "-r", "-q", "--ignore-unmatch", "--pathspec-from-file=-",
                  "--pathspec-file-nul"], env=_index_env(repo), input=spec)


def _add_all(repo: Repo, skipped: list[dict[str, Any]], excludes_file: str | None,
             ignore_errors: bool = False) -> None:
    """`git add -A` into the private index, leaving out SKIPPED paths and whatever EXCLUDES_FILE's rules
    ignore on their own (a path ignored under either rule set is never captured). IGNORE_ERRORS: git adds
    the rest where a file cannot be read, writes the index and fails after."""
    # core.safecrlf=true makes git refuse a conversion it cannot reverse: a checkpoint records it all the same.
    args = ["-c", "core.untrackedCache=true", "-c", "core.safecrlf=false", "add", "-A"]
    if ignore_errors:
        args.append("--ignore-errors")
    left_out = [os.fsencode(e["path"]) for e in skipped]
    if excludes_file:
        left_out += _untracked_ignored_by(repo, excludes_file)
    spec: bytes | None = None
    if left_out:
        spec = b"\0".join([b"."] + [b":(exclude,literal,top)" + p for p in left_out])
        args += ["--pathspec-from-file=-", "--pathspec-file-nul"]
    repo.git(args, env=_index_env(repo), input=spec)


def _untracked_ignored_by(repo: Repo, excludes_file: str) -> list[bytes]:
    """Paths the person does not track that EXCLUDES_FILE's rules alone ignore (a wholly ignored directory
    once, as `dir/`): `git add` never reads them, so their content never reaches the object database, even
    where the private index holds them from an earlier checkpoint (`_drop_newly_ignored` then drops them).

    Given as `core.excludesFile`, the file would be the weakest source: a current `.gitignore`
    line `!x` would re-include an `x` it ignores. git evaluates it alone here, so a negation in
    one rule set never cancels an ignore of the other.
    """
    out = repo.git(["ls-files", "-z", "-o", "-i", "--directory", f"--exclude-from={excludes_file}"])
    found = [p.rstrip(b"/") for p in out.split(b"\0") if p]
    if not found:
        return []
    # Those the current rules ignore too stay out anyway, and naming them makes `git add` refuse.
    out = repo.git(["check-ignore", "--no-index", "-z", "--stdin"], input=b"\0".join(found) + b"\0", check=False)
    now = set(out.split(b"\0"))
    return [p for p in found if p not in now]


def changed_paths(repo: Repo, old_tree: Oid, new_tree: Oid, env: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(status, path) for every file that differs between two trees (ENV: a scan's, to see its quarantine)."""
    if old_tree == new_tree:
        return []
    out = repo.git(["diff-tree", "-r", "-z", "--no-renames", "--name-status", old_tree, new_tree], env=env)
    parts = out.split(b"\0")
    return [(parts[i].decode(), os.fsdecode(parts[i + 1])) for i in range(0, len(parts) - 1, 2)]


def current_tree(repo: Repo, limit: int) -> Oid:
    """The tree of the working tree as it is now (a full scan under the work-tree lock), for diffs."""
    with repo.worktree_lock():
        return scan(repo, limit).tree


class Counts:
    """Files changed and lines added and removed between two trees (`git diff --numstat`)."""

    __slots__ = ("files", "added", "removed")

    def __init__(self, files: int = 0, added: int = 0, removed: int = 0) -> None:
        self.files = files
        self.added = added
        self.removed = removed

    def text(self) -> str:
        return f"Files changed: {self.files}, lines added: {self.added}, lines removed: {self.removed}"

    def to_dict(self) -> dict[str, int]:
        return {"files": self.files, "added": self.added, "removed": self.removed}


def numstat(repo: Repo, old_tree: Oid, new_tree: Oid) -> Counts:
    """What changed from OLD_TREE to NEW_TREE; a binary file counts as changed with 0 lines."""
    counts = Counts()
    if old_tree == new_tree:
        return counts
    out = repo.git(["diff-tree", "-r", "-z", "--no-renames", "--numstat", old_tree, new_tree])
    for record in out.split(b"\0"):
        fields = record.split(b"\t", 2)
        if len(fields) != 3:
            continue
        counts.files += 1
        counts.added += int(fields[0]) if fields[0].isdigit() else 0
        counts.removed += int(fields[1]) if fields[1].isdigit() else 0
    return counts


def scan(repo: Repo, limit: int, excludes_file: str | None = None, base_tree: Oid | None = None,
         keep_open: bool = False) -> Scan:
    """Write the whole working tree (tracked + untracked, not ignored) as a tree. Hold the work-tree lock.

    With BASE_TREE, the result also lists what changed against it, and files that changed since
    and are larger than LIMIT are left out (listed in `skipped`). When the work tree's daemon runs
    (daemon.py) and can name what changed since the tree of its last scan, only those paths are
    read (`_scan_changed`); else, or in any doubt, the whole tree is (`_scan_full`). Either way the
    daemon is told the tree, which its next answer builds on. EXCLUDES_FILE (a restore's: the target's
    ignore rules): the daemon's answer read as those rules say (_scan_changed_ruled), or a full scan under
    both rule sets; the daemon is told only a tree of the work tree's own rules.

    KEEP_OPEN (the checkpoint's own caller): the tree may come back still inside its writer (Writer: a
    running fast-import), `stream`, which the caller must finish (or abort) before any other git process looks
    at the tree.
    """
    from ..base import daemon

    repo.ensure_dirs()
    journal.sweep(repo)  # a killed restore's temporary files are not the tree's, either way
    changes = daemon.begin(repo, rules_signature)
    try:
        result = answered = None  # answered: the tree under the work tree's own rules, the daemon's next base
        if changes is not None and changes.full is None:
            assert changes.base is not None and changes.paths is not None
            try:
                if excludes_file:  # a restore's: the target's rules too
                    result, answered = _scan_changed_ruled(repo, changes, limit, excludes_file, base_tree)
                else:
                    result = _scan_changed(repo, changes.base, changes.paths, limit, base_tree, changes.nested,
                                           keep_open)
            except (gitcmd.GitError, OSError):
                result = answered = None  # e.g. the base tree pruned since (gc, then git gc --prune=now): scan it all
        if result is None:
            try:
                result = _scan_full(repo, limit, excludes_file, base_tree)
            except gitcmd.GitError as exc:
                if not _MISSING_OBJECT.search(exc.stderr):
                    raise
                _forget_private_index(repo)
                result = _scan_full(repo, limit, excludes_file, base_tree)
        if changes is not None and (answered or not excludes_file):
            changes.done(answered or result.tree)  # never a tree made under other rules than the daemon's
        return result
    finally:
        if changes is not None:
            changes.close()


# What git says when an object the private index or the last scan names is gone: `gc` dropped every
# checkpoint holding it and `git gc --prune=now` pruned it (git does not see our private index).
_MISSING_OBJECT = re.compile(r"bad object|error building trees|invalid object|unable to read [0-9a-f]{40}")


def _forget_private_index(repo: Repo) -> None:
    """Drop the private index and the last scan's state: a cache, rebuilt from the person's index (whose
    objects git keeps) by the next scan, which then hashes the files it does not track once."""
    for path in (repo.private_index, repo.private_index + _FLAGS_CLEARED, _scan_state_file(repo)):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    conversion.forget(repo)


def _scan_changed(repo: Repo, base: Oid, paths: list[str], limit: int, base_tree: Oid | None,
                  nested: list[str] | None = None, keep_open: bool = False) -> Scan | None:
    """BASE (the tree of the daemon's last scan) with PATHS read again: the tree `git add -A` would write,
    since nothing else changed. None when the full scan must decide.

    The paths are read as `git add` with the user's index would (hash_paths); where that index, the
    attributes or the settings changed since BASE was checked, every file of BASE that may now be stored
    otherwise is read again (conversion.disagreements). As with
    `git add -A` on the private index, a path BASE holds is never dropped for being ignored (the rules
    have not changed: the daemon answers a full scan when they do); a new one is, when the rules ignore
    it. A changed file larger than LIMIT makes it give way to the full scan. Each NESTED repository
    (the daemon does not look inside them) is recorded as the commit it has checked out, as git does.
    KEEP_OPEN: the writer that wrote the tree (objects.writer) is left open in the result's `stream` (see scan).
    """
    behind = _behind_link(repo, paths)  # absent for git: the link is what it records
    readable = [p for p in paths if p not in behind]
    key = conversion.reference_key(repo)  # before anything is read: a change meanwhile is seen next time
    states = hash_paths(repo, readable, limit)
    states += [PathState(p) for p in sorted(behind)]
    # The paths read now were added with the user's entries as the reference; the rest of BASE was too,
    # unless the user's index, the attributes or the settings changed since BASE was checked.
    stale = conversion.stale(conversion.verified(repo, base), key, paths)
    if stale is not None:
        differ = conversion.differences(repo, base)
        again = conversion.disagreements(repo, differ, stale == conversion.EVERY, leave=set(paths))
        redone = {p for p in again if differ[p][1] == MODE_GITLINK}  # a submodule not checked out: git keeps it
        links = conversion.hash_as_added(repo, sorted(redone)) if redone else {}
        states = [s for s in states if s.path not in redone]
        for path in sorted(redone):
            state = PathState(path)
            state.mode, state.oid = links.get(path, (0, None))
            states.append(state)
        states += hash_paths(repo, [p for p in again if p not in redone], limit)
    if any(s.skipped for s in states):
        return None  # whether git keeps a large file depends on its content against BASE_TREE: git decides
    dirty = set(paths)
    skipped = [e for e in load_skipped(repo) if e["path"] not in dirty]
    for rel in nested or []:
        link = PathState(rel)
        link.oid = _nested_head(repo, rel)
        if link.oid is None:
            return None  # no commit checked out (the full scan leaves it out, or git words the error)
        link.mode = MODE_GITLINK
        states.append(link)
    listed: list[tuple[str, str]] | None = []  # what diff-tree would say, while no directory goes
    tree, kept = base, None
    if states:
        fi = objects.writer(repo, len(states))
        try:
            before = fi.ls(base, [os.fsencode(s.path) for s in states])
            new = [s.path for s, was in zip(states, before, strict=True)
                   if was is None and s.present]
            if _under_submodule(fi, base, states, before, new, set(nested or [])):
                fi.abort()
                return None
            ignored_now = _check_ignore(repo, new, ["--no-index"]) if new else set()
            if ignored_now:  # unless the person's index tracks one (see tracked_ignored)
                tracked = cached_tracked_ignored(repo, _tracked_ignored_key(repo, rules_signature(repo)))
                if tracked is None:
                    fi.abort()
                    return None
                ignored_now -= set(tracked)
            edits: list[PathState] = []
            for s, was in zip(states, before, strict=True):
                present = s.present
                if not present or s.path in ignored_now:
                    on_disk_dir = os.path.isdir(os.path.join(repo.root, s.path))
                    if was is not None and not (was[0] == MODE_TREE and on_disk_dir):
                        edits.append(PathState(s.path))  # gone (a whole directory), or now a directory
                        listed = None if was[0] == MODE_TREE or listed is None else listed + [("D", s.path)]
                elif was != (s.mode, s.oid):
                    edits.append(s)
                    if was is not None and was[0] == MODE_TREE:
                        listed = None  # a directory's files go with it: diff-tree names them
                    elif listed is not None:
                        listed.append(("A" if was is None else "M" if _kind(was[0]) == _kind(s.mode) else "T",
                                       s.path))
            # Deletions first: a directory that became a file (or the reverse) loses its old entries before
            # the new ones are written.
            edits.sort(key=lambda e: e.present)
            if edits:
                tree = fi.tree(SCRATCH_SCAN, base, edits)
        except BaseException:
            fi.abort()
            raise
        if keep_open and edits:
            kept = fi  # the caller's checkpoint goes on with the same writer (one git process less)
        elif edits:
            fi.finish()
        else:
            fi.abort()  # it only answered questions: it ends cleanly
    conversion.mark_verified(repo, tree, key)
    result = Scan(tree=tree, skipped=skipped)
    result.stream = kept
    if base_tree:
        if base_tree == base and listed is not None:  # the usual case: no diff-tree needed
            result.changes = sorted(listed, key=lambda change: os.fsencode(change[1]))
        else:
            result.finish_stream()  # diff-tree must see the tree
            result.changes = changed_paths(repo, base_tree, tree)
        result.base = base_tree
    return result


def _under_submodule(fi: Writer, base: Oid, states: list[PathState], before: list[tuple[int, Oid] | None],
                     new: list[str], nested: set[str]) -> bool:
    """A changed path is a submodule of BASE that is not a repository now (a directory git keeps as the commit
    an index records, or a repository that lost its .git), or a new file below one: what git decides there
    depends on the index, which the full scan follows."""
    if any(was is not None and was[0] == MODE_GITLINK and s.path not in nested
           for s, was in zip(states, before, strict=True)):
        return True
    parents = sorted({os.path.dirname(p) for p in new} - {""})
    above: set[str] = set()
    for parent in parents:
        while parent and parent not in above:
            above.add(parent)
            parent = os.path.dirname(parent)
    listed = sorted(above)
    found = fi.ls(base, [os.fsencode(d) for d in listed])
    return any(entry is not None and entry[0] == MODE_GITLINK for entry in found)


def _kind(mode: int) -> int:
    """A file and an executable are one kind to diff-tree (a change between them is M); a link, a gitlink
    and a directory are others (T)."""
    return MODE_FILE if mode in (MODE_FILE, MODE_EXEC) else mode


def _nested_head(repo: Repo, rel: str) -> str | None:
    """The commit a nested repository at REL has checked out, which `git add -A` records as its gitlink
    (read from its files as git's resolve_gitlink_ref does); None when it has none or it is not plain."""
    top = os.path.join(repo.root, rel)
    dirs = git_dirs(top)
    if dirs is None:
        return None
    gitdir, commondir = dirs
    if os.path.isdir(os.path.join(commondir, "reftable")):
        return None  # read through git only: the full scan does
    head = Repo(top, gitdir, commondir).read_ref("HEAD")
    return head if head and all(c in "0123456789abcdef" for c in head) else None


def _behind_link(repo: Repo, paths: list[str]) -> set[str]:
    """Of PATHS, those whose directory is not a directory on disk: gone, a file, or a symbolic link (a directory
    replaced by a link to another). Reading them would follow the link, maybe out of the work tree."""
    real: dict[str, bool] = {"": True}

    def is_dir(rel: str) -> bool:
        if rel not in real:
            try:
                mode = os.lstat(os.path.join(repo.root, rel)).st_mode if is_dir(os.path.dirname(rel)) else 0
            except OSError:
                mode = 0
            real[rel] = stat.S_ISDIR(mode)
        return real[rel]

    return {p for p in paths if not is_dir(os.path.dirname(p))}


# a restore's scan under a target's ignore rules, answered by the daemon -------------------------
# The daemon's changed paths are those of the work tree's own rules; a restore across a .gitignore change also
# leaves out what the target's rules ignore (pitfall 2; ignore.py writes those rules as EXCLUDES_FILE), as the
# full scan does with `_untracked_ignored_by` and `_drop_newly_ignored`.


_UNREAD_MAX = 2000  # changed paths asked of git by name in one command; beyond, the full scan decides


def _unread(repo: Repo, paths: list[str], excludes_file: str) -> set[str] | None:
    """Of PATHS (those the daemon says changed), the files on disk the person's index does not track that
    EXCLUDES_FILE's rules alone ignore: a restore's safety scan never reads them, so their content never
    reaches the object database (pitfall 2). git decides (`ls-files -o -i`, which looks only in the
    directories leading to PATHS); None when there are too many to name on one command line."""
    if not paths:
        return set()
    if len(paths) > _UNREAD_MAX:
        return None
    out = repo.git(["ls-files", "-z", "-o", "-i", f"--exclude-from={excludes_file}", "--",
                    *(":(literal,top)" + p for p in paths)])
    return {os.fsdecode(p) for p in out.split(b"\0") if p}


def _scan_changed_ruled(repo: Repo, changes: daemon.Changes, limit: int, excludes_file: str,
                        base_tree: Oid | None) -> tuple[Scan | None, Oid | None]:
    """The daemon's answer (CHANGES) made into the tree a full scan under the work tree's rules and
    EXCLUDES_FILE's writes: the changed paths read except those the target's rules ignore (`_unread`), then
    whatever else of the tree they ignore left out (`_leave_out`). Also the tree to tell the daemon (one of the
    work tree's own rules: the paths read before anything was left out), or None when a path went unread
    (the daemon then keeps it as changed for the next checkpoint). (None, None): the full scan decides."""
    assert changes.base is not None and changes.paths is not None
    skip = _unread(repo, changes.paths, excludes_file)
    if skip is None:
        return None, None
    scan = _scan_changed(repo, changes.base, [p for p in changes.paths if p not in skip], limit, base_tree,
                         changes.nested)
    if scan is None:
        return None, None
    answered = None if skip else scan.tree
    return _leave_out(repo, scan, excludes_file, base_tree), answered


def _target_ignored(repo: Repo, tree: Oid, excludes_file: str) -> list[bytes]:
    """The paths of TREE the person's index does not track that EXCLUDES_FILE's rules alone ignore: what a
    full scan under those rules leaves out of a tree (_untracked_ignored_by, _drop_newly_ignored).

    git decides, the rules evaluated alone as there: the ignored entries of the person's index with TREE laid
    over it (`--with-tree`), less those of the index alone (its tracked files stay, as git keeps them). Two
    processes side by side, whatever the number of changed paths; no walk of the work tree.
    """
    args = ["ls-files", "-z", "-c", "-i", f"--exclude-from={excludes_file}"]
    both = gitcmd.Background([*args, f"--with-tree={tree}"], cwd=repo.root)
    try:
        tracked = set(repo.git(args).split(b"\0"))
        return sorted({p for p in both.result().split(b"\0") if p} - tracked)
    finally:
        both.close()


def _leave_out(repo: Repo, scan: Scan, excludes_file: str, base_tree: Oid | None) -> Scan:
    """SCAN, the daemon's incremental tree under the work tree's own rules, without the paths the target's
    rules (EXCLUDES_FILE) ignore and the person does not track: the tree the full scan writes under both
    rule sets (pitfall 2), with the changes against BASE_TREE listed again when any path went."""
    scan.finish_stream()  # git reads the tree now
    drop = _target_ignored(repo, scan.tree, excludes_file)
    if not drop:
        return scan
    with objects.writer(repo) as writer:
        tree = writer.tree(SCRATCH_SCAN, scan.tree, [PathState(os.fsdecode(p)) for p in drop])
    result = Scan(tree=tree, skipped=scan.skipped)
    if base_tree:
        result.changes = changed_paths(repo, base_tree, tree)
        result.base = base_tree
    return result


def _add_tree(repo: Repo, skipped: list[dict[str, Any]], excludes_file: str | None) -> list[dict[str, Any]]:
    """`git add -A` into the private index, again while files vanish under it; nested repositories with no
    commit are left out (added to SKIPPED, which is returned)."""
    skipped = list(skipped)
    vanished = 0
    last: gitcmd.GitError | None = None
    for _attempt in range(20):
        try:
            _add_all(repo, skipped, excludes_file, ignore_errors=vanished >= VANISHED_TRIES)
            return skipped
        except gitcmd.GitError as exc:
            last = exc
            empty = [m.rstrip("/") for m in _NO_COMMIT.findall(exc.stderr)]
            empty = [p for p in empty if p not in {e["path"] for e in skipped}]
            if empty:
                skipped += [{"path": p, "reason": "nested repository with no commit"} for p in empty]
                _remove_from_index(repo, empty)
                continue
            if not _VANISHED.search(exc.stderr):
                raise
            # --ignore-errors: git added all the rest and wrote the index (exit 1); files still coming and going
            # keep their last state. But a file gone before git's lstat kills it all the same (128), the index
            # unwritten: taking that index as it was would lose every change of this scan.
            if vanished >= VANISHED_TRIES and exc.returncode == 1 and _only_vanished(exc.stderr):
                return skipped
            vanished += 1  # a file went or changed between git's stat and its read (an agent at work): look again
    if last is not None and _VANISHED.search(last.stderr):
        raise last  # files kept going under 20 adds in a row
    raise gitcmd.GitError(["add"], 1, "too many nested repositories with no commit")


def _staged(repo: Repo, paths: list[str]) -> dict[str, str]:
    """The blob the private index holds for each of PATHS."""
    out = repo.git(["ls-files", "-s", "-z", "--", *[":(literal,top)" + p for p in paths]], env=_index_env(repo))
    found = {}
    for record in out.split(b"\0"):
        if record:
            meta, _, name = record.partition(b"\t")
            found[os.fsdecode(name)] = meta.split()[1].decode()
    return found


def _misread_nested(repo: Repo, differ: dict[str, conversion.Entry]) -> list[str]:
    """Entries of the private index the user's index lacks (DIFFER: conversion.differences) that git keeps
    where, without them, it would record the directory otherwise: a nested repository's commit whose .git is
    gone (its files are new now), and files captured inside a directory that has become a repository (a
    commit now)."""
    misread = []
    repos: dict[str, bool] = {}

    def is_repo(rel: str) -> bool:
        if rel not in repos:
            repos[rel] = os.path.lexists(os.path.join(repo.root, rel, ".git"))
        return repos[rel]

    for path, (ours, theirs, _a, _b) in differ.items():
        if theirs or not ours:
            continue
        if ours == MODE_GITLINK:
            if not is_repo(path):
                misread.append(path)
            continue
        parent = os.path.dirname(path)
        while parent:
            if is_repo(parent):
                misread.append(path)
                break
            parent = os.path.dirname(parent)
    return misread


def _scan_full(repo: Repo, limit: int, excludes_file: str | None, base_tree: Oid | None) -> Scan:
    """The whole tree through the private index (one diff serves both the changes against BASE_TREE and
    the check for changed .gitignore files when the last scan was that tree)."""
    _admit_objects(repo)
    os.makedirs(_quarantine(repo), exist_ok=True)
    key = conversion.reference_key(repo)  # before anything is read: a change meanwhile is seen next time
    fresh = _seed_private_index(repo)
    _clear_index_lock(repo)
    previous = load_skipped(repo)
    skipped = [e for e in previous if _still_skipped(repo, e, limit)]
    if skipped:
        _remove_from_index(repo, [e["path"] for e in skipped])
    skipped = _add_tree(repo, skipped, excludes_file)
    tree = _write_tree(repo)
    env = _index_env(repo)
    pending = conversion.Differences(repo, tree, env)  # the tree against the user's index, on the other core
    try:
        last_tree, last_rules, last_key = _read_scan_state(repo)
        rules = rules_signature(repo)
        changes = changed_paths(repo, base_tree, tree, env) if base_tree else []
        if last_tree == base_tree:
            since_last = changes
        else:
            since_last = changed_paths(repo, last_tree, tree, env) if last_tree else []
        differ = pending.result()
    finally:
        pending.close()
    # The entries only the private index has that make git see a directory otherwise than it would with the
    # user's index: dropped, and the tree added again.
    misread = _misread_nested(repo, differ)
    if misread:
        _remove_from_index(repo, misread)
        skipped = _add_tree(repo, skipped, excludes_file)
        tree = _write_tree(repo)
        differ = conversion.differences(repo, tree, env)
        changes = changed_paths(repo, base_tree, tree, env) if base_tree else []
        since_last = changed_paths(repo, last_tree, tree, env) if last_tree else []
    differ_tree = since_tree = tree
    if skipped != previous:
        _save_skipped(repo, skipped)
    rules_changed = any(p == ".gitignore" or p.endswith("/.gitignore") for _s, p in since_last)
    # A fresh index holds only the user's tracked files, which ignore rules never drop.
    if excludes_file or (not fresh and (rules != last_rules or last_tree is None or rules_changed)):
        if _drop_newly_ignored(repo, excludes_file):
            tree = _write_tree(repo)
            changes = changed_paths(repo, base_tree, tree, env) if base_tree else []
    left = {e["path"] for e in skipped}
    forced = [p for p in tracked_ignored(repo, rules, refresh=fresh or rules_changed) if p not in left
              and (os.path.islink(os.path.join(repo.root, p)) or os.path.isfile(os.path.join(repo.root, p)))]
    if forced:  # rare: only where the person tracks files a rule ignores
        spec = b"\0".join(b":(literal,top)" + os.fsencode(p) for p in forced)
        repo.git(["-c", "core.safecrlf=false", "add", "-f", "--pathspec-from-file=-", "--pathspec-file-nul"],
                 env=env, input=spec)
        again = _write_tree(repo)
        if again != tree:
            tree = again
            changes = changed_paths(repo, base_tree, tree, env) if base_tree else []
    # The decisions git takes from the index, as the user's index takes them (a fresh index is a copy of it).
    if tree != since_tree and last_tree:
        since_last = changed_paths(repo, last_tree, tree, env)
    stale = conversion.stale(key if fresh else last_key, key, [p for _s, p in since_last])
    if tree != differ_tree:
        differ = conversion.differences(repo, tree, env)
    if differ:
        # Every path that differs from the user's index: git may have read any of them again just now with the
        # private index's entry as the reference, to the same blob as before (conversion.Checked keeps that cheap).
        readd = conversion.disagreements(repo, differ, stale == conversion.EVERY)
        if readd:
            conversion.add_with_reference(repo, env, readd)
            conversion.Checked(repo).added(differ, _staged(repo, readd))
            tree = _write_tree(repo)
            changes = changed_paths(repo, base_tree, tree, env) if base_tree else []
    result = Scan(tree=tree, skipped=skipped)
    result.changes = changes
    result.base = base_tree
    # Files that grew past LIMIT since BASE_TREE are left out here, once for every caller: a restore
    # plans against exactly the tree its safety checkpoint records, so it never removes one.
    left_out = leave_out_large(repo, result, limit)
    _admit_objects(repo, left_out)
    _write_scan_state(repo, result.tree, rules, key)
    conversion.mark_verified(repo, result.tree, key)
    return result


# files the person tracks that a rule ignores -----------------------------------------
# `git add -A` keeps updating them while they are in the index. Ours can lose one (the file was
# deleted, a checkpoint dropped its entry, it came back): git add -A then never adds it again,
# where a copy of the person's index still tracks it. So those paths are added with -f. Their
# list costs an ignore match of the whole index: it is kept in a file, keyed by the person's
# index and the ignore files outside the tree, and made again when a .gitignore changed.


def _tracked_ignored_key(repo: Repo, rules: str) -> str:
    try:
        st = os.stat(os.path.join(repo.gitdir, "index"))
        index = f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}"
    except OSError:
        index = "-"
    return f"{index} {rules}"


def tracked_ignored(repo: Repo, rules: str, refresh: bool = False) -> list[str]:
    """The files the person's index tracks that the ignore rules match (usually none)."""
    path = os.path.join(repo.rewind_dir, layout.TRACKED_IGNORED)
    key = _tracked_ignored_key(repo, rules)
    if not refresh:
        cached = cached_tracked_ignored(repo, key)
        if cached is not None:
            return cached
    out = repo.git(["ls-files", "-z", "-c", "-i", "--exclude-standard"])
    found = [os.fsdecode(p) for p in out.split(b"\0") if p]
    write_atomic(path, key.encode() + b"\n" + b"\0".join(os.fsencode(p) for p in found))
    return found


def cached_tracked_ignored(repo: Repo, key: str) -> list[str] | None:
    """tracked_ignored's list as last made, if KEY (_tracked_ignored_key) still holds; else None."""
    try:
        with open(os.path.join(repo.rewind_dir, layout.TRACKED_IGNORED), "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return None
    first, _, rest = data.partition(b"\n")
    if first.decode("utf-8", "replace") != key:
        return None
    return [os.fsdecode(p) for p in rest.split(b"\0") if p]


# ignore rules that change after a file was captured --------------------------------
# `git add -A` never drops an index entry because it became ignored. The user's own
# tracked files stay (git keeps tracking them too); files only our private index knew are
# dropped as soon as a rule ignores them, so a checkpoint equals `git add -A` on a copy of
# the user's index.


def _scan_state_file(repo: Repo) -> str:
    return os.path.join(repo.rewind_dir, layout.SCAN_STATE)


def _read_scan_state(repo: Repo) -> tuple[Oid | None, str | None, str | None]:
    """The last full scan's tree, the ignore rules' signature then, and the reference key its private index
    was checked under (conversion.reference_key; None from a version that did not check)."""
    try:
        with open(_scan_state_file(repo)) as fh:
            lines = fh.read().split("\n")
        tree, rules = lines[:2]
        return Oid(tree), rules, (lines[2] or None) if len(lines) > 3 else None
    except (FileNotFoundError, ValueError):
        return None, None, None


def _write_scan_state(repo: Repo, tree: Oid, rules: str, key: str) -> None:
    write_atomic(_scan_state_file(repo), f"{tree}\n{rules}\n{key}\n")


def user_excludes_file(repo: Repo) -> str:
    """The user's own ignore file: core.excludesFile (asked of git only when a config file mentions it),
    else git's default, $XDG_CONFIG_HOME/git/ignore."""
    if conversion.config_mentions(repo, (b"excludesfile",)):
        out = gitcmd.run(["config", "--path", "core.excludesFile"], cwd=repo.root, check=False).decode().strip()
        if out:
            return os.path.expanduser(out)
    return os.path.join(xdg_config_home(), "git", "ignore")


def rules_signature(repo: Repo) -> str:
    """Stat data of the ignore files outside the tree (.gitignore changes show in the tree)."""
    parts = []
    for path in (os.path.join(repo.commondir, "info", "exclude"), user_excludes_file(repo)):
        try:
            st = os.stat(path)
            parts.append(f"{st.st_mtime_ns}:{st.st_size}")
        except OSError:
            parts.append("-")
    return " ".join(parts)


def _ignored_in_index(repo: Repo, env: dict[str, str] | None, excludes_file: str | None) -> set[bytes]:
    """Index entries the current rules ignore, or EXCLUDES_FILE's rules on their own (each set asked of git)."""
    found: set[bytes] = set()
    sources = [["--exclude-standard"]] + ([[f"--exclude-from={excludes_file}"]] if excludes_file else [])
    for source in sources:
        out = repo.git(["ls-files", "-z", "-c", "-i", *source], env=env)
        found.update(p for p in out.split(b"\0") if p)
    return found


def _drop_newly_ignored(repo: Repo, excludes_file: str | None) -> bool:
    """Remove entries that are ignored now and not tracked by the user; True if any was."""
    ours = _ignored_in_index(repo, _index_env(repo), excludes_file)
    if not ours:
        return False
    theirs = _ignored_in_index(repo, None, excludes_file)
    drop = sorted(ours - theirs)
    if not drop:
        return False
    _remove_from_index(repo, [os.fsdecode(p) for p in drop])
    return True


def leave_out_large(repo: Repo, scan_result: Scan, limit: int) -> frozenset[str]:
    """Drop the files the scan found added or changed since its base that are larger than LIMIT from the
    private index (and its tree); returns the blob ids they had there (empty when none was left out)."""
    large: list[dict[str, Any]] = []
    for path in [p for status, p in scan_result.changes if status in ("A", "M", "T")]:
        try:
            st = os.lstat(os.path.join(repo.root, path))
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_size > limit:
            large.append({"path": path, "reason": "larger than max_file_size", "size": st.st_size})
    if not large:
        return frozenset()
    staged = repo.git(["ls-files", "-s", "-z", "--", *[":(literal,top)" + e["path"] for e in large]],
                      env=_index_env(repo))
    blobs = frozenset(entry.split(b" ")[1].decode() for entry in staged.split(b"\0") if entry)
    _remove_from_index(repo, [e["path"] for e in large])
    scan_result.skipped += large
    _save_skipped(repo, scan_result.skipped)
    scan_result.tree = _write_tree(repo)
    left_out = {e["path"] for e in large}
    scan_result.changes = [(s, p) for s, p in scan_result.changes if p not in left_out]
    return blobs


# known paths -------------------------------------------------------------------


def hash_paths(repo: Repo, paths: list[str], limit: int) -> list[PathState]:
    """Each named path as `git add` with the user's index would store it; absent, unreadable or too large
    ones have no content.

    Read and hashed here where the bytes and the exec bit on disk are the whole answer; where git may
    convert them or take modes from the index (conversion.needs_git), `git update-index` adds the files
    with the user's entries as the reference (conversion.hash_as_added): the one rule the whole-tree scan
    follows too.
    """
    if not conversion.needs_git(repo, paths):
        return [_read_path(repo, rel, limit, True) for rel in paths]
    states = [_read_path(repo, rel, limit, False) for rel in paths]
    files = [s for s in states if s.mode in (MODE_FILE, MODE_EXEC)]
    if files:
        added = conversion.hash_as_added(repo, [s.path for s in files])
        for state in files:
            state.mode, state.oid = added.get(state.path, (0, None))
    return states


def _read_path(repo: Repo, rel: str, limit: int, content: bool) -> PathState:
    """REL as it is on disk: a link with its target, a regular file with its content when CONTENT (else
    just its mode, for git to hash), anything else absent."""
    full = os.path.join(repo.root, rel)
    state = PathState(path=rel)
    try:
        st = os.lstat(full)
    except (FileNotFoundError, NotADirectoryError):  # gone, or a parent became a file
        return state
    if stat.S_ISLNK(st.st_mode):
        state.mode = MODE_LINK
        state.content = os.fsencode(os.readlink(full))
    elif stat.S_ISREG(st.st_mode):
        if st.st_size > limit:
            state.skipped = {"path": rel, "reason": "larger than max_file_size", "size": st.st_size}
            return state
        state.mode = MODE_EXEC if st.st_mode & 0o100 else MODE_FILE
        if not content:
            return state
        try:
            state.content = read_regular(full)  # not a FIFO swapped in since the lstat
        except (FileNotFoundError, NotRegular):
            state.mode = 0
            return state
    else:
        return state
    state.oid = blob_oid(state.content, repo.object_format)
    return state


def inside_nested_repo(repo: Repo, rel: str) -> bool:
    """True when REL lies inside a nested repository or submodule (its own .git)."""
    parts = rel.split("/")
    current = repo.root
    for part in parts[:-1]:
        current = os.path.join(current, part)
        if os.path.lexists(os.path.join(current, ".git")):
            return True
    return False


def ignored(repo: Repo, paths: list[str]) -> set[str]:
    """Which of PATHS git ignores (files the user tracks never are).

    Asked first by the rules alone (`--no-index`: no read of a 100k-entry index on the hot
    path); only paths the rules match are asked again with the user's index.
    """
    if not paths:
        return set()
    by_rules = _check_ignore(repo, paths, ["--no-index"])
    return _check_ignore(repo, sorted(by_rules), []) if by_rules else set()


def ignored_dirs(repo: Repo, under: str) -> set[str]:
    """Directories below UNDER that git ignores whole and that hold nothing git tracks: what a file watcher
    (the daemon's, `git rewind watch`'s) never watches, as the whole-tree scan never reads them.

    `ls-files -o -i --directory` names a directory whose files are all ignored; only one the rules
    ignore as a directory (check-ignore of the directory itself) can never hold a file that is not.
    """
    args = ["ls-files", "-z", "-o", "-i", "--directory", "--exclude-standard"]
    if under:
        args += ["--", ":(literal,top)" + under]
    out = repo.git(args, check=False)
    candidates = [p[:-1] for p in out.split(b"\0") if p.endswith(b"/")]
    if not candidates:
        return set()
    found = repo.git(["check-ignore", "-z", "--stdin"], input=b"\0".join(candidates) + b"\0", check=False)
    return {os.fsdecode(p) for p in found.split(b"\0") if p}


def _check_ignore(repo: Repo, paths: list[str], flags: list[str]) -> set[str]:
    spec = b"\0".join(os.fsencode(p) for p in paths) + b"\0"
    out = repo.git(["check-ignore", *flags, "-z", "--stdin"], input=spec, check=False)
    return {os.fsdecode(p) for p in out.split(b"\0") if p}
