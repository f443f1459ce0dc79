"""Taking a checkpoint: snapshot → commit on refs/rewind/<session> → JSON note, under the locks.

Commit, note and both refs are written by one `git fast-import`, which moves the refs only
when everything else is written: a kill at any point leaves no half checkpoint.
"""

from __future__ import annotations

import os
import time

from . import checkpoints, snapshot
from .checkpoints import dump_note, new_note
from .errors import RewindError
from .gitcmd import FastImport, quote_path
from .repo import NOTES_REF, REF_PREFIX, Repo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

COMMITTER = b"git-rewind <git-rewind@localhost>"
MAX_NOTE_PATHS = 1000


class Request:
    """What a caller wants checkpointed, and the metadata to record.

    `paths` are work-tree-relative (empty: the whole tree); `excludes_file` adds ignore rules
    (restore passes the target's). Plain slots class: dataclasses cost ~7 ms of import per hook.
    """

    __slots__ = ("session", "message", "agent", "trigger", "tool", "paths", "tags", "prompt",
                 "summary", "conversation", "extra", "allow_empty", "max_file_size", "excludes_file",
                 "auto_pack", "attachments")

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
        summary: Any = None,
        conversation: dict[str, Any] | None = None,
        extra: dict[str, Any] | None = None,
        allow_empty: bool = False,
        max_file_size: int = 50 * 1024 * 1024,
        excludes_file: str | None = None,
        auto_pack: int = 2000,
        attachments: Attachments | None = None,
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
        self.extra = extra or {}
        self.allow_empty = allow_empty
        self.max_file_size = max_file_size
        self.excludes_file = excludes_file
        self.auto_pack = auto_pack
        self.attachments = attachments


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


class Result:
    """A checkpoint taken (`created`) or the one the tree still equals."""

    __slots__ = ("created", "seq", "commit", "tree", "note")

    def __init__(self, created: bool, seq: int, commit: str, tree: str, note: dict[str, Any]) -> None:
        self.created = created
        self.seq = seq
        self.commit = commit
        self.tree = tree
        self.note = note


class Tip:
    """The newest checkpoint of a session, cached so the hot path reads no object."""

    __slots__ = ("commit", "tree", "seq")

    def __init__(self, commit: str, tree: str, seq: int) -> None:
        self.commit = commit
        self.tree = tree
        self.seq = seq


def _tip_file(repo: Repo, session: str) -> str:
    return os.path.join(repo.store_dir, "sessions", session)


def session_tip(repo: Repo, session: str) -> Tip | None:
    """The session's newest checkpoint, from the cache when it still matches the ref."""
    commit = repo.read_ref(REF_PREFIX + session)
    if commit is None:
        return None
    try:
        with open(_tip_file(repo, session)) as fh:
            cached_commit, tree, seq = fh.read().split()
        if cached_commit == commit:
            return Tip(commit, tree, int(seq))
    except (FileNotFoundError, ValueError):
        pass
    tree = repo.tree_of(commit)
    note = checkpoints.read_note(repo, commit) or {}
    tip = Tip(commit, tree, int(note.get("seq") or 0))
    _write_tip(repo, session, tip)
    return tip


def _write_tip(repo: Repo, session: str, tip: Tip) -> None:
    path = _tip_file(repo, session)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as fh:
        fh.write(f"{tip.commit} {tip.tree} {tip.seq}\n")
    os.replace(tmp, path)


