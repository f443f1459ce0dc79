"""`git rewind undo` in its plain scripted form, without click, and the lines every rewind command prints.

Importing click costs ~40 ms, a tenth of a whole restore of one file. `parse` reads
`undo [ID] [--code] --yes` (`-y`): nothing to preview and nothing to ask, so no click is needed.
Every other form (a terminal that is asked, --dry-run, --only, --full, help, errors) goes to
cli.py's click command, which prints its result through the same `print_result`.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .restore import Plan
    from .takeback import Planner
    from .undo import Result, Since


def parse(argv: list[str]) -> tuple[str | None] | None:
    """(ID or None,) from ARGV (after 'undo') when it is `[ID] [--code] --yes`; None to let click handle it."""
    ident = None
    yes = False
    for arg in argv:
        if arg in ("--yes", "-y"):
            yes = True
        elif arg == "--code":
            continue
        elif arg.startswith("-") or ident is not None:
            return None
        else:
            ident = arg
    return (ident,) if yes else None


def run(ident: str | None) -> int:
    """Rewind this work tree's files to checkpoint IDENT (default: the newest that is not a safety checkpoint),
    as `git rewind undo ID --yes` through click does; print the result; the exit code."""
    import os

    from . import checkpoints, config, undo
    from .repo import Repo

    try:
        repo = Repo.find(os.getcwd())  # no process for the plain layouts (as snap and hooks); else git is asked
        settings = config.for_repo(repo)
        items = checkpoints.load_all(repo)
        target = (checkpoints.lookup(repo, ident, items, repo.worktree) if ident is not None
                  else checkpoints.latest_work(repo, repo.worktree, items))
        result = undo.undo(repo, target, "code", False, [], settings["max_file_size"], settings["auto_pack"],
                           cwd=os.getcwd())
    except KeyboardInterrupt:  # as click says it
        echo("", err=True)
        echo("aborted", err=True)
        return 1
    print_result(result, target.label, "restored")
    return 0


def echo(text: str, err: bool = False) -> None:
    """One line on stdout (or stderr), flushed at once as click.echo does: the two streams stay in order."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()


def print_result(result: Result, target: str, verb: str, warned: bool = False,
                 headline: str | None = None, back: str = "git rewind redo", listed: bool = False) -> None:
    """What an undo, redo, revert or agent-only undo did: the safety checkpoint, the counts, what it left."""
    for line, err in result_lines(result, target, verb, warned, headline, back, listed):
        echo(line, err=err)


def result_lines(result: Result, target: str, verb: str, warned: bool = False,
                 headline: str | None = None, back: str = "git rewind redo",
                 listed: bool = False) -> list[tuple[str, bool]]:
    """print_result's lines, as (line, for stderr) pairs: the web page shows them too."""
    from . import restore

    lines: list[tuple[str, bool]] = []

    def echo(text: str, err: bool = False) -> None:
        lines.append((text, err))

    outcome = result.outcome
    if outcome is not None and outcome.safety is not None and not warned:
        for line in restore.warnings(outcome.plan):
            echo(f"warning: {line}", err=True)
    if outcome is None or outcome.safety is None:
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
    from . import config, restore

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
