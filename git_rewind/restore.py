"""Rewinding the working tree to a checkpoint, never losing what is there now.

Order of work: scan the current tree (respecting the target's ignore rules as well as the
current ones) → compare with the target → safety checkpoint of the current state → write
.gitignore files first, remove what the target lacks, write what differs. Each file is
written to a temporary name and renamed into place, and the temporary names are journalled,
so a kill leaves either the old file or the new one and the next command sweeps up.
"""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass, field

from . import ignore, journal, snapshot, store
from .checkpoints import Checkpoint
from .config import PROJECT_FILE
from .errors import RewindError
from .fsutil import read_regular
from .note import RewindRecord
from .repo import Repo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

    from .note import ConversationRecord, Mode


@dataclass
class Change:
    """One path to bring to the target: mode/oid None means remove it."""

    path: str
    mode: int | None
    oid: str | None
    old_mode: int | None


@dataclass
class Plan:
    """What a rewind to TARGET would do, computed from a fresh scan of the working tree."""

    target: Checkpoint
    target_tree: str
    current_tree: str
    writes: list[Change] = field(default_factory=list)
    removals: list[Change] = field(default_factory=list)
    left_alone: list[str] = field(default_factory=list)
    skipped_scan: list[dict[str, object]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.writes and not self.removals


@dataclass
class Outcome:
    """What a rewind did."""

    plan: Plan
    safety: store.Result | None
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    reinstated: list[str] = field(default_factory=list)  # settings files whose git-rewind entries were put back


def _within(path: str, only: list[str]) -> bool:
    return not only or any(path == o or path.startswith(o.rstrip("/") + "/") or o == "" for o in only)


def _diff(repo: Repo, old_tree: str, new_tree: str) -> list[Change]:
    out = repo.git(["diff-tree", "-r", "-z", "--no-renames", old_tree, new_tree])
    parts = out.split(b"\0")
    changes = []
    for i in range(0, len(parts) - 1, 2):
        old_mode, new_mode, _old_oid, new_oid, status = parts[i][1:].decode().split(" ")
        path = os.fsdecode(parts[i + 1])
        if status == "D":
            changes.append(Change(path, None, None, int(old_mode, 8)))
        else:
            changes.append(Change(path, int(new_mode, 8), new_oid,
                                  int(old_mode, 8) if status != "A" else None))
    return changes


def _plan_locked(
    repo: Repo, target: Checkpoint, only: list[str], max_size: int
) -> tuple[Plan, snapshot.Scan, str | None]:
    excludes = os.path.join(repo.rewind_dir, "target-excludes")
    target_tree = repo.tree_of(target.commit)
    used = ignore.target_excludes(repo, target_tree, excludes)
    # The safety checkpoint goes on the target's session: diff against its tip once, here.
    tip = store.session_tip(repo, target.session or "manual")
    scan = snapshot.scan(repo, max_size, used, base_tree=tip.tree if tip else store.head_tree(repo))
    plan = Plan(target=target, target_tree=target_tree, current_tree=scan.tree, skipped_scan=scan.skipped)
    for change in _diff(repo, scan.tree, target_tree):
        if not _within(change.path, only):
            continue
        if change.path == PROJECT_FILE:  # git-rewind's own settings survive every restore
            plan.left_alone.append(change.path)
            continue
        if change.mode == snapshot.MODE_GITLINK or change.old_mode == snapshot.MODE_GITLINK:
            plan.left_alone.append(change.path)  # nested repositories are never touched
            continue
        if change.mode is None:
            plan.removals.append(change)
        elif change.old_mode is None and _uncaptured_file(os.path.join(repo.root, change.path)):
            # On disk but not captured: ignored, too large or nested. Never touched.
            plan.left_alone.append(change.path)
        else:
            plan.writes.append(change)
    # .gitignore files first, so the rules on disk are the target's as early as possible.
    plan.writes.sort(key=lambda c: (not c.path.endswith(".gitignore"), c.path))
    return plan, scan, used


def _uncaptured_file(full: str) -> bool:
    """A file or link the scan did not capture (a directory may empty out during the restore)."""
    return os.path.islink(full) or (os.path.lexists(full) and not os.path.isdir(full))


def preview(repo: Repo, target: Checkpoint, only: list[str], max_size: int) -> Plan:
    """The plan of a rewind, changing nothing in the working tree."""
    with repo.worktree_lock():
        return _plan_locked(repo, target, only, max_size)[0]


def rewind(
    repo: Repo,
    target: Checkpoint,
    only: list[str],
    max_size: int,
    trigger: str = "pre-rewind",
    auto_pack: int = 2000,
    code: bool = True,
    mode: Mode = "code",
    conversation: ConversationRecord | None = None,
    attachments: store.Attachments | None = None,
) -> Outcome:
    """Checkpoint the current state, then bring the working tree to TARGET.

    With CODE false the working tree is left as it is: the safety checkpoint is still taken
    (it holds the transcript backup of a conversation-only rewind). CONVERSATION is recorded
    in its note for redo.
    """
    with repo.worktree_lock():
        plan, scan, excludes = _plan_locked(repo, target, only, max_size)
        if not code:
            plan.writes, plan.removals, plan.left_alone = [], [], []
        if plan.empty and conversation is None:
            return Outcome(plan=plan, safety=None)
        record = RewindRecord(target.seq, target.commit, list(only), mode, conversation)
        request = store.Request(
            session=target.session or "manual",
            trigger=trigger,
            message=f"{trigger} to #{target.seq}" + ("" if mode == "code" else f" ({mode})"),
            allow_empty=True,
            max_file_size=max_size,
            auto_pack=auto_pack,
            excludes_file=excludes,
            rewind=record,
            attachments=attachments,
        )
        safety = store.save_locked(repo, request, scan)
        outcome = Outcome(plan=plan, safety=safety)
        if plan.empty:  # a conversation-only rewind: nothing to write, nothing to keep installed
            return outcome
        from . import install

        ours = install.in_tree(repo.root, [c.path for c in plan.writes + plan.removals])
        _apply(repo, plan, outcome)
        outcome.reinstated = install.reinstate(repo.root, ours)
        return outcome


def _apply(repo: Repo, plan: Plan, outcome: Outcome) -> None:
    root = repo.root
    journal.begin(repo, [c.path for c in plan.writes])
    try:
        mode_only = {c.path for c in plan.writes if _same_content_new_mode(repo, c)}
        contents = [c for c in plan.writes if c.mode != snapshot.MODE_LINK and c.path not in mode_only]
        umask = os.umask(0)
        os.umask(umask)
        # The contents are got ready first: where git writes them (a filter that fails, a missing
        # object), the restore stops before it has removed or written anything.
        with _BlobReader(repo, contents, plan.target_tree) as blobs:
            for change in plan.removals:
                full = os.path.join(root, change.path)
                if os.path.islink(full) or os.path.isfile(full):
                    os.unlink(full)
                outcome.removed.append(change.path)
            _remove_empty_dirs(root, [c.path for c in plan.removals])
            for change in plan.writes:
                if change.path in mode_only:
                    os.chmod(os.path.join(root, change.path), _file_mode(change.mode, umask))
                    outcome.written.append(change.path)
                    continue
                data = blobs.link_target(change) if change.mode == snapshot.MODE_LINK else blobs.next()
                if _write(root, change, data, umask):
                    outcome.written.append(change.path)
                else:
                    outcome.conflicts.append(change.path)
    finally:
        journal.end(repo)


def _same_content_new_mode(repo: Repo, change: Change) -> bool:
    """Only the exec bit differs: a chmod is the whole restore."""
    if change.old_mode is None or change.old_mode == change.mode or change.mode == snapshot.MODE_LINK:
        return False
    if change.old_mode == snapshot.MODE_LINK:
        return False
    try:
        return snapshot.blob_oid(read_regular(os.path.join(repo.root, change.path)), repo.object_format) == change.oid
    except OSError:
        return False


def _remove_empty_dirs(root: str, removed: list[str]) -> None:
    dirs = {p.rsplit("/", 1)[0] for p in removed if "/" in p}
    candidates = set()
    for d in dirs:
        while d:
            candidates.add(d)
            d = d.rsplit("/", 1)[0] if "/" in d else ""
    for d in sorted(candidates, key=lambda x: x.count("/"), reverse=True):
        try:
            os.rmdir(os.path.join(root, d))
        except OSError:
            pass  # not empty (ignored files, other content) or already gone


def _ensure_parent(root: str, rel: str) -> bool:
    """Create the directories above REL; False if a file or link stands in the way."""
    current = root
    for part in rel.split("/")[:-1]:
        current = os.path.join(current, part)
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            os.mkdir(current)
            continue
        if not stat.S_ISDIR(st.st_mode):
            return False
    return True


def _write(root: str, change: Change, data: bytes, umask: int) -> bool:
    """Put DATA at the change's path through a temporary file and a rename; False on a conflict."""
    full = os.path.join(root, change.path)
    if not _ensure_parent(root, change.path):
        return False
    if os.path.isdir(full) and not os.path.islink(full):
        return False  # a directory with content we must not remove stands here
    tmp = os.path.join(root, journal.temp_name(change.path))
    if os.path.lexists(tmp):
        os.unlink(tmp)
    if change.mode == snapshot.MODE_LINK:
        os.symlink(data, tmp)
    else:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _file_mode(change.mode, umask))
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
    os.replace(tmp, full)
    return True


