"""git's objects and refs as typed values: commits read whole, refs under a prefix, diff-tree entries.

One reader each, so that a change in what git prints (or in what we need of it) is made once; every
module that reads commits to rewrite them (gc, purge, share), lists refs of ours (checkpoints, sync,
purge, share) or compares two trees goes through here. Writing goes through writer.Writer (a checkpoint) or
gitcmd.FastImport.commit (a rewrite).
"""

from __future__ import annotations

from .errors import RewindError
from .gitcmd import cat_file
from .note import Oid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .repo import Repo


class Commit:
    """A commit as stored: what a rewrite keeps of it."""

    __slots__ = ("tree", "parents", "time", "message", "author", "committer")

    def __init__(self, tree: Oid, parents: list[Oid], time: int, message: bytes, author: bytes = b"",
                 committer: bytes = b"") -> None:
        self.tree = tree
        self.parents = parents
        self.time = time  # the committer time, seconds
        self.message = message
        self.author = author  # the author and committer lines' values as stored (purge writes them back)
        self.committer = committer

    @classmethod
    def parse(cls, raw: bytes) -> Commit:
        """A commit object's bytes (as `cat-file commit` prints them)."""
        head, _, message = raw.partition(b"\n\n")
        tree, parents, time, author, committer = Oid(""), [], 0, b"", b""
        for line in head.split(b"\n"):
            key, _, value = line.partition(b" ")
            if key == b"tree":
                tree = Oid(value.decode())
            elif key == b"parent":
                parents.append(Oid(value.decode()))
            elif key == b"author":
                author = value
            elif key == b"committer":
                time = int(value.rsplit(b" ", 2)[1])
                committer = value
        return cls(tree, parents, time, message, author, committer)


def read_commits(repo: Repo, oids: list[str]) -> dict[str, Commit]:
    """The commits OIDS, through one `git cat-file --batch` (any object format, any index git reads)."""
    found: dict[str, Commit] = {}
    for oid, obj in zip(oids, cat_file(oids, repo.root), strict=True):
        if obj is None or obj[0] != "commit":
            raise RewindError(f"checkpoint {oid} is not a commit in this repository")
        found[oid] = Commit.parse(obj[1])
    return found


def refs_under(repo: Repo, *patterns: str) -> dict[str, Oid]:
    """Every ref `git for-each-ref PATTERNS` lists (a pattern matches whole name components: `refs/rewind`
    is refs/rewind/*, not refs/rewind-scan), name → object id, in git's order. No pattern: nothing (never
    every ref of the repository by accident)."""
    if not patterns:
        return {}
    out = repo.git(["for-each-ref", "--format=%(objectname) %(refname)", *patterns]).decode("utf-8", "surrogateescape")
    found: dict[str, Oid] = {}
    for line in out.splitlines():
        oid, _, ref = line.partition(" ")
        if ref:
            found[ref] = Oid(oid)
    return found



class DiffEntry:
    """One change in git's raw diff format (`diff-tree`/`diff-index` `-z --raw`): both sides' modes and
    objects, its status letter and path."""

    __slots__ = ("old_mode", "new_mode", "old_oid", "new_oid", "status", "path")

    def __init__(self, old_mode: int, new_mode: int, old_oid: Oid, new_oid: Oid, status: str, path: str) -> None:
        self.old_mode = old_mode  # 0: absent on that side
        self.new_mode = new_mode
        self.old_oid = old_oid
        self.new_oid = new_oid
        self.status = status  # A, D, M, T (no renames: every caller passes --no-renames)
        self.path = path  # as git names it, relative to the top, decoded as the filesystem does


def raw_diff(out: bytes) -> list[DiffEntry]:
    """The changes of `-z --raw` output without commit headers (`diff-tree A B`, `diff-index`)."""
    return [entry for entries in raw_diff_by_commit(out).values() for entry in entries]


def raw_diff_by_commit(out: bytes) -> dict[str, list[DiffEntry]]:
    """The changes of `-z --raw` output per commit: `diff-tree --stdin` names each commit before its changes
    (changes before any commit id, as plain `diff-tree A B` prints them, are under "")."""
    import os

    tokens = out.split(b"\0")
    found: dict[str, list[DiffEntry]] = {}
    current = found.setdefault("", [])
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith(b":") and i + 1 < len(tokens):
            old_mode, new_mode, old_oid, new_oid, status = token[1:].decode().split(" ")
            current.append(DiffEntry(int(old_mode, 8), int(new_mode, 8), Oid(old_oid), Oid(new_oid), status[:1],
                                     os.fsdecode(tokens[i + 1])))
            i += 2
            continue
        if token.strip():
            current = found.setdefault(token.decode().strip(), [])
        i += 1
    if not found[""]:
        del found[""]
    return found
