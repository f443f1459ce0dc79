"""Taking a checkpoint: snapshot → commit on refs/rewind/<session> → JSON note, under the locks.

Commit and note are written by one Writer (one `git fast-import`, or in this process when a
long-lived process switched that on), and both refs move afterwards in one transaction, once every object
is written: a kill at any point leaves no half checkpoint.
"""

from __future__ import annotations

import os
import time

from ..base import layout, objects
from ..base.clock import utc_now
from ..base.errors import RewindError
from ..base.fsutil import read_bytes, write_atomic
from ..base.note import Note, Oid
from ..base.repo import NOTES_REF, REF_PREFIX, SCRATCH_ATTACHMENTS, Repo
from . import checkpoints, snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..base.note import Json, Position, RewindRecord
    from ..base.writer import Writer

MAX_NOTE_PATHS = 1000


class Request:
    """What a caller wants checkpointed, and the metadata to record.

    `paths` are work-tree-relative (empty: the whole tree); `excludes_file` adds ignore rules
    (restore passes the target's); `rewind` marks a safety checkpoint; `count_changes` ends the
    message with the files and lines changed since the session's last checkpoint (before /clear).
    Plain slots class: dataclasses cost ~7 ms of import per hook.
    """

    __slots__ = ("session", "message", "agent", "trigger", "tool", "paths", "tags", "prompt",
                 "summary", "conversation", "rewind", "count_changes", "allow_empty", "max_file_size",
                 "excludes_file", "auto_pack", "max_store_size", "attachments", "attribute", "kind", "extra",
                 "describe")

    def __init__(
        self,
        session: str = "manual",
        message: str | None = None,
        agent: str | None = None,
        trigger: str | None = None,
        tool: str | None = None,
        paths: list[str] | None = None,
        tags: list[str] | None = None,
        prompt: str | None = None,
        summary: Json = None,
        conversation: Position | None = None,
        rewind: RewindRecord | None = None,
        count_changes: bool = False,
        allow_empty: bool = False,
        max_file_size: int = 50 * 1024 * 1024,
        excludes_file: str | None = None,
        auto_pack: int = 2000,
        max_store_size: int = 0,
        attachments: Attachments | None = None,
        attribute: bool | None = None,
        kind: str | None = None,
        extra: dict[str, Json] | None = None,
        describe: Callable[[list[str]], str] | None = None,
    ) -> None:
        self.session = session
        self.message = message
        self.agent = agent
        self.trigger = trigger
        self.tool = tool
        self.paths = paths or []
        self.tags = tags or []
        self.prompt = prompt
        self.summary = summary
        self.conversation = conversation
        self.rewind = rewind
        self.count_changes = count_changes
        self.allow_empty = allow_empty
        self.max_file_size = max_file_size
        self.excludes_file = excludes_file
        self.auto_pack = auto_pack
        self.max_store_size = max_store_size  # checked in the background now and then (storage.py); 0: never
        self.attachments = attachments
        # Record origins: False under the minimal tier (no prompt or turn end is checkpointed, so agent and
        # outside changes share checkpoints); None: as the repository's config says.
        self.attribute = attribute
        self.kind = kind  # the hook event's kind (event.PROMPT…); None when no hook takes it
        self.extra = extra  # keys the note keeps beside its own (Note.extra): `watch`'s `commits`
        # The message from the paths the checkpoint changed, when MESSAGE is None (`watch`: what it names is
        # what the checkpoint holds, never a file that came and went between two looks)
        self.describe = describe


class Attachments:
    """Files kept beside a checkpoint (a transcript before it was cut), as its second parent.

    They live in a commit of their own whose tree holds just these files, merged into the
    checkpoint: reachable for as long as the checkpoint is (git gc keeps them), and readable
    with `git show <checkpoint>^2:<name>`. The working-tree chain stays the first parents.
    """

    __slots__ = ("message", "files")

    def __init__(self, message: str, files: dict[str, bytes]) -> None:
        self.message = message
        self.files = files


class Tip:
    """The newest checkpoint of a session taken in this work tree, cached so the hot path reads no object."""

    __slots__ = ("commit", "tree", "seq")

    def __init__(self, commit: Oid, tree: Oid, seq: int) -> None:
        self.commit = commit
        self.tree = tree
        self.seq = seq


class Result(Tip):
    """A checkpoint taken (`created`, with its note), or the tip the tree still equals (note None).

    `same_as`: a checkpoint taken although nothing changed (allow_empty) holds the same tree as this
    earlier one, so the caller can say so.
    """

    __slots__ = ("created", "note", "same_as")

    def __init__(self, tip: Tip, note: Note | None = None, same_as: int | None = None) -> None:
        super().__init__(tip.commit, tip.tree, tip.seq)
        self.created = note is not None
        self.note = note
        self.same_as = same_as


