"""`git rewind hook`: one agent hook call → Event → policy → checkpoint, never failing the agent.

Runs before tool calls, so it is lean: no click, no pygit2, no process for repository
discovery, and a skip costs one small JSON read and one log line. Whatever goes wrong, the
agent sees exit 0 and at most one line on stderr; the trace goes to .git/rewind/hook-errors.log.

One flow (`run`) serves the hook process and the file-watcher daemon, which answers calls for the
thin client (client.py) under the caller's environment, directory and umask (`serve`): what is
printed is collected (`Reply`) and printed by the process the agent started.
"""

from __future__ import annotations

import os
import sys
import time

from ..base import layout, minijson
from ..base.clock import utc_now
from ..base.errors import NotARepository, RewindError
from ..base.repo import Repo, check_session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..agents.event import Event
    from ..base.config import Settings
    from ..store.store import Result
    from .policy import Decision

LOG = layout.HOOK_LOG
ERROR_LOG = layout.HOOK_ERRORS
MAX_LOG = 1 << 20  # bytes; the log is rotated to hook.log.1 past this
HOOK_LOCK_TIMEOUT = 20.0  # seconds; agents time hooks out (we install 30 s)


class Call:
    """One hook call as the hook process got it: the payload bytes on its stdin, its arguments, and (for the
    daemon, which answers calls for other processes: hook/client.py) its environment, working directory,
    umask, parent (the agent's side of turns.agent_process), how long it already waited and why (a daemon that
    did not answer). None: this process's own."""

    __slots__ = ("raw", "argv", "env", "cwd", "umask", "parent", "waited", "failure")

    def __init__(self, raw: bytes, argv: list[str], env: dict[str, str] | None = None, cwd: str | None = None,
                 umask: int | None = None, parent: int | None = None, waited: float = 0.0,
                 failure: str | None = None) -> None:
        self.raw = raw
        self.argv = argv
        self.env = env
        self.cwd = cwd
        self.umask = umask
        self.parent = parent
        self.waited = waited
        self.failure = failure


class Reply:
    """What the hook process prints: its stdout (the JSON an agent reads) and its stderr (at most a line or
    two), collected so that the daemon can send them to the process that prints them."""

    __slots__ = ("out", "err")

    def __init__(self) -> None:
        self.out: list[str] = []
        self.err: list[str] = []

    def write(self) -> None:
        """Print what was collected, as the hook process itself."""
        for stream, parts in ((sys.stdout, self.out), (sys.stderr, self.err)):
            if parts:
                try:
                    stream.write("".join(parts))
                    stream.flush()
                except (OSError, ValueError):  # closed: the agent goes on without it
                    pass


class Elsewhere(Exception):
    """The daemon cannot answer this call (another work tree, a working directory gone): the process runs it."""


def main(argv: list[str], raw: bytes | None = None, waited: float = 0.0, failure: str | None = None) -> int:
    """Handle one hook call in this process (RAW: the payload already read from stdin, else read here) and
    print what it says; always returns 0. WAITED, FAILURE: the seconds spent on, and what went wrong with,
    a daemon that did not answer (hook/client.py), for the lock budget and the log entry."""
    if raw is None:
        try:
            raw = sys.stdin.buffer.read()
        except (OSError, ValueError):
            raw = b""  # the payload's absence is reported as such
    run(Call(raw, argv, waited=waited, failure=failure)).write()
    return 0


def serve(repo: Repo, request: dict[str, object]) -> dict[str, object]:
    """The daemon's `hook` request (hook/client.py sends it): the call run here, in the daemon of REPO, under
    the calling process's environment, directory and umask; {"out", "err"} to print, or {"fallback": why}
    for the process to run it itself."""
    call = call_of(request)
    if call is None:
        return {"fallback": "a request this daemon does not understand"}
    try:
        reply = run(call, within=repo)
    except Elsewhere as exc:
        return {"fallback": str(exc)}
    return {"out": "".join(reply.out), "err": "".join(reply.err)}


