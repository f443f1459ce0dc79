"""`git rewind undo` and `redo`: the code, the conversation, or both, with nothing lost.

Order of work for an undo: check the conversation can be rewound, its transcript read only
through the agent's `Place` (its own folders, its format; any failure: an error and nothing
changed) → safety checkpoint of the working tree with the transcript's full content attached
(store.Attachments) and what redo needs in its note → restore the code → change the transcript
through the agent module and its Place → record the resolved message in the target's note.
"""

from __future__ import annotations

from .. import agents
from ..base import turns
from ..base.errors import CODE_ONLY, RewindError
from ..base.note import ConversationRecord, Note, Oid, RewindRecord, mode_of
from ..base.repo import Repo
from ..store import checkpoints, store
from ..store.checkpoints import Checkpoint
from ..store.snapshot import blob_oid
from . import restore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..agents import conversation  # (a code undo has no conversation: nor its module's imports)
    from ..agents.base import Rewinder
    from ..base.note import Mode


class Result:
    """What an undo or redo did, for the command to print."""

    __slots__ = ("outcome", "applied", "plan", "resume", "since")

    def __init__(self, outcome: restore.Outcome | None, applied: conversation.Applied | None,
                 plan: conversation.Plan | None, resume: str | None, since: Since | None = None) -> None:
        self.outcome = outcome
        self.applied = applied
        self.plan = plan
        self.resume = resume  # the command that resumes the agent's session
        self.since = since  # the commits the branch keeps: an undo restores files, never HEAD


class Since:
    """The commits made on top of the HEAD a checkpoint was taken at (an agent such as Aider commits its own
    edits): an undo of the files leaves them on the branch, and says what the person may run about them."""

    __slots__ = ("seq", "old", "new", "branch", "count", "shown")
    SHOWN = 5  # commits listed; the others are counted

    def __init__(self, seq: int, old: str, new: str, branch: str | None, count: int,
                 shown: list[tuple[str, str, str | None]]) -> None:
        self.seq = seq  # the checkpoint's
        self.old = old  # the target's HEAD, abbreviated as git does (unique)
        self.new = new  # HEAD now, abbreviated
        self.branch = branch  # None: a detached HEAD
        self.count = count  # commits in old..new
        self.shown = shown  # newest first: (abbreviated id, subject, the agent that made it or None)


def commits_since(repo: Repo, note: Note, head_now: tuple[str | None, str | None],
                  items: list[Checkpoint] | None = None) -> Since | None:
    """The commits HEAD gained since NOTE's checkpoint (None: HEAD is where it was, went elsewhere, or git could
    not tell). Each is marked with the agent that made it: a note's `commits` (git rewind watch records them)
    or the agent's own mark on the commit (Agent.made_commit). ITEMS: the checkpoints, when already loaded."""
    from ..base.gitcmd import GitError

    head, branch = head_now
    old = note.head
    if not old or not head or old == head:
        return None
    try:
        repo.git(["merge-base", "--is-ancestor", old, head])
        count = int(repo.git(["rev-list", "--count", f"{old}..{head}"]).decode().strip() or 0)
        out = repo.git(["log", f"-n{Since.SHOWN}", "--format=%H%x00%h%x00%cn%x00%an%x00%s%x00%B%x1e",
                        f"{old}..{head}"]).decode("utf-8", "replace")
        short_old = repo.git(["rev-parse", "--short", old]).decode().strip()
        short_new = repo.git(["rev-parse", "--short", head]).decode().strip()
    except (GitError, ValueError):
        return None
    if count <= 0:
        return None
    recorded: dict[str, str] = {}
    for item in items if items is not None else checkpoints.load_all(repo):
        made = item.note.extra.get("commits")
        if isinstance(made, list) and item.note.agent:
            recorded.update({str(oid): item.note.agent for oid in made})
    shown: list[tuple[str, str, str | None]] = []
    for record in out.split("\x1e"):
        fields = record.strip("\n").split("\0")
        if len(fields) < 6:
            continue
        oid, short, committer, author, subject, message = fields[:6]
        by = recorded.get(oid) or next((name for name in agents.NAMES
                                        if agents.get(name).made_commit(committer, author, message)), None)
        shown.append((short, subject, by))
    return Since(note.seq, short_old, short_new, branch, count, shown)


