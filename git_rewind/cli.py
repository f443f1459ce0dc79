"""The `git rewind` commands: parse, call the library, print. Nothing else lives here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import click

from . import __version__, agents, checkpoints, config, output, pager, snapcmd
from .errors import RewindError
from .repo import Repo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .request import Report, Request
    from .settingsfile import Change, CommandChange

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _refuse_pager(_ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        pager.refuse()


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, prog_name="git-rewind")
@click.option("--no-pager", is_flag=True, expose_value=False, is_eager=True, callback=_refuse_pager,
              help="Never page the output (as git --no-pager).")
def cli() -> None:
    """Checkpoints of your working tree, on git, that any coding agent can rewind to.

    A checkpoint is a commit on refs/rewind/<session> with its metadata in a JSON note
    (refs/notes/rewind); your index, HEAD, branches and stash are never touched.
    Ids: a sequence number (42), @ or latest, @~N, or a commit id. See `man git-rewind`.
    """


def _snap_command() -> Callable[..., None]:
    def snap(**options: Any) -> None:
        """Checkpoint the whole working tree (tracked + untracked, not ignored)."""
        sys.exit(snapcmd.run(options))

    command: Callable[..., None] = snap
    for option in reversed(snapcmd.OPTIONS):
        if option.takes_value:
            command = click.option(*option.flags, option.dest, multiple=option.multiple,
                                   metavar="P" if option.multiple else "TEXT", help=option.help)(command)
        else:
            command = click.option(*option.flags, option.dest, is_flag=True, help=option.help)(command)
    return command


cli.command("snap", context_settings=CONTEXT)(_snap_command())


def _worktree_option(function: Callable[..., None]) -> Callable[..., None]:
    return click.option("--worktree", "worktree", metavar="NAME",
                        help="Another work tree's checkpoints: a linked work tree's name (as under "
                             ".git/worktrees/), its path, or main-worktree. Default: this work tree.")(function)


class _PathsAfterDashes(click.Command):
    """A command whose paths come after `--`, as git's `-- <path>...`, whatever optional arguments come before
    (click would give the first of them to an optional ID). The command reads them with `_paths()`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            args, ctx.meta["paths"] = args[:at], tuple(args[at + 1:])
        return super().parse_args(ctx, args)

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return super().collect_usage_pieces(ctx) + ["[-- PATH...]"]


def _paths() -> tuple[str, ...]:
    """The paths after `--` (_PathsAfterDashes)."""
    paths: tuple[str, ...] = click.get_current_context().meta.get("paths", ())
    return paths


def _patch_option(function: Callable[..., None]) -> Callable[..., None]:
    return click.option("--patch", "-p", "patch", is_flag=True,
                        help="Choose hunk by hunk with git's own prompts, as `git restore -p` (needs a terminal); "
                             "paths after -- narrow it, as --only does.")(function)


def _view_options(function: Callable[..., None]) -> Callable[..., None]:
    """--color[=WHEN] and --no-pager, as git's own commands take them."""
    function = click.option("--no-pager", "no_pager", is_flag=True,
                            help="Do not page the output (default: through git's pager on a terminal).")(function)
    return click.option("--color", "color", type=click.Choice(pager.CHOICES), is_flag=False,
                        flag_value="always", metavar="[=WHEN]",
                        help="Colour: always (--color alone), never, or auto (default: as color.ui says, on a "
                             "terminal or in the pager).")(function)


def _worktree(repo: Repo, items: list[checkpoints.Checkpoint], name: str | None) -> str | None:
    """The work tree `--worktree NAME` names, this one without it."""
    return repo.worktree if name is None else checkpoints.worktree_named(repo, items, name)


@cli.command("list", context_settings=CONTEXT)
@click.option("--session", help="Only this session (default: $GIT_REWIND_SESSION if set, else all).")
@click.option("--all", "all_sessions", is_flag=True, help="Every session.")
@_worktree_option
@click.option("--all-worktrees", "all_worktrees", is_flag=True, help="Every work tree's checkpoints.")
@click.option("-n", "limit", type=click.IntRange(min=0), default=20, show_default=True,
              help="How many, newest first (0: all).")
@click.option("--grep", "grep", multiple=True, metavar="TEXT",
              help="Only checkpoints with TEXT in their message, prompt or summary (any case; repeatable: any).")
@click.option("--path", "paths", multiple=True, metavar="PATHSPEC",
              help="Only checkpoints that changed what these git pathspecs match (relative to the current directory).")
@click.option("--tag", "tags", multiple=True, metavar="TAG", help="Only checkpoints with this tag (repeatable: all).")
@click.option("--agent", "agent", metavar="NAME", help="Only checkpoints this agent took (`manual`: taken by hand).")
@click.option("--since", "since", metavar="DATE",
              help='Only checkpoints at or after DATE (git\'s date syntax: "2 hours ago", "yesterday", ISO).')
