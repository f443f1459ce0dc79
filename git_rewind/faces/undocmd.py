"""`git rewind undo` in its plain scripted form, without click.

Importing click costs ~40 ms, a tenth of a whole restore of one file. `parse` reads
`undo [ID] [--code] --yes` (`-y`): nothing to preview and nothing to ask, so no click is needed.
Every other form (a terminal that is asked, --dry-run, --only, --full, help, errors) goes to
cli.py's click command; both run it as one request.Request and print its Report's lines.
"""

from __future__ import annotations

import sys


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
    """Rewind this work tree's files to checkpoint IDENT (default: what a bare undo restores, undo.bare_target),
    as `git rewind undo ID --yes` through click does; print the result; the exit code."""
    import os
    import time

    from ..base.repo import Repo
    from ..ops import undo
    from ..ops.request import Request
    from ..store import checkpoints

    try:
        repo = Repo.find(os.getcwd())  # no process for the plain layouts (as snap and hooks); else git is asked
        items = checkpoints.load_all(repo)
        why = None
        if ident is not None:
            target = checkpoints.lookup(repo, ident, items, repo.worktree)
        else:
            bare = undo.bare_target(repo, items, repo.worktree, time.time())
            target, why = bare.target, bare.why
        with Request.undo(repo, target, "code", cwd=os.getcwd(), items=items, why=why) as asked:
            report = asked.run()
    except KeyboardInterrupt:  # as click says it
        echo("", err=True)
        echo("aborted", err=True)
        return 1
    for line, err in report.lines:
        echo(line, err=err)
    return 0


def echo(text: str, err: bool = False) -> None:
    """One line on stdout (or stderr), flushed at once as click.echo does: the two streams stay in order."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()
