"""The `git-rewind` entry point: `snap` is served without importing click, everything else by cli.py."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    """Dispatch; errors become one line on stderr and an exit code (2: not a repository)."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["snap"]:
        from . import snapcmd

        options = snapcmd.parse(args[1:])
        if options is not None:
            from .errors import RewindError

            try:
                sys.exit(snapcmd.run(options))
            except RewindError as exc:
                print(f"error: {exc}", file=sys.stderr)
                sys.exit(exc.exit_code)
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):
        from . import hook

        sys.exit(hook.main(args[1:]))
    from .cli import main as click_main

    click_main(args)


if __name__ == "__main__":
    main()