def call_of(request: dict[str, object]) -> Call | None:
    """The call a thin client's request describes (hook/client.py: payload, argv, env, cwd, umask, parent);
    None when it is not one."""
    raw, argv, env, cwd = request.get("payload"), request.get("argv"), request.get("env"), request.get("cwd")
    umask, parent = request.get("umask"), request.get("parent")
    if not (isinstance(raw, str) and isinstance(argv, list) and all(isinstance(a, str) for a in argv)
            and isinstance(env, dict) and all(isinstance(v, str) for v in env.values())
            and isinstance(cwd, str) and os.path.isabs(cwd) and isinstance(umask, int)
            and isinstance(parent, int)):
        return None
    return Call(raw.encode("utf-8", "surrogateescape"), argv, env, cwd, umask, parent)


def same_work_tree(repo: Repo, other: Repo) -> bool:
    """REPO and OTHER are one work tree: the same paths (as a hook's Repo.find and the daemon's own name it, no
    symbolic link resolved), else the same once every link is resolved."""
    if repo.root == other.root and repo.gitdir == other.gitdir:
        return True
    real = os.path.realpath
    return real(repo.root) == real(other.root) and real(repo.gitdir) == real(other.gitdir)


class Served:
    """A command's request the daemon of REPO runs (a git hook, a plain undo): CALL applied in this process for
    its duration (Applied), the caller's own Repo as `with` gives it; Elsewhere when the caller is not in
    REPO's work tree (another one, or none), for the command to run the request itself."""

    def __init__(self, call: Call, repo: Repo) -> None:
        self.applied = Applied(call)
        self.repo = repo

    def __enter__(self) -> Repo:
        self.applied.__enter__()
        try:
            try:
                here = Repo.find(os.getcwd())
            except NotARepository:
                raise Elsewhere("not in a repository") from None
            if not same_work_tree(here, self.repo):
                raise Elsewhere(f"another work tree ({here.root})")
        except BaseException:
            self.applied.__exit__(None, None, None)
            raise
        return here

    def __exit__(self, *exc: object) -> None:
        self.applied.__exit__(*exc)


def run(call: Call, within: Repo | None = None) -> Reply:
    """The hook's one flow, for the hook process and the daemon alike: payload → Event → policy →
    checkpoint, under CALL's environment, directory and umask for its duration (restored after: the daemon
    lives on). WITHIN: the work tree this process may serve (the daemon's); a call for any other raises
    Elsewhere before anything is written or printed."""
    reply = Reply()
    with Applied(call):
        _run(call, within, reply)
    return reply


class Applied:
    """CALL's environment, working directory and umask in this process while the call runs (os.environ as
    a whole: git, config, the agents' own variables and the processes started all read it), then this
    process's own again. A call without them (the hook process's own) changes nothing."""

    def __init__(self, call: Call) -> None:
        self.call = call
        self.saved: tuple[dict[str, str], str, int | None] | None = None

    def __enter__(self) -> None:
        call = self.call
        if call.env is None and call.cwd is None and call.umask is None:
            return
        saved_cwd = os.getcwd()
        try:
            os.chdir(call.cwd or saved_cwd)
        except OSError as exc:
            raise Elsewhere(f"its working directory is not there ({exc.strerror})") from None
        self.saved = (dict(os.environ), saved_cwd, os.umask(call.umask) if call.umask is not None else None)
        if call.env is not None:
            try:
                _set_environment(call.env)
            except ValueError as exc:  # a name with `=`, a NUL: no process has that environment
                self.__exit__()
                raise Elsewhere(f"an environment this process cannot take ({exc})") from None

    def __exit__(self, *exc: object) -> None:
        if self.saved is None:
            return
        env, cwd, umask = self.saved
        _set_environment(env)
        os.chdir(cwd)
        if umask is not None:
            os.umask(umask)


def _set_environment(env: dict[str, str]) -> None:
    """os.environ (and so the C environment children inherit) becomes exactly ENV."""
    for name in [name for name in os.environ if name not in env]:
        del os.environ[name]
    for name, value in env.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


