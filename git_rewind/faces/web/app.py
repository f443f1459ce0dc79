"""The routes of `git rewind web`: the page, its static files and the JSON API (web-contract.md).

Handlers are thin: they read the request, call the library (listing, diffs, actions) and answer
JSON. Plain `def` handlers run in Starlette's thread pool, since the library runs git; what the page reads
most (info, a page of the list, a checkpoint's detail) is answered on the event loop while the checkpoints
read are current.
"""

from __future__ import annotations

import os
import time
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ...base.errors import RewindError
from ...base.repo import Repo
from ...store import checkpoints
from . import diffs
from .guard import Guard, Keys
from .listing import Listing, View, compact, detail_json
from .static import Files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from starlette.datastructures import QueryParams

    from ...ops import search
    from ...store.checkpoints import Checkpoint

DEFAULT_LIMIT = 500
POLL_SECONDS = 1.0
PING_SECONDS = 15


class Compact(JSONResponse):
    """JSON without spaces."""

    def render(self, content: Any) -> bytes:
        return compact(content)


class BadRequest(Exception):
    """A request the API refuses with 400 (or STATUS) and one line."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class Server:
    """One repository served to one page: the state every handler shares."""

    def __init__(self, repo: Repo, keys: Keys, read_only: bool) -> None:
        self.repo = repo
        self.keys = keys
        self.read_only = read_only
        self.listing = Listing(repo)
        self.colour = diffs.Colour()
        self._last_selection: tuple[View, tuple[tuple[str, str], ...], list[int], int] | None = None
        self._agents: dict[str, list[str]] | None = None  # the registry's names (/api/info), made once
        self.files = Files()

    # the page -------------------------------------------------------------------------------------

    async def page(self, request: Request) -> Response:
        """The page as shipped, its files under their version: no secret in it (boot.js trades the link's
        launch token for one)."""
        return HTMLResponse(self.files.page)

    async def session(self, request: Request) -> Response:
        """POST /api/session {"launch": TOKEN}: the printed link's launch token, good once, traded for this
        tab's credential. Async on purpose: on the event loop, two tabs cannot both use one link."""
        body = await _json_body(request)
        launch = body.get("launch")
        credential = self.keys.exchange(launch if isinstance(launch, str) else None)
        if credential is None:
            raise BadRequest("refused: this link was used already, or is not this server's: open the newest link "
                             "`git rewind web` printed in its terminal", 403)
        return Compact({"token": credential})

    # reading --------------------------------------------------------------------------------------

    def warm(self) -> None:
        """Start reading the checkpoints now, then in another background thread make what the first tab asks
        for, in its order, so that the first tab after the start is answered as fast as the next ones: the
        default list's selection (safety checkpoints hidden) and the agents' registry (its first screen), the
        live updates' modules (imported on the event loop, where they held up every request of the first tab),
        the rows as JSON (the lanes' pages of 1,000) and the syntax colours' lexer table (its first diff); then
        what it made frozen out of the collector's walks (settle)."""
        import threading

        from starlette.datastructures import QueryParams

        self.listing.warm()  # 10,000 checkpoints take a moment to read, even through the notes cache

        def more() -> None:
            try:
                view = self.listing.view()
                positions, _ = self.selected(view, self.query_of(QueryParams("")), ())
                self._agents = _agents()
                view.encoded_sessions()
                import sse_starlette  # noqa: F401

                for start in range(0, len(positions), 1000):  # as the lanes ask for them
                    view.encoded(positions[start:start + 1000])
                self.colour.lexer("warm.py")
            except Exception:  # noqa: BLE001 - only a head start: the request does it again and answers the error
                pass
            settle()

        def settle() -> None:
            """What is alive now frozen (gc.freeze): the first read (its notes, rows and their JSON: every later view
            keeps those that did not change) is walked by no later collection. Left alone, a full collection came
            whenever the page's requests had made enough objects, and held every request up for the 150-360 ms
            it takes to walk them. What is frozen is still freed when no longer referenced, and later garbage
            is collected as before; the cyclic garbage of the start (none was found here) would be kept."""
            import gc

            gc.freeze()

        threading.Thread(target=more, name="rewind-web-warm-more", daemon=True).start()

    # What the page reads is answered from memory on the event loop when the checkpoints read are the notes ref's
    # present state (Listing.current) and nothing is left to compute: no hop to a worker thread and back, which
    # under load cost the first tab more than the answers themselves. Anything else (a store that moved, a new
    # search, an id that is not a number) goes to the thread pool, where reading notes and running git belong.

    async def info(self, request: Request) -> Response:
        view = self.listing.current()
        if view is None or self._agents is None:
            return await run_in_threadpool(self._info, None)
        return self._info(view)

    def _info(self, view: View | None) -> Response:
        """/api/info from VIEW, or from the checkpoints read now (in a worker thread) when None."""
        head, branch = self.repo.head()
        view = view if view is not None else self.listing.view()
        if self._agents is None:
            self._agents = _agents()
        return Compact({"repo": self.repo.root, "name": os.path.basename(self.repo.root),
                        "worktree": self.repo.worktree, "branch": branch, "head": head,
                        "read_only": self.read_only, "count": len(view.items), "now": time.time(),
                        "agents": self._agents})

    async def checkpoints(self, request: Request) -> Response:
        view = self.listing.current()
        if view is None or not self.kept(view, request):
            return await run_in_threadpool(self._checkpoints, request, None)
        return self._checkpoints(request, view)

    def _checkpoints(self, request: Request, view: View | None) -> Response:
        """A page of the list from VIEW, or from the checkpoints read now (in a worker thread) when None."""
        params = request.query_params
        offset = _number(params.get("offset"), 0, "offset")
        limit = _number(params.get("limit"), DEFAULT_LIMIT, "limit")
        view = view if view is not None else self.listing.view()
        query = self.query(request)
        positions: Sequence[int] = range(len(view.rows))
        hidden = 0
        if query or not query.safety:
            positions, hidden = self.selected(view, query, _filters(request))
        body = b'{"total":%d,"offset":%d,"safety_hidden":%d,"items":%s,"sessions":%s}' % (
            len(positions), offset, hidden, view.encoded(positions[offset:offset + limit]), view.encoded_sessions())
        return Response(body, media_type="application/json")

    def kept(self, view: View, request: Request) -> bool:
        """REQUEST's rows are VIEW's own or its kept selection: a page of them is joined, not searched."""
        params = request.query_params
        if all(key in ("offset", "limit", "safety") for key in params) and params.get("safety") in ("1", "true"):
            return True  # every row, safety checkpoints too: no selection
        last = self._last_selection
        return last is not None and last[0] is view and last[1] == _filters(request)

    def selected(self, view: View, query: search.Query, filters: tuple[tuple[str, str], ...]) -> tuple[list[int], int]:
        """The rows QUERY selects (positions in view.rows) and how many safety checkpoints it hid; the last
        selection is kept while the store and the filters stay, so the next page of it (another offset) is
        not searched again (a path filter over 10,000 checkpoints takes most of a second)."""
        from ...ops import search

        last = self._last_selection
        if last is not None and last[0] is view and last[1] == filters:
            return last[2], last[3]
        chosen, hidden = search.select_counted(self.repo, view.items, query)
        positions = [view.index[c.seq] for c in reversed(chosen)]
        self._last_selection = (view, filters, positions, hidden)
        return positions, hidden

    def query(self, request: Request) -> search.Query:
        """The list's filters (web-contract.md) as the library's search.Query, as `list` reads its options."""
        return self.query_of(request.query_params)

    def query_of(self, params: QueryParams) -> search.Query:
        """PARAMS (a request's query, or an empty one) as the library's search.Query."""
        from ...ops import search

        return search.Query(text=params.getlist("q"), paths=[diffs.check_path(p) for p in params.getlist("path") if p],
                            tags=params.getlist("tag"), agent=params.get("agent"), session=params.get("session"),
                            since=params.get("since"), until=params.get("until"), cwd=self.repo.root,
                            safety=params.get("safety") in ("1", "true"))

    async def checkpoint(self, request: Request) -> Response:
        ident = request.path_params["ident"]
        view = self.listing.current()
        item = view.numbered(ident) if view is not None else None
        if view is None or item is None:
            return await run_in_threadpool(self._checkpoint, ident)
        return Compact(detail_json(item, view.previous(item)))

    def _checkpoint(self, ident: str) -> Response:
        item = self.lookup(ident)
        return Compact(detail_json(item, self.listing.previous(item)))

    def diff(self, request: Request) -> Response:
        params = request.query_params
        ident = params.get("from")
        if not ident:
            raise BadRequest("name a checkpoint: from=ID")
        context = _number(params.get("context"), 3, "context")
        paths = [diffs.check_path(p) for p in params.getlist("path") if p]
        item = self.lookup(ident)
        to = params.get("to") or "previous"
        old: str
        new: str
        end: dict[str, Any]
        if to == "previous":  # the checkpoint's own step, as `show` compares it
            before = self.listing.previous(item)
            old, new = checkpoints.compared_with(self.repo, self.listing.view().every, item), item.commit
            start, end = _side(before) if before is not None else {"seq": None, "commit": old}, _side(item)
        elif to == "worktree":
            old, new = item.commit, self.worktree_tree()
            start, end = _side(item), {"worktree": True}
        else:
            other = self.lookup(to)
            old, new = item.commit, other.commit
            start, end = _side(item), _side(other)
        files = diffs.diff(self.repo, old, new, paths, min(context, 1000), self.colour)
        return Compact({"from": start, "to": end, "files": files})

    def tree(self, request: Request) -> Response:
        return Compact({"files": diffs.tree(self.repo, self.treeish(request.path_params["ident"]))})

    def file(self, request: Request) -> Response:
        path = diffs.check_path(request.query_params.get("path", ""))
        treeish = self.treeish(request.path_params["ident"])
        try:
            return Compact(diffs.file(self.repo, treeish, path, self.colour))
        except LookupError as exc:
            raise BadRequest(str(exc.args[0]), 404) from None

    # live -----------------------------------------------------------------------------------------

    async def events(self, request: Request) -> Response:
        """`checkpoint` events whenever the notes ref moves (one small file read a second), pings every 15 s."""
        import json

        import anyio
        from sse_starlette import EventSourceResponse, ServerSentEvent

        listing = self.listing

        async def stream() -> Any:
            seen = await anyio.to_thread.run_sync(listing.state)
            while True:
                await anyio.sleep(POLL_SECONDS)
                state = await anyio.to_thread.run_sync(listing.state)
                if state == seen:
                    continue
                seen = state
                view = await anyio.to_thread.run_sync(listing.view)
                yield {"event": "checkpoint", "data": json.dumps({"count": len(view.items), "newest": view.newest})}

        return EventSourceResponse(stream(), ping=PING_SECONDS, ping_message_factory=lambda: ServerSentEvent(
            comment="ping"), headers={"Cache-Control": "no-store"})

    # changing -------------------------------------------------------------------------------------

    async def action(self, request: Request) -> Response:
        """POST /api/undo, /api/revert, /api/restore-file: the dry run, or the rewind itself."""
        body = await _json_body(request)
        kind = request.url.path.rsplit("/", 1)[-1]
        return Compact(await run_in_threadpool(self._act, kind, body))

    async def tags(self, request: Request) -> Response:
        """POST /api/tags: remove, then add (a tag it does not carry is an error before anything changes)."""
        body = await _json_body(request)
        return Compact(await run_in_threadpool(self._tag, body))

    def _tag(self, body: dict[str, Any]) -> dict[str, Any]:
        from ...ops import tags
        from ...store.checkpoints import Checkpoint

        lists = {}
        for key in ("add", "remove"):
            value = body.get(key) or []
            if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
                raise BadRequest(f"{key} must be a list of tags")
            lists[key] = tags.check(value)
        if not lists["add"] and not lists["remove"]:
            raise BadRequest("nothing to do: give add or remove")
        from .actions import ident

        found = self.lookup(ident(body))
        item = Checkpoint(found.commit, found.note, found.note_blob)  # the cached one stays as it was read
        if lists["remove"]:
            item = tags.remove(self.repo, item, lists["remove"])
        if lists["add"]:
            item = tags.add(self.repo, item, lists["add"])
        return {"ok": True, "tags": list(item.note.tags)}

    def _act(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        from . import actions

        target = self.lookup(actions.ident(body))
        return actions.act(self.repo, self.listing.view().every, target, kind, body)

    # helpers --------------------------------------------------------------------------------------

    def worktree_tree(self) -> str:
        """The working tree as a tree in the object store, as `git rewind diff ID` compares it."""
        from ...base import config
        from ...store import snapshot

        return snapshot.current_tree(self.repo, config.for_repo(self.repo)["max_file_size"])

    def treeish(self, ident: str) -> str:
        """IDENT's commit, or the working tree's tree for `worktree`."""
        return self.worktree_tree() if ident == "worktree" else self.lookup(ident).commit

    def lookup(self, ident: str) -> Checkpoint:
        """IDENT's checkpoint; an unknown one is a 404."""
        try:
            return self.listing.lookup(ident)
        except RewindError as exc:
            raise BadRequest(exc.worded(HINTS), 404) from None


def _agents() -> dict[str, list[str]]:
    """The agents the empty page names, from the registry: those `install --agent` hooks, and the programs
    `watch --` runs (Aider)."""
    from ... import agents

    return {"install": list(agents.hooked()), "watch": [agents.get(name).programs[0] for name in agents.watched()]}


def _filters(request: Request) -> tuple[tuple[str, str], ...]:
    """REQUEST's filters as a key of the selection it makes (its page, offset and limit, apart)."""
    return tuple(sorted((k, v) for k, v in request.query_params.multi_items() if k not in ("offset", "limit")))


def _side(item: Checkpoint) -> dict[str, Any]:
    return {"seq": item.seq, "commit": item.commit}



async def _json_body(request: Request) -> dict[str, Any]:
    """The POST's JSON object; anything else is a 400 (a form post cannot send application/json)."""
    import json

    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise BadRequest("send JSON (Content-Type: application/json)")
    try:
        body = json.loads(await request.body())
    except ValueError:
        raise BadRequest("the body is not JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    return body


def _number(text: str | None, default: int, name: str) -> int:
    if text is None or text == "":
        return default
    if not text.isdigit():
        raise BadRequest(f"{name} must be a whole number, not {text!r}")
    return int(text)


async def _bad_request(request: Request, exc: Exception) -> Response:
    from ...ops.request import AgentAtWork

    status = exc.status if isinstance(exc, BadRequest) else 409 if isinstance(exc, AgentAtWork) else 400
    message = exc.worded(HINTS) if isinstance(exc, RewindError) else str(exc)
    return Compact({"error": message}, status_code=status)


# The page's words for what the engine says would work instead (errors.py): a choice in its dialog.
HINTS = {"code-only": "choose “code” beside Undo to rewind the files alone",
         "unknown-id": "pick one from the page's list",
         "no-checkpoints": "take one with git rewind snap, or let an agent's hooks take them as it works "
                           "(git rewind install --agent NAME)",
         "at-work": "confirm to rewind anyway (force)",
         "merge": "the page writes no conflict markers: take it back from the command line with --merge, or "
                  "restore the other files alone from their views"}


def build(repo: Repo, keys: Keys, port: int, read_only: bool) -> Any:
    """The ASGI application: the routes behind the guard."""
    server = Server(repo, keys, read_only)
    server.warm()
    routes: list[BaseRoute] = [
        Route("/", server.page),
        Route("/api/session", server.session, methods=["POST"]),
        Route("/api/info", server.info),
        Route("/api/checkpoints", server.checkpoints),
        Route("/api/checkpoints/{ident:path}", server.checkpoint),
        Route("/api/diff", server.diff),
        Route("/api/tree/{ident:path}", server.tree),
        Route("/api/file/{ident:path}", server.file),
        Route("/api/events", server.events),
        Route("/api/undo", server.action, methods=["POST"]),
        Route("/api/revert", server.action, methods=["POST"]),
        Route("/api/restore-file", server.action, methods=["POST"]),
        Route("/api/tags", server.tags, methods=["POST"]),
    ]
    routes += [Route("/static/{version}/{name}", server.files.versioned, methods=["GET", "HEAD"]),
               Route("/static/{name}", server.files.plain, methods=["GET", "HEAD"])]
    app = Starlette(routes=routes, exception_handlers={BadRequest: _bad_request, RewindError: _bad_request})
    return Guard(app, keys, port, read_only)
