"""`git rewind undo` and `redo`: the code, the conversation, or both, with nothing lost.

Order of work for an undo: check the conversation can be rewound (any failure: an error and
nothing changed) → safety checkpoint of the working tree with the transcript's full content
attached (store.Attachments) and what redo needs in its note → restore the code → change the
transcript through the agent module → record the resolved message in the target's note.
"""

from __future__ import annotations

from typing import Any

from . import agents, conversation, restore, store
from .agents.base import Rewinder
from .checkpoints import Checkpoint
from .errors import RewindError
from .repo import Repo
from .snapshot import blob_oid

MODES = ("code", "conversation", "full")


class Result:
    """What an undo or redo did, for the command to print."""

    __slots__ = ("outcome", "applied", "plan", "resume")

    def __init__(self, outcome: restore.Outcome | None, applied: conversation.Applied | None,
                 plan: conversation.Plan | None, resume: str | None) -> None:
        self.outcome = outcome
        self.applied = applied
        self.plan = plan
        self.resume = resume  # the command that resumes the agent's session


def _rewinder(agent: str) -> Rewinder:
    """AGENT's conversation rewind; its refusal, as an error, when it has none."""
    rewinder = agents.get(agent).conversation()
    if isinstance(rewinder, str):  # an agent whose conversation cannot be changed from outside says so plainly
        raise RewindError(rewinder)
    return rewinder


def _agent_rewinder(note: dict[str, Any]) -> Rewinder:
    agent = note.get("agent")
    if agent in agents.NAMES:
        _rewinder(str(agent))  # an agent with no conversation rewind says so first, whatever the note holds
    if not agent or not note.get("conversation"):
        raise RewindError(f"#{note.get('seq')} has no conversation to rewind (taken by {agent or 'hand'}); "
                          "use --code")
    return _rewinder(str(agent))


def resume_hint(note: dict[str, Any]) -> str | None:
    """The agent's resume command for the checkpoint's session, when an agent took it."""
    agent = note.get("agent")
    if not agent or not note.get("session"):
        return None
    try:
        return agents.get(str(agent)).resume_command(str(note["session"]))
    except RewindError:
        return None


def plan_conversation(target: Checkpoint, fork: bool) -> conversation.Plan:
    """The conversation side of an undo, worked out (and checked) before anything changes."""
    return _agent_rewinder(target.note).plan_rewind(target.note, fork)


def _record(plan: conversation.Plan, rewinder: Rewinder) -> dict[str, Any]:
    """What redo needs, kept in the safety checkpoint's note."""
    leaf_before = rewinder.current_leaf(plan.transcript)
    return {
        "agent": plan.agent, "session": plan.session, "transcript": plan.transcript.path,
        "backup": conversation.backup_name(plan.transcript.path),
        "backup_blob": blob_oid(plan.transcript.data), "leaf_before": leaf_before,
        "leaf": plan.leaf, "cut": plan.cut, "fork": plan.fork,
    }


def undo(repo: Repo, target: Checkpoint, mode: str, fork: bool, only: list[str], max_size: int,
         auto_pack: int, plan: conversation.Plan | None = None) -> Result:
    """Rewind to TARGET: MODE is code, conversation or full."""
    if mode not in MODES:
        raise RewindError(f"unknown mode {mode} (one of {', '.join(MODES)})")
    if mode != "code" and plan is None:
        plan = plan_conversation(target, fork)
    record = attachments = None
    rewinder = None
    if plan is not None:
        rewinder = _rewinder(plan.agent)
        record = _record(plan, rewinder)
        attachments = store.Attachments(
            f"transcript of {plan.agent} session {plan.session} before the rewind to #{target.seq}",
            {str(record["backup"]): plan.transcript.data})
    outcome = restore.rewind(repo, target, only, max_size, trigger="pre-rewind", auto_pack=auto_pack,
                             code=mode in ("code", "full"), mode=mode,
                             conversation=record, attachments=attachments)
    applied = None
    if plan is not None and rewinder is not None:
        try:
            applied = rewinder.apply_rewind(plan)
        except RewindError as exc:  # e.g. the agent wrote to its transcript meanwhile: say what did happen
            done = "the working tree was rewound, " if mode == "full" and outcome.safety is not None else ""
            raise RewindError(f"{exc}; {done}the conversation was not (safety checkpoint "
                              f"#{outcome.safety.seq if outcome.safety else '?'}): run the undo again "
                              "with --conversation once the agent is idle") from None
        _remember_message(repo, target, plan)
    resume = applied.resume if applied else resume_hint(target.note)
    return Result(outcome, applied, plan, resume)


def _remember_message(repo: Repo, target: Checkpoint, plan: conversation.Plan) -> None:
    """Record the message the checkpoint resolved to, so later rewinds need no search."""
    conv = dict(target.note.get("conversation") or {})
    if not plan.target_uuid or conv.get("message_uuid") == plan.target_uuid:
        return
    conv["message_uuid"] = plan.target_uuid
    target.note["conversation"] = conv
    store.update_note(repo, target.commit, target.note)


def backup_of(repo: Repo, safety: Checkpoint) -> bytes | None:
    """The transcript a rewind attached to its safety checkpoint (the commit's second parent)."""
    info = (safety.note.get("rewind") or {}).get("conversation") or {}
    name = info.get("backup")
    if not name:
        return None
    from .gitcmd import GitError

    # Its second parent; the first when gc kept it as the oldest checkpoint of its session.
    for parent in (f"{safety.commit}^2", f"{safety.commit}^1"):
        try:
            if repo.git(["log", "-1", "--format=%s", parent]).startswith(b"transcript of "):
                return repo.git(["cat-file", "blob", f"{parent}:{name}"])
        except GitError:
            continue
    return None


def redo(repo: Repo, max_size: int, auto_pack: int) -> Result:
    """Reverse the newest undo: its code (as it undid it) and its conversation."""
    target = restore.safety_for_redo(repo)
    record = target.note.get("rewind") or {}
    mode = str(record.get("mode") or "code")
    only = list(record.get("only") or [])
    info = record.get("conversation")
    rewinder = _rewinder(str(info["agent"])) if info else None
    attachments = None
    redo_record = None
    if info and rewinder is not None and not info.get("fork"):
        try:
            current = conversation.Transcript.load(info.get("transcript"))
        except RewindError:
            current = None
        if current is not None:
            attachments = store.Attachments(f"transcript of {info['agent']} session {info.get('session')} before "
                                            f"the redo to #{target.seq}",
                                            {conversation.backup_name(current.path): current.data})
            redo_record = {**info, "backup": conversation.backup_name(current.path),
                           "backup_blob": blob_oid(current.data),
                           "leaf_before": rewinder.current_leaf(current)}
    outcome = restore.rewind(repo, target, only, max_size, trigger="pre-redo", auto_pack=auto_pack,
                             code=mode in ("code", "full"), mode=mode, conversation=redo_record,
                             attachments=attachments)
    applied = None
    if info and rewinder is not None:
        applied = rewinder.apply_redo(info, backup_of(repo, target))
    resume = applied.resume if applied else resume_hint(target.note)
    return Result(outcome, applied, None, resume)
