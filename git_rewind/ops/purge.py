"""Purging a secret from every local checkpoint: a file (`--path`) or a text (`--text`), for a secret that
got captured.

Every checkpoint chain that holds it is rewritten (same seqs, sessions, order, dates, messages and every
other byte of every tree; new commit ids from the first checkpoint that changes on), transcript backups
(the attachments, a checkpoint's second parent) included, and the notes ref is written afresh without
history, as gc does. Then the old objects go for good: the reflogs of our refs are expired, and the
objects nothing reaches any more that git-rewind wrote (reachable from an unreachable commit of ours),
or that hold the text, are deleted, loose or packed (only the packs holding them are rewritten). An
object the person's own refs, reflogs or index still reach is theirs: it stays, and the result says
where it is held. Other unreachable objects (the person's dangling commits, a dropped stash) are kept.
"""

from __future__ import annotations

import os
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

from ..base import layout
from ..base.errors import RewindError
from ..base.gitcmd import COMMITTER, FastImport, cat_file, null_oid
from ..base.gitobjects import Commit, read_commits, refs_under
from ..base.repo import NOTES_REF, REF_PREFIX, REMOTE_PREFIX, SCRATCH_ATTACHMENTS, SHARE_PREFIX, Repo, is_ours
from ..store import checkpoints, store
from ..store.authorship import NOTES_REF as AUTHORSHIP_REF
from ..store.checkpoints import Checkpoint

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Iterator, Mapping

    from ..base.note import Json

MARKER = "[PURGED]"
_CHUNK = 2000  # objects read per `git cat-file --batch` (blobs can be large: never all of them at once)
_STRUCTURAL = frozenset({"v", "seq", "session", "head", "created", "worktree"})  # note keys that name, not say


@dataclass
class Changed:
    """What a purge changed (or would change) in one checkpoint."""

    seq: int
    session: str
    removed: list[str] = field(default_factory=list)  # purged paths this checkpoint held
    blobs: int = 0  # files whose text changed (the attachments' included)
    renamed: int = 0  # files whose path held the text, now under the path with it replaced
    message: bool = False
    note: bool = False
    attachment: bool = False


@dataclass
class Result:
    """What `run` found and did."""

    dry_run: bool
    changed: list[Changed] = field(default_factory=list)
    rewritten: int = 0  # commits written anew (a chain is rewritten from its first changed checkpoint on)
    pruned: int = 0  # objects deleted from .git/objects
    packs_rewritten: int = 0
    held: dict[str, list[str]] = field(default_factory=dict)  # where → old objects still reachable from there
    kept_packs: list[str] = field(default_factory=list)  # packs with a .keep file that hold purged objects
    in_kept_packs: set[str] = field(default_factory=set)  # the objects they hold that would have gone
    on_disk: list[str] = field(default_factory=list)  # purged paths still in a work tree
    text_on_disk: list[str] = field(default_factory=list)  # work-tree files that held the text when last scanned
    names_on_disk: list[str] = field(default_factory=list)  # work-tree files whose path holds the text
    transcripts: list[str] = field(default_factory=list)  # agents' transcripts (on disk) that still hold the text
    state_files: int = 0  # files under .git/rewind (hook state and logs, rewinds, the index) with the text gone
    authorship: int = 0  # commits' authorship notes (refs/notes/rewind-authorship) with the text gone
    copy_discarded: bool = False  # this machine's shareable copy was dropped: the next push is `push --prune`
    remote_copies: list[str] = field(default_factory=list)  # fetched copies of other machines (not purged)

    @property
    def seqs(self) -> list[int]:
        return [c.seq for c in self.changed]


class _Plan:
    """Every edit the purge makes, computed before anything is written."""

    def __init__(self) -> None:
        self.edits: dict[str, list[bytes]] = {}  # commit → fast-import file commands (D / M) on its tree
        self.messages: dict[str, bytes] = {}  # commit → its new message
        self.blobs: dict[str, bytes] = {}  # old blob → new content (the text replaced)
        self.notes: dict[str, bytes] = {}  # checkpoint commit → its new note (text or paths purged)
        self.old: set[str] = set()  # objects that held the secret (old blobs, note blobs, commits)


def run(repo: Repo, paths: list[str], texts: list[str], dry_run: bool = False) -> Result:
    """Purge PATHS (work-tree-relative, '/'-separated) and TEXTS from every local checkpoint; with DRY_RUN
    only say what would change."""
    if not paths and not texts:
        raise RewindError("nothing to purge: give --path PATH or --text TEXT")
    for text in texts:
        if not text:
            raise RewindError("--text needs a non-empty text")
        if text in MARKER:
            raise RewindError(f"--text {text!r} is part of the marker {MARKER} that replaces it")
    result = Result(dry_run)
    with _locks(repo):
        items = checkpoints.load_all(repo)
        sessions = repo.session_refs()
        chains, parents = _chains(repo, sessions)
        every = [oid for chain in chains.values() for oid in chain]
        every += [p for oid in every for p in parents[oid][1:]]
        commits = read_commits(repo, list(dict.fromkeys(every)))  # the reader gc rewrites chains from
        encoded = [t.encode("utf-8", "surrogateescape") for t in texts]
        plan = _plan(repo, items, chains, parents, commits, paths, encoded, texts, result)
        _warnings(repo, items, paths, texts, plan, result)
        if dry_run:
            return result
        authorship_tip = repo.read_ref(AUTHORSHIP_REF)
        if not (plan.edits or plan.messages or plan.notes):
            # No checkpoint holds it; what an earlier gc dropped (or a purge killed before its end left) may,
            # until git prunes it: that goes now.
            result.state_files = _scrub_state_files(repo, texts)
            result.authorship = _scrub_authorship(repo, texts)
            _expire_reflogs(repo, [NOTES_REF, AUTHORSHIP_REF, *(REF_PREFIX + s for s in sessions)])
            _prune(repo, plan, result, encoded, [authorship_tip] if result.authorship and authorship_tip else [])
            return result
        # What the store held before: the roots of what goes (with any unreachable commit git-rewind wrote).
        roots = [*commits, *refs_under(repo, NOTES_REF, SHARE_PREFIX).values()]
        moves, old_refs = _rewrite(repo, items, sessions, chains, parents, commits, plan, result)
        repo.move_refs(moves, old_refs)
        for session in set(sessions) | {c.session for c in items}:
            store.forget_tip(repo, session)
        _forget_caches(repo)
        result.state_files = _scrub_state_files(repo, texts)
        result.authorship = _scrub_authorship(repo, texts)
        if result.authorship and authorship_tip:
            roots.append(authorship_tip)
        result.copy_discarded = _discard_copy(repo)
        _expire_reflogs(repo, [*moves, AUTHORSHIP_REF])
        _prune(repo, plan, result, encoded, roots)
    return result


