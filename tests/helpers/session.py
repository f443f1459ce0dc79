"""An agent session played against the real `git rewind hook`, and what it leaves in the repository."""

from __future__ import annotations

import itertools
import json
import os
import re
from pathlib import Path
from typing import Any

from helpers.workdir import Run, Workdir

MAIN = "4f9eba75-a32a-4359-9724-af1840817a93"  # the recorded Claude Code session
PROMPT_ID = "28e4b330-6feb-4007-a1fa-39a7c2d93298"
BIG = "".join(f"line {i}: some real work\n" for i in range(10))  # well over any size threshold


class Agent:
    """One agent session in a project, calling `git rewind hook` the way the agent does."""

    _tool_ids = itertools.count(1)

    def __init__(self, w: Workdir, agent: str = "claude-code", session: str = "sess-1",
                 env: dict[str, str] | None = None) -> None:
        self.w = w
        self.agent = agent
        self.session = session
        root = str(w.path)
        own = {"CLAUDECODE": "1", "CLAUDE_PROJECT_DIR": root} if agent == "claude-code" else {
            "FACTORY_PROJECT_DIR": root, "CLAUDE_PROJECT_DIR": root}
        self.env = {**own, **(env or {})}
        self.transcript = transcript_path(w, agent, session)

    def payload(self, event: str, **fields: Any) -> dict[str, Any]:
        return {"session_id": self.session, "transcript_path": self.transcript, "cwd": str(self.w.path),
                "hook_event_name": event, **fields}

    def call(self, stdin: str, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> Run:
        return self.w.rewind("hook", *args, input=stdin, env={**self.env, **(env or {})}, cwd=cwd)

    def send(self, event: str, **fields: Any) -> dict[str, Any]:
        """Deliver one event; the agent must see exit 0 and silence (a SessionStart may add its context).

        Returns the logged decision.
        """
        before = len(decisions(self.w))
        run = self.call(json.dumps(self.payload(event, **fields)))
        assert (run.returncode, run.stderr) == (0, "")
        if event != "SessionStart" or run.stdout:
            assert_context_or_silence(run, event)
        logged = decisions(self.w)
        assert len(logged) == before + 1  # one decision per call
        return logged[-1]

    def start(self, source: str = "startup") -> dict[str, Any]:
        return self.send("SessionStart", source=source)

    def prompt(self, text: str, prompt_id: str = "prompt-1") -> dict[str, Any]:
        key = "prompt_id" if self.agent == "claude-code" else "message_id"
        return self.send("UserPromptSubmit", prompt=text, **{key: prompt_id})

    def tool(self, event: str, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        return self.send(event, tool_name=tool, tool_input=tool_input, tool_use_id=f"toolu_{next(self._tool_ids)}")

    def edit(self, rel: str, old: str, new: str) -> dict[str, Any]:
        path = rel if os.path.isabs(rel) else str(self.w.path / rel)
        return self.tool("PreToolUse", "Edit", {"file_path": path, "old_string": old, "new_string": new})

    def write(self, rel: str, content: str) -> dict[str, Any]:
        path = rel if os.path.isabs(rel) else str(self.w.path / rel)
        return self.tool("PreToolUse", "Write", {"file_path": path, "content": content})

    def after_bash(self, command: str) -> dict[str, Any]:
        return self.tool("PostToolUse", "Bash", {"command": command})

    def stop(self) -> dict[str, Any]:
        return self.send("Stop", stop_hook_active=False, last_assistant_message="done")


NO_LIMITS = {"GIT_REWIND_ANTI_SPAM_SECONDS": "0", "GIT_REWIND_MIN_CHANGE_CHARS": "0"}  # every change checkpointed


def two_turns(w: Workdir) -> tuple[Agent, int, int]:
    """Two turns of one agent session on src/app.py (v0 → v1 → v2); the seqs of their prompt checkpoints."""
    w.write("src/app.py", "v0\n")
    w.commit_all("base")
    a = Agent(w, env=NO_LIMITS)
    first = a.prompt("turn one", prompt_id="p1")["seq"]
    a.edit("src/app.py", "v0", "v1")
    w.write("src/app.py", "v1\n")
    a.stop()
    second = a.prompt("turn two", prompt_id="p2")["seq"]
    a.edit("src/app.py", "v1", "v2")
    w.write("src/app.py", "v2\n")
    a.stop()
    return a, first, second


def transcript_path(w: Workdir, agent: str, session: str) -> str:
    """Where the agent keeps SESSION's transcript for the project W, in the test's HOME (as the agent names it)."""
    home = Path(w.env["HOME"])
    if agent == "droid":  # ~/.factory/sessions/-<cwd, "/" → "-">/<id>.jsonl
        key = "-" + str(w.path).strip("/").replace("/", "-")
        return str(home / ".factory" / "sessions" / key / f"{session}.jsonl")
    # ~/.claude/projects/<cwd, every [^a-zA-Z0-9] → "-">/<id>.jsonl
    return str(home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(w.path)) / f"{session}.jsonl")


def assert_context_or_silence(run: Run, event: str) -> None:
    """Nothing on stdout, or at SessionStart exactly one JSON object: the resume context."""
    if event != "SessionStart":
        assert run.stdout == "", run.stdout
        return
    out = json.loads(run.stdout)
    assert list(out) == ["hookSpecificOutput"] and run.stdout.endswith("}\n") and run.stdout.count("\n") == 1
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert out["hookSpecificOutput"]["additionalContext"].startswith("Resumed from checkpoint #")


def decisions(w: Workdir, log: Path | None = None) -> list[dict[str, Any]]:
    path = log or w.path / ".git" / "rewind" / "hook.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def chain(w: Workdir, session: str) -> list[dict[str, Any]]:
    """The session's checkpoints, oldest first: each note as git shows it, plus its commit."""
    if not w.git("for-each-ref", f"refs/rewind/{session}"):
        return []
    notes = []
    for commit in reversed(w.git("rev-list", "--first-parent", f"refs/rewind/{session}").split()):
        notes.append({**json.loads(w.git("notes", "--ref=rewind", "show", commit)), "commit": commit})
    return notes


def show(w: Workdir, commit: str, path: str) -> str | None:
    """PATH's content in COMMIT, or None when the checkpoint does not hold it."""
    if not w.git("ls-tree", commit, "--", path):
        return None
    return w.git("cat-file", "-p", f"{commit}:{path}")


def protected(w: Workdir) -> tuple[bytes, str, str]:
    """The user's index bytes, HEAD, branches/stash/tags: what no hook may touch."""
    return w.user_state()[:3]
