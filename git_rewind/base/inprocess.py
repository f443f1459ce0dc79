"""Checkpoints written in this process through pygit2: the objects `git fast-import` writes, without a process.

For a long-lived process that switched it on (objects.in_process): blobs, trees, commits and notes go
straight into the object database as loose objects, the way `git unpack-objects` leaves a small
fast-import pack. Trees are edited exactly as fast-import edits them (a port of its tree_content_set,
tree_content_remove and store_tree), and a note is placed exactly where fast-import places it (its
fanout comes from the number of notes in the tree, counted as it counts them; a fanout change moves
every note), so both writers give the same ids. Nothing here touches an index: objects only.

`refusal` decides, before anything is written, whether pygit2 can write a repository exactly as git
would; where it cannot (SHA-256, reftable, a setting fast-import would follow and libgit2 would not,
a repository libgit2 cannot open) the checkpoint goes through fast-import. The answer is kept while
nothing it reads changes (`_stamp`).
"""

from __future__ import annotations

import os

from . import gitcmd
from .note import Oid
from .writer import Writer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import pygit2

    from .repo import Repo
    from .writer import Edit, Entry

_COMMIT, _TREE, _BLOB = 1, 2, 3  # git's object type numbers (pygit2.enums.ObjectType)
_DIR = 0o040000
_GITLINK = 0o160000
_KIND = 0o170000
_HEXSZ = 40
_HEX = frozenset(b"0123456789abcdefABCDEF")
_CACHED_TREES = 50_000  # parsed trees kept (they never change); the cache starts over past this


def _isdir(mode: int) -> bool:
    return mode & _KIND == _DIR


def _is_hex(text: bytes) -> bool:
    return _HEX.issuperset(text)


def _fanout(notes: int) -> int:
    """fast-import's fanout for a notes tree of NOTES notes: one level per factor of 256."""
    fanout = 0
    while notes >> 8:
        notes >>= 8
        fanout += 1
    return fanout


def _fanout_path(hex_oid: bytes, fanout: int) -> list[bytes]:
    """The path fast-import gives the note of HEX_OID under FANOUT: 'ab/cd/ef…' at fanout 2."""
    return [hex_oid[2 * i:2 * i + 2] for i in range(fanout)] + [hex_oid[2 * fanout:]]


class _Entry:
    """A tree entry as fast-import holds it while it edits: MODE 0 is deleted (kept until stored), OID None
    is changed (stored anew), CHILDREN the entries of a directory once read."""

    __slots__ = ("name", "mode", "oid", "children")

    def __init__(self, name: bytes, mode: int, oid: bytes | None, children: list[_Entry] | None = None) -> None:
        self.name = name
        self.mode = mode
        self.oid = oid  # raw
        self.children = children


# What the environment may tell git that libgit2 does not read: where objects go, replace refs, settings
# (`git -c`, GIT_CONFIG_COUNT, other config files) that refusal could not see.
_ENVIRONMENT = ("GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_QUARANTINE_PATH",
                "GIT_REPLACE_REF_BASE", "GIT_NO_REPLACE_OBJECTS", "GIT_CONFIG", "GIT_CONFIG_GLOBAL",
                "GIT_CONFIG_SYSTEM", "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS")


def refusal(repo: Repo, git: pygit2.Repository) -> str | None:
    """Why GIT (REPO opened by pygit2) must be written by git's own CLI instead, or None.

    Checked before anything is written: what libgit2 cannot do (SHA-256 objects, reftable refs), and what
    fast-import would follow that a loose object written here would not (file names compared without case
    under core.ignoreCase, replace refs when it reads a tree, shared permissions, fsync settings, object
    directories and settings named by the environment, which libgit2 does not read)."""
    if repo.object_format != "sha1":
        return "SHA-256 objects"
    if os.path.isdir(os.path.join(repo.commondir, "reftable")):
        return "reftable refs"
    for name in _ENVIRONMENT:
        if os.environ.get(name):
            return f"${name}"
    replace = os.path.join(repo.commondir, "refs", "replace")
    if os.path.isdir(replace) and os.listdir(replace):
        return "replace refs"
    try:
        with open(os.path.join(repo.commondir, "packed-refs"), "rb") as fh:
            if b" refs/replace/" in fh.read():
                return "replace refs"
    except FileNotFoundError:
        pass
    config = git.config
    try:
        if config.get_bool("core.ignorecase"):
            return "core.ignorecase"
    except (KeyError, ValueError):
        pass
    for key in ("core.sharedrepository", "core.fsync", "core.fsyncobjectfiles", "extensions.refstorage"):
        if key in config:
            return key
    return None


