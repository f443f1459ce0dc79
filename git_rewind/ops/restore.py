"""Rewinding the working tree to a checkpoint, never losing what is there now.

Order of work: scan the current tree (respecting the target's ignore rules as well as the
current ones) → compare with the target, limited by git's own pathspec rules (`--only`) →
safety checkpoint of the current state → write .gitignore files first, remove what the target
lacks, write what differs → read back every path written or removed. Each file is written to a
temporary name and renamed into place, and the temporary names are journalled, so a kill leaves
either the old file or the new one and the next command sweeps up. A restore whose result does
not read back as planned raises Incomplete: it is never reported as done.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess

from ..base import layout
from ..base.config import PROJECT_FILE
from ..base.errors import RewindError
from ..base.fsutil import read_regular
from ..base.note import Oid, RewindRecord
from ..base.repo import Repo
from ..store import conversion, ignore, journal, snapshot, store
from ..store.checkpoints import Checkpoint
from ..store.snapshot import blob_oid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO

    import pygit2

    from ..base import daemon, gitcmd
    from ..base.note import ConversationRecord, Json, Mode

    Retarget = Callable[[Oid], Oid]  # the current tree → the tree to restore


class Change:
    """One path to bring to the target: mode/oid None means remove it."""

    __slots__ = ("path", "mode", "oid", "old_mode")

    def __init__(self, path: str, mode: int | None, oid: str | None, old_mode: int | None) -> None:
        self.path = path
        self.mode = mode
        self.oid = oid
        self.old_mode = old_mode

    def _key(self) -> tuple[str, int | None, str | None, int | None]:
        return (self.path, self.mode, self.oid, self.old_mode)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Change) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Change{self._key()!r}"


# Plain classes, not dataclasses: `dataclasses` imports `inspect` (~10 ms), which a restore needs nowhere else.
class Plan:
    """What a rewind to TARGET would do, computed from a fresh scan of the working tree."""

    def __init__(self, target: Checkpoint, target_tree: Oid, current_tree: Oid,
                 skipped_scan: list[dict[str, object]] | None = None,
                 head_now: tuple[str | None, str | None] = (None, None), files: bool = True) -> None:
        self.target = target
        self.target_tree = target_tree
        self.current_tree = current_tree
        self.writes: list[Change] = []
        self.removals: list[Change] = []
        self.left_alone: list[str] = []
        self.skipped_scan = skipped_scan if skipped_scan is not None else []
        self.head_now = head_now  # (HEAD commit, branch) when planned
        self.ignored_changed: list[str] = []  # ignored, changed since the target: left as they are
        self.ignored_unseen = 0  # more of them than IGNORED_SHOWN
        self.files = files  # False: a conversation-only rewind, which leaves every file as it is

    @property
    def empty(self) -> bool:
        return not self.writes and not self.removals

    @property
    def paths(self) -> list[str]:
        """Every path the plan touches or deliberately leaves: what an `--only` undo records for redo."""
        return sorted({c.path for c in self.writes + self.removals} | set(self.left_alone))


class Outcome:
    """What a rewind did."""

    def __init__(self, plan: Plan, safety: store.Result | None) -> None:
        self.plan = plan
        self.safety = safety
        self.written: list[str] = []
        self.removed: list[str] = []
        self.conflicts: list[str] = []
        self.reinstated: list[str] = []  # settings files whose git-rewind entries were put back
        self.failed: dict[str, str] = {}  # path → why the system refused to write or remove it
        self.verified = False  # every path written or removed was read back as planned


class Incomplete(RewindError):
    """The working tree does not read back as the restore meant to leave it: said loudly, never as done."""

    EXIT_CODE = 4  # 3 is a conflict (takeback.Conflicts): nothing written, which this is not

    def __init__(self, target: str, safety: store.Result | None, problems: list[tuple[str, str]],
                 after: str | None = None) -> None:
        shown = problems[:PROBLEMS_SHOWN]
        lines = [f"the restore to {target} did not fully happen: {len(problems)} "
                 f"path{'s' if len(problems) != 1 else ''} not as {target} has them"]
        lines += [f"  {path}: {why}" for path, why in shown]
        if len(problems) > len(shown):
            lines.append(f"  … and {len(problems) - len(shown)} more")
        if safety is not None:
            lines.append(f"the state before the restore is safety checkpoint #{safety.seq} {safety.commit[:7]} "
                         "(git rewind redo goes back)")
        if after:
            lines.append(after)
        super().__init__("\n".join(lines), exit_code=self.EXIT_CODE)
        self.target = target  # the checkpoint's label: #42, or a fetched one's full id
        self.safety = safety
        self.problems = problems


PROBLEMS_SHOWN = 50
IGNORED_SHOWN = 20


def literal(paths: list[str]) -> list[str]:
    """Work-tree paths (a file, or a directory and what is below it) as pathspecs git matches exactly."""
    return [":(top,literal)" + p for p in paths]


def _check_matches(repo: Repo, target: Checkpoint, target_tree: str, only: list[str], cwd: str) -> None:
    """Every pathspec of ONLY must match a file of the target or of the working tree (as just scanned
    into the private index): git decides, from the user's directory; otherwise one error, nothing changed."""
    from ..base import gitcmd

    try:
        gitcmd.run(["ls-files", "-z", "--error-unmatch", f"--with-tree={target_tree}", "--", *only],
                   cwd=cwd, env={"GIT_INDEX_FILE": repo.private_index})
    except gitcmd.GitError as exc:
        unmatched = re.findall(r"^error: pathspec '(.*)' did not match", exc.stderr, re.MULTILINE)
        if unmatched:
            names = ", ".join(unmatched)
            raise RewindError(f"--only {names}: matches no file in #{target.seq} nor in the working tree "
                              "(ignored files are never restored); nothing changed") from None
        last = exc.stderr.strip().splitlines()[-1] if exc.stderr.strip() else str(exc)
        raise RewindError(f"--only: {last.removeprefix('fatal: ')}; nothing changed") from None


