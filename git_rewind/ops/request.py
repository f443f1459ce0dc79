"""One rewind asked for by any face (the command line, the MCP server, the page): an undo (code, conversation or
both; agent-only), a revert or a redo, checked up front, previewed, run, and reported in one text and one JSON.

The faces only render a Report: the CLI prints its lines (or `--json`), the MCP server returns its text and
JSON, the page shows its JSON. What a face adds is its own: the CLI's questions on a terminal, the page's
`force`, the MCP server's two phases (TWO_PHASE: the preview gives a token, the run refuses without it or
when what the preview saw moved, token.py), each face's words for an error's remedy. A Request owns what its
conversation plan opened (OpenCode's and Kilo's `serve`): use it as a context manager, so a preview, a refusal
or a failure closes it too.
"""

from __future__ import annotations

import time

from ..base.errors import RewindError
from ..base.note import mode_of
from ..store import checkpoints
from . import restore, staging, undo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..agents import conversation
    from ..base.note import Mode
    from ..base.repo import Repo
    from ..store.checkpoints import Checkpoint
    from . import token
    from .restore import Plan
    from .takeback import Planner
    from .undo import Result, Since

AT_WORK = "at-work"  # the remedy of AgentAtWork: rewind anyway (the face's words: --yes, force)


class AgentAtWork(RewindError):
    """An agent is in the middle of a turn in this work tree: a rewind waits, unless told not to."""

    def __init__(self, busy: str) -> None:
        super().__init__(busy, remedy=AT_WORK)


