"""GitHub Copilot CLI: hook payloads → Events, its hooks files, and its conversation rewind.

Facts (shared/agents/copilot-qwen.md part A, re-checked live with 1.0.102): hooks files are
`{"version": 1, "hooks": {"<event>": [{"type": "command", "bash": "…", "timeoutSec": 30}]}}` in
`.github/hooks/*.json` (project; in `-p` mode loaded only in a trusted folder) and
`$COPILOT_HOME/hooks/*.json` or `~/.copilot/hooks/*.json` (user; always loaded). The camelCase events give
payloads with sessionId, epoch-ms timestamp and cwd, and the native tool names (create, edit, bash with
toolArgs); they name neither the event nor the tool call, and there is no matcher: every tool's
preToolUse reaches the hook. A preToolUse hook that exits non-zero DENIES the tool, so our entries end in
`|| true`. sessionStart and userPromptSubmitted run concurrently; both read a top-level
`additionalContext` from the hook's stdout (a user message, a reminder after the prompt).

A session lives in <Copilot home>/session-state/<id>/: events.jsonl (one event a line, each naming its
parent) is all `copilot --resume=<id>` needs to rebuild the conversation (seen live: a copy cut short, in
place or under a new id, resumes with exactly the kept messages sent to the model), so a rewind cuts it.
"""

from __future__ import annotations

import os

from . import event as ev
from .base import (
    TIMEOUT,
    Agent,
    Rewinder,
    agent_home,
    cut_in_place,
    home_folders,
    lines_kept,
    moved,
    put_back,
    rewrite_lines,
)
from .event import Event, changed_chars, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from ..base.note import ConversationRecord, Note, Position
    from .conversation import Applied, Place, Plan, Transcript
    from .settingsfile import Change

NAME = "copilot"
VERSION = 1  # the hooks files' schema version
HOOKS_FILE = "git-rewind.json"

# What install writes: one handler per event (the camelCase form: native tool names, epoch-ms timestamps).
HOOKS: dict[str, str | None] = {
    "sessionStart": None,
    "userPromptSubmitted": None,
    "preToolUse": None,  # no matcher in this form: the policy skips every tool but create and edit
    "postToolUse": None,  # after bash (aggressive tier)
    "agentStop": None,
    "sessionEnd": None,
}
_KINDS = {
    "sessionStart": ev.SESSION_START,
    "userPromptSubmitted": ev.PROMPT,
    "preToolUse": ev.PRE_TOOL,
    "postToolUse": ev.POST_TOOL,
    "agentStop": ev.STOP,
    "sessionEnd": ev.SESSION_END,
}
# apply_patch is not offered to the model in 1.0.102's default tool set; kept for models that get it.
TOOL_KINDS = {"create": ev.WRITE, "edit": ev.EDIT, "apply_patch": ev.EDIT, "bash": ev.SHELL}


class CopilotEvent(Event):
    """An Event that keeps Copilot's own stamp of the hook call, which events.jsonl records with it."""

    __slots__ = ("hook_ms",)

    def __init__(self, name: str, kind: str, session: str, cwd: str) -> None:
        super().__init__(NAME, name, kind, session, cwd)
        self.hook_ms: int | None = None

    def conversation(self) -> Position | None:
        """The session's events.jsonl, its size now, and the hook's timestamp: the `hook.start` event of this
        call in events.jsonl carries the same one (no hook names a message or a tool call)."""
        position = super().conversation()
        if position is not None and self.hook_ms is not None:
            position.extra["hook_ms"] = self.hook_ms
        return position


def event_name(payload: dict[str, Any]) -> str:
    """The event a camelCase payload is for: its shape says it (Copilot sends no event name, so one command
    serves every event); a name it carries (permissionRequest's hookName) wins."""
    named = text(payload.get("hookName")) or text(payload.get("hook_event_name"))
    if named:
        return named
    if "toolName" in payload:
        return "postToolUse" if "toolResult" in payload else "preToolUse"
    if "transcriptPath" in payload or "stopReason" in payload:
        return "agentStop"
    if "transformedPrompt" in payload:
        return "userPromptTransformed"
    if "prompt" in payload:
        return "userPromptSubmitted"
    if "source" in payload or "initialPrompt" in payload:
        return "sessionStart"
    if "reason" in payload:
        return "sessionEnd"
    return ""


def _copilot_home(home: str) -> str:
    """$COPILOT_HOME (it holds hooks/, session-state/ and mcp-config.json directly), else ~/.copilot."""
    return agent_home("COPILOT_HOME", ".copilot", home)


