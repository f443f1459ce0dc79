"""Reading the history: `list`, `show`, `diff`, `tag`, `files`, `cat`, `blame`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import click

from ...base import config, minijson
from ...base.repo import Repo
from ...store import checkpoints
from .. import output, pager
from .common import (
    CONTEXT,
    PathsAfterDashes,
    cli,
    find_checkpoint,
    paths_after_dashes,
    view_options,
    worktree_of,
    worktree_option,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass

@cli.command("list", context_settings=CONTEXT)
@click.option("--session", help="Only this session (default: $GIT_REWIND_SESSION if set, else all).")
@click.option("--all", "all_sessions", is_flag=True, help="Every session.")
@worktree_option
@click.option("--all-worktrees", "all_worktrees", is_flag=True, help="Every work tree's checkpoints.")
@click.option("-n", "limit", type=click.IntRange(min=0), default=20, show_default=True,
              help="How many, newest first (0: all).")
@click.option("--grep", "grep", multiple=True, metavar="TEXT",
              help="Only checkpoints with TEXT in their message, prompt or summary (any case; repeatable: any).")
@click.option("--path", "paths", multiple=True, metavar="PATHSPEC",
              help="Only checkpoints that changed what these git pathspecs match since the work tree's previous "
                   "checkpoint (relative to the current directory).")
@click.option("--tag", "tags", multiple=True, metavar="TAG", help="Only checkpoints with this tag (repeatable: all).")
@click.option("--agent", "agent", metavar="NAME", help="Only checkpoints this agent took (`manual`: taken by hand).")
@click.option("--since", "since", metavar="DATE",
              help='Only checkpoints at or after DATE (git\'s date syntax: "2 hours ago", "yesterday", ISO).')
@click.option("--until", "until", metavar="DATE", help="Only checkpoints at or before DATE (git's date syntax).")
@click.option("--safety", "safety", is_flag=True,
              help="Also the safety checkpoints every undo and redo takes first (hidden otherwise).")
@click.option("--remote", "remote", metavar="REMOTE",
              help="The checkpoints fetched from REMOTE (`git rewind fetch`), with who made them, instead.")
@click.option("--json", "as_json", is_flag=True,
              help="A JSON array of notes, each with its commit and the id every command accepts.")
@view_options
def list_command(session: str | None, all_sessions: bool, worktree: str | None, all_worktrees: bool, limit: int,
                 grep: tuple[str, ...], paths: tuple[str, ...], tags: tuple[str, ...], agent: str | None,
                 since: str | None, until: str | None, safety: bool, remote: str | None, as_json: bool,
                 color: str | None, no_pager: bool) -> None:
    """List this work tree's checkpoints, newest first; the filters narrow it (all must hold).

    The safety checkpoints every undo and redo takes first are left out unless --safety is given; their
    ids work all the same.
    """
    from ...ops import search

    if session and all_sessions:
        raise click.UsageError("--session and --all exclude each other")
    if worktree and all_worktrees:
        raise click.UsageError("--worktree and --all-worktrees exclude each other")
    if remote and (worktree or all_worktrees):
        raise click.UsageError("--remote lists what was fetched, which belongs to no work tree here")
    repo = Repo.discover()
    if remote:
        from ...sharing import sync

        items = sync.fetched_from(repo, remote)
    else:
        items = checkpoints.load_all(repo)
    if not all_worktrees and not remote:
        items = checkpoints.of_worktree(items, worktree_of(repo, items, worktree))
    scope = None if all_sessions else (session or os.environ.get("GIT_REWIND_SESSION"))
    query = search.Query(grep, paths, tags, agent, scope, since, until, cwd=os.getcwd(), safety=safety)
    selected, hidden = search.select_counted(repo, items, query)
    items, more = checkpoints.newest_first(selected, limit=limit)
    if as_json:
        shown = [c.as_json() for c in checkpoints.with_notes(items)]
        click.echo(minijson.dumps_indented(shown, indent=2))  # json.dumps's bytes, faster
        return
    footer = f"({hidden} safety checkpoint{'s' if hidden != 1 else ''} hidden; --safety shows them)" if hidden else ""
    if not items:
        click.echo("no checkpoints" + (f" fetched from {remote}" if remote else "")
                   + (f" matching {query.describe()}" if query else "") + (f" {footer}" if footer else ""))
        return
    view = pager.choose(color, no_pager, repo.root)
    with pager.paged(view):
        rows = output.table(items, worktree=all_worktrees, width=view.width, view=view, remote=bool(remote))
        # one write for all (click.echo flushes each: 50,000 rows were 50,000 writes); click would drop git's
        # colours when not on a terminal
        click.echo("\n".join(rows), color=view.color)
        if more:
            click.echo(f"({more} older; -n 0 shows all)")
        if footer:
            click.echo(footer)


@cli.command("show", context_settings=CONTEXT)
@click.argument("ident", metavar="[ID]", default="@")
@worktree_option
@click.option("--json", "as_json", is_flag=True, help="The note as JSON, with its commit.")
@click.option("--patch", "-p", "patch", is_flag=True,
              help="Then the patch against that previous checkpoint (with --json: as \"patch\").")
@view_options
def show_command(ident: str, worktree: str | None, as_json: bool, patch: bool, color: str | None,
                 no_pager: bool) -> None:
    """Show a checkpoint's metadata and what changed since the previous checkpoint of its work tree, whichever
    session took it (with --patch, how: git's own diff). Without ID: @, the newest checkpoint of this work tree."""
    repo, item = find_checkpoint(ident, worktree)
    if as_json:
        parent, stat = checkpoints.since_previous(repo, item)
        shown = {**item.as_json(), "parent": parent, "stat": stat}
        if patch:
            shown["patch"] = repo.git(["diff", "--no-color", parent, item.commit]).decode("utf-8", "replace")
        click.echo(json.dumps(shown, indent=2))
        return
    view = pager.choose(color, no_pager, repo.root)
    with pager.paged(view):
        parent, stat = checkpoints.since_previous(repo, item, color=view.color)  # as wide as the terminal
        for row in output.details(item, view):
            click.echo(row, color=view.color)
        click.echo("")
        click.echo(stat.rstrip("\n") or "no change since the previous checkpoint", color=view.color)
        if patch and stat.strip():
            click.echo("")
            sys.stdout.flush()  # git writes to the same stdout (the pager), after what is buffered here
            code = subprocess.call(["git", "--no-pager", "diff", view.git_color(), parent, item.commit],
                                   cwd=repo.root)
            if code not in (0, 141, -13):  # 141, -13: SIGPIPE, the pager was quit before the patch's end
                sys.exit(code)


@cli.command("diff", cls=PathsAfterDashes, context_settings=CONTEXT)
@click.argument("ident", metavar="ID")
@click.argument("ident2", metavar="[ID2]", required=False)
@click.option("--stat", "stat", is_flag=True, help="Only a diffstat.")
@click.option("--name-status", "name_status", is_flag=True, help="Only names and status.")
@worktree_option
@view_options
def diff_command(ident: str, ident2: str | None, stat: bool, name_status: bool, worktree: str | None,
                 color: str | None, no_pager: bool) -> None:
    """Diff a checkpoint against the working tree, or two checkpoints (git's own diff, its pager and colours).

    Paths after -- limit it, as git diff's pathspecs: relative to the current directory, globs and
    :(top) and other magic as in git.
    """
    from ...store import snapshot

    repo = Repo.discover()
    items = checkpoints.load_all(repo)
    where = worktree_of(repo, items, worktree)
    old = checkpoints.lookup(repo, ident, items, where).commit
    new: str
    if ident2:
        new = checkpoints.lookup(repo, ident2, items, where).commit
    else:
        new = snapshot.current_tree(repo, config.for_repo(repo)["max_file_size"])
    args = ["git"] + (["--no-pager"] if no_pager else []) + ["diff"] + ([f"--color={color}"] if color else [])
    args += (["--stat"] if stat else []) + (["--name-status"] if name_status else [])
    code = subprocess.call(args + [old, new, "--", *paths_after_dashes()], cwd=repo.pathspec_base(os.getcwd()))
    sys.exit(128 - code if code < 0 else code)  # killed by a signal (SIGPIPE: `| head`): as a shell reports git's


@cli.command("tag", context_settings=CONTEXT)
@click.argument("ident", metavar="ID")
@click.argument("names", metavar="[NAME]...", nargs=-1)
@click.option("-d", "--delete", "delete", is_flag=True, help="Remove these tags instead of adding them.")
@worktree_option
def tag_command(ident: str, names: tuple[str, ...], delete: bool, worktree: str | None) -> None:
    """Add tags to checkpoint ID after the fact (-d: remove them); without NAME, print its tags.

    Tags live in the checkpoint's note; `list --tag NAME` finds them.
    """
    from ...ops import tags

    repo, item = find_checkpoint(ident, worktree)
    if not names:
        if delete:
            raise click.UsageError("-d needs the tags to remove")
        for name in item.note.tags:
            click.echo(name)
        return
    item = (tags.remove if delete else tags.add)(repo, item, names)
    shown = " ".join(item.note.tags) or "(none)"
    click.echo(f"#{item.seq} tags: {shown}")


@cli.command("files", context_settings=CONTEXT)
@click.argument("ident", metavar="ID")
@click.option("--all", "all_files", is_flag=True, help="Every file in the checkpoint.")
@worktree_option
def files_command(ident: str, all_files: bool, worktree: str | None) -> None:
    """The paths a checkpoint changed since the previous checkpoint of its work tree (with --all: every file in
    it)."""
    repo, item = find_checkpoint(ident, worktree)
    if all_files:
        out = repo.git(["ls-tree", "-r", "-z", "--name-only", "--full-tree", item.commit])
        names = [os.fsdecode(p) for p in out.split(b"\0") if p]
    else:
        names = list(item.note.paths)
    for name in names:
        click.echo(name)


@cli.command("cat", context_settings=CONTEXT)
@click.argument("ident", metavar="ID")
@click.argument("path")
@worktree_option
def cat_command(ident: str, path: str, worktree: str | None) -> None:
    """Print one file as checkpoint ID holds it: the bytes `undo ID --only PATH` would write now.

    PATH is relative to the current directory, as in git. git's filters apply as on a restore (eol
    attributes, clean/smudge filters such as git-lfs, working-tree-encoding, core.autocrlf), with the
    checkpoint's own .gitattributes. A symbolic link prints its target.
    """
    from ...ops import cat

    repo, item = find_checkpoint(ident, worktree)
    rel = repo.relpath(path)
    with pager.piped():
        cat.cat(repo, item, rel)


@cli.command("blame", context_settings=CONTEXT)
@click.argument("path")
@click.option("--json", "as_json", is_flag=True, help="A JSON array, one object per line.")
def blame_command(path: str, as_json: bool) -> None:
    """Who put each line of PATH there: an agent (which turn, prompt and tool), outside, or base.

    Built on git's own blame over this work tree's checkpoints, oldest first, across sessions. Lines
    changed since the newest checkpoint are an agent's while a turn is running, else from outside.
    Committed lines carry their commit (--json: "commit"); where the checkpoints do not know their
    author, the commit's authorship note (install --git-hooks) says: agent or person.
    """
    import time

    from ...ops import blame

    repo = Repo.discover()
    result = blame.blame(repo, repo.relpath(path), time.time())
    if as_json:
        click.echo(json.dumps([line.to_json() for line in result.lines], indent=2))
    else:
        for row in output.blame(result.lines):
            click.echo(row)
    if result.warning:
        click.echo(f"warning: {result.warning}", err=True)


@cli.command("trace", cls=PathsAfterDashes, context_settings=CONTEXT)
@click.argument("revs", metavar="[REV]...", nargs=-1)
@click.option("--uncommitted", "uncommitted", is_flag=True,
              help="Also the work tree's record (its uncommitted lines) after the commits' (alone without REV).")
def trace_command(revs: tuple[str, ...], uncommitted: bool) -> None:
    """Agent Trace records (agent-trace.dev, 0.1.0) of who wrote which lines, one JSON object per line.

    Each commit REV names (a range walks as git log does: main~3..main) gets the record of its
    authorship note; a commit without one gets none, and a line on stderr says so. Without REV,
    the work tree's record: the lines that differ from HEAD, told by blame over the checkpoints.
    Paths after -- (relative to the current directory) limit the files.
    """
    import time

    from ...ops import trace

    repo = Repo.discover()
    paths = [repo.relpath(p) for p in paths_after_dashes()]
    for found in trace.trace(repo, revs, paths, uncommitted, time.time()):
        if found.record is not None:
            click.echo(json.dumps(found.record, separators=(",", ":")))
        elif found.why:
            click.echo(f"warning: {found.why}", err=True)