def _diff(repo: Repo, old_tree: Oid, new_tree: Oid, only: list[str] | None = None,
          cwd: str | None = None) -> list[Change]:
    """The changes from OLD_TREE to NEW_TREE, limited to the pathspecs ONLY as git reads them from CWD. Without
    pathspecs, in a process that reads objects itself (objects.reader: the daemon), the trees are compared
    there, as `diff-tree -r --no-renames` compares them; pathspecs are git's to read."""
    from ..base import gitcmd, objects
    from ..base.gitobjects import raw_diff

    git = objects.reader(repo) if not only else None
    if git is not None:
        found = _diff_in_process(git, old_tree, new_tree)
        if found is not None:
            return found

    spec = ["--", *only] if only else []
    out = gitcmd.run(["diff-tree", "-r", "-z", "--no-renames", old_tree, new_tree, *spec], cwd=cwd or repo.root)
    return [Change(e.path, None, None, e.old_mode) if e.status == "D"
            else Change(e.path, e.new_mode, e.new_oid, e.old_mode or None) for e in raw_diff(out)]


def _diff_in_process(git: pygit2.Repository, old_tree: Oid, new_tree: Oid) -> list[Change] | None:
    """`diff-tree -r --no-renames OLD_TREE NEW_TREE` by pygit2 (a type change is one change, as git gives it),
    in git's order (tree order: a directory sorts as its name and a slash); None when it cannot read them."""
    from pygit2.enums import DeltaStatus

    from ..base.objects import tree_deltas

    deltas = tree_deltas(git, old_tree, new_tree, typechange=True)
    if deltas is None:
        return None
    changes = []
    for delta in deltas:
        old, new = delta.old_file, delta.new_file
        if delta.status == DeltaStatus.DELETED:
            changes.append(Change(os.fsdecode(old.raw_path), None, None, old.mode))
        elif delta.status in (DeltaStatus.ADDED, DeltaStatus.MODIFIED, DeltaStatus.TYPECHANGE):
            changes.append(Change(os.fsdecode(new.raw_path), new.mode, str(new.id),
                                  old.mode if delta.status != DeltaStatus.ADDED else None))
        else:
            return None  # nothing else comes of two trees without renames: let git say
    changes.sort(key=lambda c: _tree_order(c.path))
    return changes


def _tree_order(path: str) -> tuple[bytes, ...]:
    parts = os.fsencode(path).split(b"/")
    return tuple(part + b"/" for part in parts[:-1]) + (parts[-1],)