def session_folders(home: str, environ: Mapping[str, str]) -> tuple[str, ...]:
    """<Copilot home>/session-state: the home is $COPILOT_HOME when set (it holds session-state and hooks
    directly, seen live), else ~/.copilot."""
    return home_folders(home, environ, "COPILOT_HOME", (".copilot", "session-state"), ("session-state",))


def parse(payload: dict[str, Any]) -> Event:
    """The Event a Copilot CLI hook payload (camelCase form) describes."""
    name = event_name(payload)
    session = text(payload.get("sessionId")) or ""
    event = CopilotEvent(name, _KINDS.get(name, ev.OTHER), session, text(payload.get("cwd")) or "")
    stamp = payload.get("timestamp")
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
        event.hook_ms = int(stamp)
        event.time = stamp / 1000
    event.transcript = text(payload.get("transcriptPath"))
    if event.transcript is None and session and "/" not in session and session not in (".", ".."):
        event.transcript = os.path.join(session_folders(os.path.expanduser("~"), os.environ)[0], session,
                                        "events.jsonl")
    event.source = text(payload.get("source")) or text(payload.get("reason"))
    if event.kind == ev.PROMPT:
        event.prompt = text(payload.get("prompt"))
    tool = text(payload.get("toolName"))
    if tool and event.kind in (ev.PRE_TOOL, ev.POST_TOOL):
        event.tool, event.tool_kind = tool, TOOL_KINDS.get(tool)
        args = payload.get("toolArgs")
        if event.tool_kind in (ev.WRITE, ev.EDIT) and isinstance(args, dict):
            _read_tool_args(event, tool, args)
        elif event.tool_kind == ev.SHELL and isinstance(args, dict):
            event.command = ev.shell_command(args.get("command"))
    return event


def _read_tool_args(event: Event, tool: str, args: dict[str, Any]) -> None:
    if tool == "apply_patch":
        ev.read_patch(event, next((v for v in args.values() if isinstance(v, str) and "*** " in v), ""))
        return
    path = text(args.get("path"))
    if not path:
        return
    event.paths = [path]
    if tool == "create":
        event.change_chars = ev.written_chars(event, path, args.get("file_text"))
    else:
        event.change_chars = changed_chars(str(args.get("old_str") or ""), str(args.get("new_str") or ""))


def resume_command(session: str) -> str:
    return f"copilot --resume={session}"


# conversation rewind -------------------------------------------------------------------------
#
# events.jsonl is cut (its full content is in git first): Copilot rebuilds the conversation from the events
# that are left. A checkpoint is found by its hook call: the `hook.start` event whose input carries the
# payload's timestamp (note: conversation.hook_ms). A prompt is cut just before that hook call; a tool call
# just before the model turn that asked for it (its assistant.turn_start); after a shell command, at the end
# of its turn; a turn end or session start just before its hook call. The first line, session.start, stays.


def _data(line: dict[str, Any] | None) -> dict[str, Any]:
    data = (line or {}).get("data")
    return data if isinstance(data, dict) else {}


# Copilot stamps a hook's payload and the hook.start event it logs with two reads of the clock, which can fall
# a millisecond or more apart; a tool call's hook.start carries no copy of the payload's stamp to match exactly.
NEAR_MS = 1000


def _iso_ms(stamp: object) -> int | None:
    """Epoch milliseconds of an events.jsonl ISO stamp (`2026-11-25T14:09:39.161Z`), None for anything else."""
    import calendar
    import time

    if not isinstance(stamp, str) or len(stamp) != 24 or stamp[19] != "." or stamp[23] != "Z":
        return None
    try:
        return calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S")) * 1000 + int(stamp[20:23])
    except ValueError:
        return None


def _hook_call(transcript: Transcript, trigger: str | None, ms: object,
               fits: Callable[[dict[str, Any]], bool] | None = None) -> int | None:
    """The line of the `hook.start` event of the hook call stamped MS, among those of TRIGGER whose data FITS:
    the first whose input carries the stamp, or else (tool calls, whose input is the calls instead) whose own
    stamp is nearest to MS, within NEAR_MS."""
    if not isinstance(ms, int) or isinstance(ms, bool):
        return None
    near: tuple[int, int] | None = None
    for i, line in enumerate(transcript.lines):
        data = _data(line)
        if line is None or line.get("type") != "hook.start" or data.get("hookType") != trigger or (
                fits is not None and not fits(data)):
            continue
        given = data.get("input")
        at = ms if isinstance(given, dict) and given.get("timestamp") == ms else _iso_ms(line.get("timestamp"))
        if at is not None and abs(at - ms) <= NEAR_MS and (near is None or abs(at - ms) < near[0]):
            near = (abs(at - ms), i)
    return None if near is None else near[1]