class Request:
    """One rewind, worked out before anything changes (KIND: undo, agent-only, revert or redo)."""

    def __init__(self, repo: Repo, kind: str, target: Checkpoint, mode: str = "code", *, fork: bool = False,
                 only: list[str] | None = None, merge: bool = False, end: Checkpoint | None = None,
                 cwd: str | None = None, by: str | None = None, patch: bool = False,
                 paths: list[str] | None = None, items: list[Checkpoint] | None = None,
                 redo: undo.RedoPlan | None = None, why: str | None = None, two_phase: bool = False) -> None:
        from ..base import config

        try:
            self.mode: Mode = mode_of(mode)
        except ValueError as exc:
            raise RewindError(str(exc)) from None
        if kind in ("agent-only", "revert") and self.mode == "conversation":
            raise RewindError("taking back the agents' changes is about files: it goes with the code or full rewind")
        self.repo, self.kind, self.target, self.fork, self.by, self.patch = repo, kind, target, fork, by, patch
        self.only = list(only or [])
        self.paths = list(paths or [])  # --patch's paths (the CLI's, after --)
        self.cwd = cwd or repo.root
        self.settings = config.for_repo(repo)
        self.redo_plan = redo
        self.items = items
        self.why = why  # why this checkpoint: a bare undo's reason (undo.Bare), shown where the target is named
        self.two_phase = two_phase  # the preview gives a token the run must be given (token.py)
        self.merge = merge
        self.end = end
        self.conversation: conversation.Plan | None = None
        self.handed: bytes | None = None  # a fetched checkpoint's transcript, handed over when the rewind runs
        self.described: str | None = None  # the conversation side in one line
        self.planner: Planner | None = None
        if redo is not None:
            self.described = redo.description
            self.only = restore.literal(redo.record.only)
            self.code = redo.record.code
            return
        self.code = self.mode != "conversation"
        if self.mode != "code" and target.source is not None:  # another machine's: handed over when it runs
            from ..sharing import handoff

            self.handed = handoff.transcript_of(repo, target)
            self.described = handoff.describe(target, handoff.prepare(repo, target, self.handed))  # nothing written
        elif self.mode != "code":
            self.conversation = undo.plan_conversation(target, fork, repo)
            self.described = undo.describe(self.conversation)
        try:
            if kind in ("agent-only", "revert"):
                from . import takeback

                every = checkpoints.of_worktree(items if items is not None else checkpoints.load_all(repo),
                                                repo.worktree)
                self.planner = (takeback.agent_only(repo, every, target, merge, self.only, self.cwd)
                                if kind == "agent-only" else
                                takeback.revert(repo, every, target, end, merge, self.only + self.paths, self.cwd))
        except BaseException:
            self.close()
            raise

    # the faces' ways in -------------------------------------------------------------------------------

    @classmethod
    def undo(cls, repo: Repo, target: Checkpoint, mode: str = "code", *, agent_only: bool = False,
             **options: Any) -> Request:
        """An undo to TARGET; AGENT_ONLY: take back only the agents' changes since it."""
        return cls(repo, "agent-only" if agent_only else "undo", target, mode, **options)

    @classmethod
    def revert(cls, repo: Repo, start: Checkpoint, end: Checkpoint | None, **options: Any) -> Request:
        """The agents' changes of START's turn (up to END, when given) taken back."""
        return cls(repo, "revert", start, end=end, **options)

    @classmethod
    def redo(cls, repo: Repo, by: str | None = None) -> Request:
        """The newest undo not yet redone, reversed."""
        plan = undo.plan_redo(repo)
        return cls(repo, "redo", plan.target, plan.record.mode, redo=plan, by=by)

    def close(self) -> None:
        """Let go of what the conversation plan opened (a server started for the rewind)."""
        if self.conversation is not None:
            self.conversation.close()

    def __enter__(self) -> Request:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # working -------------------------------------------------------------------------------------------

    @property
    def question(self) -> str:
        """What a face asks before it runs."""
        if self.planner is not None:
            return f"Go ahead with {self.planner.what}?"
        key = (self.code and not self.patch, self.described is not None)
        what = {(True, False): "the working tree", (False, True): "the conversation",
                (True, True): "the working tree and the conversation"}.get(key, "")
        return f"Rewind {what} to {self.target.label}?"

    def preview(self) -> Report:
        """What the rewind would write, remove, merge and cut; nothing changes (a dry run)."""
        plan = restore.preview(self.repo, self.target, self.only, self.settings["max_file_size"], self.cwd,
                               retarget=self.planner) if self.code and not self.patch else None
        nothing = nothing_to_take_back(self.planner)
        since = undo.commits_since(self.repo, self.target.note, plan.head_now) \
            if plan is not None and self.planner is None else None
        outside = self.changed_outside(plan) if nothing is None else []
        lines = [(nothing, False)] if nothing is not None else \
            preview_lines(plan, self.target.label, self.planner, self.described, since)
        lines = [(self.naming(), False)] + lines + outside_lines(self.target, outside)
        report = Report(self, True, lines)
        report.data["changed_outside"] = outside
        report.nothing = nothing is not None
        report.empty = nothing is not None or ((plan is None or plan.empty) and self.described is None)
        if plan is not None and nothing is None and not plan.empty:
            self._index(report, staging.in_plan(self.repo, plan.writes + plan.removals, self.cwd), done=False)
        if plan is not None and nothing is None:
            report.data.update(write=[c.path for c in plan.writes], remove=[c.path for c in plan.removals],
                               left_alone=list(plan.left_alone), warnings=restore.warnings(plan))
        if self.two_phase:
            from . import token

            head, branch = plan.head_now if plan is not None else (None, None)
            seen = token.State(plan.current_tree if plan is not None else None, head, branch,
                               token.State.of_transcript(self.transcript()))
            report.data["token"] = token.issue(self.repo, self.binding(), seen)
        return report

    def binding(self) -> token.Binding:
        """What this rewind is, as a two-phase restore's token is bound to it."""
        from . import token

        if self.kind == "revert":
            words = f"the revert of {self.target.label}" + (f" to {self.end.label}" if self.end else "")
        else:
            words = f"{'an agent-only undo' if self.kind == 'agent-only' else 'the ' + self.kind} ({self.mode}) " \
                    f"to {self.target.label}"
        return token.Binding(self.kind, self.mode, self.target.commit, self.end.commit if self.end else None,
                             self.only + self.paths, self.merge, self.fork, self.repo.worktree, words)

    def transcript(self) -> bytes | None:
        """The transcript this rewind would cut, as read when the request was made (a fetched checkpoint's:
        the one handed over); None without a conversation."""
        if self.conversation is not None:
            return self.conversation.transcript.data
        return self.handed

    def at_work(self) -> str | None:
        """The agent turn running in this work tree, in words (None: none)."""
        from ..base import turns

        return turns.at_work(self.repo, time.time(), self.settings["turn_timeout_minutes"] * 60.0)

    def run(self, allow_busy: bool = True, warned: bool = False, token: str | None = None) -> Report:
        """The rewind itself, after a safety checkpoint. Not ALLOW_BUSY: AgentAtWork while a turn runs.
        WARNED: the face showed the preview's warnings already (its lines leave them out). TOKEN: a two-phase
        request's, from its preview; without it, or when what the preview saw moved, token.Refused and nothing
        changed (the files are compared under the lock the restore then holds)."""
        busy = None if allow_busy else self.at_work()
        if busy:
            raise AgentAtWork(busy)
        expect = None
        if self.two_phase:
            expect = self._expect(token)
        if self.planner is not None and self.planner.outcome is None:  # worked out first: it may find nothing
            restore.preview(self.repo, self.target, self.only, self.settings["max_file_size"], self.cwd,
                            retarget=self.planner)
        nothing = nothing_to_take_back(self.planner)
        if nothing is not None:
            report = Report(self, False, [(self.naming(), False), (nothing, False)])
            report.nothing = True
            return report
        max_size, auto_pack = self.settings["max_file_size"], self.settings["auto_pack"]
        if self.redo_plan is not None:
            result = undo.redo(self.repo, max_size, auto_pack, self.redo_plan, by=self.by)
            safety = result.outcome.safety if result.outcome is not None else None
            back = f"git rewind undo {safety.seq}" if safety is not None else "git rewind undo"
            lines = [(self.naming(), False)] + result_lines(result, self.target.label, "restored", warned, back=back)
            more = self.redo_plan.depth - 1
            if more:
                lines.append((f"{more} more redo{'s' if more != 1 else ''} available (git rewind redo)", False))
            return self._index_after(Report(self, False, lines, result))
        target = self.target
        if self.handed is not None:  # written now, after the preview
            target, self.conversation = undo.plan_handover(self.repo, target, self.handed, self.fork)
        asked = staging.Asked(self.repo) if self.code else None  # git reads the index beside the restore
        try:
            result = undo.undo(self.repo, target, self.mode, self.fork, self.only + self.paths, max_size,
                               auto_pack, plan=self.conversation, cwd=self.cwd, retarget=self.planner,
                               kind=self.kind if self.planner is not None else None, by=self.by, patch=self.patch,
                               expect=expect)
            if self.planner is None:
                lines = result_lines(result, target.label, "patched toward" if self.patch else "restored", warned,
                                     listed=self.patch)
            else:
                how = ", hunk by hunk," if self.patch else ""
                lines = result_lines(result, self.planner.start.label, "", warned, listed=self.patch,
                                     headline=f"took back{how} the agents' changes {range_words(self.planner)}")
                lines += takeback_lines(self.planner)
            return self._index_after(Report(self, False, [(self.naming(), False)] + lines, result), asked)
        finally:
            if asked is not None:
                asked.close()  # (its answer read, or no longer wanted)

    def _expect(self, text: str | None) -> Callable[[Plan], None]:
        """TEXT read as this request's token, the transcript checked against it now, and the check of the files
        and HEAD the restore makes under its lock (token.Refused: nothing changed)."""
        from . import token

        seen = token.read(self.repo, text, self.binding())
        token.check_transcript(seen, self.transcript())
        return lambda plan: token.check_files(self.repo, seen, plan.current_tree, plan.head_now)

    def _index_after(self, report: Report, asked: staging.Asked | None = None) -> Report:
        """REPORT with what the person's index still stages against the files the rewind wrote or removed
        (ASKED: git was asked what the index stages when the rewind began, staging.Asked)."""
        outcome = report.result.outcome if report.result is not None else None
        if outcome is not None and (outcome.written or outcome.removed):
            self._index(report, staging.on_disk(self.repo, outcome.written + outcome.removed, self.cwd, asked),
                        done=True)
        return report

    def _index(self, report: Report, contradiction: staging.Contradiction | None, done: bool) -> None:
        """Name in REPORT the paths the index stages otherwise than the rewind leaves them (its lines, its
        JSON's `index`): the index is never written, so the person is told what to run."""
        report.index = contradiction
        if contradiction is not None:
            what = {"redo": "redo", "revert": "revert"}.get(self.kind, "undo")
            report.lines += staging.staged_lines(contradiction, what, done)

    def naming(self) -> str:
        """The line that names the checkpoint this rewind goes to, first in every preview and result."""
        return naming_line(self.target, LEADS.get(self.kind, self.kind), self.why)

    def changed_outside(self, plan: Plan | None) -> list[str]:
        """The files this plain undo would put back that were changed from outside any agent turn since its
        checkpoint (the person's own edits; an agent-only undo keeps them). Empty for other rewinds."""
        if plan is None or plan.empty or self.kind != "undo" or self.target.source is not None:
            return []
        touched = {c.path for c in plan.writes + plan.removals}
        items = self.items if self.items is not None else checkpoints.load_all(self.repo)
        return undo.changed_outside(self.repo, checkpoints.of_worktree(items, self.target.note.worktree),
                                    self.target, plan.current_tree, touched)


