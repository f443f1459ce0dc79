"""The one interface through which a checkpoint writes objects (objects.py chooses the writer that answers it).

A checkpoint reads entries of trees (`ls`), writes a tree (a base tree with edits), a commit, a note (a
commit on the notes ref setting one commit's note) and the attachments' root commit. Two writers answer:
objects.FastImportWriter (one `git fast-import`) and inprocess.InProcessWriter (pygit2, in this process);
both give the same objects, id for id.
"""

from __future__ import annotations

from .note import Oid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Protocol

    class Edit(Protocol):
        """One path of a tree to set or delete (snapshot.PathState is one): content to store as a blob,
        an object already stored (`oid`, no content), or neither: delete the path (a whole directory,
        if it is one). MODE: git's mode of what is set (file, executable, link, gitlink)."""

        @property
        def path(self) -> str: ...
        @property
        def mode(self) -> int: ...
        @property
        def content(self) -> bytes | None: ...
        @property
        def oid(self) -> str | None: ...

Entry = tuple[int, Oid]  # (mode, object id) of a tree entry


class Writer:
    """One checkpoint's writes. A context manager: leaving the block normally makes every object reach the
    repository (`finish`), by an exception drops what can be dropped (`abort`). No ref moves here."""

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if kind is None:
            self.finish()
        else:
            self.abort()

    def ls(self, tree: str, paths: Sequence[bytes]) -> list[Entry | None]:
        """Mode and object id of each of PATHS inside TREE (a tree or a commit id), None where absent
        (or below a file); b"" is TREE itself."""
        raise NotImplementedError

    def tree(self, ref: str, base: str, edits: Sequence[Edit]) -> Oid:
        """BASE with EDITS applied in order, as fast-import applies file commands: a path set below a file
        makes the file a directory, setting a directory's path replaces the whole directory, a directory left
        empty by a deletion goes with it. REF: the scratch name fast-import builds it on (never left)."""
        raise NotImplementedError

    def commit(self, ref: str, message: bytes, when: int, parents: Sequence[str], base: str,
               edits: Sequence[Edit] = ()) -> tuple[Oid, Oid]:
        """A commit by git-rewind at WHEN (gitcmd.COMMITTER, author the same) of BASE with EDITS, with
        PARENTS (ids this writer returned or stored commits): (commit, its tree). REF is the ref it is
        meant for, which it does not move."""
        raise NotImplementedError

    def note(self, ref: str, notes_tip: str | None, commit: str, content: bytes, message: bytes, when: int) -> Oid:
        """A commit meant for the notes ref REF (not moved here) on top of NOTES_TIP (its value; None: the
        first) whose tree is NOTES_TIP's with COMMIT's note set to CONTENT, notes placed as fast-import places
        them (its fanout, from the number of notes)."""
        raise NotImplementedError

    def attachments(self, ref: str, message: bytes, files: Mapping[str, bytes], when: int) -> Oid:
        """A root commit whose tree holds just FILES (name → content, mode 100644)."""
        raise NotImplementedError

    def finish(self) -> None:
        """Every object written reaches the repository (other git processes can read them)."""

    def abort(self) -> None:
        """Stop; what was written may stay as unreachable objects (git gc prunes them), no ref moves."""


