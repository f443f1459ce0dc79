"""Both sides of OpenCode's family (OpenCode, Kilo) for tests without the agent: the real hook run as our plugin
runs it, and a stand-in for the agent's server with the few routes a conversation rewind uses, shaped as
OpenCode 1.18.33 and Kilo 7.7.7 answered them live: GET /session/{id}, GET /session/{id}/message
([{info, parts}]), POST /session/{id}/fork {messageID} (a new session with the messages strictly before it).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from helpers.workdir import Workdir

SESSION = "ses_test1"


def hook(w: Workdir, data: dict[str, Any], *args: str) -> dict[str, Any]:
    """Run the real hook as the plugin does; the plugin ignores stdout, but there is none anyway."""
    run = w.rewind("hook", *args, input=json.dumps(data))
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    log = (w.path / ".git" / "rewind" / "hook.log").read_text().splitlines()
    return dict(json.loads(log[-1]))


def note(w: Workdir, seq: int) -> dict[str, Any]:
    listed = json.loads(w.ok("list", "--json", "-n", "0"))
    return next(n for n in listed if n["seq"] == seq)



class FakeOpenCode:
    """OpenCode's session routes over one recorded session; records the forks asked for."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = messages
        self.forks: list[dict[str, Any]] = []
        self.queries: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, data: Any) -> None:
                body = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                url = urlsplit(self.path)
                owner.queries.append(url.query)
                if url.path == f"/session/{SESSION}":
                    self._send(200, {"id": SESSION, "title": "test"})
                elif url.path == f"/session/{SESSION}/message":
                    self._send(200, owner.messages)
                else:
                    self._send(404, {"name": "NotFoundError"})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if urlsplit(self.path).path == f"/session/{SESSION}/fork":
                    owner.forks.append(body)
                    self._send(200, {"id": f"ses_fork{len(owner.forks)}"})
                else:
                    self._send(404, {})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def message(mid: str, role: str, created: int, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"info": {"id": mid, "role": role, "sessionID": SESSION, "time": {"created": created}},
            "parts": list(parts)}


MESSAGES = [
    message("msg_u1", "user", 1000, {"type": "text", "text": "first prompt"}),
    message("msg_a1", "assistant", 1001, {"type": "tool", "tool": "write", "callID": "call_w"}),
    message("msg_a2", "assistant", 1002, {"type": "tool", "tool": "edit", "callID": "call_e"}),
    message("msg_a3", "assistant", 1003, {"type": "text", "text": "done"}),
    message("msg_u2", "user", 1004, {"type": "text", "text": "second prompt"}),
]