def takeback_lines(planner: Planner) -> list[tuple[str, bool]]:
    """What an agent-only undo or a revert merged, left in conflict, or could not attribute."""
    outcome = planner.outcome
    if outcome is None:
        return []
    lines: list[tuple[str, bool]] = []
    if outcome.merged:
        lines.append((f"merged with later changes: {', '.join(outcome.merged)}", False))
    marked = [c for c in outcome.conflicts if c.kind == "content"]
    if marked:
        lines.append(("conflict markers (<<<<<<< current … >>>>>>> the checkpoint) to resolve in:", False))
        lines += [(f"  {conflict.describe()}", False) for conflict in marked]
    lines += [(f"in conflict, left as it is: {c.describe()}", False) for c in outcome.conflicts if c.kind != "content"]
    if outcome.unknown:
        shown = ", ".join(outcome.unknown[:5]) + ("…" if len(outcome.unknown) > 5 else "")
        lines.append((f"warning: attribution is unknown for {shown}: those changes were kept", True))
    return lines


class Report:
    """A rewind's preview or result: its lines as `git rewind` prints them ((line, for stderr) pairs) and one
    JSON shape every face returns (`to_json`)."""

    def __init__(self, request: Request, dry_run: bool, lines: list[tuple[str, bool]],
                 result: undo.Result | None = None) -> None:
        self.lines = lines
        self.result = result
        self.nothing = False  # an agent-only undo or revert that found no agent change
        self.empty = False  # a preview with nothing to do
        self.index: staging.Contradiction | None = None  # what the person's index stages that the rewind contradicts
        planner = request.planner
        taken = planner.outcome if planner is not None else None
        outcome = result.outcome if result is not None else None
        self.data: dict[str, Any] = {
            "ok": True, "dry_run": dry_run, "kind": request.kind, "mode": request.mode,
            "checkpoint": request.target.seq, "target": request.target.label,
            "target_checkpoint": {**target_json(request.target), "why": request.why, "named": request.naming()},
            "changed_outside": [],
            "write": [], "remove": [], "left_alone": [], "warnings": [],
            "merged": list(taken.merged) if taken else [],
            "conflicts": [{"path": c.path, "kind": c.kind, "ranges": [list(r) for r in c.ranges],
                           "text": c.describe()} for c in taken.conflicts] if taken else [],
            "unknown": list(taken.unknown) if taken else [],
            "conversation": request.described,
            "agents_at_work": [],
            "safety_checkpoint": outcome.safety.seq if outcome is not None and outcome.safety is not None else None,
            "written": list(outcome.written) if outcome else [],
            "removed": list(outcome.removed) if outcome else [],
            "reinstated": list(outcome.reinstated) if outcome else [],
            "verified": bool(outcome.verified) if outcome and outcome.safety is not None else False,
            "conversation_result": result.applied.as_json() if result is not None and result.applied else None,
            "prompt": result.plan.prompt if result is not None and result.plan else None,
            "resume": result.resume if result is not None else None,
            "token": None,  # a two-phase preview's (MCP): what its restore must be given
        }
        if outcome is not None and outcome.safety is not None:
            self.data["warnings"] = restore.warnings(outcome.plan)
        if dry_run:
            busy = request.at_work()
            self.data["agents_at_work"] = [busy] if busy else []

    @property
    def text(self) -> str:
        return "\n".join(line for line, _err in self.lines)

    def to_json(self) -> dict[str, Any]:
        """The one JSON shape of a preview or a result (the same keys for every face and every kind)."""
        return {**self.data, "nothing_to_take_back": self.nothing,
                "index": self.index.to_json() if self.index is not None else None, "text": self.text}


