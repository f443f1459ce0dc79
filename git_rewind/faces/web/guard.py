"""Who may talk to `git rewind web`: the page opened from the link this run printed, on 127.0.0.1 only.

A local port is reachable from every web page and every program the user runs, and browsers send a
cookie of 127.0.0.1 to every port of it (any local dev server would receive it), so no secret rides
in a cookie. The printed link carries a one-time launch token in its fragment (never sent to a
server, not kept in the Referer); the page trades it once for a credential of its own tab, kept in
the tab's sessionStorage (per origin, so per port; a reload keeps it) and sent in a header, which a
plain link, form or image cannot set. Every request names this server in Host (DNS rebinding), and
a POST must come from this server's own origin.
"""

from __future__ import annotations

import secrets

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from starlette.requests import Request
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

HEADER = "x-rewind-token"
EXCHANGE = "/api/session"  # where the page trades the launch token for its credential
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


class Keys:
    """This run's secrets: the launch token of the newest printed link (good once), and the credentials
    the page's tabs got for one. ANNOUNCE is told each new launch token, to print its link."""

    def __init__(self, announce: Callable[[str], None]) -> None:
        self.launch = new_token()
        self.tabs: list[str] = []
        self.announce = announce

    def exchange(self, given: str | None) -> str | None:
        """A new tab's credential for GIVEN, the current launch token, which it uses up (a new link is
        announced for another tab); None for anything else. Called on the event loop only: no race."""
        if not same(given, self.launch):
            return None
        self.launch = new_token()
        credential = new_token()
        self.tabs.append(credential)
        self.announce(self.launch)
        return credential

    def valid(self, given: str | None) -> bool:
        """GIVEN is a credential some tab got (each compared in constant time)."""
        return given is not None and any([same(given, tab) for tab in self.tabs])


class Guard:
    """ASGI middleware: refuses (403, one plain line) what does not come from the page; adds the
    security headers to every answer. PORT is the port actually bound."""

    def __init__(self, app: ASGIApp, keys: Keys, port: int, read_only: bool) -> None:
        self.app = app
        self.keys = keys
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
        """Why REQUEST is refused, in one line; None when it may go on. The page and its static files
        hold no secret: only the API wants a tab's credential."""
        if request.headers.get("host", "") not in self.hosts:
            return "refused: this server answers only to 127.0.0.1 and localhost on its own port"
        path = request.url.path
        if request.method not in ("GET", "HEAD"):
            if request.headers.get("origin") not in self.origins:
                return "refused: a change must come from this server's own page (Origin missing or foreign)"
        if not path.startswith("/api/") or path == EXCHANGE:  # the exchange checks the launch token itself
            return None
        header = request.headers.get(HEADER)
        if path == "/api/events" and header is None:  # an EventSource cannot send headers: the query says it
            header = request.query_params.get("token")
        if not self.keys.valid(header):
            return ("refused: the API answers only to the page opened from a link `git rewind web` printed "
                    "(X-Rewind-Token missing or unknown)")
        if request.method not in ("GET", "HEAD") and self.read_only:
            return "refused: the server runs with --read-only"
        return None