def _names(arguments: object, paths: list[str]) -> bool:
    named = str((arguments if isinstance(arguments, dict) else {}).get("path") or "")
    return not paths or any(named == p or named.endswith("/" + p) for p in paths)


def _turn_of_call(transcript: Transcript, note: Note, anchor: int | None) -> int | None:
    """The line of the assistant.turn_start of the model turn that asked for the checkpoint's tool call."""
    lines = transcript.lines
    conv = note.position
    start = anchor if anchor is not None else (
        transcript.lines_within(conv.offset) if isinstance(conv.offset, int) else len(lines))
    start = min(start, len(lines) - 1)
    paths = list(note.files_named)
    given = _data(lines[anchor]).get("input") if anchor is not None else None
    calls = given.get("toolCalls") if isinstance(given, dict) else None
    call = next((c.get("id") for c in calls if isinstance(c, dict) and c.get("name") == note.tool
                 and _names(c.get("args"), paths)), None) if isinstance(calls, list) else None
    if call is None:  # no hook call found: the nearest call of that tool on that file before where the hook was
        call = next((_data(lines[i]).get("toolCallId") for i in range(start, -1, -1)
                     if (lines[i] or {}).get("type") == "tool.execution_start"
                     and _data(lines[i]).get("toolName") == note.tool
                     and _names(_data(lines[i]).get("arguments"), paths)), None)
    if call is None:
        return None
    for i in range(start, -1, -1):
        line = lines[i] or {}
        if line.get("type") == "assistant.message" and any(
                isinstance(r, dict) and r.get("toolCallId") == call for r in _data(line).get("toolRequests") or []):
            turn = _data(line).get("turnId")
            for j in range(i, 0, -1):
                before = lines[j] or {}
                if before.get("type") == "assistant.turn_start" and _data(before).get("turnId") == turn:
                    return j
                if before.get("type") in ("assistant.turn_end", "user.message"):
                    return j + 1
            return i
    return None


def _locate(transcript: Transcript, note: Note) -> tuple[int, str, str | None]:
    """(lines to keep, where in words, the prompt to resend)."""
    from ..base.errors import RewindError

    conv = note.position
    trigger = note.trigger
    where = {"userPromptSubmitted": "just before the prompt", "preToolUse": f"just before the {note.tool} call",
             "postToolUse": f"after the {note.tool} call"}.get(str(trigger), "where it was")
    prompt = note.prompt if trigger == "userPromptSubmitted" else None
    if conv.message_uuid:  # what an earlier rewind resolved it to
        found = transcript.index_where(lambda line: line.get("id") == conv.message_uuid)
        if found is not None:
            return found, where, prompt
    fits = None
    if trigger == "preToolUse":
        def fits(data: dict[str, Any]) -> bool:
            """A tool call's hook.start whose input is a call of the checkpoint's tool on its files."""
            given = data.get("input")
            calls = given.get("toolCalls") if isinstance(given, dict) else None
            return isinstance(calls, list) and any(
                isinstance(c, dict) and c.get("name") == note.tool and _names(c.get("args"), list(note.files_named))
                for c in calls)
    anchor = _hook_call(transcript, trigger, conv.extra.get("hook_ms"), fits)
    if trigger == "userPromptSubmitted":
        if anchor is None:
            at = transcript.lines_within(conv.offset) if isinstance(conv.offset, int) else 0
            anchor = transcript.index_where(lambda line: line.get("type") == "user.message"
                                            and _data(line).get("content") == note.prompt, at)
        if anchor is None:
            raise RewindError(f"the prompt of #{note.seq} is not in {transcript.path}")
        return anchor, where, prompt
    if trigger == "preToolUse":
        turn = _turn_of_call(transcript, note, anchor)
        if turn is None:
            raise RewindError(f"the {note.tool or 'tool'} call of #{note.seq} is not in {transcript.path}")
        return turn, where, None
    if anchor is not None and trigger == "postToolUse":
        end = transcript.index_where(lambda line: line.get("type") == "assistant.turn_end", anchor)
        return (len(transcript.lines) if end is None else end + 1), where, None
    if anchor is not None:
        return anchor, where, None
    if not isinstance(conv.offset, int):
        raise RewindError(f"#{note.seq} does not record where its conversation stood")
    return transcript.lines_within(conv.offset), where, None


