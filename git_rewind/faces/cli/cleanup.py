"""Keeping the store small and clean: `gc`, `purge`."""

from __future__ import annotations

import os

import click

from ...base import config
from ...base.errors import RewindError
from ...base.note import AUTOMATIC_TAGS
from ...base.repo import Repo
from .common import CONTEXT, cli, parse_size, seq_range

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ...store.checkpoints import Checkpoint

@cli.command("gc", context_settings=CONTEXT)
@click.option("--keep", type=click.IntRange(min=0), help="Keep the newest N checkpoints [config gc_keep: 1000].")
@click.option("--older-than", "older_than", type=click.IntRange(min=0),
              help="Drop checkpoints older than DAYS [config gc_older_than_days: 30].")
@click.option("--max-size", "max_size", metavar="SIZE", type=parse_size,
              help="Then drop the oldest until the store takes at most SIZE, e.g. 500M; 0: no cap "
                   "[config max_store_size: 1G].")
@click.option("--include-tagged", "include_tagged", is_flag=True,
              help="Let --keep and --older-than drop tagged checkpoints too (kept otherwise).")
@click.option("--dry-run", is_flag=True, help="Say what would be dropped; drop nothing.")
@click.option("--remote", "remote", metavar="REMOTE",
              help="Instead, drop every checkpoint fetched from REMOTE (never dropped otherwise).")
def gc_command(keep: int | None, older_than: int | None, max_size: int | None, include_tagged: bool, dry_run: bool,
               remote: str | None) -> None:
    """Drop old checkpoints and their notes so that `git gc` can prune them.

    A checkpoint with a tag given on purpose (`git rewind tag`, `snap --tag`; not the prompt, risky, clear,
    compact and summary tags git-rewind gives by itself) is kept by --keep and --older-than unless
    --include-tagged is given; max_store_size drops such ones last, and says so.
    """
    from ...ops import gc
    from ...store.storage import human

    repo = Repo.discover()
    if remote:
        from ...sharing import sync

        machines = sync.forget(repo, remote, dry_run=dry_run)
        verb = "would drop" if dry_run else "dropped"
        click.echo(f"{verb} what was fetched from {remote}: " + (", ".join(machines) if machines else "nothing"))
        return
    settings = config.for_repo(repo)
    keep = settings["gc_keep"] if keep is None else keep
    days = settings["gc_older_than_days"] if older_than is None else older_than
    max_size = settings["max_store_size"] if max_size is None else max_size
    result = gc.collect(repo, keep, days, dry_run=dry_run, include_tagged=include_tagged)
    capped = gc.cap(repo, max_size, dry_run=dry_run, dropping=result.dropped if dry_run else None)
    verb = "would drop" if dry_run else "dropped"
    if not result.dropped and not capped.dropped:
        click.echo(f"nothing to drop ({len(result.kept)} checkpoints kept)")
    if result.dropped:
        click.echo(f"{verb} {len(result.dropped)} checkpoints ({seq_range(result.dropped)}), kept {len(result.kept)}")
        for session in result.sessions_removed:
            click.echo(f"{verb} session {session}")
    if result.tagged:
        click.echo(f"kept {len(result.tagged)} tagged checkpoint{'s' if len(result.tagged) != 1 else ''} as old as "
                   f"that ({_tagged(result.tagged)}); --include-tagged drops them")
    if capped.dropped:
        click.echo(f"{verb} {len(capped.dropped)} {'more ' if result.dropped else ''}checkpoints "
                   f"({seq_range(capped.dropped)}) for max_store_size {human(max_size)}, kept {capped.kept}")
    if capped.tagged:
        click.echo(f"{'they would include' if dry_run else 'they included'} {len(capped.tagged)} tagged "
                   f"({_tagged(capped.tagged)}): no untagged checkpoint was left to drop")
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


def _tagged(items: list[Checkpoint]) -> str:
    """`#3 good-state, #7 release`: tagged checkpoints with their tags."""
    return ", ".join(f"#{c.seq} {' '.join(t for t in c.note.tags if t not in AUTOMATIC_TAGS)}" for c in items)


@cli.command("purge", context_settings=CONTEXT)
@click.option("--path", "paths", multiple=True, metavar="PATH",
              help="Remove this file or directory (relative to the current directory) from every checkpoint "
                   "(repeatable).")
@click.option("--text", "texts", multiple=True, metavar="TEXT",
              help="Replace TEXT by [PURGED] in every file and file name, message, note and transcript backup, "
                   "and in git-rewind's files under .git/rewind (repeatable).")
@click.option("--dry-run", is_flag=True, help="Say which checkpoints would change; change nothing.")
def purge_command(paths: tuple[str, ...], texts: tuple[str, ...], dry_run: bool) -> None:
    """Remove a captured secret from every local checkpoint, then delete the old objects for good.

    Checkpoints keep their seqs, sessions, dates and every other byte; objects your own branches, tags,
    reflogs or index still reach stay, and are named.
    """
    from ...ops import purge

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
