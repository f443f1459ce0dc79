"""Dropping old checkpoints so that `git gc` can prune them.

A session is a chain of commits, so dropping its oldest checkpoints means rewriting the
kept ones on a shorter chain (same trees, messages, times and notes; new commit ids) and
writing the notes ref afresh, without history, so the old notes trees become unreachable too.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..base import layout
from ..base.gitcmd import FastImport
from ..base.gitobjects import read_commits
from ..base.repo import NAMESPACES, NOTES_REF, REF_PREFIX, Repo
from ..store import checkpoints, storage, store
from ..store.checkpoints import Checkpoint


@dataclass
class Collection:
    """What gc dropped and kept."""

    dropped: list[Checkpoint] = field(default_factory=list)
    kept: list[Checkpoint] = field(default_factory=list)
    sessions_removed: list[str] = field(default_factory=list)
    tagged: list[Checkpoint] = field(default_factory=list)  # kept only because they are tagged


def select(items: list[Checkpoint], keep: int, older_than_days: int, now: float | None = None,
           include_tagged: bool = False) -> Collection:
    """Keep the newest KEEP checkpoints that are also younger than OLDER_THAN_DAYS, and always every one
    `redo` can still restore (each work tree's redo stack) and every tagged one (Note.tagged: a tag given on
    purpose marks a checkpoint to come back to), whatever its age; INCLUDE_TAGGED: tagged ones go as others do."""
    cutoff = (time.time() if now is None else now) - older_than_days * 86400
    result = Collection()
    newest_first = sorted(items, key=lambda c: c.seq, reverse=True)
    keep_for_redo = {c.commit for c in checkpoints.redo_targets(items)}
    for rank, item in enumerate(newest_first):
        old = rank >= keep or item.time < cutoff
        if item.commit in keep_for_redo or not old:
            result.kept.append(item)
        elif item.note.tagged and not include_tagged:
            result.kept.append(item)
            result.tagged.append(item)
        else:
            result.dropped.append(item)
    for chosen in (result.dropped, result.kept, result.tagged):
        chosen.reverse()
    return result


def collect(repo: Repo, keep: int, older_than_days: int, dry_run: bool = False,
            include_tagged: bool = False) -> Collection:
    """Drop what `select` picks; with DRY_RUN only say what that would be."""
    return _drop(repo, lambda items: select(items, keep, older_than_days, include_tagged=include_tagged), dry_run)


@dataclass
class Capped:
    """What enforcing max_store_size found and did (sizes in bytes, as storage.measure counts them)."""

    max_size: int
    before: int  # the store's size when gc looked
    after: int  # its size now (a dry run: about what it would be)
    dropped: list[Checkpoint] = field(default_factory=list)
    kept: int = 0  # how many checkpoints are left
    unmet: bool = False  # still over: only what gc must keep is left
    needed: int = 0  # when unmet: about what the checkpoints gc must keep hold

    @property
    def tagged(self) -> list[Checkpoint]:
        """The tagged checkpoints it dropped: only once every untagged one it could drop was gone."""
        return [c for c in self.dropped if c.note.tagged]


def must_keep(repo: Repo, items: list[Checkpoint]) -> set[int]:
    """The seqs the cap never drops: each work tree's redo stack (what `redo` restores) and its newest
    checkpoint (what the next checkpoint builds on), and any checkpoint not on a refs/rewind/ chain (one
    fetched from elsewhere is not ours to drop)."""
    keep = {c.seq for c in checkpoints.redo_targets(items)}
    newest = {c.note.worktree: c.seq for c in items}  # oldest first: the newest of each wins
    keep.update(newest.values())
    ours = storage.on_our_chains(repo)
    keep.update(c.seq for c in items if c.commit not in ours)
    return keep


def cap(repo: Repo, max_size: int, dry_run: bool = False, dropping: list[Checkpoint] | None = None) -> Capped:
    """Drop the oldest checkpoints until the store is no larger than MAX_SIZE, never one `must_keep` names.

    `_plan` finds how many go; the drop itself goes through `_drop`, which checks `must_keep` again
    under the locks. DROPPING: what a dry run of `collect` would drop already. The result is recorded
    for the hooks' estimate (not on a dry run).
    """
    items = checkpoints.load_all(repo)
    result = Capped(max_size, storage.measure(repo, items), 0, kept=len(items))
    result.after = result.before
    gone = {c.seq for c in dropping or []}
    for _round in range(3):  # the plan's estimate can miss what the rewrite costs: measure and go again
        if not max_size or result.after <= max_size:
            break
        live = [c for c in items if c.seq not in gone]
        planned, estimate, result.unmet = _plan(repo, live, max_size)
        if result.unmet:
            result.needed = estimate
        if dry_run or not planned:
            result.dropped += sorted(planned, key=lambda c: c.seq)
            result.kept = len(live) - len(planned)
            result.after = estimate if planned else result.after
            break
        seqs = {c.seq for c in planned}

        def choose(now: list[Checkpoint], seqs: set[int] = seqs) -> Collection:
            still = must_keep(repo, now)
            chosen = Collection()
            for item in now:
                (chosen.dropped if item.seq in seqs and item.seq not in still else chosen.kept).append(item)
            return chosen

        done = _drop(repo, choose, dry_run=False)
        result.dropped += done.dropped
        items = checkpoints.load_all(repo)
        result.kept = len(items)
        result.after = storage.measure(repo, items)
        if result.unmet or not done.dropped:
            break
    if not dry_run:
        result.unmet = result.after > max_size > 0
        result.needed = result.after if result.unmet else 0
        storage.write_state(repo, {"time": int(time.time()), "bytes": result.after,
                                   "objects": storage.objects_bytes(repo), "max": max_size,
                                   "unmet": result.unmet, "dropped": len(result.dropped),
                                   "tagged": [c.seq for c in result.tagged]})
    return result


def _plan(repo: Repo, live: list[Checkpoint], max_size: int) -> tuple[list[Checkpoint], int, bool]:
    """The oldest checkpoints of LIVE to drop for MAX_SIZE, about the store's size after, and whether it
    stays over even so: the untagged ones first, the tagged ones (Note.tagged) only after all of them. A
    binary search over storage.measure_kept: a few `git rev-list` walks."""
    keep = must_keep(repo, live)
    droppable = [c for c in live if c.seq not in keep and not c.note.tagged]
    droppable += [c for c in live if c.seq not in keep and c.note.tagged]
    if not droppable:
        return [], storage.measure(repo, live), True
    sizes = storage.commit_sizes(repo, [c.commit for c in live])
    merges = storage.attachments(repo)
    known: dict[int, int] = {}

    def size_after(m: int) -> int:
        if m not in known:
            drop = {c.seq for c in droppable[:m]}
            known[m] = storage.measure_kept(repo, [c for c in live if c.seq not in drop], sizes, merges)
        return known[m]

    low, high = 1, len(droppable)
    if size_after(high) > max_size:
        return droppable, size_after(high), True
    while low < high:
        middle = (low + high) // 2
        if size_after(middle) <= max_size:
            high = middle
        else:
            low = middle + 1
    return droppable[:low], size_after(low), False


def delete(repo: Repo, ident: str) -> Checkpoint:
    """Drop one checkpoint (its session's chain is rewritten around it); returns it."""
    found: list[Checkpoint] = []

    def choose(items: list[Checkpoint]) -> Collection:
        target = checkpoints.lookup(repo, ident, items)
        found.append(target)
        return Collection(dropped=[target], kept=[c for c in items if c.commit != target.commit])

    _drop(repo, choose, dry_run=False)
    return found[0]


def _drop(repo: Repo, choose: Callable[[list[Checkpoint]], Collection], dry_run: bool) -> Collection:
    """Drop what CHOOSE (all checkpoints → Collection) picks, under both locks."""
    with repo.worktree_lock(), repo.store_lock():
        items = checkpoints.load_all(repo)
        result: Collection = choose(items)
        sessions = repo.session_refs()
        ours = storage.on_our_chains(repo)
        kept_by_session: dict[str, list[Checkpoint]] = {}
        foreign: list[Checkpoint] = []  # kept, on no chain of ours (a fetched one): only its note is rewritten
        for item in result.kept:
            if item.commit in ours:
                kept_by_session.setdefault(item.session, []).append(item)
            else:
                foreign.append(item)
        touched = {item.session for item in result.dropped}
        result.sessions_removed = sorted(s for s in touched if s in sessions and s not in kept_by_session)
        if dry_run or not result.dropped:
            return result
        # New values of the refs: written by fast-import, moved below in one transaction.
        moves: dict[str, str | None] = {REF_PREFIX + s: None for s in result.sessions_removed}
        moves[NOTES_REF] = None
        if result.kept:
            moves.update(_rewrite(repo, result, kept_by_session, touched, foreign))
        repo.move_refs(moves, {**{REF_PREFIX + s: oid for s, oid in sessions.items()},
                                 NOTES_REF: repo.read_ref(NOTES_REF)})
        for session in touched:
            store.forget_tip(repo, session)
        shutil.rmtree(os.path.join(repo.rewind_dir, layout.GITIGNORES), ignore_errors=True)  # a cache
        return result


def _rewrite(
    repo: Repo,
    result: Collection,
    kept_by_session: dict[str, list[Checkpoint]],
    touched: set[str],
    foreign: list[Checkpoint],
) -> dict[str, str | None]:
    """Write the shortened chains and the new notes commit; returns their refs' new values.

    fast-import updates the refs it wrote one by one at its end, so a kill between two would
    leave a rewritten chain beside the old notes: every ref is reset before the stream ends
    (fast-import then moves none) and the caller moves them together.
    """
    # Only the sessions that lose a checkpoint are rewritten: only their commits are read.
    commits = read_commits(repo, [item.commit for session in touched for item in kept_by_session.get(session, [])])
    tips: dict[str, int] = {}
    with FastImport(repo.root, force=True) as fi:
        mark = 0
        note_targets = [(str(c.commit), str(c.note_blob)) for c in foreign]  # (commit dataref, note blob id)
        for session, kept in kept_by_session.items():
            if session not in touched:
                for item in kept:
                    note_targets.append((item.commit, item.note_blob))
                continue
            fi.reset(REF_PREFIX + session)
            for index, item in enumerate(kept):
                mark += 1
                commit = commits[item.commit]
                # Its attachments (a transcript backup) stay reachable as its second parent.
                fi.commit(REF_PREFIX + session, commit.message, commit.time, mark=mark,
                          parents=[*([f":{mark - 1}"] if index else []), *commit.parents[1:]])
                fi.write(f'M 040000 {commit.tree} ""\n\n'.encode())
                note_targets.append((f":{mark}", item.note_blob))
                tips[REF_PREFIX + session] = mark
        mark += 1
        fi.reset(NOTES_REF)
        fi.commit(NOTES_REF, f"gc: kept {len(result.kept)}, dropped {len(result.dropped)}\n".encode(),
                  int(time.time()), mark=mark)
        for dataref, blob in note_targets:
            fi.write(f"N {blob} {dataref}\n".encode())
        fi.write(b"\n")
        tips[NOTES_REF] = mark
        moves: dict[str, str | None] = {ref: fi.get_mark(m) for ref, m in tips.items()}
        for ref in moves:
            fi.reset(ref)
    return moves





def drop_store_commands(repo: Repo | None) -> list[str]:
    """The shell commands that drop the whole store of REPO (every checkpoint, note and private file),
    for a user leaving git-rewind: its refs deleted in one transaction, its directories removed, then
    `git gc --prune=now` (which also prunes any other unreachable object; plain `git gc` waits two
    weeks). Outside a repository: the same commands, to run in each one."""
    import shlex

    delete = f"git for-each-ref --format='delete %(refname)' {' '.join(NAMESPACES)} | git update-ref --stdin"
    if repo is None:
        dirs = '"$(git rev-parse --git-common-dir)"/rewind "$(git rev-parse --git-common-dir)"/worktrees/*/rewind'
    else:
        common = os.path.dirname(repo.store_dir)
        dirs = f"{shlex.quote(repo.store_dir)} {shlex.quote(os.path.join(common, 'worktrees'))}/*/rewind"
    return [delete, f"rm -rf {dirs}", "git gc --prune=now"]


def background() -> int:
    """The detached enforcement a checkpoint starts (storage.maybe_enforce): `cap` with the configured
    max_store_size, in the current work tree, under the cap lock. Nobody reads its output: a failure is
    recorded in the state `git rewind status` reads."""
    from ..base import config
    from ..base.lock import Lock

    repo = Repo.discover()
    try:
        max_size = config.for_repo(repo)["max_store_size"]
        if max_size:
            with Lock(os.path.join(repo.store_dir, layout.CAP_LOCK), repo.lock_timeout):
                cap(repo, max_size)
    except Exception as exc:  # a detached process: the state is where anyone will see it
        storage.write_state(repo, {**storage.read_state(repo), "error": f"{type(exc).__name__}: {exc}"})
        return 1
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(background())
