"""Claude Code: hook payloads → Events, and where its hooks are configured.

Facts (shared/agents/claude-code.md): every payload has session_id, transcript_path, cwd and
hook_event_name; tool events add tool_name, tool_input and tool_use_id; prompts add prompt and
prompt_id. Hooks live under the "hooks" key of a settings.json.
"""

from __future__ import annotations

import os

from . import event as ev
from .base import Agent, LeafRewind, Rewinder, dashed, first_session, home_folders, rehome_cwd
from .event import Event, changed_chars, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ..base.note import Note
    from .conversation import Place, Plan, Transcript

NAME = "claude-code"
SCOPES = ("user", "project", "local")

# PostToolUseFailure: a Bash command that exited non-zero may still have written files.
_KINDS = {**ev.CLAUDE_STYLE_KINDS, "PostToolUseFailure": ev.POST_TOOL}
TOOL_KINDS = {"Write": ev.WRITE, "Edit": ev.EDIT, "MultiEdit": ev.EDIT, "NotebookEdit": ev.EDIT, "Bash": ev.SHELL}

# What `git rewind install` writes: event → matcher (None: every occurrence).
HOOKS: dict[str, str | None] = {
    "SessionStart": None,
    "UserPromptSubmit": None,
    "PreToolUse": "Write|Edit|MultiEdit|NotebookEdit",
    "PostToolUse": "Bash",
    "PostToolUseFailure": "Bash",
    "Stop": None,
    "SessionEnd": None,
    "PreCompact": None,
}


def settings_file(scope: str, root: str | None, home: str) -> str:
    """The settings file a scope means: ~/.claude/settings.json, .claude/settings(.local).json."""
    if scope == "user":
        return os.path.join(home, ".claude", "settings.json")
    assert root is not None
    return os.path.join(root, ".claude", "settings.local.json" if scope == "local" else "settings.json")


def parse(payload: dict[str, Any]) -> Event:
    """The Event a Claude Code hook payload describes."""
    event = ev.from_payload(NAME, _KINDS, payload, "prompt_id", TOOL_KINDS)
    tool_input = payload.get("tool_input")
    if event.tool and isinstance(tool_input, dict):
        _read_tool_input(event, event.tool, tool_input)
    return event


def _read_tool_input(event: Event, tool: str, tool_input: dict[str, Any]) -> None:
    path = text(tool_input.get("file_path")) or text(tool_input.get("notebook_path"))
    if path:
        event.paths = [path]
    if tool == "Write" and path:
        event.change_chars = ev.written_chars(event, path, tool_input.get("content"))
    elif tool == "Edit":
        event.change_chars = changed_chars(str(tool_input.get("old_string") or ""),
                                           str(tool_input.get("new_string") or ""))
    elif tool == "MultiEdit":
        edits = tool_input.get("edits")
        if isinstance(edits, list):
            event.change_chars = sum(
                changed_chars(str(e.get("old_string") or ""), str(e.get("new_string") or ""))
                for e in edits if isinstance(e, dict)
            )
    elif tool == "NotebookEdit":
        event.change_chars = len(str(tool_input.get("new_source") or ""))


def resume_command(session: str) -> str:
    return f"claude --resume {session}"


# conversation rewind -------------------------------------------------------------------------
#
# Claude Code resumes the chain that ends at the leaf named by the last `last-prompt` line with
# `explicit: true` (shared/agents/claude-code.md, "Resume"). Appending one that names an earlier
# message rewinds the conversation without deleting a line: what came after stays in the file
# as a dead branch, and a later `last-prompt` can bring it back (redo).

def _is_prompt(line: dict[str, Any]) -> bool:
    """A user line that is a prompt someone typed (not a tool result, not a meta line)."""
    if line.get("type") != "user" or line.get("isMeta") or "toolUseResult" in line:
        return False
    content = (line.get("message") or {}).get("content")
    if isinstance(content, str):
        return True
    return isinstance(content, list) and not any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def _has_block(line: dict[str, Any], kind: str, key: str, value: str | None) -> bool:
    content = (line.get("message") or {}).get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == kind and b.get(key) == value for b in content)


def _prompt_text(line: dict[str, Any]) -> str:
    content = (line.get("message") or {}).get("content")
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text") or "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def current_leaf(transcript: Transcript) -> str | None:
    """The message Claude Code would resume from now.

    The leaf of the last `last-prompt` line, unless messages were written after it (the
    session went on): then the last of those. Seen live: Claude Code's own later last-prompt
    lines, not explicit, win over an earlier explicit one.
    """
    leaf: str | None = None
    for line in transcript.lines:
        if line is None:
            continue
        if line.get("type") == "last-prompt":
            leaf = line.get("leafUuid")
        elif line.get("uuid") and line.get("type") in ("user", "assistant"):
            leaf = str(line["uuid"])
    return leaf