# naming the checkpoint a rewind goes to (every preview and result starts with it) ---------------------

OUTSIDE_SHOWN = 10  # files named in the list of the person's edits an undo puts back
LEADS = {"undo": "undo to", "agent-only": "taking back the agents' changes since", "revert": "reverting the turn of",
         "redo": "redo: back to"}


def kind_of(target: Checkpoint) -> str:
    """What moment TARGET is, in a word or two (`list`'s trigger/tool where no word fits)."""
    note = target.note
    if note.safety:
        return "safety checkpoint"
    if "prompt" in note.tags:
        return "prompt"
    if note.trigger == "watch":
        return "watch start" if note.message.startswith("watch start") else "watch"
    if note.message == "turn end":
        return "turn end"
    if note.agent is None and note.trigger in (None, "manual", "snap"):
        return "manual"
    return "/".join(x for x in (note.trigger or "manual", note.tool) if x)


def target_json(target: Checkpoint, now: float | None = None) -> dict[str, Any]:
    """The checkpoint a rewind goes to, as the JSON of every face names it."""
    from ..base.clock import age

    note = target.note
    return {"id": target.ident, "seq": note.seq, "commit": target.commit, "kind": kind_of(target),
            "created": note.created, "age": age(note.created, now, words=True), "session": note.session,
            "agent": note.agent, "message": " ".join(note.message.split())}


