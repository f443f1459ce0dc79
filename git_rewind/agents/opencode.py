"""OpenCode: its plugin's payloads → Events, the plugin's install, and conversation rewind by its server API.

Facts (shared/agents/other-agents.md §4): OpenCode has no shell hooks; plugins (TypeScript run
by its Bun) get `tool.execute.before/after`, `chat.message` and bus events. Our plugin
(git_rewind/resources/opencode/git-rewind.ts, readable copy in hooks/opencode/) sends one JSON object
per event to `git-rewind hook --agent opencode`:

    {"event": "tool.execute.before", "sessionID": "ses_…", "directory": "/proj", "worktree": "/proj",
     "serverUrl": "http://…", "tool": "edit", "callID": "call_…",
     "args": {"filePath": "/proj/a.py", "oldString": "…", "newString": "…"}}

Conversations live in OpenCode's SQLite database, which is never touched: a rewind asks its
server to fork the session before the checkpoint's message (`POST /session/{id}/fork`), so the
original session is never changed. The note records the server the plugin saw; when that one
does not answer, `opencode serve --pure` is started in the project for the rewind and stopped after.
"""

from __future__ import annotations

import os

from .. import event as ev
from ..event import Event, changed_chars, text
from .base import Agent, Rewinder

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from typing import Any

    from ..conversation import Applied, Place, Plan
    from ..note import ConversationRecord, Note, Position
    from ..settingsfile import Change

NAME = "opencode"
HOOKS: dict[str, str | None] = {}  # no hooks file: the plugin decides what it sends

PLUGIN_NAME = "git-rewind.ts"
_PROGRAM_LINE = 'const PROGRAM: string[] = ["git-rewind"]'

_KINDS = {
    "session.created": ev.SESSION_START,
    "chat.message": ev.PROMPT,
    "tool.execute.before": ev.PRE_TOOL,
    "tool.execute.after": ev.POST_TOOL,
    "session.idle": ev.STOP,
    "experimental.session.compacting": ev.PRE_COMPACT,
}
TOOL_KINDS = {"write": ev.WRITE, "edit": ev.EDIT, "multiedit": ev.EDIT, "patch": ev.EDIT, "apply_patch": ev.EDIT,
              "bash": ev.SHELL}

SERVER_WAIT = 20.0  # seconds for `opencode serve` to say where it listens
REQUEST_TIMEOUT = 10.0  # seconds for one API request
PROBE_TIMEOUT = 2.0  # seconds for the recorded server to answer


class OpenCodeEvent(Event):
    """An Event that also knows where OpenCode's server and project were, for the note."""

    __slots__ = ("server_url", "directory")

    def __init__(self, name: str, kind: str, session: str, cwd: str) -> None:
        super().__init__(NAME, name, kind, session, cwd)
        self.server_url: str | None = None
        self.directory: str | None = None

    def conversation(self) -> Position | None:
        """Session, message and call ids: what the fork at rewind time needs (no transcript file)."""
        import time

        from ..note import Position

        return Position(None, self.prompt_id, self.tool_use_id, None, None,
                        {"server": self.server_url, "directory": self.directory, "time_ms": int(time.time() * 1000)})


def settings_file(scope: str, root: str | None, home: str) -> str:
    """Where the plugin goes: $XDG_CONFIG_HOME/opencode/plugin/ (user) or <project>/.opencode/plugin/."""
    if scope == "user":
        config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        return os.path.join(config, "opencode", "plugin", PLUGIN_NAME)
    assert root is not None
    return os.path.join(root, ".opencode", "plugin", PLUGIN_NAME)


def parse(payload: dict[str, Any]) -> Event:
    """The Event our plugin's payload describes."""
    name = str(payload.get("event") or "")
    cwd = text(payload.get("directory")) or text(payload.get("worktree")) or ""
    event = OpenCodeEvent(name, _KINDS.get(name, ev.OTHER), str(payload.get("sessionID") or ""), cwd)
    event.server_url = text(payload.get("serverUrl"))
    event.directory = text(payload.get("worktree")) or text(payload.get("directory"))
    event.tool_use_id = text(payload.get("callID"))
    if event.kind == ev.PROMPT:
        event.prompt_id = text(payload.get("messageID"))
        event.prompt = text(payload.get("prompt"))
    if event.kind == ev.SESSION_START:
        event.source = "fork" if payload.get("parentID") else "startup"
    event.tool = text(payload.get("tool"))
    event.tool_kind = TOOL_KINDS.get(event.tool or "")
    args = payload.get("args")
    if event.tool and isinstance(args, dict):
        _read_args(event, event.tool, args)
    return event


