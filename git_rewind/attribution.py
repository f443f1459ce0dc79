"""Where each change came from: an agent's turn, or outside (the person, an editor, a formatter, git).

Every checkpoint records, for each path changed since the work tree's previous checkpoint (any
session), its origin in the note's `origins`. The rules, in order:

1. A checkpoint a session's own hook takes during that session's open turn (any event but the
   prompt that opens it): every change is that turn's.
2. While another turn is live (its agent called a hook within turns.LIVE_SECONDS), a checkpoint
   taken by anything else (another session's prompt, `snap`, MCP, an undo's safety checkpoint):
   every change is the agent's, given to the most recently started live turn. Two sessions whose
   turns overlap cannot be told apart by file; the change goes to an agent either way.
3. A turn left open but quiet (interrupted: Claude Code sends no Stop on Esc; or killed): a path
   is that turn's when the file was modified between its prompt and two seconds after its last
   hook call; later changes are the person's.
4. Anything else is `outside`.
Under the minimal tier no prompt or turn end is seen, so origins are not recorded (None: unknown).
"""

from __future__ import annotations

import os

from . import turns
from .note import AGENT, OUTSIDE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .note import Json
    from .repo import Repo

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
    live = [t for t in open_turns if t.live(now) and not (t is own and kind in OPENING_KINDS)]
    if live:
        return dict.fromkeys(changed, AGENT), _turn_json(live[0], changed)
    quiet = [t for t in open_turns if t not in live]
    result: dict[str, str] = {}
    chosen: turns.Turn | None = None
    for path in changed:
        mtime = _mtime(repo.root, path)
        by = next((t for t in quiet if mtime is not None and t.wrote(mtime)), None)
        result[path] = AGENT if by is not None else OUTSIDE
        chosen = chosen or by
    if chosen is None:
        return result, None
    return result, _turn_json(chosen, [p for p, o in result.items() if o == AGENT])


def _turn_json(turn: turns.Turn, paths: list[str]) -> dict[str, Json]:
    tools = {p: turn.tools[p] for p in paths if p in turn.tools}
    return {"session": turn.session, "agent": turn.agent, "prompt": turn.prompt, "seq": turn.seq, "tools": tools}
