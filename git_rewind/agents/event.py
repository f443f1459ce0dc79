"""What an agent's hook reported, in one shape for every agent.

Agent modules turn their payloads into an Event; the policy reads only Events, so it never
learns an agent's field names.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..base.note import Position

# Event kinds the policy knows.
SESSION_START = "session_start"
PROMPT = "prompt"
PRE_TOOL = "pre_tool"
POST_TOOL = "post_tool"
STOP = "stop"
SESSION_END = "session_end"  # its reason is in `source` ("clear", "logout", "other"…)
PRE_COMPACT = "pre_compact"  # its trigger ("manual", "auto") is in `source`
OTHER = "other"

# Tool kinds: a tool that creates a file, one that edits files, a shell.
WRITE = "write"
EDIT = "edit"
SHELL = "shell"


class Event:
    """One hook call: which agent and session, what is about to happen or just happened."""

    __slots__ = ("agent", "name", "kind", "session", "cwd", "transcript", "prompt_id", "tool_use_id", "model",
                 "tool", "tool_kind", "paths", "change_chars", "prompt", "source", "time", "command")

    def __init__(self, agent: str, name: str, kind: str, session: str, cwd: str) -> None:
        self.agent = agent
        self.name = name  # the agent's own event name; recorded as the checkpoint's trigger
        self.kind = kind
        self.session = session
        self.cwd = cwd
        self.transcript: str | None = None
        self.prompt_id: str | None = None
        self.tool_use_id: str | None = None
        self.tool: str | None = None
        self.tool_kind: str | None = None
        self.paths: list[str] = []  # as the agent named them (usually absolute)
        self.change_chars: int | None = None  # characters the edit changes, when known
        self.prompt: str | None = None
        self.source: str | None = None  # SessionStart source, SessionEnd reason, PreCompact trigger
        # When the agent says the event happened (seconds since the epoch), if its payload does (Copilot CLI):
        # a session start whose prompt hook ran first (Copilot runs them concurrently) is told that apart.
        self.time: float | None = None
        self.command: str | None = None  # the command line a shell tool ran (or is about to), as the agent sent it
        self.model: str | None = None  # the model at work, when the payload names it (Event.model_of)

    def conversation(self) -> Position | None:
        """Where in the agent's transcript this happened, for the note."""
        if not (self.transcript or self.prompt_id or self.tool_use_id):
            return None
        # The transcript's size now: where this moment is when no message id names it (Droid's
        # tool calls, turn ends). Agents flush their transcript a little later, so it is a hint.
        offset = None
        if self.transcript:
            import os

            try:
                offset = os.stat(self.transcript).st_size
            except OSError:
                pass
        from ..base.note import Position

        return Position(self.transcript, self.prompt_id, self.tool_use_id, None, offset)


# The hook events Claude Code defined and Droid and Codex took over, by kind.
CLAUDE_STYLE_KINDS = {
    "SessionStart": SESSION_START,
    "UserPromptSubmit": PROMPT,
    "PreToolUse": PRE_TOOL,
    "PostToolUse": POST_TOOL,
    "Stop": STOP,
    "SessionEnd": SESSION_END,  # reason "clear": the conversation is about to be wiped
    "PreCompact": PRE_COMPACT,
}


def from_payload(agent: str, kinds: dict[str, str], payload: dict[str, Any], prompt_id_key: str,
                 tool_kinds: dict[str, str] | None = None) -> Event:
    """The fields Claude-style payloads share (Claude Code, Droid, Codex, Gemini CLI): event, session, cwd,
    transcript, tool and, from TOOL_KINDS, what kind of tool it is."""
    name = str(payload.get("hook_event_name") or "")
    event = Event(agent, name, kinds.get(name, OTHER), str(payload.get("session_id") or ""),
                  str(payload.get("cwd") or ""))
    event.transcript = text(payload.get("transcript_path"))
    event.prompt_id = text(payload.get(prompt_id_key))
    event.tool_use_id = text(payload.get("tool_use_id"))
    event.prompt = text(payload.get("prompt"))
    event.source = text(payload.get("source")) or text(payload.get("reason"))
    if event.kind == PRE_COMPACT:
        event.source = text(payload.get("trigger"))
    event.tool = text(payload.get("tool_name"))
    if event.tool and tool_kinds:
        event.tool_kind = tool_kinds.get(event.tool)
    tool_input = payload.get("tool_input")
    if event.tool_kind == SHELL and isinstance(tool_input, dict):
        event.command = shell_command(tool_input.get("command"))
    return event