def _tip_file(gitdir_rewind: str, session: str) -> str:
    return os.path.join(gitdir_rewind, layout.TIPS, session)


def session_tip(repo: Repo, session: str) -> Tip | None:
    """The newest checkpoint of SESSION taken in this work tree: what an unchanged tree is compared
    with and what `--path` carries the rest of the tree from.

    A session's ref is shared by every work tree (one chain, one `git log`), so its tip may be
    another work tree's checkpoint; each work tree caches its own newest under
    .git[/worktrees/X]/rewind/tips/. The cache holds while the ref is where it saw it, or while its
    commit is still on the ref's chain (gc or a hand-moved ref may have taken it off).
    """
    commit = repo.read_ref(REF_PREFIX + session)
    if commit is None:
        return None
    try:
        seen, own, tree, seq = read_bytes(_tip_file(repo.rewind_dir, session)).decode().split()
        if seen == commit:
            return Tip(Oid(own), Oid(tree), int(seq))
        if own != commit and _on_chain(repo, own, commit):  # another work tree moved the ref on
            tip = Tip(Oid(own), Oid(tree), int(seq))
            _write_tip(repo, session, tip, commit)  # seen there now: the next call asks git nothing
            return tip
    except (FileNotFoundError, ValueError):
        pass
    found = checkpoints.load_one(repo, Oid(commit))
    if found is None or found.note.worktree != repo.worktree:
        found = _newest_own(repo, session, commit)
        if found is None:
            return None
    tip = Tip(found.commit, Oid(repo.tree_of(found.commit)), found.seq)
    _write_tip(repo, session, tip, commit)
    return tip


def _on_chain(repo: Repo, commit: str, ref_commit: str) -> bool:
    """COMMIT is REF_COMMIT or one of its ancestors."""
    from ..base.gitcmd import GitError

    try:
        repo.git(["merge-base", "--is-ancestor", commit, ref_commit])
    except GitError:  # exit 1: not an ancestor; 128: not even an object any more
        return False
    return True


def _newest_own(repo: Repo, session: str, ref_commit: str) -> checkpoints.Checkpoint | None:
    """The newest checkpoint on the session's chain that this work tree took (a rare walk: the ref's
    tip is another work tree's)."""
    mine = {str(c.commit): c for c in checkpoints.load_all(repo) if c.session == session
            and c.note.worktree == repo.worktree}
    if not mine:
        return None
    for line in repo.git(["rev-list", "--first-parent", ref_commit]).decode().split():
        if line in mine:
            return mine[line]
    return None


def _write_tip(repo: Repo, session: str, tip: Tip, ref: str) -> None:
    write_atomic(_tip_file(repo.rewind_dir, session), f"{ref} {tip.commit} {tip.tree} {tip.seq}\n", makedirs=True)


def _forget_own_tip(repo: Repo, session: str) -> None:
    try:
        os.unlink(_tip_file(repo.rewind_dir, session))
    except (FileNotFoundError, NotADirectoryError):
        pass


def forget_tip(repo: Repo, session: str) -> None:
    """Drop every work tree's cached tip of SESSION (after gc rewrites or deletes it), and a work tree's
    newest checkpoint when it was one of SESSION's."""
    dirs = [os.path.join(repo.commondir, "rewind")]
    dirs += [os.path.join(repo.commondir, "worktrees", name, "rewind") for name in repo.linked_worktrees()]
    for base in dirs:
        for path in (_tip_file(base, session), os.path.join(base, LAST)):
            if path.endswith(LAST) and _read_last(path, None)[0] != session:
                continue
            try:
                os.unlink(path)
            except (FileNotFoundError, NotADirectoryError):
                pass


LAST = layout.LAST  # the work tree's newest checkpoint, any session: what origins are computed against


def _read_last(path: str, repo: Repo | None) -> tuple[str | None, Tip | None]:
    try:
        session, commit, tree, seq = read_bytes(path).decode().split()
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return None, None
    if repo is not None and repo.read_ref(REF_PREFIX + session) is None:  # its session was dropped
        return session, None
    return session, Tip(Oid(commit), Oid(tree), int(seq))


RESTORED = layout.RESTORED  # the safety checkpoint of the newest restore (its files changed after it)


def mark_restored(repo: Repo, safety_seq: int) -> None:
    """A restore is about to write files after its safety checkpoint SAFETY_SEQ: from now on that checkpoint
    (the work tree's newest) no longer holds the work tree, until the next whole scan."""
    write_atomic(os.path.join(repo.rewind_dir, RESTORED), f"{safety_seq}\n")


