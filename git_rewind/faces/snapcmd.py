"""`git rewind snap`: the command hooks call before every tool use, so it avoids click.

Importing click costs ~40 ms, more than the rest of a known-path snapshot. The options are
declared once here; cli.py builds the click command (help, errors) from the same table, and
`parse` reads the common, well-formed invocations without importing click at all.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


class Option:
    """One `snap` option: its spellings, destination, and whether it takes a value or repeats."""

    __slots__ = ("flags", "dest", "help", "takes_value", "multiple")

    def __init__(self, flags: tuple[str, ...], dest: str, help: str, takes_value: bool = True,
                 multiple: bool = False) -> None:
        self.flags = flags
        self.dest = dest
        self.help = help
        self.takes_value = takes_value
        self.multiple = multiple


OPTIONS = (
    Option(("-m", "--message"), "message",
           "One-line description of the checkpoint (recorded even when nothing changed, as does --tag)."),
    Option(("--session",), "session", "Session id (default: $GIT_REWIND_SESSION, else 'manual')."),
    Option(("--agent",), "agent", "The agent taking the checkpoint, e.g. claude-code."),
    Option(("--trigger",), "trigger", "What caused it, e.g. PreToolUse or UserPromptSubmit."),
    Option(("--tool",), "tool", "The tool about to run, e.g. Edit."),
    Option(("--path",), "paths", "Only read these paths; carry the rest from the session's last checkpoint.",
           multiple=True),
    Option(("--tag",), "tags", "A tag to record (repeatable).", multiple=True),
    Option(("--summary",), "summary", "A summary to store in the note; '-' reads it from stdin."),
    Option(("--allow-empty",), "allow_empty", "Checkpoint even if nothing changed (implied by -m and --tag).",
           takes_value=False),
    Option(("--json",), "as_json", "Print the note as JSON.", takes_value=False),
)


def defaults() -> dict[str, Any]:
    return {o.dest: ([] if o.multiple else (False if not o.takes_value else None)) for o in OPTIONS}


def parse(argv: list[str]) -> dict[str, Any] | None:
    """Options from ARGV (after 'snap'), or None to let click handle it (help, errors)."""
    by_flag = {flag: option for option in OPTIONS for flag in option.flags}
    values = defaults()
    i = 0
    while i < len(argv):
        arg = argv[i]
        value: str | None = None
        if arg.startswith("--") and "=" in arg:
            arg, value = arg.split("=", 1)
        elif len(arg) > 2 and arg.startswith("-") and not arg.startswith("--"):
            arg, value = arg[:2], arg[2:]
        option = by_flag.get(arg)
        if option is None:
            return None
        if option.takes_value:
            if value is None:
                i += 1
                if i >= len(argv):
                    return None
                value = argv[i]
            if option.multiple:
                values[option.dest].append(value)
            else:
                values[option.dest] = value
        elif value is not None:
            return None
        else:
            values[option.dest] = True
        i += 1
    return values


def run(options: dict[str, Any]) -> int:
    """Take the checkpoint and print the contract output; returns the exit code."""
    from ..base import config
    from ..base.repo import Repo
    from ..store import store

    repo = Repo.find(os.getcwd())  # no process for the plain layouts; anything else asks git
    settings = config.for_repo(repo)
    summary = options.get("summary")
    if summary == "-":
        summary = sys.stdin.read()
    if isinstance(summary, str):
        from ..base.summary import structured  # sections are parsed with re: only --summary pays for it

        summary = structured(summary)
    base = os.getcwd()
    paths = [repo.relpath(p, base) for p in options.get("paths") or []]
    if "" in paths:  # the work tree's root was named: that is a whole-tree snapshot
        paths = []
    request = store.Request(
        session=options.get("session") or os.environ.get("GIT_REWIND_SESSION") or "manual",
        message=options.get("message"),
        agent=options.get("agent"),
        trigger=options.get("trigger"),
        tool=options.get("tool"),
        paths=paths,
        tags=list(options.get("tags") or []),
        summary=summary,
        # A message or a tag names this moment: it is recorded even when nothing changed since the
        # session's last checkpoint (the same tree under a new number), never dropped in silence.
        allow_empty=bool(options.get("allow_empty") or options.get("message") or options.get("tags")),
        max_file_size=settings["max_file_size"],
        auto_pack=settings["auto_pack"],
        max_store_size=settings["max_store_size"],
    )
    result = store.save(repo, request)
    note = result.note
    for entry in note.skipped if note is not None else []:
        print(f"git-rewind: left out {entry['path']} ({entry['reason']})", file=sys.stderr)
    if options.get("as_json"):
        if note is not None:
            print(json.dumps({**note.to_json(), "commit": result.commit}, indent=2))
        else:
            print(json.dumps({"unchanged": True, "seq": result.seq, "commit": result.commit}, indent=2))
    elif note is not None:
        same = f" (same tree as #{result.same_as})" if result.same_as is not None else ""
        print(f"#{result.seq} {result.commit[:7]} {note.message}{same}")
    else:
        print(f"unchanged since #{result.seq}")
    return 0
