"""The agents git-rewind knows: which one sent a payload, and its `Agent`.

Each agent is one module here defining a subclass of `base.Agent` and its instance `AGENT`;
adding an agent means adding its module and its line in MODULES. Modules are imported only
when used (the hook imports one on every call).
"""

from __future__ import annotations

import importlib

from ..base.errors import RewindError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from .base import Agent

# Agent name → the module that defines its AGENT, in the order commands list them.
MODULES = {"claude-code": f"{__name__}.claude_code", "droid": f"{__name__}.droid", "gemini": f"{__name__}.gemini",
           "codex": f"{__name__}.codex", "opencode": f"{__name__}.opencode", "cursor": f"{__name__}.cursor",
           "copilot": f"{__name__}.copilot", "qwen": f"{__name__}.qwen", "kilo": f"{__name__}.kilo",
           "aider": f"{__name__}.aider"}
NAMES = tuple(MODULES)


def get(agent: str) -> Agent:
    """The Agent named AGENT (one of NAMES)."""
    if agent not in MODULES:
        raise RewindError(f"unknown agent: {agent} (one of {', '.join(NAMES)})")
    found: Agent = importlib.import_module(MODULES[agent]).AGENT
    return found


def for_program(program: str) -> Agent | None:
    """The agent whose program PROGRAM (a path or a bare name) runs, for `git rewind watch`; None: none known."""
    import os

    name = os.path.basename(program)
    for agent in NAMES:
        found = get(agent)
        if name in found.programs:
            return found
    return None


def detect(payload: Mapping[str, Any], environ: Mapping[str, str]) -> str:
    """Which agent ran the hook: its environment first, then the payload's shape."""
    if environ.get("FACTORY_PROJECT_DIR") or environ.get("DROID_PROJECT_DIR"):
        return "droid"  # Droid also sets CLAUDE_PROJECT_DIR, so it is asked first
    if environ.get("QWEN_PROJECT_DIR"):
        return "qwen"  # Qwen Code also sets CLAUDE_PROJECT_DIR and GEMINI_PROJECT_DIR, so it is asked before them
    if environ.get("GEMINI_PROJECT_DIR") or environ.get("GEMINI_SESSION_ID"):
        return "gemini"  # Gemini CLI sets CLAUDE_PROJECT_DIR too, as an alias
    # Codex sets no variable of its own in a hook's environment; its payloads carry the turn's id.
    if "turn_id" in payload or payload.get("tool_name") == "apply_patch":
        return "codex"
    # OpenCode and Kilo run hooks only through our plugin, whose payload says so (sessionID + event) and
    # names the agent that loaded it ("host"; a plugin from before Kilo sends none: OpenCode).
    if "sessionID" in payload and "event" in payload:
        return "kilo" if payload.get("host") == "kilo" else "opencode"
    # Cursor's hooks: conversation_id and workspace_roots in every payload.
    if "conversation_id" in payload and "workspace_roots" in payload:
        return "cursor"
    # Copilot CLI sets COPILOT_CLI=1 (and CLAUDE_PROJECT_DIR) for its hooks; its payloads say sessionId.
    if environ.get("COPILOT_CLI") == "1" or ("sessionId" in payload and "hook_event_name" not in payload):
        return "copilot"
    if environ.get("CLAUDECODE"):
        return "claude-code"
    # Droid-only fields and tool names; Claude Code's payloads carry prompt_id and effort.
    if {"tool_execution_count", "has_images", "session_duration_ms"} & payload.keys():
        return "droid"
    if payload.get("tool_name") in ("Create", "Execute", "ApplyPatch"):
        return "droid"
    # Qwen Code: Claude's event names with Gemini-like tool names (Gemini CLI's events have names of their own).
    if payload.get("tool_name") in ("write_file", "edit", "run_shell_command") \
            and payload.get("hook_event_name") in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        return "qwen"
    if payload.get("hook_event_name") in ("BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool", "PreCompress") \
            or payload.get("tool_name") in ("write_file", "replace", "run_shell_command"):
        return "gemini"
    return "claude-code"
