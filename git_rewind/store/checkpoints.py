"""Checkpoints as the store holds them: the one reader of every note, sequence ids, id lookup, selection.

A checkpoint is a commit on refs/rewind/<session>; its metadata is a JSON note in
refs/notes/rewind (note.Note). Every command, hook, MCP tool and the page reads checkpoints through
`load_all` / `load_fetched` (`_load`: the notes cache, notecache.py, by note blob id; git's CLI only for the
notes refs that moved: one `diff-tree`, one `cat-file --batch`) or `load_one`; no pygit2 (its import costs
~100 ms, and libgit2 cannot open SHA-256 repositories).
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from ..base import layout
from ..base.clock import parse_utc
from ..base.errors import NO_CHECKPOINTS, UNKNOWN_ID, RewindError
from ..base.fsutil import read_bytes, write_atomic
from ..base.note import Note, Oid
from ..base.repo import NOTES_REF, REMOTE_PREFIX, Repo
from ..base.repo import check_session as check_session  # re-exported: callers know it from here

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    import pygit2

    from .notecache import Listed


class Checkpoint:
    """A checkpoint commit, its note, and the blob the note is stored in; SOURCE names the machine copy a
    fetched checkpoint came from (`<remote>/<sync_name>`, see sync.py), None for a local one.

    One read from the notes cache (`unread`) holds its note as the cache's text until `note` is first asked
    for, and what sorting and choosing among all of them needs (seq, time, session, work tree, safety)
    beside it: `list --remote` of 50,000 builds the 20 notes it shows, not 50,000."""

    __slots__ = ("commit", "_note", "note_blob", "source", "_time", "_state", "_index")

    def __init__(self, commit: Oid, note: Note, note_blob: Oid, source: str | None = None) -> None:
        self.commit = commit
        self._note: Note | None = note
        self.note_blob = note_blob
        self.source = source
        self._time: float | None = None
        self._state: bytes | None = None
        self._index: Any = None  # index_of(note), while the note is not built (then it is always set)

    @classmethod
    def unread(cls, commit: Oid, note_blob: Oid, state: bytes, index: list[Any]) -> Checkpoint:
        """A checkpoint whose note is STATE (Note.state as JSON), parsed when first asked for; INDEX is
        `index_of` that note."""
        item = cls.__new__(cls)
        item.commit, item.note_blob, item.source, item._time = commit, note_blob, None, None
        item._note, item._state, item._index = None, state, index
        return item

    @property
    def note(self) -> Note:
        note = self._note
        if note is None:
            import json

            assert self._state is not None
            note = self._note = Note.restore(json.loads(self._state))
            self._state = None
        return note

    @note.setter
    def note(self, note: Note) -> None:
        self._note, self._state, self._time = note, None, None

    @property
    def label(self) -> str:
        """How messages name it: `#42`, or a fetched one's `origin/ada-laptop/42`."""
        return f"#{self.seq}" if self.source is None else self.ident

    @property
    def ident(self) -> str:
        """The id every command accepts: the sequence number, or `<remote>/<sync_name>/<seq>` if fetched."""
        return str(self.seq) if self.source is None else f"{self.source}/{self.seq}"

    @property
    def seq(self) -> int:
        return self._note.seq if self._note is not None else self._index[0]

    @property
    def session(self) -> str:
        return self._note.session if self._note is not None else self._index[2]

    @property
    def worktree(self) -> str | None:
        """The work tree it was taken in (Note.worktree)."""
        return self._note.worktree if self._note is not None else self._index[3]

    @property
    def safety(self) -> bool:
        """A safety checkpoint (Note.safety)."""
        return self._note.safety if self._note is not None else self._index[4]

    @property
    def message(self) -> str:
        return self.note.message

    @property
    def time(self) -> float:
        """When it was taken, in seconds since the epoch (0 when the note's time is unreadable); read once (sorting
        50,000 fetched checkpoints by it, then showing their ages, would read each stamp again)."""
        if self._time is None:
            self._time = (parse_utc(self._note.created) or 0.0) if self._note is not None else self._index[5]
        return self._time

    def as_json(self) -> dict[str, Any]:
        return {**self.note.to_json(), "commit": self.commit, "id": self.ident}