def restored_since(repo: Repo, seq: int) -> bool:
    """A restore wrote files after checkpoint SEQ, and no checkpoint was taken since."""
    try:
        return int(read_bytes(os.path.join(repo.rewind_dir, RESTORED)).strip() or 0) >= seq
    except (FileNotFoundError, ValueError):
        return False


def worktree_last(repo: Repo) -> Tip | None:
    """The newest checkpoint taken in this work tree, of any session (None: none known)."""
    return _read_last(os.path.join(repo.rewind_dir, LAST), repo)[1]


def _default_message(req: Request, paths: list[str]) -> str:
    what = " ".join(p for p in (req.trigger, req.tool) if p) or "snapshot"
    if req.tool and req.trigger and req.trigger.startswith("Pre"):
        what = f"before {req.tool}"
    elif req.tool and req.trigger and req.trigger.startswith("Post"):
        what = f"after {req.tool}"
    if paths:
        shown = " ".join(paths[:3]) + (f" (+{len(paths) - 3})" if len(paths) > 3 else "")
        what = f"{what} {shown}"
    return what


def save(repo: Repo, req: Request) -> Result:
    """Take a checkpoint (or report the tree unchanged). Takes both locks itself."""
    checkpoints.check_session(req.session)
    with repo.worktree_lock():
        return save_locked(repo, req)


def save_locked(repo: Repo, req: Request, scan: snapshot.Scan | None = None) -> Result:
    """`save` for a caller that already holds the work-tree lock and may have scanned already."""
    if req.attribute is None:
        from ..base import config

        req.attribute = config.load_or_defaults(repo.root)[0]["tier"].value != "minimal"
    tip = session_tip(repo, req.session)
    if scan is None and req.paths and not req.count_changes and tip is not None \
            and _fast_path_fits(repo, req.paths):
        done = _save_paths(repo, req, tip)
        if done is not None:
            return done
    base = tip.tree if tip is not None else head_tree(repo)
    if scan is None:
        # The daemon's tree may come back inside a fast-import still running: the commit goes on in it.
        scan = snapshot.scan(repo, req.max_file_size, req.excludes_file, base_tree=base, keep_open=True)
        try:
            return _save_scanned(repo, req, tip, base, scan)
        finally:
            scan.finish_stream()  # an early return (nothing new): the tree's objects are kept all the same
    if scan.base != base:
        scan.changes = snapshot.changed_paths(repo, base, scan.tree)
        scan.base = base
        snapshot.leave_out_large(repo, scan, req.max_file_size)
    return _save_scanned(repo, req, tip, base, scan)


def _save_scanned(repo: Repo, req: Request, tip: Tip | None, base: Oid, scan: snapshot.Scan) -> Result:
    """The checkpoint of a scanned tree, unless nothing changed. A scan's open stream (snapshot.scan's
    KEEP_OPEN) writes the commit too; it is finished first wherever another git process reads the tree."""
    same_as = tip.seq if tip is not None and scan.tree == tip.tree else None
    if same_as is not None and not req.allow_empty:
        assert tip is not None
        return Result(tip)
    # The work tree's newest checkpoint, any session's: what the note's paths and origins count from. One that
    # holds the same tree as another session's is still taken: each session keeps its own anchors (where its
    # conversation stood), whoever else works in the same tree.
    last = worktree_last(repo)
    changes = None
    if req.count_changes:  # counted on exactly the tree the checkpoint records
        scan.finish_stream()
        counts = snapshot.numstat(repo, base, scan.tree)
        since = f"#{tip.seq}" if tip is not None else ("HEAD" if repo.head()[0] else "an empty tree")
        req.message = f"{req.message}: {counts.text()} (since {since})"
        changes = {**counts.to_dict(), "since": tip.seq if tip is not None else None}
    # What changed since this work tree's newest checkpoint, whichever session took it (else since the
    # session's own, or HEAD: what the scan compared with).
    if last is None or last.tree == scan.base:
        changed = [p for _status, p in scan.changes]
    else:
        scan.finish_stream()
        changed = [p for _status, p in snapshot.changed_paths(repo, last.tree, scan.tree)]
    stream, scan.stream = scan.stream, None
    with repo.store_lock():
        result = _commit(repo, req, tip, changed, scan.skipped, tree=scan.tree, fi=stream, changes=changes,
                         since=last.seq if last is not None else None)
    result.same_as = same_as
    return result


