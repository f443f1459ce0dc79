"""`undo --patch` (and `revert --patch`): toward a target tree hunk by hunk, through git's own prompts.

Order of work: a terminal or nothing → under the work-tree lock, scan and plan exactly as a
restore does (the same pathspecs, ignore rules and files left alone) → safety checkpoint →
a private index holding the current tree as the scan recorded it (a copy of the scan's own
index, so git re-hashes nothing) → binary files, which git's hunk selection skips, asked here
one file at a time with git's letters → `git restore --patch --source=<offered tree> --worktree`
on the user's terminal, the offered tree being the current one with only the planned text
changes, so git offers nothing a restore would leave alone → rescan, and say what changed.
Every git process here is given GIT_INDEX_FILE: the user's .git/index is never named.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from ..base import gitcmd, layout
from ..base.errors import RewindError
from ..base.fsutil import scratch_dir
from ..base.note import Note, Oid, RewindRecord
from ..base.repo import Repo
from ..store import ignore, snapshot, store
from ..store.checkpoints import Checkpoint
from . import restore
from .restore import Change, Outcome

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from ..base.note import ConversationRecord, Mode

# What our own git processes must not do to the repository whatever the user's config says: a split
# index would put a shared index file beside the user's.
_PRIVATE = ("-c", "core.splitIndex=false")
HELP = """y - apply this file to worktree
n - do not apply this file to worktree
q - quit; do not apply this file or any of the remaining ones
a - apply this file (a binary file is one hunk)
d - do not apply this file (a binary file is one hunk)
? - print help"""


def need_terminal() -> None:
    """git's prompts read the user's answers from stdin and show hunks on stdout: both must be a terminal."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise RewindError("--patch asks hunk by hunk and needs a terminal (stdin and stdout); nothing changed")


def patch(
    repo: Repo,
    target: Checkpoint,
    pathspecs: list[str],
    max_size: int,
    auto_pack: int = 2000,
    cwd: str | None = None,
    trigger: str = "pre-rewind",
    mode: Mode = "code",
    conversation: ConversationRecord | None = None,
    attachments: store.Attachments | None = None,
    retarget: restore.Retarget | None = None,
    kind: str | None = None,
) -> Outcome:
    """Checkpoint the current state, then offer each change toward TARGET hunk by hunk on the terminal.

    The arguments are restore.rewind's: RETARGET makes the tree to go toward from the current one,
    under the lock (an agent-only undo, a revert; a fixed tree T is `lambda _current: T`), KIND names
    it in the safety checkpoint's record. PATHSPECS narrow it as `--only` does (git pathspecs,
    relative to CWD). The record names every path offered, then, once the session ends, the paths
    it changed, so redo brings back exactly those. Returns what the session changed (written:
    changed or created, removed: gone), from a scan afterwards.
    """
    need_terminal()
    with repo.worktree_lock():
        plan, scan, excludes = restore.plan_locked(repo, target, pathspecs, max_size, cwd, retarget=retarget)
        if plan.empty and conversation is None:
            return Outcome(plan=plan, safety=None)
        offered = sorted({c.path for c in plan.writes + plan.removals})
        record = RewindRecord(target.seq, target.commit, offered, mode, conversation,
                              extra=restore.record_extra(target, kind))
        safety = store.save_locked(repo, store.Request(
            session=target.session or "manual", trigger=trigger,
            message=f"{trigger} to {target.label} (patch" + ("" if mode == "code" else f", {mode}")
            + (f", {kind}" if kind else "") + ")",
            allow_empty=True, max_file_size=max_size, auto_pack=auto_pack, excludes_file=excludes,
            rewind=record, attachments=attachments))
        outcome = Outcome(plan=plan, safety=safety)
        if plan.empty:
            return outcome
        store.mark_restored(repo, safety.seq)
        work = scratch_dir(repo.rewind_dir, layout.SCRATCH_PATCH)
        index = os.path.join(work, "index")
        shutil.copy2(repo.private_index, index)  # its mtime too: git re-checks entries as new as the index
    from ..agents import install

    ours = install.in_tree(repo.root, offered)
    failure = None
    try:
        # The lock is not held while a person answers: agents' hooks go on taking checkpoints meanwhile.
        _session(repo, target, scan.tree, plan.target_tree, plan.writes + plan.removals, index, work)
    except KeyboardInterrupt:
        failure = "interrupted"  # what was applied stays: say so, once the note says what it was
    except RewindError as exc:
        failure = str(exc)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with repo.worktree_lock():
        # the same ignore rules as the plan's: the target checkpoint's with the disk's
        used = ignore.target_excludes(repo, repo.tree_of(target.commit),
                                      os.path.join(repo.rewind_dir, layout.TARGET_EXCLUDES))
        after = snapshot.scan(repo, max_size, used, base_tree=scan.tree)
    wanted = set(offered)
    for status, path in after.changes:
        if path in wanted:
            (outcome.removed if status == "D" else outcome.written).append(path)
    _record_changed(repo, safety, sorted(outcome.written + outcome.removed))
    restore.tell_sessions(repo, outcome, restore.action_name(trigger, kind) + " --patch", None)
    outcome.reinstated = install.reinstate(repo.root, ours)
    if failure:
        raise RewindError(f"{failure}; what was applied stays ({len(outcome.written)} written, "
                          f"{len(outcome.removed)} removed): safety checkpoint #{safety.seq} {safety.commit[:7]} "
                          "has the state before (git rewind redo goes back)")
    return outcome


