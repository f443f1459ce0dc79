"""Rewinding: `undo`, `revert`, `redo`, each one request.Request rendered for a terminal."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

import click

from ...base.errors import RewindError
from ...base.repo import Repo
from ...store import checkpoints
from .common import CONTEXT, PathsAfterDashes, cli, patch_option, paths_after_dashes, worktree_of, worktree_option

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ...ops.request import Report, Request

def _confirm(asked: Request, dry_run: bool, yes: bool, as_json: bool = False) -> tuple[bool, bool]:
    """Show what would change (always for --dry-run, on a terminal unless --yes); (go ahead, warnings shown).
    An agent-only undo or a revert is worked out even without asking: it may find nothing to take back, or
    conflicts, before anything is written. AS_JSON: a dry run prints the preview's JSON instead."""
    asking = not as_json and sys.stdin.isatty() and not yes
    if not (dry_run or asking) and asked.planner is None:
        return True, False
    report = asked.preview()
    if report.nothing or dry_run:
        if as_json:
            click.echo(json.dumps(report.to_json(), indent=2))
        else:
            for line, err in report.lines:
                click.echo(line, err=err)
        return False, True
    if not asking:
        return True, False
    for line, err in report.lines:
        click.echo(line, err=err)
    if report.empty:
        return False, True
    if not click.confirm(asked.question, default=False):
        click.echo("nothing changed")
        sys.exit(1)
    return True, True


def _report(report: Report, as_json: bool) -> None:
    """A rewind's result: its lines, or its JSON."""
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
        return
    for line, err in report.lines:
        click.echo(line, err=err)


def _json_option(function: Callable[..., None]) -> Callable[..., None]:
    return click.option("--json", "as_json", is_flag=True,
                        help="Print the preview (with --dry-run) or the result as JSON, the shape MCP and the "
                             "page return; asks nothing (give --dry-run or --yes).")(function)


def _check_json(as_json: bool, dry_run: bool, yes: bool) -> None:
    if as_json and not (dry_run or yes):
        raise click.UsageError("--json asks nothing: give --dry-run or --yes with it")


def ask_if_agents_at_work(repo: Repo, yes: bool, dry_run: bool) -> None:
    """Before a rewind of the files (undo, redo, revert, undo --agent-only): when an agent session is in
    the middle of a turn in this work tree, ask first (no terminal: refuse unless --yes). A dry run
    changes nothing, so it does not ask. (MCP tools do not come here: an agent calls them from within
    its own turn.)"""
    import time

    from ...base import turns

    if dry_run:
        return
    busy = None if yes else turns.at_work(repo, time.time())  # --yes: asked not to be asked, as for the preview
    if busy is None:
        return
    if not sys.stdin.isatty():
        raise RewindError(f"{busy}: wait for the turn to end, or give --yes to rewind anyway; nothing changed")
    if not click.confirm(f"{busy}. Continue?", default=False):
        click.echo("nothing changed")
        sys.exit(1)


@cli.command("undo", cls=PathsAfterDashes, context_settings=CONTEXT)
@click.argument("ident", metavar="[ID]", required=False)
@click.option("--code", "mode", flag_value="code", default=True, help="Rewind the working tree only (the default).")
@click.option("--conversation", "mode", flag_value="conversation",
              help="Rewind the agent's conversation only (its transcript; the files stay).")
@click.option("--full", "mode", flag_value="full", help="Rewind both the working tree and the conversation.")
@click.option("--fork", is_flag=True,
              help="Write the rewound conversation as a new session; leave the original untouched.")
@click.option("--dry-run", is_flag=True, help="List what would be written and removed; change nothing.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--only", "only", multiple=True, metavar="PATHSPEC",
              help="Restore only what these git pathspecs match (relative to the current directory; globs, "
                   ":(top) and other magic as in git). One that matches nothing is an error.")
@click.option("--agent-only", "agent_only", is_flag=True,
              help="Take back only what agents changed since ID; keep every change made from outside "
                   "(merged three-way by git).")
@click.option("--merge", "merge", is_flag=True,
              help="With --agent-only: on a conflict write the clean parts and conflict markers "
                   "instead of nothing.")
