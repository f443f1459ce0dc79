"""Agent turns open in this work tree: what attribution reads at every checkpoint.

A turn runs from a session's prompt to its end (Claude Code, Droid and Codex `Stop`, Gemini CLI
`AfterAgent`, OpenCode `session.idle`, Cursor `stop`). The hook keeps one small JSON file per open
turn in .git[/worktrees/X]/rewind/turns/<session>.json; its mtime is the session's last hook call
(touched at every event), so a turn whose agent was interrupted or killed (no end event ever comes)
is told apart from one still working: a turn is over once no hook call came for `turn_timeout_minutes`
(default 10), or once its agent's process is gone. That process is the hook's parent (hooks are the
agent's children; a shell between them, as `sh -c` leaves, is passed over), recorded with its start time
at the turn's start (Linux: /proc) so that a pid taken again by another process is not mistaken for it.

Pure file work, no git: the hook pays for this on every call (one /proc read more when a turn opens).
"""

from __future__ import annotations

import os

from . import layout, minijson
from .fsutil import read_bytes, write_atomic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .note import Json
    from .repo import Repo

# A turn whose last hook call is older than this is taken as over (turn_timeout_minutes' default; an
# interrupted or killed agent sends no end event).
LIVE_SECONDS = 10 * 60.0
# A file written this long after a quiet turn's last hook call was not written by that turn.
SLACK_SECONDS = 2.0
# An open turn file older than this is swept away.
FORGET_SECONDS = 7 * 24 * 3600.0
# The programs that may stand between an agent and its hook (`sh -c '…'`, `git rewind hook`), each waiting
# for the hook and gone after it: passed over to find the agent.
WRAPPERS = frozenset(("sh", "dash", "bash", "zsh", "ksh", "mksh", "ash", "busybox", "fish", "env", "git"))


Process = tuple[int, int]  # (pid, start time in clock ticks since boot): a process, told from a later one of its pid


class Turn:
    """One open turn: whose, which prompt, and the tools its hooks named for each path."""

    __slots__ = ("session", "agent", "prompt", "seq", "started", "last", "tools", "pid", "model")

    def __init__(self, session: str, agent: str | None, prompt: str | None, seq: int | None, started: float,
                 last: float | None = None, tools: dict[str, str] | None = None,
                 pid: Process | None = None, model: str | None = None) -> None:
        self.session = session
        self.agent = agent
        self.prompt = prompt
        self.seq = seq  # the prompt checkpoint's seq
        self.started = started
        self.last = last if last is not None else started  # the session's last hook call (the file's mtime)
        self.tools = tools or {}
        self.pid = pid  # the agent's process (None: not known, only the timeout ends the turn)
        self.model = model  # the model at work, when a payload of the turn named it

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"session": self.session, "agent": self.agent, "prompt": self.prompt,
                                   "seq": self.seq, "started": self.started, "tools": self.tools}
        if self.pid is not None:
            data["pid"] = list(self.pid)
        if self.model is not None:
            data["model"] = self.model
        return data

    def over(self, now: float, timeout: float) -> str | None:
        """Why the turn is over though no end event came (None: still at work): no hook call for TIMEOUT
        seconds (0: no timeout), or its agent's process is gone."""
        if timeout and now - self.last >= timeout:
            return f"no hook call for {_ago(now - self.last)}"
        if self.pid is not None and not process_alive(self.pid):
            return f"its agent process {self.pid[0]} is gone"
        return None

    def live(self, now: float, timeout: float = LIVE_SECONDS) -> bool:
        """Its agent called a hook within TIMEOUT seconds and its process is still there."""
        return self.over(now, timeout) is None

    def wrote(self, mtime: float) -> bool:
        """A file last modified at MTIME may have been written by this turn."""
        return self.started - SLACK_SECONDS <= mtime <= self.last + SLACK_SECONDS


def _stat(pid: int) -> tuple[str, str, int, int] | None:
    """(name, state, parent pid, start time) of PID from /proc (None: gone, or no /proc)."""
    try:
        raw = read_bytes(f"/proc/{pid}/stat")
    except OSError:
        return None
    name, _, rest = raw[raw.find(b"(") + 1:].rpartition(b")")  # the name may hold spaces and parentheses
    fields = rest.split()
    try:
        return name.decode("utf-8", "replace"), fields[0].decode(), int(fields[1]), int(fields[19])
    except (IndexError, ValueError):
        return None


def own_process() -> Process | None:
    """This process (`watch`, whose turn lasts as long as it runs); None without /proc."""
    found = _stat(os.getpid())
    return (os.getpid(), found[3]) if found is not None else None


