"""Cursor: hook payloads → Events, and its hooks.json. Code rewind only.

Facts (shared/agents/other-agents.md §6, from Cursor's documentation; its CLI cannot be run
here): hooks live in .cursor/hooks.json or ~/.cursor/hooks.json as
`{"version": 1, "hooks": {"<event>": [{"command": "…"}]}}` (no matcher groups). Every payload
has hook_event_name, conversation_id, generation_id and workspace_roots; per event:
beforeSubmitPrompt {prompt}, preToolUse {tool_name, tool_input}, beforeShellExecution and
afterShellExecution {command, cwd (+ output)}, afterFileEdit {file_path, edits}, stop {status}.
The before* hooks answer with JSON on stdout (`{"permission": "allow"}`, `{"continue": true}`):
ours always allows.

Cursor keeps its conversations in its own SQLite stores with no documented way to cut or fork
them from outside, so `undo --conversation/--full` refuses plainly; Cursor's Restore Checkpoint
does that side.
"""

from __future__ import annotations

from . import event as ev
from .base import Agent
from .event import Event, changed_chars, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from .settingsfile import Change

NAME = "cursor"
VERSION = 1  # hooks.json schema version Cursor documents

# What install writes: one command per event (sessionStart left out: some builds reject it).
HOOKS: dict[str, str | None] = {
    "beforeSubmitPrompt": None,
    "preToolUse": None,
    "beforeShellExecution": None,
    "afterShellExecution": None,
    "afterFileEdit": None,
    "stop": None,
}

_KINDS = {
    "sessionStart": ev.SESSION_START,
    "beforeSubmitPrompt": ev.PROMPT,
    "preToolUse": ev.PRE_TOOL,
    "beforeShellExecution": ev.PRE_TOOL,
    "afterShellExecution": ev.POST_TOOL,
    "afterFileEdit": ev.POST_TOOL,
    "stop": ev.STOP,
    "sessionEnd": ev.SESSION_END,
    "preCompact": ev.PRE_COMPACT,
}
# Tool names as preToolUse reports them (lower-cased here): file writers, editors, the shell.
TOOL_KINDS = {"write": ev.WRITE, "edit": ev.EDIT, "multiedit": ev.EDIT, "strreplace": ev.EDIT,
              "search_replace": ev.EDIT, "edit_file": ev.EDIT, "delete": ev.EDIT, "delete_file": ev.EDIT,
              "applypatch": ev.EDIT, "apply_patch": ev.EDIT, "shell": ev.SHELL, "run_terminal_cmd": ev.SHELL}

NO_CONVERSATION_REWIND = ("Cursor's conversation cannot be rewound from outside Cursor: use its own "
                          "Restore Checkpoint for the chat (git rewind undo --code rewinds the files)")


def parse(payload: dict[str, Any]) -> Event:
    """The Event a Cursor hook payload describes."""
    name = str(payload.get("hook_event_name") or "")
    roots = payload.get("workspace_roots")
    root = text(roots[0]) if isinstance(roots, list) and roots else None
    cwd = root or text(payload.get("cwd")) or ""
    session = text(payload.get("conversation_id")) or text(payload.get("session_id")) or ""
    event = Event(NAME, name, _KINDS.get(name, ev.OTHER), session, cwd)
    event.transcript = text(payload.get("transcript_path"))
    event.source = text(payload.get("status")) or text(payload.get("reason"))
    if event.kind == ev.PROMPT:
        event.prompt = text(payload.get("prompt"))
        event.prompt_id = text(payload.get("generation_id"))
    if name in ("beforeShellExecution", "afterShellExecution"):
        event.tool, event.tool_kind = "Shell", ev.SHELL
        event.command = ev.shell_command(payload.get("command"))
    elif name == "afterFileEdit":
        event.tool, event.tool_kind = "Edit", ev.EDIT
        _read_edit(event, payload)
    elif name == "preToolUse":
        tool = text(payload.get("tool_name"))
        event.tool = tool
        event.tool_kind = TOOL_KINDS.get((tool or "").lower())
        event.tool_use_id = text(payload.get("tool_use_id")) or text(payload.get("tool_call_id"))
        tool_input = payload.get("tool_input")
        if isinstance(tool_input, dict):
            _read_tool_input(event, tool_input)
    return event