# what a bare `undo` goes back to ---------------------------------------------------------------------------


class Bare:
    """What a bare `undo` restores, and why that checkpoint (for the preview's line naming it)."""

    __slots__ = ("target", "why")

    def __init__(self, target: Checkpoint, why: str) -> None:
        self.target = target
        self.why = why  # "the start of the newest agent turn", "one turn further back", …


def turn_starts(items: list[Checkpoint]) -> list[Checkpoint]:
    """Where the agent turns among ITEMS (one work tree's checkpoints, oldest first) began: each prompt
    checkpoint, and each `watch` run's start checkpoint (a run whose tree had not changed takes none: it began
    at the checkpoint before its first one)."""
    found: list[Checkpoint] = []
    watched: set[str] = set()
    previous: Checkpoint | None = None
    for item in items:
        if item.note.safety:
            continue
        note = item.note
        start: Checkpoint | None = None
        if "prompt" in note.tags or (note.trigger == "watch" and note.message.startswith("watch start")):
            start = item
        elif note.trigger == "watch" and note.session not in watched:
            start = previous
        if note.trigger == "watch":
            watched.add(note.session)
        if start is not None and (not found or found[-1].seq < start.seq):
            found.append(start)
        previous = item
    return found


def reached(items: list[Checkpoint]) -> Checkpoint | None:
    """Where a run of undos stands in ITEMS (one work tree's, oldest first): the checkpoint the newest plain undo
    of the whole tree restored, when only undos and redos came after it. A redo goes back to before its undo,
    so to where the checkpoint before that undo's stood. None: at the newest state (a checkpoint came since)."""
    index = {c.seq: i for i, c in enumerate(items)}
    at = len(items) - 1
    while at >= 0:
        note = items[at].note
        record = note.rewind
        if record is None or record.to is None:
            return None
        if note.trigger == "pre-redo":
            back = index.get(record.to)
            if back is None:
                return None
            at = back - 1
            continue
        whole = note.trigger == "pre-rewind" and record.code and not record.only and "kind" not in record.extra
        found = index.get(record.to) if whole else None
        return items[found] if found is not None else None
    return None


def bare_target(repo: Repo, items: list[Checkpoint], worktree: str | None, now: float) -> Bare:
    """What a bare `undo` restores in WORKTREE (ITEMS: every checkpoint): the start of the newest agent turn
    that changed a file (or is still open), or, right after an undo, of the turn before the one it restored,
    as an editor's undo steps back; with no turn recorded (the minimal tier, `snap` alone), the newest
    checkpoint that is not a safety checkpoint, and the one before it when undone again."""
    mine = checkpoints.of_worktree(items, worktree)
    stand = reached(mine)
    starts = turn_starts(mine)
    if not starts:
        plain = [c for c in mine if not c.note.safety and (stand is None or c.seq < stand.seq)]
        if plain:
            return Bare(plain[-1], f"the checkpoint before {stand.label}, where the last undo went" if stand
                        else "the newest checkpoint that is not a safety checkpoint (no agent turn recorded)")
        if stand is None:
            return Bare(checkpoints.latest_work(repo, worktree, items), "")  # its error says why there is none
        raise _nothing_further(stand, "the oldest checkpoint here")
    open_ = {t.seq for t in turns.open_turns(repo, now)} if worktree == repo.worktree else {s.seq for s in starts}
    earlier = [s for s in starts if stand is None or s.seq < stand.seq]
    for start in reversed(earlier):
        if start.seq in open_ or _changed_in_turn(repo, mine, starts, start):
            if stand is not None:
                return Bare(start, f"one turn further back than {stand.label}, where the last undo went")
            return Bare(start, "the start of the newest agent turn"
                        + (" (still running)" if start.seq in open_ else ""))
    if stand is not None:
        raise _nothing_further(stand, "the start of the oldest agent turn here that changed a file")
    raise RewindError("nothing to undo: no agent turn in this work tree changed a file; git rewind undo ID "
                      "restores a checkpoint all the same (git rewind list)")


