"""Sharing through a remote: `push`, `fetch`."""

from __future__ import annotations

import click

from ...base.repo import Repo
from .common import CONTEXT, cli

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass

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
    from ...sharing import sync

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
    from ...sharing import sync

    repo = Repo.discover()
    for line in sync.fetch_lines(sync.fetch(repo, remote)):
        click.echo(line)
