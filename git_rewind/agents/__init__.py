"""The agents git-rewind knows: which one sent a payload, and its module.

Each agent module provides `parse(payload) -> Event`, its install targets and hook entries,
and (later) its conversation rewind. Modules are imported only when used.
"""

from __future__ import annotations

import importlib

from ..errors import RewindError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import ModuleType
    from typing import Any

NAMES = ("claude-code", "droid", "gemini", "codex", "opencode", "cursor")
_MODULES = {"claude-code": "claude_code", "droid": "droid", "gemini": "gemini", "codex": "codex",
            "opencode": "opencode", "cursor": "cursor"}


def module(agent: str) -> ModuleType:
    """The module for AGENT (one of NAMES)."""
    if agent not in _MODULES:
        raise RewindError(f"unknown agent: {agent} (one of {', '.join(NAMES)})")
    return importlib.import_module(f"{__name__}.{_MODULES[agent]}")


def detect(payload: Mapping[str, Any], environ: Mapping[str, str]) -> str:
    """Which agent ran the hook: its environment first, then the payload's shape."""
    if environ.get("FACTORY_PROJECT_DIR") or environ.get("DROID_PROJECT_DIR"):
        return "droid"  # Droid also sets CLAUDE_PROJECT_DIR, so it is asked first
    if environ.get("GEMINI_PROJECT_DIR") or environ.get("GEMINI_SESSION_ID"):
        return "gemini"  # Gemini CLI sets CLAUDE_PROJECT_DIR too, as an alias
    # Codex sets no variable of its own in a hook's environment; its payloads carry the turn's id.
    if "turn_id" in payload or payload.get("tool_name") == "apply_patch":
        return "codex"
    # OpenCode runs hooks only through our plugin, whose payload says so (sessionID + event).
    if "sessionID" in payload and "event" in payload:
        return "opencode"
    # Cursor's hooks: conversation_id and workspace_roots in every payload.
    if "conversation_id" in payload and "workspace_roots" in payload:
        return "cursor"
    if environ.get("CLAUDECODE"):
        return "claude-code"
    # Droid-only fields and tool names; Claude Code's payloads carry prompt_id and effort.
    if {"tool_execution_count", "has_images", "session_duration_ms"} & payload.keys():
        return "droid"
    if payload.get("tool_name") in ("Create", "Execute", "ApplyPatch"):
        return "droid"
    if payload.get("hook_event_name") in ("BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool", "PreCompress") \
            or payload.get("tool_name") in ("write_file", "replace", "run_shell_command"):
        return "gemini"
    return "claude-code"