def _nothing_further(stand: Checkpoint, what: str) -> RewindError:
    return RewindError(f"nothing further back: {stand.label}, where the last undo went, is {what}; "
                       "git rewind redo goes forward again, and git rewind undo ID restores any checkpoint "
                       "(git rewind list)")


def _changed_in_turn(repo: Repo, items: list[Checkpoint], starts: list[Checkpoint], start: Checkpoint) -> bool:
    """A checkpoint of the turn START began (up to the next turn's start) holds another tree than START."""
    from .takeback import trees

    after = next((s.seq for s in starts if s.seq > start.seq), None)
    span = [c for c in items if c.seq >= start.seq and (after is None or c.seq < after) and not c.note.safety]
    tree_of = trees(repo, [c.commit for c in span])
    return len({tree_of.get(c.commit) for c in span}) > 1


def changed_outside(repo: Repo, items: list[Checkpoint], target: Checkpoint, current_tree: Oid,
                    touched: set[str]) -> list[str]:
    """Which of TOUCHED (the paths an undo to TARGET writes or removes) were changed since TARGET from outside
    any agent turn, as the notes' origins (and, for what changed since the newest checkpoint, attribution now)
    say: what the person would lose from the work tree (the safety checkpoint keeps it). Empty when no agent
    changed anything since TARGET: then there is nothing to tell apart."""
    from ..base.note import AGENT, OUTSIDE
    from .takeback import differs, steps, trees

    if not touched:
        return []
    chain = [c for c in items if c.seq >= target.seq]
    history = steps(repo, items, target, None, current_tree)
    undone = {c.commit: record.to_commit for c in chain
              if (record := c.note.rewind) is not None and record.code and not record.only and record.to_commit}
    restored = trees(repo, sorted(set(undone.values())))
    found: set[str] = set()
    agents = False
    for before, step in zip(chain, history, strict=False):
        origins = step.origins or {}
        agents = agents or AGENT in origins.values()
        outside = {path for path, origin in origins.items() if origin == OUTSIDE}
        back = restored.get(str(undone.get(before.commit)))
        if outside and back is not None:  # after a rewind: what it wrote is not anyone's edit, what differs is
            outside &= differs(repo, back, step.after, sorted(outside))
        found |= outside
    return sorted(found & touched) if agents else []  # no agent change: nothing an agent-only undo would keep


def _rewinder(agent: str) -> Rewinder:
    """AGENT's conversation rewind; its refusal, as an error, when it has none."""
    rewinder = agents.get(agent).conversation()
    if isinstance(rewinder, str):  # an agent whose conversation cannot be changed from outside says so plainly
        raise RewindError(rewinder, remedy=CODE_ONLY)
    return rewinder


def _agent_rewinder(note: Note) -> Rewinder:
    agent = note.agent
    if agent in agents.NAMES:
        _rewinder(agent)  # an agent with no conversation rewind says so first, whatever the note holds
    if not agent or note.conversation is None:
        raise RewindError(f"#{note.seq} has no conversation to rewind (taken by {agent or 'hand'})", remedy=CODE_ONLY)
    return _rewinder(agent)


def resume_hint(note: Note) -> str | None:
    """The agent's resume command for the checkpoint's session, when an agent took it."""
    if not note.agent or not note.session:
        return None
    try:
        return agents.get(note.agent).resume_command(note.session)
    except RewindError:
        return None


def plan_conversation(target: Checkpoint, fork: bool, repo: Repo | None = None) -> conversation.Plan:
    """The conversation side of an undo, worked out (and checked) before anything changes. REPO: where to look,
    when the checkpoint's place is no longer in the transcript, for an undo that already cut it there."""
    rewinder = _agent_rewinder(target.note)
    place = agents.get(str(target.note.agent)).transcripts()
    try:
        plan = rewinder.plan_rewind(target.note, fork, place)
    except RewindError:
        stands = _cut_there(repo, target, place, rewinder) if repo is not None and not fork else None
        if stands is None:
            raise
        return stands
    if plan.transcript.place not in (place, None):  # None: no file, what the agent's server answered
        raise RewindError(f"{plan.transcript.path} was not read as a {place.what}; nothing was changed")
    return plan