def _run(call: Call, within: Repo | None, reply: Reply) -> None:
    started = time.time()
    agent = _agent_option(call.argv)
    repo: Repo | None = None
    payload: Any = None
    printed = False  # the session-start context, the one JSON object on stdout
    try:
        try:
            payload = minijson.loads(call.raw.decode("utf-8", "surrogateescape"))
        except ValueError as exc:
            raise RewindError(f"hook payload is not JSON ({exc})") from None
        if not isinstance(payload, dict):
            raise RewindError("hook payload is not a JSON object")
        from .. import agents
        from ..agents.event import model_of

        agent = agent or agents.detect(payload, os.environ)
        event = agents.get(agent).parse(payload)
        event.model = event.model or model_of(payload)
        if event.transcript and not agents.get(agent).recognises_transcript_path(event.transcript, os.environ):
            event.transcript = None  # a payload naming any other file (/etc/passwd) plants nothing in a note
        cwd = event.cwd if event.cwd and os.path.isdir(event.cwd) else os.getcwd()
        try:
            repo = Repo.find(cwd)
        except NotARepository as exc:
            if within is not None:
                raise Elsewhere("not in a repository") from None
            _log_outside_repository(cwd, str(exc))
            return  # the reply, if the agent wants one, is printed on the way out
        if within is not None and not same_work_tree(repo, within):
            raise Elsewhere(f"another work tree ({repo.root})")
        if not event.session:
            raise RewindError(f"{event.name or 'hook'} payload has no session_id")
        entry, context = handle(repo, event, reply, call.parent, call.waited)
        entry["ms"] = round((time.time() - started) * 1000, 1)
        if call.failure:
            entry["daemon_failed"] = call.failure
        log_decision(repo, entry)
        if context:
            _print_context(agents.get(agent).context_reply(event.name, context), reply)
            printed = True
    except Elsewhere:
        printed = True  # nothing printed: the process runs the call
        raise
    except Exception as exc:  # a hook never breaks the agent
        _report_error(repo, agent, exc, reply)
    finally:
        if not printed:
            _reply(agent, payload, reply)


def _reply(agent: str | None, payload: Any, reply: Reply) -> None:
    """The JSON an agent expects on stdout whatever happened (Agent.hook_reply): Cursor's
    {"permission": "allow"}, Gemini CLI's `{}` (it reads stdout as JSON and would show our stderr line
    as a message otherwise); agents without one get nothing."""
    try:
        from .. import agents

        name = payload.get("hook_event_name") if isinstance(payload, dict) else None
        answer = agents.get(agent).hook_reply(name) if agent in agents.NAMES else None
        if answer is not None:
            reply.out.append(minijson.dumps(answer) + "\n")
    except Exception:  # noqa: BLE001 - the agent goes on without it
        pass


def _print_context(context: dict[str, Any], reply: Reply) -> None:
    """The one JSON object an agent reads from a SessionStart or prompt hook's stdout (Agent.context_reply)."""
    import json  # ASCII-only output, whatever the locale's encoding; only when there is context to give

    reply.out.append(json.dumps(context) + "\n")


def _agent_option(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv):
        if arg == "--agent" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--agent="):
            return arg.split("=", 1)[1]
    return None