@click.option("--until", "until", metavar="DATE", help="Only checkpoints at or before DATE (git's date syntax).")
@click.option("--remote", "remote", metavar="REMOTE",
              help="The checkpoints fetched from REMOTE (`git rewind fetch`), with who made them, instead.")
@click.option("--json", "as_json", is_flag=True,
              help="A JSON array of notes, each with its commit and the id every command accepts.")
@_view_options
def list_command(session: str | None, all_sessions: bool, worktree: str | None, all_worktrees: bool, limit: int,
                 grep: tuple[str, ...], paths: tuple[str, ...], tags: tuple[str, ...], agent: str | None,
                 since: str | None, until: str | None, remote: str | None, as_json: bool, color: str | None,
                 no_pager: bool) -> None:
    """List this work tree's checkpoints, newest first; the filters narrow it (all must hold)."""
    from . import search

    if session and all_sessions:
        raise click.UsageError("--session and --all exclude each other")
    if worktree and all_worktrees:
        raise click.UsageError("--worktree and --all-worktrees exclude each other")
    if remote and (worktree or all_worktrees):
        raise click.UsageError("--remote lists what was fetched, which belongs to no work tree here")
    repo = Repo.discover()
    if remote:
        from . import sync

        items = sync.fetched_from(repo, remote)
    else:
        items = checkpoints.load_all(repo)
    if not all_worktrees and not remote:
        items = checkpoints.of_worktree(items, _worktree(repo, items, worktree))
    scope = None if all_sessions else (session or os.environ.get("GIT_REWIND_SESSION"))
    query = search.Query(grep, paths, tags, agent, scope, since, until, cwd=os.getcwd())
    items, more = checkpoints.newest_first(search.select(repo, items, query), limit=limit)
    if as_json:
        click.echo(json.dumps([c.as_json() for c in items], indent=2))
        return
    if not items:
        click.echo("no checkpoints" + (f" fetched from {remote}" if remote else "")
                   + (f" matching {query.describe()}" if query else ""))
        return
    view = pager.choose(color, no_pager, repo.root)
    with pager.paged(view):
        for row in output.table(items, worktree=all_worktrees, width=view.width, view=view, remote=bool(remote)):
            click.echo(row, color=view.color)  # click would drop git's colours when not on a terminal
        if more:
            click.echo(f"({more} older; -n 0 shows all)")


def _checkpoint(ident: str, worktree: str | None = None) -> tuple[Repo, checkpoints.Checkpoint]:
    """The repository here and its checkpoint IDENT (in the work tree `--worktree` names)."""
    repo = Repo.discover()
    items = checkpoints.load_all(repo)
    return repo, checkpoints.lookup(repo, ident, items, _worktree(repo, items, worktree))


@cli.command("show", context_settings=CONTEXT)
@click.argument("ident", metavar="ID")
@_worktree_option
@click.option("--json", "as_json", is_flag=True, help="The note as JSON, with its commit.")
@click.option("--patch", "-p", "patch", is_flag=True,
              help="Then the patch against that previous checkpoint (with --json: as \"patch\").")
@_view_options
def show_command(ident: str, worktree: str | None, as_json: bool, patch: bool, color: str | None,
                 no_pager: bool) -> None:
    """Show a checkpoint's metadata and what changed since the previous one of its session (with --patch,
    how: git's own diff)."""
    repo, item = _checkpoint(ident, worktree)
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


@cli.command("diff", cls=_PathsAfterDashes, context_settings=CONTEXT)
@click.argument("ident", metavar="ID")
@click.argument("ident2", metavar="[ID2]", required=False)
@click.option("--stat", "stat", is_flag=True, help="Only a diffstat.")
@click.option("--name-status", "name_status", is_flag=True, help="Only names and status.")
@_worktree_option
@_view_options
def diff_command(ident: str, ident2: str | None, stat: bool, name_status: bool, worktree: str | None,
                 color: str | None, no_pager: bool) -> None:
    """Diff a checkpoint against the working tree, or two checkpoints (git's own diff, its pager and colours).

    Paths after -- limit it, as git diff's pathspecs: relative to the current directory, globs and
    :(top) and other magic as in git.
    """
    from . import snapshot

    repo = Repo.discover()
    items = checkpoints.load_all(repo)
    where = _worktree(repo, items, worktree)
    old = checkpoints.lookup(repo, ident, items, where).commit
    new: str
    if ident2:
        new = checkpoints.lookup(repo, ident2, items, where).commit
    else:
        new = snapshot.current_tree(repo, config.for_repo(repo)["max_file_size"])
    args = ["git"] + (["--no-pager"] if no_pager else []) + ["diff"] + ([f"--color={color}"] if color else [])
    args += (["--stat"] if stat else []) + (["--name-status"] if name_status else [])
    code = subprocess.call(args + [old, new, "--", *_paths()], cwd=repo.pathspec_base(os.getcwd()))
    sys.exit(128 - code if code < 0 else code)  # killed by a signal (SIGPIPE: `| head`): as a shell reports git's