def _file_mode(mode: int | None, umask: int) -> int:
    return (0o777 if mode == snapshot.MODE_EXEC else 0o666) & ~umask


class _BlobReader:
    """File contents for a restore, in order, exactly as `git checkout` of the target would write them.

    Usually from one `git cat-file --batch` fed by a thread (requests are written ahead while
    responses are read, so 1,000 files cost no 1,000 round trips): stored bytes are the bytes on
    disk. When git may convert content (snapshot.converts: eol attributes, clean/smudge filters,
    working-tree-encoding, core.autocrlf), git itself writes them: `checkout-index --prefix` from
    an index of the target tree into a staging directory under .git/rewind/, with the user's
    settings and the target's attributes, and each file is read from there. Link targets are
    always raw, from a second process started only when a link is restored.
    """

    def __init__(self, repo: Repo, changes: list[Change], target_tree: str) -> None:
        import threading

        self._repo = repo
        self._raw: subprocess.Popen[bytes] | None = None
        self._stage: str | None = None
        self._staged: list[str] = []
        if changes and snapshot.converts(repo, [c.path for c in changes]):
            self._checkout(changes, target_tree)
            self._proc = None
            return
        args = ["git", "-c", "core.autocrlf=false", "cat-file", "--batch"]
        self._proc = subprocess.Popen(args, cwd=repo.root, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        requests = [(c.oid or "").encode() + b"\n" for c in changes]
        assert self._proc.stdin is not None
        self._feeder = threading.Thread(target=self._feed, args=(self._proc.stdin, requests), daemon=True)
        self._feeder.start()

    def _checkout(self, changes: list[Change], target_tree: str) -> None:
        import shutil
        import tempfile

        from . import gitcmd

        self._stage = tempfile.mkdtemp(prefix="restore-", dir=self._repo.rewind_dir)
        index = os.path.join(self._stage, ".index")
        env = {"GIT_INDEX_FILE": index}
        try:
            gitcmd.run(["read-tree", target_tree], cwd=self._repo.root, env=env)
            files = os.path.join(self._stage, "files") + os.sep
            gitcmd.run(["checkout-index", "-z", "--stdin", f"--prefix={files}"], cwd=self._repo.root, env=env,
                       input=b"".join(os.fsencode(c.path) + b"\0" for c in changes))
        except BaseException:
            shutil.rmtree(self._stage, ignore_errors=True)
            raise
        self._staged = [os.path.join(files, c.path) for c in reversed(changes)]

    @staticmethod
    def _feed(pipe: IO[bytes], requests: list[bytes]) -> None:
        try:
            for request in requests:
                pipe.write(request)
            pipe.close()
        except (BrokenPipeError, ValueError):
            pass  # the reader stopped early (an error); it reports

    def __enter__(self) -> _BlobReader:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._stage is not None:
            import shutil

            shutil.rmtree(self._stage, ignore_errors=True)
        if self._proc is not None:
            if exc[0] is not None:
                self._proc.kill()  # stops the feeder too: its next write fails
            self._feeder.join()
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            self._proc.wait()
        if self._raw is not None and self._raw.stdin is not None:
            self._raw.stdin.close()
            self._raw.wait()

    @staticmethod
    def _response(proc: subprocess.Popen[bytes], oid: str | None) -> bytes:
        assert proc.stdout is not None
        header = proc.stdout.readline().split()
        if len(header) != 3:
            raise RewindError(f"object {oid or header[:1]} is missing from the repository")
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)
        return data

    def next(self) -> bytes:
        """The content of the next change given at construction."""
        if self._proc is None:
            return read_regular(self._staged.pop())
        return self._response(self._proc, None)

    def link_target(self, change: Change) -> bytes:
        """A symbolic link's target, as stored."""
        if self._raw is None:
            self._raw = subprocess.Popen(["git", "cat-file", "--batch"], cwd=self._repo.root,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self._raw.stdin is not None
        self._raw.stdin.write((change.oid or "").encode() + b"\n")
        self._raw.stdin.flush()
        return self._response(self._raw, change.oid)