def index_of(note: Note) -> list[Any]:
    """What choosing among checkpoints reads of every note, kept beside it in the notes cache: seq, created,
    session, work tree, safety, and the time `created` says (Checkpoint.time)."""
    return [note.seq, note.created, note.session, note.worktree, note.safety, parse_utc(note.created) or 0.0]


# sequence ids ------------------------------------------------------------------


def _seq_file(repo: Repo) -> str:
    return os.path.join(repo.store_dir, layout.SEQ)


def next_seq(repo: Repo) -> int:
    """Reserve the next sequence id. Hold the store lock. Gaps are fine; reuse never happens."""
    path = _seq_file(repo)
    try:
        last = int(read_bytes(path).strip() or 0)
    except (FileNotFoundError, ValueError):
        last = max((c.seq for c in load_all(repo)), default=0)
    seq = last + 1
    write_atomic(path, f"{seq}\n")
    return seq


# reading -----------------------------------------------------------------------


def load_all(repo: Repo) -> list[Checkpoint]:
    """Every checkpoint of the repository, oldest first (by seq)."""
    tip = repo.read_ref(NOTES_REF)
    if tip is None:
        return []
    return _load(repo, layout.NOTES_CACHE, {NOTES_REF: tip}).get(NOTES_REF, [])


def load_one(repo: Repo, commit: str) -> Checkpoint | None:
    """The checkpoint COMMIT (an id or a name git reads), or None when it has no note of ours."""
    if repo.read_ref(NOTES_REF) is None:
        return None
    listed = repo.git(["notes", "--ref", NOTES_REF, "list", commit], check=False).strip()
    if not listed:
        return None
    found = _read(repo, listed + b" " + repo.git(["rev-parse", "--verify", commit + "^{commit}"]).strip())
    return found[0] if found else None


def read_listed(repo: Repo, listing: bytes) -> list[Checkpoint]:
    """Checkpoints from lines shaped as `git notes list` prints them (`<note blob> <commit>`): a reader that
    knows which notes changed (the web server, from the notes ref's own history) reads only those."""
    return _read(repo, listing)


def _read(repo: Repo, listing: bytes) -> list[Checkpoint]:
    """Checkpoints from `git notes list` output (`<note blob> <commit>` lines), through one cat-file."""
    pairs = [p for p in (line.split() for line in listing.decode().splitlines()) if len(p) == 2]
    notes = _parse_blobs(repo, [blob for blob, _ in pairs])
    result = []
    for blob, commit in pairs:
        note = notes.get(blob)
        if note is not None:
            result.append(Checkpoint(Oid(commit), note, Oid(blob)))
    result.sort(key=lambda c: c.seq)
    return result


