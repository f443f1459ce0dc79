"""Who may talk to `git rewind web`: the page that was opened with this run's token, on 127.0.0.1 only.

A local port is reachable from every web page the user has open, so every request proves itself:
the Host header names this server (DNS rebinding), a cookie carries the token (other local
processes and pages do not have it), the API wants the token again in a header (a plain link or
form cannot set one), and a state-changing POST must come from this server's own origin.
"""

from __future__ import annotations

import secrets

TYPE_CHECKING = False
if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "rewind_token"
HEADER = "x-rewind-token"
SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'self'; style-src 'self' 'unsafe-inline'"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]
NO_STORE = (b"cache-control", b"no-store")


def new_token() -> str:
    return secrets.token_urlsafe(32)


def same(given: str | None, token: str) -> bool:
    """GIVEN is the token (compared in constant time)."""
    return given is not None and secrets.compare_digest(given.encode(), token.encode())


class Guard:
    """ASGI middleware: refuses (403, one plain line) what does not come from the page; adds the
    security headers to every answer. PORT is the port actually bound."""

    def __init__(self, app: ASGIApp, token: str, port: int, read_only: bool) -> None:
        self.app = app
        self.token = token
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}
        self.read_only = read_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.requests import Request

        request = Request(scope)
        refusal = self.refusal(request)
        path = request.url.path

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += SECURITY_HEADERS
                if path.startswith("/api/") or path == "/":
                    headers.append(NO_STORE)
                message["headers"] = headers
            await send(message)

        if refusal is not None:
            from starlette.responses import PlainTextResponse

            await PlainTextResponse(refusal + "\n", status_code=403)(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)

    def refusal(self, request: Request) -> str | None:
        """Why REQUEST is refused, in one line; None when it may go on."""
        if request.headers.get("host", "") not in self.hosts:
            return "refused: this server answers only to 127.0.0.1 and localhost on its own port"
        path = request.url.path
        cookie = request.cookies.get(COOKIE)
        if path == "/" and request.method == "GET":
            if same(request.query_params.get("token"), self.token) or same(cookie, self.token):
                return None
            return ("refused: open the URL with the token that `git rewind web` printed when it started "
                    "(run it again for a new one)")
        if not same(cookie, self.token):
            return "refused: no valid token cookie; open the URL `git rewind web` printed"
        header = request.headers.get(HEADER)
        if path == "/api/events" and header is None:  # an EventSource cannot send headers: the query says it
            header = request.query_params.get("token")
        if path.startswith("/api/") and not same(header, self.token):
            return "refused: the API answers only to the page (X-Rewind-Token header missing or wrong)"
        if request.method not in ("GET", "HEAD"):
            if request.headers.get("origin") not in self.origins:
                return "refused: a change must come from this server's own page (Origin missing or foreign)"
            if self.read_only:
                return "refused: the server runs with --read-only"
        return None
