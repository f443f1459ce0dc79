"""What every agent is, whatever it is asked: its name, scopes, programs and the settings it reads.

The root of `base.Agent`, which is this plus one class per concern (payloads.py, hooksetup.py, mcpentry.py,
transcripts.py); each concern reads these attributes and nothing of another concern but what is declared here.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def below(scope: str, root: str | None, home: str, parts: tuple[str, ...]) -> str:
    """PARTS below HOME (user scope) or the project ROOT."""
    import os

    base = home if scope == "user" else root
    assert base is not None and parts
    return os.path.join(base, *parts)


class Identity:
    """An agent's declared facts: every capability is an attribute or a method, nothing is probed."""

    name: str = ""
    scopes: tuple[str, ...] = ("user", "project")
    # What `git rewind install` writes: event → matcher (None: every occurrence).
    hooks: dict[str, str | None] = {}
    wrapped = True  # hook entries sit under "hooks" (False: events at the file's top level)
    # Top-level keys the agent adds itself when it rewrites its settings file (Qwen Code's "$version"): not the
    # user's, so a file left with only those after uninstall was ours and goes.
    agent_keys: tuple[str, ...] = ()
    # The session-start context goes with the session's first prompt instead (Gemini CLI in -p mode glues
    # it in front of the prompt, and drops such a message on resume).
    context_on_prompt = False
    # The agent reads context from its prompt hook's output (`hookSpecificOutput.additionalContext` of the
    # prompt event): what the hook tells a session about rewinds made from outside it (rewinds.py).
    prompt_context = False
    # Where its files are, below the home folder (user scope) or the project: settings_file and mcp_file
    # (an agent whose files are elsewhere overrides those).
    settings_path: tuple[str, ...] = ()
    mcp_path: tuple[str, ...] | None = None  # None: no MCP configuration known
    mcp_type: str | None = "stdio"  # the MCP entry's "type" (None: the agent's own `mcp add` writes none)
    transcript_noun = "transcript"  # what its session files are called in messages ("Codex rollout")
    transcript_suffix = ".jsonl"  # how their names end
    # The programs `git rewind watch -- PROGRAM` knows as this agent (by the executable's name): an agent
    # with no hooks (Aider) is watched, and `watch_context` tells what each checkpoint's note adds.
    programs: tuple[str, ...] = ()

    def hook_reply(self, event_name: str | None) -> dict[str, Any] | None:
        """What the hook prints on stdout whatever happened (None: nothing is expected); read by the hook
        (payloads) and by the shared entries install writes (hooksetup)."""
        return None
