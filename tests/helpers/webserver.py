"""`git rewind web` run for real as a subprocess on a test repository, and raw HTTP to it.

http.client, not a client library: the tests must send what a browser never would (a foreign
Host, no Origin, a token in the wrong place), byte for byte.
"""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
from typing import Any
from urllib.parse import urlsplit

from .workdir import REWIND, Workdir


class Reply:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers  # names in lower case
        self.body = body

    @property
    def text(self) -> str:
        return self.body.decode()

    def json(self) -> Any:
        return json.loads(self.body)


class Served:
    """A running `git rewind web --no-open --port 0 [ARGS]` in W; its link read from its first line, and one
    tab's credential got for it as the page gets one (`token`)."""

    def __init__(self, w: Workdir, *args: str) -> None:
        self.proc = subprocess.Popen([*REWIND, "web", "--no-open", "--port", "0", *args], cwd=w.path, env=w.env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url:
            self.proc.wait()
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise AssertionError(f"git rewind web printed no URL: {err}")
        parts = urlsplit(self.url)
        assert parts.hostname == "127.0.0.1" and parts.path == "/" and parts.query == ""
        assert parts.fragment.startswith("launch=")
        self.port = int(parts.port or 0)
        self.launch = parts.fragment.split("=", 1)[1]  # the launch token of the newest link printed
        self.host = f"127.0.0.1:{self.port}"
        self.origin = f"http://{self.host}"
        self.token = self.open_tab()

    def open_tab(self) -> str:
        """What the page does with the newest link: trade its launch token for a tab's credential (the
        server then prints the next link, read here)."""
        reply = self.exchange(self.launch)
        assert reply.status == 200, (reply.status, reply.text)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        prefix = "opened in a browser; for another tab: "
        assert line.startswith(f"{prefix}http://127.0.0.1:{self.port}/#launch="), line
        self.launch = line.rsplit("#launch=", 1)[1]
        credential: str = reply.json()["token"]
        return credential

    def exchange(self, launch: str) -> Reply:
        """POST /api/session with LAUNCH, as the page sends it."""
        return self.request("POST", "/api/session", body={"launch": launch}, header=None)

    def request(self, method: str, path: str, *, body: Any = None, host: str | None = None,
                header: str | None = "token", origin: str | None = "own",
                content_type: str = "application/json", extra: dict[str, str] | None = None) -> Reply:
        """One request. "token" and "own" stand for this tab's credential and this server's origin; None leaves
        the header out."""
        headers = {"Host": host or self.host}
        if header is not None:
            headers["X-Rewind-Token"] = self.token if header == "token" else header
        if origin is not None and method != "GET":
            headers["Origin"] = self.origin if origin == "own" else origin
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            headers["Content-Type"] = content_type
        headers.update(extra or {})
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            for key, value in headers.items():
                conn.putheader(key, value)
            conn.putheader("Content-Length", str(len(data or b"")))
            conn.endheaders(data)
            response = conn.getresponse()
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        finally:
            conn.close()

    def get(self, path: str) -> Any:
        """GET PATH as the page does; its JSON (asserting 200)."""
        reply = self.request("GET", path)
        assert reply.status == 200, (path, reply.status, reply.text)
        return reply.json()

    def post(self, path: str, body: dict[str, Any]) -> Reply:
        return self.request("POST", path, body=body)

    def events(self) -> http.client.HTTPResponse:
        """The open event stream (read it line by line; close the connection when done)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        # as an EventSource asks: the credential in the query (it cannot send a header)
        conn.request("GET", f"/api/events?token={self.token}", headers={"Host": self.host})
        response = conn.getresponse()
        assert response.status == 200 and response.getheader("content-type", "").startswith("text/event-stream")
        return response

    def stop(self, signum: int = signal.SIGINT) -> tuple[int, str]:
        """Send SIGNUM; (exit status, stderr)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        try:
            _out, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _out, err = self.proc.communicate()
            raise AssertionError(f"git rewind web did not stop on signal {signum}: {err}") from None
        return self.proc.returncode, err
