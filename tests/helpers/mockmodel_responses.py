"""The OpenAI Responses API for the mock model (tests/helpers/mockmodel.py): what Codex CLI speaks.

`POST …/responses` with the conversation as `input` items, answered as a server-sent event
stream: response.created → response.output_item.added/done (one item: a message, a
function_call, or a custom_tool_call for apply_patch) → response.completed. The script's
turns are chosen from `input` mapped to the common {role, content} shape: user messages
are the prompts, each tool call or assistant message the model made is one assistant turn.

A ToolCall named "apply_patch" is played as Codex's freeform (custom) tool, its input the
patch text under "input"; any other ToolCall is a function call with JSON arguments.

Import this module to register the API.
"""

from __future__ import annotations

import json
import time
from typing import Any

from helpers import mockmodel
from helpers.mockmodel import Request, Text, ToolCall

CUSTOM_TOOLS = ("apply_patch",)


def _matches(path: str, body: Any) -> bool:
    return path.endswith("/responses") and isinstance(body, dict)


def messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's `input` items in the common shape: user prompts, assistant turns, tool outputs."""
    out: list[dict[str, Any]] = []
    for item in body.get("input") or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "message" or (kind is None and "role" in item):
            role = item.get("role")
            if role == "user":
                out.append({"role": "user", "content": item.get("content")})
            elif role == "assistant":
                out.append({"role": "assistant", "content": item.get("content")})
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            out.append({"role": "assistant", "content": []})
        elif kind in ("function_call_output", "custom_tool_call_output"):
            out.append({"role": "tool", "content": item.get("output")})
    return out


def user_texts(body: Any) -> list[str]:
    """The text of every user message the request carries, in order."""
    if not isinstance(body, dict):
        return []
    return [mockmodel._user_text(m) for m in messages(body) if m["role"] == "user"]


def _tool_results(body: Any) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    for item in (body.get("input") or []) if isinstance(body, dict) else []:
        if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            if isinstance(output, dict):
                output = output.get("content") or json.dumps(output)
            elif isinstance(output, list):
                output = "\n".join(str(p.get("text", "")) for p in output if isinstance(p, dict))
            results[str(item.get("call_id"))] = {"content": str(output), "is_error": None}
    return results


def _serve(handler: Any, body: dict[str, Any]) -> None:
    model = handler.model
    request = Request("POST", handler.path, "responses", body)
    if body.get("tools"):
        request.main = True
        request.prompt, request.turn, turn = model.choose_from(messages(body))
    else:  # a title or summary request
        turn = Text("Mock session")
    request.played = turn
    response_id = model.new_id("resp_mock_")
    item_id = model.new_id("item_mock_")
    if isinstance(turn, ToolCall):
        request.tool_use_id = model.new_id("call_mock_")
        if turn.name in CUSTOM_TOOLS:
            patch = turn.input.get("input") if isinstance(turn.input.get("input"), str) else json.dumps(turn.input)
            item: dict[str, Any] = {"type": "custom_tool_call", "id": item_id, "status": "completed",
                                    "call_id": request.tool_use_id, "name": turn.name, "input": patch}
        else:
            item = {"type": "function_call", "id": item_id, "status": "completed", "call_id": request.tool_use_id,
                    "name": turn.name, "arguments": json.dumps(turn.input)}
    else:
        item = {"type": "message", "id": item_id, "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}]}
    model.record(request)
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    created = int(time.time())
    base = {"id": response_id, "object": "response", "created_at": created, "model": body.get("model"),
            "output": []}
    events = [
        ("response.created", {"type": "response.created", "response": {**base, "status": "in_progress"}}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": {
            **base, "status": "completed", "output": [item], "usage": usage}}),
    ]
    data = "".join(f"event: {name}\ndata: {json.dumps(payload)}\n\n" for name, payload in events)
    handler.reply(200, data.encode(), "text/event-stream")


API = mockmodel.Api("responses", _matches, _serve, _tool_results)
if not any(api.name == API.name for api in mockmodel.APIS):
    mockmodel.APIS.append(API)
