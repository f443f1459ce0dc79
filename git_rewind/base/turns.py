"""Agent turns open in this work tree: what attribution reads at every checkpoint.

A turn runs from a session's prompt to its end (Claude Code, Droid and Codex `Stop`, Gemini CLI
`AfterAgent`, OpenCode `session.idle`, Cursor `stop`). The hook keeps one small JSON file per open
turn in .git[/worktrees/X]/rewind/turns/<session>.json; its mtime is the session's last hook call
(touched at every event), so a turn whose agent was interrupted or killed (no end event ever comes)
is told apart from one still working.

Pure file work, no git: the hook pays for this on every call.
"""

from __future__ import annotations

import os

from . import layout, minijson
from .fsutil import write_atomic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .repo import Repo

# A turn whose last hook call is older than this is taken as over (a killed agent sends no end event).
LIVE_SECONDS = 30 * 60.0
# A file written this long after a quiet turn's last hook call was not written by that turn.
SLACK_SECONDS = 2.0
# An open turn file older than this is swept away.
FORGET_SECONDS = 7 * 24 * 3600.0


class Turn:
    """One open turn: whose, which prompt, and the tools its hooks named for each path."""

    __slots__ = ("session", "agent", "prompt", "seq", "started", "last", "tools")

    def __init__(self, session: str, agent: str | None, prompt: str | None, seq: int | None, started: float,
                 last: float | None = None, tools: dict[str, str] | None = None) -> None:
        self.session = session
        self.agent = agent
        self.prompt = prompt
        self.seq = seq  # the prompt checkpoint's seq
        self.started = started
        self.last = last if last is not None else started  # the session's last hook call (the file's mtime)
        self.tools = tools or {}

    def to_json(self) -> dict[str, object]:
        return {"session": self.session, "agent": self.agent, "prompt": self.prompt, "seq": self.seq,
                "started": self.started, "tools": self.tools}

    def live(self, now: float) -> bool:
        """Its agent called a hook recently enough to be still at work."""
        return now - self.last < LIVE_SECONDS

    def wrote(self, mtime: float) -> bool:
        """A file last modified at MTIME may have been written by this turn."""
        return self.started - SLACK_SECONDS <= mtime <= self.last + SLACK_SECONDS


def _dir(repo: Repo) -> str:
    return os.path.join(repo.rewind_dir, layout.TURNS)


def _file(repo: Repo, session: str) -> str:
    return os.path.join(_dir(repo), session + ".json")


def start(repo: Repo, turn: Turn) -> None:
    """SESSION's prompt: its turn is open (a previous one that never ended is replaced)."""
    write_atomic(_file(repo, turn.session), minijson.dumps(turn.to_json()) + "\n", makedirs=True)


def end(repo: Repo, session: str) -> None:
    """SESSION's turn ended."""
    try:
        os.unlink(_file(repo, session))
    except FileNotFoundError:
        pass


def get(repo: Repo, session: str) -> Turn | None:
    """SESSION's open turn, if any."""
    return _read(_file(repo, session))


def touch(repo: Repo, session: str, tool: str | None = None, paths: list[str] | None = None) -> bool:
    """A hook call of SESSION: its open turn (if any) is still at work, and TOOL is about to change PATHS.
    Returns whether the session has an open turn."""
    path = _file(repo, session)
    if tool and paths:
        turn = _read(path)
        if turn is None:
            return False
        new = {p: tool for p in paths if turn.tools.get(p) != tool}
        if new:
            turn.tools.update(new)
            start(repo, turn)
            return True
    try:
        os.utime(path)
    except FileNotFoundError:
        return False
    return True


def _read(path: str) -> Turn | None:
    try:
        last = os.stat(path).st_mtime
        data = minijson.load_file(path)
    except (FileNotFoundError, ValueError):
        return None
    session, agent, prompt = data.get("session"), data.get("agent"), data.get("prompt")
    if not isinstance(session, str):
        return None
    tools = data.get("tools")
    started = data.get("started")
    seq = data.get("seq")
    return Turn(session, agent if isinstance(agent, str) else None, prompt if isinstance(prompt, str) else None,
                seq if isinstance(seq, int) else None,
                float(started) if isinstance(started, (int, float)) else last, last,
                {str(k): str(v) for k, v in tools.items()} if isinstance(tools, dict) else {})


def open_turns(repo: Repo, now: float) -> list[Turn]:
    """Every open turn of this work tree, the most recently started first (very old ones are swept)."""
    try:
        names = os.listdir(_dir(repo))
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        if not name.endswith(".json"):
            continue
        turn = _read(os.path.join(_dir(repo), name))
        if turn is None:
            continue
        if now - turn.last > FORGET_SECONDS:
            end(repo, turn.session)
            continue
        found.append(turn)
    found.sort(key=lambda t: -t.started)
    return found


def running(repo: Repo, now: float) -> list[Turn]:
    """The open turns whose agents are still at work (what an undo asks about first)."""
    return [t for t in open_turns(repo, now) if t.live(now)]


def at_work(repo: Repo, now: float) -> str | None:
    """What a rewind of this work tree would interrupt, in one line (None: no agent is in a turn here):
    `claude-code session 4f9e… is in the middle of a turn (prompt: …, last activity 12 s ago)`."""
    busy = running(repo, now)
    if not busy:
        return None
    parts = []
    for turn in busy:
        idle = max(0, int(now - turn.last))
        ago = f"{idle} s ago" if idle < 60 else f"{idle // 60} min ago"
        prompt = " ".join((turn.prompt or "").split())
        prompt = prompt[:60] + "…" if len(prompt) > 60 else prompt
        session = turn.session[:8] + "…" if len(turn.session) > 9 else turn.session
        parts.append(f"{turn.agent or 'an agent'} session {session} is in the middle of a turn "
                     f"(prompt: {prompt or '?'}, last activity {ago})")
    return "; ".join(parts) + f"; rewinding now may fight with {'it' if len(busy) == 1 else 'them'}"