def plan_rewind(note: Note, fork: bool, place: Place) -> Plan:
    """Where the conversation of a checkpoint stands, checked against events.jsonl now."""
    from ..base.errors import CODE_ONLY, RewindError
    from .conversation import Plan

    transcript = place.load(note.position.transcript)
    cut, where, prompt = _locate(transcript, note)
    cut = max(1, cut)
    if transcript.index_where(lambda line: str(line.get("type") or "").startswith("session.compaction"),
                              cut) is not None:
        raise RewindError(f"the conversation was compacted after #{note.seq}: Copilot no longer resumes "
                          "from that point", remedy=CODE_ONLY)
    plan = Plan(NAME, str(_data(transcript.at(0)).get("sessionId") or note.session or ""), transcript)
    plan.cut = cut
    plan.target_uuid = str((transcript.lines[cut] or {}).get("id") or "") or None \
        if cut < len(transcript.lines) else None
    plan.prompt = prompt
    plan.fork = fork
    plan.where = where
    plan.empty = not any((line or {}).get("type") == "user.message" for line in transcript.lines[:cut])
    return plan


def _fork(transcript: Transcript, upto: int) -> tuple[str, str]:
    """A new session holding the first UPTO events of TRANSCRIPT under a new id, beside it (its workspace.yaml
    copied with the new id). (id, path of its events.jsonl)"""
    import json
    import uuid as uuidlib

    from .conversation import Transcript

    place = transcript.place
    assert place is not None, "session files are read through their place"
    new = str(uuidlib.uuid4())
    head = dict(transcript.at(0))
    head["data"] = {**_data(head), "sessionId": new}
    data = json.dumps(head, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" \
        + b"".join(transcript.raw[1:upto])
    if not data.endswith(b"\n"):
        data += b"\n"
    path = os.path.join(os.path.dirname(os.path.dirname(transcript.path)), new, "events.jsonl")
    place.create(path, data)
    workspace = place.read_beside(transcript, "workspace.yaml")
    if workspace is not None:
        lines = [f"id: {new}" if line.startswith("id:") else line for line in workspace.decode("utf-8", "replace")
                 .splitlines()]
        place.write_beside(Transcript(path, data), "workspace.yaml", ("\n".join(lines) + "\n").encode())
    return new, path


def apply_rewind(plan: Plan) -> Applied:
    """Cut events.jsonl at the checkpoint (or write the cut as a new session with --fork)."""
    from .conversation import Applied

    if plan.fork:
        new, path = _fork(plan.transcript, plan.kept_lines)
        return Applied(new, resume_command(new), path,
                       f"new session {new} with the conversation cut {plan.where}; {plan.session} is unchanged")
    return cut_in_place(plan, resume_command(plan.session), "copilot", "events")


def apply_redo(info: ConversationRecord, backup: bytes | None, place: Place) -> Applied:
    """Put events.jsonl back as it was before the rewind; events written since become a forked session."""
    return put_back(info, backup, place, resume_command, lambda current: _fork(current, len(current.raw))[0])


class Copilot(Agent):
    """GitHub Copilot CLI: one handler per event in its own hooks file, rewind by cutting events.jsonl."""

    name, hooks = NAME, HOOKS
    prompt_context = True  # userPromptSubmitted's additionalContext goes with the prompt (seen live)
    transcript_noun = "Copilot session file"
    mcp_type = "local"  # what `copilot mcp add` writes for a stdio server
    parse = staticmethod(parse)
    resume_command = staticmethod(resume_command)

    def context_reply(self, event_name: str, text: str) -> dict[str, Any]:
        """Copilot reads a top-level additionalContext (hookSpecificOutput is ignored: seen live)."""
        return {"additionalContext": text}

    def settings_file(self, scope: str, root: str | None, home: str) -> str:
        """<Copilot home>/hooks/git-rewind.json (user: $COPILOT_HOME or ~/.copilot), .github/hooks/git-rewind.json
        (project): a file of our own, beside the others Copilot loads from the same folder."""
        if scope == "user":
            return os.path.join(_copilot_home(home), "hooks", HOOKS_FILE)
        assert root is not None
        return os.path.join(root, ".github", "hooks", HOOKS_FILE)

    def mcp_file(self, scope: str, root: str | None, home: str) -> str:
        """Where `copilot mcp add` writes (<Copilot home>/mcp-config.json), and the project's .github/mcp.json, one of
        the two workspace files `copilot mcp --help` names."""
        if scope == "user":
            return os.path.join(_copilot_home(home), "mcp-config.json")
        assert root is not None
        return os.path.join(root, ".github", "mcp.json")

    def mcp_entry(self, command: list[str]) -> dict[str, Any]:
        """What `copilot mcp add git-rewind -- COMMAND mcp` writes (1.0.102)."""
        return {"tools": ["*"], **super().mcp_entry(command)}

    def handler(self, command: str) -> dict[str, Any]:
        return {"type": "command", "bash": command, "timeoutSec": TIMEOUT}

    def command(self, event_name: str | None, program: list[str] | None) -> str:
        """Our command, its status always 0: Copilot denies a tool when its preToolUse hook fails, as it would
        if git-rewind were removed without `git rewind uninstall`."""
        return super().command(event_name, program) + " || true"

    def install_hooks(self, scope: str, root: str | None, home: str | None, program: list[str] | None) -> Change:
        """One handler per event in our own hooks file ("version": 1); a second install changes nothing."""
        from .settingsfile import write_flat_hooks

        return write_flat_hooks(self.target(scope, root, home),
                                {name: self.handler(self.command(name, program)) for name in HOOKS}, VERSION)

    def uninstall_hooks(self, scope: str, root: str | None, home: str | None) -> Change:
        """Remove exactly our handlers; the file, which we created, goes when nothing else is left in it (and a
        project's .github/ with it when we left it empty)."""
        from .settingsfile import remove_flat_hooks

        path = self.target(scope, root, home)
        change = remove_flat_hooks(path, VERSION)
        if change.removed and scope == "project":
            try:
                os.rmdir(os.path.dirname(os.path.dirname(path)))
            except OSError:
                pass
        return change

    def hooks_installed(self, path: str) -> bool:
        from .settingsfile import has_own_flat_hooks

        return has_own_flat_hooks(path)

    def template(self) -> dict[str, Any]:
        """The readable hooks/copilot/git-rewind.json: what `install --scope project` writes."""
        return {"version": VERSION, "hooks": {name: [self.handler(self.command(name, None))] for name in HOOKS}}

    def transcript_folders(self, home: str, environ: Mapping[str, str]) -> tuple[str, ...]:
        return session_folders(home, environ)

    def transcript_problem(self, transcript: Transcript) -> str | None:
        """JSONL with a "type" on every line, the first Copilot's session.start."""
        from .conversation import jsonl_problem

        if transcript.at(0).get("type") != "session.start":
            return "it does not start with Copilot's session.start event"
        return jsonl_problem(transcript, ("type",))

    def conversation(self) -> Rewinder:
        return Rewinder(plan_rewind, apply_rewind, apply_redo, cut_leaves=lines_kept)

    def handover_refusal(self) -> None:
        return None

    def session_of(self, transcript: Transcript) -> str | None:
        first = transcript.at(0)
        session = _data(first).get("sessionId")
        return str(session) if first.get("type") == "session.start" and session else None

    def handover_files(self, session: str, root: str, place: Place, transcript: Transcript) -> tuple[str, list[str]]:
        """<session-state>/<session>/events.jsonl: Copilot finds a session by its folder's name alone (no
        workspace.yaml needed; it writes one on resume)."""
        path = os.path.join(place.folders[0], session, "events.jsonl")
        return path, [path]

    def rehome(self, transcript: Transcript, root: str, new_session: str | None) -> bytes:
        """The cwd and git root of session.start and session.resume moved from the sender's project to ROOT;
        with NEW_SESSION, session.start's sessionId."""
        context = _data(transcript.at(0)).get("context")
        sender = context.get("cwd") if isinstance(context, dict) else None
        real = os.path.realpath(root)

        def change(line: dict[str, Any]) -> dict[str, Any] | None:
            if line.get("type") not in ("session.start", "session.resume"):
                return None
            data = dict(_data(line))
            if isinstance(data.get("context"), dict):
                data["context"] = {**data["context"], **{key: moved(data["context"][key], sender, real)
                                                         for key in ("cwd", "gitRoot") if key in data["context"]}}
            if new_session and line.get("type") == "session.start":
                data["sessionId"] = new_session
            return {**line, "data": data}

        return rewrite_lines(transcript, change)


AGENT = Copilot()


def detect(payload: Mapping[str, Any], environ: Mapping[str, str]) -> int | None:
    """Copilot CLI sets COPILOT_CLI=1 (and CLAUDE_PROJECT_DIR) for its hooks; its payloads say sessionId
    (agents.detect)."""
    from .base import SHARED_VARIABLE

    if environ.get("COPILOT_CLI") == "1" or ("sessionId" in payload and "hook_event_name" not in payload):
        return SHARED_VARIABLE
    return None