def handle(repo: Repo, event: Event, reply: Reply, parent: int | None = None,
           waited: float = 0.0) -> tuple[dict[str, Any], str | None]:
    """Decide and, if so decided, checkpoint; returns the log entry and, at session start, the context
    (for an agent with context_on_prompt, at the session's first prompt); at a prompt, for an agent with
    prompt_context, what was rewound under the session since it last heard (rewinds.py). PARENT: the hook
    process's parent (None: this process's); WAITED: seconds the hook already spent (on a daemon that did
    not answer), taken from its lock timeout so that it still ends before the agent's."""
    from ..base.lock import Lock
    from . import policy

    check_session(event.session)
    state_dir = os.path.join(repo.rewind_dir, layout.SESSIONS)
    if not os.path.isdir(state_dir):  # one stat: it is there but for a work tree's first hook
        os.makedirs(state_dir, exist_ok=True)  # the config cache and the session state live here
    from ..base import config

    loaded, config_error = config.load_or_defaults(repo.root, os.path.join(repo.rewind_dir, layout.CONFIG_CACHE))
    settings = config.as_values(loaded)
    repo.lock_timeout = min(float(settings["lock_timeout"]), max(1.0, HOOK_LOCK_TIMEOUT - waited))
    paths = _repo_paths(repo, event)
    entry: dict[str, Any] = {
        "time": utc_now(), "agent": event.agent,
        "session": event.session, "event": event.name, "tool": event.tool, "paths": paths,
    }
    if config_error:
        entry["config_error"] = config_error
    state_file = os.path.join(state_dir, event.session + ".json")
    from .. import agents

    # An agent that would lose the prompt a session start context is glued to (Gemini CLI in -p mode) gets it
    # with the session's first prompt instead.
    on_prompt = agents.get(event.agent).context_on_prompt
    told_of = agents.get(event.agent).prompt_context
    pending = None
    rewound = None
    watched = None
    # One session's hooks run in parallel (parallel tool calls): decide and take under its lock.
    with Lock(state_file + ".lock", repo.lock_timeout):
        data: dict[str, Any] = minijson.load_file(state_file)
        before = minijson.dumps(data)
        if on_prompt and event.kind == "prompt":
            pending = data.pop("pending_context", None)
        if told_of:
            rewound = _rewinds_since(repo, event, data)
        state = policy.SessionState(data.get("policy"))
        if event.kind == "prompt" and event.prompt:
            data["prompt"] = event.prompt[:4000]
        now = time.time()
        watched = _after_shell(repo, event, settings)
        decision = policy.decide(event, settings, state, now, paths, watched)
        entry["reason"] = decision.reason
        if watched is not None and watched[0]:
            entry["daemon_said"] = watched[1]  # why it was not skipped
        result = None
        if decision.action == policy.SKIP:
            entry["action"] = "skip"
        else:
            result = _checkpoint(repo, event, decision, settings, data.get("prompt"))
            policy.record(state, decision, result.created, now)
            entry["action"] = "checkpoint" if result.created else "unchanged"
            entry["seq"] = result.seq
            if decision.verify and result.created:
                entry["changes"] = result.note.changes if result.note is not None else None
        data["policy"] = state.to_dict()
        if minijson.dumps(data) != before:  # most skips change nothing: no file to write
            minijson.dump_file(state_file, data)
        _follow_turn(repo, event, paths, result, now, parent)
    context = None
    if event.kind == "session_start":
        context = _session_context(repo, settings, result, entry, reply, _prompt_first(repo, event))
        if on_prompt:
            with Lock(state_file + ".lock", repo.lock_timeout):
                data = minijson.load_file(state_file)
                data.pop("pending_context", None)
                if context:
                    data["pending_context"] = context
                minijson.dump_file(state_file, data)
            context = None
    elif isinstance(pending, str) and pending:
        context = pending
        entry["context"] = "delivered with the prompt"
    if rewound:
        context = f"{context}\n\n{rewound}" if context else rewound
        entry["rewound"] = "told"
    if settings["sync_auto"] and event.kind in ("stop", "session_end") and settings["sync_remote"]:
        from ..sharing import sync

        try:  # the push runs detached: its failures go to `git rewind status`, never to the agent
            sync.start_background_push(repo)
            entry["sync"] = "push started"
        except OSError as exc:
            entry["sync"] = f"not started: {exc}"
    if settings["daemon"] != "off" and watched is None:  # a daemon that has just answered runs
        from ..base import daemon

        try:  # the next checkpoint reads only what changed; never a reason to fail the agent
            if daemon.maybe_start(repo, settings):
                entry["daemon"] = "started"
        except OSError as exc:
            entry["daemon"] = f"not started: {exc}"
    return entry, context


def _after_shell(repo: Repo, event: Event, settings: Settings) -> tuple[bool, str] | None:
    """After a shell command (balanced or aggressive tier), the daemon's word on whether it changed anything
    since the session's last checkpoint here; None for any other event, or when no daemon runs."""
    if event.kind != "post_tool" or event.tool_kind != "shell" or settings["tier"] == "minimal":
        return None
    if not os.path.exists(os.path.join(repo.rewind_dir, layout.DAEMON_SOCKET)):
        return None  # no daemon: one stat, and nothing imported, as before there was a question to ask
    from ..base import daemon

    return daemon.changed_since_tip(repo, event.session)


def _rewinds_since(repo: Repo, event: Event, data: dict[str, Any]) -> str | None:
    """At a prompt, what the agent is told about rewinds of this work tree made from outside the session
    since it last heard (rewinds.py; one stat when there are none). The session's first call marks the log
    as it is: a session started after a rewind is not told about it."""
    seen = data.get("rewinds")
    if seen is not None and event.kind != "prompt":
        return None
    from ..base import rewinds

    try:  # an unreadable log costs the news, never the checkpoint
        if seen is None:
            data["rewinds"] = rewinds.mark(repo)
            return None
        found = rewinds.news(repo, seen, event.session)
    except OSError:
        return None
    if found is None:
        return None
    new, data["rewinds"] = found
    return rewinds.context(new) if new else None


