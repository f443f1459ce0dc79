"""OpenCode and its family (Kilo): their plugin's payloads → Events, the plugin's install, and conversation
rewind by their server API. One implementation, `OpenCodeFamily`; each agent is an instance of it with its
own names (agents/kilo.py is Kilo's).

Facts (shared/agents/other-agents.md §4, kilo-aider.md A): OpenCode has no shell hooks; plugins (TypeScript
run by its Bun) get `tool.execute.before/after`, `chat.message` and bus events. Kilo, its fork, loads the
same plugins from its own directories. Our plugin (git_rewind/resources/opencode/git-rewind.ts, one source
for both, with the agent's name written into its AGENT line; readable copies in hooks/opencode/ and
hooks/kilo/) sends one JSON object per event to `git-rewind hook --agent <agent>`:

    {"event": "tool.execute.before", "host": "opencode", "sessionID": "ses_…", "directory": "/proj",
     "worktree": "/proj", "serverUrl": "http://…", "tool": "edit", "callID": "call_…",
     "args": {"filePath": "/proj/a.py", "oldString": "…", "newString": "…"}}

Conversations live in the agent's SQLite database, which is never touched: a rewind asks its server to
fork the session before the checkpoint's message (`POST /session/{id}/fork`), so the original session is
never changed. The note records the server the plugin saw; when that one does not answer,
`<agent> serve --pure` is started in the project for the rewind and stopped after.
"""

from __future__ import annotations

import os

from . import event as ev
from .base import Agent, Rewinder
from .event import Event, changed_chars, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping
    from typing import Any

    from ..base.note import ConversationRecord, Note, Position
    from .conversation import Applied, Place, Plan
    from .settingsfile import Change

HOOKS: dict[str, str | None] = {}  # no hooks file: the plugin decides what it sends

PLUGIN_NAME = "git-rewind.ts"
_PROGRAM_LINE = 'const PROGRAM: string[] = ["git-rewind"]'
_AGENT_LINE = 'const AGENT = "opencode"'
# sha256 of the plugins earlier git-rewinds shipped (PROGRAM as shipped), by agent: still ours, so an
# install replaces them without a backup and uninstall removes them (as pre-commit's PRIOR_HASHES).
PRIOR_PLUGINS = {"opencode": ("633bab5e34badf054e957e3a7905418497cbe43ce5eb8e0c7bbb55d893e1d426",)}

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

SERVER_WAIT = 20.0  # seconds for `<agent> serve` to say where it listens
REQUEST_TIMEOUT = 10.0  # seconds for one API request
PROBE_TIMEOUT = 2.0  # seconds for the recorded server to answer


class OpenCodeEvent(Event):
    """An Event that also knows where the agent's server and project were, for the note."""

    __slots__ = ("server_url", "directory")

    def __init__(self, agent: str, name: str, kind: str, session: str, cwd: str) -> None:
        super().__init__(agent, name, kind, session, cwd)
        self.server_url: str | None = None
        self.directory: str | None = None

    def conversation(self) -> Position | None:
        """Session, message and call ids: what the fork at rewind time needs (no transcript file)."""
        import time

        from ..base.note import Position

        return Position(None, self.prompt_id, self.tool_use_id, None, None,
                        {"server": self.server_url, "directory": self.directory, "time_ms": int(time.time() * 1000)})


def _read_args(event: Event, tool: str, args: dict[str, Any]) -> None:
    if event.tool_kind == ev.SHELL:
        event.command = ev.shell_command(args.get("command"))
        return
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


def _normalised(content: str) -> str:
    """CONTENT with its PROGRAM line put back to the bare command."""
    import re

    return re.sub(r'^const PROGRAM: string\[\] = \[.*?\]', _PROGRAM_LINE.replace("\\", "\\\\"), content,
                  count=1, flags=re.MULTILINE)


def _read(path: str) -> str | None:
    from .settingsfile import read_text

    try:
        return read_text(path)
    except (OSError, UnicodeDecodeError):
        return ""  # there, and not ours

# the server a rewind of the conversation goes through ---------------------------------------------


