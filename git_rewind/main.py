"""The `git-rewind` entry point: dispatch, and the one place an error becomes a line and an exit code.

`snap`, `hook`, `mcp`, `undo ID --yes` and `watch` are served without importing click (~40 ms, more than a
known-path checkpoint, and a delay to the start of the program `watch` runs); `hook` and `undo ID --yes`
are asked of the work tree's daemon first (hook/client.py); everything else goes through cli.py.
"""

from __future__ import annotations

import sys

# The command line's words for what the engine says would work instead (errors.py).
HINTS = {"code-only": "use --code",
         "unknown-id": "git rewind list shows the ids there are (with --remote NAME, the fetched ones)",
         "no-checkpoints": "take one with git rewind snap, or let an agent's hooks take them as it works "
                           "(git rewind install --agent NAME)",
         "merge": "add --merge to write the clean parts and conflict markers to resolve (after a safety checkpoint), "
                  "or --only PATH... to take back the other files alone; {retry}"}


def main(argv: list[str] | None = None) -> None:
    """Run a command; a RewindError becomes `error: …` on stderr and its exit code (2: not a repository)."""
    from .base.errors import RewindError

    args = sys.argv[1:] if argv is None else argv
    try:
        _dispatch(args)
    except RewindError as exc:
        print(f"error: {exc.worded(HINTS)}", file=sys.stderr)
        sys.exit(exc.exit_code)


def _dispatch(args: list[str]) -> None:
    if args[:1] not in (["hook"], ["mcp"]):  # a person's command: make `git rewind --help` find the page
        from .base.manpage import link_beside

        link_beside()
    if args[:1] == ["snap"]:
        from .faces import snapcmd

        options = snapcmd.parse(args[1:])
        if options is not None:
            sys.exit(snapcmd.run(options))
    if args[:1] == ["undo"]:
        from .faces import undocmd

        plain = undocmd.parse(args[1:])
        if plain is not None:
            sys.exit(undocmd.run(*plain, argv=args[1:]))  # the daemon's, or run here
    if args[:1] == ["watch"]:
        parsed = _plain_watch(args[1:])
        if parsed is not None:  # the program starts before click could even be imported
            from .watching import watch

            sys.exit(watch.run(*parsed))
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):
        from .hook import client

        sys.exit(client.main(args[1:], end=True))  # the daemon answers, or the hook runs here; never fails the agent
    if args[:1] == ["mcp"] and _plain_mcp(args[1:]):
        from .faces import mcp  # the server, without click: `initialize` waits for every import

        mcp.serve(args[2] if len(args) == 3 else (args[1].split("=", 1)[1] if len(args) == 2 else None))
        return
    from .faces.cli import run

    run(args)


def _plain_watch(rest: list[str]) -> tuple[list[str], str | None] | None:
    """`watch [--session NAME] [--] [COMMAND...]` as (command, session); None for anything else (click says what)."""
    session = None
    while rest and rest[0].startswith("-"):
        if rest[0] == "--":
            return rest[1:], session
        if rest[0] == "--session" and len(rest) > 1:
            session, rest = rest[1], rest[2:]
        elif rest[0].startswith("--session="):
            session, rest = rest[0].split("=", 1)[1], rest[1:]
        else:
            return None
    return rest, session


def _plain_mcp(rest: list[str]) -> bool:
    """`mcp`, `mcp --repo PATH` or `mcp --repo=PATH`: served without click (anything else goes to click)."""
    return not rest or (len(rest) == 2 and rest[0] == "--repo") or (len(rest) == 1 and rest[0].startswith("--repo="))


if __name__ == "__main__":
    main()