@cli.command("tag", context_settings=CONTEXT)
@click.argument("ident", metavar="ID")
@click.argument("names", metavar="[NAME]...", nargs=-1)
@click.option("-d", "--delete", "delete", is_flag=True, help="Remove these tags instead of adding them.")
@_worktree_option
def tag_command(ident: str, names: tuple[str, ...], delete: bool, worktree: str | None) -> None:
    """Add tags to checkpoint ID after the fact (-d: remove them); without NAME, print its tags.

    Tags live in the checkpoint's note; `list --tag NAME` finds them.
    """
    from . import tags

    repo, item = _checkpoint(ident, worktree)
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
@_worktree_option
def files_command(ident: str, all_files: bool, worktree: str | None) -> None:
    """The paths a checkpoint recorded as changed (with --all: every file in it)."""
    repo, item = _checkpoint(ident, worktree)
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
@_worktree_option
def cat_command(ident: str, path: str, worktree: str | None) -> None:
    """Print one file as checkpoint ID holds it: the bytes `undo ID --only PATH` would write now.

    PATH is relative to the current directory, as in git. git's filters apply as on a restore (eol
    attributes, clean/smudge filters such as git-lfs, working-tree-encoding, core.autocrlf), with the
    checkpoint's own .gitattributes. A symbolic link prints its target.
    """
    from . import cat

    repo, item = _checkpoint(ident, worktree)
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
    """
    import time

    from . import blame

    repo = Repo.discover()
    result = blame.blame(repo, repo.relpath(path), time.time())
    if as_json:
        click.echo(json.dumps([line.to_json() for line in result.lines], indent=2))
    else:
        for row in output.blame(result.lines):
            click.echo(row)
    if result.warning:
        click.echo(f"warning: {result.warning}", err=True)


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


def _report(report: Report, as_json: bool, warned: bool) -> None:
    """A rewind's result: its lines (the warnings once: the preview showed them), or its JSON."""
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
        return
    for line, err in report.lines:
        if not (warned and err and line.startswith("warning: ") and report.result is not None
                and report.result.outcome is not None and line[9:] in report.data["warnings"]):
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

    from . import turns

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


@cli.command("undo", cls=_PathsAfterDashes, context_settings=CONTEXT)
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
@_patch_option
@_worktree_option
@_json_option
def undo_command(ident: str | None, mode: str, fork: bool, dry_run: bool, yes: bool, only: tuple[str, ...],
                 agent_only: bool, merge: bool, patch: bool, worktree: str | None, as_json: bool) -> None:
    """Rewind the code, the conversation or both to a checkpoint, after a safety checkpoint.

    Without ID: the newest checkpoint of this work tree that is not a safety checkpoint (a second
    plain undo does not flip back; redo does that). @ is the newest checkpoint of all. Ids resolve
    among this work tree's checkpoints; --worktree NAME picks from another's (restored here).

    Every file written or removed is read back afterwards: the result line says "(verified)", and a
    restore that did not fully happen lists the paths and exits with status 4. Warns first when the
    checkpoint was taken on another branch or HEAD, and names ignored files changed since it (they
    are left as they are).

    With --patch, each change comes hunk by hunk through git's own prompts ([y,n,q,a,d,s,e,?], as
    `git restore -p`), binary files whole first; with --full the conversation is rewound after.
    """
    from .request import Request

    paths = _paths()
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
    where = _worktree(repo, items, worktree)
    target = (checkpoints.lookup(repo, ident, items, where) if ident is not None
              else checkpoints.latest_work(repo, where, items))
    with Request.undo(repo, target, mode, agent_only=agent_only, fork=fork, only=list(only), merge=merge,
                      cwd=os.getcwd(), patch=patch, paths=list(paths), items=items) as asked:
        ask_if_agents_at_work(repo, yes, dry_run)
        go, warned = True, False
        if not patch or asked.described is not None:  # with --patch the hunks are the preview: only a conversation asks
            go, warned = _confirm(asked, dry_run, yes, as_json)
        if go:
            _report(asked.run(), as_json, warned)


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
    from . import patch as hunks  # tempfile and shutil: only a patch session pays for them

    hunks.need_terminal()


@cli.command("revert", cls=_PathsAfterDashes, context_settings=CONTEXT)
@click.argument("ident", metavar="ID")
@click.argument("ident2", metavar="[ID2]", required=False)
@click.option("--merge", "merge", is_flag=True,
              help="On a conflict write the clean parts and conflict markers instead of nothing.")
@click.option("--dry-run", is_flag=True, help="List what would be written, removed and merged; change nothing.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--only", "only", multiple=True, metavar="PATHSPEC",
              help="Take back only in what these git pathspecs match (relative to the current directory).")
