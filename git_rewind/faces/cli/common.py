"""What every command module of `git rewind` shares: the click group, its options and helpers."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from ... import __version__, agents
from ...base import config
from ...base.repo import Repo
from ...store import checkpoints
from .. import pager, snapcmd

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass

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


def worktree_option(function: Callable[..., None]) -> Callable[..., None]:
    return click.option("--worktree", "worktree", metavar="NAME",
                        help="Another work tree's checkpoints: a linked work tree's name (as under "
                             ".git/worktrees/), its path, or main-worktree. Default: this work tree.")(function)


class PathsAfterDashes(click.Command):
    """A command whose paths come after `--`, as git's `-- <path>...`, whatever optional arguments come before
    (click would give the first of them to an optional ID). The command reads them with `paths_after_dashes()`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            args, ctx.meta["paths"] = args[:at], tuple(args[at + 1:])
        return super().parse_args(ctx, args)

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return super().collect_usage_pieces(ctx) + ["[-- PATH...]"]


def paths_after_dashes() -> tuple[str, ...]:
    """The paths after `--` (PathsAfterDashes)."""
    paths: tuple[str, ...] = click.get_current_context().meta.get("paths", ())
    return paths


def patch_option(function: Callable[..., None]) -> Callable[..., None]:
    return click.option("--patch", "-p", "patch", is_flag=True,
                        help="Choose hunk by hunk with git's own prompts, as `git restore -p` (needs a terminal); "
                             "paths after -- narrow it, as --only does.")(function)


def view_options(function: Callable[..., None]) -> Callable[..., None]:
    """--color[=WHEN] and --no-pager, as git's own commands take them."""
    function = click.option("--no-pager", "no_pager", is_flag=True,
                            help="Do not page the output (default: through git's pager on a terminal).")(function)
    return click.option("--color", "color", type=click.Choice(pager.CHOICES), is_flag=False,
                        flag_value="always", metavar="[=WHEN]",
                        help="Colour: always (--color alone), never, or auto (default: as color.ui says, on a "
                             "terminal or in the pager).")(function)


def worktree_of(repo: Repo, items: list[checkpoints.Checkpoint], name: str | None) -> str | None:
    """The work tree `--worktree NAME` names, this one without it."""
    return repo.worktree if name is None else checkpoints.worktree_named(repo, items, name)


def find_checkpoint(ident: str, worktree: str | None = None) -> tuple[Repo, checkpoints.Checkpoint]:
    """The repository here and its checkpoint IDENT (in the work tree `--worktree` names)."""
    repo = Repo.discover()
    items = checkpoints.load_all(repo)
    return repo, checkpoints.lookup(repo, ident, items, worktree_of(repo, items, worktree))


def seq_range(items: list[checkpoints.Checkpoint]) -> str:
    """`#1..#3, #5`: the sequence numbers of ITEMS, runs shortened."""
    return checkpoints.seq_runs(sorted(c.seq for c in items))


def parse_size(value: str) -> int:
    try:
        return config.parse_size(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


AGENT_CHOICE = click.Choice(list(agents.NAMES))


def repo_or_none() -> Repo | None:
    from ...base.errors import NotARepository

    try:
        return Repo.discover()
    except NotARepository:
        return None
