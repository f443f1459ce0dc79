"""Factory's Droid: hook payloads → Events, and where its hooks are configured.

Facts (shared/agents/other-agents.md §5): payloads are Claude-like (session_id, transcript_path,
cwd, hook_event_name, tool_name, tool_input); edit tools are Create, Edit and ApplyPatch, the
shell is Execute. hooks.json keys events at the TOP level: a "hooks" wrapper is ignored.
"""

from __future__ import annotations

import os

from . import event as ev
from .base import Agent, Rewinder, cut_in_place, home_folders, lines_kept, moved, put_back, rewrite_lines
from .event import Event, changed_chars, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ..base.note import ConversationRecord, Note
    from .conversation import Applied, Place, Plan, Transcript

NAME = "droid"

_KINDS = ev.CLAUDE_STYLE_KINDS
TOOL_KINDS = {"Create": ev.WRITE, "Edit": ev.EDIT, "MultiEdit": ev.EDIT, "ApplyPatch": ev.EDIT,
              "Execute": ev.SHELL}

HOOKS: dict[str, str | None] = {
    "SessionStart": None,
    "UserPromptSubmit": None,
    "PreToolUse": "Create|Edit|MultiEdit|ApplyPatch",
    "PostToolUse": "Execute",
    "Stop": None,
    "SessionEnd": None,
    "PreCompact": None,
}


def parse(payload: dict[str, Any]) -> Event:
    """The Event a Droid hook payload describes."""
    event = ev.from_payload(NAME, _KINDS, payload, "message_id", TOOL_KINDS)
    tool_input = payload.get("tool_input")
    if event.tool and isinstance(tool_input, str):  # some builds send inputs as a JSON string
        import json

        try:
            tool_input = json.loads(tool_input)
        except ValueError:
            tool_input = {"patch": tool_input}
    if event.tool and isinstance(tool_input, dict):
        _read_tool_input(event, event.tool, tool_input)
    return event


def _read_tool_input(event: Event, tool: str, tool_input: dict[str, Any]) -> None:
    if event.tool_kind == ev.SHELL:  # also when the input came as a JSON string
        event.command = ev.shell_command(tool_input.get("command"))
        return
    path = text(tool_input.get("file_path")) or text(tool_input.get("path"))
    if tool == "ApplyPatch":
        ev.read_patch(event, next((v for v in tool_input.values() if isinstance(v, str) and "*** " in v), ""))
        return
    if path:
        event.paths = [path]
    if tool == "Create" and path:
        event.change_chars = ev.written_chars(event, path, tool_input.get("content"))
    elif tool == "Edit":
        event.change_chars = changed_chars(str(tool_input.get("old_str") or tool_input.get("old_string") or ""),
                                           str(tool_input.get("new_str") or tool_input.get("new_string") or ""))


def resume_command(session: str) -> str:
    return f"droid --resume {session}"


# conversation rewind -------------------------------------------------------------------------
#
# Droid resumes a session file in the order its lines stand, so the rewind cuts the file (its
# full content is in git first). The first line, `session_start`, is always kept. Its hooks
# name the prompt's message (UserPromptSubmit message_id) but not a tool call: a tool
# checkpoint is found by its tool and file, nearest to the transcript's size at the hook.


def _content(line: dict[str, Any]) -> list[Any]:
    content = (line.get("message") or {}).get("content")
    return content if isinstance(content, list) else []


def _is_prompt(line: dict[str, Any]) -> bool:
    if line.get("type") != "message" or (line.get("message") or {}).get("role") != "user":
        return False
    if str(line.get("id") or "").startswith(("context-", "todo-")):
        return False
    texts = [b for b in _content(line) if isinstance(b, dict) and b.get("type") == "text"]
    return bool(texts) and not all(str(b.get("text") or "").startswith("<system-reminder>") for b in texts)


def _tool_call_matches(line: dict[str, Any], tool: str | None, paths: list[str]) -> bool:
    if line.get("type") != "message" or (line.get("message") or {}).get("role") != "assistant":
        return False
    for block in _content(line):
        if not isinstance(block, dict) or block.get("type") != "tool_use" or block.get("name") != tool:
            continue
        tool_input: dict[str, Any] = block["input"] if isinstance(block.get("input"), dict) else {}
        named = str(tool_input.get("file_path") or tool_input.get("path") or "")
        if not paths or any(named == p or named.endswith("/" + p) for p in paths):
            return True
        patch = next((v for v in tool_input.values() if isinstance(v, str) and "*** " in v), "")
        if any(p in patch for p in paths):
            return True
    return False


