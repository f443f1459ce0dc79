"""The page's files (git_rewind/resources/web/), read once when the server starts and answered from memory.

Each is answered on the event loop without touching the disk or the thread pool (the page asks for eleven at
once, and on a busy machine StaticFiles' stat, open and read in worker threads were most of their time). The
page refers to them under `/static/VERSION/`, VERSION a hash of every file's bytes: a browser may keep them
for good (`immutable`), and an upgraded installation, whose files differ, has another VERSION, so what a
browser kept is never used for it. The same files under plain `/static/NAME` are revalidated at every use
(`no-cache`, an ETag of their bytes). Only the files read at the start exist: no path reaches anything else.
"""

from __future__ import annotations

import hashlib
import os

from starlette.requests import Request
from starlette.responses import Response

PAGE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "resources",
                        "web")
MISSING_PAGE = ("<!doctype html><html><head><meta charset=\"utf-8\"><title>git rewind</title></head><body><p>The "
                "page's files are missing from this installation (git_rewind/resources/web/); the API works.</p>"
                "</body></html>")
TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml",
         ".html": "text/html; charset=utf-8"}
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


class Files:
    """The page's files as they were when the server started, and the page pointing at their VERSION."""

    def __init__(self, directory: str = PAGE_DIR) -> None:
        self.files: dict[str, tuple[bytes, str, str]] = {}  # name → (bytes, media type, ETag)
        digest = hashlib.sha256()
        names = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
        for name in names:
            kind = TYPES.get(os.path.splitext(name)[1])
            path = os.path.join(directory, name)
            if kind is None or not os.path.isfile(path):
                continue
            with open(path, "rb") as fh:
                body = fh.read()
            tag = hashlib.sha256(body).hexdigest()[:20]
            self.files[name] = (body, kind, f'"{tag}"')
            digest.update(b"%s\0%s\0" % (name.encode(), tag.encode()))
        self.version = digest.hexdigest()[:12]
        index = self.files.pop("index.html", None)
        html = index[0].decode() if index is not None else MISSING_PAGE
        self.page = html.replace('"/static/', f'"/static/{self.version}/').encode()

    async def versioned(self, request: Request) -> Response:
        """GET /static/VERSION/NAME: kept for good by the browser (VERSION changes with any file's bytes)."""
        if request.path_params["version"] != self.version:
            return Response("not found\n", 404, media_type="text/plain")
        return self._answer(request, IMMUTABLE)

    async def plain(self, request: Request) -> Response:
        """GET /static/NAME: the same bytes, checked with the server at every use."""
        return self._answer(request, REVALIDATE)

    def _answer(self, request: Request, cache: str) -> Response:
        found = self.files.get(request.path_params["name"])
        if found is None:
            return Response("not found\n", 404, media_type="text/plain")
        body, kind, tag = found
        headers = {"cache-control": cache, "etag": tag}
        if tag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
        return Response(body if request.method != "HEAD" else b"", media_type=kind, headers=headers)
