"""Running beside the work: `watch`, `web`, `mcp`, `hook`."""

from __future__ import annotations

import sys

import click

from ...base.repo import Repo
from .common import AGENT_CHOICE, CONTEXT, cli

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass

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
    from ...watching import watch

    sys.exit(watch.run(list(command), session))


@cli.command("web", context_settings=CONTEXT)
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="The port on 127.0.0.1 (0: a free one).")
@click.option("--no-open", "no_open", is_flag=True, help="Print the URL only; do not open a browser.")
@click.option("--read-only", "read_only", is_flag=True, help="Browse only: the page offers no undo, revert or tags.")
def web_command(port: int, no_open: bool, read_only: bool) -> None:
    """Browse this work tree's checkpoints in a local web page: timeline, diffs, undo with a preview.

    Listens on 127.0.0.1 only; the first line printed is the page's link, good for one tab (each
    use prints the next). Ctrl-C stops it.
    """
    from .. import web

    sys.exit(web.serve(Repo.discover(), port, not no_open, read_only))


@cli.command("mcp", context_settings=CONTEXT)
@click.option("--repo", "repo_path", metavar="PATH",
              help="The repository to serve (default: $GIT_REWIND_REPO, else the current directory).")
def mcp_command(repo_path: str | None) -> None:
    """Serve the checkpoint tools over the Model Context Protocol on stdin/stdout."""
    from .. import mcp

    mcp.serve(repo_path)


@cli.command("hook", context_settings=CONTEXT)
@click.option("--agent", type=AGENT_CHOICE, help="The agent calling (default: detected from its environment).")
def hook_command(agent: str | None) -> None:
    """Read one agent hook payload on stdin and checkpoint if the tier says so.

    Agents run this from their hooks (see `git rewind install`). It never fails the agent:
    errors exit 0 with one line on stderr; decisions go to .git/rewind/hook.log.
    """
    from ...hook import client

    sys.exit(client.main(["--agent", agent] if agent else [], end=True))