class _Opened:
    """A repository opened by pygit2 once for the life of the process, and what never changes in it."""

    __slots__ = ("git", "trees", "counts", "verdict")

    def __init__(self, git: pygit2.Repository) -> None:
        self.git = git
        self.verdict: tuple[tuple[object, ...], str | None] | None = None  # (_stamp, refusal) last decided
        self.trees: dict[bytes, list[tuple[bytes, int, bytes]]] = {}  # raw tree id -> (name, mode, raw id)
        self.counts: dict[tuple[bytes, int, bool], int] = {}  # notes counted below a tree (see _count)


_opened: dict[str, _Opened | None] = {}


def for_repo(repo: Repo) -> InProcessWriter | None:
    """A writer for one checkpoint of REPO in this process, or None where fast-import must write it."""
    opened = _decided(repo)
    return InProcessWriter(opened) if opened is not None else None


def repository(repo: Repo) -> pygit2.Repository | None:
    """REPO opened by pygit2, to read objects in this process where its checkpoints are written here (the
    same decision as for_repo: where libgit2 would not read or write as git does, None: git reads them)."""
    opened = _decided(repo)
    return opened.git if opened is not None else None


def _decided(repo: Repo) -> _Opened | None:
    """REPO as opened here when pygit2 may write it (refusal, decided again when what it reads changed)."""
    if repo.gitdir in _opened:
        opened = _opened[repo.gitdir]
    else:
        try:
            import pygit2

            opened = _Opened(pygit2.Repository(repo.gitdir))
        except Exception:  # noqa: BLE001 - anything libgit2 cannot open is git's to write
            opened = None
        _opened[repo.gitdir] = opened
    if opened is None:
        return None
    stamp = _stamp(repo)
    if opened.verdict is None or opened.verdict[0] != stamp:
        opened.verdict = (stamp, refusal(repo, opened.git))
    return opened if opened.verdict[1] is None else None