def _cut_there(repo: Repo, target: Checkpoint, place: conversation.Place,
               rewinder: Rewinder) -> conversation.Plan | None:
    """A plan with nothing to cut when the transcript already is what the newest conversation undo of that file
    left (for an agent that cuts its file in place: rewinder.cut_leaves), and that undo went to TARGET: the same
    undo again, or the next one after an undo killed once its cut was written (its safety checkpoint and backup
    were made first). None when that is not so: the refusal stands."""
    from ..agents.conversation import Plan, Transcript

    path = target.note.position.transcript
    if rewinder.cut_leaves is None:
        return None
    try:
        current = place.load_if_present(path)
        if current is None:
            return None
        real = place.resolve(path)
        for item in reversed(checkpoints.load_all(repo)):
            record = item.note.rewind
            if record is None or record.conversation is None:
                continue
            info = record.conversation
            if info.fork or not info.transcript or place.resolve(info.transcript) != real:
                continue
            if record.to_commit != target.commit or info.cut is None:
                return None  # the newest cut of this file went elsewhere
            backup = backup_of(repo, item)
            if backup is None:
                return None
            if rewinder.cut_leaves(Transcript(info.transcript, backup), info.cut) != current.data:
                return None
            plan = Plan(str(target.note.agent), str(info.session or target.note.session or ""), current)
            plan.already = item.seq
            return plan
    except (RewindError, IndexError):  # (a cut past the backup's end: a note no undo wrote)
        return None
    return None


def plan_handover(repo: Repo, target: Checkpoint, raw: bytes | None,
                  fork: bool) -> tuple[Checkpoint, conversation.Plan]:
    """A fetched TARGET's conversation (RAW, as pushed) written where this machine's agent looks (handoff.py), and
    its rewind planned: the checkpoint naming that file, and the plan. A plan that fails removes the file it
    wrote, so nothing is left changed."""
    from ..sharing import handoff

    adopted = handoff.write(repo, target, raw)
    local = handoff.adopted_checkpoint(target, raw or b"", adopted)
    try:
        return local, plan_conversation(local, fork)
    except BaseException:
        adopted.discard()
        raise


def describe(plan: conversation.Plan) -> str:
    """The conversation side of an undo in one line, for the preview."""
    if plan.already is not None:
        return f"conversation: {_already(plan)}"
    where = "as a new session (--fork)" if plan.fork else f"in {plan.transcript.path}"
    kept = ": nothing of it is kept" if plan.empty else ""
    return f"conversation: cut {plan.where}{kept}, {where}"


def _already(plan: conversation.Plan) -> str:
    return (f"already cut there by the undo of safety checkpoint #{plan.already}, "
            f"nothing to cut in {plan.transcript.path}")


def _stands(plan: conversation.Plan, target: Checkpoint) -> conversation.Applied:
    """What an undo to where the conversation already stands did to it: nothing, in words."""
    from ..agents.conversation import Applied

    return Applied(plan.session, resume_hint(target.note) or "", plan.transcript.path, f"conversation {_already(plan)}")


def _record(repo: Repo, plan: conversation.Plan, rewinder: Rewinder) -> ConversationRecord:
    """What redo needs, kept in the safety checkpoint's note."""
    from ..agents import conversation

    return ConversationRecord(
        plan.agent, plan.session, plan.transcript.path, backup=conversation.backup_name(plan.transcript.path),
        backup_blob=Oid(blob_oid(plan.transcript.data, repo.object_format)),
        leaf_before=rewinder.current_leaf(plan.transcript), leaf=plan.leaf, cut=plan.cut, fork=plan.fork)