def _read_tool_input(event: Event, tool_input: dict[str, Any]) -> None:
    path = next((text(tool_input.get(k)) for k in ("file_path", "path", "target_file", "filePath")
                 if text(tool_input.get(k))), None)
    if not path:
        return
    event.paths = [path]
    if event.tool_kind == ev.WRITE:
        content = tool_input.get("content", tool_input.get("contents"))
        event.change_chars = ev.written_chars(event, path, content)
    elif "old_string" in tool_input or "new_string" in tool_input:
        event.change_chars = changed_chars(str(tool_input.get("old_string") or ""),
                                           str(tool_input.get("new_string") or ""))


def _read_edit(event: Event, payload: dict[str, Any]) -> None:
    path = text(payload.get("file_path"))
    if path:
        event.paths = [path]
    edits = payload.get("edits")
    if isinstance(edits, list):
        event.change_chars = sum(changed_chars(str(e.get("old_string") or ""), str(e.get("new_string") or ""))
                                 for e in edits if isinstance(e, dict))


def hook_reply(event_name: str | None) -> dict[str, Any] | None:
    """What our hook prints for EVENT_NAME so Cursor always goes on (None: nothing is expected)."""
    if event_name in ("preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile"):
        return {"permission": "allow"}
    if event_name == "beforeSubmitPrompt":
        return {"continue": True}
    if event_name in ("stop", "sessionStart"):
        return {}
    return None


class Cursor(Agent):
    """Cursor: one {"command": …} per event in hooks.json, JSON on stdout, no conversation rewind."""

    name, hooks = NAME, HOOKS
    settings_path = (".cursor", "hooks.json")
    mcp_path = (".cursor", "mcp.json")
    mcp_type = None  # what Cursor's own configuration holds: no type
    parse = staticmethod(parse)
    hook_reply = staticmethod(hook_reply)
    prompt_context = False  # beforeSubmitPrompt answers only {"continue", "user_message"}: nothing for the agent

    def install_hooks(self, scope: str, root: str | None, home: str | None, program: list[str] | None) -> Change:
        """Add one command per event to hooks.json ("version": 1 kept or set); a second install changes nothing."""
        from .settingsfile import write_flat_hooks

        return write_flat_hooks(self.target(scope, root, home),
                                {name: {"command": self.command(name, program)} for name in HOOKS}, VERSION)

    def uninstall_hooks(self, scope: str, root: str | None, home: str | None) -> Change:
        """Remove exactly our commands; a file we created and left empty goes, else its old bytes come back."""
        from .settingsfile import remove_flat_hooks

        return remove_flat_hooks(self.target(scope, root, home), VERSION)

    def hooks_installed(self, path: str) -> bool:
        """PATH holds at least one of our commands."""
        from .settingsfile import has_own_flat_hooks

        return has_own_flat_hooks(path)

    def template(self) -> dict[str, Any]:
        """The readable hooks/cursor/hooks.json: what `install --scope project` writes (the shared command)."""
        return {"version": VERSION, "hooks": {name: [{"command": self.command(name, None)}] for name in HOOKS}}

    def conversation(self) -> str:
        return NO_CONVERSATION_REWIND


AGENT = Cursor()


def detect(payload: Mapping[str, Any], environ: Mapping[str, str]) -> int | None:
    """Cursor's hooks: conversation_id and workspace_roots in every payload (agents.detect)."""
    from .base import OWN_PAYLOAD

    return OWN_PAYLOAD + 2 if "conversation_id" in payload and "workspace_roots" in payload else None