@patch_option
@worktree_option
@_json_option
def undo_command(ident: str | None, mode: str, fork: bool, dry_run: bool, yes: bool, only: tuple[str, ...],
                 agent_only: bool, merge: bool, patch: bool, worktree: str | None, as_json: bool) -> None:
    """Rewind the code, the conversation or both to a checkpoint, after a safety checkpoint.

    Without ID: undo the newest agent turn, i.e. restore the checkpoint taken at its start (its prompt
    checkpoint, a watch run's start; turns that changed no file are passed over unless still running;
    with no turn recorded, the newest checkpoint that is not a safety checkpoint). Again right after:
    one turn further back (never back to what the last undo replaced); redo walks forward again.
    @ is the newest checkpoint of all. Ids resolve among this work tree's checkpoints; --worktree NAME
    picks from another's (restored here).

    The preview and the result name the checkpoint (#N, kind, age, agent and session, message); the
    preview lists the files changed since from outside any agent turn, which the undo puts back as
    well (the safety checkpoint keeps them) and --agent-only keeps.

    Every file written or removed is read back afterwards: the result line says "(verified)", and a
    restore that did not fully happen lists the paths and exits with status 4. Warns first when the
    checkpoint was taken on another branch or HEAD, and names ignored files changed since it (they
    are left as they are). Your index is never written: where it stages something else for a path
    the undo changes (a deletion of a file it brings back), the preview and the result name those
    paths and the `git restore --staged ...` to run (so do revert and redo).

    With --patch, each change comes hunk by hunk through git's own prompts ([y,n,q,a,d,s,e,?], as
    `git restore -p`), binary files whole first; with --full the conversation is rewound after.
    """
    import time

    from ...ops import undo
    from ...ops.request import Request

    paths = paths_after_dashes()
    _check_patch(patch, paths, mode=mode, fork=fork, dry_run=dry_run)
    _check_json(as_json, dry_run, yes)
    if fork and mode == "code":
        raise click.UsageError("--fork rewinds a conversation: use it with --conversation or --full")
    if agent_only and mode == "conversation":
        raise click.UsageError("--agent-only takes back file changes: use it with --code (the default) or --full")
    if merge and not agent_only:
        raise click.UsageError("--merge goes with --agent-only (or revert)")
    repo = Repo.discover()
    items = checkpoints.load_all(repo)
    where = worktree_of(repo, items, worktree)
    why = None
    if ident is not None:
        target = checkpoints.lookup(repo, ident, items, where)
    else:
        bare = undo.bare_target(repo, items, where, time.time())
        target, why = bare.target, bare.why
    with Request.undo(repo, target, mode, agent_only=agent_only, fork=fork, only=list(only), merge=merge,
                      cwd=os.getcwd(), patch=patch, paths=list(paths), items=items, why=why) as asked:
        ask_if_agents_at_work(repo, yes, dry_run)
        go, warned = True, False
        if not patch or asked.described is not None:  # with --patch the hunks are the preview: only a conversation asks
            go, warned = _confirm(asked, dry_run, yes, as_json)
        if go:
            _report(asked.run(warned=warned), as_json)


def _check_patch(patch: bool, paths: tuple[str, ...], mode: str = "code", fork: bool = False,
                 dry_run: bool = False) -> None:
    """--patch chooses hunks of the code on a terminal: what does not go with it, in one line, before anything."""
    if not patch:
        if paths:
            raise RewindError("paths after -- go with --patch; to restore only some paths use --only PATHSPEC")
        return
    for given, name in ((mode == "conversation", "--conversation"), (fork, "--fork"), (dry_run, "--dry-run")):
        if given:
            raise RewindError(f"--patch does not go with {name}: it chooses hunks of the code, on a terminal")
    from ...ops import patch as hunks  # tempfile and shutil: only a patch session pays for them

    hunks.need_terminal()


@cli.command("revert", cls=PathsAfterDashes, context_settings=CONTEXT)
@click.argument("ident", metavar="ID")
@click.argument("ident2", metavar="[ID2]", required=False)
@click.option("--merge", "merge", is_flag=True,
              help="On a conflict write the clean parts and conflict markers instead of nothing.")
@click.option("--dry-run", is_flag=True, help="List what would be written, removed and merged; change nothing.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--only", "only", multiple=True, metavar="PATHSPEC",
              help="Take back only in what these git pathspecs match (relative to the current directory).")
@patch_option
@_json_option
def revert_command(ident: str, ident2: str | None, merge: bool, dry_run: bool, yes: bool,
                   only: tuple[str, ...], patch: bool, as_json: bool) -> None:
    """Take back the agents' changes of one turn, keeping everything after it (like git revert).

    ID a prompt checkpoint: its turn, up to the session's next prompt checkpoint; any other
    checkpoint: up to its session's next checkpoint. With ID2: every agent's changes between the
    states ID and ID2. Later turns, other sessions and changes from outside stay. A line the agent
    changed that was changed again later is a conflict: nothing is written and the exit status is 3,
    unless --merge. A safety checkpoint comes first; redo goes back. With --patch, hunk by hunk through
    git's own prompts, as undo --patch.
    """
    from ...ops.request import Request

    paths = paths_after_dashes()
    _check_patch(patch, paths, dry_run=dry_run)
    _check_json(as_json, dry_run, yes)
    repo = Repo.discover()
    items = checkpoints.of_worktree(checkpoints.load_all(repo), repo.worktree)
    start = checkpoints.lookup(repo, ident, items)
    end = checkpoints.lookup(repo, ident2, items) if ident2 is not None else None
    with Request.revert(repo, start, end, merge=merge, only=list(only), paths=list(paths), cwd=os.getcwd(),
                        patch=patch, items=items) as asked:
        ask_if_agents_at_work(repo, yes, dry_run)
        go, warned = True, False
        if not patch:  # with --patch the hunks are the preview
            go, warned = _confirm(asked, dry_run, yes, as_json)
        if go:
            _report(asked.run(warned=warned), as_json)


@cli.command("redo", context_settings=CONTEXT)
@click.option("--dry-run", is_flag=True, help="List what would be written and removed; change nothing.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@_json_option
def redo_command(dry_run: bool, yes: bool, as_json: bool) -> None:
    """Reverse the newest undo not yet redone; repeated, walk back through the undos, newest first.

    Each redo brings back exactly the files (and conversation) that undo replaced; what is there now
    goes into the redo's own safety checkpoint, so a redo can be undone (git rewind undo N). Checkpoints
    taken since do not clear the stack; a new undo goes on top of it. git rewind status counts them.
    """
    from ...ops.request import Request

    _check_json(as_json, dry_run, yes)
    repo = Repo.discover()
    with Request.redo(repo) as asked:
        ask_if_agents_at_work(repo, yes, dry_run)
        go, warned = _confirm(asked, dry_run, yes, as_json)
        if go:
            _report(asked.run(warned=warned), as_json)