def _locate(transcript: Transcript, note: Note) -> tuple[int, str, str | None]:
    """(lines to keep, where in words, the prompt to resend)."""
    from ..base.errors import RewindError

    conv = note.position
    lines = transcript.lines
    trigger = note.trigger
    message_id = conv.message_uuid or conv.prompt_id
    if trigger == "UserPromptSubmit" and message_id:
        index = transcript.index_where(lambda line: line.get("id") == message_id)
        if index is None:
            raise RewindError(f"the prompt of #{note.seq} is not in {transcript.path}")
        prompt = "\n".join(str(b.get("text") or "") for b in _content(lines[index] or {})
                           if isinstance(b, dict) and b.get("type") == "text")
        # The system reminders Droid sends with a prompt go with it.
        while index > 1 and str((lines[index - 1] or {}).get("id") or "").startswith("context-"):
            index -= 1
        return index, "just before the prompt", prompt
    if trigger == "PreToolUse":
        found = [i for i, line in enumerate(lines)
                 if line is not None and _tool_call_matches(line, note.tool, list(note.files_named))]
        if conv.message_uuid:
            found = [i for i in found if (lines[i] or {}).get("id") == conv.message_uuid]
        if not found:
            raise RewindError(f"the {note.tool or 'tool'} call of #{note.seq} "
                              f"is not in {transcript.path}")
        offset = conv.offset
        at = transcript.lines_within(offset) if isinstance(offset, int) else len(lines)
        index = min(found, key=lambda i: (abs(i - at), -i))
        return index, f"just before the {note.tool} call", None
    if message_id and trigger in ("SessionStart", "Stop"):
        index = transcript.index_where(lambda line: line.get("id") == message_id)
        if index is not None:
            return index + 1, "where it was", None
    offset = conv.offset
    if not isinstance(offset, int):
        raise RewindError(f"#{note.seq} does not record where its conversation stood")
    return max(1, transcript.lines_within(offset)), "where it was", None


def plan_rewind(note: Note, fork: bool, place: Place) -> Plan:
    """Where the conversation of a checkpoint stands, checked against the session file now."""
    from ..base.errors import CODE_ONLY, RewindError
    from .conversation import Plan

    conv = note.position
    transcript = place.load(conv.transcript)
    first = transcript.at(0)
    cut, where, prompt = _locate(transcript, note)
    if cut < 1:
        cut = 1
    if transcript.index_where(lambda line: line.get("type") == "compaction_state", cut) is not None:
        raise RewindError(f"the conversation was compacted after #{note.seq}: Droid no longer resumes "
                          "from that point", remedy=CODE_ONLY)
    plan = Plan(NAME, str(first.get("id") or note.session or ""), transcript)
    plan.cut = cut
    plan.target_uuid = str((transcript.lines[cut] or {}).get("id") or "") or None if cut < len(transcript.lines) \
        else None
    plan.prompt = prompt
    plan.fork = fork
    plan.where = where
    plan.empty = not any(line is not None and line.get("type") == "message" for line in transcript.lines[:cut])
    return plan


def _fork(transcript: Transcript, upto: int, old: str) -> tuple[str, str]:
    """A new session file holding the first UPTO lines under a new id; its settings copied. (id, path)"""
    import json
    import uuid as uuidlib

    place = transcript.place
    assert place is not None, "session files are read through their place"
    new = str(uuidlib.uuid4())
    head = dict(transcript.at(0))
    head["id"] = new
    head["parent"] = old
    data = json.dumps(head, separators=(",", ":")).encode() + b"\n" + b"".join(transcript.raw[1:upto])
    if data and not data.endswith(b"\n"):
        data += b"\n"
    folder = os.path.dirname(transcript.path)
    path = os.path.join(folder, new + ".jsonl")
    place.write(path, data, like=transcript.path)
    settings = place.read_beside(transcript, old + ".settings.json")
    if settings is not None:
        place.write_beside(transcript, new + ".settings.json", settings)
    return new, path


def apply_rewind(plan: Plan) -> Applied:
    """Cut the session file at the checkpoint (or write the cut as a new session with --fork)."""
    from .conversation import Applied

    if plan.fork:
        new, path = _fork(plan.transcript, plan.kept_lines, plan.session)
        return Applied(new, resume_command(new), path,
                       f"new session {new} with the conversation cut {plan.where}; {plan.session} is unchanged")
    return cut_in_place(plan, resume_command(plan.session), "droid", "lines")