def _follow_turn(repo: Repo, event: Event, paths: list[str], taken: Result | None, now: float,
                 parent: int | None) -> None:
    """Keep turns.py's record of the session's turn: opened by a prompt (after its checkpoint, which holds
    what changed before it) with the agent's process, closed by a turn end or session end (after theirs),
    touched by everything between, with the tool that is about to change each path."""
    from ..base import turns

    if event.kind == "prompt":
        turns.start(repo, turns.Turn(event.session, event.agent, (event.prompt or "")[:4000] or None,
                                     taken.seq if taken is not None else None, now, pid=turns.agent_process(parent),
                                     model=event.model))
    elif event.kind in ("stop", "session_end"):
        turns.end(repo, event.session)
    else:
        editing = event.kind in ("pre_tool", "post_tool") and event.tool_kind in ("write", "edit")
        open_turn = turns.touch(repo, event.session, event.tool if editing else None, paths if editing else None,
                                event.model)
        if not open_turn and event.kind in ("pre_tool", "post_tool"):
            # A tool call with no turn open: the agent is at work though no prompt hook came (`droid exec`
            # sends no UserPromptSubmit). Its turn opens here, or all it changes would be taken for outside.
            tools = {p: event.tool for p in paths} if editing and event.tool else None
            turns.start(repo, turns.Turn(event.session, event.agent, None, None, now, tools=tools,
                                         pid=turns.agent_process(parent), model=event.model))


def _prompt_first(repo: Repo, event: Event) -> int | None:
    """The seq of the session's prompt checkpoint when its prompt hook ran before this session start (the
    agent runs both at once and says when the session started: Event.time): what came from it is not
    earlier work. None: the prompt comes after, as usual."""
    if event.time is None:
        return None
    from ..base import turns

    turn = turns.get(repo, event.session)
    if turn is None or turn.seq is None or turn.started < event.time:
        return None
    return turn.seq


def _session_context(repo: Repo, settings: Settings, taken: Result | None,
                     entry: dict[str, Any], reply: Reply, before: int | None = None) -> str | None:
    """What the new session is told about the last checkpoint (before the seq BEFORE, when given); None when
    off, none, or on any error."""
    if not settings["auto_resume_on_start"]:
        entry["context"] = "off: auto_resume_on_start = false"
        return None
    try:
        from . import resume

        text, info = resume.context(repo, taken, settings["max_file_size"], before)
    except Exception as exc:  # the session starts without it; the checkpoint above stands
        entry["context"] = "error"
        entry["context_error"] = str(exc)
        where = _trace(repo, entry.get("agent"), exc)
        reply.err.append(f"git-rewind: no resume context, {type(exc).__name__}: {exc} (details: {where})\n")
        return None
    entry.update(info)
    return text


def _repo_paths(repo: Repo, event: Event) -> list[str]:
    """The event's files inside the work tree, root-relative; others are ignored, not followed."""
    paths = []
    for path in event.paths:
        try:
            rel = repo.relpath(path, event.cwd or repo.root)
        except RewindError:
            continue
        if rel:
            paths.append(rel)
    return paths


def _message(event: Event, decision: Decision) -> str:
    if event.kind == "prompt":
        first = " ".join((event.prompt or "").split())
        return "prompt: " + (first[:60] + "…" if len(first) > 60 else first)
    if event.kind == "session_start":
        return f"session start ({event.source or 'startup'})"
    if event.kind == "stop":
        return "turn end"
    if event.kind in ("session_end", "pre_compact"):
        return decision.reason  # "before /clear", "before compaction (manual)"
    if event.kind == "post_tool":
        return f"after {event.tool}: {_shown_command(event.command)}" if event.command else f"after {event.tool}"
    shown = " ".join(decision.paths[:3]) + (f" (+{len(decision.paths) - 3})" if len(decision.paths) > 3 else "")
    return f"before {event.tool} {shown}".strip()


def _shown_command(command: str) -> str:
    """A shell command as a checkpoint's message shows it: one line, at most 60 characters (the note keeps it
    whole, as a prompt's)."""
    flat = " ".join(command.split())
    return flat[:60] + "…" if len(flat) > 60 else flat