# Set by a process that lives on after a command (the daemon, the page's server): see _collector_paused.
LONG_LIVED = False


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic collection while many notes are built. A read of 10,000 notes makes ~300,000 objects, none of
    them in a cycle, and most live as long as the process: collecting while they are made, and each later
    collection walking them again, would cost as much as the read. Afterwards a command freezes what is alive
    (its notes live as long as it does, and no later collection walks them again: still freed when no longer
    referenced); a long-lived process must not, or the cyclic garbage made before each read would never be
    collected."""
    import gc

    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if not LONG_LIVED:
            gc.freeze()
        gc.enable()


def with_notes(items: list[Checkpoint]) -> list[Checkpoint]:
    """ITEMS, each with its note built (one JSON parse for all the cache left unread): for a reader that reads
    every note (the page's rows, `list --json`), where one parse per note would cost twice as much."""
    import json

    unread = [c for c in items if c._note is None and c._state is not None]
    if unread:
        with _collector_paused():
            states = json.loads(b"[" + b",".join(c._state or b"null" for c in unread) + b"]")
            for item, state in zip(unread, states, strict=True):
                known = item._index[5] if item._index is not None else None  # the cache's time of this very note
                item.note = Note.restore(state)
                item._time = known  # not read from its stamp again (a third of a page's 10,000 rows)
    return items


def _load(repo: Repo, cache: str, tips: dict[str, str], others: dict[str, str] | None = None
          ) -> dict[str, list[Checkpoint]]:
    """The checkpoints of each notes ref of TIPS (ref → its commit now), each list sorted by seq: the one
    loader of many notes. The cache file CACHE (notecache.py) gives every note it holds by its blob, and the
    listing of each ref still where it was; for a ref that moved, one `diff-tree` (of every such ref at once)
    names the notes added, changed or removed since, and one `cat-file` reads the new ones. CACHE is then
    written with what was read, and with what it held of OTHERS (refs of its kind not asked for, ref → commit
    now) where they are still what it held, so it holds the notes those refs hold and no other."""
    from . import notecache

    with _collector_paused():
        cached = notecache.read(repo, cache)
        stale = [ref for ref, tip in tips.items() if ref not in cached or cached[ref].commit != tip]
        fresh = {ref: cached[ref] for ref in tips if ref not in stale}
        parsed: dict[str, Note | None] = {}
        if stale:
            import json

            relisted = _relisted(repo, {ref: tips[ref] for ref in stale}, cached)
            known = {entry[0]: entry[2:] for listed in cached.values() for entry in listed.entries}
            missing = {entry[0] for listed in relisted.values() for entry in listed.entries if entry[0] not in known}
            parsed = _parse_blobs(repo, sorted(missing)) if missing else {}
            if len(parsed) < len(missing):  # a note git does not have: read it again next time, not as "not ours"
                cache = ""
            for blob, note in parsed.items():
                known[blob] = [json.dumps(note.state(), separators=(",", ":")).encode(), index_of(note)] \
                    if note is not None else [None, None]
            for listed in relisted.values():
                for entry in listed.entries:
                    entry[2:] = known.get(entry[0], [None, None])
            fresh.update(relisted)
        found: dict[str, list[Checkpoint]] = {}
        unread = Checkpoint.unread
        for ref, listed in fresh.items():
            items = []
            for blob, commit, state, index in listed.entries:
                if state is not None:
                    note = parsed.pop(blob, None)
                    items.append(Checkpoint(Oid(commit), note, Oid(blob)) if note is not None
                                 else unread(Oid(commit), Oid(blob), state, index))
            items.sort(key=lambda c: c.seq)
            found[ref] = items
    kept = {ref: cached[ref] for ref, tip in (others or {}).items() if ref in cached and cached[ref].commit == tip}
    if cache and (stale or set(cached) != set(fresh) | set(kept)):
        notecache.write(repo, cache, {**kept, **fresh})
    return found


def _relisted(repo: Repo, tips: dict[str, str], cached: dict[str, Listed]) -> dict[str, Listed]:
    """What each notes ref of TIPS (ref → commit) holds at its commit, as notecache.Listed entries (notes not
    filled in): one `cat-file --batch-check` for the refs' trees and one `diff-tree --stdin` from each
    one's cached tree (or the empty tree) to its tree now; in a process that reads objects itself
    (objects.reader: the daemon), both by pygit2."""
    from ..base.gitcmd import GitError
    from ..base.objects import reader
    from .notecache import Listed
    from .snapshot import empty_tree

    names = list(tips)
    git = reader(repo)  # in the daemon: the trees read and compared in this process
    if git is not None:
        trees = _trees_in_process(git, tips)
    else:
        out = repo.git(["cat-file", "--batch-check=%(objectname) %(objecttype)"],
                       input="".join(f"{tips[ref]}^{{tree}}\n" for ref in names).encode()).decode().splitlines()
        trees = {ref: line.split()[0] for ref, line in zip(names, out, strict=True) if line.endswith(" tree")}
    for ref in names:
        if ref not in trees:  # not a commit (a blob put there by hand): what `git notes list` would refuse
            raise GitError(["notes", "list"], 128, f"{ref} ({tips[ref]}) is not a notes commit")
    empty = empty_tree(repo)
    hexsz = len(empty)
    for start_from_cache in (True, False):
        starts = {ref: cached[ref].tree if start_from_cache and ref in cached else empty for ref in trees}
        pairs = sorted({(starts[ref], trees[ref]) for ref in trees if starts[ref] != trees[ref]})
        changes = _changes_in_process(git, pairs, hexsz) if git is not None else None
        if changes is None:
            try:
                out_diff = repo.git(["diff-tree", "--stdin", "-r", "-z", "--no-renames"],
                                    input="".join(f"{a} {b}\n" for a, b in pairs).encode()) if pairs else b""
            except GitError:  # a cached tree git pruned since (a purge): list every ref whole
                if start_from_cache:
                    continue
                raise
            changes = _tree_changes(out_diff, hexsz)
        result = {}
        for ref, tree in trees.items():
            start = starts[ref]
            notes = {entry[1]: entry[0] for entry in cached[ref].entries} if start != empty else {}
            if start != tree:
                removed, added = changes.get(f"{start} {tree}", ({}, {}))
                for commit in removed:
                    notes.pop(commit, None)
                notes.update(added)
            result[ref] = Listed(tips[ref], tree, [[blob, commit, None, None] for commit, blob in notes.items()])
        return result
    return {}


def _trees_in_process(git: pygit2.Repository, tips: dict[str, str]) -> dict[str, str]:
    """The tree of each ref's commit in TIPS, read by pygit2 (a ref whose commit is none is left out, as
    `cat-file --batch-check` of `<commit>^{tree}` leaves it)."""
    import pygit2

    trees: dict[str, str] = {}
    for ref, tip in tips.items():
        try:
            found = git.get(tip)
        except (KeyError, ValueError, pygit2.GitError):
            continue
        if isinstance(found, pygit2.Commit):
            trees[ref] = str(found.tree_id)
    return trees


def _changes_in_process(git: pygit2.Repository, pairs: list[tuple[str, str]],
                        hexsz: int) -> dict[str, tuple[set[str], dict[str, str]]] | None:
    """What _tree_changes makes of `diff-tree --stdin -r` of PAIRS, compared by pygit2; None when a tree is
    not there (a cached one a purge pruned: git then says so)."""
    from pygit2.enums import DeltaStatus

    from ..base.objects import tree_deltas

    found: dict[str, tuple[set[str], dict[str, str]]] = {}
    for a, b in pairs:
        deltas = tree_deltas(git, a, b)
        if deltas is None:
            return None
        removed, added = found.setdefault(f"{a} {b}", (set(), {}))
        for delta in deltas:
            deleted = delta.status == DeltaStatus.DELETED
            commit = os.fsdecode((delta.old_file if deleted else delta.new_file).raw_path).replace("/", "")
            if len(commit) != hexsz or commit.strip("0123456789abcdef"):
                continue
            removed.add(commit)
            if not deleted:
                added[commit] = str(delta.new_file.id)
    return found


def _tree_changes(out: bytes, hexsz: int) -> dict[str, tuple[set[str], dict[str, str]]]:
    """`diff-tree --stdin -r -z` of notes trees, per `<tree> <tree>` line it was given: (the commits whose
    note went or changed, commit → new note blob for those added or changed). Entries whose path is no
    object id (a machine commit's `transcripts/`) are not notes."""
    found: dict[str, tuple[set[str], dict[str, str]]] = {}
    removed: set[str] = set()
    added: dict[str, str] = {}
    tokens = out.decode("utf-8", "surrogateescape").split("\0")
    i = 0
    while i < len(tokens):
        *headers, meta = tokens[i].split("\n")  # a pair's header line, then its first entry (if any)
        for header in headers:
            removed, added = found.setdefault(header, (set(), {}))
        i += 1
        if not meta.startswith(":") or i >= len(tokens):
            continue
        commit = tokens[i].replace("/", "")
        i += 1
        _old_mode, _new_mode, _old, new, status = meta[1:].split(" ")
        if len(commit) != hexsz or commit.strip("0123456789abcdef"):
            continue
        removed.add(commit)
        if status[:1] != "D":
            added[commit] = new
    return found


def _parse_blobs(repo: Repo, blobs: list[str]) -> dict[str, Note | None]:
    """Each note blob of BLOBS parsed (None: not one of ours), through one `git cat-file --batch` (or read in
    this process: objects.cat)."""
    from ..base.objects import cat

    objects = cat(repo, blobs)
    found = [(blob, obj[1]) for blob, obj in zip(blobs, objects, strict=True) if obj is not None]
    return dict(zip([blob for blob, _ in found], _parse_all([raw for _, raw in found]), strict=True))


def _parse_all(bodies: list[bytes]) -> list[Note | None]:
    """Each body as a Note (None: not one of ours); one JSON parse for all when every body is JSON."""
    import json

    try:
        values = json.loads(b"[" + b",".join(bodies) + b"]")
    except ValueError:  # a note that is not JSON (or two that merge into one): one by one
        return [Note.from_bytes(body) for body in bodies]
    if len(values) != len(bodies):
        return [Note.from_bytes(body) for body in bodies]
    return [Note.from_json(value) for value in values]


CURRENT = "."  # "this work tree", where a work tree is named: no linked work tree is named "."


def of_worktree(items: list[Checkpoint], worktree: str | None) -> list[Checkpoint]:
    """The checkpoints taken in WORKTREE (None: the main work tree; notes without the key are its)."""
    return [c for c in items if c.worktree == worktree]


def worktree_label(worktree: str | None) -> str:
    return "the main work tree" if worktree is None else f"work tree {worktree}"


def lookup(repo: Repo, ident: str, checkpoints: list[Checkpoint] | None = None,
           worktree: str | None = CURRENT) -> Checkpoint:
    """Resolve an id among WORKTREE's checkpoints (default: this work tree's): a sequence number,
    `@`/`latest`, `@~N`, `@{DATE}` (the newest at or before DATE, in git's date syntax), or a (short)
    commit id; or a fetched checkpoint's `<remote>/<sync_name>/<seq>` (load_fetched). An id of another work
    tree's checkpoint says which."""
    if "/" in ident and not ident.strip().startswith("@{") and is_fetched_id(ident):
        return lookup_fetched(repo, ident)
    every = checkpoints if checkpoints is not None else load_all(repo)
    name = repo.worktree if worktree == CURRENT else worktree
    items = of_worktree(every, name)
    ident = ident.strip()
    if ident.startswith("@{") and ident.endswith("}"):
        if not items:
            _resolve(ident, items, name)  # the "no checkpoints yet" error
        return at_date(repo, items, ident[2:-1])
    try:
        return _resolve(ident, items, name)
    except RewindError:
        other = _elsewhere(ident, [c for c in every if c.note.worktree != name])
        if other is None:
            copy = fetched_by_commit(repo, ident) if len(ident) >= 7 and not ident.isdigit() else None
            if copy is not None:
                return copy
            raise
        option = "main-worktree" if other.note.worktree is None else other.note.worktree
        raise RewindError(f"checkpoint {ident} was taken in {worktree_label(other.note.worktree)}, "
                          f"not here: add --worktree {option} to use it") from None


def at_date(repo: Repo, items: list[Checkpoint], text: str) -> Checkpoint:
    """`@{DATE}`: the newest of ITEMS taken at or before DATE."""
    from ..base.gitcmd import dates

    (when,) = dates(repo.root, [text])
    assert when is not None
    before = [c for c in items if c.time <= when]
    if not before:
        oldest = min(items, key=lambda c: c.time) if items else None
        since = f" (the oldest here is #{oldest.seq}, {oldest.note.created})" if oldest else ""
        raise RewindError(f"no checkpoint at or before {text}{since}")
    return max(before, key=lambda c: (c.time, c.seq))


def _elsewhere(ident: str, others: list[Checkpoint]) -> Checkpoint | None:
    """The checkpoint a sequence number or commit id names among OTHERS, if exactly one."""
    if ident.lstrip("#").isdigit():
        found = [c for c in others if c.seq == int(ident.lstrip("#"))]
        if found:
            return found[0]
    found = [c for c in others if len(ident) >= 4 and c.commit.startswith(ident.lower())]
    return found[0] if len(found) == 1 else None


def _resolve(ident: str, items: list[Checkpoint], worktree: str | None) -> Checkpoint:
    import re

    if not items:
        raise RewindError("no checkpoints yet in this repository" if worktree is None
                          else f"no checkpoints yet in {worktree_label(worktree)}", remedy=NO_CHECKPOINTS)
    if ident in ("@", "latest", "HEAD"):
        return items[-1]
    match = re.fullmatch(r"(?:@|latest)~(\d+)", ident)
    if match:
        back = int(match.group(1))
        if back >= len(items):
            raise RewindError(f"unknown checkpoint: {ident} (only {len(items)} checkpoints)", remedy=UNKNOWN_ID)
        return items[-1 - back]
    if ident.lstrip("#").isdigit():
        seq = int(ident.lstrip("#"))
        for item in items:
            if item.seq == seq:
                return item
        if len(ident) < 7:
            raise RewindError(f"unknown checkpoint: {ident}", remedy=UNKNOWN_ID)
    if re.fullmatch(r"[0-9a-fA-F]{4,64}", ident):
        found = [c for c in items if c.commit.startswith(ident.lower())]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise RewindError(f"ambiguous checkpoint id: {ident}")
    raise RewindError(f"unknown checkpoint: {ident}", remedy=UNKNOWN_ID)


def seq_runs(seqs: list[int]) -> str:
    """`#1..#3, #5`: sequence numbers (ascending) with consecutive runs shortened, as gc and purge say them."""
    runs: list[list[int]] = []
    for seq in seqs:
        if runs and seq == runs[-1][1] + 1:
            runs[-1][1] = seq
        else:
            runs.append([seq, seq])
    return ", ".join(f"#{a}" if a == b else f"#{a}..#{b}" for a, b in runs)


def redo_stack(items: list[Checkpoint]) -> list[Checkpoint]:
    """What `redo` can still go back to among ITEMS (one work tree's checkpoints, oldest first): the safety
    checkpoints of rewinds not yet redone, the newest last.

    Derived from the notes alone: walking in seq order, every `pre-rewind` safety checkpoint (an undo,
    a revert, an agent-only undo) is pushed, and a `pre-redo` whose record names the top pops it. So
    checkpoints taken since (hooks, snap) never clear it, a redo can itself be undone (`undo` to its
    `pre-redo` checkpoint pushes that undo), and a new undo after some redos goes on top of what is
    left: redo then first reverses the new undo, and then goes on back through the older ones.
    """
    stack: list[Checkpoint] = []
    for item in items:
        if item.note.trigger == "pre-rewind":
            stack.append(item)
        elif item.note.trigger == "pre-redo" and stack and item.note.rewind is not None \
                and item.note.rewind.to == stack[-1].seq:
            stack.pop()
    return stack


def redo_targets(items: list[Checkpoint]) -> list[Checkpoint]:
    """Every checkpoint on any work tree's redo stack (what gc must keep)."""
    return [c for name in {c.note.worktree for c in items} for c in redo_stack(of_worktree(items, name))]


def latest_work(repo: Repo, worktree: str | None = CURRENT, checkpoints: list[Checkpoint] | None = None) -> Checkpoint:
    """The newest checkpoint of the work tree that is not a safety checkpoint (`pre-rewind`, `pre-redo`): what a
    plain `undo` goes back to when no agent turn is recorded (undo.bare_target), so that undoing twice does
    not undo the first undo. CHECKPOINTS: every checkpoint, when the caller has read them already (load_all)."""
    name = repo.worktree if worktree == CURRENT else worktree
    items = of_worktree(checkpoints if checkpoints is not None else load_all(repo), name)
    for item in reversed(items):
        if item.note.rewind is None:
            return item
    if not items:
        raise RewindError("no checkpoints yet in this repository" if name is None
                          else f"no checkpoints yet in {worktree_label(name)}", remedy=NO_CHECKPOINTS)
    raise RewindError("only safety checkpoints of earlier undos here: name one (git rewind list), "
                      "or git rewind redo to reverse the last undo")


def worktree_named(repo: Repo, items: list[Checkpoint], name: str) -> str | None:
    """What `--worktree NAME` names: `main-worktree` (or `main`, unless a linked work tree has that name)
    is the main work tree; else a linked work tree's name (under .git/worktrees/, or in a note: its
    checkpoints outlive `git worktree remove`), or the path of one of this repository's work trees."""
    linked = set(repo.linked_worktrees())
    recorded = {c.note.worktree for c in items if c.note.worktree is not None}
    if name in linked or name in recorded:
        return name
    if name in ("main-worktree", "main"):
        return None
    if os.path.isdir(name):
        other = Repo.discover(name)
        if os.path.normpath(other.commondir) == os.path.normpath(repo.commondir):
            return other.worktree
        raise RewindError(f"{name} is a work tree of another repository")
    raise RewindError(f"no work tree named {name} (git worktree list; main-worktree is the main one)")


def session_named(items: list[Checkpoint], name: str) -> str:
    """NAME as a session of ITEMS: itself when it is one, else the one session it starts (`list` shows
    sessions cut to 12 characters, and what is shown must work when typed back)."""
    sessions = {c.session for c in items}
    if name in sessions:
        return name
    found = sorted(s for s in sessions if s.startswith(name))
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise RewindError(f"ambiguous session: {name} ({', '.join(found[:5])})")
    return name


def newest_first(items: list[Checkpoint], limit: int = 0) -> tuple[list[Checkpoint], int]:
    """ITEMS newest first, at most LIMIT (0: all); and how many more (search.select chooses them)."""
    chosen = items[::-1]
    if limit and len(chosen) > limit:
        return chosen[:limit], len(chosen) - limit
    return chosen, 0


def previous(items: list[Checkpoint], item: Checkpoint) -> Checkpoint | None:
    """The checkpoint before ITEM in its work tree, whichever session took it, among ITEMS (load_all, or one
    machine's fetched copies): what its note's `paths` and `origins` count from, and what `show`, `list
    --path` and the page compare it with; None for a work tree's first."""
    earlier = [c for c in items if c.seq < item.seq and c.note.worktree == item.note.worktree]
    return earlier[-1] if earlier else None


def since_previous(repo: Repo, item: Checkpoint, color: bool = False) -> tuple[str, str]:
    """(what ITEM is compared with, `git diff --stat --summary` from it): `compared_with`. COLOR: the stat in
    git's colours."""
    if item.source is not None:
        parent = compared_with(repo, load_fetched(repo, source=item.source), item)
    else:
        parent = compared_with(repo, load_all(repo), item)
    colors = "--color=always" if color else "--no-color"  # not as color.ui says: this is read, not shown
    return parent, repo.git(["diff", "--stat", "--summary", colors, parent, item.commit]).decode("utf-8", "replace")


def compared_with(repo: Repo, items: list[Checkpoint], item: Checkpoint) -> str:
    """What ITEM is compared with, among ITEMS: the work tree's previous checkpoint (`previous`); for a work
    tree's first, the commit HEAD was at when it was taken (else the empty tree), as the store counted its
    paths: a commit or tree id."""
    return bases(repo, items, [item])[item.commit]


def bases(repo: Repo, items: list[Checkpoint], chosen: list[Checkpoint] | None = None) -> dict[str, str]:
    """`compared_with` for each of CHOSEN (default: ITEMS), ITEMS oldest first: one walk, and one
    `git cat-file --batch-check` for the HEAD commits of work trees' first checkpoints (one may be pruned)."""
    from .snapshot import empty_tree

    wanted = {c.commit for c in (chosen if chosen is not None else items)}
    last: dict[str | None, str] = {}
    found: dict[str, str] = {}
    heads: dict[str, str] = {}
    for item in sorted(items, key=lambda c: c.seq):
        if item.commit in wanted:
            before = last.get(item.note.worktree)
            if before is not None:
                found[item.commit] = before
            elif item.note.head:
                heads[item.commit] = item.note.head
        last[item.note.worktree] = item.commit
    present = _commits_present(repo, list(set(heads.values()))) if heads else set()
    for commit in wanted - found.keys():
        head = heads.get(commit)
        found[commit] = head if head in present else empty_tree(repo)
    return found


def _commits_present(repo: Repo, oids: list[str]) -> set[str]:
    """The OIDS that name a commit in the object store (HEAD moved on and gc pruned it: not any more)."""
    out = repo.git(["cat-file", "--batch-check=%(objecttype)"], input="".join(f"{oid}\n" for oid in oids).encode())
    return {oid for oid, kind in zip(oids, out.decode().splitlines(), strict=True) if kind == "commit"}


def stats(repo: Repo) -> dict[str, Any]:
    """Counts, sessions, the disk the checkpoints' own objects use, and the oldest and newest."""
    items = load_all(repo)
    sessions: dict[str, int] = {}
    for item in items:
        sessions[item.session] = sessions.get(item.session, 0) + 1
    from .storage import measure

    storage = measure(repo, items) if items else 0

    def brief(item: Checkpoint) -> dict[str, Any]:
        return {"seq": item.seq, "created": item.note.created, "message": item.message}

    return {
        "checkpoints": len(items),
        "sessions": dict(sorted(sessions.items(), key=lambda kv: -kv[1])),
        "storage_bytes": storage,
        "oldest": brief(items[0]) if items else None,
        "newest": brief(items[-1]) if items else None,
        "with_summary": sum(1 for item in items if item.note.summary),
        "safety": sum(1 for item in items if item.note.safety),
    }


# fetched checkpoints -------------------------------------------------------------------------
# Other machines' checkpoints, as `git rewind fetch` brought them (sync.py): read-only, each machine's copy at
# `refs/notes/rewind-remote/<remote>/<sync_name>` (share.py says what a copy is). Their id is
# `<remote>/<sync_name>/<seq>`, that machine's own sequence number: stable across fetches and never one of
# this repository's numbers, so plain ids, `@` and `@{DATE}` stay local.

_FETCHED_ID = None


def _fetched_pattern() -> Any:
    import re

    global _FETCHED_ID
    if _FETCHED_ID is None:
        _FETCHED_ID = re.compile(r"(?P<source>(?P<label>[^\s/]+)/(?P<name>[A-Za-z0-9_][A-Za-z0-9._-]*))/#?(?P<seq>\d+)")
    return _FETCHED_ID


def is_fetched_id(ident: str) -> bool:
    """IDENT has the shape of a fetched checkpoint's id."""
    return _fetched_pattern().fullmatch(ident.strip()) is not None


def machines(repo: Repo, label: str | None = None) -> dict[str, str]:
    """`<remote>/<sync_name>` → its machine commit, for every fetched copy (of remote LABEL only, if given)."""
    prefix = REMOTE_PREFIX + (label + "/" if label else "")
    from ..base.gitobjects import refs_under

    return {ref[len(REMOTE_PREFIX):]: oid for ref, oid in refs_under(repo, prefix).items()}


def load_fetched(repo: Repo, label: str | None = None, source: str | None = None) -> list[Checkpoint]:
    """The fetched checkpoints of remote LABEL (every remote: None), or of one machine SOURCE, oldest first
    (by time; a machine's own order by its seq)."""
    every = {REMOTE_PREFIX + name: tip for name, tip in machines(repo).items()}
    prefix = REMOTE_PREFIX + (label + "/" if label else "")
    wanted = {ref: tip for ref, tip in every.items() if ref.startswith(prefix)
              and (source is None or ref == REMOTE_PREFIX + source)}
    found: list[Checkpoint] = []
    for ref, items in sorted(_load(repo, layout.FETCHED_NOTES_CACHE, wanted, every).items()):
        for item in items:
            item.source = ref[len(REMOTE_PREFIX):]
            found.append(item)
    found.sort(key=lambda c: (c.time, c.source or "", c.seq))
    return found


def lookup_fetched(repo: Repo, ident: str) -> Checkpoint:
    """The fetched checkpoint `<remote>/<sync_name>/<seq>`."""
    match = _fetched_pattern().fullmatch(ident.strip())
    if match is None:
        raise RewindError(f"unknown checkpoint: {ident}")
    source, seq, label, name = match.group("source"), int(match.group("seq")), match.group("label"), match.group("name")
    if source not in machines(repo, label):
        raise RewindError(f"unknown checkpoint: {ident} (nothing fetched from machine {name} of {label}: "
                          f"`git rewind fetch {label}` brings it)")
    found = [c for c in load_fetched(repo, source=source) if c.seq == seq]
    if not found:
        raise RewindError(f"unknown checkpoint: {ident} (machine {source} has no #{seq})")
    if len(found) > 1:  # two clones pushed under one sync_name: their numbers may meet
        raise RewindError(f"ambiguous checkpoint id: {ident} (two checkpoints of {source} are #{seq}: "
                          f"name one by its commit, {found[0].commit[:12]} or {found[1].commit[:12]})")
    return found[0]


def fetched_by_commit(repo: Repo, prefix: str) -> Checkpoint | None:
    """The fetched checkpoint whose copy commit starts with PREFIX (7 hex digits or more), if exactly one."""
    import re

    if not re.fullmatch(r"[0-9a-fA-F]{7,64}", prefix) or not machines(repo):
        return None
    found = [c for c in load_fetched(repo) if c.commit.startswith(prefix.lower())]
    return found[0] if len(found) == 1 else None