@contextmanager
def _locks(repo: Repo) -> Iterator[None]:
    """Every work tree's lock, then the store's (the order every writer takes them in): no scan anywhere
    builds on an object while it is being deleted."""
    from ..base.lock import Lock

    repo.ensure_dirs()
    folders = [os.path.join(repo.commondir, "worktrees", name, "rewind") for name in repo.linked_worktrees()]
    with ExitStack() as stack:
        for folder in [os.path.join(repo.commondir, "rewind"), *folders]:
            if os.path.isdir(folder):
                stack.enter_context(Lock(os.path.join(folder, "lock"), repo.lock_timeout))
        stack.enter_context(repo.store_lock())
        yield


# reading ----------------------------------------------------------------------------------------------


def _chains(repo: Repo, sessions: dict[str, str]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Each session's chain, oldest first (first parents), and every commit's parents (attachments too)."""
    parents: dict[str, list[str]] = {}
    if sessions:
        out = repo.git(["rev-list", "--parents", f"--glob={REF_PREFIX}*"]).decode()
        for line in out.splitlines():
            oid, *rest = line.split()
            parents[oid] = rest
    chains: dict[str, list[str]] = {}
    for session, tip in sessions.items():
        chain = []
        current: str | None = tip
        while current is not None:
            chain.append(current)
            current = parents[current][0] if parents.get(current) else None
        chains[session] = chain[::-1]
    return chains, parents


def _objects(repo: Repo, oids: list[str]) -> Iterator[tuple[str, str, bytes]]:
    """(oid, type, content) of OIDS, read a chunk at a time."""
    for start in range(0, len(oids), _CHUNK):
        chunk = oids[start:start + _CHUNK]
        for oid, found in zip(chunk, cat_file(chunk, repo.root), strict=True):
            if found is not None:
                yield oid, found[0], found[1]


_ENTRY: dict[int, re.Pattern[bytes]] = {}  # one tree entry's pattern, by the object id's length


def _entries(raw: bytes, size: int) -> list[tuple[bytes, bytes, bytes]]:
    """(mode, name, binary object id) of each entry of a raw tree object (SIZE: the id's length in bytes):
    one regular expression, run in C, rather than a Python loop over 10,000s of trees."""
    import re

    if size not in _ENTRY:
        _ENTRY[size] = re.compile(rb"([0-7]+) ([^\0]*)\0(.{%d})" % size, re.S)
    return _ENTRY[size].findall(raw)


# planning ---------------------------------------------------------------------------------------------


def _plan(repo: Repo, items: list[Checkpoint], chains: dict[str, list[str]], parents: dict[str, list[str]],
          commits: dict[str, Commit], paths: list[str], texts: list[bytes], words: list[str],
          result: Result) -> _Plan:
    """What changes where: the trees (paths gone, blobs with the text replaced, paths holding it renamed),
    messages and notes."""
    from ..base.gitcmd import quote_path

    plan = _Plan()
    size = 32 if repo.object_format == "sha256" else 20
    trees: dict[bytes, list[tuple[bytes, bytes, bytes]]] = {}  # parsed only when a blob or a name holds the text
    named = False  # a tree entry's name holds (a part of) the text
    if texts and commits:
        listed = repo.git(["rev-list", "--objects", "--no-object-names", "--stdin"],
                          input="".join(f"{c.tree}\n" for c in commits.values()).encode()).decode().split()
        kinds = _kinds(repo, listed)
        for oid, _kind, raw in _objects(repo, [o for o in listed if kinds.get(o) == "blob"]):
            new = _replace(raw, texts)
            if new != raw:
                plan.blobs[oid] = new
                plan.old.add(oid)
        raw_trees = {oid: raw for oid, _kind, raw in _objects(repo, [o for o in listed if kinds.get(o) == "tree"])}
        pieces = [piece for text in texts for piece in text.split(b"/") if piece]
        named = any(piece in raw for raw in raw_trees.values() for piece in pieces)
        plan.old.update(oid for oid, raw in raw_trees.items() if _replace(raw, texts) != raw)  # said if held
        if plan.blobs or named:
            trees = {bytes.fromhex(oid): _entries(raw, size) for oid, raw in raw_trees.items()}
    changed_blobs = {bytes.fromhex(oid) for oid in plan.blobs}
    hits: dict[bytes, list[tuple[bytes, bytes, str]]] = {}

    def blob_hits(tree: bytes) -> list[tuple[bytes, bytes, str]]:
        """(path, mode, oid) of every blob under TREE whose text changes."""
        if tree not in hits:
            found = []
            for mode, name, oid in trees.get(tree, []):
                if mode == b"40000":
                    found += [(name + b"/" + p, m, o) for p, m, o in blob_hits(oid)]
                elif oid in changed_blobs and mode != b"160000":
                    found.append((name, mode, oid.hex()))
            hits[tree] = found
        return hits[tree]

    longest = max((len(text) for text in texts), default=0)
    slashed = any(b"/" in text for text in texts)
    name_memo: dict[tuple[bytes, bytes, bool], list[tuple[bytes, bytes, bytes]]] = {}

    def name_hits(tree: bytes, tail: bytes = b"", hit: bool = False) -> list[tuple[bytes, bytes, bytes]]:
        """(path, mode, binary oid) of every file, link or submodule under TREE whose path holds a text.
        TAIL: the end of the folders' path above it, as long as a text spanning folders needs; HIT: one of
        those folders' names holds a text already."""
        key = (tree, b"" if hit else tail, hit)
        if key not in name_memo:
            found = []
            for mode, name, oid in trees.get(tree, []):
                here = hit or any(text in tail + name for text in texts)
                if mode == b"40000":
                    below = (tail + name + b"/")[-(longest - 1):] if slashed and longest > 1 else b""
                    found += [(name + b"/" + p, m, o) for p, m, o in name_hits(oid, below, here)]
                elif here:
                    found.append((name, mode, oid))
            name_memo[key] = found
        return name_memo[key]

    # Which checkpoint holds which purged path: one `cat-file --batch-check` of <tree>:<path>.
    held: dict[tuple[str, str], str] = {}
    if paths:
        questions = [(c.tree, path) for c in dict((c.tree, c) for c in commits.values()).values() for path in paths]
        out = repo.git(["cat-file", "--batch-check=%(objectname)"],
                       input=b"".join(os.fsencode(f"{tree}:{path}") + b"\n" for tree, path in questions))
        for (tree, path), line in zip(questions, out.decode().splitlines(), strict=True):
            if not line.endswith(" missing") and " " not in line:
                held[(tree, path)] = line

    def under(path: bytes) -> bool:
        text = os.fsdecode(path)
        return any(text == p or text.startswith(p + "/") for p in paths)

    def tree_edits(tree: str) -> tuple[list[bytes], list[str], int, int]:
        """The fast-import file commands TREE needs, the purged paths it held, the files with the text, and
        the files whose path held it (removed, then written under the path with the text replaced)."""
        edits: list[bytes] = []
        removed = [path for path in paths if (tree, path) in held]
        edits += [b"D " + quote_path(os.fsencode(path)) + b"\n" for path in removed]
        renames = [hit for hit in name_hits(bytes.fromhex(tree)) if not under(hit[0])] if named else []
        moved = {where for where, _mode, _oid in renames}
        edits += [b"D " + quote_path(where) + b"\n" for where in sorted(moved)]
        blobs = 0
        for where, mode, oid in renames:
            blob = oid.hex()
            source = b":" + blob.encode() if blob in plan.blobs else blob.encode()
            edits.append(b"M " + mode + b" " + source + b" " + quote_path(_replace(where, texts)) + b"\n")
            blobs += blob in plan.blobs
        for where, mode, blob in blob_hits(bytes.fromhex(tree)) if plan.blobs else []:
            if not under(where) and where not in moved:
                edits.append(b"M " + mode + b" :" + blob.encode() + b" " + quote_path(where) + b"\n")
                blobs += 1
        return edits, removed, blobs, len(renames)

    by_commit = {str(c.commit): c for c in items}
    changes: dict[str, Changed] = {}
    for session, chain in chains.items():
        carried: Changed | None = None  # a chain's root may be an attachment (no note): told with the next
        for oid in chain:
            commit = commits[oid]
            item = by_commit.get(oid)
            change = Changed(item.seq if item else 0, session)
            if carried is not None:
                change.blobs, change.attachment = carried.blobs, carried.attachment
                carried = None
            edits, change.removed, blobs, change.renamed = tree_edits(commit.tree)
            change.blobs += blobs
            if edits:
                plan.edits[oid] = edits
            message = _replace(commit.message, texts)
            if message != commit.message:
                plan.messages[oid] = message
                plan.old.add(oid)
                change.message = True
            for extra in parents[oid][1:]:  # an attachment: the transcript backed up before a rewind
                attached = commits[extra]
                edits, _removed, blobs, _renamed = tree_edits(attached.tree)
                if edits:
                    plan.edits[extra] = edits
                    change.blobs += blobs
                msg = _replace(attached.message, texts)
                if msg != attached.message:
                    plan.messages[extra] = msg
                    plan.old.add(extra)
                if extra in plan.edits or extra in plan.messages:
                    change.attachment = True
            if item is not None:
                _plan_note(plan, item, paths, words, change)
            if item is None:
                change.attachment = change.attachment or change.blobs > 0 or change.message
                change.message = False
                carried = change
            elif (change.removed or change.blobs or change.renamed or change.message or change.note
                  or change.attachment):
                changes[oid] = change
    for item in items:  # a note on no chain of ours (fetched): its commit stays, its note is purged
        if str(item.commit) not in commits:
            change = Changed(item.seq, item.session)
            _plan_note(plan, item, paths, words, change)
            if change.note:
                changes[str(item.commit)] = change
    if held:  # every object under a purged path is an old object: say where it is held if it stays
        gone = sorted(set(held.values()))
        out = repo.git(["rev-list", "--objects", "--no-object-names", "--stdin"],
                       input="".join(o + "\n" for o in gone).encode(), check=False)
        plan.old.update(out.decode().split())
        plan.old.update(gone)
    result.changed = sorted(changes.values(), key=lambda c: c.seq)
    return plan


def _plan_note(plan: _Plan, item: Checkpoint, paths: list[str], words: list[str], change: Changed) -> None:
    """ITEM's note with WORDS and PATHS purged, into PLAN when it changes."""
    from ..base.note import Note

    note = item.note.to_json()
    scrubbed = _scrub_note(note, paths, words)
    if scrubbed != note:
        rewritten = Note.from_json(scrubbed)
        assert rewritten is not None
        plan.notes[str(item.commit)] = rewritten.to_bytes()
        plan.old.add(str(item.note_blob))
        change.note = True


def _kinds(repo: Repo, oids: list[str]) -> dict[str, str]:
    """Each object's type, through one `git cat-file --batch-check`."""
    if not oids:
        return {}
    out = repo.git(["cat-file", "--batch-check=%(objectname) %(objecttype)"],
                   input="".join(o + "\n" for o in oids).encode()).decode()
    return dict(line.split() for line in out.splitlines() if len(line.split()) == 2)


def _replace(data: bytes, texts: list[bytes]) -> bytes:
    for text in texts:
        data = data.replace(text, MARKER.encode())
    return data


def _scrub_note(note: dict[str, Json], paths: list[str], texts: list[str]) -> dict[str, Json]:
    """NOTE with TEXTS replaced in every value that says something (not the keys that name the checkpoint)
    and PATHS gone from its path lists; a new dict when anything changed."""

    def scrub(value: Json, keys: bool = False) -> Json:
        if isinstance(value, str):
            for text in texts:
                value = value.replace(text, MARKER)
            return value
        if isinstance(value, list):
            return [scrub(v) for v in value]
        if isinstance(value, dict):
            return {(scrub(k) if keys else k): v if k in ("to_commit", "backup_blob") else scrub(v)
                    for k, v in value.items()}
        return value

    def kept(path: object) -> bool:
        return not (isinstance(path, str) and any(path == p or path.startswith(p + "/") for p in paths))

    out = {key: value if key in _STRUCTURAL else scrub(value, keys=key == "origins") for key, value in note.items()}
    if paths:
        out["paths"] = [p for p in out.get("paths") or [] if kept(p)]
        if isinstance(out.get("named"), list):
            out["named"] = [p for p in out["named"] if kept(p)]
        if isinstance(out.get("origins"), dict):
            out["origins"] = {p: o for p, o in out["origins"].items() if kept(p)}
        out["skipped"] = [s for s in out.get("skipped") or [] if not isinstance(s, dict) or kept(s.get("path"))]
    return out


# writing ----------------------------------------------------------------------------------------------


def _rewrite(repo: Repo, items: list[Checkpoint], sessions: dict[str, str], chains: dict[str, list[str]],
             parents: dict[str, list[str]], commits: dict[str, Commit], plan: _Plan,
             result: Result) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """Write the new blobs, the rewritten chains (from their first changed commit on) and the notes commit,
    through one fast-import that moves no ref; returns the refs' new and old values (moved together)."""
    import time

    from ..store.snapshot import blob_oid

    marks: dict[str, int] = {}  # old commit → its mark
    new_blobs = {old: blob_oid(content, repo.object_format) for old, content in plan.blobs.items()}
    tips: dict[str, int] = {}
    with FastImport(repo.root, force=True) as fi:
        mark = 0
        blob_marks: dict[str, int] = {}
        for old, content in plan.blobs.items():
            mark += 1
            fi.write(b"blob\nmark :%d\n" % mark)
            fi.data(content)
            blob_marks[old] = mark

        def file_commands(oid: str) -> bytes:
            return b"".join(_with_marks(cmd, blob_marks) for cmd in plan.edits.get(oid, []))

        for session, chain in chains.items():
            start = next((i for i, oid in enumerate(chain) if _changes(oid, parents, plan)), None)
            if start is None:
                continue
            ref = f"{REF_PREFIX}{session}"
            fi.reset(ref)
            for index, oid in enumerate(chain[start:], start):
                commit = commits[oid]
                merges = []
                for extra in commit.parents[1:]:
                    if extra in plan.edits or extra in plan.messages:
                        mark += 1
                        attached = commits[extra]
                        fi.reset(SCRATCH_ATTACHMENTS)
                        fi.commit(SCRATCH_ATTACHMENTS, plan.messages.get(extra, attached.message), attached.time,
                                  mark=mark, ident=_identity(attached))
                        fi.write(f'M 040000 {attached.tree} ""\n'.encode() + file_commands(extra) + b"\n")
                        merges.append(f":{mark}")
                    else:
                        merges.append(extra)
                mark += 1
                marks[oid] = mark
                first = [] if index == 0 else [chain[index - 1]] if index == start else [f":{marks[chain[index - 1]]}"]
                fi.commit(ref, plan.messages.get(oid, commit.message), commit.time, mark=mark,
                          parents=first + merges, ident=_identity(commit))
                fi.write(f'M 040000 {commit.tree} ""\n'.encode() + file_commands(oid) + b"\n")
                result.rewritten += 1
            tips[ref] = mark
        new_commits = dict(zip(marks, fi.get_marks(list(marks.values())), strict=True))
        mark += 1
        fi.reset(NOTES_REF)
        fi.commit(NOTES_REF, f"purge: {len(result.changed)} checkpoints changed\n".encode(), int(time.time()),
                  mark=mark)
        for item in items:
            oid = str(item.commit)
            target = f":{marks[oid]}" if oid in marks else oid  # a commit of this stream: by its mark
            note = _remap(plan.notes.get(oid), item, new_commits, new_blobs)
            if note is None:
                fi.write(f"N {item.note_blob} {target}\n".encode())
            else:
                fi.write(f"N inline {target}\n".encode())
                fi.data(note)
        fi.write(b"\n")
        tips[NOTES_REF] = mark
        moves: dict[str, str | None] = {ref: fi.get_mark(m) for ref, m in tips.items()}
        for ref in moves:
            fi.reset(ref)
        fi.reset(SCRATCH_ATTACHMENTS, null_oid(repo.object_format))
    before: dict[str, str | None] = {**{REF_PREFIX + s: oid for s, oid in sessions.items()},
                                     NOTES_REF: repo.read_ref(NOTES_REF)}
    return moves, before


def _identity(commit: Commit) -> bytes:
    """The author and committer lines of COMMIT as stored (names, emails, dates, time zones)."""
    author = b"author " + commit.author + b"\n" if commit.author else b""
    return author + b"committer " + (commit.committer or COMMITTER + b" %d +0000" % commit.time) + b"\n"


def _changes(oid: str, parents: dict[str, list[str]], plan: _Plan) -> bool:
    """Commit OID itself changes: its tree, its message or an attachment (a note alone changes no commit)."""
    return (oid in plan.edits or oid in plan.messages
            or any(p in plan.edits or p in plan.messages for p in parents[oid][1:]))


def _with_marks(command: bytes, blob_marks: dict[str, int]) -> bytes:
    """A planned `M mode :<old blob> path` with the new blob's mark in place of the old blob's id (`M mode <oid>
    path`, a renamed file whose content stays, as it is)."""
    if not command.startswith(b"M ") or command.split(b" ", 3)[2][:1] != b":":
        return command
    head, path = command.split(b" ", 3)[:3], command.split(b" ", 3)[3]
    return b"%s %s :%d %s" % (head[0], head[1], blob_marks[head[2][1:].decode()], path)


def _remap(planned: bytes | None, item: Checkpoint, new_commits: Mapping[str, str],
           new_blobs: dict[str, str]) -> bytes | None:
    """The note to write for ITEM: PLANNED (or its own), with the commit and backup blob ids a safety
    checkpoint's `rewind` names moved to the rewritten ones; None when it stays as it is."""
    from ..base.note import Note

    note = Note.from_bytes(planned) if planned is not None else item.note
    assert note is not None
    record = note.rewind
    moved = False
    if record is not None:
        if record.to_commit is not None and record.to_commit in new_commits:
            from ..base.note import Oid

            record.to_commit = Oid(new_commits[record.to_commit])
            moved = True
        conversation = record.conversation
        if conversation is not None and conversation.backup_blob in new_blobs:
            from ..base.note import Oid

            conversation.backup_blob = Oid(new_blobs[str(conversation.backup_blob)])
            moved = True
    if planned is None and not moved:
        return None
    return note.to_bytes()


# around the rewrite ------------------------------------------------------------------------------------


def _worktree_dirs(repo: Repo) -> list[tuple[str, str]]:
    """(git directory, private rewind directory) of every work tree."""
    dirs = [(repo.commondir, os.path.join(repo.commondir, "rewind"))]
    for name in repo.linked_worktrees():
        gitdir = os.path.join(repo.commondir, "worktrees", name)
        dirs.append((gitdir, os.path.join(gitdir, "rewind")))
    return dirs


def _index_entries(repo: Repo, index: str) -> list[tuple[str, str]]:
    """(blob id, path) of each entry of the index file INDEX (none when it does not exist)."""
    if not os.path.isfile(index):
        return []
    out = repo.git(["ls-files", "-s", "-z", "--full-name"], env={"GIT_INDEX_FILE": index}, check=False)
    entries = []
    for record in out.split(b"\0"):
        head, _, path = record.partition(b"\t")
        parts = head.split()
        if len(parts) == 3:
            entries.append((parts[1].decode(), os.fsdecode(path)))
    return entries


def _warnings(repo: Repo, items: list[Checkpoint], paths: list[str], texts: list[str], plan: _Plan,
              result: Result) -> None:
    """What a purge cannot reach: the files still in a work tree (the next checkpoint takes them again), the
    agents' own transcripts, and the copies fetched from other machines."""
    roots = [line[9:] for line in repo.git(["worktree", "list", "--porcelain"]).decode().splitlines()
             if line.startswith("worktree ")]
    for root in roots:
        for path in paths:
            if os.path.lexists(os.path.join(root, path)):
                result.on_disk.append(os.path.join(root, path))
    if texts:
        for gitdir, private in _worktree_dirs(repo):
            where = next((r for r in roots if _gitdir_of(r) == os.path.realpath(gitdir)), None)
            for blob, path in _index_entries(repo, os.path.join(private, layout.INDEX)):
                full = os.path.join(where, path) if where else path
                if blob in plan.blobs:
                    result.text_on_disk.append(full)
                if any(text in path for text in texts) and (where is None or os.path.lexists(full)):
                    result.names_on_disk.append(full)
    if texts:
        named = {c.note.conversation.transcript for c in items if c.note.conversation is not None}
        for transcript in sorted(t for t in named if t):
            try:
                with open(transcript, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            if any(text.encode("utf-8", "surrogateescape") in data for text in texts):
                result.transcripts.append(transcript)
    result.remote_copies = list(refs_under(repo, REMOTE_PREFIX))


def _gitdir_of(root: str) -> str | None:
    from ..base.repo import git_dirs

    dirs = git_dirs(root)
    return os.path.realpath(dirs[0]) if dirs else None


def _forget_caches(repo: Repo) -> None:
    """Drop every work tree's caches (layout.PURGE's "drop"): they may name old objects (the last scan's
    tree, which the next scan compares with; targets' ignore rules by tree). The tips went with
    store.forget_tip."""
    for _gitdir, private in _worktree_dirs(repo):
        for name, how in layout.PURGE.items():
            if how == "drop":
                _remove(os.path.join(private, name))


def _remove(path: str) -> None:
    import shutil

    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except (FileNotFoundError, NotADirectoryError):
            pass


def _scrub_state_files(repo: Repo, texts: list[str]) -> int:
    """Take TEXTS out of every file git-rewind keeps under .git/rewind, each as layout.PURGE says (an open
    turn's prompt, which its next checkpoint's note would copy back; paths in rewinds.jsonl, skipped.json, the
    hooks' logs, the private index); returns how many changed."""
    if not texts:
        return 0
    import json

    encoded = [t.encode("utf-8", "surrogateescape") for t in texts]
    # a cache written as JSON (the notes cache, the config cache) holds the text escaped as JSON writes it
    escaped = [json.dumps(t, ensure_ascii=ascii)[1:-1].encode("utf-8", "surrogateescape") for t in texts
               for ascii in (True, False)]
    changed = 0
    for _gitdir, private in _worktree_dirs(repo):
        for name, how in layout.PURGE.items():
            path = os.path.join(private, name)
            if how == "json":
                changed += sum(_scrub_json_file(f, texts) for f in _files_of(path, ".json"))
            elif how == "lines":
                changed += sum(_scrub_lines(f, texts, encoded) for f in (path, path + ".1"))
            elif how == "index":
                changed += _scrub_index(repo, private, path, texts, encoded)
            elif how == "drop" and any(_holds(f, encoded + escaped) for f in _files_of(path, "")):
                _remove(path)
                changed += 1
    return changed


def _files_of(path: str, suffix: str) -> list[str]:
    """PATH if it is a file, else the files (named with SUFFIX) anywhere under it."""
    if os.path.isfile(path):
        return [path]
    found = []
    for folder, _dirs, names in os.walk(path):
        found += [os.path.join(folder, n) for n in sorted(names) if n.endswith(suffix)]
    return found


def _holds(path: str, encoded: list[bytes]) -> bool:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    return any(text in data for text in encoded)


def _scrub_json_file(path: str, texts: list[str]) -> bool:
    import json

    from ..base.fsutil import write_atomic

    try:
        with open(path, "rb") as fh:
            data = json.loads(fh.read())
    except (OSError, ValueError):
        return False
    scrubbed = _scrub_json(data, texts)
    if scrubbed == data:
        return False
    write_atomic(path, json.dumps(scrubbed).encode() + b"\n")
    return True


def _scrub_lines(path: str, texts: list[str], encoded: list[bytes]) -> bool:
    """The text out of each line of a log or JSON-lines file: a JSON line parsed and scrubbed (the text may be
    escaped in it), any other line replaced as bytes."""
    import json

    from ..base.fsutil import write_atomic

    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    out = []
    for line in data.split(b"\n"):
        try:
            parsed = json.loads(line) if line.lstrip()[:1] in (b"{", b"[") else None
        except ValueError:
            parsed = None
        scrubbed = _scrub_json(parsed, texts) if parsed is not None else None
        if parsed is not None and scrubbed != parsed:
            line = json.dumps(scrubbed).encode()
        out.append(_replace(line, encoded))
    new = b"\n".join(out)
    if new == data:
        return False
    write_atomic(path, new)
    return True


def _scrub_index(repo: Repo, private: str, index: str, texts: list[str], encoded: list[bytes]) -> bool:
    """Drop the entries of our private index whose path holds a text (the next scan hashes those files again);
    the whole index when the text is still in it after (a cached tree keeps folder names)."""
    gone = [path for _blob, path in _index_entries(repo, index) if any(text in path for text in texts)]
    if gone:
        repo.git(["update-index", "--force-remove", "-z", "--stdin"], env={"GIT_INDEX_FILE": index},
                 input=b"".join(os.fsencode(p) + b"\0" for p in gone))
    if _holds(index, encoded):
        _remove(index)
        for name in (layout.REFERENCE, layout.SCAN_STATE):  # both speak of the index as it was
            _remove(os.path.join(private, name))
        return True
    return bool(gone)


def _scrub_json(value: Json, texts: list[str]) -> Json:
    """VALUE with TEXTS replaced in every string, keys included."""
    if isinstance(value, str):
        for text in texts:
            value = value.replace(text, MARKER)
        return value
    if isinstance(value, list):
        return [_scrub_json(v, texts) for v in value]
    if isinstance(value, dict):
        return {_scrub_json(k, texts): _scrub_json(v, texts) for k, v in value.items()}
    return value


def _scrub_authorship(repo: Repo, texts: list[str]) -> int:
    """TEXTS out of the commits' authorship notes (prompts): when a note holds one, the notes ref is written
    afresh without history (every note, those scrubbed), so the old notes go with the unreachable objects;
    how many notes held it."""
    import json

    from ..base import objects
    from ..store import authorship

    if not texts:
        return 0
    tip = repo.read_ref(AUTHORSHIP_REF)
    listed = authorship.listing(repo) if tip else {}
    encoded = [t.encode("utf-8", "surrogateescape") for t in texts]
    notes: dict[str, bytes] = {}
    held = 0
    for (commit, _blob), found in zip(listed.items(), cat_file(list(listed.values()), repo.root), strict=True):
        if found is None:
            continue
        content = found[1]
        if _replace(content, encoded) != content:
            held += 1
            try:
                content = json.dumps(_scrub_json(json.loads(content), texts), ensure_ascii=False,
                                     separators=(",", ":")).encode() + b"\n"
            except ValueError:
                content = _replace(content, encoded)  # not JSON (not ours): its bytes, the text replaced
        notes[commit] = content
    if not held:
        return 0
    made: str | None = None
    with objects.writer(repo) as stream:
        for commit, content in notes.items():
            made = stream.note(AUTHORSHIP_REF, made, commit, content, b"authorship notes, purged\n", 0)
    repo.move_refs({AUTHORSHIP_REF: made}, {AUTHORSHIP_REF: tip})
    return held


def _discard_copy(repo: Repo) -> bool:
    """Drop this machine's shareable copy (share.discard_copy) if there is one; whether one had been built."""
    from ..sharing import share

    had = bool(refs_under(repo, SHARE_PREFIX))
    if had or os.path.isdir(repo.share_dir):
        share.discard_copy(repo)
    return had


def _expire_reflogs(repo: Repo, refs: list[str]) -> None:
    """Forget what our refs pointed to before (git keeps the notes ref's reflog): the old commits must go."""
    if os.path.isdir(os.path.join(repo.commondir, "reftable")):  # logs inside the tables: ask for each ref
        for ref in refs:
            repo.git(["reflog", "expire", "--expire=now", "--expire-unreachable=now", ref], check=False)
        return
    logged = [ref for ref in refs if os.path.isfile(os.path.join(repo.commondir, "logs", ref))]
    if logged:
        repo.git(["reflog", "expire", "--expire=now", "--expire-unreachable=now", *logged])


# pruning ----------------------------------------------------------------------------------------------


def _unreachable(repo: Repo) -> dict[str, str]:
    """Every object nothing reaches (refs, reflogs, HEADs and indexes of every work tree): oid → type."""
    out = repo.git(["fsck", "--connectivity-only", "--unreachable", "--no-progress"], check=False)
    found = {}
    for line in out.decode().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "unreachable":
            found[parts[2]] = parts[1]
    return found


def _garbage(repo: Repo, texts: list[bytes], roots: list[str]) -> set[str]:
    """The unreachable objects a purge deletes: everything reachable from ROOTS (what the store's refs
    pointed to before) or from an unreachable commit git-rewind wrote (an earlier gc's, a killed
    command's) that nothing reaches any more, and every unreachable blob holding one of TEXTS. The
    person's own unreachable objects stay."""
    unreachable = _unreachable(repo)
    ident = b"\ncommitter " + COMMITTER + b" "
    ours = [oid for oid, kind, raw in _objects(repo, [o for o, k in unreachable.items() if k == "commit"])
            if ident in b"\n" + raw.partition(b"\n\n")[0]]
    ours += [oid for oid in dict.fromkeys(roots) if oid in unreachable]
    found: set[str] = set()
    if ours:
        out = repo.git(["rev-list", "--objects", "--no-object-names", "--missing=allow-any", "--stdin"],
                       input="".join(o + "\n" for o in ours).encode())
        found = {oid for oid in out.decode().split() if oid in unreachable}
    if texts:  # a tree holds it in an entry's name
        rest = [o for o, k in unreachable.items() if k in ("blob", "tree") and o not in found]
        found.update(oid for oid, _kind, raw in _objects(repo, rest) if _replace(raw, texts) != raw)
    return found


def _prune(repo: Repo, plan: _Plan, result: Result, texts: list[bytes], roots: list[str]) -> None:
    """Delete the objects `_garbage` names, wherever they are stored, then say where the old objects that
    still exist are held."""
    _sweep_orphan_packs(os.path.join(repo.commondir, "objects", "pack"))
    for _round in range(3):  # a `git repack` running meanwhile may have moved some into a pack: again
        doomed = _garbage(repo, texts, roots)
        if not doomed:
            break
        _drop_from_private_indexes(repo, doomed)
        deleted, stray = _delete(repo, doomed, result)
        result.pruned += deleted
        if not stray:
            break
    left = _present(repo, plan.old) - result.in_kept_packs
    if left:
        result.held = _holders(repo, left)


def _present(repo: Repo, oids: set[str]) -> set[str]:
    if not oids:
        return set()
    out = repo.git(["cat-file", "--batch-check=%(objectname) %(objecttype)"],
                   input="".join(o + "\n" for o in oids).encode()).decode()
    return {parts[0] for parts in (line.split() for line in out.splitlines())
            if len(parts) == 2 and parts[1] != "missing"}


def _drop_from_private_indexes(repo: Repo, doomed: set[str]) -> None:
    """Our private indexes (stat caches git does not know of) must not name a deleted blob: those entries
    go, and the next checkpoint hashes those files again (captures them again, if they are still there)."""
    for _gitdir, private in _worktree_dirs(repo):
        index = os.path.join(private, "index")
        gone = [path for blob, path in _index_entries(repo, index) if blob in doomed]
        if gone:
            repo.git(["update-index", "--force-remove", "-z", "--stdin"], env={"GIT_INDEX_FILE": index},
                     input=b"".join(os.fsencode(p) + b"\0" for p in gone))


def _delete(repo: Repo, doomed: set[str], result: Result) -> tuple[int, bool]:
    """Delete DOOMED from the object store: loose files unlinked, each pack holding any rewritten without
    them (a pack with a .keep file is left, and named); then the multi-pack index and the commit-graph
    are written again, since they may name what is gone. Returns how many went, and whether a pack
    appeared meanwhile that is not ours (a `git repack` ran: it may hold some of them)."""
    objects = os.path.join(repo.commondir, "objects")
    info = os.path.join(objects, "info")
    if os.path.exists(os.path.join(info, "commit-graph")) or os.path.isdir(os.path.join(info, "commit-graphs")):
        # Written first, from the refs as they are now (the doomed commits are unreachable already): a kill
        # below never leaves a graph naming a commit that is gone.
        split = ["--split=replace"] if os.path.isdir(os.path.join(info, "commit-graphs")) else []
        repo.git(["commit-graph", "write", "--reachable", *split], check=False)
    deleted = set()
    for oid in doomed:
        try:
            os.unlink(os.path.join(objects, oid[:2], oid[2:]))
            deleted.add(oid)
        except FileNotFoundError:
            pass
    pack_dir = os.path.join(objects, "pack")
    try:
        names = sorted(n for n in os.listdir(pack_dir) if n.endswith(".idx"))
    except FileNotFoundError:
        names = []
    changed = False
    for name in list(names):
        base = os.path.join(pack_dir, name[:-len(".idx")])
        with open(base + ".idx", "rb") as fh:
            listed = repo.git(["show-index", f"--object-format={repo.object_format}"], input=fh.read())
        held = [line.split()[1].decode() for line in listed.splitlines() if len(line.split()) >= 2]
        hit = doomed.intersection(held)
        if not hit:
            continue
        if os.path.exists(base + ".keep"):
            if os.path.basename(base) + ".pack" not in result.kept_packs:
                result.kept_packs.append(os.path.basename(base) + ".pack")
            result.in_kept_packs.update(hit)
            continue
        keep = [oid for oid in held if oid not in doomed]
        if keep:
            made = repo.git(["pack-objects", "-q", os.path.join(pack_dir, "pack")],
                            input="".join(o + "\n" for o in keep).encode())
            names.append(f"pack-{made.decode().strip()}.idx")
        for suffix in (".idx", ".pack", ".rev", ".bitmap", ".mtimes"):
            try:
                os.unlink(base + suffix)
            except FileNotFoundError:
                pass
        deleted.update(hit)
        result.packs_rewritten += 1
        changed = True
    if changed:
        for name in os.listdir(pack_dir):
            if name.startswith("multi-pack-index"):
                os.unlink(os.path.join(pack_dir, name))
                if name == "multi-pack-index":
                    repo.git(["multi-pack-index", "write"], check=False)
    if changed and os.path.exists(os.path.join(objects, "info", "packs")):  # what dumb transports read
        repo.git(["update-server-info"], check=False)
    try:
        stray = any(n.endswith(".idx") and n not in names for n in os.listdir(pack_dir))
    except FileNotFoundError:
        stray = False
    return len(deleted), stray


def _sweep_orphan_packs(pack_dir: str) -> None:
    """Remove what a pack rewrite killed between its unlinks left: a pack whose index is gone (git no longer
    reads it, but its bytes may hold the secret). Only one older than STALE_LOCK: a git writing a pack
    renames the pack, then its index, a moment apart."""
    import time

    from ..base.repo import STALE_LOCK

    try:
        names = os.listdir(pack_dir)
    except FileNotFoundError:
        return
    indexes = {name for name in names if name.endswith(".idx")}
    for name in names:
        base, dot, suffix = name.rpartition(".")
        if not (name.startswith("pack-") and dot and suffix in ("pack", "rev", "bitmap", "mtimes")):
            continue
        if base + ".idx" in indexes:
            continue
        try:
            if time.time() - os.stat(os.path.join(pack_dir, name)).st_mtime > STALE_LOCK:
                os.unlink(os.path.join(pack_dir, name))
        except FileNotFoundError:
            pass


def _holders(repo: Repo, oids: set[str]) -> dict[str, list[str]]:
    """Where each of OIDS is still reachable from: a ref (each object under the first ref found to reach it,
    the person's own first), an index, else 'a reflog'. Returns where → objects."""
    left = set(oids)
    found: dict[str, list[str]] = {}
    refs = repo.git(["for-each-ref", "--format=%(refname)"]).decode().split()
    refs.sort(key=lambda r: (is_ours(r), r))  # the person's own refs first
    done: list[str] = []
    for ref in [*refs, "HEAD"]:
        if not left:
            break
        out = repo.git(["rev-list", "--objects", "--no-object-names", "--stdin"],
                       input="".join(f"{line}\n" for line in [ref, *(f"^{d}" for d in done)]).encode(), check=False)
        named = left.intersection(out.decode().split())
        if named:
            found[ref] = sorted(named)
            left -= named
        done.append(ref)
    for gitdir, _private in _worktree_dirs(repo):
        index = os.path.join(gitdir, "index")
        named = left.intersection(blob for blob, _path in _index_entries(repo, index))
        if named:
            label = "the index" if gitdir == repo.commondir else f"the index of work tree {os.path.basename(gitdir)}"
            found[label] = sorted(named)
            left -= named
    if left:
        found["a reflog"] = sorted(left)
    return found


# saying it --------------------------------------------------------------------------------------------


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def report(result: Result, paths: list[str], texts: list[str]) -> list[str]:
    """The lines `git rewind purge` prints."""
    what = ", ".join([*paths, *(["the text"] if len(texts) == 1 else [f"{len(texts)} texts"] if texts else [])])
    lines = []
    if not result.changed:
        if result.pruned:
            lines.append(f"no checkpoint holds {what}; deleted {_count(result.pruned, 'old object')} that "
                         "git-rewind had left unreachable (an earlier gc's)")
        else:
            lines.append(f"nothing to purge: no checkpoint holds {what}; nothing changed")
    else:
        parts = []
        removed = sum(len(c.removed) for c in result.changed)
        if removed:
            parts.append(f"{_count(removed, 'path')} removed")
        blobs = sum(c.blobs for c in result.changed)
        if blobs:
            parts.append(f"{_count(blobs, 'file')} with the text replaced by {MARKER}")
        renamed = sum(c.renamed for c in result.changed)
        if renamed:
            parts.append(f"{_count(renamed, 'file name')} with the text replaced by {MARKER}")
        for attr, noun in (("message", "message"), ("note", "note"), ("attachment", "transcript backup")):
            n = sum(1 for c in result.changed if getattr(c, attr))
            if n:
                parts.append(_count(n, noun))
        verb = "would purge" if result.dry_run else "purged"
        lines.append(f"{verb} {what} from {_count(len(result.changed), 'checkpoint')} "
                     f"({checkpoints.seq_runs(result.seqs)}): {', '.join(parts)}")
        if result.dry_run:
            lines.append("then the old objects would be deleted from .git/objects (nothing changed: --dry-run)")
        else:
            packs = f", {_count(result.packs_rewritten, 'pack')} rewritten" if result.packs_rewritten else ""
            lines.append(f"rewrote {_count(result.rewritten, 'commit')}; deleted {_count(result.pruned, 'old object')}"
                         f" from .git/objects{packs}")
    for where, oids in result.held.items():
        count = _count(len(oids), "old object")
        if where.startswith(REF_PREFIX):
            lines.append(f"{count} still in checkpoints under another path ({where}): the same content")
        elif where.startswith(REMOTE_PREFIX):
            lines.append(f"{count} still reachable from {where}: another machine's copy, fetched; purge is local")
        elif where.startswith("refs/") or where == "HEAD":
            lines.append(f"{count} still reachable from {where}: committed history is not rewritten by purge")
        elif where.startswith("the index"):
            lines.append(f"{count} still in {where} (added with git add): not git-rewind's to change")
        else:
            lines.append(f"{count} still reachable from {where}: not git-rewind's to change")
    for pack in result.kept_packs:
        lines.append(f"left in {pack}: a .keep file asks that it is never rewritten")
    for path in result.on_disk:
        lines.append(f"still on disk: {path}: delete it or ignore it, or the next checkpoint captures it again")
    for path in result.text_on_disk:
        lines.append(f"the text is still in {path}: the next checkpoint captures it again unless you remove it")
    for path in result.names_on_disk:
        lines.append(f"the text is still in the name of {path}: the next checkpoint captures it again unless you "
                     "rename or remove it")
    for transcript in result.transcripts:
        lines.append(f"still in the agent's transcript {transcript}: git rewind does not change it")
    if result.state_files:
        lines.append(f"took the text out of {_count(result.state_files, 'state file')} under .git/rewind")
    if result.authorship:
        lines.append(f"took the text out of {_count(result.authorship, 'commit authorship note')} "
                     "(refs/notes/rewind-authorship)")
    if result.remote_copies:
        lines.append(f"not purged: {_count(len(result.remote_copies), 'copy')} fetched from other machines "
                     f"(refs/notes/rewind-remote/): purge is local")
    if result.copy_discarded:
        lines.append("this machine's shareable copy was dropped: `git rewind push --prune` replaces it on the remote")
    return lines
