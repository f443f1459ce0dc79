"""An agent's hook payloads: what they mean, what the hook answers, what its commits and sessions look like."""

from __future__ import annotations

from .identity import Identity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .event import Event


class Payloads(Identity):
    """Parsing the agent's payloads into Events and answering them."""

    def parse(self, payload: dict[str, Any]) -> Event:
        """The Event a hook payload describes."""
        raise NotImplementedError

    def context_reply(self, event_name: str, text: str) -> dict[str, Any]:
        """The one JSON object a session-start or prompt hook prints to give the agent TEXT as context (Claude Code,
        Droid, Gemini CLI and Codex read `hookSpecificOutput.additionalContext`)."""
        return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}

    def resume_command(self, session: str) -> str | None:
        """The shell command that resumes SESSION (None: the agent has none to offer)."""
        return None

    def watch_context(self, root: str, memo: dict[str, Any]) -> dict[str, Any]:
        """What `git rewind watch` adds to its next checkpoint of this agent's program, working in ROOT: any of
        "prompt" (str: the prompt that led to the changes), "conversation" (a note.Position: where its
        conversation stands), "commits" (list of str: the commits the program made since the last call).
        Called just before each watch checkpoint; MEMO is kept between the calls of one watch run (offsets
        read so far). Never raises: what cannot be read is left out."""
        return {}

    def made_commit(self, committer: str, author: str, message: str) -> bool:
        """A commit with this COMMITTER and AUTHOR name and MESSAGE carries the agent's own mark (Aider's trailer):
        what an undo's note on the commits the branch keeps names as the agent's."""
        return False
