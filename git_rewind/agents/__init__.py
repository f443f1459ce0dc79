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
           "cline": f"{__name__}.cline", "aider": f"{__name__}.aider"}
NAMES = tuple(MODULES)


def get(agent: str) -> Agent:
    """The Agent named AGENT (one of NAMES)."""
    if agent not in MODULES:
        raise RewindError(f"unknown agent: {agent} (one of {', '.join(NAMES)})")
    found: Agent = importlib.import_module(MODULES[agent]).AGENT
    return found


def hooked() -> tuple[str, ...]:
    """The agents `install --agent` gives hooks (those with a settings file), in NAMES' order."""
    return tuple(name for name in NAMES if get(name).scopes)


def watched() -> tuple[str, ...]:
    """The agents with no hooks, checkpointed while `git rewind watch -- PROGRAM` runs them, in NAMES' order."""
    return tuple(name for name in NAMES if get(name).programs and not get(name).scopes)


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
    """Which agent ran the hook when its entry did not say so (every entry `install` writes passes --agent):
    each agent module's `detect` says how strongly PAYLOAD and ENVIRON are its own (on base.py's scale); the
    strongest claim wins, and with none, Claude Code (whose payload format the others copy). It imports every
    agent module: a fallback, off the installed hooks' path."""
    claims: list[tuple[int, str]] = []
    for name in NAMES:
        rank = importlib.import_module(MODULES[name]).detect(payload, environ)
        if rank is not None:
            claims.append((rank, name))
    return min(claims)[1] if claims else "claude-code"