def _read_args(event: Event, tool: str, args: dict[str, Any]) -> None:
    path = text(args.get("filePath")) or text(args.get("file_path"))
    if tool in ("patch", "apply_patch"):
        ev.read_patch(event, next((v for v in args.values() if isinstance(v, str) and "*** " in v), ""))
        return
    if path:
        event.paths = [path]
    if tool == "write" and path:
        event.change_chars = ev.written_chars(event, path, args.get("content"))
    elif tool == "edit":
        event.change_chars = changed_chars(str(args.get("oldString") or ""), str(args.get("newString") or ""))
    elif tool == "multiedit" and isinstance(args.get("edits"), list):
        event.change_chars = sum(changed_chars(str(e.get("oldString") or ""), str(e.get("newString") or ""))
                                 for e in args["edits"] if isinstance(e, dict))


def resume_command(session: str) -> str:
    return f"opencode -s {session}"


# the plugin: install / uninstall ---------------------------------------------------------------
#
# The plugin file is ours when, with its PROGRAM line put back to the bare command, its bytes are
# exactly the shipped ones. A different file of that name is backed up first and put back on
# uninstall; a file of ours the user changed since is left where it is.


def shipped_plugin() -> str:
    """The plugin as shipped (the bare `git-rewind` as its command)."""
    from .. import resources

    return resources.read(NAME, PLUGIN_NAME).decode("utf-8")


def render_plugin(program: list[str]) -> str:
    """The plugin with PROGRAM (this git-rewind, by absolute path) as the command it runs."""
    import json

    shipped = shipped_plugin()
    return shipped.replace(_PROGRAM_LINE, f"const PROGRAM: string[] = {json.dumps(program)}", 1)


def _normalised(content: str) -> str:
    import re

    return re.sub(r'^const PROGRAM: string\[\] = \[.*?\]', _PROGRAM_LINE.replace("\\", "\\\\"), content,
                  count=1, flags=re.MULTILINE)


def is_own_plugin(content: str | None) -> bool:
    """CONTENT is our plugin as shipped, whichever git-rewind it runs."""
    return content is not None and _normalised(content) == shipped_plugin()


def _read(path: str) -> str | None:
    from ..settingsfile import read_text

    try:
        return read_text(path)
    except (OSError, UnicodeDecodeError):
        return ""  # there, and not ours


def install_hooks(scope: str, root: str | None, home: str | None, program: list[str] | None) -> Change:
    """Copy the plugin into OpenCode's plugin directory, running PROGRAM (None: as shipped, the
    `git-rewind` on PATH, for a project's shared files; a missing one is an error the plugin
    swallows); a second install changes nothing."""
    from ..fsutil import write_atomic
    from ..settingsfile import Change, free_backup

    path = AGENT.target(scope, root, home)
    content = shipped_plugin() if program is None else render_plugin(program)
    current = _read(path)
    if current == content:
        return Change(path, changed=False)
    backup = None
    if current is not None and not is_own_plugin(current):
        backup = free_backup(path)
        os.replace(path, backup)
    write_atomic(path, content, makedirs=True)
    return Change(path, changed=True, backup=backup)


def uninstall_hooks(scope: str, root: str | None, home: str | None) -> Change:
    """Remove our plugin (putting back what it replaced); a plugin the user changed stays."""
    from ..errors import RewindError
    from ..settingsfile import BACKUP_SUFFIX, Change, remove_created

    path = AGENT.target(scope, root, home)
    current = _read(path)
    if current is None:
        return Change(path, changed=False)
    if not is_own_plugin(current):
        raise RewindError(f"{path} is not git-rewind's plugin as installed (changed since?); left alone")
    backup = path + BACKUP_SUFFIX
    if os.path.exists(backup):
        os.replace(backup, path)
        return Change(path, changed=True)
    return remove_created(path)  # and plugin/, if ours was all it held


def hooks_installed(path: str) -> bool:
    """Our plugin is at PATH."""
    return is_own_plugin(_read(path))


# conversation rewind ---------------------------------------------------------------------------