def shell_command(value: Any) -> str | None:
    """The command line a shell tool's input names: its `command` string, or an argv list joined by spaces
    (what the checkpoint after it is called by; never run, never parsed)."""
    if isinstance(value, list):
        value = " ".join(str(part) for part in value)
    return value if isinstance(value, str) and value.strip() else None


def changed_chars(old: str, new: str) -> int:
    """Characters an edit really changes: the longer side once the common prefix and suffix are cut.

    Edits quote surrounding context; a one-word change inside a 200-character old_string is a
    one-word change.
    """
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[-1 - end] == new[-1 - end]:
        end += 1
    return max(len(old), len(new)) - start - end


def text(value: Any) -> str | None:
    """VALUE if it is a non-empty string."""
    return value if isinstance(value, str) and value else None


def existing_text(path: str, cwd: str = "", limit: int = 1 << 20) -> str:
    """The current content of PATH (relative to CWD) as text, to size a Write: '' when missing, unreadable
    or not a regular file (a FIFO the payload names must never block the hook)."""
    import os

    from ..base.fsutil import read_regular

    try:
        return read_regular(path if os.path.isabs(path) else os.path.join(cwd or os.getcwd(), path),
                            limit).decode("utf-8", "replace")
    except OSError:
        return ""


def written_chars(event: Event, path: str, content: Any) -> int:
    """Characters a whole-file write of CONTENT to PATH changes, against what the file holds now."""
    return changed_chars(existing_text(path, event.cwd), str(content or ""))


def read_file_tool(event: Event, tool_input: dict[str, Any], write: str, edit: str) -> None:
    """The file a Gemini-style tool names (`file_path`) and what it changes: `content` against the file now for the
    WRITE tool, `old_string` against `new_string` for the EDIT tool (Gemini CLI's write_file and replace, Qwen Code's
    write_file and edit); a field of another type counts as empty."""
    def string(key: str) -> str:
        value = tool_input.get(key)
        return value if isinstance(value, str) else ""

    path = text(tool_input.get("file_path"))
    if path:
        event.paths = [path]
        if event.tool == write:
            event.change_chars = written_chars(event, path, string("content"))
    if event.tool == edit:
        event.change_chars = changed_chars(string("old_string"), string("new_string"))


def patch_files(patch: str) -> list[tuple[str, str]]:
    """(action, path) for every file an apply_patch text adds, updates, deletes, or moves an update
    to ("Move"): the `*** Add File:` … `*** Move to:` lines Codex, Droid and OpenCode share."""
    import re  # ~7 ms of import: only patch-carrying events pay it

    pattern = r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$"
    return [("Move", m.group(3)) if m.group(3) else (m.group(1), m.group(2))
            for m in re.finditer(pattern, patch, re.MULTILINE)]


def read_patch(event: Event, patch: str) -> None:
    """Paths, size and kind of an apply_patch edit.

    The size is its +/- lines, plus the whole size of a deleted file (its lines are not in the
    patch); a patch that adds a file counts as creating one (the minimal tier checkpoints it).
    """
    files = patch_files(patch)
    event.paths = list(dict.fromkeys(path for _, path in files))
    changed = sum(len(line) - 1 for line in patch.splitlines()
                  if line[:1] in ("+", "-") and not line.startswith(("+++", "---")))
    for action, path in files:
        if action == "Delete":  # its lines are not in the patch: the file's size is the change
            changed += len(existing_text(path, event.cwd))
    event.change_chars = changed
    if any(action == "Add" for action, _ in files):
        event.tool_kind = WRITE


def model_of(payload: dict[str, object]) -> str | None:
    """The model a hook payload names: Codex sends `model` with every event, Cursor with most, Claude Code,
    Qwen Code and Copilot CLI at some session starts; the same key and a plain id in all of them."""
    model = payload.get("model")
    return model[:200] if isinstance(model, str) and model.strip() else None