def _tree_of(repo: Repo, commit: str) -> Oid:
    """COMMIT's tree: read in this process where it reads objects itself (objects.reader), else by git."""
    from ..base import objects

    git = objects.reader(repo)
    if git is not None:
        import pygit2

        try:
            found = git.get(commit)
            if found is not None:
                return Oid(str(found.peel(pygit2.Tree).id))
        except (KeyError, ValueError, pygit2.GitError):
            pass
    return repo.tree_of(commit)


def plan_locked(
    repo: Repo, target: Checkpoint, only: list[str], max_size: int, cwd: str | None = None, code: bool = True,
    retarget: Retarget | None = None,
) -> tuple[Plan, snapshot.Scan, str | None]:
    """Scan the working tree and plan its way to TARGET's tree (or RETARGET's, made from the scanned one);
    hold the work-tree lock. Returns the plan, the scan (what a safety checkpoint records) and the excludes
    file holding the target's ignore rules (None when they are the disk's)."""
    excludes = os.path.join(repo.rewind_dir, layout.TARGET_EXCLUDES)
    # The safety checkpoint goes on the target's session: diff against its tip once, here.
    tip = store.session_tip(repo, target.session or "manual")
    # A plain undo goes back to its session's newest checkpoint, whose tree the tip already names.
    target_tree = tip.tree if tip is not None and tip.commit == target.commit else _tree_of(repo, target.commit)
    used = ignore.target_excludes(repo, target_tree, excludes)
    # What a restore of the files leaves (nothing to say when the files are left as they are): git lists
    # the ignored files while the scan runs, on the other core.
    ignored = _list_ignored(repo, target, used) if code else None
    try:
        scan = snapshot.scan(repo, max_size, used, base_tree=tip.tree if tip else store.head_tree(repo))
        if retarget is not None:  # a tree made from the current one (takeback.py): computed under the same lock
            target_tree = retarget(scan.tree)
        plan = Plan(target=target, target_tree=target_tree, current_tree=scan.tree, skipped_scan=scan.skipped,
                    head_now=repo.head(), files=code)
        where = repo.pathspec_base(cwd)
        if only:
            _check_matches(repo, target, target_tree, only, where)
        if ignored is not None:
            plan.ignored_changed, plan.ignored_unseen = _ignored_changed_since(repo, target, ignored.result())
    finally:
        if ignored is not None:
            ignored.close()
    for change in _diff(repo, scan.tree, target_tree, only, where):
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


def _list_ignored(repo: Repo, target: Checkpoint, excludes: str | None) -> _Ignored | None:
    """Start listing the ignored files (under the current rules and the target's EXCLUDES), for
    _ignored_changed_since; None when TARGET's time is unreadable (nothing would be compared)."""
    from ..base import clock

    if clock.parse_utc(target.note.created) is None:
        return None
    journal.sweep(repo)  # (the scan sweeps too) a temporary file a killed restore left is not listed
    return _Ignored(repo, excludes)


class _Ignored:
    """git's listing of the ignored files (`ls-files -o -i --directory`, under the current rules and the target's
    EXCLUDES), started now and read later, on the other core. In the daemon, under the work tree's own rules,
    the listing it kept instead, when no name in the tree was made, removed or renamed since in a way that could
    change it (daemonserver.Server.ignored: what is ignored is a matter of names, rules and the index alone)."""

    def __init__(self, repo: Repo, excludes: str | None) -> None:
        from ..base import daemon, gitcmd

        self._link = daemon.Link.here(repo.rewind_dir) if excludes is None else None
        self._key = _listing_key(repo) if self._link is not None else None
        self._epoch: int | None = None
        self._kept: bytes | None = None
        self._proc: gitcmd.Background | None = None
        if self._link is not None and self._key is not None:
            answer = self._link.ask({"op": "ignored", "key": self._key}) or {}
            listing, epoch = answer.get("listing"), answer.get("epoch")
            if isinstance(listing, list):
                self._kept = b"".join(os.fsencode(str(name)) + b"\0" for name in listing)
                return
            self._epoch = epoch if isinstance(epoch, int) else None
        args = ["-c", f"core.excludesFile={excludes}"] if excludes else []
        self._proc = gitcmd.Background(args + ["ls-files", "-z", "-o", "-i", "--exclude-standard", "--directory"],
                                       cwd=repo.root)

    def result(self) -> bytes:
        """The listing (GitError when git failed); git's is given to the daemon to keep."""
        if self._kept is not None:
            return self._kept
        assert self._proc is not None
        out = self._proc.result()
        if self._link is not None and self._epoch is not None:
            self._link.ask({"op": "ignored_done", "epoch": self._epoch, "key": self._key,
                            "listing": [os.fsdecode(raw) for raw in out.split(b"\0") if raw]})
        return out

    def close(self) -> None:
        if self._proc is not None:
            self._proc.close()


