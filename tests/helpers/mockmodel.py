"""A scripted mock of the model APIs the agent CLIs talk to, on 127.0.0.1, for end-to-end tests.

It speaks the Anthropic Messages API (Claude Code) and the OpenAI chat-completions API
(Droid's custom models), always streaming when asked to. What the "model" answers is a
script: for each user prompt, a list of turns, each a tool call or a final text. Which turn
to play is worked out from the request alone: the prompt is the newest user message that
names one of the script's markers, and the turn is the number of assistant messages the
conversation already holds after it. So a resumed or forked session picks up where it
should, and a request that repeats the conversation gets the same answer.

Every request is recorded (`MockModel.requests`): the request log is the ground truth of
what the CLI sent, e.g. that the tool results of the scripted calls came back.

    with MockModel({"PROMPT-1": [ToolCall("Write", {...}), Text("done")]}) as model:
        run_agent(base_url=model.url)
        assert model.tool_results("PROMPT-1")
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

MODEL = "mock-model"
READY_TIMEOUT = 30.0  # seconds a scripted turn waits for MockModel.ready


@dataclass(frozen=True)
class ToolCall:
    """A turn that asks the agent to run one tool."""

    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class FromResults:
    """A tool call's argument the model copies from a tool result it was sent, as a model passes a preview's
    token on to the restore: group 1 of PATTERN in the newest result it matches (None when none does)."""

    pattern: str


@dataclass(frozen=True)
class Text:
    """A turn that ends the agent's work on a prompt with a final text."""

    text: str


Turn = ToolCall | Text


@dataclass
class Request:
    """One recorded request: which API, the path, the parsed JSON body, what was played."""

    method: str
    path: str
    api: str  # "anthropic", "openai" or "other"
    body: Any
    main: bool = False  # an agent turn with tools (not a title or a probe)
    prompt: str | None = None  # the script marker the request was matched to
    turn: int | None = None  # the index of the turn played
    played: Turn | None = None
    tool_use_id: str | None = None  # the id given to a played ToolCall
    time: float = field(default_factory=time.time)


@dataclass(frozen=True)
class Api:
    """A further model API the mock speaks, registered by its own module (tests/helpers/mockmodel_<api>.py).

    `matches(path, body)` picks the requests it answers; `serve(handler, body)` answers one (it
    records its Request through `handler.model`); `tool_results(body)` reads the tool results a
    request carries, by call id, as {"content": text, "is_error": bool | None}.
    """

    name: str
    matches: Any
    serve: Any
    tool_results: Any


APIS: list[Api] = []