def undo(repo: Repo, target: Checkpoint, mode: Mode, fork: bool, only: list[str], max_size: int,
         auto_pack: int, plan: conversation.Plan | None = None, cwd: str | None = None,
         retarget: restore.Retarget | None = None, kind: str | None = None,
         by: str | None = None, patch: bool = False, handed: bytes | None = None,
         expect: Callable[[restore.Plan], None] | None = None) -> Result:
    """Rewind to TARGET: MODE is code, conversation or full. ONLY: git pathspecs, read from CWD (default:
    the work tree's root). RETARGET: the files go to a tree made from the current one instead of TARGET's
    (takeback.Planner: an agent-only undo, a revert; KIND names it in the safety checkpoint's record).
    BY: the agent session asking (through MCP), which is not told about it.
    PATCH: the code hunk by hunk on the terminal (patch.patch), not all of it.
    A fetched TARGET's conversation is first handed over (handoff.py): HANDED, its transcript as pushed
    (default: share.transcript_of); PLAN, when given, is plan_handover's, for the checkpoint it returned.
    EXPECT: restore.rewind's check of the plan before anything changes (a two-phase restore's token)."""
    try:
        mode = mode_of(mode)  # callers outside the type checker (MCP) pass strings
    except ValueError as exc:
        raise RewindError(str(exc)) from None
    if mode != "code" and plan is None and target.source is not None:
        from ..sharing import handoff

        if patch and mode == "conversation":  # refused before the handover writes anything
            raise RewindError("--patch chooses hunks of the code: it does not go with --conversation")
        if patch:
            from . import patch as hunks

            hunks.need_terminal()
        raw = handed if handed is not None else handoff.transcript_of(repo, target)
        target, plan = plan_handover(repo, target, raw, fork)
    if mode != "code" and plan is None:
        plan = plan_conversation(target, fork, repo)
    record = attachments = None
    rewinder = None
    if plan is not None and plan.already is None:  # (a conversation already there is not changed: no backup)
        rewinder = _rewinder(plan.agent)
        record = _record(repo, plan, rewinder)
        attachments = store.Attachments(
            f"transcript of {plan.agent} session {plan.session} before the rewind to {target.label}",
            {str(record.backup): plan.transcript.data})
    if patch and mode == "conversation":
        raise RewindError("--patch chooses hunks of the code: it does not go with --conversation")
    if patch:
        from . import patch as hunks
        hunks.need_terminal()  # before anything is looked at
    if mode == "conversation" and plan is not None and plan.already is not None:  # nothing to change, or save
        stands = _stands(plan, target)
        return Result(None, stands, plan, stands.resume or None)
    try:
        if patch:
            outcome = hunks.patch(repo, target, only, max_size, auto_pack, cwd, mode=mode, conversation=record,
                                  attachments=attachments, retarget=retarget, kind=kind)
        else:
            outcome = restore.rewind(repo, target, only, max_size, trigger="pre-rewind", auto_pack=auto_pack,
                                     code=mode in ("code", "full"), mode=mode,
                                     conversation=record, attachments=attachments, cwd=cwd, retarget=retarget,
                                     kind=kind, by=by, expect=expect)
    except restore.Incomplete as exc:
        if plan is not None:  # the conversation is left where it is until the files are right
            raise restore.Incomplete(exc.target, exc.safety, exc.problems,
                                     after="the conversation was not rewound") from None
        raise
    applied = None
    if plan is not None and plan.already is not None:
        applied = _stands(plan, target)
    elif plan is not None and rewinder is not None:
        try:
            applied = rewinder.apply_rewind(plan)
        except RewindError as exc:  # e.g. the agent wrote to its transcript meanwhile: say what did happen
            done = "the working tree was rewound, " if mode == "full" and outcome.safety is not None else ""
            raise RewindError(f"{exc}; {done}the conversation was not (safety checkpoint "
                              f"#{outcome.safety.seq if outcome.safety else '?'}): run the undo again "
                              "with --conversation once the agent is idle") from None
        if target.source is None:  # a fetched checkpoint's note is the sender's: never written here
            _remember_message(repo, target, plan)
    # A fetched checkpoint's session is the sender's: nothing to resume here unless it was handed over.
    resume = applied.resume if applied else resume_hint(target.note) if target.source is None else None
    since = None
    if mode != "conversation" and retarget is None and outcome.safety is not None:
        since = commits_since(repo, target.note, outcome.plan.head_now)
    return Result(outcome, applied, plan, resume, since)


def _remember_message(repo: Repo, target: Checkpoint, plan: conversation.Plan) -> None:
    """Record the message the checkpoint resolved to, so later rewinds need no search."""
    conv = target.note.conversation
    if conv is None or not plan.target_uuid or conv.message_uuid == plan.target_uuid:
        return
    uuid = plan.target_uuid

    def remember(note: Note) -> None:
        if note.conversation is not None:
            note.conversation.message_uuid = uuid

    target.note = store.update_note(repo, target.commit, remember, "the conversation's message recorded")


