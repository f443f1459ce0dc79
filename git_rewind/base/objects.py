"""Which writer a checkpoint's objects go through (`writer`), and the switch for a long-lived process.

The checkpoint code (snapshot, store) asks only what writer.Writer offers. Two writers answer:

- `FastImportWriter`: one `git fast-import` per checkpoint (no pygit2 import: what every ordinary
  command and hook uses);
- `inprocess.InProcessWriter`: pygit2 in this process, no process per checkpoint, for a long-lived
  process (the daemon) where pygit2's ~100 ms import pays for itself. Switched on by `in_process(True)`;
  used only for repositories it can write exactly as git does (`inprocess.refusal`).

Both write byte-identical objects (same ids given the same time). Refs move afterwards (repo.move_refs):
one `git update-ref --stdin` transaction checked against the old values, in a process of its own, or
(switched on) in one long-lived `git update-ref` reused across transactions (gitcmd.update_refs).
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

# the fast-import writer -----------------------------------------------------------------



class FastImportWriter(Writer):
    """The writes of one checkpoint in one `git fast-import` stream; its objects reach the repository when
    the stream finishes. Every commit is written on a branch name the stream resets, so fast-import moves
    no ref: refs move afterwards, in one transaction (`move_refs`)."""

    def __init__(self, repo: Repo) -> None:
        self._fi = gitcmd.FastImport(repo.root)
        self._null = gitcmd.null_oid(repo.object_format)
        self._marks: dict[str, int] = {}  # commits of this stream: fast-import names them by mark
        self._next = 0
        self._ended = False

    def _mark(self) -> int:
        self._next += 1
        return self._next

    def _ref(self, commit: str) -> str:
        mark = self._marks.get(commit)
        return f":{mark}" if mark is not None else commit

    def ls(self, tree: str, paths: Sequence[bytes]) -> list[Entry | None]:
        return self._fi.ls_many([(tree, path) for path in paths])

    def tree(self, ref: str, base: str, edits: Sequence[Edit]) -> Oid:
        if not edits:
            return Oid(base)
        mark = self._mark()  # a commit as scaffolding: fast-import builds trees only inside commits
        self._fi.commit(ref, b"", 0, mark=mark)
        self._fi.write(b'M 040000 ' + base.encode() + b' ""\n')
        self._edits(edits)
        self._fi.write(b"\n")
        root = self._fi.ls(f":{mark}", b"")
        self._fi.reset(ref)
        if root is None:
            raise gitcmd.GitError(["fast-import"], 1, "no tree for the changed paths")
        return root[1]

    def commit(self, ref: str, message: bytes, when: int, parents: Sequence[str], base: str,
               edits: Sequence[Edit] = ()) -> tuple[Oid, Oid]:
        mark = self._mark()
        self._fi.commit(ref, message, when, mark=mark, parents=[self._ref(p) for p in parents])
        self._fi.write(b'M 040000 ' + base.encode() + b' ""\n')
        self._edits(edits)
        self._fi.write(b"\n")
        commit = self._fi.get_mark(mark)
        self._marks[commit] = mark
        tree = Oid(base)
        if edits:
            root = self._fi.ls(f":{mark}", b"")
            if root is None:
                raise gitcmd.GitError(["fast-import"], 1, "fast-import did not report the checkpoint tree")
            tree = root[1]
        self._fi.reset(ref)
        return commit, tree

    def note(self, ref: str, notes_tip: str | None, commit: str, content: bytes, message: bytes, when: int) -> Oid:
        mark = self._mark()
        # a tip this stream made (several notes in a row) is named by its mark: fast-import knows it no other way
        self._fi.commit(ref, message, when, mark=mark, parents=[self._ref(notes_tip)] if notes_tip else [])
        self._fi.write(b"N inline " + self._ref(commit).encode() + b"\n")
        self._fi.data(content)
        self._fi.write(b"\n")
        made = self._fi.get_mark(mark)
        self._marks[made] = mark
        self._fi.reset(ref)
        return made

    def attachments(self, ref: str, message: bytes, files: Mapping[str, bytes], when: int) -> Oid:
        mark = self._mark()
        self._fi.commit(ref, message, when, mark=mark)
        for name, content in files.items():
            self._fi.write(b"M 100644 inline " + gitcmd.quote_path(os.fsencode(name)) + b"\n")
            self._fi.data(content)
        self._fi.write(b"\n")
        made = self._fi.get_mark(mark)
        self._marks[made] = mark
        self._fi.reset(ref, self._null)
        return made

    def _edits(self, edits: Sequence[Edit]) -> None:
        """fast-import file commands: content inline, an object already stored, or a deletion."""
        for edit in edits:
            path = gitcmd.quote_path(os.fsencode(edit.path))
            if edit.content is not None:
                self._fi.write(b"M %o inline " % edit.mode + path + b"\n")
                self._fi.data(edit.content)
            elif edit.oid is not None:
                self._fi.write(b"M %o " % edit.mode + edit.oid.encode() + b" " + path + b"\n")
            else:
                self._fi.write(b"D " + path + b"\n")

    def finish(self) -> None:
        if not self._ended:
            self._ended = True
            self._fi.finish()

    def abort(self) -> None:
        if not self._ended:
            self._ended = True
            self._fi.abort()


# the switch -------------------------------------------------------------------------------

_in_process = False


def in_process(on: bool = True) -> None:
    """Write checkpoints in this process (pygit2) and move refs through one long-lived `git update-ref`
    from now on (ON), or go back to a process per checkpoint (what was opened stays, for the next time:
    `close` ends it). For a long-lived process (the daemon), once: pygit2's import costs ~100 ms, more
    than a checkpoint's processes."""
    global _in_process
    _in_process = on
    gitcmd.long_lived_update_ref(on)