def agent_process(parent: int | None = None) -> Process | None:
    """The agent that runs this hook: the nearest ancestor that is not one of the WRAPPERS, from PARENT (the
    hook process's parent, as the daemon is told it; None: this process's own) up (None: no /proc)."""
    pid = parent or os.getppid()
    for _ in range(8):
        found = _stat(pid)
        if found is None:
            return None
        name, _state, parent, started = found
        if name not in WRAPPERS or parent <= 1:
            return pid, started
        pid = parent
    return None


def process_alive(process: Process) -> bool:
    """PROCESS still runs: its pid is there with the same start time, and not a zombie (it has ended)."""
    found = _stat(process[0])
    return found is not None and found[3] == process[1] and found[1] != "Z"


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min"


def short(session: str) -> str:
    """A session id as a line shows it: its first 8 characters."""
    return session[:8] + "…" if len(session) > 9 else session


def _prompt(text: object) -> str:
    """A turn's prompt as a line shows it: one line, at most 60 characters."""
    prompt = " ".join((text if isinstance(text, str) else "").split())
    return (prompt[:60] + "…" if len(prompt) > 60 else prompt) or "?"


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


def touch(repo: Repo, session: str, tool: str | None = None, paths: list[str] | None = None,
          model: str | None = None) -> bool:
    """A hook call of SESSION: its open turn (if any) is still at work, TOOL is about to change PATHS, and
    MODEL (when the call names one) is at work. Returns whether the session has an open turn."""
    path = _file(repo, session)
    if (tool and paths) or model:
        turn = _read(path)
        if turn is None:
            return False
        new = {p: tool for p in paths or () if tool and turn.tools.get(p) != tool}
        if new or (model and turn.model != model):
            turn.tools.update(new)
            turn.model = model or turn.model
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
    pid = data.get("pid")
    model = data.get("model")
    process = (pid[0], pid[1]) if isinstance(pid, list) and len(pid) == 2 \
        and all(isinstance(n, int) for n in pid) else None
    return Turn(session, agent if isinstance(agent, str) else None, prompt if isinstance(prompt, str) else None,
                seq if isinstance(seq, int) else None,
                float(started) if isinstance(started, (int, float)) else last, last,
                {str(k): str(v) for k, v in tools.items()} if isinstance(tools, dict) else {}, process,
                model if isinstance(model, str) else None)


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


def timeout_of(repo: Repo) -> float:
    """turn_timeout_minutes of REPO's settings, in seconds (the defaults where the config is invalid)."""
    from . import config

    return float(config.load_or_defaults(repo.root)[0]["turn_timeout_minutes"].value) * 60.0


def running(repo: Repo, now: float, timeout: float | None = None) -> list[Turn]:
    """The open turns whose agents are still at work (what an undo asks about first); TIMEOUT: seconds
    without a hook call that end a turn (None: turn_timeout_minutes)."""
    limit = timeout_of(repo) if timeout is None else timeout
    return [t for t in open_turns(repo, now) if t.live(now, limit)]


def describe(repo: Repo, now: float) -> list[dict[str, Json]]:
    """Every open turn of this work tree for `status`: whose, its prompt, when it started and last called a
    hook (seconds ago), and whether it is still at work or why it is over."""
    limit = timeout_of(repo)
    found: list[dict[str, Json]] = []
    for turn in open_turns(repo, now):
        over = turn.over(now, limit)
        found.append({"session": turn.session, "agent": turn.agent, "prompt": turn.prompt,
                      "started_ago": max(0, int(now - turn.started)), "idle": max(0, int(now - turn.last)),
                      "pid": turn.pid[0] if turn.pid is not None else None,
                      "running": over is None, "over": over})
    return found


def describe_line(turn: dict[str, Json]) -> str:
    """One open turn of `describe` as `status` prints it."""
    idle = turn["idle"]
    state = "running" if turn["running"] else f"over: {turn['over']}"
    return (f"{turn['agent'] or 'an agent'} session {short(str(turn['session']))}: {state} (prompt: "
            f"{_prompt(turn['prompt'])}, last activity {_ago(idle if isinstance(idle, int) else 0)} ago)")


def at_work(repo: Repo, now: float, timeout: float | None = None) -> str | None:
    """What a rewind of this work tree would interrupt, in one line (None: no agent is in a turn here):
    `claude-code session 4f9e… is in the middle of a turn (prompt: …, last activity 12 s ago)`."""
    busy = running(repo, now, timeout)
    if not busy:
        return None
    parts = []
    for turn in busy:
        parts.append(f"{turn.agent or 'an agent'} session {short(turn.session)} is in the middle of a turn "
                     f"(prompt: {_prompt(turn.prompt)}, last activity {_ago(now - turn.last)} ago)")
    return "; ".join(parts) + f"; rewinding now may fight with {'it' if len(busy) == 1 else 'them'}"
