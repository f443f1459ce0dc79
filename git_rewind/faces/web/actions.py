"""The page's actions: undo, revert, restore a file; each a request.Request, as the CLI and MCP make them.

Every change goes through the library's one rewind (which takes the safety checkpoint first, as `git rewind
undo` does) after the same preview `--dry-run` prints. A turn of an agent in progress blocks a real run unless
the page says `force` (the dry run reports it).
"""

from __future__ import annotations

from typing import Any

from ...base.errors import RewindError
from ...base.repo import Repo
from ...ops.request import Request
from ...store.checkpoints import Checkpoint
from .diffs import check_path


def _flag(body: dict[str, Any], key: str) -> bool:
    value = body.get(key, False)
    if not isinstance(value, bool):
        raise RewindError(f"{key} must be true or false")
    return value


def _paths(body: dict[str, Any], key: str) -> list[str]:
    value = body.get(key) or []
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise RewindError(f"{key} must be a list of paths")
    return [check_path(p) for p in value]


def act(repo: Repo, every: list[Checkpoint], target: Checkpoint, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """What the page asked for (KIND: undo, revert, restore-file) about TARGET: its preview (`dry_run`) or its
    result, as JSON. A bad field is a one-line error before anything is looked at."""
    dry_run = body.get("dry_run", False) is True
    force = body.get("force", False) is True
    if kind == "undo":
        mode = body.get("mode", "code")
        asked = Request.undo(repo, target, mode if isinstance(mode, str) else "", only=_paths(body, "only"),
                             agent_only=_flag(body, "agent_only"), items=every)
    elif kind == "revert":
        asked = Request.revert(repo, target, None, items=every)
    else:
        path = body.get("path")
        if not isinstance(path, str):
            raise RewindError("name the file: path")
        asked = Request.undo(repo, target, "code", only=[check_path(path)], items=every)
    with asked:
        return (asked.preview() if dry_run else asked.run(allow_busy=force)).to_json()


def ident(body: dict[str, Any]) -> str:
    """The checkpoint a POST names (`id`: what the CLI accepts, or a seq number)."""
    value = body.get("id")
    if not isinstance(value, (str, int)) or isinstance(value, bool) or str(value).strip() == "":
        raise RewindError("name a checkpoint: id")
    return str(value)