def _listing_key(repo: Repo) -> str | None:
    """What git's listing of the ignored files reads besides the names in the tree: the ignore files outside the
    tree, the person's index (a tracked file is not listed), git's settings and environment (not its traces,
    which say nothing of what it lists); None while the index may still be written again within its timestamp
    (staging.index_identity)."""
    from .staging import index_identity

    index = index_identity(repo, None)
    if index is None:
        return None
    env = sorted((k, v) for k, v in os.environ.items()
                 if k.startswith("GIT_") and not k.startswith("GIT_TRACE") or k in ("HOME", "XDG_CONFIG_HOME"))
    return repr((index[1:], conversion.reference_key(repo), snapshot.rules_signature(repo), env))


def _replacing(repo: Repo) -> tuple[daemon.Link, int] | None:
    """In the daemon, its link and the epoch before a restore's writes (see _replaced); None elsewhere."""
    from ..base import daemon

    link = daemon.Link.here(repo.rewind_dir)
    answer = link.ask({"op": "ignored_mark"}) if link is not None else None
    epoch = answer.get("epoch") if answer is not None else None
    return (link, epoch) if link is not None and isinstance(epoch, int) else None


def _replaced(mark: tuple[daemon.Link, int] | None, plan: Plan, outcome: Outcome) -> None:
    """Tell the daemon the files this restore wrote over files its scan had found (a rename onto a name that was
    there, after the epoch of MARK, _replacing's): those names stand as before, for its kept listing of ignored
    files."""
    if mark is None:
        return
    link, since = mark
    written = set(outcome.written)
    link.ask({"op": "ignored_kept", "since": since,
              "paths": [c.path for c in plan.writes if c.old_mode is not None and c.path in written]})


def _ignored_changed_since(repo: Repo, target: Checkpoint, listing: bytes) -> tuple[list[str], int]:
    """Ignored files (under the current rules and the target's: LISTING, as _list_ignored has git list
    them) changed since TARGET was taken: a restore leaves them as they are, and says so. (The first
    IGNORED_SHOWN, and how many more.)

    Checkpoints never hold ignored files, so their modification time is all there is: a file whose
    mtime is not older than the checkpoint's second counts as changed. git lists them without
    descending into a wholly ignored directory (`--directory`: node_modules/ costs one entry), so
    such a directory counts as changed when its own mtime is, that is when entries were added to
    it, removed or renamed; an edit deeper inside it is not seen.
    """
    from ..base import clock

    since = clock.parse_utc(target.note.created)
    if since is None:
        return [], 0
    changed = []
    for raw in listing.split(b"\0"):
        if not raw:
            continue
        try:
            if os.lstat(os.path.join(repo.root, os.fsdecode(raw))).st_mtime >= since:
                changed.append(os.fsdecode(raw))
        except OSError:
            continue
    changed.sort()
    return changed[:IGNORED_SHOWN], max(0, len(changed) - IGNORED_SHOWN)


def warnings(plan: Plan) -> list[str]:
    """What the restore will not do, one line each, for the preview, the prompt and the result (nothing
    for a conversation-only rewind: no file comes back, so no file is left behind)."""
    lines: list[str] = []
    if not plan.files:
        return lines
    note = plan.target.note
    head, branch = plan.head_now
    known = note.branch is not None or note.head is not None  # a note without them says nothing
    if known and (note.branch, note.head) != (branch, head):
        then = f"on {_where(note.branch, note.head)}"
        if note.branch == branch:
            lines.append(f"#{note.seq} was taken at {_short(note.head)} of {branch or 'a detached HEAD'}, and HEAD "
                         f"is at {_short(head)} now: files come back as they were then, HEAD stays")
        else:
            lines.append(f"#{note.seq} was taken {then}; you are on {_where(branch, head)}: files come back "
                         "as they were then, the branch and HEAD stay")
    if plan.ignored_changed:
        more = f" and {plan.ignored_unseen} more" if plan.ignored_unseen else ""
        lines.append(f"ignored files changed since #{note.seq}, left as they are: "
                     f"{', '.join(plan.ignored_changed)}{more}")
    return lines


