"""`install --git-hooks` / `uninstall --git-hooks`: our post-commit, post-rewrite and prepare-commit-msg hooks
in the folder git runs hooks from (`git rev-parse --git-path hooks`: core.hooksPath when set, shared by
linked work trees), chained with the hooks already there.

A hook already in place is moved aside, renamed NAME.git-rewind-chained in the same folder (a rename: its
bytes, mode and a symbolic link's target untouched), and ours runs it first with the same arguments and
stdin, returning its exit status (which git reads for prepare-commit-msg); uninstall renames it back.
Ours is recognised by its MARKER line, so installing twice changes nothing and uninstall never removes a
hook that is not ours. Our script runs this git-rewind by absolute path without `site`, as the agents'
hooks do (hook/gitentry.py), and skips itself quietly where that interpreter is gone."""

from __future__ import annotations

import os
import shlex
import sys

from ..base.errors import RewindError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..base.repo import Repo

NAMES = ("post-commit", "post-rewrite", "prepare-commit-msg")
MARKER = "# git-rewind git hook"
CHAINED = ".git-rewind-chained"


class Change:
    """What install or uninstall did to one hook: ACTION "installed", "updated", "unchanged", "removed",
    "restored" (the hook it had chained put back), "kept" (ours was replaced by another since: it and the
    hook ours had chained are left alone), "absent" (none of ours); CHAINED: the hook ours runs first."""

    __slots__ = ("path", "action", "chained")

    def __init__(self, path: str, action: str, chained: str | None = None) -> None:
        self.path = path
        self.action = action
        self.chained = chained


def hooks_dir(repo: Repo) -> str:
    """The folder git runs this repository's hooks from."""
    out = repo.git(["rev-parse", "--path-format=absolute", "--git-path", "hooks"]).decode().strip()
    return out


def entry() -> list[str]:
    """What our scripts run: this interpreter without `site` on hook/gitentry.py."""
    return [sys.executable, "-I", "-S", os.path.join(os.path.dirname(os.path.abspath(__file__)), "gitentry.py")]


def script(name: str, program: list[str] | None = None) -> str:
    """Our hook NAME: the chained hook first (post-rewrite's stdin kept for both), then ours, never failing."""
    program = program or entry()
    ours = " ".join(shlex.quote(part) for part in program) + f" {name} \"$@\""
    guard = f"[ -x {shlex.quote(program[0])} ] && "
    head = (f"#!/bin/sh\n{MARKER}: who wrote each committed line (refs/notes/rewind-authorship).\n"
            f"# `git rewind uninstall --git-hooks` removes it and puts back the hook it runs first, if any.\n"
            f"chained=\"$0{CHAINED}\"\n")
    if name == "post-rewrite":
        return head + (
            "if [ -x \"$chained\" ]; then\n"
            "    input=$(mktemp) || exec \"$chained\" \"$@\"\n"
            "    cat >\"$input\"\n"
            "    status=0\n"
            "    \"$chained\" \"$@\" <\"$input\" || status=$?\n"
            f"    {guard}{ours} <\"$input\" || :\n"
            "    rm -f \"$input\"\n"
            "    exit $status\n"
            "fi\n"
            f"{guard}{ours} || :\n"
            "exit 0\n")
    if name == "prepare-commit-msg":
        # The trailer is off unless a settings file or the environment names it: no interpreter started otherwise.
        from ..base.config import PROJECT_FILE  # and the user's file where config.user_file looks

        guard = (f"{{ [ -n \"$GIT_REWIND_COMMIT_TRAILER\" ] || grep -qs commit_trailer {PROJECT_FILE} "
                 "\"${XDG_CONFIG_HOME:-$HOME/.config}/git-rewind/config.toml\"; } && " + guard)
    return head + (
        "if [ -x \"$chained\" ]; then\n"
        "    \"$chained\" \"$@\" || exit $?\n"
        "fi\n"
        f"{guard}{ours} </dev/null || :\n"
        "exit 0\n")


def is_ours(path: str) -> bool:
    """PATH is a hook script this git-rewind (any version, any path) wrote."""
    try:
        if os.path.islink(path):
            return False
        with open(path, "rb") as fh:
            return MARKER.encode() in fh.read(4096)
    except OSError:
        return False


def install(repo: Repo, program: list[str] | None = None) -> list[Change]:
    """Our three hooks in place (a hook there before ours chained); a second install changes nothing."""
    from ..base.fsutil import write_atomic

    folder = hooks_dir(repo)
    os.makedirs(folder, exist_ok=True)
    changes = []
    for name in NAMES:
        path = os.path.join(folder, name)
        aside = path + CHAINED
        text = script(name, program)
        present = os.path.lexists(path)
        if present and is_ours(path):
            with open(path, encoding="utf-8", errors="replace") as fh:
                same = fh.read() == text
            if not same:
                write_atomic(path, text)
            changes.append(Change(path, "unchanged" if same else "updated", aside if os.path.lexists(aside) else None))
            continue
        if present:
            if os.path.lexists(aside):
                raise RewindError(f"{path} is not git-rewind's and {aside} exists too: move one of them away "
                                  "first; nothing changed")
            os.rename(path, aside)
        write_atomic(path, text, new_mode=0o777)
        os.chmod(path, 0o755)
        changes.append(Change(path, "installed", aside if present else None))
    return changes


def uninstall(repo: Repo) -> list[Change]:
    """Our hooks removed, each hook they chained renamed back (its bytes and mode as they were)."""
    folder = hooks_dir(repo)
    changes = []
    for name in NAMES:
        path = os.path.join(folder, name)
        aside = path + CHAINED
        if os.path.lexists(path) and not is_ours(path):
            # someone else's hook: ours was replaced after install (a hook of ours still aside), or never there
            changes.append(Change(path, "kept", aside) if os.path.lexists(aside) else Change(path, "absent"))
            continue
        if os.path.lexists(aside):
            os.replace(aside, path)
            changes.append(Change(path, "restored", aside))
        elif os.path.lexists(path):
            os.unlink(path)
            changes.append(Change(path, "removed"))
        else:
            changes.append(Change(path, "absent"))
    return changes


def installed(repo: Repo) -> list[str]:
    """Our hooks in place now."""
    folder = hooks_dir(repo)
    return [os.path.join(folder, name) for name in NAMES if is_ours(os.path.join(folder, name))]
