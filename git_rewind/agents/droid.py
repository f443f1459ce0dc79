"""Factory's Droid: hook payloads → Events, and where its hooks are configured.

Facts (shared/agents/other-agents.md §5): payloads are Claude-like (session_id, transcript_path,
cwd, hook_event_name, tool_name, tool_input); edit tools are Create, Edit and ApplyPatch, the
shell is Execute. hooks.json keys events at the TOP level: a "hooks" wrapper is ignored.
"""

from __future__ import annotations

import os

from .. import event as ev
from ..event import Event, changed_chars, existing_text, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "droid"
WRAPPED = False
SCOPES = ("user", "project")

_KINDS = {
    "SessionStart": ev.SESSION_START,
    "UserPromptSubmit": ev.PROMPT,
    "PreToolUse": ev.PRE_TOOL,
    "PostToolUse": ev.POST_TOOL,
    "Stop": ev.STOP,
}
TOOL_KINDS = {"Create": ev.WRITE, "Edit": ev.EDIT, "MultiEdit": ev.EDIT, "ApplyPatch": ev.EDIT,
              "Execute": ev.SHELL}

HOOKS: dict[str, str | None] = {
    "SessionStart": None,
    "UserPromptSubmit": None,
    "PreToolUse": "Create|Edit|MultiEdit|ApplyPatch",
    "PostToolUse": "Execute",
    "Stop": None,
}

_PATCH_FILE = r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$"


def settings_file(scope: str, root: str | None, home: str) -> str:
    """~/.factory/hooks.json or <project>/.factory/hooks.json."""
    if scope == "user":
        return os.path.join(home, ".factory", "hooks.json")
    assert root is not None
    return os.path.join(root, ".factory", "hooks.json")


def parse(payload: dict[str, Any]) -> Event:
    """The Event a Droid hook payload describes."""
    event = ev.from_payload(NAME, _KINDS, payload, "message_id")
    tool = event.tool
    if tool:
        event.tool_kind = TOOL_KINDS.get(tool)
        tool_input = payload.get("tool_input")
        if isinstance(tool_input, str):  # some builds send inputs as a JSON string
            import json

            try:
                tool_input = json.loads(tool_input)
            except ValueError:
                tool_input = {"patch": tool_input}
        if isinstance(tool_input, dict):
            _read_tool_input(event, tool, tool_input)
    return event


def _read_tool_input(event: Event, tool: str, tool_input: dict[str, Any]) -> None:
    path = text(tool_input.get("file_path")) or text(tool_input.get("path"))
    if tool == "ApplyPatch":
        import re

        patch = next((v for v in tool_input.values() if isinstance(v, str) and "*** " in v), "")
        files = list(re.finditer(_PATCH_FILE, patch, re.MULTILINE))
        event.paths = list(dict.fromkeys(m.group(2) or m.group(3) for m in files))
        event.change_chars = sum(len(line) - 1 for line in patch.splitlines()
                                 if line[:1] in ("+", "-") and not line.startswith(("+++", "---")))
        if any(m.group(1) == "Add" for m in files):
            event.tool_kind = ev.WRITE
        return
    if path:
        event.paths = [path]
    if tool == "Create" and path:
        absolute = path if os.path.isabs(path) else os.path.join(event.cwd or os.getcwd(), path)
        event.change_chars = changed_chars(existing_text(absolute), str(tool_input.get("content") or ""))
    elif tool == "Edit":
        event.change_chars = changed_chars(str(tool_input.get("old_str") or tool_input.get("old_string") or ""),
                                           str(tool_input.get("new_str") or tool_input.get("new_string") or ""))


def resume_command(session: str) -> str:
    return f"droid --resume {session}"