def _short(oid: str | None) -> str:
    return oid[:7] if oid else "no commit"


def _where(branch: str | None, head: str | None) -> str:
    return f"branch {branch} ({_short(head)})" if branch else f"a detached HEAD ({_short(head)})"


def preview(repo: Repo, target: Checkpoint, only: list[str], max_size: int, cwd: str | None = None,
            retarget: Retarget | None = None) -> Plan:
    """The plan of a rewind, changing nothing in the working tree. ONLY: git pathspecs, read from CWD."""
    with repo.worktree_lock():
        return plan_locked(repo, target, only, max_size, cwd, retarget=retarget)[0]


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
    cwd: str | None = None,
    verify: bool = True,
    retarget: Retarget | None = None,
    kind: str | None = None,
    by: str | None = None,
    expect: Callable[[Plan], None] | None = None,
) -> Outcome:
    """Checkpoint the current state, then bring the working tree to TARGET and read it back.

    ONLY: git pathspecs (globs, `:(top)` and other magic), relative to CWD (default: the root);
    the note records the paths they selected, so redo restores exactly those. With CODE false the
    working tree is left as it is: the safety checkpoint is still taken (it holds the transcript
    backup of a conversation-only rewind). CONVERSATION is recorded in its note for redo.
    Raises Incomplete when what was written or removed does not read back as planned (VERIFY
    false skips that, for the benchmark only). RETARGET: the tree to bring the working tree to is
    made from the current tree, under the lock (an agent-only undo or a revert), not TARGET's own.

    A rewind that wrote or removed files is recorded for the agent sessions of this work tree
    (rewinds.py), named for them by TRIGGER and KIND (undo, redo, revert, undo --agent-only); BY is
    the session that asked for it, which need not be told.

    EXPECT (a two-phase restore's token, token.py): called with the plan, under the lock, before anything is
    saved or written; what it raises stops the rewind with nothing changed.
    """
    with repo.worktree_lock():
        plan, scan, excludes = plan_locked(repo, target, only, max_size, cwd, code, retarget)
        if expect is not None:
            expect(plan)
        if not code:
            plan.writes, plan.removals, plan.left_alone = [], [], []
        # A redo records itself even when the tree already is what it brings back: its safety checkpoint
        # is what pops the redo stack (checkpoints.redo_stack), so the next redo goes on to the one below.
        if plan.empty and conversation is None and trigger != "pre-redo":
            return Outcome(plan=plan, safety=None)
        selected = plan.paths if only else []
        if only and not selected:
            mode = "conversation"  # the selection changed no file: redo has none to bring back
        record = RewindRecord(target.seq, target.commit, selected, mode, conversation, extra=record_extra(target, kind))
        request = store.Request(
            session=target.session or "manual",
            trigger=trigger,
            message=f"{trigger} to {target.label}" + ("" if mode == "code" else f" ({mode})")
            + (f" ({kind})" if kind else ""),
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
        from ..agents import install

        ours = install.in_tree(repo.root, [c.path for c in plan.writes + plan.removals])
        store.mark_restored(repo, safety.seq)  # before the first write: a kill midway leaves it said
        mark = _replacing(repo)
        expected = _apply(repo, plan, outcome)
        _replaced(mark, plan, outcome)
        tell_sessions(repo, outcome, action_name(trigger, kind), by)
        problems = _verify(repo, outcome, expected) if verify else []
        outcome.verified = verify and not problems
        # git-rewind's own entries go back after the read-back: a deliberate change on top of the restore.
        outcome.reinstated = install.reinstate(repo.root, ours)
        if problems:
            raise Incomplete(target.label, safety, problems)
        return outcome


def record_extra(target: Checkpoint, kind: str | None) -> dict[str, Json] | None:
    """What a safety checkpoint's record says beyond the schema: the KIND of rewind (revert, agent-only), and
    the machine copy a fetched TARGET came from (its seq is that machine's)."""
    extra: dict[str, Json] = {"kind": kind} if kind else {}
    if target.source is not None:
        extra["source"] = target.source
    return extra or None


_ACTIONS = {"pre-rewind": "undo", "pre-redo": "redo", "agent-only": "undo --agent-only"}  # else the kind


def action_name(trigger: str, kind: str | None) -> str:
    """What a rewind is called when the agent sessions are told of it: undo, redo, revert, undo --agent-only."""
    return _ACTIONS.get(kind or trigger, kind or trigger)


def tell_sessions(repo: Repo, outcome: Outcome, action: str, by: str | None) -> None:
    """Record the rewind for the agent sessions living in this work tree (told at their next prompt)."""
    import time

    from ..base import rewinds

    changed = sorted(outcome.written + outcome.removed)
    if not changed or outcome.safety is None:
        return
    try:
        rewinds.record(repo, rewinds.Rewind(outcome.safety.seq, action, outcome.plan.target.seq,
                                            changed[:rewinds.PATHS_KEPT], len(changed), time.time(), by))
    except OSError:  # the files are written already: a log that cannot be written does not fail the restore
        pass


def _apply(repo: Repo, plan: Plan, outcome: Outcome) -> dict[str, tuple[int, str]]:
    """Remove and write what the plan says; what each written path must read back as: (mode, the id of
    its bytes on disk, as `hash-object --no-filters` gives it). A path the system refuses to write or
    remove goes to outcome.failed and the restore carries on with the rest."""
    root = repo.root
    temp = journal.begin(repo, [c.path for c in plan.writes])
    expected: dict[str, tuple[int, str]] = {}
    try:
        # A chmod alone is right only while the attributes stay: a restore that changes a .gitattributes file
        # may change how git converts the file (the target's rules apply after it), so git writes it.
        attributes = any(os.path.basename(c.path) == ".gitattributes" for c in plan.writes + plan.removals)
        mode_only = set() if attributes else {c.path for c in plan.writes if _same_content_new_mode(repo, c)}
        contents = [c for c in plan.writes if c.mode != snapshot.MODE_LINK and c.path not in mode_only]
        umask = os.umask(0)
        os.umask(umask)
        folders: set[str] = set()  # directories this restore found or made above the paths it wrote
        # The contents are got ready first: where git writes them (a filter that fails, a missing
        # object), the restore stops before it has removed or written anything.
        with _BlobReader(repo, contents, plan.target_tree) as blobs:
            for change in plan.removals:
                full = os.path.join(root, change.path)
                try:
                    if os.path.islink(full) or os.path.isfile(full):
                        os.unlink(full)
                    outcome.removed.append(change.path)
                except OSError as exc:
                    outcome.failed[change.path] = f"not removed: {exc.strerror}"
            _remove_empty_dirs(root, [c.path for c in plan.removals])
            for change in plan.writes:
                assert change.mode is not None and change.oid is not None
                if change.path in mode_only:
                    expected[change.path] = (change.mode, change.oid)
                    try:
                        os.chmod(os.path.join(root, change.path), _file_mode(change.mode, umask))
                        outcome.written.append(change.path)
                    except OSError as exc:
                        outcome.failed[change.path] = f"not written: {exc.strerror}"
                    continue
                data = blobs.link_target(change) if change.mode == snapshot.MODE_LINK else blobs.next()
                # Bytes as stored, unless git converted them for the disk: then the id of what git wrote.
                oid = change.oid if not blobs.converted or change.mode == snapshot.MODE_LINK else \
                    blob_oid(data, repo.object_format)
                expected[change.path] = (change.mode, oid)
                try:
                    written = _write(root, change, data, umask, temp[change.path], folders)
                except OSError as exc:
                    outcome.failed[change.path] = f"not written: {exc.strerror}"
                    continue
                (outcome.written if written else outcome.conflicts).append(change.path)
    finally:
        journal.end(repo)
    return expected


def _verify(repo: Repo, outcome: Outcome, expected: dict[str, tuple[int, str]]) -> list[tuple[str, str]]:
    """Read back every path the restore wrote or removed; (path, what is wrong) where the disk is not what
    it meant to leave. Contents are read and hashed here (the id of the bytes on disk, as `git hash-object
    --no-filters` gives it: no git process to start), and compared with the target's blob (or, where git
    converts content, with the id of what git's checkout-index wrote, which is what `git checkout` writes)."""
    root = repo.root
    problems = [(path, why) for path, why in outcome.failed.items()]
    for path in outcome.removed:
        full = os.path.join(root, path)
        if os.path.islink(full) or os.path.lexists(full) and not os.path.isdir(full):
            # (a directory may stand there now: the target's files below it were written)
            problems.append((path, "still there after its removal"))
    for path in outcome.written:
        mode, oid = expected[path]
        full = os.path.join(root, path)
        try:
            st = os.lstat(full)
        except OSError:
            problems.append((path, "missing after it was written"))
            continue
        if mode == snapshot.MODE_LINK:
            if not stat.S_ISLNK(st.st_mode) or blob_oid(os.fsencode(os.readlink(full)), repo.object_format) != oid:
                problems.append((path, "not the symbolic link the checkpoint has"))
        elif not stat.S_ISREG(st.st_mode):
            problems.append((path, "not a regular file after it was written"))
        elif bool(st.st_mode & stat.S_IXUSR) != (mode == snapshot.MODE_EXEC):
            problems.append((path, "executable bit differs"))
        elif _hash_on_disk(repo, full) != oid:
            problems.append((path, "content differs from the checkpoint after it was written"))
    return problems


def _hash_on_disk(repo: Repo, full: str) -> str | None:
    """The blob id of the bytes at FULL as they are on disk (no filters); None when it cannot be read as a
    regular file (replaced by a link or a FIFO since its lstat, or unreadable)."""
    try:
        return blob_oid(read_regular(full, nofollow=True), repo.object_format)
    except OSError:
        return None


def _same_content_new_mode(repo: Repo, change: Change) -> bool:
    """Only the exec bit differs: a chmod is the whole restore (where git converts content, git's checkout
    rewrites the file, so the restore writes what it writes)."""
    if change.old_mode is None or change.old_mode == change.mode or change.mode == snapshot.MODE_LINK:
        return False
    if change.old_mode == snapshot.MODE_LINK or conversion.converts(repo, [change.path]):
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


def _ensure_parent(root: str, rel: str, folders: set[str]) -> bool:
    """Create the directories above REL; False if a file or link stands in the way. FOLDERS: the directories
    found or made for the paths written before (looked at once per restore), grown here."""
    current = root
    for part in rel.split("/")[:-1]:
        current = os.path.join(current, part)
        if current in folders:
            continue
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            os.mkdir(current)
            folders.add(current)
            continue
        if not stat.S_ISDIR(st.st_mode):
            return False
        folders.add(current)
    return True


def _write(root: str, change: Change, data: bytes, umask: int, tmp_name: str, folders: set[str]) -> bool:
    """Put DATA at the change's path through the temporary file TMP_NAME and a rename; False on a conflict
    (a directory stands there, or a file where a directory above it should be). FOLDERS: see _ensure_parent.

    The temporary file is created exclusively: an existing file of that name (never ours: the name is
    new to this restore) makes the write fail rather than go.
    """
    full = os.path.join(root, change.path)
    if not _ensure_parent(root, change.path, folders):
        return False
    tmp = os.path.join(root, tmp_name)
    if change.mode == snapshot.MODE_LINK:
        os.symlink(data, tmp)
    else:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _file_mode(change.mode, umask))
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
        except OSError:
            os.unlink(tmp)  # ours: created just now, exclusively
            raise
    try:
        os.replace(tmp, full)  # over a file or a link (to a directory too); never over a directory
    except OSError as exc:
        os.unlink(tmp)
        if isinstance(exc, IsADirectoryError):
            return False  # a directory with content we must not remove stands here
        raise
    return True


