"""The page's actions: undo, revert, restore a file, tags; each through the library the CLI uses.

Every change goes through `undo.undo` (which takes the safety checkpoint first, as `git rewind
undo` does) after the same preview `--dry-run` prints (undocmd.preview_lines). A turn of an agent
in progress blocks a real run unless the page says `force` (the dry run reports it).
"""

from __future__ import annotations

import time
from typing import Any

from .. import checkpoints, config, restore, turns, undo, undocmd
from ..checkpoints import Checkpoint
from ..errors import RewindError
from ..note import mode_of
from ..repo import Repo
from .diffs import check_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..note import Mode


class Refused(RewindError):
    """An action the page must confirm first (409): an agent is at work."""


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


class Rewind:
    """One undo, revert or restore-file asked for by the page, worked out before anything changes."""

    def __init__(self, repo: Repo, every: list[Checkpoint], target: Checkpoint, mode: str, only: list[str],
                 agent_only: bool = False, revert: bool = False) -> None:
        self.repo = repo
        self.target = target
        try:
            self.mode: Mode = mode_of(mode)
        except ValueError as exc:
            raise RewindError(str(exc)) from None
        if agent_only and self.mode == "conversation":
            raise RewindError("agent_only takes back file changes: use it with mode code or full")
        self.only = only
        self.settings = config.for_repo(repo)
        self.conversation = None
        self.described: str | None = None
        if self.mode != "code" and target.source is not None:  # fetched: handed over by undo.undo (handoff.py)
            from .. import handoff

            handed = handoff.prepare(repo, target, handoff.transcript_of(repo, target))  # checked; nothing written
            self.described = handoff.describe(target, handed)
        elif self.mode != "code":
            self.conversation = undo.plan_conversation(target, False)
            self.described = undo.describe(self.conversation)
        items = checkpoints.of_worktree(every, repo.worktree)
        from .. import takeback

        self.planner: takeback.Planner | None = None
        self.kind: str | None = None
        if revert:
            self.planner, self.kind = takeback.revert(repo, items, target, None, False, only, repo.root), "revert"
        elif agent_only:
            self.planner = takeback.agent_only(repo, items, target, False, only, repo.root)
            self.kind = "agent-only"

    def preview(self) -> dict[str, Any]:
        """The dry run: what would be written, removed, merged; the conversation; the CLI's text."""
        plan = restore.preview(self.repo, self.target, self.only, self.settings["max_file_size"], self.repo.root,
                               retarget=self.planner) if self.mode != "conversation" else None
        described = self.described
        nothing = undocmd.nothing_to_take_back(self.planner)
        since = undo.commits_since(self.repo, self.target.note, plan.head_now) \
            if plan is not None and self.planner is None else None
        lines = [line for line, _err in undocmd.preview_lines(plan, self.target.label, self.planner, described,
                                                               since)]
        outcome = self.planner.outcome if self.planner is not None else None
        busy = turns.at_work(self.repo, time.time())
        return {"ok": True, "dry_run": True,
                "write": [c.path for c in plan.writes] if plan and nothing is None else [],
                "remove": [c.path for c in plan.removals] if plan and nothing is None else [],
                "merge": list(outcome.merged) if outcome else [],
                "conflicts": [c.describe() for c in outcome.conflicts] if outcome else [],
                "conversation": described, "agents_at_work": [busy] if busy else [],
                "text": nothing if nothing is not None else "\n".join(lines)}

    def run(self, force: bool) -> dict[str, Any]:
        """The rewind itself, after a safety checkpoint; refused while an agent is at work unless FORCE."""
        busy = None if force else turns.at_work(self.repo, time.time())
        if busy:
            raise Refused(f"{busy}: confirm to rewind anyway (force)")
        if self.planner is not None:  # as the CLI: work the plan out first; nothing to take back stops here
            restore.preview(self.repo, self.target, self.only, self.settings["max_file_size"], self.repo.root,
                            retarget=self.planner)
            nothing = undocmd.nothing_to_take_back(self.planner)
            if nothing is not None:
                return {"ok": True, "safety": None, "text": nothing}
        result = undo.undo(self.repo, self.target, self.mode, False, self.only, self.settings["max_file_size"],
                           self.settings["auto_pack"], plan=self.conversation, cwd=self.repo.root,
                           retarget=self.planner, kind=self.kind)
        outcome = result.outcome
        safety = outcome.safety.seq if outcome is not None and outcome.safety is not None else None
        lines = undocmd.result_lines(result, self.target.label, "restored") if self.planner is None else \
            undocmd.result_lines(result, self.planner.start.label, "", headline=f"took back the agents' changes "
                                 f"{undocmd.range_words(self.planner)}")
        taken = self.planner.outcome if self.planner is not None else None
        return {"ok": True, "safety": safety, "text": "\n".join(line for line, _err in lines),
                "written": list(outcome.written) if outcome else [],
                "removed": list(outcome.removed) if outcome else [],
                "merge": list(taken.merged) if taken else [],
                "conflicts": [c.describe() for c in taken.conflicts] if taken else []}


def ident(body: dict[str, Any]) -> str:
    """The checkpoint a POST names (`id`: what the CLI accepts, or a seq number)."""
    value = body.get("id")
    if not isinstance(value, (str, int)) or isinstance(value, bool) or str(value).strip() == "":
        raise RewindError("name a checkpoint: id")
    return str(value)


def request(repo: Repo, every: list[Checkpoint], target: Checkpoint, kind: str, body: dict[str, Any]) -> Rewind:
    """What the page asked for (KIND: undo, revert, restore-file) about TARGET, checked: a bad field is a
    one-line error."""
    if kind == "undo":
        mode = body.get("mode", "code")
        return Rewind(repo, every, target, mode if isinstance(mode, str) else "", _paths(body, "only"),
                       agent_only=_flag(body, "agent_only"))
    if kind == "revert":
        return Rewind(repo, every, target, "code", [], revert=True)
    path = body.get("path")
    if not isinstance(path, str):
        raise RewindError("name the file: path")
    return Rewind(repo, every, target, "code", [check_path(path)])