def _record_changed(repo: Repo, safety: store.Result, changed: list[str]) -> None:
    """Narrow the safety checkpoint's record to the paths the session changed, so redo brings back those
    (an addition the user declined is in neither that checkpoint nor the tree: redo would refuse it)."""
    record = safety.note.rewind if safety.note is not None else None
    if safety.note is None or record is None or record.only == changed:
        return

    def narrow(note: Note) -> None:
        if note.rewind is None:
            return
        note.rewind.only = changed
        if not changed:  # as a restore whose selection changed no file: redo has none to bring back
            note.rewind.mode = "conversation"

    safety.note = store.update_note(repo, safety.commit, narrow, "the rewind's paths narrowed")


def _session(repo: Repo, target: Checkpoint, current_tree: Oid, target_tree: Oid, changes: list[Change],
             index: str, work: str) -> None:
    """Binary files first, asked here; then git's own prompts for every text change (unless the user quit)."""
    env = {"GIT_INDEX_FILE": index}
    binary = _binary(repo, current_tree, target_tree, changes)
    chosen: list[Change] = []
    stopped = False
    if binary:
        print(f"{len(binary)} binary file{'s' if len(binary) != 1 else ''} first (git offers no hunks of them); "
              f"each is whole, as in #{target.seq}:", flush=True)
        chosen, stopped = _ask_binary(binary, target.seq, sys.stdin, sys.stdout)
    if chosen:
        # Written by git, as its checkout writes them (filters, eol), and staged in the private index so
        # the hunk session sees them as they now are.
        gitcmd.run(["restore", f"--source={target_tree}", "--staged", "--worktree",
                    "--pathspec-from-file=-", "--pathspec-file-nul"], cwd=repo.root,
                   env={**env, "GIT_LITERAL_PATHSPECS": "1"},
                   input=b"".join(os.fsencode(c.path) + b"\0" for c in chosen))
    text = [c for c in changes if c.path not in {b.path for b in binary}]
    if stopped or not text:
        return
    offered = _tree_with(repo, current_tree, text + chosen)
    proc = subprocess.run(["git", *_PRIVATE, "restore", "--patch", f"--source={offered}", "--worktree"],
                          cwd=repo.root, env={**os.environ, **env})
    if proc.returncode != 0:
        raise RewindError(f"git restore --patch exited with status {proc.returncode}")


def _binary(repo: Repo, current_tree: str, target_tree: str, changes: list[Change]) -> list[Change]:
    """The changes git's hunk selection would skip: binary as git's diff sees them (attributes included)."""
    if not changes:
        return []
    out = gitcmd.run(["diff-tree", "-r", "-z", "--numstat", "--no-renames", current_tree, target_tree],
                     cwd=repo.root)
    binary = set()
    for record in out.split(b"\0"):
        added, _sep, rest = record.partition(b"\t")
        if added == b"-":
            binary.add(os.fsdecode(rest.partition(b"\t")[2]))
    return [c for c in changes if c.path in binary]


def _tree_with(repo: Repo, base_tree: Oid, changes: list[Change]) -> Oid:
    """BASE_TREE with CHANGES made (a removal where a change has no mode)."""
    from ..base.scratchindex import edited_tree

    return edited_tree(repo, base_tree, {c.path: (f"{c.mode:o}", str(c.oid)) if c.mode is not None else None
                                         for c in changes})


def _ask_binary(changes: list[Change], seq: int, answers: TextIO, out: TextIO) -> tuple[list[Change], bool]:
    """Ask about each binary file with git's letters, as git asks about a file of one hunk: the files to
    apply, and whether the user quit (then nothing after is offered, git's session included)."""
    chosen: list[Change] = []
    for change in changes:
        out.write(f"diff --git b/{change.path} a/{change.path}\n")
        if change.old_mode is None:
            out.write(f"new file mode {change.mode:o}\n")
            what = "addition"
        elif change.mode is None:
            out.write(f"deleted file mode {change.old_mode:o}\n")
            what = "deletion"
        else:
            if change.old_mode != change.mode:
                out.write(f"old mode {change.old_mode:o}\nnew mode {change.mode:o}\n")
            what = "this binary file"
        out.write(f"Binary files b/{change.path} and a/{change.path} (#{seq}) differ\n")
        while True:
            out.write(f"(1/1) Apply {what} to worktree [y,n,q,a,d,?]? ")
            out.flush()
            line = answers.readline()
            if not line:  # end of input: as git takes it, quit
                out.write("\n")
                return chosen, True
            answer = line.strip()[:1].lower()
            if answer in ("y", "a"):
                chosen.append(change)
                break
            if answer in ("n", "d"):
                break
            if answer == "q":
                return chosen, True
            out.write(HELP + "\n")
    return chosen, False