def _file_mode(mode: int | None, umask: int) -> int:
    return (0o777 if mode == snapshot.MODE_EXEC else 0o666) & ~umask


def check_out(repo: Repo, tree: Oid, paths: list[str], stage: str) -> str:
    """Write PATHS of TREE as `git checkout` would (the user's filters and eol settings, TREE's own
    attributes) below the directory STAGE (one of ours under .git/rewind/); returns the prefix each path
    was written under. An index of TREE in STAGE, and STAGE as the work tree: git reads .gitattributes from
    that index and then the work tree, which must not be the user's, whose attributes may have changed
    since (a `*.txt -text` added later would keep the target's eol conversion from applying)."""
    from ..base import gitcmd

    env = {"GIT_INDEX_FILE": os.path.join(stage, ".index")}
    gitcmd.run(["read-tree", tree], cwd=repo.root, env=env)
    files = os.path.join(stage, "files") + os.sep
    gitcmd.run([f"--work-tree={stage}", "checkout-index", "-z", "--stdin", f"--prefix={files}"],
               cwd=repo.root, env=env, input=b"".join(os.fsencode(p) + b"\0" for p in paths))
    return files


class _BlobReader:
    """File contents for a restore, in order, exactly as `git checkout` of the target would write them.

    Usually from one `git cat-file --batch` fed by a thread (requests are written ahead while
    responses are read, so 1,000 files cost no 1,000 round trips): stored bytes are the bytes on
    disk. In a process that reads objects itself (objects.reader: the daemon, where pygit2 reads
    as git does), from the object database directly, when it holds every one of them. When git
    may convert content (conversion.converts: eol attributes, clean/smudge filters,
    working-tree-encoding, core.autocrlf), git itself writes them: `checkout-index --prefix` from
    an index of the target tree into a staging directory under .git/rewind/, with the user's
    settings and the target's attributes, and each file is read from there. Link targets are
    always raw, from a second process started only when a link is restored (or the object database).
    """

    def __init__(self, repo: Repo, changes: list[Change], target_tree: Oid) -> None:
        import threading

        from ..base import objects

        self._repo = repo
        self._raw: subprocess.Popen[bytes] | None = None
        self._stage: str | None = None
        self._staged: list[str] = []
        self._converted = False
        self._odb: pygit2.Odb | None = None
        self._pending: list[str] = []
        if changes and conversion.converts(repo, [c.path for c in changes]):
            self._checkout(changes, target_tree)
            self._converted = True
            self._proc = None
            return
        git = objects.reader(repo)
        if git is not None and all((c.oid or "") in git.odb for c in changes):  # else git's (a partial clone's)
            self._odb = git.odb
            self._pending = [c.oid or "" for c in reversed(changes)]
            self._proc = None
            return
        args = ["git", "-c", "core.autocrlf=false", "cat-file", "--batch"]
        self._proc = subprocess.Popen(args, cwd=repo.root, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        requests = [(c.oid or "").encode() + b"\n" for c in changes]
        assert self._proc.stdin is not None
        self._feeder = threading.Thread(target=self._feed, args=(self._proc.stdin, requests), daemon=True)
        self._feeder.start()

    def _checkout(self, changes: list[Change], target_tree: Oid) -> None:
        import shutil

        from ..base.fsutil import scratch_dir

        self._stage = scratch_dir(self._repo.rewind_dir, layout.SCRATCH_RESTORE)
        try:
            files = check_out(self._repo, target_tree, [c.path for c in changes], self._stage)
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

    @property
    def converted(self) -> bool:
        """git wrote the contents (it may convert them): they are not the stored bytes."""
        return self._converted

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
        if self._odb is not None:
            return self._object(self._pending.pop())
        if self._proc is None:
            return read_regular(self._staged.pop())
        return self._response(self._proc, None)

    def _object(self, oid: str) -> bytes:
        import pygit2

        assert self._odb is not None
        try:
            return bytes(self._odb.read(oid)[1])
        except (KeyError, ValueError, pygit2.GitError):
            raise RewindError(f"object {oid} is missing from the repository") from None

    def link_target(self, change: Change) -> bytes:
        """A symbolic link's target, as stored."""
        if self._odb is not None:
            return self._object(change.oid or "")
        if self._raw is None:
            self._raw = subprocess.Popen(["git", "cat-file", "--batch"], cwd=self._repo.root,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self._raw.stdin is not None
        self._raw.stdin.write((change.oid or "").encode() + b"\n")
        self._raw.stdin.flush()
        return self._response(self._raw, change.oid)