def apply_redo(info: ConversationRecord, backup: bytes | None, place: Place) -> Applied:
    """Put the session file back as it was before the rewind; lines written since become a forked session."""
    return put_back(info, backup, place, resume_command,
                    lambda current: _fork(current, len(current.raw), str(info.session or ""))[0])


class Droid(Agent):
    """Factory's Droid: events at the top level of hooks.json, rewind by cutting the session file."""

    name, hooks = NAME, HOOKS
    wrapped = False  # hooks.json keys events at the top level: a "hooks" wrapper is ignored
    settings_path = (".factory", "hooks.json")
    mcp_path = (".factory", "mcp.json")  # the shape `droid mcp add` writes
    transcript_noun = "Droid session file"
    prompt_context = True  # UserPromptSubmit, Claude-compatible output (interactive only: not in droid exec)
    parse = staticmethod(parse)
    resume_command = staticmethod(resume_command)

    def seed(self, path: str) -> dict[str, Any]:
        """Droid reads settings.json's "hooks" only while hooks.json is absent: carry them over."""
        from .settingsfile import copy_json, load_json

        hooks = load_json(os.path.join(os.path.dirname(path), "settings.json")).get("hooks")
        return copy_json(hooks) if isinstance(hooks, dict) else {}

    def mcp_entry(self, command: list[str]) -> dict[str, Any]:
        return {**super().mcp_entry(command), "disabled": False}

    def transcript_folders(self, home: str, environ: Mapping[str, str]) -> tuple[str, ...]:
        """<home>/.factory/sessions: the home is $FACTORY_HOME_OVERRIDE when set (read in Droid 0.225's
        binary), else ~."""
        return home_folders(home, environ, "FACTORY_HOME_OVERRIDE", (".factory", "sessions"), (".factory", "sessions"))

    def transcript_problem(self, transcript: Transcript) -> str | None:
        """JSONL with a "type" on every line, the first Droid's session_start."""
        from .conversation import jsonl_problem

        if transcript.at(0).get("type") != "session_start":
            return "it does not start with Droid's session_start line"
        return jsonl_problem(transcript, ("type",))

    def conversation(self) -> Rewinder:
        return Rewinder(plan_rewind, apply_rewind, apply_redo, cut_leaves=lines_kept)

    def handover_refusal(self) -> None:
        return None

    def session_of(self, transcript: Transcript) -> str | None:
        first = transcript.at(0)
        return str(first["id"]) if first.get("type") == "session_start" and first.get("id") else None

    def handover_files(self, session: str, root: str, place: Place, transcript: Transcript) -> tuple[str, list[str]]:
        """<sessions>/-<real path of ROOT, '/' → '-'>/<session>.jsonl, as Droid keys a project (other-agents.md
        §5.3); its old flat layout, <sessions>/<session>.jsonl, which it still searches, holds the session too."""
        folder = place.folders[0]
        path = os.path.join(folder, "-" + os.path.realpath(root).strip("/").replace("/", "-"), f"{session}.jsonl")
        return path, [path, os.path.join(folder, f"{session}.jsonl")]

    def rehome(self, transcript: Transcript, root: str, new_session: str | None) -> bytes:
        """session_start's `cwd` (and any line's) moved from the sender's project to ROOT; with NEW_SESSION, its id."""
        first = transcript.at(0)
        sender = first.get("cwd") if isinstance(first.get("cwd"), str) else None
        real = os.path.realpath(root)

        def change(line: dict[str, Any]) -> dict[str, Any]:
            line = {**line, "cwd": moved(line["cwd"], sender, real)} if "cwd" in line else dict(line)
            if new_session and line.get("type") == "session_start":
                line["id"] = new_session
            return line

        return rewrite_lines(transcript, change)


AGENT = Droid()


def detect(payload: Mapping[str, Any], environ: Mapping[str, str]) -> int | None:
    """Droid's variables (it sets CLAUDE_PROJECT_DIR too), else its own fields and tool names (agents.detect)."""
    from .base import OWN_VARIABLE, PAYLOAD_SHAPE

    if environ.get("FACTORY_PROJECT_DIR") or environ.get("DROID_PROJECT_DIR"):
        return OWN_VARIABLE
    if {"tool_execution_count", "has_images", "session_duration_ms"} & payload.keys() \
            or payload.get("tool_name") in ("Create", "Execute", "ApplyPatch"):
        return PAYLOAD_SHAPE
    return None