def forget_tip(repo: Repo, session: str) -> None:
    """Drop the cached tip (after gc rewrites or deletes a session)."""
    try:
        os.unlink(_tip_file(repo, session))
    except FileNotFoundError:
        pass


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
    tip = session_tip(repo, req.session)
    if scan is None and req.paths and tip is not None and _fast_path_fits(repo, req.paths):
        return _save_paths(repo, req, tip)
    base = tip.tree if tip is not None else _head_tree(repo)
    if scan is None:
        scan = snapshot.scan(repo, req.max_file_size, req.excludes_file, base_tree=base)
    elif scan.base != base:
        scan.changes = snapshot.changed_paths(repo, base, scan.tree)
        scan.base = base
    if tip is not None and scan.tree == tip.tree and not req.allow_empty:
        return Result(False, tip.seq, tip.commit, tip.tree, {})
    added = [p for status, p in scan.changes if status in ("A", "M", "T")]
    snapshot.leave_out_large(repo, scan, added, req.max_file_size)
    if tip is not None and scan.tree == tip.tree and not req.allow_empty:
        return Result(False, tip.seq, tip.commit, tip.tree, {})
    paths = req.paths or [p for _status, p in scan.changes]
    with repo.store_lock():
        return _commit(repo, req, tip, paths, scan.skipped, tree=scan.tree)


def _fast_path_fits(repo: Repo, paths: list[str]) -> bool:
    """Named files can be hashed here unless git would filter them or a path is a directory."""
    if snapshot.has_attributes(repo):
        return False
    return not any(os.path.isdir(os.path.join(repo.root, p)) and not os.path.islink(os.path.join(repo.root, p))
                   for p in paths)


def _head_tree(repo: Repo) -> str:
    head, _branch = repo.head()
    if head is None:
        return snapshot.EMPTY_TREE
    return repo.tree_of(head)


def _save_paths(repo: Repo, req: Request, tip: Tip) -> Result:
    """The fast path: read only the named files; carry the rest of the tree from the tip."""
    wanted = [p for p in dict.fromkeys(req.paths) if not snapshot.inside_nested_repo(repo, p)]
    states = snapshot.read_paths(repo, wanted, req.max_file_size)
    skipped = [s.skipped for s in states if s.skipped]
    with repo.store_lock():
        fi = FastImport(repo.root)
        try:
            current = {s.path: fi.ls(tip.commit, os.fsencode(s.path)) for s in states}
            # An ignored path is never captured, even one an earlier checkpoint holds (the rule
            # may be new); files the user tracks are never ignored, as with `git add -A`.
            ignored = snapshot.ignored(repo, [s.path for s in states if s.content is not None])
            edits: list[snapshot.PathState] = []
            for s in states:
                before = current[s.path]
                if s.content is None or s.path in ignored:
                    if before is not None and before[0] != snapshot.MODE_TREE:
                        edits.append(snapshot.PathState(s.path))  # no content: delete it
                elif before != (s.mode, s.oid):
                    edits.append(s)
            if not edits and not req.allow_empty:
                fi.abort()
                return Result(False, tip.seq, tip.commit, tip.tree, {})
            return _commit(repo, req, tip, wanted, skipped, fi=fi, edits=edits)
        except BaseException:
            fi.abort()
            raise