class Server:
    """OpenCode's HTTP API for one project: the recorded server, or one we started (stopped by close)."""

    def __init__(self, url: str, directory: str | None, process: subprocess.Popen[bytes] | None = None) -> None:
        self.url = url.rstrip("/")
        self.directory = directory
        self.process = process

    def request(self, method: str, path: str, body: Any = None, timeout: float = REQUEST_TIMEOUT) -> Any:
        """The JSON answer; RewindError on any failure, naming what was asked."""
        import json
        import urllib.error
        import urllib.parse
        import urllib.request

        from ..errors import RewindError

        query = "?" + urllib.parse.urlencode({"directory": self.directory}) if self.directory else ""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path + query, data=data, method=method,
                                     headers={"Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - loopback URL from the note
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            raise RewindError(f"OpenCode at {self.url} answered {exc.code} to {method} {path}") from None
        except (OSError, ValueError) as exc:
            raise RewindError(f"OpenCode at {self.url} did not answer {method} {path} ({exc})") from None

    def close(self) -> None:
        """Stop the server we started, if any."""
        process, self.process = self.process, None
        if process is None:
            return
        import subprocess

        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _answers(url: str, directory: str | None, session: str) -> bool:
    """URL is an OpenCode server that knows SESSION."""
    from ..errors import RewindError

    try:
        info = Server(url, directory).request("GET", f"/session/{session}", timeout=PROBE_TIMEOUT)
    except RewindError:
        return False
    return isinstance(info, dict) and info.get("id") == session


def _start_server(directory: str | None) -> Server:
    """`opencode serve` on a free loopback port in DIRECTORY, without plugins; waits until it listens."""
    import atexit
    import re
    import selectors
    import shutil
    import subprocess
    import time

    from ..errors import RewindError

    binary = shutil.which("opencode")
    if binary is None:
        raise RewindError("OpenCode's server is not running and `opencode` is not on PATH, so the "
                          "conversation cannot be rewound (use --code for the files)")
    cwd = directory if directory and os.path.isdir(directory) else None
    process = subprocess.Popen([binary, "serve", "--pure", "--port", "0", "--hostname", "127.0.0.1"],
                               cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    server = Server("http://127.0.0.1", directory, process)
    atexit.register(server.close)  # a plan that is never applied (a refusal, --dry-run) still stops it
    assert process.stdout is not None
    seen = b""
    deadline = time.monotonic() + SERVER_WAIT
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
                break
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
            found = re.search(rb"listening on (http://[^\s]+)", seen)
            if found:
                server.url = found.group(1).decode().rstrip("/")
                return server
    server.close()
    last = seen.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
    raise RewindError(f"`opencode serve` did not start within {SERVER_WAIT:.0f} s ({last[0]}); "
                      "the conversation was not rewound")


def on_loopback(url: str) -> bool:
    """URL is an http(s) address on this machine's loopback: the only servers a note may send us to
    (a note is data anyone with write access to the repository could have written)."""
    import ipaddress
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.scheme not in ("http", "https"):
            return False
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def connect(conv: Position, session: str) -> Server:
    """The server the plugin saw when it answers for SESSION (on loopback only), else one started for
    the rewind."""
    directory = conv.extra.get("directory")
    recorded = conv.extra.get("server")
    if isinstance(recorded, str) and on_loopback(recorded) and _answers(recorded, directory, session):
        return Server(recorded, directory)
    return _start_server(directory)


def _text_of(message: dict[str, Any]) -> str:
    return "\n".join(str(p.get("text") or "") for p in message.get("parts") or []
                     if isinstance(p, dict) and p.get("type") == "text" and not p.get("synthetic"))


def _locate(messages: list[dict[str, Any]], note: Note) -> tuple[int, str, str | None]:
    """(messages kept, where in words, the prompt to resend)."""
    from ..errors import RewindError

    conv = note.position
    ids = [str((m.get("info") or {}).get("id") or "") for m in messages]
    known = conv.message_uuid
    trigger = note.trigger
    if trigger == "chat.message":
        wanted = known or conv.prompt_id
        if wanted not in ids:
            raise RewindError(f"the prompt of #{note.seq} ({wanted}) is not in OpenCode session "
                              f"{note.session}")
        index = ids.index(wanted)
        return index, "just before the prompt", _text_of(messages[index])
    if trigger in ("tool.execute.before", "tool.execute.after"):
        call = conv.tool_use_id
        found = [i for i, m in enumerate(messages) if ids[i] == known or any(
            isinstance(p, dict) and p.get("type") == "tool" and p.get("callID") == call for p in m.get("parts") or [])]
        if not found or not call and not known:
            raise RewindError(f"the {note.tool or 'tool'} call of #{note.seq} is not in OpenCode "
                              f"session {note.session}")
        index = found[0]
        if trigger == "tool.execute.after":
            return index + 1, f"just after the {note.tool} call", None
        return index, f"just before the {note.tool} call", None
    if trigger == "session.created":
        return 0, "at the session's start", None
    when = conv.extra.get("time_ms")
    if not isinstance(when, int):
        raise RewindError(f"#{note.seq} does not record where its OpenCode conversation stood")
    later = [i for i, m in enumerate(messages)
             if int(((m.get("info") or {}).get("time") or {}).get("created") or 0) > when]
    return (later[0] if later else len(messages)), "where it was", None


def plan_rewind(note: Note, fork: bool, place: Place) -> Plan:
    """Where the conversation of a checkpoint stands, checked against OpenCode's server now.

    OpenCode's own data is never changed: every conversation rewind is a fork (FORK is implied), and no
    file is read (PLACE has no folders: a note naming a file is refused at redo).
    """
    import json

    from ..conversation import Plan, Transcript
    from ..errors import RewindError

    conv = note.position
    session = str(note.session or "")
    server = connect(conv, session)
    try:
        try:
            info = server.request("GET", f"/session/{session}")
        except RewindError as exc:
            raise RewindError(f"OpenCode does not know session {session} ({exc})") from None
        messages = server.request("GET", f"/session/{session}/message")
        if not isinstance(messages, list):
            raise RewindError(f"OpenCode at {server.url} sent no message list for session {session}")
        keep, where, prompt = _locate(messages, note)
    except BaseException:
        server.close()
        raise
    # The whole conversation as OpenCode exports it: undo keeps it in git with the safety checkpoint.
    data = json.dumps({"info": info, "messages": messages}, ensure_ascii=False).encode() + b"\n"
    transcript = Transcript(f"opencode-{session}.json", data)
    fork_at = str((messages[keep].get("info") or {}).get("id")) if keep < len(messages) else None
    plan = Plan(NAME, session, transcript)
    plan.resource = server  # the fork goes through it
    plan.cut = keep
    plan.target_uuid = fork_at
    plan.leaf = str((messages[keep - 1].get("info") or {}).get("id")) if keep > 0 else None
    plan.prompt = prompt
    plan.fork = True
    plan.where = where
    plan.empty = keep == 0
    return plan


def apply_rewind(plan: Plan) -> Applied:
    """Fork the session before the checkpoint's message; the original session stays as it is."""
    from ..conversation import Applied
    from ..errors import RewindError

    server = plan.resource
    assert isinstance(server, Server), "plan_rewind connects to the server"
    try:
        body = {"messageID": plan.target_uuid} if plan.target_uuid else {}
        made = server.request("POST", f"/session/{plan.session}/fork", body)
    finally:
        server.close()
    new = made.get("id") if isinstance(made, dict) else None
    if not isinstance(new, str) or not new:
        raise RewindError(f"OpenCode did not fork session {plan.session}")
    return Applied(new, resume_command(new), None,
                   f"new OpenCode session {new} with the conversation cut {plan.where} "
                   f"({plan.cut} messages kept); {plan.session} is unchanged")


def apply_redo(info: ConversationRecord, backup: bytes | None, place: Place) -> Applied:
    """Nothing to put back: the rewind forked a new session and the original was never changed."""
    from ..conversation import Applied

    session = str(info.session or "")
    return Applied(session, resume_command(session), None,
                   f"the rewind forked a new OpenCode session; the original {session} was never changed")


class OpenCode(Agent):
    """OpenCode: no hooks file but our plugin, no MCP entry known, rewind by forking through its server."""

    name, hooks = NAME, HOOKS
    wrapped = False
    prompt_context = False  # our plugin ignores the hook's stdout (chat.message could push parts: not done)
    parse = staticmethod(parse)
    settings_file = staticmethod(settings_file)
    resume_command = staticmethod(resume_command)
    install_hooks = staticmethod(install_hooks)
    uninstall_hooks = staticmethod(uninstall_hooks)
    hooks_installed = staticmethod(hooks_installed)

    def readable_files(self) -> dict[str, bytes]:
        """The plugin as shipped: hooks/opencode/git-rewind.ts."""
        return {PLUGIN_NAME: shipped_plugin().encode("utf-8")}

    def conversation(self) -> Rewinder:
        return Rewinder(plan_rewind, apply_rewind, apply_redo)

    def handover_refusal(self) -> str:
        """OpenCode keeps sessions in its own database, changed only through its server: there is no session
        file to push, and its API has no way in for a whole conversation (no import route; `opencode import`
        writes the database from a file, which git-rewind does not run on the user's data)."""
        return ("handing over an OpenCode conversation is not available: OpenCode keeps its sessions in its own "
                "database, not in a file git-rewind can push and write back; use --code")


AGENT = OpenCode()