@_patch_option
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
    from .request import Request

    paths = _paths()
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
            _report(asked.run(), as_json, warned)


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
    from .request import Request

    _check_json(as_json, dry_run, yes)
    repo = Repo.discover()
    with Request.redo(repo) as asked:
        ask_if_agents_at_work(repo, yes, dry_run)
        go, warned = _confirm(asked, dry_run, yes, as_json)
        if go:
            _report(asked.run(), as_json, warned)


def _seqs(items: list[checkpoints.Checkpoint]) -> str:
    """`#1..#3, #5`: the sequence numbers of ITEMS, runs shortened."""
    return checkpoints.seq_runs(sorted(c.seq for c in items))


def _size(value: str) -> int:
    try:
        return config.parse_size(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@cli.command("push", context_settings=CONTEXT)
@click.argument("remote", required=False, metavar="[REMOTE]")
@click.option("--session", help="Only this session's checkpoints.")
@click.option("--all", "every", is_flag=True, help="Every session's (default: the sessions of this work tree).")
@click.option("--with-conversation", "conversation", is_flag=True, default=None,
              help="Also the sessions' transcripts, redacted [config sync_conversation: false].")
@click.option("--allow-secrets", "allow_secrets", is_flag=True,
              help="Keep files that look like secrets (.env, keys) in the copies; text is still redacted.")
@click.option("--prune", is_flag=True, help="Replace this machine's copy on the remote (after a purge).")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
def push_command(remote: str | None, session: str | None, every: bool, conversation: bool | None,
                 allow_secrets: bool, prune: bool, quiet: bool) -> None:
    """Share this machine's checkpoints through REMOTE (a remote's name or a URL; default: sync_remote), as a
    redacted copy under refs/notes/rewind-share/<sync_name>; never branches, tags or local checkpoints."""
    from . import sync

    if session and every:
        raise click.UsageError("--session and --all exclude each other")
    repo = Repo.discover()
    done = sync.push(repo, remote, session=session, every=every, conversation=conversation,
                     allow_secrets=allow_secrets, prune=prune)
    if not quiet:
        for line in sync.push_lines(done):
            click.echo(line)


@cli.command("fetch", context_settings=CONTEXT)
@click.argument("remote", required=False, metavar="[REMOTE]")
def fetch_command(remote: str | None) -> None:
    """Bring the checkpoints other machines pushed to REMOTE (default: sync_remote); `list --remote REMOTE`
    shows them and their ids, `<remote>/<machine>/<seq>`, work with show, diff, files, blame and undo."""
    from . import sync

    repo = Repo.discover()
    for line in sync.fetch_lines(sync.fetch(repo, remote)):
        click.echo(line)


@cli.command("gc", context_settings=CONTEXT)
@click.option("--keep", type=click.IntRange(min=0), help="Keep the newest N checkpoints [config gc_keep: 1000].")
@click.option("--older-than", "older_than", type=click.IntRange(min=0),
              help="Drop checkpoints older than DAYS [config gc_older_than_days: 30].")
@click.option("--max-size", "max_size", metavar="SIZE", type=_size,
              help="Then drop the oldest until the store takes at most SIZE, e.g. 500M; 0: no cap "
                   "[config max_store_size: 1G].")
@click.option("--dry-run", is_flag=True, help="Say what would be dropped; drop nothing.")
@click.option("--remote", "remote", metavar="REMOTE",
              help="Instead, drop every checkpoint fetched from REMOTE (never dropped otherwise).")
def gc_command(keep: int | None, older_than: int | None, max_size: int | None, dry_run: bool,
               remote: str | None) -> None:
    """Drop old checkpoints and their notes so that `git gc` can prune them."""
    from . import gc
    from .storage import human

    repo = Repo.discover()
    if remote:
        from . import sync

        machines = sync.forget(repo, remote, dry_run=dry_run)
        verb = "would drop" if dry_run else "dropped"
        click.echo(f"{verb} what was fetched from {remote}: " + (", ".join(machines) if machines else "nothing"))
        return
    settings = config.for_repo(repo)
    keep = settings["gc_keep"] if keep is None else keep
    days = settings["gc_older_than_days"] if older_than is None else older_than
    max_size = settings["max_store_size"] if max_size is None else max_size
    result = gc.collect(repo, keep, days, dry_run=dry_run)
    capped = gc.cap(repo, max_size, dry_run=dry_run, dropping=result.dropped if dry_run else None)
    verb = "would drop" if dry_run else "dropped"
    if not result.dropped and not capped.dropped:
        click.echo(f"nothing to drop ({len(result.kept)} checkpoints kept)")
    if result.dropped:
        click.echo(f"{verb} {len(result.dropped)} checkpoints ({_seqs(result.dropped)}), kept {len(result.kept)}")
        for session in result.sessions_removed:
            click.echo(f"{verb} session {session}")
    if capped.dropped:
        click.echo(f"{verb} {len(capped.dropped)} {'more ' if result.dropped else ''}checkpoints "
                   f"({_seqs(capped.dropped)}) for max_store_size {human(max_size)}, kept {capped.kept}")
    size = f"{'about ' if dry_run and capped.dropped else ''}{human(capped.after)}"
    if capped.unmet:
        click.echo(f"the store {'would still take' if dry_run else 'still takes'} {size}, over max_store_size "
                   f"{human(max_size)}: only what gc must keep is left (each work tree's newest checkpoint and "
                   "redo stack; git rewind status)")
    else:
        now = " now" if dry_run and not capped.dropped else ""  # before what the dry run would drop
        click.echo(f"the store {'would take' if dry_run and not now else 'takes'} {size}{now}"
                   + (f" of max_store_size {human(max_size)}" if max_size else " (no max_store_size)"))
    if not dry_run and (result.dropped or capped.dropped):
        click.echo("their objects go at your next `git gc` (now: git gc --prune=now)")


@cli.command("purge", context_settings=CONTEXT)
@click.option("--path", "paths", multiple=True, metavar="PATH",
              help="Remove this file or directory (relative to the current directory) from every checkpoint "
                   "(repeatable).")
@click.option("--text", "texts", multiple=True, metavar="TEXT",
              help="Replace TEXT by [PURGED] in every file, message, note and transcript backup (repeatable).")
@click.option("--dry-run", is_flag=True, help="Say which checkpoints would change; change nothing.")
def purge_command(paths: tuple[str, ...], texts: tuple[str, ...], dry_run: bool) -> None:
    """Remove a captured secret from every local checkpoint, then delete the old objects for good.

    Checkpoints keep their seqs, sessions, dates and every other byte; objects your own branches, tags,
    reflogs or index still reach stay, and are named.
    """
    from . import purge

    if not paths and not texts:
        raise click.UsageError("give --path PATH or --text TEXT (or both)")
    repo = Repo.discover()
    base = repo.pathspec_base(os.getcwd())
    relative = []
    for path in paths:
        rel = repo.relpath(path, base)
        if not rel:
            raise RewindError(f"refusing to purge the whole work tree: {path}")
        relative.append(rel)
    result = purge.run(repo, relative, list(texts), dry_run=dry_run)
    for line in purge.report(result, relative, list(texts)):
        click.echo(line)


class _WatchUsageError(click.UsageError):
    exit_code = 125


class _WatchCommand(click.Command):
    """`watch`'s usage errors exit 125, as its own failures before the program starts do (as env's)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            raise _WatchUsageError(exc.message, exc.ctx) from None


@cli.command("watch", cls=_WatchCommand, context_settings={**CONTEXT, "allow_interspersed_args": False})
@click.option("--session", metavar="NAME", help="The session to checkpoint into (default: watch-<program>-<time>).")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="[-- COMMAND...]")
def watch_command(session: str | None, command: tuple[str, ...]) -> None:
    """Checkpoint the tree whenever it settles while COMMAND runs (an agent with no hooks).

    A checkpoint at the start, one each time the files have been quiet for watch_settle_ms,
    and one when COMMAND exits; its terminal, signals and exit status pass through. Without
    COMMAND, watch until Ctrl-C. Exit 125: watch failed, 126: COMMAND cannot run, 127: not found.
    """
    from . import watch

    sys.exit(watch.run(list(command), session))


@cli.command("web", context_settings=CONTEXT)
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="The port on 127.0.0.1 (0: a free one).")
@click.option("--no-open", "no_open", is_flag=True, help="Print the URL only; do not open a browser.")
@click.option("--read-only", "read_only", is_flag=True, help="Browse only: the page offers no undo, revert or tags.")
def web_command(port: int, no_open: bool, read_only: bool) -> None:
    """Browse this work tree's checkpoints in a local web page: timeline, diffs, undo with a preview.

    Listens on 127.0.0.1 only; the first line printed is the URL with this run's secret token.
    Ctrl-C stops it.
    """
    from . import web

    sys.exit(web.serve(Repo.discover(), port, not no_open, read_only))


AGENT_CHOICE = click.Choice(list(agents.NAMES))


@cli.command("mcp", context_settings=CONTEXT)
@click.option("--repo", "repo_path", metavar="PATH",
              help="The repository to serve (default: $GIT_REWIND_REPO, else the current directory).")
def mcp_command(repo_path: str | None) -> None:
    """Serve the checkpoint tools over the Model Context Protocol on stdin/stdout."""
    from . import mcp

    mcp.serve(repo_path)


@cli.command("hook", context_settings=CONTEXT)
@click.option("--agent", type=AGENT_CHOICE, help="The agent calling (default: detected from its environment).")
def hook_command(agent: str | None) -> None:
    """Read one agent hook payload on stdin and checkpoint if the tier says so.

    Agents run this from their hooks (see `git rewind install`). It never fails the agent:
    errors exit 0 with one line on stderr; decisions go to .git/rewind/hook.log.
    """
    from . import hook

    sys.exit(hook.main(["--agent", agent] if agent else []))


def _scope_root(scope: str) -> str | None:
    if scope == "user":
        return None
    return Repo.discover().root


@cli.command("install", context_settings=CONTEXT)
@click.option("--agent", type=AGENT_CHOICE, required=True, help="Which agent's hooks to write.")
@click.option("--scope", type=click.Choice(["user", "project", "local"]), default="user", show_default=True,
              help="user: every project; project: the agent's directory in this repository (.claude/, "
                   ".factory/, .gemini/, .codex/, .opencode/, .kilo/, .cursor/; shared); local: "
                   ".claude/settings.local.json (Claude Code only; yours only).")
@click.option("--mcp", "mcp_server", is_flag=True,
              help="Add the MCP server (git rewind mcp) to the agent's MCP configuration instead of the hooks.")
def install_command(agent: str, scope: str, mcp_server: bool) -> None:
    """Write git-rewind's hook entries (or, with --mcp, its MCP server) into the agent's settings."""
    from . import install

    if mcp_server:
        change = install.install_mcp(agent, scope, _scope_root(scope))
        if not change.changed:
            click.echo(f"already installed: {change.path}")
            return
        if change.backup:
            click.echo(f"backed up {change.path} to {change.backup}")
        click.echo(f"installed the {install.MCP_NAME} MCP server for {agent} ({scope}) in {change.path}")
        return
    change = install.install(agent, scope, _scope_root(scope))
    if not change.changed:
        click.echo(f"already installed: {change.path}")
    else:
        if change.backup:
            click.echo(f"backed up {change.path} to {change.backup}")
        click.echo(f"installed {agent} hooks ({scope}) in {change.path}")
        click.echo(f"hook command: {install.hook_command(agent, scope=scope)}")
        if scope in install.SHARED_SCOPES:
            click.echo("(a project's files are shared: the hooks run the git-rewind on PATH, and exit 0 quietly "
                       "where there is none)")
    for note in change.notes:
        click.echo(note)
    _echo_commands(change.commands)


def _echo_commands(changes: list[CommandChange]) -> None:
    """One line per slash command file install or uninstall changed (or refused to)."""
    for c in changes:
        name = "/" + os.path.splitext(os.path.basename(c.path))[0]
        if c.action == "installed":
            if c.backup:
                click.echo(f"backed up {c.path} to {c.backup}")
            click.echo(f"installed command {name}: {c.path}")
        elif c.action == "removed":
            click.echo(f"removed command {name}: {c.path}")
        elif c.action == "restored":
            click.echo(f"restored your {c.path} from {c.backup}")
        elif c.action == "kept":
            click.echo(f"kept {c.path}: changed since git-rewind installed it, so {name} stays")


@cli.command("uninstall", context_settings=CONTEXT)
@click.option("--agent", type=AGENT_CHOICE, help="Whose hooks to remove.")
@click.option("--scope", type=click.Choice(["user", "project", "local"]), default="user", show_default=True,
              help="Which settings file (as for install).")
@click.option("--mcp", "mcp_server", is_flag=True, help="Remove the MCP server entry instead of the hooks.")
@click.option("--everything", is_flag=True,
              help="Every agent, every scope found (user; project and local in this work tree), hooks and MCP "
                   "entries; then say how to drop the store.")
def uninstall_command(agent: str | None, scope: str, mcp_server: bool, everything: bool) -> None:
    """Remove exactly git-rewind's own hook entries (or, with --mcp, its MCP server) from the agent's settings."""
    from . import install

    if everything:
        if agent or mcp_server or scope != "user":
            raise click.UsageError("--everything takes no --agent, --scope or --mcp")
        _uninstall_everything()
        return
    if agent is None:
        raise click.UsageError("name the agent (--agent AGENT), or give --everything")
    if mcp_server:
        _echo_removal(install.uninstall_mcp(agent, scope, _scope_root(scope)),
                      f"the {install.MCP_NAME} MCP server ({scope})")
        return
    change = install.uninstall(agent, scope, _scope_root(scope))
    _echo_removal(change, f"{agent} hooks ({scope})")
    for note in change.notes:
        click.echo(note)
    _echo_commands(change.commands)


def _uninstall_everything() -> None:
    """`uninstall --everything`: one line per file changed (or refused), then how to drop the store."""
    from . import gc, install

    repo = _repo_or_none()
    removals = install.uninstall_everything(repo.root if repo else None)
    for r in removals:
        what = f"{r.agent} hooks ({r.scope})" if r.kind == "hooks" else f"the {install.MCP_NAME} MCP server " \
            f"for {r.agent} ({r.scope})"
        if r.change is None:
            click.echo(f"left {what} alone: {r.error}", err=True)
            continue
        _echo_removal(r.change, what)
        for note in r.change.notes:
            click.echo(note)
        _echo_commands(r.change.commands)
    if not removals:
        click.echo("no hooks or MCP entries of git-rewind found" + ("" if repo else " (user scope; run it in a "
                                                                       "project for its project and local files)"))
    where = "this repository" if repo else "a repository (run these in each one, at its top)"
    click.echo(f"\nThe checkpoints stay in {where}; to drop them all (every checkpoint, note and private file):")
    for line in gc.drop_store_commands(repo):
        click.echo(f"  {line}")
    if any(r.change is None for r in removals):
        sys.exit(1)


def _repo_or_none() -> Repo | None:
    from .errors import NotARepository

    try:
        return Repo.discover()
    except NotARepository:
        return None


def _echo_removal(change: Change, what: str) -> None:
    if not change.changed:
        click.echo(f"not installed: {change.path}")
    elif change.removed:
        click.echo(f"removed {change.path} (git-rewind had created it)")
    else:
        click.echo(f"removed {what} from {change.path}")


@cli.command("status", context_settings=CONTEXT)
@click.option("-n", "limit", type=click.IntRange(min=0), default=10, show_default=True,
              help="How many recent hook decisions to show (0: all in the log).")
@click.option("--json", "as_json", is_flag=True, help="Print everything as one JSON object.")
def status_command(limit: int, as_json: bool) -> None:
    """The checkpoint tier and where it comes from, recent hook decisions, installed hooks, the store's size."""
    from . import status

    info = status.collect(limit)
    if as_json:
        click.echo(json.dumps(info.as_json(), indent=2))
        return
    if info.config_error:
        click.echo(f"config error: {info.config_error} (hooks use the defaults)")
    for key, setting in info.settings.items():
        click.echo(f"{key}: {config.format_value(setting.value, bare_string=True)}  ({setting.source})")
    click.echo("hooks installed:" if info.installed else "hooks installed: none (git rewind install --agent …)")
    for agent, scope, path in info.installed:
        click.echo(f"  {agent:<12} {scope:<8} {path}")
    for agent in info.watched:
        click.echo(f"  {agent:<12} no hooks: run it as git rewind watch -- {agent} …")
    for agent, path in info.duplicates:
        click.echo(f"warning: {agent} also loads git-rewind's hooks from {path}: every hook runs twice; remove one")
    if info.mcp_installed:
        click.echo("MCP server installed:")
    for agent, scope, path in info.mcp_installed:
        click.echo(f"  {agent:<12} {scope:<8} {path}")
    if info.repository is None:
        click.echo("not in a git repository: no decisions to show")
        return
    click.echo(f"redos available: {info.redos}" + (" (git rewind redo)" if info.redos else ""))
    if info.daemon is not None:
        click.echo(f"daemon: {_daemon_line(info.daemon)}")
    if info.store is not None:
        from .storage import human

        cap = f"max_store_size {human(info.store.max_size)}" if info.store.max_size else "no max_store_size"
        click.echo(f"store: {human(info.store.size)} ({cap})")
        warning = info.store.warning()
        if warning:
            click.echo(f"warning: {warning}")
    if info.sync is not None:
        click.echo(f"sync: {_sync_line(info.sync)}")
        if info.sync.get("error"):
            click.echo(f"warning: the last push failed: {info.sync['error']}")
    click.echo("recent hook decisions:" if info.decisions else "recent hook decisions: none yet")
    for entry in info.decisions:
        what = " ".join(str(x) for x in (entry.get("event"), entry.get("tool")) if x)
        paths = " ".join(entry.get("paths") or [])
        outcome = entry.get("action", "?")
        if entry.get("seq") is not None:
            outcome += f" #{entry['seq']}"
        where = f"{what} {paths}" if paths else what
        click.echo(f"  {entry.get('time', '')}  {where}: {outcome} ({entry.get('reason')})")


def _sync_line(info: dict[str, Any]) -> str:
    """One line on sharing: where to, as whom, automatic or not, the last push that worked."""
    from .clock import age

    remote = info.get("remote")
    if not remote:
        return f"no remote (git rewind push REMOTE, or sync_remote); this machine shares as {info.get('name')}"
    auto = "after each turn (sync_auto)" if info.get("auto") else "on git rewind push"
    last = f"last pushed {age(str(info['last_ok']))}" if info.get("last_ok") else "never pushed yet"
    return f"{remote} as {info.get('name')}, {auto}; {last}"


def _daemon_line(info: dict[str, Any]) -> str:
    """One line for the file-watcher daemon: running since when, what it watches, its memory; or why not."""
    if not info.get("running"):
        return "not running" + (f" ({info['reason']})" if info.get("reason") else "")
    memory = f", {info['memory_kib'] / 1024:.1f} MiB" if isinstance(info.get("memory_kib"), int) else ""
    return (f"running since {info.get('since')} (pid {info.get('pid')}), watching {info.get('watched')} "
            f"directories, {info.get('dirty')} paths changed since the last scan{memory}")


@cli.group("daemon", context_settings=CONTEXT)
def daemon_group() -> None:
    """The file watcher that lets checkpoints read only what changed (Linux; one per work tree)."""


@daemon_group.command("start")
def daemon_start() -> None:
    """Start this work tree's daemon in the background (it exits after daemon_idle_minutes unused)."""
    from . import daemon

    live = daemon.launch(Repo.discover())
    click.echo(f"daemon running (pid {live.get('pid')}), watching {live.get('watched')} directories")


@daemon_group.command("stop")
def daemon_stop() -> None:
    """Stop this work tree's daemon; commands scan the whole tree again until it runs."""
    from . import daemon

    click.echo("daemon stopped" if daemon.stop(Repo.discover()) else "no daemon was running")


@daemon_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print it as JSON.")
def daemon_status(as_json: bool) -> None:
    """Whether this work tree's daemon runs, since when, what it watches, its memory."""
    from . import daemon

    info = daemon.describe(Repo.discover())
    click.echo(json.dumps(info, indent=2) if as_json else f"daemon: {_daemon_line(info)}")


@daemon_group.command("run", hidden=True)
def daemon_run() -> None:
    """Serve in the foreground (what `start` runs, detached)."""
    from . import daemonserver

    sys.exit(daemonserver.run(Repo.discover()))


@cli.group("config", context_settings=CONTEXT)
def config_group() -> None:
    """Show and change settings: defaults < user file < project file < GIT_REWIND_<KEY>."""


def _root_or_none() -> str | None:
    """The work tree's root, or None outside one (only the user file and environment apply)."""
    from .errors import NotARepository

    try:
        return Repo.discover().root
    except NotARepository:
        return None


def _config_target(user: bool, project: bool) -> tuple[str, str | None]:
    """The file `config set/unset` edit (default: the project's inside a work tree) and the work tree's root."""
    from .errors import NotARepository

    if user and project:
        raise click.UsageError("--user and --project exclude each other")
    try:
        root = Repo.discover().root if project else _root_or_none()
    except NotARepository as exc:
        raise NotARepository(f"--project needs a git work tree: {exc}") from None
    if user or root is None:
        return config.user_file(), root
    return config.project_file(root), root


def _note_override(key: str, path: str, root: str | None) -> None:
    """Say so when a later layer hides what was just written."""
    try:
        setting = config.load(root)[key]
    except RewindError:
        return  # an invalid value elsewhere: the next command reports it
    source = setting.source
    if source == "environment":
        source = f"GIT_REWIND_{key.upper()}"
    elif not (root and source == config.project_file(root) and source != path):
        return
    click.echo(f"note: {key} is {config.format_value(setting.value)} here: {source} overrides it", err=True)


@config_group.command("get", context_settings=CONTEXT)
@click.argument("key")
def config_get(key: str) -> None:
    """Print KEY's effective value (lists as TOML arrays, sizes in bytes)."""
    config.check_key(key)
    settings = config.load(_root_or_none())
    click.echo(config.format_value(settings[key].value, bare_string=True))


@config_group.command("list", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="One JSON object: each key's value and source.")
def config_list(as_json: bool) -> None:
    """Every setting, its effective value and where that comes from."""
    settings = config.load(_root_or_none())
    if as_json:
        click.echo(json.dumps({k: {"value": s.value, "source": s.source} for k, s in settings.items()}, indent=2))
        return
    for key, setting in settings.items():
        click.echo(f"{key} = {config.format_value(setting.value)}  # {setting.source}")


_USER_HELP = "The user file, $XDG_CONFIG_HOME/git-rewind/config.toml (default outside a work tree)."
_PROJECT_HELP = "The project file, .git-rewind.toml at the work tree's root (default inside one)."


@config_group.command("set", context_settings={**CONTEXT, "ignore_unknown_options": True})
@click.argument("key")
@click.argument("value")
@click.option("--user", is_flag=True, help=_USER_HELP)
@click.option("--project", is_flag=True, help=_PROJECT_HELP)
def config_set(key: str, value: str, user: bool, project: bool) -> None:
    """Store KEY = VALUE in a settings file.

    VALUE is checked first; the file keeps its comments, layout and other keys.
    Lists: comma-separated, or a TOML array such as '["a", "b"]'.
    """
    path, root = _config_target(user, project)
    stored = config.set_value(path, key, value)
    click.echo(f"{key} = {config.format_value(stored)} in {path}")
    _note_override(key, path, root)


@config_group.command("unset", context_settings=CONTEXT)
@click.argument("key")
@click.option("--user", is_flag=True, help=_USER_HELP)
@click.option("--project", is_flag=True, help=_PROJECT_HELP)
def config_unset(key: str, user: bool, project: bool) -> None:
    """Remove KEY from a settings file, keeping everything else."""
    path, _ = _config_target(user, project)
    if config.unset_value(path, key):
        click.echo(f"removed {key} from {path}")
    else:
        click.echo(f"{key} is not set in {path}")


def run(argv: list[str]) -> None:
    """Run a command through click; its own errors (usage, abort) print as click prints them.

    A RewindError goes up to main.main, the one place that turns it into a line and an exit code.
    """
    try:
        cli.main(args=argv, prog_name="git rewind", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(1)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