def _fast_path_fits(repo: Repo, paths: list[str]) -> bool:
    """Named files can be read alone unless a path is a directory (git would add what is below it)."""
    return not any(os.path.isdir(os.path.join(repo.root, p)) and not os.path.islink(os.path.join(repo.root, p))
                   for p in paths)


def head_tree(repo: Repo) -> Oid:
    """HEAD's tree (the empty tree before the first commit): what a session's first checkpoint is compared with."""
    head, _branch = repo.head()
    if head is None:
        return Oid(snapshot.empty_tree(repo))
    return Oid(repo.tree_of(head))


def _save_paths(repo: Repo, req: Request, tip: Tip) -> Result | None:
    """The fast path: read only the named files; carry the rest of the tree from this work tree's newest
    checkpoint (the session's tip, or another session's checkpoint taken since). None when a restore wrote
    files since that checkpoint: it no longer holds the rest of the tree, and only a whole scan can say."""
    last = worktree_last(repo)
    base = last if last is not None and last.seq > tip.seq else tip
    if restored_since(repo, base.seq):
        return None
    wanted = [p for p in dict.fromkeys(req.paths) if not snapshot.inside_nested_repo(repo, p)]
    states = snapshot.hash_paths(repo, wanted, req.max_file_size)
    skipped = [s.skipped for s in states if s.skipped]
    with repo.store_lock(), objects.writer(repo, len(states)) as fi:
        current = dict(zip([s.path for s in states], fi.ls(base.tree, [os.fsencode(s.path) for s in states]),
                           strict=True))
        # An ignored path is never captured, even one an earlier checkpoint holds (the rule
        # may be new); files the user tracks are never ignored, as with `git add -A`.
        ignored = snapshot.ignored(repo, [s.path for s in states if s.present])
        edits: list[snapshot.PathState] = []
        for s in states:
            before = current[s.path]
            if not s.present or s.path in ignored:
                if before is not None and before[0] != snapshot.MODE_TREE:
                    edits.append(snapshot.PathState(s.path))  # no content: delete it
            elif before != (s.mode, s.oid):
                edits.append(s)
        if not edits and not req.allow_empty and base.tree == tip.tree:
            fi.abort()
            return Result(tip)  # another session's newer checkpoint of a different tree: taken, as the scan's
        result = _commit(repo, req, tip, [e.path for e in edits], skipped, fi=fi, edits=edits, start=base.tree,
                         since=base.seq if last is not None and base.seq == last.seq else None, named=wanted)
    result.same_as = None if edits else base.seq
    return result