def _checkpoint(repo: Repo, event: Event, decision: Decision, settings: Settings,
                prompt: str | None) -> Result:
    from ..store import store

    request = store.Request(
        session=event.session,
        message=_message(event, decision),
        agent=event.agent,
        trigger=event.name,
        tool=event.tool,
        paths=decision.paths if decision.action == "paths" else [],
        tags=decision.tags,
        prompt=event.prompt if event.kind == "prompt" else prompt,
        conversation=event.conversation(),
        count_changes=decision.verify,
        allow_empty=decision.allow_empty,
        max_file_size=settings["max_file_size"],
        auto_pack=settings["auto_pack"],
        max_store_size=settings["max_store_size"],
        attribute=settings["tier"] != "minimal",
        kind=event.kind,
        extra={"command": event.command[:4000]} if event.command and event.kind == "post_tool" else None,
    )
    return store.save(repo, request)


def _append(path: str, text: str) -> None:
    """Append to a log, rotating it to PATH.1 once it passes MAX_LOG."""
    try:
        if os.path.getsize(path) > MAX_LOG:
            os.replace(path, path + ".1")
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)  # a new log: its folder may be new too
    # One write() of a line under PIPE_BUF-ish size to an O_APPEND file: parallel hooks interleave whole lines.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, text.encode("utf-8", "surrogateescape"))
    finally:
        os.close(fd)


def log_decision(repo: Repo, entry: dict[str, Any]) -> None:
    """One JSON line per hook call in .git/rewind/hook.log: what was decided and why."""
    _append(os.path.join(repo.rewind_dir, LOG), minijson.dumps(entry) + "\n")


def read_decisions(repo: Repo, limit: int) -> list[dict[str, Any]]:
    """The newest LIMIT decisions (0: every one in the log), oldest first."""
    path = os.path.join(repo.rewind_dir, LOG)
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 64 * 1024 * max(1, limit // 100)) if limit else 0)
            lines = fh.read().splitlines()
    except FileNotFoundError:
        return []
    entries: list[dict[str, Any]] = []
    for line in lines[-limit:] if limit else lines:
        try:
            entry = minijson.loads(line.decode("utf-8", "replace"))
        except ValueError:
            continue  # the first line of a seek may be partial
        if isinstance(entry, dict):
            entries.append(entry)
    return entries[-limit:] if limit else entries


def state_home() -> str:
    """$XDG_STATE_HOME/git-rewind: where a hook outside any repository logs."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "git-rewind")


def _log_outside_repository(cwd: str, why: str) -> None:
    """Log a hook run outside a repository once per directory; the agent hears nothing."""
    path = os.path.join(state_home(), LOG)
    line = minijson.dumps({"time": utc_now(), "cwd": cwd,
                       "action": "skip", "reason": why}) + "\n"
    try:
        with open(path, encoding="utf-8") as fh:
            marker = minijson.dumps(cwd)
            if any(marker in seen for seen in fh):
                return
    except FileNotFoundError:
        pass
    try:
        _append(path, line)
    except OSError:
        pass


def _trace(repo: Repo | None, agent: str | None, exc: BaseException) -> str:
    """Append EXC's trace to hook-errors.log; returns where it went."""
    import traceback

    where = os.path.join(repo.rewind_dir if repo else state_home(), ERROR_LOG)
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    stamp = utc_now()
    try:
        _append(where, f"--- {stamp} agent={agent}\n{trace}")
    except OSError:
        return "(log not writable)"
    return where


def _report_error(repo: Repo | None, agent: str | None, exc: BaseException, reply: Reply) -> None:
    """One line on stderr; the trace in .git/rewind/hook-errors.log (or the state dir)."""
    if repo is None:
        try:
            repo = Repo.find(os.getcwd())  # agents run hooks in the project directory
        except Exception:
            repo = None
    where = _trace(repo, agent, exc)
    stamp = utc_now()
    try:
        if repo is not None:
            log_decision(repo, {"time": stamp, "agent": agent, "action": "error", "reason": str(exc)})
    except OSError:
        where = "(log not writable)"
    message = str(exc) if isinstance(exc, RewindError) else f"{type(exc).__name__}: {exc}"
    reply.err.append(f"git-rewind: hook skipped, {message} (details: {where})\n")
