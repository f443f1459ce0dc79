"""Where each change came from: an agent's turn, or outside (the person, an editor, a formatter, git).

Every checkpoint records, for each path changed since the work tree's previous checkpoint (any
session), its origin in the note's `origins`. The rules, in order:

1. A checkpoint a session's own hook takes during that session's open turn (any event but the
   prompt that opens it): every change is that turn's.
2. Any other checkpoint (another session's prompt or tool, `snap`, MCP, an undo's safety checkpoint,
   the same session's next prompt after an interrupted turn): a path is an open turn's when its file
   was modified between that turn's prompt and two seconds after its last hook call (the most
   recently started such turn); otherwise it is `outside`. So what the person changes after an
   interrupted turn (Claude Code sends no Stop on Esc) is theirs at once, and of two sessions
   whose turns overlap each claims what was written while it worked. The doubtful case errs
   towards `outside`: an agent's file written long after its last hook call (a long shell command
   seen by someone else's checkpoint) is kept by an agent-only undo, never a person's edit taken.
Under the minimal tier no prompt or turn end is seen, so origins are not recorded (None: unknown).
"""

from __future__ import annotations

import os

from ..base import turns
from ..base.note import AGENT, OUTSIDE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..base.note import Json
    from ..base.repo import Repo

# Hook event kinds that open a turn or come before any: their checkpoint holds no change of the session's own.
OPENING_KINDS = ("prompt", "session_start")


def _mtime(root: str, path: str) -> float | None:
    """When PATH last changed: its own mtime, or (gone) its nearest remaining directory's."""
    full = os.path.join(root, path)
    while True:
        try:
            return os.lstat(full).st_mtime
        except OSError:
            parent = os.path.dirname(full)
            if parent == full or len(parent) < len(root):
                return None
            full = parent


def origins(repo: Repo, session: str, kind: str | None, changed: list[str],
            now: float) -> tuple[dict[str, str], dict[str, Json] | None]:
    """(origin of each CHANGED path, the turn its agent changes belong to) for a checkpoint of SESSION
    taken on a hook event of KIND (None: not by a hook)."""
    if not changed:
        return {}, None
    open_turns = turns.open_turns(repo, now)
    if not open_turns:
        return dict.fromkeys(changed, OUTSIDE), None
    own = next((t for t in open_turns if t.session == session), None)
    if own is not None and kind is not None and kind not in OPENING_KINDS:
        return dict.fromkeys(changed, AGENT), _turn_json(own, changed)
    result: dict[str, str] = {}
    chosen: turns.Turn | None = None
    for path in changed:
        mtime = _mtime(repo.root, path)
        by = next((t for t in open_turns if mtime is not None and t.wrote(mtime)), None)
        result[path] = AGENT if by is not None else OUTSIDE
        chosen = chosen or by
    if chosen is None:
        return result, None
    return result, _turn_json(chosen, [p for p, o in result.items() if o == AGENT])


def _turn_json(turn: turns.Turn, paths: list[str]) -> dict[str, Json]:
    tools = {p: turn.tools[p] for p in paths if p in turn.tools}
    found: dict[str, Json] = {"session": turn.session, "agent": turn.agent, "prompt": turn.prompt, "seq": turn.seq,
                              "tools": tools}
    if turn.model is not None:
        found["model"] = turn.model
    return found
