"""Handing a session over: a fetched checkpoint's conversation written where this machine's agent looks.

`git rewind undo ID --full` with ID fetched from another machine (`<remote>/<sync_name>/<seq>`) restores
its code like any undo, and needs the conversation as a file of this machine's agent first. The transcript
comes as the sender pushed it (redacted, `share.transcript_of`); where it goes is decided here and in the
agent module, never by the note or the sender: the note's transcript path is null once shared, and any
path the sender's copy names is ignored. The agent computes its own file for this clone's root and session
(Agent.adopt_transcript), rewrites the fields it keys a project by (Claude Code's `cwd`…), and writes only
through its Place. A file of that session already here (the session handed back to the machine it came
from, or handed over twice) is never replaced: kept when it already holds the conversation, extended when
the conversation only went on, else the handed-over one is written as a new session (a fork), so the
local one stays byte for byte and both can be resumed. The returned checkpoint names the written file,
and undo's own conversation rewind (cut at the checkpoint's position, backup in git) runs unchanged.
"""

from __future__ import annotations

from .. import agents
from ..base.errors import CODE_ONLY, RewindError
from ..store.checkpoints import Checkpoint

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..agents.conversation import Adopted
    from ..base.repo import Repo


def transcript_of(repo: Repo, target: Checkpoint) -> bytes | None:
    """The transcript TARGET's session was pushed with (None: pushed without its conversation)."""
    from . import share

    return share.transcript_of(repo, target)


def _agent_of(target: Checkpoint) -> str:
    """The agent whose conversation TARGET records, after the checks that need nothing from the sender."""
    note = target.note
    agent = note.agent
    if not agent or note.conversation is None:
        raise RewindError(f"{target.ident} has no conversation to hand over (taken by {agent or 'hand'})",
                          remedy=CODE_ONLY)
    if agent not in agents.NAMES:
        raise RewindError(f"{target.ident} was taken by {agent}, an agent this git-rewind does not know",
                          remedy=CODE_ONLY)
    return agent


def prepare(repo: Repo, target: Checkpoint, raw: bytes | None, home: str | None = None,
            environ: Mapping[str, str] | None = None) -> Adopted:
    """Where TARGET's conversation (RAW, as pushed) would go on this machine, every check done, nothing written."""
    return _adopt(repo, target, raw, home, environ, write=False)


def _adopt(repo: Repo, target: Checkpoint, raw: bytes | None, home: str | None,
           environ: Mapping[str, str] | None, write: bool) -> Adopted:
    from ..base.repo import check_session

    agent = _agent_of(target)
    refusal = agents.get(agent).handover_refusal()
    if refusal is not None:
        raise RewindError(refusal, remedy=CODE_ONLY)
    check_session(target.note.session)  # before anything is said of its transcript: the id is the sender's
    if raw is None:
        shared = target.note.extra.get("shared")
        by = shared.get("by") if isinstance(shared, dict) else None
        raise RewindError(f"{target.ident} was pushed without its conversation (git rewind push "
                          f"--with-conversation{' on ' + str(by) if by else ''}); nothing was changed",
                          remedy=CODE_ONLY)
    return agents.get(agent).adopt_transcript(raw, target.note.session, repo.root, home, environ, write=write)


def write(repo: Repo, target: Checkpoint, raw: bytes | None, home: str | None = None,
          environ: Mapping[str, str] | None = None) -> Adopted:
    """Write TARGET's conversation (RAW, as pushed) where this machine's agent looks; what was done."""
    return _adopt(repo, target, raw, home, environ, write=True)


def adopt(repo: Repo, target: Checkpoint, raw: bytes | None, home: str | None = None,
          environ: Mapping[str, str] | None = None) -> Checkpoint:
    """Write TARGET's conversation (RAW, as pushed) where this machine's agent looks, and return TARGET with its
    note naming that file: what undo's conversation rewind reads. Never written into refs/notes/rewind."""
    return adopted_checkpoint(target, raw or b"", write(repo, target, raw, home, environ))


def adopted_checkpoint(target: Checkpoint, raw: bytes, adopted: Adopted) -> Checkpoint:
    """TARGET with its conversation at ADOPTED's file: a copy of its note (the fetched one is left alone), the
    transcript path and session this machine's, the hook's offset moved to the same line of the written file."""
    from ..agents.conversation import Transcript
    from ..base.note import Note

    note = Note.from_json(target.note.to_json())
    assert note is not None and note.conversation is not None
    position = note.conversation
    position.transcript = adopted.path
    note.session = adopted.session
    if isinstance(position.offset, int):  # bytes of the pushed file; the written one's lines differ in length
        from ..base.fsutil import read_regular

        whole = Transcript(adopted.path, read_regular(adopted.path, nofollow=True))
        lines = position.extra.pop("lines", None)  # counted on the sender's own file when it was pushed
        count = lines if isinstance(lines, int) else Transcript("pushed", raw).lines_within(position.offset)
        position.offset = whole.ends[count - 1] if 0 < count <= len(whole.ends) else 0
    return Checkpoint(target.commit, note, target.note_blob, target.source)


def describe(target: Checkpoint, adopted: Adopted) -> str:
    """The handover in one line, for the preview."""
    what = {"written": "would be written to", "kept": "is already at", "extended": "would extend",
            "forked": "would be written, as new session " + adopted.session + ", to"}[adopted.how]
    return f"conversation: handed over from {target.source}: {what} {adopted.path}, then cut at the checkpoint"