def naming_line(target: Checkpoint, lead: str, why: str | None = None, now: float | None = None) -> str:
    """`undo to #7 (prompt, 5 min ago, claude-code session 4f9e1a2b3c4d): prompt: add tests`, WHY after the
    id when given (a bare undo says which turn)."""
    data = target_json(target, now)
    who = f"{data['agent'] + ' ' if data['agent'] else ''}session {data['session'][:12]}"
    reason = f", {why}" if why else ""
    return f"{lead} {target.label}{reason} ({data['kind']}, {data['age']}, {who}): {data['message'] or '-'}"


def outside_lines(target: Checkpoint, paths: list[str]) -> list[tuple[str, bool]]:
    """A plain undo's preview: the files changed from outside any agent turn since TARGET (the person's own
    edits), which it puts back too, and the undo that keeps them."""
    if not paths:
        return []
    shown = paths[:OUTSIDE_SHOWN] + ([f"… and {len(paths) - OUTSIDE_SHOWN} more"] if len(paths) > OUTSIDE_SHOWN else [])
    return ([(f"changed since {target.label} outside any agent turn (by you, an editor, git), put back as well "
              "(the safety checkpoint keeps them: git rewind redo brings them back):", False)]
            + [(f"  {path}", False) for path in shown]
            + [(f"to keep them as they are and take back only the agents' changes: "
                f"git rewind undo {target.ident} --agent-only", False)])


# the lines every face shows (`git rewind` prints them) ------------------------------------------------


def result_lines(result: Result, target: str, verb: str, warned: bool = False,
                 headline: str | None = None, back: str = "git rewind redo",
                 listed: bool = False) -> list[tuple[str, bool]]:
    """What an undo, redo, revert or agent-only undo did, as (line, for stderr) pairs: the safety checkpoint,
    the counts, what it left (request.Report's lines, which every face shows)."""
    lines: list[tuple[str, bool]] = []

    def echo(text: str, err: bool = False) -> None:
        lines.append((text, err))

    outcome = result.outcome
    if outcome is not None and outcome.safety is not None and not warned:
        for line in restore.warnings(outcome.plan):
            echo(f"warning: {line}", err=True)
    if outcome is None and result.plan is not None and result.plan.already is not None:
        pass  # a conversation-only undo to where the conversation already stands: its one line follows
    elif outcome is None or outcome.safety is None:
        echo(f"the working tree already matches {target}" if headline is None
             else "every file is already as it would be")
    else:
        echo(f"safety checkpoint #{outcome.safety.seq} {outcome.safety.commit[:7]} ({back} goes back)")
        if outcome.written or outcome.removed or outcome.plan.writes or outcome.plan.removals:
            checked = " (verified)" if outcome.verified else ""
            kept = f", {len(outcome.conflicts)} not restored" if outcome.conflicts else ""
            echo(f"{headline or f'{verb} {target}'}: {len(outcome.written)} written, "
                 f"{len(outcome.removed)} removed{kept}{checked}")
            if listed:  # a patch session: which of the paths offered it changed
                for path in outcome.written:
                    echo(f"  written  {path}")
                for path in outcome.removed:
                    echo(f"  removed  {path}")
        elif outcome.plan.files:  # a redo records itself all the same (it pops the redo stack)
            echo(f"the working tree already matches {target}")
        for path in outcome.plan.left_alone:
            echo(f"left alone: {path}", err=True)
        for path in outcome.conflicts:
            echo(f"not restored (a directory with uncaptured files is in the way): {path}", err=True)
        for path in outcome.reinstated:
            echo(f"kept git-rewind installed: its entries are back in {path}")
    if result.since is not None:
        lines += [(line, False) for line in since_lines(result.since, done=True)]
    if result.applied is not None:
        echo(result.applied.detail)
    plan = result.plan
    if plan is not None and plan.prompt:
        echo("the prompt it cut, to send again or edit:")
        for line in plan.prompt.splitlines() or [""]:
            echo(f"  {line}")
    if result.resume:
        echo(f"resume with: {result.resume}")
    return lines