def _commit(
    repo: Repo,
    req: Request,
    tip: Tip | None,
    paths: list[str],
    skipped: list[dict[str, Any]],
    tree: str | None = None,
    fi: FastImport | None = None,
    edits: list[snapshot.PathState] | None = None,
) -> Result:
    """Write commit + note and move both refs. Hold the store lock.

    The commit's tree is TREE, or the tip's tree with EDITS applied (a PathState without
    content deletes its path).
    """
    if repo.read_ref(REF_PREFIX + req.session) != (tip.commit if tip else None):
        # Another work tree (or gc) moved the session since we looked: chain onto its tip.
        tip = session_tip(repo, req.session)
    seq = checkpoints.next_seq(repo)
    head, branch = repo.head()
    message = req.message or _default_message(req, paths)
    note_paths = paths[:MAX_NOTE_PATHS]
    note = new_note(
        seq=seq, session=req.session, agent=req.agent, trigger=req.trigger, tool=req.tool,
        paths=note_paths, message=message, prompt=req.prompt, summary=req.summary,
        tags=list(req.tags), head=head, branch=branch, conversation=req.conversation,
        skipped=skipped,
    )
    if len(paths) > MAX_NOTE_PATHS:
        note["paths_omitted"] = len(paths) - MAX_NOTE_PATHS
    note.update(req.extra)
    now = int(time.time())
    stamp = b"committer " + COMMITTER + b" %d +0000\n" % now
    fi = fi or FastImport(repo.root)
    try:
        if req.attachments is not None:
            _write_attachments(fi, req.attachments, stamp)
        fi.write(b"commit " + (REF_PREFIX + req.session).encode() + b"\nmark :1\n" + stamp)
        fi.data(f"#{seq} {message}\n".encode("utf-8", "surrogateescape"))
        if tip is not None:
            fi.write(b"from " + tip.commit.encode() + b"\n")
        if req.attachments is not None:
            if tip is None:  # a merge needs a first parent: start the chain at the attachments' root
                fi.write(b"from :2\n")
            else:
                fi.write(b"merge :2\n")
        if tree is not None:
            fi.write(b'M 040000 ' + tree.encode() + b' ""\n')
        for edit in edits or []:
            path = quote_path(os.fsencode(edit.path))
            if edit.content is None:
                fi.write(b"D " + path + b"\n")
            else:
                fi.write(b"M %o inline " % edit.mode + path + b"\n")
                fi.data(edit.content)
        fi.write(b"\n")
        notes_tip = repo.read_ref(NOTES_REF)
        fi.write(b"commit " + NOTES_REF.encode() + b"\n" + stamp)
        fi.data(f"checkpoint #{seq}\n".encode())
        if notes_tip:
            fi.write(b"from " + notes_tip.encode() + b"\n")
        fi.write(b"N inline :1\n")
        fi.data(dump_note(note))
        fi.write(b"\n")
        commit = fi.get_mark(1)
        root = (0, tree) if tree is not None else fi.ls(commit, b"")
        if root is None:
            raise RewindError("fast-import did not report the checkpoint tree")
        new_tree = root[1]
        fi.finish()
    except BaseException:
        fi.abort()
        raise
    _write_tip(repo, req.session, Tip(commit, new_tree, seq))
    if req.auto_pack:
        maybe_pack(repo, req.auto_pack)
    return Result(True, seq, commit, new_tree, note)


def _write_attachments(fi: FastImport, attachments: Attachments, stamp: bytes) -> None:
    """The attachments' own root commit, mark :2 (no ref: the checkpoint's merge keeps it)."""
    fi.write(b"commit refs/rewind-attachments/pending\nmark :2\n" + stamp)
    fi.data(attachments.message.encode("utf-8", "surrogateescape") + b"\n")
    for name, content in attachments.files.items():
        fi.write(b"M 100644 inline " + quote_path(os.fsencode(name)) + b"\n")
        fi.data(content)
    fi.write(b"\nreset refs/rewind-attachments/pending\nfrom 0000000000000000000000000000000000000000\n\n")


def update_note(repo: Repo, commit: str, note: dict[str, Any]) -> None:
    """Replace one checkpoint's note (e.g. to record a message uuid resolved later)."""
    with repo.store_lock():
        notes_tip = repo.read_ref(NOTES_REF)
        now = int(time.time())
        fi = FastImport(repo.root)
        try:
            fi.write(b"commit " + NOTES_REF.encode() + b"\n")
            fi.write(b"committer " + COMMITTER + b" %d +0000\n" % now)
            fi.data(f"checkpoint #{note.get('seq')}: note updated\n".encode())
            if notes_tip:
                fi.write(b"from " + notes_tip.encode() + b"\n")
            fi.write(b"N inline " + commit.encode() + b"\n")
            fi.data(dump_note(note))
            fi.write(b"\n")
            fi.finish()
        except BaseException:
            fi.abort()
            raise


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
    stamp = os.path.join(repo.store_dir, "last-pack")
    try:
        if time.time() - os.stat(stamp).st_mtime < 60:
            return False
    except FileNotFoundError:
        pass
    with open(stamp, "w") as fh:
        fh.write(f"{int(time.time())}\n")
    import subprocess

    subprocess.Popen(
        ["git", "repack", "-d", "-q"],
        cwd=repo.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    return True
