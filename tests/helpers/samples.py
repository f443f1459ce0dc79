"""Recorded agent hook payloads (tests/samples/) and the agent environment a test must not inherit."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

# Hook payloads recorded from the real Claude Code CLI (shared/agents/claude-code.md), one file per
# event: `hook_stdin` is what the hook read on stdin, `hook_env` the agent-set part of its environment.
CLAUDE_SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "claude-code"

# What agents put in a hook's environment; scrubbed so a test run inside an agent detects nothing.
AGENT_ENV = ("CLAUDECODE", "CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_ENTRYPOINT",
             "FACTORY_PROJECT_DIR", "DROID_PROJECT_DIR", "GEMINI_PROJECT_DIR", "GEMINI_SESSION_ID", "GEMINI_CWD",
             "COPILOT_CLI", "COPILOT_HOME", "QWEN_PROJECT_DIR")


def claude_sample(name: str, root: Path, home: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """(payload, agent env) of a recorded Claude Code hook call, its paths moved into ROOT and HOME."""
    path = CLAUDE_SAMPLES / f"{name}.json"
    text = re.sub(r"/home/dev/work/proj-[A-Za-z0-9-]+", str(root), path.read_text())
    data = json.loads(text.replace("/home/dev", str(home)))
    payload: dict[str, Any] = data["hook_stdin"]
    env = {k: v for k, v in data["hook_env"].items() if k.startswith(("CLAUDE", "ANTHROPIC"))}
    return payload, env
