"""The `git rewind` commands: parse, call the library, print. Nothing else lives here.

One module per group of commands, each registering its commands on the one click group (common.cli);
importing them here is what puts every command on it.
"""

from __future__ import annotations

import sys

import click

from . import cleanup, history, rewind, running, setup, sharing  # noqa: F401  # each registers its commands
from .common import cli

__all__ = ["cli", "run"]


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
