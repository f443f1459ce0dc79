"""Aider's plain chat completions for the mock model (tests/helpers/mockmodel.py): no tools, the edit in the text.

Importing this module registers it. Aider 0.86.2 (shared/agents/kilo-aider.md part B) sends two kinds
of tool-less requests to `/v1/chat/completions`:
- the main reply, streamed, whose system prompt is its edit format's ("Act as an expert software
  developer"); with the `whole` format (what it picks for `openai/mock-model`) the answer names a file on
  one line and gives its whole new content in a fenced block (`whole_file` writes one);
- the commit message, not streamed, whose system prompt asks for "one-line Git commit messages"; its user
  message repeats the chat, so it is told apart by that system prompt and answered COMMIT_MESSAGE.

The script's marker is looked for in the NEWEST user message only: with `--restore-chat-history` the
earlier prompts come back as older messages and must not be answered again.
"""

from __future__ import annotations

from typing import Any

from helpers import mockmodel
from helpers.mockmodel import Request, Text

NAME = "aider"
MAIN_SYSTEM = "Act as an expert software developer"
COMMIT_SYSTEM = "one-line Git commit messages"
COMMIT_MESSAGE = "feat: change made by the mock model"


def whole_file(path: str, content: str, say: str = "Here is the file.") -> Text:
    """A `whole` edit format reply: a sentence, the file's name, its entire new content fenced."""
    return Text(f"{say}\n\n{path}\n```\n{content}```\n")


def _system(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content")) for m in body.get("messages") or []
                     if isinstance(m, dict) and m.get("role") == "system")


def matches(path: str, body: Any) -> bool:
    if not path.endswith("/chat/completions") or not isinstance(body, dict) or body.get("tools"):
        return False
    system = _system(body)
    return MAIN_SYSTEM in system or COMMIT_SYSTEM in system


def newest_user(body: dict[str, Any]) -> str:
    """The text of the last user message (the prompt Aider is answering, with its format reminder)."""
    users = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    return mockmodel._user_text(users[-1]) if users else ""


def serve(handler: Any, body: dict[str, Any]) -> None:
    model = handler.model
    request = Request("POST", handler.path, NAME, body)
    if COMMIT_SYSTEM in _system(body):
        turn: mockmodel.Turn = Text(COMMIT_MESSAGE)
    else:
        request.main = True
        text = newest_user(body)
        marker = next((m for m in model.script if m in text), None)
        turns = model.script.get(marker, []) if marker else []
        request.prompt, request.turn = marker, 0 if marker else None
        turn = turns[0] if turns else Text(model.fallback)
    handler.openai_answer(request, turn, body)


def user_messages(request: Request) -> list[str]:
    """Every user message's text in a recorded request (what Aider sent as the conversation)."""
    body = request.body if isinstance(request.body, dict) else {}
    return [mockmodel._user_text(m) for m in body.get("messages") or []
            if isinstance(m, dict) and m.get("role") == "user"]


mockmodel.APIS.append(mockmodel.Api(NAME, matches, serve, lambda body: {}))
