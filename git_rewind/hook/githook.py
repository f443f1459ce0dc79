"""One call of a git hook `install --git-hooks` added: post-commit (the new commit's authorship note),
post-rewrite (notes carried through an amend or a rebase), prepare-commit-msg (the optional
`Assisted-by:` trailer). Whatever happens it exits 0 within DEADLINE seconds: an internal error is one
line on stderr and its trace in .git/rewind/git-hook-errors.log, never a failed or stuck commit (the
hook a person had before ours runs first, from the script, and its exit status stays git's to read)."""

from __future__ import annotations

import os
import sys

DEADLINE = 10  # seconds: past this the hook gives up (SIGALRM) and the commit goes on
NAMES = ("post-commit", "post-rewrite", "prepare-commit-msg")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..base.repo import Repo


class Deadline(Exception):
    """The hook ran past DEADLINE."""


def main(argv: list[str]) -> int:
    """NAME ARGS… as git gave them (post-rewrite's pairs on stdin); always 0. The work tree's daemon, when one
    runs, writes the notes (no interpreter start or imports here, and its object writer in process); else
    this process does."""
    if not argv or argv[0] not in NAMES:
        return 0
    name, args = argv[0], argv[1:]
    repo = None
    try:
        _arm()
        raw = sys.stdin.buffer.read() if name == "post-rewrite" else b""
        if name != "prepare-commit-msg" and _answered(raw, argv):  # the trailer's check is the settings alone
            return 0
        if sys.version_info < (3, 11):  # the settings' TOML needs tomlkit (site-packages) before tomllib
            from .client import with_site

            with_site()  # not otherwise: a .pth file can import much (certifi: ~15 ms)
        from ..base.repo import Repo

        repo = Repo.find(os.getcwd())  # git runs hooks at the work tree's root
        run(repo, name, args, raw)
    except BaseException as exc:  # noqa: BLE001 - never a failed commit
        _say(_report(repo, name, exc))
    return 0


def _answered(raw: bytes, argv: list[str]) -> bool:
    """The daemon ran the call (its stderr printed here); False: run it here (no daemon, or it did not answer:
    said on stderr)."""
    from .client import ask

    try:
        answer, failure = ask(raw, argv, op="githook")
    except Exception as exc:  # noqa: BLE001 - the daemon is an optimisation: never a reason to fail
        answer, failure = None, f"{type(exc).__name__}: {exc}"
    if answer is not None:
        _say(answer["err"])
        return True
    if failure is not None:
        _say(f"git-rewind: {failure}; the {argv[0]} hook ran without it\n")
    return False


def serve(repo: Repo, request: dict[str, object]) -> dict[str, object]:
    """The daemon's `githook` request (sent by _answered): the call run in the daemon of REPO under the calling
    process's environment, directory and umask; {"out", "err"}, or {"fallback": why} to run it there."""
    from .hook import Elsewhere, Served, call_of

    call = call_of(request)
    if call is None or not call.argv or call.argv[0] not in NAMES[:2]:
        return {"fallback": "a request this daemon does not understand"}
    name, args = call.argv[0], call.argv[1:]
    try:
        with Served(call, repo):
            try:
                run(repo, name, args, call.raw)
            except Exception as exc:  # noqa: BLE001 - never a failed commit, never the daemon's end
                return {"out": "", "err": _report(repo, name, exc)}
    except Elsewhere as exc:
        return {"fallback": str(exc)}
    return {"out": "", "err": ""}


def _arm() -> None:
    import _signal  # `signal` imports enum: ~5 ms

    def expired(_signum: int, _frame: object) -> None:
        raise Deadline(f"gave up after {DEADLINE} s")

    _signal.signal(_signal.SIGALRM, expired)
    _signal.alarm(DEADLINE)


def run(repo: Repo, name: str, args: list[str], raw: bytes) -> None:
    import time

    if name == "prepare-commit-msg":
        if args:
            trailer(repo, args[0])
        return
    from ..ops import commitnote  # only here: json, subprocess, re… for the hooks that write notes

    if name == "post-commit":
        commitnote.on_commit(repo, time.time())
    elif name == "post-rewrite":
        pairs = [(p[0], p[1]) for p in (row.split() for row in raw.decode().splitlines()) if len(p) >= 2]
        commitnote.on_rewrite(repo, args[0] if args else "amend", pairs, time.time())


def trailer(repo: Repo, message_file: str) -> list[str]:
    """With `commit_trailer = true`: an `Assisted-by: AGENT:MODEL` trailer (the Linux kernel's form; MODEL
    "unknown" where the checkpoints do not say) in MESSAGE_FILE for each agent that wrote a staged line,
    added by `git interpret-trailers` (once: a message that has it already keeps one). The trailers added."""
    import time

    from ..base import config

    if not config.for_repo(repo)["commit_trailer"]:
        return []  # the default: nothing imported but the settings
    from ..ops import commitnote
    agents = commitnote.staged_agents(repo, time.time())
    found = [f"Assisted-by: {agent}:{model or 'unknown'}" for agent, model in agents]
    if found:
        args = ["interpret-trailers", "--in-place", "--if-exists", "addIfDifferent"]
        for line in found:
            args += ["--trailer", line]
        repo.git([*args, message_file])
    return found


def _say(text: str) -> None:
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _report(repo: Repo | None, name: str, exc: BaseException) -> str:
    """The trace in the work tree's git-hook-errors.log; the line for stderr."""
    where = "(no repository)"
    try:
        import traceback

        from ..base import layout
        from ..base.clock import utc_now

        if repo is not None:
            where = os.path.join(repo.rewind_dir, layout.GIT_HOOK_ERRORS)
            os.makedirs(repo.rewind_dir, exist_ok=True)
            trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            with open(where, "a", encoding="utf-8") as fh:
                fh.write(f"--- {utc_now()} {name}\n{trace}")
    except BaseException:  # noqa: BLE001 - the log is a courtesy
        where = "(log not writable)"
    message = " ".join(str(exc).split())[:300]
    return f"git-rewind: {name} hook skipped, {type(exc).__name__}: {message} (details: {where})\n"