def _commit(
    repo: Repo,
    req: Request,
    tip: Tip | None,
    paths: list[str],
    skipped: list[dict[str, Json]],
    tree: str | None = None,
    fi: Writer | None = None,
    edits: list[snapshot.PathState] | None = None,
    changes: dict[str, Json] | None = None,
    start: str | None = None,
    since: int | None = None,
    named: list[str] | None = None,
) -> Result:
    """Write commit + note and move both refs. Hold the store lock.

    The commit's tree is TREE, or START (default: the tip's tree) with EDITS applied (a PathState
    without content deletes its path). PATHS: the paths changed since the work tree's newest checkpoint,
    the note's `paths`, whose origins it records too (unless req.attribute is off); SINCE: that
    checkpoint's seq. NAMED: the files the request named (default: req.paths).
    """
    # The chain goes on from the ref's tip, which may be another work tree's checkpoint; the tree
    # is this work tree's own (TREE, or its own tip's tree with EDITS applied).
    parent = repo.read_ref(REF_PREFIX + req.session)
    if tip is not None and parent != tip.commit:
        tip = session_tip(repo, req.session)  # moved since we looked (gc, or another work tree)
    seq = checkpoints.next_seq(repo)
    head, branch = repo.head()
    named = named if named is not None else list(dict.fromkeys(req.paths))
    described = req.describe(paths) if req.describe is not None else None
    message = req.message or described or _default_message(req, named or paths)
    origins = turn = None
    if req.attribute:
        from . import attribution

        origins, turn = attribution.origins(repo, req.session, req.kind, paths, time.time())
    note = Note(
        seq, req.session, utc_now(), agent=req.agent, trigger=req.trigger, tool=req.tool,
        paths=paths[:MAX_NOTE_PATHS], message=message, prompt=req.prompt, summary=req.summary,
        tags=list(req.tags), head=Oid(head) if head else None, branch=branch, worktree=repo.worktree,
        conversation=req.conversation,
        skipped=skipped, paths_omitted=len(paths) - MAX_NOTE_PATHS if len(paths) > MAX_NOTE_PATHS else None,
        changes=changes, rewind=req.rewind, turn=turn, origins_since=since if origins is not None else None,
        named=named[:MAX_NOTE_PATHS] or None,
        origins=dict(list(origins.items())[:MAX_NOTE_PATHS]) if origins is not None else None,
        origins_omitted=len(origins) - MAX_NOTE_PATHS if origins is not None and len(origins) > MAX_NOTE_PATHS
        else None, extra=dict(req.extra) if req.extra else None,
    )
    now = int(time.time())
    # The tree is TREE, or this work tree's own (START, else its tip's tree: not the parent's, which may be
    # another work tree's) with EDITS applied.
    start = tree or start or (tip.tree if tip is not None else None)
    assert start is not None, "a checkpoint needs the tree it is made from"
    with fi or objects.writer(repo, len(edits or ())) as stream:
        parents = [parent] if parent is not None else []
        if req.attachments is not None:  # a merge; without a parent the chain starts at the attachments' root
            parents.append(stream.attachments(SCRATCH_ATTACHMENTS, req.attachments.message.encode(
                "utf-8", "surrogateescape") + b"\n", req.attachments.files, now))
        commit, new_tree = stream.commit(REF_PREFIX + req.session, f"#{seq} {message}\n".encode(
            "utf-8", "surrogateescape"), now, parents, start, edits or [])
        notes_before = repo.read_ref(NOTES_REF)
        notes_after = stream.note(NOTES_REF, notes_before, commit, note.to_bytes(), f"checkpoint #{seq}\n".encode(),
                                  now)
    # Both refs move in one transaction, once every object is written; git renames one ref's lock after the
    # other, so the note goes first: a kill between them shows a note beside no chain until the next holder of
    # the store lock moves the chain too (move_refs' journal), never a checkpoint without its note. The tip
    # this work tree cached goes before: after such a kill its chain is not where the cache would say.
    _forget_own_tip(repo, req.session)
    repo.move_refs({NOTES_REF: notes_after, REF_PREFIX + req.session: commit},
                   {REF_PREFIX + req.session: parent, NOTES_REF: notes_before})
    tip = Tip(commit, new_tree, seq)
    _write_tip(repo, req.session, tip, commit)
    write_atomic(os.path.join(repo.rewind_dir, LAST), f"{req.session} {commit} {new_tree} {seq}\n", makedirs=True)
    if req.auto_pack:
        maybe_pack(repo, req.auto_pack)
    if req.max_store_size:
        from . import storage

        storage.maybe_enforce(repo, req.max_store_size)
    return Result(tip, note)


def update_note(repo: Repo, commit: Oid, edit: Callable[[Note], object], what: str = "note updated") -> Note:
    """Change one checkpoint's note: EDIT changes the note as it is under the store lock (read afresh
    there, so two writers, a tag and an undo recording a message uuid say, never lose each other's
    change); a note EDIT leaves equal is not written again. Returns the note as it is now."""
    with repo.store_lock():
        current = checkpoints.load_one(repo, commit)
        if current is None:
            raise RewindError(f"{commit[:12]} is not a checkpoint (it has no git-rewind note)")
        note = current.note
        before = note.to_bytes()
        edit(note)
        if note.to_bytes() != before:
            notes_tip = repo.read_ref(NOTES_REF)
            with objects.writer(repo) as stream:
                made = stream.note(NOTES_REF, notes_tip, commit, note.to_bytes(),
                                   f"checkpoint #{note.seq}: {what}\n".encode(), int(time.time()))
            repo.move_refs({NOTES_REF: made}, {NOTES_REF: notes_tip})
        return note


def loose_objects_estimate(repo: Repo) -> int:
    """Loose objects, estimated as git does: one of 256 fan-out directories, times 256."""
    try:
        return len(os.listdir(os.path.join(repo.commondir, "objects", "17"))) * 256
    except FileNotFoundError:
        return 0


def maybe_pack(repo: Repo, threshold: int) -> bool:
    """Pack loose objects in a detached `git repack` once they pass THRESHOLD.

    Every checkpoint leaves ~10 loose objects; left alone they trip the user's `git gc --auto`
    after a few hundred checkpoints. The repack runs in the background so no hook waits for it,
    at most once a minute.
    """
    if loose_objects_estimate(repo) < threshold:
        return False
    stamp = os.path.join(repo.store_dir, layout.LAST_PACK)
    try:
        if time.time() - os.stat(stamp).st_mtime < 60:
            return False
    except FileNotFoundError:
        pass
    write_atomic(stamp, f"{int(time.time())}\n")
    from ..base.gitcmd import detached

    detached(["git", "repack", "-d", "-q"], repo.root)
    return True
