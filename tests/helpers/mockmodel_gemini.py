"""The Gemini REST API for the mock model (tests/helpers/mockmodel.py), as the Gemini CLI calls it.

Importing this module registers it. Requests (shared/agents/other-agents.md §2.5):
- `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`: an agent turn; the answer is an
  SSE stream of GenerateContentResponse objects whose candidates[0].content.parts hold a text
  or a functionCall {name, args, id}.
- `POST /v1beta/models/<model>:generateContent`: the CLI's router and classifiers (and the
  occasional helper request); any JSON text does.
- `POST /v1beta/models/<model>:countTokens`.

Gemini's `contents` (roles "user" and "model", parts with text, functionCall, functionResponse)
are turned into the common {role, content} shape so the script is chosen as for the other APIs
(hooks' <hook_context> parts left out).
"""

from __future__ import annotations

import json
from typing import Any

from helpers import mockmodel
from helpers.mockmodel import Request, Text, ToolCall

NAME = "gemini"
# What the CLI's routers and checks read back (model routing, next speaker): one object for all.
HELPER_ANSWER = {"reasoning": "mock", "model_choice": "flash", "next_speaker": "user",
                 "complexity_reasoning": "mock", "complexity_score": 10}


def _method(path: str) -> str | None:
    if "/models/" not in path or ":" not in path.rsplit("/", 1)[-1]:
        return None
    return path.rsplit(":", 1)[-1]


def matches(path: str, body: Any) -> bool:
    return _method(path) in ("streamGenerateContent", "generateContent", "countTokens")


def messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Gemini `contents` in the common shape: text parts as text blocks, the role "model" as assistant."""
    found = []
    for content in body.get("contents") or []:
        if not isinstance(content, dict):
            continue
        role = "assistant" if content.get("role") == "model" else "user"
        # Hooks' <hook_context> parts are not what the user typed (and may quote earlier prompts).
        blocks = [{"type": "text", "text": part["text"]} for part in content.get("parts") or []
                  if isinstance(part, dict) and isinstance(part.get("text"), str)
                  and not part["text"].lstrip().startswith("<hook_context>")]
        found.append({"role": role, "content": blocks})
    return found


def tool_results(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """functionResponse parts by call id: {"content": the response as JSON text, "is_error": None}."""
    results: dict[str, dict[str, Any]] = {}
    for content in body.get("contents") or []:
        for part in (content or {}).get("parts") or []:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict):
                key = str(response.get("id") or response.get("name"))
                results[key] = {"content": json.dumps(response.get("response")), "is_error": None}
    return results


def serve(handler: Any, body: Any) -> None:
    method = _method(handler.path.split("?", 1)[0])
    model = handler.model
    if method == "countTokens":
        model.record(Request("POST", handler.path, NAME, body))
        handler.reply_json({"totalTokens": 10})
        return
    request = Request("POST", handler.path, NAME, body)
    body = body if isinstance(body, dict) else {}
    if method == "streamGenerateContent" and body.get("tools"):
        request.main = True
        request.prompt, request.turn, turn = model.choose_from(messages(body))
    else:
        turn = Text(json.dumps(HELPER_ANSWER))
    request.played = turn
    if isinstance(turn, ToolCall):
        request.tool_use_id = model.new_id("call_mock_")
        part: dict[str, Any] = {"functionCall": {"name": turn.name, "args": turn.input, "id": request.tool_use_id}}
    else:
        part = {"text": turn.text}
    model.record(request)
    response = {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "mock-model",
    }
    if method == "generateContent":
        handler.reply_json(response)
        return
    handler.reply(200, f"data: {json.dumps(response)}\n\n".encode(), "text/event-stream")


mockmodel.APIS.append(mockmodel.Api(NAME, matches, serve, tool_results))
