"""The routes of `git rewind web`: the page, its static files and the JSON API (web-contract.md).

Handlers are thin: they read the request, call the library (listing, diffs, actions) and answer
JSON. Plain `def` handlers run in Starlette's thread pool, since the library runs git.
"""

from __future__ import annotations

import os
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..errors import RewindError
from ..repo import Repo
from .guard import COOKIE, Guard
from .listing import Listing, detail_json

PAGE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "resources", "web")
MISSING_PAGE = ("<!doctype html><html><head><meta charset=\"utf-8\"><meta name=\"rewind-token\" content=\"\">"
                "<title>git rewind</title></head><body><p>The page's files are missing from this installation "
                "(git_rewind/resources/web/); the API works.</p></body></html>")
DEFAULT_LIMIT = 500


class Compact(JSONResponse):
    """JSON without spaces: the list of 10,000 checkpoints is the biggest answer."""

    def render(self, content: Any) -> bytes:
        import json

        return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode()


class BadRequest(Exception):
    """A request the API refuses with 400 (or STATUS) and one line."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class Server:
    """One repository served to one page: the state every handler shares."""

    def __init__(self, repo: Repo, token: str, read_only: bool) -> None:
        self.repo = repo
        self.token = token
        self.read_only = read_only
        self.listing = Listing(repo)

    # the page -------------------------------------------------------------------------------------

    def page(self, request: Request) -> Response:
        try:
            with open(os.path.join(PAGE_DIR, "index.html"), encoding="utf-8") as fh:
                html = fh.read()
        except FileNotFoundError:
            html = MISSING_PAGE
        response = HTMLResponse(fill_token(html, self.token))
        response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict", path="/")
        return response

    # reading --------------------------------------------------------------------------------------

    def info(self, request: Request) -> Response:
        head, branch = self.repo.head()
        view = self.listing.view()
        return Compact({"repo": self.repo.root, "name": os.path.basename(self.repo.root),
                        "worktree": self.repo.worktree, "branch": branch, "head": head,
                        "read_only": self.read_only, "count": len(view.items), "now": time.time()})

    def checkpoints(self, request: Request) -> Response:
        params = request.query_params
        offset = _number(params.get("offset"), 0, "offset")
        limit = _number(params.get("limit"), DEFAULT_LIMIT, "limit")
        view = self.listing.view()
        rows = view.rows
        return Compact({"total": len(rows), "offset": offset, "items": rows[offset:offset + limit],
                        "sessions": view.sessions})

    def checkpoint(self, request: Request) -> Response:
        item = self.lookup(request.path_params["ident"])
        return Compact(detail_json(item, self.listing.previous(item)))

    # helpers --------------------------------------------------------------------------------------

    def lookup(self, ident: str) -> Any:
        """IDENT's checkpoint; an unknown one is a 404."""
        try:
            return self.listing.lookup(ident)
        except RewindError as exc:
            raise BadRequest(str(exc), 404) from None


def fill_token(html: str, token: str) -> str:
    """The page with TOKEN in its `<meta name="rewind-token">` (added after `<head>` when it has none)."""
    import re

    meta = f'<meta name="rewind-token" content="{token}">'
    filled, count = re.subn(r'<meta\s+name="rewind-token"\s+content="[^"]*"\s*/?>', lambda _: meta, html, count=1)
    if count:
        return filled
    return re.sub(r"<head[^>]*>", lambda m: m.group(0) + meta, html, count=1)


def _number(text: str | None, default: int, name: str) -> int:
    if text is None or text == "":
        return default
    if not text.isdigit():
        raise BadRequest(f"{name} must be a whole number, not {text!r}")
    return int(text)


async def _bad_request(request: Request, exc: Exception) -> Response:
    status = exc.status if isinstance(exc, BadRequest) else 400
    return Compact({"error": str(exc)}, status_code=status)


def build(repo: Repo, token: str, port: int, read_only: bool) -> Any:
    """The ASGI application: the routes behind the guard."""
    server = Server(repo, token, read_only)
    routes = [
        Route("/", server.page),
        Route("/api/info", server.info),
        Route("/api/checkpoints", server.checkpoints),
        Route("/api/checkpoints/{ident:path}", server.checkpoint),
        Mount("/static", StaticFiles(directory=PAGE_DIR, check_dir=False)),
    ]
    app = Starlette(routes=routes, exception_handlers={BadRequest: _bad_request, RewindError: _bad_request})
    return Guard(app, token, port, read_only)