def _locate(transcript: Transcript, note: Note) -> tuple[int, str | None, str, str | None]:
    """(index of the checkpoint's message, uuid of the last message kept, where in words, prompt to resend)."""
    from ..base.errors import RewindError

    conv = note.position
    trigger = note.trigger
    resolved = conv.message_uuid

    def by_uuid(uuid: str) -> int | None:
        return transcript.index_where(lambda line: line.get("uuid") == uuid)

    if trigger == "UserPromptSubmit" and (resolved or conv.prompt_id):
        index = by_uuid(resolved) if resolved else transcript.index_where(
            lambda line: _is_prompt(line) and line.get("promptId") == conv.prompt_id)
        if index is None:
            raise RewindError(f"the prompt of #{note.seq} is not in {transcript.path}")
        line = transcript.at(index)
        return index, line.get("parentUuid"), "just before the prompt", _prompt_text(line)
    if trigger == "PreToolUse" and (resolved or conv.tool_use_id):
        index = by_uuid(resolved) if resolved else transcript.index_where(
            lambda line: line.get("type") == "assistant" and _has_block(line, "tool_use", "id", conv.tool_use_id))
        if index is None:
            raise RewindError(f"the {note.tool or 'tool'} call of #{note.seq} "
                              f"is not in {transcript.path}")
        # An assistant message is written one content block per line: go back to its first line.
        message_id = (transcript.at(index).get("message") or {}).get("id")
        while message_id:
            parent = by_uuid(str(transcript.at(index).get("parentUuid") or ""))
            if parent is None or (transcript.at(parent).get("message") or {}).get("id") != message_id:
                break
            index = parent
        return index, transcript.at(index).get("parentUuid"), f"just before the {note.tool} call", None
    if trigger in ("PostToolUse", "PostToolUseFailure") and (resolved or conv.tool_use_id):
        index = by_uuid(resolved) if resolved else transcript.index_where(
            lambda line: line.get("type") == "user" and _has_block(line, "tool_result", "tool_use_id",
                                                                   conv.tool_use_id))
        if index is None:
            raise RewindError(f"the {note.tool or 'tool'} result of #{note.seq} is not in "
                              f"{transcript.path}")
        return index, transcript.at(index).get("uuid"), f"just after the {note.tool} result", None
    return _locate_end_of(transcript, note, resolved)


def _locate_end_of(transcript: Transcript, note: Note, resolved: str | None) -> tuple[int, str | None, str, None]:
    """A checkpoint between turns (session start, turn end, /clear): keep what had been said by then."""
    from ..base.errors import RewindError

    conv = note.position
    lines = transcript.lines
    stop: int | None = None
    if resolved:
        stop = transcript.index_where(lambda line: line.get("uuid") == resolved)
        if stop is None:
            raise RewindError(f"message {resolved} of #{note.seq} is not in {transcript.path}")
        return stop, resolved, "where it was", None
    if note.trigger == "Stop" and conv.prompt_id:
        # The turn ends where the next prompt starts (the final text may be flushed after the hook ran).
        start = transcript.index_where(lambda line: _is_prompt(line) and line.get("promptId") == conv.prompt_id)
        if start is not None:
            following = transcript.index_where(_is_prompt, start + 1)
            stop = following if following is not None else len(lines)
    if stop is None:
        offset = conv.offset
        if not isinstance(offset, int):
            raise RewindError(f"#{note.seq} does not record where its conversation stood")
        stop = transcript.lines_within(offset)
    for index in range(stop - 1, -1, -1):
        line = lines[index]
        if line is not None and line.get("uuid") and line.get("type") in ("user", "assistant"):
            return index, str(line["uuid"]), "at the end of the turn", None
    return 0, None, "at the start of the session", None


def plan_rewind(note: Note, fork: bool, place: Place) -> Plan:
    """Where the conversation of a checkpoint stands, checked against the transcript now."""
    from ..base.errors import CODE_ONLY, RewindError
    from .conversation import Plan

    conv = note.position
    transcript = place.load(conv.transcript)
    index, leaf, where, prompt = _locate(transcript, note)
    lines = transcript.lines
    compacted = transcript.index_where(
        lambda line: line.get("type") == "system" and line.get("subtype") == "compact_boundary", index + 1)
    if compacted is not None:
        raise RewindError(f"the conversation was compacted after #{note.seq}: Claude Code no longer "
                          "resumes from that point", remedy=CODE_ONLY)
    session = str((lines[index] or {}).get("sessionId") or note.session or "")
    plan = Plan(NAME, session, transcript)
    plan.target_uuid = str((lines[index] or {}).get("uuid") or "") or None
    plan.leaf = leaf
    plan.prompt = prompt
    plan.fork = fork
    plan.empty = leaf is None
    plan.where = where
    return plan


def _chain(transcript: Transcript, leaf: str) -> list[int]:
    """Line indexes of the chain from the root to LEAF, in file order (a compaction links by logicalParentUuid)."""
    from .conversation import uuid_chain

    return uuid_chain(transcript, leaf, ("parentUuid", "logicalParentUuid"))