class MockModel:
    """The mock server: a threaded http.server in a background thread, a context manager."""

    def __init__(self, script: dict[str, list[Turn]], fallback: str = "Nothing to do.",
                 ready: Callable[[], bool] | None = None) -> None:
        self.script = script
        self.fallback = fallback
        # A scripted turn is played once READY() is true (polled, at most READY_TIMEOUT s): an agent that runs a
        # hook detached (Cline's TaskStart) has it land before the tool calls that follow, as a slow model would.
        self.ready = ready
        self.requests: list[Request] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # life cycle ---------------------------------------------------------------

    def __enter__(self) -> MockModel:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        handler = type("Handler", (Handler,), {"model": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="mockapi", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def port(self) -> int:
        assert self._server is not None, "the mock is not running"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The base URL: Claude Code's ANTHROPIC_BASE_URL (Droid's baseUrl adds /v1)."""
        return f"http://127.0.0.1:{self.port}"

    # what the tests read ------------------------------------------------------

    def main_requests(self, prompt: str | None = None) -> list[Request]:
        """The agent-turn requests (with tools), optionally only those of one prompt marker."""
        with self._lock:
            found = [r for r in self.requests if r.main]
        return [r for r in found if prompt is None or r.prompt == prompt]

    def played(self, prompt: str) -> list[Turn]:
        """The turns of PROMPT played so far, in order (a turn repeated by a retry counts once)."""
        seen: dict[int, Turn] = {}
        for request in self.main_requests(prompt):
            if request.turn is not None and request.played is not None:
                seen.setdefault(request.turn, request.played)
        return [seen[i] for i in sorted(seen)]

    def tool_results(self, prompt: str | None = None) -> dict[str, dict[str, Any]]:
        """Tool results the agent sent back, by tool-call id: {"content": text, "is_error": bool}.

        Taken from every main request (of PROMPT's conversation when given).
        """
        results: dict[str, dict[str, Any]] = {}
        for request in self.main_requests(prompt):
            for call_id, result in _tool_results(request.api, request.body).items():
                results[call_id] = result
        return results

    def tool_use_ids(self, prompt: str) -> dict[int, str]:
        """Turn index → the id given to the tool call played at that turn of PROMPT."""
        ids: dict[int, str] = {}
        for request in self.main_requests(prompt):
            if request.turn is not None and request.tool_use_id:
                ids.setdefault(request.turn, request.tool_use_id)
        return ids

    # answering ----------------------------------------------------------------

    def choose(self, body: dict[str, Any]) -> tuple[str | None, int | None, Turn]:
        """The prompt marker, turn index and turn that answer a main request."""
        return self.choose_from(body.get("messages") or [])

    def choose_from(self, messages: list[dict[str, Any]]) -> tuple[str | None, int | None, Turn]:
        """`choose` for messages in the common shape: [{"role": "user"|"assistant"|…, "content": …}]."""
        deadline = time.monotonic() + READY_TIMEOUT
        while self.ready is not None and not self.ready() and time.monotonic() < deadline:
            time.sleep(0.05)
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message.get("role") != "user":
                continue
            text = _user_text(message)
            marker = next((m for m in self.script if m in text), None)
            if marker is None:
                continue
            turn = sum(1 for later in messages[index + 1:] if later.get("role") == "assistant")
            turns = self.script[marker]
            if turn < len(turns):
                return marker, turn, turns[turn]
            return marker, turn, Text(self.fallback)
        return None, None, Text(self.fallback)

    def new_id(self, prefix: str) -> str:
        with self._lock:
            number = next(self._ids)
        return f"{prefix}{number:04d}{int(time.time() * 1000) % 10**8:08d}"

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)


def _user_text(message: dict[str, Any]) -> str:
    """The text a user message carries, tool results left out."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") in ("text", "input_text") and isinstance(
                    block.get("text"), str):
                parts.append(block["text"])
    return "\n".join(parts)


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "" if content is None else json.dumps(content)


def _tool_results(api: str, body: Any) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    if not isinstance(body, dict):
        return results
    for registered in APIS:
        if registered.name == api:
            return dict(registered.tool_results(body))
    for message in body.get("messages") or []:
        if api == "openai" and message.get("role") == "tool":
            results[str(message.get("tool_call_id"))] = {"content": _result_text(message.get("content")),
                                                         "is_error": None}
        elif isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results[str(block.get("tool_use_id"))] = {"content": _result_text(block.get("content")),
                                                              "is_error": bool(block.get("is_error"))}
    return results


def _filled(arguments: dict[str, Any], api: str, body: Any) -> dict[str, Any]:
    """ARGUMENTS with each FromResults replaced by what it finds in the tool results BODY carries."""
    if not any(isinstance(value, FromResults) for value in arguments.values()):
        return arguments
    import re

    texts = [result["content"] for result in _tool_results(api, body).values()][::-1]
    filled = dict(arguments)
    for key, value in arguments.items():
        if isinstance(value, FromResults):
            found = (re.search(value.pattern, text) for text in texts)
            filled[key] = next((match.group(1) for match in found if match), None)
    return filled


class Handler(BaseHTTPRequestHandler):
    model: MockModel
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    # plumbing -----------------------------------------------------------------

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def reply(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        if content_type == "text/event-stream":
            self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def reply_json(self, data: Any, status: int = 200) -> None:
        self.reply(status, json.dumps(data).encode(), "application/json")

    # verbs --------------------------------------------------------------------

    def do_HEAD(self) -> None:  # noqa: N802
        self.model.record(Request("HEAD", self.path, "other", None))
        self.reply(200, b"", "text/plain")

    def do_GET(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path.rstrip("/")
        self.model.record(Request("GET", self.path, "openai" if path.endswith("/models") else "other", None))
        if path.endswith("/models"):
            self.reply_json({"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0,
                                                    "owned_by": "mock"}]})
        else:
            self.reply_json({})

    def do_POST(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path.rstrip("/")
        body = self._body()
        registered = next((api for api in APIS if api.matches(path, body)), None)
        if registered is not None:
            registered.serve(self, body)
        elif path.endswith("/messages/count_tokens"):
            self.model.record(Request("POST", self.path, "anthropic", body))
            self.reply_json({"input_tokens": 10})
        elif path.endswith("/messages") and isinstance(body, dict):
            self._anthropic(body)
        elif path.endswith("/chat/completions") and isinstance(body, dict):
            self._openai(body)
        else:
            self.model.record(Request("POST", self.path, "other", body))
            self.reply_json({})

    # Anthropic Messages -------------------------------------------------------

    def _anthropic(self, body: dict[str, Any]) -> None:
        request = Request("POST", self.path, "anthropic", body)
        output_format = (body.get("output_config") or {}).get("format")
        if body.get("tools") and not output_format:
            request.main = True
            request.prompt, request.turn, turn = self.model.choose(body)
        elif output_format:  # Claude Code's title request: a JSON object by schema
            turn = Text(json.dumps({"title": "Mock session"}))
        else:
            turn = Text(self.model.fallback)
        request.played = turn
        msg_id = self.model.new_id("msg_mock_")
        if isinstance(turn, ToolCall):
            request.tool_use_id = self.model.new_id("toolu_mock_")
            block = {"type": "tool_use", "id": request.tool_use_id, "name": turn.name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(_filled(turn.input, "anthropic", body))}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": turn.text}
            stop = "end_turn"
        self.model.record(request)
        usage = {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        if body.get("stream") is False:
            content = dict(block)
            if isinstance(turn, ToolCall):
                content["input"] = _filled(turn.input, "anthropic", body)
            else:
                content["text"] = turn.text
            self.reply_json({"id": msg_id, "type": "message", "role": "assistant", "model": body.get("model", MODEL),
                        "content": [content], "stop_reason": stop, "stop_sequence": None, "usage": usage})
            return
        events = [
            ("message_start", {"type": "message_start", "message": {
                "id": msg_id, "type": "message", "role": "assistant", "model": body.get("model", MODEL),
                "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        data = "".join(f"event: {name}\ndata: {json.dumps(payload)}\n\n" for name, payload in events)
        self.reply(200, data.encode(), "text/event-stream")

    # OpenAI chat completions --------------------------------------------------

    def _openai(self, body: dict[str, Any]) -> None:
        request = Request("POST", self.path, "openai", body)
        if body.get("tools"):
            request.main = True
            request.prompt, request.turn, turn = self.model.choose(body)
        else:  # a title or summary request
            turn = Text("Mock session")
        self.openai_answer(request, turn, body)

    def openai_answer(self, request: Request, turn: Turn, body: dict[str, Any]) -> None:
        """Record REQUEST as playing TURN and answer it as a chat completion (streamed when the body asks)."""
        request.played = turn
        completion_id = self.model.new_id("chatcmpl-mock-")
        created = int(time.time())
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if isinstance(turn, ToolCall):
            request.tool_use_id = self.model.new_id("call_mock_")
            name, arguments, text = turn.name, json.dumps(_filled(turn.input, "openai", body)), None
        else:
            name, arguments, text = None, None, turn.text
        finish = "tool_calls" if name else "stop"
        self.model.record(request)
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if name:
                message["tool_calls"] = [{"id": request.tool_use_id, "type": "function",
                                          "function": {"name": name, "arguments": arguments}}]
            self.reply_json({"id": completion_id, "object": "chat.completion", "created": created, "model": MODEL,
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage})
            return

        def chunk(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> str:
            payload = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": MODEL,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}], **extra}
            return f"data: {json.dumps(payload)}\n\n"

        if name:
            head = {"index": 0, "id": request.tool_use_id, "type": "function",
                    "function": {"name": name, "arguments": ""}}
            parts = [
                chunk({"role": "assistant", "content": None, "tool_calls": [head]}),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]}),
            ]
        else:
            parts = [chunk({"role": "assistant", "content": ""}), chunk({"content": text})]
        parts.append(chunk({}, finish, usage=usage))
        parts.append("data: [DONE]\n\n")
        self.reply(200, "".join(parts).encode(), "text/event-stream")
