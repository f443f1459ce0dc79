"""Claude Code: hook payloads → Events, and where its hooks are configured.

Facts (shared/agents/claude-code.md): every payload has session_id, transcript_path, cwd and
hook_event_name; tool events add tool_name, tool_input and tool_use_id; prompts add prompt and
prompt_id. Hooks live under the "hooks" key of a settings.json.
"""

from __future__ import annotations

import os

from .. import event as ev
from ..event import Event, changed_chars, existing_text, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "claude-code"
WRAPPED = True  # hook entries sit under "hooks" in settings.json
SCOPES = ("user", "project", "local")

_KINDS = {
    "SessionStart": ev.SESSION_START,
    "UserPromptSubmit": ev.PROMPT,
    "PreToolUse": ev.PRE_TOOL,
    "PostToolUse": ev.POST_TOOL,
    "PostToolUseFailure": ev.POST_TOOL,  # a Bash command that exited non-zero may still have written files
    "Stop": ev.STOP,
}
TOOL_KINDS = {"Write": ev.WRITE, "Edit": ev.EDIT, "MultiEdit": ev.EDIT, "NotebookEdit": ev.EDIT, "Bash": ev.SHELL}

# What `git rewind install` writes: event → matcher (None: every occurrence).
HOOKS: dict[str, str | None] = {
    "SessionStart": None,
    "UserPromptSubmit": None,
    "PreToolUse": "Write|Edit|MultiEdit|NotebookEdit",
    "PostToolUse": "Bash",
    "PostToolUseFailure": "Bash",
    "Stop": None,
}


def settings_file(scope: str, root: str | None, home: str) -> str:
    """The settings file a scope means: ~/.claude/settings.json, .claude/settings(.local).json."""
    if scope == "user":
        return os.path.join(home, ".claude", "settings.json")
    assert root is not None
    return os.path.join(root, ".claude", "settings.local.json" if scope == "local" else "settings.json")


def parse(payload: dict[str, Any]) -> Event:
    """The Event a Claude Code hook payload describes."""
    event = ev.from_payload(NAME, _KINDS, payload, "prompt_id")
    tool = event.tool
    if tool:
        event.tool_kind = TOOL_KINDS.get(tool)
        tool_input = payload.get("tool_input")
        if isinstance(tool_input, dict):
            _read_tool_input(event, tool, tool_input)
    return event


def _read_tool_input(event: Event, tool: str, tool_input: dict[str, Any]) -> None:
    path = text(tool_input.get("file_path")) or text(tool_input.get("notebook_path"))
    if path:
        event.paths = [path]
    if tool == "Write" and path:
        event.change_chars = changed_chars(existing_text(_absolute(path, event.cwd)),
                                           str(tool_input.get("content") or ""))
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


def _absolute(path: str, cwd: str) -> str:
    return path if os.path.isabs(path) else os.path.join(cwd or os.getcwd(), path)


def resume_command(session: str) -> str:
    return f"claude --resume {session}"