def _last_prompt_line(transcript: Transcript, leaf: str | None, session: str) -> dict[str, Any]:
    last = ""
    if leaf:
        for i in reversed(_chain(transcript, leaf)):
            if _is_prompt(transcript.at(i)):
                last = _prompt_text(transcript.at(i))
                break
    return {"type": "last-prompt", "lastPrompt": last, "leafUuid": leaf, "explicit": True, "rewound": True,
            "sessionId": session}


# Appending a last-prompt line rewinds; --fork writes the chain and its last-prompt line as a new session.
_REWIND = LeafRewind("claude", resume_command, _last_prompt_line, ("parentUuid", "logicalParentUuid"))
apply_rewind = _REWIND.apply_rewind
apply_redo = _REWIND.apply_redo


# a conversation handed over from another machine ----------------------------------------------

PROJECT_NAME_MAX = 200  # Claude Code cuts longer project folder names and appends a hash


def _js_hash(text: str) -> int:
    """Java's String.hashCode over UTF-16 code units, as Claude Code computes it (32-bit signed)."""
    units = text.encode("utf-16-le", "surrogatepass")
    value = 0
    for i in range(0, len(units), 2):
        value = (value * 31 + (units[i] | units[i + 1] << 8)) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if not number:
            return out


def project_folder(cwd: str) -> str:
    """The folder name Claude Code keeps a project's transcripts under: every UTF-16 unit that is not an ASCII
    letter or digit becomes '-', and a name over 200 is cut with '-<base36 hash>' appended (read in 2.1.197)."""
    name = dashed(cwd)
    if len(name) <= PROJECT_NAME_MAX:
        return name
    return f"{name[:PROJECT_NAME_MAX]}-{_base36(abs(_js_hash(cwd)))}"


class ClaudeCode(Agent):
    """Claude Code: hooks under "hooks" in settings.json, /checkpoint /resume /rewind, rewind by last-prompt."""

    name, hooks = NAME, HOOKS
    scopes = SCOPES
    transcript_noun = "Claude Code transcript"
    prompt_context = True  # UserPromptSubmit additionalContext (shared/agents/claude-code.md)
    parse = staticmethod(parse)
    settings_file = staticmethod(settings_file)
    resume_command = staticmethod(resume_command)

    def slash_commands(self) -> dict[str, bytes]:
        from .. import resources

        return resources.listing(NAME, "commands", suffix=".md")

    def readable_files(self) -> dict[str, bytes]:
        return {**super().readable_files(), **{f"commands/{n}": c for n, c in self.slash_commands().items()}}

    def mcp_file(self, scope: str, root: str | None, home: str) -> str:
        """~/.claude.json (user) or <project>/.mcp.json."""
        return os.path.join(home, ".claude.json") if scope == "user" else os.path.join(str(root), ".mcp.json")

    def transcript_folders(self, home: str, environ: Mapping[str, str]) -> tuple[str, ...]:
        """<config dir>/projects: ~/.claude, and $CLAUDE_CONFIG_DIR when set (Claude Code's own variable)."""
        return home_folders(home, environ, "CLAUDE_CONFIG_DIR", (".claude", "projects"), ("projects",))

    def transcript_problem(self, transcript: Transcript) -> str | None:
        """Every line a JSON object with a "type" (user, assistant, attachment, system, last-prompt…)."""
        from .conversation import jsonl_problem

        return jsonl_problem(transcript, ("type",))

    def conversation(self) -> Rewinder:
        return Rewinder(plan_rewind, apply_rewind, apply_redo, current_leaf)

    def handover_refusal(self) -> None:
        return None

    def session_of(self, transcript: Transcript) -> str | None:
        return first_session(transcript)

    def handover_files(self, session: str, root: str, place: Place, transcript: Transcript) -> tuple[str, list[str]]:
        """<config dir>/projects/<root, as Claude Code names it>/<session>.jsonl: where `claude --resume` run in
        the clone's root looks (Claude Code keys the folder by the real path of its working directory)."""
        path = os.path.join(place.folders[0], project_folder(os.path.realpath(root)), f"{session}.jsonl")
        return path, [path]

    def rehome(self, transcript: Transcript, root: str, new_session: str | None) -> bytes:
        """Every line's `cwd` moved from the sender's project to ROOT; with NEW_SESSION, every `sessionId`."""
        return rehome_cwd(transcript, root, new_session)


AGENT = ClaudeCode()


def detect(payload: Mapping[str, Any], environ: Mapping[str, str]) -> int | None:
    """CLAUDECODE, which Claude Code sets (and a program it started inherits); a payload nobody else claims is
    Claude Code's too, as agents.detect decides (agents.detect)."""
    from .base import SHARED_VARIABLE

    return SHARED_VARIABLE + 1 if environ.get("CLAUDECODE") else None