class Server:
    """The agent's HTTP API for one project: the recorded server, or one we started (stopped by close)."""

    def __init__(self, title: str, url: str, directory: str | None,
                 process: subprocess.Popen[bytes] | None = None) -> None:
        self.title = title  # the agent's name in messages ("OpenCode", "Kilo")
        self.url = url.rstrip("/")
        self.directory = directory
        self.process = process

    def request(self, method: str, path: str, body: Any = None, timeout: float = REQUEST_TIMEOUT) -> Any:
        """The JSON answer; RewindError on any failure, naming what was asked."""
        import json
        import urllib.error
        import urllib.parse
        import urllib.request

        from ..base.errors import RewindError

        query = "?" + urllib.parse.urlencode({"directory": self.directory}) if self.directory else ""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path + query, data=data, method=method,
                                     headers={"Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - loopback URL from the note
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            raise RewindError(f"{self.title} at {self.url} answered {exc.code} to {method} {path}") from None
        except (OSError, ValueError) as exc:
            raise RewindError(f"{self.title} at {self.url} did not answer {method} {path} ({exc})") from None

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


def _text_of(message: dict[str, Any]) -> str:
    return "\n".join(str(p.get("text") or "") for p in message.get("parts") or []
                     if isinstance(p, dict) and p.get("type") == "text" and not p.get("synthetic"))


def _locate(messages: list[dict[str, Any]], note: Note, title: str) -> tuple[int, str, str | None]:
    """(messages kept, where in words, the prompt to resend)."""
    from ..base.errors import RewindError

    conv = note.position
    ids = [str((m.get("info") or {}).get("id") or "") for m in messages]
    known = conv.message_uuid
    trigger = note.trigger
    if trigger == "chat.message":
        wanted = known or conv.prompt_id
        if wanted not in ids:
            raise RewindError(f"the prompt of #{note.seq} ({wanted}) is not in {title} session {note.session}")
        index = ids.index(wanted)
        return index, "just before the prompt", _text_of(messages[index])
    if trigger in ("tool.execute.before", "tool.execute.after"):
        call = conv.tool_use_id
        found = [i for i, m in enumerate(messages) if ids[i] == known or any(
            isinstance(p, dict) and p.get("type") == "tool" and p.get("callID") == call for p in m.get("parts") or [])]
        if not found or not call and not known:
            raise RewindError(f"the {note.tool or 'tool'} call of #{note.seq} is not in {title} "
                              f"session {note.session}")
        index = found[0]
        if trigger == "tool.execute.after":
            return index + 1, f"just after the {note.tool} call", None
        return index, f"just before the {note.tool} call", None
    if trigger == "session.created":
        return 0, "at the session's start", None
    when = conv.extra.get("time_ms")
    if not isinstance(when, int):
        raise RewindError(f"#{note.seq} does not record where its {title} conversation stood")
    later = [i for i, m in enumerate(messages)
             if int(((m.get("info") or {}).get("time") or {}).get("created") or 0) > when]
    return (later[0] if later else len(messages)), "where it was", None


# the family -------------------------------------------------------------------------------------


class OpenCodeFamily(Agent):
    """An agent that runs OpenCode's plugins and serves OpenCode's API: no hooks file but our plugin, no MCP
    entry known, rewind by forking through its server. Subclasses give the names below."""

    title = ""  # the agent's name in messages
    program = ""  # its executable: the resume command and `serve` for a rewind
    config_name = ""  # its folder below $XDG_CONFIG_HOME (user scope)
    project_dir = ""  # its folder in a project (project scope)
    server_env: dict[str, str] = {}  # what the `serve` a rewind starts runs with, besides the environment
    hooks = HOOKS
    wrapped = False
    prompt_context = False  # our plugin ignores the hook's stdout (chat.message could push parts: not done)

    # payloads ---------------------------------------------------------------------------------

    def parse(self, payload: dict[str, Any]) -> Event:
        """The Event our plugin's payload describes."""
        name = text(payload.get("event")) or ""
        cwd = text(payload.get("directory")) or text(payload.get("worktree")) or ""
        event = OpenCodeEvent(self.name, name, _KINDS.get(name, ev.OTHER), text(payload.get("sessionID")) or "", cwd)
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

    def resume_command(self, session: str) -> str:
        return f"{self.program} -s {session}"

    # the plugin: install / uninstall ---------------------------------------------------------
    #
    # The plugin file is ours when, with its PROGRAM line put back to the bare command, its bytes are
    # exactly the shipped ones (or an earlier release's, PRIOR_PLUGINS). A different file of that name is
    # backed up first and put back on uninstall; a file of ours the user changed since is left where it is.

    def settings_file(self, scope: str, root: str | None, home: str) -> str:
        """Where the plugin goes: $XDG_CONFIG_HOME/<config_name>/plugin/ (user) or <project>/<project_dir>/plugin/."""
        if scope == "user":
            config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
            return os.path.join(config, self.config_name, "plugin", PLUGIN_NAME)
        assert root is not None
        return os.path.join(root, self.project_dir, "plugin", PLUGIN_NAME)

    def shipped_plugin(self) -> str:
        """The plugin as shipped for this agent (its name as AGENT, the bare `git-rewind` as its command)."""
        from .. import resources

        source = resources.read("opencode", PLUGIN_NAME).decode("utf-8")
        return source.replace(_AGENT_LINE, f'const AGENT = "{self.name}"', 1)

    def render_plugin(self, program: list[str]) -> str:
        """The plugin with PROGRAM (this git-rewind, by absolute path) as the command it runs."""
        import json

        return self.shipped_plugin().replace(_PROGRAM_LINE, f"const PROGRAM: string[] = {json.dumps(program)}", 1)

    def is_own_plugin(self, content: str | None) -> bool:
        """CONTENT is our plugin for this agent as shipped (now or by an earlier release), whichever git-rewind
        it runs."""
        if content is None:
            return False
        normalised = _normalised(content)
        if normalised == self.shipped_plugin():
            return True
        import hashlib

        return hashlib.sha256(normalised.encode("utf-8")).hexdigest() in PRIOR_PLUGINS.get(self.name, ())

    def check_install(self, scope: str, root: str | None, home: str, path: str) -> list[str]:
        """Before our plugin goes to PATH: RewindError when it must not (nothing written); lines to tell."""
        return []

    def install_hooks(self, scope: str, root: str | None, home: str | None, program: list[str] | None) -> Change:
        """Copy the plugin into the agent's plugin directory, running PROGRAM (None: as shipped, the
        `git-rewind` on PATH, for a project's shared files; a missing one is an error the plugin
        swallows); a second install changes nothing."""
        from ..base.fsutil import write_atomic
        from .settingsfile import Change, free_backup

        home = home or os.path.expanduser("~")
        path = self.target(scope, root, home)
        notes = self.check_install(scope, root, home, path)
        content = self.shipped_plugin() if program is None else self.render_plugin(program)
        current = _read(path)
        if current == content:
            change = Change(path, changed=False)
        else:
            backup = None
            if current is not None and not self.is_own_plugin(current):
                backup = free_backup(path)
                os.replace(path, backup)
            write_atomic(path, content, makedirs=True)
            change = Change(path, changed=True, backup=backup)
        change.notes += notes
        return change

    def uninstall_hooks(self, scope: str, root: str | None, home: str | None) -> Change:
        """Remove our plugin (putting back what it replaced); a plugin the user changed stays."""
        from ..base.errors import RewindError
        from .settingsfile import BACKUP_SUFFIX, Change, remove_created

        path = self.target(scope, root, home)
        current = _read(path)
        if current is None:
            return Change(path, changed=False)
        if not self.is_own_plugin(current):
            raise RewindError(f"{path} is not git-rewind's plugin as installed (changed since?); left alone")
        backup = path + BACKUP_SUFFIX
        if os.path.exists(backup):
            os.replace(backup, path)
            return Change(path, changed=True)
        change = remove_created(path)  # and plugin/, if ours was all it held
        try:
            os.rmdir(os.path.dirname(os.path.dirname(path)))  # and .kilo/ (.opencode/), if it is empty now
        except OSError:
            pass
        return change

    def hooks_installed(self, path: str) -> bool:
        """Our plugin is at PATH."""
        return self.is_own_plugin(_read(path))

    def readable_files(self) -> dict[str, bytes]:
        """The plugin as shipped: hooks/<agent>/git-rewind.ts."""
        return {PLUGIN_NAME: self.shipped_plugin().encode("utf-8")}

    # conversation rewind ----------------------------------------------------------------------

    def conversation(self) -> Rewinder:
        return Rewinder(self.plan_rewind, self.apply_rewind, self.apply_redo)

    def _answers(self, url: str, directory: str | None, session: str) -> bool:
        """URL is a server of this agent that knows SESSION."""
        from ..base.errors import RewindError

        try:
            info = Server(self.title, url, directory).request("GET", f"/session/{session}", timeout=PROBE_TIMEOUT)
        except RewindError:
            return False
        return isinstance(info, dict) and info.get("id") == session

    def start_server(self, directory: str | None) -> Server:
        """`<program> serve` on a free loopback port in DIRECTORY, without plugins; waits until it listens."""
        import atexit
        import re
        import selectors
        import shutil
        import subprocess
        import time

        from ..base.errors import CODE_ONLY, RewindError

        binary = shutil.which(self.program)
        if binary is None:
            raise RewindError(f"{self.title}'s server is not running and `{self.program}` is not on PATH, so the "
                              "conversation cannot be rewound", remedy=CODE_ONLY)
        cwd = directory if directory and os.path.isdir(directory) else None
        process = subprocess.Popen([binary, "serve", "--pure", "--port", "0", "--hostname", "127.0.0.1"],
                                   cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, start_new_session=True,
                                   env={**os.environ, **self.server_env} if self.server_env else None)
        server = Server(self.title, "http://127.0.0.1", directory, process)
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
        raise RewindError(f"`{self.program} serve` did not start within {SERVER_WAIT:.0f} s ({last[0]}); "
                          "the conversation was not rewound")

    def connect(self, conv: Position, session: str) -> Server:
        """The server the plugin saw when it answers for SESSION (on loopback only), else one started for
        the rewind."""
        directory = conv.extra.get("directory")
        recorded = conv.extra.get("server")
        if isinstance(recorded, str) and on_loopback(recorded) and self._answers(recorded, directory, session):
            return Server(self.title, recorded, directory)
        return self.start_server(directory)

    def plan_rewind(self, note: Note, fork: bool, place: Place) -> Plan:
        """Where the conversation of a checkpoint stands, checked against the agent's server now.

        The agent's own data is never changed: every conversation rewind is a fork (FORK is implied), and no
        file is read (PLACE has no folders: a note naming a file is refused at redo).
        """
        import json

        from ..base.errors import RewindError
        from .conversation import Plan, Transcript

        conv = note.position
        session = str(note.session or "")
        server = self.connect(conv, session)
        try:
            try:
                info = server.request("GET", f"/session/{session}")
            except RewindError as exc:
                raise RewindError(f"{self.title} does not know session {session} ({exc})") from None
            messages = server.request("GET", f"/session/{session}/message")
            if not isinstance(messages, list):
                raise RewindError(f"{self.title} at {server.url} sent no message list for session {session}")
            keep, where, prompt = _locate(messages, note, self.title)
        except BaseException:
            server.close()
            raise
        # The whole conversation as the agent exports it: undo keeps it in git with the safety checkpoint.
        data = json.dumps({"info": info, "messages": messages}, ensure_ascii=False).encode() + b"\n"
        transcript = Transcript(f"{self.name}-{session}.json", data)
        fork_at = str((messages[keep].get("info") or {}).get("id")) if keep < len(messages) else None
        plan = Plan(self.name, session, transcript)
        plan.resource = server  # the fork goes through it
        plan.cut = keep
        plan.target_uuid = fork_at
        plan.leaf = str((messages[keep - 1].get("info") or {}).get("id")) if keep > 0 else None
        plan.prompt = prompt
        plan.fork = True
        plan.where = where
        plan.empty = keep == 0
        return plan

    def apply_rewind(self, plan: Plan) -> Applied:
        """Fork the session before the checkpoint's message; the original session stays as it is."""
        from ..base.errors import RewindError
        from .conversation import Applied

        server = plan.resource
        assert isinstance(server, Server), "plan_rewind connects to the server"
        try:
            body = {"messageID": plan.target_uuid} if plan.target_uuid else {}
            made = server.request("POST", f"/session/{plan.session}/fork", body)
        finally:
            server.close()
        new = made.get("id") if isinstance(made, dict) else None
        if not isinstance(new, str) or not new:
            raise RewindError(f"{self.title} did not fork session {plan.session}")
        return Applied(new, self.resume_command(new), None,
                       f"new {self.title} session {new} with the conversation cut {plan.where} "
                       f"({plan.cut} messages kept); {plan.session} is unchanged")

    def apply_redo(self, info: ConversationRecord, backup: bytes | None, place: Place) -> Applied:
        """Nothing to put back: the rewind forked a new session and the original was never changed."""
        from .conversation import Applied

        session = str(info.session or "")
        return Applied(session, self.resume_command(session), None,
                       f"the rewind forked a new {self.title} session; the original {session} was never changed")

    def handover_refusal(self) -> str:
        """The agent keeps sessions in its own database, changed only through its server: there is no session
        file to push, and its API has no way in for a whole conversation (no import route; `<program> import`
        writes the database from a file, which git-rewind does not run on the user's data)."""
        return (f"handing over {'an' if self.title[0] in 'AEIOU' else 'a'} {self.title} conversation is not "
                f"available: {self.title} keeps its sessions in its own database, not in a file git-rewind can "
                "push and write back")


class OpenCode(OpenCodeFamily):
    """OpenCode: the plugin in .opencode/plugin/ or ~/.config/opencode/plugin/."""

    name = "opencode"
    title = "OpenCode"
    program = "opencode"
    config_name = "opencode"
    project_dir = ".opencode"


AGENT = OpenCode()


def detect(payload: Mapping[str, Any], environ: Mapping[str, str]) -> int | None:
    """OpenCode runs hooks only through our plugin, whose payload says so (sessionID + event) and names the
    agent that loaded it ("host"; a plugin from before Kilo sends none: OpenCode) (agents.detect)."""
    from .base import OWN_PAYLOAD

    return OWN_PAYLOAD + 1 if plugin_payload(payload) and payload.get("host") != "kilo" else None


def plugin_payload(payload: Mapping[str, Any]) -> bool:
    """PAYLOAD came from our plugin, in OpenCode or one of its forks."""
    return "sessionID" in payload and "event" in payload