def since_lines(since: Since, done: bool) -> list[str]:
    """What an undo of the files leaves on the branch: the commits made since its checkpoint (an agent's marked),
    and the git commands the person may want about them (git-rewind never runs them). DONE: after the undo
    (the files are already back: `git reset --keep` and `git revert` would refuse them as local changes)."""
    where = since.branch or "HEAD"
    many = "the commit" if since.count == 1 else f"the {since.count} commits"
    lines = [f"{where} keeps {many} made since #{since.seq} (HEAD stays at {since.new}):"]
    for short, subject, by in since.shown:
        lines.append(f"  {short} {subject}" + (f"  [{by}]" if by else ""))
    if since.count > len(since.shown):
        lines.append(f"  … and {since.count - len(since.shown)} more (git log {since.old}..{since.new})")
    if done:
        lines.append(f"to take them off {where} as well (the files stay as restored): git reset {since.old}")
        lines.append(f"or to keep them and add commits that revert them instead: "
                     f"git rewind redo && git revert --no-edit {since.old}..{since.new}")
    else:
        lines.append(f"to take them off {where} as well, after the undo: git reset {since.old}")
        lines.append(f"or, instead of this undo, commits that revert them: "
                     f"git revert --no-edit {since.old}..{since.new}")
    return lines


def range_words(planner: Planner) -> str:
    if planner.end is None:
        return f"since #{planner.start.seq}"
    return f"between #{planner.start.seq} and #{planner.end.seq}"


def nothing_to_take_back(planner: Planner | None) -> str | None:
    """The line that ends an agent-only undo or a revert whose preview found no agent change; else None."""
    if planner is None or planner.outcome is None or planner.outcome.runs:
        return None
    return f"nothing to take back: no agent changed a file {range_words(planner)}; nothing changed"


def preview_lines(plan: Plan | None, target: str, planner: Planner | None,
                  conversation: str | None, since: Since | None = None) -> list[tuple[str, bool]]:
    """A rewind's preview (what --dry-run prints, the web page's dialog shows): (line, for stderr) pairs. SINCE:
    the commits the branch keeps (undo.commits_since)."""
    from ..base import config

    lines: list[tuple[str, bool]] = []
    if plan is not None:
        if plan.empty:
            lines.append((f"the working tree already matches {target}" if planner is None
                          else "taking back the agents' changes leaves every file as it is", False))
        else:
            lines += [(f"write   {change.path}", False) for change in plan.writes]
            lines += [(f"remove  {change.path}", False) for change in plan.removals]
            for path in plan.left_alone:
                why = "git-rewind's own settings" if path == config.PROJECT_FILE else \
                    "not captured now: ignored, too large or a nested repository"
                lines.append((f"leave   {path} ({why})", False))
            outcome = planner.outcome if planner is not None else None
            if outcome is not None:
                lines += [(f"merge   {path} (changed since as well: those changes are kept)", False)
                          for path in outcome.merged]
                lines += [(f"conflict {conflict.describe()}", False) for conflict in outcome.conflicts]
                if outcome.unknown:
                    shown = ", ".join(outcome.unknown[:5]) + ("…" if len(outcome.unknown) > 5 else "")
                    lines.append((f"warning: attribution is unknown for {shown}: those changes are kept", True))
            lines.append((f"{len(plan.writes)} to write, {len(plan.removals)} to remove", False))
        lines += [(f"warning: {line}", True) for line in restore.warnings(plan)]
    if since is not None:
        lines += [(line, False) for line in since_lines(since, done=False)]
    if conversation is not None:
        lines.append((conversation, False))
    return lines
