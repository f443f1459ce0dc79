"""`git rewind undo` in its plain scripted form, without click, answered by the work tree's daemon.

Importing click costs ~40 ms, a tenth of a whole restore of one file. `parse` reads
`undo [ID] [--code] --yes` (`-y`): nothing to preview and nothing to ask, so no click is needed.
Every other form (a terminal that is asked, --dry-run, --only, --full, help, errors) goes to
cli.py's click command; both run it as one request.Request and print its Report's lines.

The plain form asks the work tree's daemon first, as the hook's thin client does (hook/client.py): the
daemon runs the same Request in its own process (`serve`: its imports made, its safety checkpoint written
in process and scanning only what changed) under this process's environment, directory and umask, and
answers the lines and the exit code, or the error, which this process raises as its own (main.py words
it): the output is what the undo run here would print. Without a daemon, with one that does not answer,
for another work tree or an upgrade, the undo runs in this process as it always did.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..base.repo import Repo

# How long the daemon's answer is waited for. A restore it took runs to its end whatever this process does
# (a Ctrl-C here leaves it to finish); its own waits are bounded (the work-tree lock's timeout). After this
# bound the undo runs here: a daemon that never got to it then skips it (this process hung up), and one
# still restoring holds the work-tree lock, after which the undo here finds what is left to do.
ANSWER_TIMEOUT = 120.0


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


def run(ident: str | None, argv: list[str] | None = None) -> int:
    """Rewind this work tree's files to checkpoint IDENT (default: what a bare undo restores, undo.bare_target),
    as `git rewind undo ID --yes` through click does; print the result; the exit code. ARGV (the words after
    `undo`): ask the work tree's daemon to run it first."""
    if argv is not None:
        code = ask(argv)
        if code is not None:
            return code
    import os

    from ..base.repo import Repo

    try:
        report = perform(Repo.find(os.getcwd()), ident)  # no process for the plain layouts (as snap and hooks)
    except KeyboardInterrupt:  # as click says it
        echo("", err=True)
        echo("aborted", err=True)
        return 1
    for line, err in report:
        echo(line, err=err)
    return 0


def perform(repo: Repo, ident: str | None) -> list[tuple[str, bool]]:
    """The undo to IDENT in REPO, from the current directory: the report's lines (text, on stderr)."""
    import os
    import time

    from ..ops import undo
    from ..ops.request import Request
    from ..store import checkpoints

    items = checkpoints.load_all(repo)
    why = None
    if ident is not None:
        target = checkpoints.lookup(repo, ident, items, repo.worktree)
    else:
        bare = undo.bare_target(repo, items, repo.worktree, time.time())
        target, why = bare.target, bare.why
    with Request.undo(repo, target, "code", cwd=os.getcwd(), items=items, why=why) as asked:
        return list(asked.run().lines)


def ask(argv: list[str]) -> int | None:
    """This undo (ARGV: the words after `undo`) run by the work tree's daemon: its lines printed in order,
    its exit code (its error raised here, as the undo run here raises it); None to run it here."""
    from ..hook import client

    try:
        answer, failure = client.ask(b"", ["undo", *argv], "undo", ANSWER_TIMEOUT)
    except KeyboardInterrupt:
        echo("", err=True)
        echo("aborted (an undo the daemon had started goes on to its end: git rewind list shows its safety "
             "checkpoint)", err=True)
        return 1
    except Exception as exc:  # noqa: BLE001 - the daemon is an optimisation: never a reason to fail
        answer, failure = None, f"{type(exc).__name__}: {exc}"
    if answer is None:
        if failure is not None:
            echo(f"git-rewind: {failure}; the undo runs without it", err=True)
        return None
    lines = answer.get("lines")
    for item in lines if isinstance(lines, list) else []:
        if isinstance(item, list) and len(item) == 2 and isinstance(item[0], str):
            echo(item[0], err=bool(item[1]))
    raised = answer.get("raised")
    if isinstance(raised, dict):
        from ..base.errors import RewindError

        details = raised.get("details")
        remedy = raised.get("remedy")
        code = raised.get("exit_code")
        raise RewindError(str(raised.get("message")), code if isinstance(code, int) else 1,
                          remedy if isinstance(remedy, str) else None,
                          {str(k): str(v) for k, v in details.items()} if isinstance(details, dict) else None)
    code = answer.get("code")
    return code if isinstance(code, int) else 0


def serve(repo: Repo, request: dict[str, object]) -> dict[str, object]:
    """The daemon's `undo` request (`ask` sends it): the plain undo run in the daemon of REPO under the calling
    process's environment, directory and umask; {"out", "err", "code", "lines": [[text, on stderr]...]}, with
    "raised" (the RewindError's message, exit code, remedy and details) when it failed as a command fails, or
    {"fallback": why} for the process to run it itself. Any other failure becomes the server's {"error"}, and
    the command runs the undo itself, saying so: every restore checkpoints first, so one the daemon began is
    taken up again from where it stopped, nothing lost."""

    from ..hook.hook import Elsewhere, Served, call_of

    call = call_of(request)
    plain = parse(call.argv[1:]) if call is not None and call.argv[:1] == ["undo"] else None
    if call is None or plain is None:
        return {"fallback": "a request this daemon does not understand"}
    try:
        with Served(call, repo) as here:
            from ..base.errors import RewindError

            try:
                lines = perform(here, plain[0])
            except RewindError as exc:
                return {"out": "", "err": "", "code": exc.exit_code,
                        "raised": {"message": str(exc), "exit_code": exc.exit_code, "remedy": exc.remedy,
                                   "details": dict(exc.details)}}
    except Elsewhere as exc:
        return {"fallback": str(exc)}
    return {"out": "".join(text + "\n" for text, err in lines if not err),
            "err": "".join(text + "\n" for text, err in lines if err),
            "code": 0, "lines": [[text, err] for text, err in lines]}


def echo(text: str, err: bool = False) -> None:
    """One line on stdout (or stderr), flushed at once as click.echo does: the two streams stay in order."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()
