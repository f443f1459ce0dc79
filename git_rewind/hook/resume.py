"""Picking up where the work stood: the context a new agent session is given about the newest
earlier checkpoint, its summary, and what changed since.

Runs once per session start, never before a tool call, so it may read every note (through
checkpoints.load_all: no pygit2) and scan the work tree.
"""

from __future__ import annotations

from ..base.clock import age
from ..base.repo import Repo
from ..store import checkpoints

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..base.note import Json, Note
    from ..store.checkpoints import Checkpoint
    from ..store.store import Result

MAX_FILES = 20  # files listed in the context; the rest are counted
_STATUS = {"A": "added", "M": "modified", "D": "deleted", "T": "type changed"}


def context(repo: Repo, taken: Result | None, max_file_size: int,
            before: int | None = None) -> tuple[str | None, dict[str, Json]]:
    """The text a new session is given about the newest earlier checkpoint, and what to log.

    TAKEN is the store's result for this SessionStart's own checkpoint (None when none was
    attempted): a checkpoint it created is not "earlier", and its tree is the tree of now.
    BEFORE: only checkpoints with a lower seq are earlier (the session's first prompt was checkpointed
    before its start hook ran, as Copilot CLI runs the two hooks concurrently).
    """
    from ..store import snapshot

    items = checkpoints.of_worktree(checkpoints.load_all(repo), repo.worktree)  # never another work tree's
    if taken is not None and taken.created:
        items = [c for c in items if c.commit != taken.commit]
    if before is not None:
        items = [c for c in items if c.seq < before]
    if not items:
        return None, {"context": "none: no earlier checkpoint"}
    newest = items[-1]
    now_tree = taken.tree if taken is not None else snapshot.current_tree(repo, max_file_size)
    changed = snapshot.changed_paths(repo, repo.tree_of(newest.commit), now_tree)
    summarised = next((c for c in reversed(items) if c.note.summary), None)
    lines = _banner(newest.note, summarised)
    lines += _changes(newest.seq, changed)
    lines.append(_how_to_rewind(newest.note))
    info = {"context": {"from": newest.seq, "changed": len(changed),
                        "summary": summarised.seq if summarised else None}}
    return "\n".join(lines), info


def _banner(note: Note, summarised: Checkpoint | None) -> list[str]:
    from ..base.summary import headline, render

    what = (headline(note.summary) if note.summary else "") or note.message
    lines = [f"Resumed from checkpoint #{note.seq}: {what} (saved {age(note.created, words=True)})."]
    if summarised is not None:
        source = summarised.note
        if source.seq == note.seq:
            lines.append("Summary saved with it:")
        else:
            lines.append(f"Latest summary, saved with checkpoint #{source.seq} "
                         f"({age(source.created, words=True)}):")
        lines += render(source.summary, indent="  ")
    return lines


def _how_to_rewind(note: Note) -> str:
    """The commands, offering --full only where there is a conversation to rewind with the code."""
    seq = note.seq
    code = f"To rewind: `git rewind undo {seq}` restores the code as it was at #{seq}; "
    if note.conversation is not None:
        code += f"`git rewind undo {seq} --full` restores the code and the conversation; "
    return code + "`git rewind list` shows every checkpoint."


def _changes(seq: int, changed: list[tuple[str, str]]) -> list[str]:
    if not changed:
        return [f"Files changed since #{seq}: none."]
    lines = [f"Files changed since #{seq} ({len(changed)}):"]
    lines += [f"  {_STATUS.get(status, status)} {path}" for status, path in changed[:MAX_FILES]]
    if len(changed) > MAX_FILES:
        lines.append(f"  and {len(changed) - MAX_FILES} more")
    return lines