def close() -> None:
    """Switch off, end the long-lived `git update-ref` processes and forget the repositories opened here."""
    in_process(False)
    gitcmd.close_update_refs()
    from . import inprocess

    inprocess.forget()


def is_in_process() -> bool:
    """Whether `in_process` is switched on."""
    return _in_process


def reader(repo: Repo) -> pygit2.Repository | None:
    """REPO's objects read in this process (pygit2) when `in_process` is switched on and pygit2 writes REPO
    as git does (inprocess.refusal, the writer's own decision); None: git's CLI reads them."""
    if not _in_process:
        return None
    from . import inprocess

    return inprocess.repository(repo)


def tree_deltas(git: pygit2.Repository, old: str, new: str, typechange: bool = False) -> list[pygit2.DiffDelta] | None:
    """pygit2's deltas from tree OLD to tree NEW (recursive, no renames: what `diff-tree -r --no-renames` compares;
    TYPECHANGE: a type change as one delta, as git gives it); None when either is not a tree there (a tree git
    pruned: git's CLI then says so)."""
    import pygit2
    from pygit2.enums import DiffOption

    try:
        old_obj, new_obj = git.get(old), git.get(new)
        if not isinstance(old_obj, pygit2.Tree) or not isinstance(new_obj, pygit2.Tree):
            return None
        flags = DiffOption.INCLUDE_TYPECHANGE if typechange else DiffOption.NORMAL
        return list(old_obj.diff_to_tree(new_obj, flags=flags).deltas)
    except (KeyError, ValueError, pygit2.GitError):
        return None


_KINDS = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}  # git's object type numbers


def cat(repo: Repo, oids: Sequence[str]) -> list[tuple[str, bytes] | None]:
    """(type, content) of each object in OIDS, as gitcmd.cat_file gives them: read in this process where
    `reader` may, when it holds every one of them (else one `git cat-file --batch`, which may fetch what a
    partial clone lacks)."""
    git = reader(repo) if oids else None
    if git is not None:
        import pygit2

        odb = git.odb
        try:
            if all(oid in odb for oid in oids):
                found: list[tuple[str, bytes] | None] = []
                for oid in oids:
                    kind, data = odb.read(oid)
                    found.append((_KINDS.get(int(kind), str(kind)), bytes(data)))
                return found
        except (KeyError, ValueError, pygit2.GitError):
            pass
    return gitcmd.cat_file(oids, repo.root)


# Above this many files to write, one checkpoint goes through fast-import even where it could be written in
# process: pygit2 writes each object loose (a file, zlib, a rename: ~0.3 ms each), fast-import streams them
# into one pack for a ~10 ms process start. A thousand changed files (an undo, a dependency install in one
# turn) also leave one pack instead of a thousand loose objects for git's gc. Below git's unpack limit
# (transfer.unpackLimit, 100 objects) fast-import would explode its pack into loose objects anyway.
MANY_FILES = 100


def writer(repo: Repo, files: int = 0) -> Writer:
    """The writer of one checkpoint in REPO: in this process when switched on, REPO is one pygit2 writes
    exactly as git does (inprocess.refusal, decided before anything is written) and the checkpoint writes at
    most MANY_FILES FILES; else fast-import. Both write the same objects."""
    if _in_process and files <= MANY_FILES:
        from . import inprocess

        found = inprocess.for_repo(repo)
        if found is not None:
            return found
    return FastImportWriter(repo)