def _stamp(repo: Repo) -> tuple[object, ...]:
    """What `refusal` reads, as stat data and values: when none of it changed, neither did the answer."""
    from .config import xdg_config_home

    paths = [os.path.join(repo.commondir, "config"), os.path.join(repo.gitdir, "config.worktree"),
             os.path.join(repo.commondir, "packed-refs"), os.path.join(repo.commondir, "refs", "replace"),
             os.path.join(repo.commondir, "reftable"), os.path.expanduser("~/.gitconfig"),
             os.path.join(xdg_config_home(), "git", "config")]
    found: list[object] = [os.environ.get(name) for name in _ENVIRONMENT]
    for path in paths:
        try:
            st = os.stat(path)
            found.append((st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            found.append(None)
    return tuple(found)


def forget() -> None:
    """Close every repository opened here (objects.close)."""
    _opened.clear()


class InProcessWriter(Writer):
    """One checkpoint's objects, written by pygit2 as loose objects as they are made (a kill leaves them
    unreachable, for git gc; no ref moves here)."""

    def __init__(self, opened: _Opened) -> None:
        self._opened = opened
        self._odb = opened.git.odb

    # objects ---------------------------------------------------------------------------------

    def _write(self, kind: int, data: bytes) -> bytes:
        return bytes(self._odb.write(kind, data).raw)

    def _read(self, raw: bytes) -> tuple[int, bytes]:
        """Object RAW's type and content; GitError when it is missing (as git's own `ls` would fail)."""
        import pygit2

        try:
            kind, data = self._odb.read(pygit2.Oid(raw=raw))
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise gitcmd.GitError(["fast-import"], 128, f"fatal: bad object {raw.hex()}: {exc}") from None
        return int(kind), data

    def _entries(self, raw: bytes) -> list[tuple[bytes, int, bytes]]:
        """The entries of tree RAW (a commit: its tree's)."""
        trees = self._opened.trees
        found = trees.get(raw)
        if found is not None:
            import pygit2

            if pygit2.Oid(raw=raw) in self._odb:  # still there: git gc may have pruned it since
                return found
            del trees[raw]
        kind, data = self._read(raw)
        if kind == _COMMIT:
            return self._entries(bytes.fromhex(data[5:5 + _HEXSZ].decode()))
        if kind != _TREE:
            raise gitcmd.GitError(["fast-import"], 1, f"not a tree: {raw.hex()}")
        found = []
        pos, end = 0, len(data)
        while pos < end:
            space = data.index(b" ", pos)
            nul = data.index(b"\0", space)
            found.append((data[space + 1:nul], int(data[pos:space], 8), data[nul + 1:nul + 21]))
            pos = nul + 21
        self._remember(raw, found)
        return found

    def _remember(self, raw: bytes, entries: list[tuple[bytes, int, bytes]]) -> None:
        trees = self._opened.trees
        if len(trees) >= _CACHED_TREES:
            trees.clear()
        trees[raw] = entries

    def _children(self, entry: _Entry) -> list[_Entry]:
        """ENTRY's entries, read on first use (fast-import's load_tree)."""
        if entry.children is None:
            entry.children = [] if entry.oid is None else [
                _Entry(name, mode, oid) for name, mode, oid in self._entries(entry.oid)]
        return entry.children

    def _tree_id(self, treeish: str) -> bytes:
        """The raw id of TREEISH's tree (a tree id, or a commit id)."""
        raw = bytes.fromhex(treeish)
        if raw in self._opened.trees:
            return raw  # _entries checks that it is still there
        kind, data = self._read(raw)
        return bytes.fromhex(data[5:5 + _HEXSZ].decode()) if kind == _COMMIT else raw

    # fast-import's tree edits ------------------------------------------------------------------

    def _set(self, root: _Entry, parts: list[bytes], mode: int, oid: bytes | None,
             subtree: list[_Entry] | None = None) -> bool:
        """tree_content_set: PARTS under ROOT becomes MODE OID; True if anything changed."""
        name = parts[0]
        children = self._children(root)
        for entry in children:
            if entry.name == name:
                if len(parts) == 1:
                    if not _isdir(mode) and entry.mode == mode and entry.oid == oid:
                        return False
                    entry.mode, entry.oid, entry.children = mode, oid, subtree
                    root.oid = None
                    return True
                if not _isdir(entry.mode):  # a file (or a deleted entry) on the way becomes a directory
                    entry.children = []
                    entry.mode = _DIR
                self._children(entry)
                if self._set(entry, parts[1:], mode, oid, subtree):
                    root.oid = None
                    return True
                return False
        entry = _Entry(name, 0, None)
        children.append(entry)
        if len(parts) > 1:
            entry.children, entry.mode = [], _DIR
            self._set(entry, parts[1:], mode, oid, subtree)
        else:
            entry.children, entry.mode, entry.oid = subtree, mode, oid
        root.oid = None
        return True

    def _remove(self, root: _Entry, parts: list[bytes],
                backup: list[tuple[int, bytes | None, list[_Entry] | None]] | None = None) -> bool:
        """tree_content_remove: PARTS under ROOT deleted (a directory left empty goes too); True if it was
        there (or could not be: a file stands where a directory of it would be). BACKUP receives the
        removed entry."""
        name = parts[0]
        for entry in self._children(root):
            if entry.name != name:
                continue
            if len(parts) > 1 and not _isdir(entry.mode):
                return True
            if len(parts) == 1:
                return _delete(root, entry, backup)
            self._children(entry)
            if self._remove(entry, parts[1:], backup):
                assert entry.children is not None
                if any(child.mode for child in entry.children):
                    root.oid = None
                    return True
                return _delete(root, entry, None)
            return False
        return False

    def _store(self, entry: _Entry) -> bytes:
        """store_tree: write every changed tree below ENTRY and ENTRY's own; its raw id."""
        if entry.oid is not None:
            return entry.oid
        children = self._children(entry)
        for child in children:
            if child.children is not None:
                self._store(child)
        live = [child for child in children if child.mode]
        live.sort(key=lambda c: c.name + b"/" if _isdir(c.mode) else c.name)
        data = b"".join(b"%o %s\0" % (child.mode, child.name) + child.oid for child in live  # type: ignore[operator]
                        )
        entry.oid = self._write(_TREE, data)
        entry.children = live
        self._remember(entry.oid, [(child.name, child.mode, child.oid) for child in live])  # type: ignore[misc]
        return entry.oid

    def _apply(self, root: _Entry, edit: Edit) -> None:
        """One fast-import file command (`M` inline or by id, `D`)."""
        parts = os.fsencode(edit.path).split(b"/")
        if edit.content is not None:
            self._set(root, parts, edit.mode, self._write(_BLOB, edit.content))
        elif edit.oid is not None:
            raw = bytes.fromhex(edit.oid)
            if edit.mode != _GITLINK and not self._exists(edit.oid):  # fast-import refuses a missing object
                raise gitcmd.GitError(["fast-import"], 1, f"fatal: path {edit.path} object {edit.oid} not found")
            self._set(root, parts, edit.mode, raw)
        else:
            self._remove(root, parts)

    def _exists(self, oid: str) -> bool:
        import pygit2

        return pygit2.Oid(hex=oid) in self._odb

    # notes, as fast-import's note_change_n and change_note_fanout place them ---------------------

    def _count(self, entry: _Entry, prefix: bytes) -> int:
        """The notes below ENTRY whose path so far spells PREFIX (do_change_note_fanout counting): entries
        whose names, in pairs of hex digits, spell a whole object id. Remembered per unchanged tree."""
        key = (entry.oid, len(prefix), _is_hex(prefix)) if entry.oid is not None else None
        if key is not None:
            found = self._opened.counts.get(key)
            if found is not None:
                return found
        notes = 0
        for child in self._children(entry):
            size = len(child.name)
            if not child.mode or len(prefix) + size > _HEXSZ or size % 2:
                continue
            spelled = prefix + child.name
            if len(spelled) == _HEXSZ and _is_hex(spelled):
                notes += 1
            elif _isdir(child.mode):
                notes += self._count(child, spelled)
        if key is not None:
            self._opened.counts[key] = notes
        return notes

    def _refan(self, top: _Entry, entry: _Entry, prefix: bytes, path: list[bytes], fanout: int) -> None:
        """do_change_note_fanout: every note below ENTRY moved to where FANOUT puts it."""
        self._children(entry)
        i = 0
        while entry.children is not None and i < len(entry.children):
            child = entry.children[i]
            i += 1
            size = len(child.name)
            if not child.mode or len(prefix) + size > _HEXSZ or size % 2:
                continue
            spelled = prefix + child.name
            where = path + [child.name]
            if len(spelled) == _HEXSZ and _is_hex(spelled):
                real = _fanout_path(spelled, fanout)
                if where == real:
                    continue
                leaf: list[tuple[int, bytes | None, list[_Entry] | None]] = []
                if not self._remove(top, where, leaf):
                    raise gitcmd.GitError(["fast-import"], 1, f"Failed to remove path {b'/'.join(where)!r}")
                mode, oid, subtree = leaf[0]
                self._set(top, real, mode, oid, subtree)
            elif _isdir(child.mode):
                self._refan(top, child, spelled, where, fanout)

    # the interface ---------------------------------------------------------------------------------

    def ls(self, tree: str, paths: Sequence[bytes]) -> list[Entry | None]:
        root = self._tree_id(tree)
        return [self._get(root, path) for path in paths]

    def _get(self, root: bytes, path: bytes) -> Entry | None:
        """tree_content_get: PATH's entry below the tree ROOT (b"": ROOT itself)."""
        if not path:
            return _DIR, Oid(root.hex())
        current: tuple[int, bytes] | None = (_DIR, root)
        for part in path.split(b"/"):
            if current is None or not _isdir(current[0]):
                return None
            current = next(((mode, oid) for name, mode, oid in self._entries(current[1]) if name == part), None)
        return (current[0], Oid(current[1].hex())) if current is not None else None

    def tree(self, ref: str, base: str, edits: Sequence[Edit]) -> Oid:
        root = _Entry(b"", _DIR, bytes.fromhex(base))
        for edit in edits:
            self._apply(root, edit)
        return Oid(self._store(root).hex())

    def _commit_object(self, tree: bytes, parents: Sequence[str], message: bytes, when: int) -> Oid:
        ident = gitcmd.COMMITTER + b" %d +0000" % when
        data = (b"tree " + tree.hex().encode() + b"\n" + b"".join(b"parent " + p.encode() + b"\n" for p in parents)
                + b"author " + ident + b"\ncommitter " + ident + b"\n\n" + message)
        return Oid(self._write(_COMMIT, data).hex())

    def commit(self, ref: str, message: bytes, when: int, parents: Sequence[str], base: str,
               edits: Sequence[Edit] = ()) -> tuple[Oid, Oid]:
        tree = self.tree(ref, base, edits)
        return self._commit_object(bytes.fromhex(tree), parents, message, when), tree

    def note(self, ref: str, notes_tip: str | None, commit: str, content: bytes, message: bytes, when: int) -> Oid:
        root = _Entry(b"", _DIR, self._tree_id(notes_tip)) if notes_tip else _Entry(b"", _DIR, None, [])
        blob = self._write(_BLOB, content)
        hex_commit = commit.encode()
        notes = self._count(root, b"")
        before = _fanout(notes)
        if self._remove(root, _fanout_path(hex_commit, before)):
            notes -= 1
        notes += 1
        after = _fanout(notes)
        self._set(root, _fanout_path(hex_commit, after), 0o100644, blob)
        if after != before:
            self._refan(root, root, b"", [], after)
        return self._commit_object(self._store(root), [notes_tip] if notes_tip else [], message, when)

    def attachments(self, ref: str, message: bytes, files: Mapping[str, bytes], when: int) -> Oid:
        root = _Entry(b"", _DIR, None, [])
        for name, content in files.items():
            self._set(root, os.fsencode(name).split(b"/"), 0o100644, self._write(_BLOB, content))
        return self._commit_object(self._store(root), [], message, when)


def _delete(root: _Entry, entry: _Entry, backup: list[tuple[int, bytes | None, list[_Entry] | None]] | None) -> bool:
    """fast-import's del_entry: ENTRY is gone (kept, mode 0, until its tree is stored)."""
    if backup is not None:
        backup.append((entry.mode, entry.oid, entry.children))
    entry.children = None
    entry.mode = 0
    entry.oid = None
    root.oid = None
    return True