def backup_of(repo: Repo, safety: Checkpoint) -> bytes | None:
    """The transcript a rewind attached to its safety checkpoint (the commit's second parent)."""
    record = safety.note.rewind
    name = record.conversation.backup if record is not None and record.conversation is not None else None
    if not name:
        return None
    from ..base.gitcmd import GitError

    # Its second parent; the first when gc kept it as the oldest checkpoint of its session.
    for parent in (f"{safety.commit}^2", f"{safety.commit}^1"):
        try:
            if repo.git(["log", "-1", "--format=%s", parent]).startswith(b"transcript of "):
                return repo.git(["cat-file", "blob", f"{parent}:{name}"])
        except GitError:
            continue
    return None


class RedoPlan:
    """What `redo` would reverse: the safety checkpoint on top of the redo stack, what that rewind recorded,
    and how many redos there are in all."""

    __slots__ = ("target", "record", "depth")

    def __init__(self, target: Checkpoint, record: RewindRecord, depth: int = 1) -> None:
        self.target = target
        self.record = record
        self.depth = depth  # redos available, this one included

    @property
    def description(self) -> str | None:
        """The conversation side in one line, for the preview (None: the undo left it alone)."""
        info = self.record.conversation
        return f"conversation: back as it was before the rewind, in {info.transcript}" if info else None


def redo_stack(repo: Repo) -> list[Checkpoint]:
    """This work tree's redo stack, the next redo last (checkpoints.redo_stack)."""
    return checkpoints.redo_stack(checkpoints.of_worktree(checkpoints.load_all(repo), repo.worktree))


def plan_redo(repo: Repo) -> RedoPlan:
    """The top of this work tree's redo stack, and its record (an old note without one: a code undo)."""
    stack = redo_stack(repo)
    if not stack:
        raise RewindError("nothing to redo: no rewind to reverse in this "
                          + ("repository" if repo.worktree is None else "work tree")
                          + " (each redo reverses one undo, newest first)")
    target = stack[-1]
    return RedoPlan(target, target.note.rewind or RewindRecord(None, None, [], "code"), len(stack))


def redo(repo: Repo, max_size: int, auto_pack: int, plan: RedoPlan | None = None, by: str | None = None) -> Result:
    """Reverse the rewind on top of the redo stack: the code (as it undid it) and its conversation, back as
    they were before it. What is there now goes into the redo's own safety checkpoint (`pre-redo`, whose
    record names the checkpoint it went back to), which pops the stack and can itself be undone."""
    from ..agents import conversation

    plan = plan or plan_redo(repo)
    target, record = plan.target, plan.record
    info = record.conversation
    rewinder = _rewinder(info.agent) if info else None
    place = agents.get(info.agent).transcripts() if info else None
    attachments = None
    redo_record = None
    if info and rewinder is not None and place is not None and not info.fork:
        # Before anything changes: a path that is not the agent's transcript is refused here.
        current = place.load_if_present(info.transcript)
        if current is not None:
            attachments = store.Attachments(f"transcript of {info.agent} session {info.session} before "
                                            f"the redo to #{target.seq}",
                                            {conversation.backup_name(current.path): current.data})
            redo_record = ConversationRecord.from_json(info.to_json())
            assert redo_record is not None
            redo_record.backup = conversation.backup_name(current.path)
            redo_record.backup_blob = Oid(blob_oid(current.data, repo.object_format))
            redo_record.leaf_before = rewinder.current_leaf(current)
    outcome = restore.rewind(repo, target, restore.literal(record.only), max_size, trigger="pre-redo",
                             auto_pack=auto_pack,
                             code=record.code, mode=record.mode, conversation=redo_record,
                             attachments=attachments, by=by)
    applied = None
    if info and rewinder is not None and place is not None:
        applied = rewinder.apply_redo(info, backup_of(repo, target), place)
    resume = applied.resume if applied else resume_hint(target.note)
    return Result(outcome, applied, None, resume)
