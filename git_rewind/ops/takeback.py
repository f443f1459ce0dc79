"""Taking back only what the agents did (`undo --agent-only`, `revert`), keeping every other change.

A work tree's checkpoints, in seq order across its sessions, are a linear history: each step from
one checkpoint's tree to the next holds changes whose origin the later note records (`origins`,
attribution.py). The steps to take back are grouped into runs (consecutive steps with nothing kept
between them), and each run is reverted onto the current tree, newest first, with git's own
three-way merge: `git merge-tree --write-tree` of commits made for it (base = the run's end, ours =
the tree so far, theirs = the run's start), so renames, deletions and line-level merges are git's,
in SHA-1 and SHA-256 repositories alike, one merge per run and no process per file.

A line an agent changed that was changed again afterwards is a conflict: by default nothing is
written (`Conflicts`, exit status 3); with `merge` the clean parts are kept and conflicted text
files get git's markers, labelled `current` and the checkpoint the agents' change is taken back
to; a conflicted binary file, or one deleted on one side, keeps its current content.
"""

from __future__ import annotations

import os
import re
import time

from ..base.errors import MERGE, RewindError
from ..base.note import AGENT, OUTSIDE, Oid
from ..base.repo import SCRATCH_TAKEBACK
from ..store import attribution

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..base.repo import Repo
    from ..store.checkpoints import Checkpoint

CONFLICT_EXIT = 3
_ENV = {"GIT_AUTHOR_NAME": "git-rewind", "GIT_AUTHOR_EMAIL": "git-rewind@localhost",
        "GIT_COMMITTER_NAME": "git-rewind", "GIT_COMMITTER_EMAIL": "git-rewind@localhost",
        "GIT_AUTHOR_DATE": "1700000000 +0000", "GIT_COMMITTER_DATE": "1700000000 +0000"}


class Step:
    """The change from one checkpoint of the work tree to the next (or to the working tree as it is now)."""

    __slots__ = ("seq", "before", "after", "origins", "session")

    def __init__(self, seq: int | None, before: Oid, after: Oid, origins: dict[str, str] | None,
                 session: str | None) -> None:
        self.seq = seq  # the checkpoint the step ends at (None: the working tree now)
        self.before = before
        self.after = after
        self.origins = origins  # None: unknown
        self.session = session  # the agent session its agent changes belong to

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def label(self) -> str:
        return f"#{self.seq}" if self.seq is not None else "the working tree"


class Run:
    """Consecutive steps whose changes are all taken back: reverted as one."""

    __slots__ = ("start", "end", "before", "after", "paths")

    def __init__(self, start: int | None, before: str) -> None:
        self.start = start  # the checkpoint whose state the run goes back to
        self.end: int | None = None
        self.before = before
        self.after = before
        self.paths: set[str] = set()


class Conflict:
    """A path where taking back the agents' change meets a later change of the same lines."""

    __slots__ = ("path", "kind", "ranges", "run")

    def __init__(self, path: str, kind: str, ranges: list[tuple[int, int]], run: Run) -> None:
        self.path = path
        self.kind = kind  # "content", "binary", "deleted" (removed on one side, changed on the other)
        self.ranges = ranges  # 1-based line ranges of the current side in the merged file
        self.run = run

    def describe(self) -> str:
        if self.kind == "content":
            where = ", ".join(f"line {a}" if a == b else f"lines {a}-{b}" for a, b in self.ranges) or "lines"
            return f"{self.path} {where}"
        if self.kind == "binary":
            return f"{self.path} (binary: kept as it is now)"
        return f"{self.path} (deleted on one side, changed on the other: kept as it is now)"


class Outcome:
    """What taking back would leave: the tree, and what was taken back, kept, merged and in conflict."""

    __slots__ = ("tree", "runs", "unknown", "conflicts", "merged", "taken")

    def __init__(self, tree: Oid) -> None:
        self.tree = tree
        self.runs: list[Run] = []
        self.unknown: list[str] = []  # steps whose origins are unknown: their changes are kept
        self.conflicts: list[Conflict] = []
        self.merged: list[str] = []  # taken back in a file changed since as well, merged cleanly
        self.taken: list[str] = []  # every path an agent's change is taken back from


class Conflicts(RewindError):
    """Taking back would overwrite later changes of the same lines: nothing written (exit status 3)."""

    def __init__(self, what: str, conflicts: list[Conflict], retry: str) -> None:
        lines = [f"{what} conflicts with changes made after it; nothing was written:"]
        lines += [f"  {c.describe()}: the agent's change ({_run_label(c.run)}) was changed again later"
                  for c in conflicts[:50]]
        if len(conflicts) > 50:
            lines.append(f"  … and {len(conflicts) - 50} more")
        super().__init__("\n".join(lines), exit_code=CONFLICT_EXIT, remedy=MERGE, details={"retry": retry})
        self.conflicts = conflicts


def _run_label(run: Run) -> str:
    end = f"#{run.end}" if run.end is not None else "now"
    return f"after #{run.start}" if run.start == run.end else f"#{run.start}..{end}"


# the history -------------------------------------------------------------------------------------


def trees(repo: Repo, commits: list[str]) -> dict[str, Oid]:
    """Each commit's tree, through one `git log --no-walk --stdin`."""
    if not commits:
        return {}
    out = repo.git(["log", "--no-walk=unsorted", "--stdin", "--format=%H %T"],
                   input="".join(c + "\n" for c in commits).encode())
    return {commit: Oid(tree) for commit, tree in (line.split() for line in out.decode().splitlines() if line)}


def steps(repo: Repo, items: list[Checkpoint], start: Checkpoint, end: Checkpoint | None,
          current_tree: Oid | None) -> list[Step]:
    """The steps of the work tree's history (ITEMS, one work tree's checkpoints in seq order) after
    START up to END (included), or up to the newest checkpoint and on to CURRENT_TREE when END is None."""
    chain = [c for c in items if c.seq >= start.seq and (end is None or c.seq <= end.seq)]
    tree_of = trees(repo, [c.commit for c in chain])
    found = []
    for before, after in zip(chain, chain[1:], strict=False):
        note = after.note
        session = note.turn.get("session") if note.turn else None
        # Origins hold for the step from the checkpoint they were computed against; across a gap (a checkpoint
        # deleted or gc'd in between, or none known then) they cover part of the change only: unknown.
        origins = note.origins if note.origins_since == before.seq else None
        if origins is not None and note.origins_omitted and len(set(origins.values())) == 1:
            origins = dict(origins)  # the omitted paths share the listed ones' origin: the step is uniform
        found.append(Step(after.seq, tree_of[before.commit], tree_of[after.commit], origins,
                          session if isinstance(session, str) else None))
    if end is None and current_tree is not None:
        newest = tree_of[chain[-1].commit]
        if newest != current_tree:  # what changed since the newest checkpoint: attributed as a checkpoint would be
            from ..store.snapshot import changed_paths

            paths = [p for _s, p in changed_paths(repo, newest, current_tree)]
            origins, turn = attribution.origins(repo, "", None, paths, time.time())
            found.append(Step(None, newest, current_tree, origins,
                              str(turn["session"]) if turn and isinstance(turn.get("session"), str) else None))
    return found


def _uniform(step: Step) -> str | None:
    """The one origin of every change of STEP (None: unknown or mixed)."""
    if step.origins is None:
        return None
    values = set(step.origins.values())
    if not values:
        return OUTSIDE  # a step with no recorded change (same tree, or a rename of nothing): nothing to take
    return values.pop() if len(values) == 1 else None


# taking back -------------------------------------------------------------------------------------


def take_back(repo: Repo, history: list[Step], start: int, current_tree: Oid, sessions: set[str] | None,
              merge: bool) -> Outcome:
    """CURRENT_TREE without the agents' changes in HISTORY (the steps after checkpoint START), every
    other change kept. SESSIONS: only the changes of these agent sessions' turns (None: any agent's)."""
    runs, unknown = _runs(repo, history, start, sessions)
    outcome = Outcome(current_tree)
    outcome.runs = runs
    outcome.unknown = unknown
    if not runs:
        return outcome
    from ..base.gitcmd import FastImport

    # The run's two ends as commits (theirs has the base as its parent), made in one fast-import.
    ends: list[tuple[str, str]] = []
    with FastImport(repo.root) as fi:
        when = 1700000000  # a fixed date: the same run makes the same commits
        for i, run in enumerate(runs):  # a reset first: each base is a root commit
            fi.reset(SCRATCH_TAKEBACK)
            fi.commit(SCRATCH_TAKEBACK, b"taken back: the agents' change\n", when, mark=2 * i + 1)
            fi.write(b'M 040000 ' + run.after.encode() + b' ""\n\n')
            fi.commit(SCRATCH_TAKEBACK, b"taken back: before the agents' change\n", when, mark=2 * i + 2,
                      parents=[f":{2 * i + 1}"])
            fi.write(b"deleteall\n" + b'M 040000 ' + run.before.encode() + b' ""\n\n')
        fi.reset(SCRATCH_TAKEBACK)  # no ref is left: the commits live until git prunes them
        for i in range(len(runs)):
            ends.append((fi.get_mark(2 * i + 1), fi.get_mark(2 * i + 2)))
    tree = current_tree
    conflicted: set[str] = set()
    for run, (base, theirs) in reversed(list(zip(runs, ends, strict=True))):
        tree, found = _revert(repo, run, tree, base, theirs, merge, conflicted)
        outcome.conflicts += found
        conflicted |= {c.path for c in found}
    outcome.tree = tree
    taken = set().union(*(run.paths for run in runs))
    outcome.taken = sorted(taken)
    # Merged: taken back from a file that is not as the agents left it (a later change is kept in it).
    since = set()
    for run in runs:
        since |= differs(repo, run.after, current_tree, sorted(run.paths))
    outcome.merged = sorted(since - conflicted)
    return outcome


def differs(repo: Repo, old: str, new: str, paths: list[str]) -> set[str]:
    """Which of PATHS differ between trees OLD and NEW."""
    if not paths or old == new:
        return set()
    out = repo.git(["diff-tree", "-r", "-z", "--name-only", "--no-renames", old, new, "--",
                    *[":(literal)" + p for p in paths]])
    return {os.fsdecode(p) for p in out.split(b"\0") if p}


def _runs(repo: Repo, history: list[Step], start: int, sessions: set[str] | None) -> tuple[list[Run], list[str]]:
    """(runs to take back, oldest first; labels of steps with unknown origins)."""
    runs: list[Run] = []
    unknown: list[str] = []
    run: Run | None = None
    previous = start
    for step in history:
        if not step.changed:
            previous = step.seq if step.seq is not None else previous
            continue
        origin = _uniform(step)
        wanted = origin == AGENT and (sessions is None or step.session in sessions)
        if origin is None and step.origins is not None and (sessions is None or step.session in sessions):
            # Mixed (an interrupted turn's leftovers beside the person's edits): the outside part first.
            mid = _split(repo, step)
            run = None
            step = Step(step.seq, mid, step.after, {p: o for p, o in step.origins.items() if o == AGENT},
                        step.session)
            wanted = True
        if wanted:
            if run is None:
                run = Run(previous, step.before)
                runs.append(run)
            run.after = step.after
            run.end = step.seq
            run.paths |= set(step.origins or {})
        else:
            if step.origins is None:
                unknown.append(step.label)
            run = None
        previous = step.seq if step.seq is not None else previous
    return runs, unknown


def _split(repo: Repo, step: Step) -> Oid:
    """STEP's before-tree with its outside changes applied: the state between the two parts of a mixed step."""
    outside = [p for p, o in (step.origins or {}).items() if o == OUTSIDE]
    return _edit_tree(repo, step.before, _entries(repo, step.after, outside, removed_if_absent=True))


def _entries(repo: Repo, tree: str, paths: list[str], removed_if_absent: bool) -> dict[str, tuple[str, str] | None]:
    """TREE's (mode, oid) of each of PATHS (None where it has none)."""
    if not paths:
        return {}
    out = repo.git(["ls-tree", "-r", "-z", "--full-tree", tree, "--", *[":(literal)" + p for p in paths]])
    found: dict[str, tuple[str, str] | None] = dict.fromkeys(paths) if removed_if_absent else {}
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, raw = entry.split(b"\t", 1)
        mode, _kind, oid = meta.decode().split()
        found[os.fsdecode(raw)] = (mode, oid)
    return found


def _edit_tree(repo: Repo, tree: Oid, entries: dict[str, tuple[str, str] | None]) -> Oid:
    """TREE with ENTRIES set ((mode, oid)) or removed (None), through a throwaway index."""
    from ..base.scratchindex import edited_tree

    return edited_tree(repo, tree, entries)


def _revert(repo: Repo, run: Run, ours: Oid, base: str, theirs: str, merge: bool,
            conflicted: set[str]) -> tuple[Oid, list[Conflict]]:
    """OURS with RUN reverted: `git merge-tree` of a commit holding OURS (child of BASE) and THEIRS."""
    ours_commit = repo.git(["commit-tree", ours, "-p", base, "-m", "current"], env=_ENV).decode().strip()
    out = repo.git(["merge-tree", "--write-tree", "-z", "--no-messages", ours_commit, theirs], check=False)
    head, _, rest = out.partition(b"\0")
    tree = Oid(head.decode().strip())
    if not re.fullmatch(r"[0-9a-f]{40,64}", tree):
        raise RewindError(f"git merge-tree failed: {out.decode('utf-8', 'replace').strip()[:200]}")
    stages: dict[str, dict[int, tuple[str, str]]] = {}
    for entry in rest.split(b"\0"):
        if not entry:
            break
        meta, raw = entry.split(b"\t", 1)
        mode, oid, stage = meta.decode().split()
        stages.setdefault(os.fsdecode(raw), {})[int(stage)] = (mode, oid)
    if not stages:
        return tree, []
    merged = _entries(repo, tree, list(stages), removed_if_absent=True)
    from ..base.gitcmd import cat_file

    blobs = cat_file([m[1] for m in merged.values() if m is not None], repo.root)
    content = dict(zip([p for p, m in merged.items() if m is not None], blobs, strict=True))
    conflicts: list[Conflict] = []
    fixes: dict[str, tuple[str, str] | None] = {}
    label = f"#{run.start}"
    for path, by_stage in sorted(stages.items()):
        current = by_stage.get(2)  # ours: the tree so far
        blob = content.get(path)
        text = blob[1] if blob is not None else b""
        if path in conflicted:  # already in conflict with a newer run: left as that run left it
            fixes[path] = current
            continue
        if 2 in by_stage and 3 in by_stage and re.search(rb"^<{7} ", text, re.MULTILINE):
            relabelled = _relabel(text, ours_commit, theirs, base, label)
            ours_text = cat_file([by_stage[2][1]], repo.root)[0]
            conflicts.append(Conflict(path, "content", _ranges(relabelled, ours_text[1] if ours_text else b""), run))
            if merge:
                oid = repo.git(["hash-object", "-w", "--stdin"], input=relabelled).decode().strip()
                fixes[path] = (by_stage[2][0], oid)
            else:
                fixes[path] = current
        else:
            kind = "binary" if 2 in by_stage and 3 in by_stage else "deleted"
            conflicts.append(Conflict(path, kind, [], run))
            fixes[path] = current
    return _edit_tree(repo, tree, fixes), conflicts


def _relabel(text: bytes, ours: str, theirs: str, base: str, label: str) -> bytes:
    """git's conflict markers, named for people: `current` and the checkpoint the change goes back to."""
    out = re.sub(rb"^<{7} " + ours.encode() + rb"(:[^\n]*)?$", b"<<<<<<< current", text, flags=re.MULTILINE)
    out = re.sub(rb"^>{7} " + theirs.encode() + rb"(:[^\n]*)?$", b">>>>>>> " + label.encode(), out,
                 flags=re.MULTILINE)
    return re.sub(rb"^\|{7} " + base.encode() + rb"(:[^\n]*)?$", b"||||||| the agents' change", out,
                  flags=re.MULTILINE)


def _ranges(text: bytes, ours: bytes) -> list[tuple[int, int]]:
    """The line ranges, in the current file OURS, of each conflict's current side in the merged TEXT.

    Clean merges above a conflict shift the merged file's lines against the current file's, so each
    current side is looked for in OURS (with the line before it when that is unique); where it
    cannot be placed, the merged file's own line numbers are given."""
    ours_lines = ours.split(b"\n")
    ranges = []
    line = 0  # lines of the merged file outside markers and theirs sides, so far
    side = None
    start = 0
    section: list[bytes] = []
    before: bytes | None = None
    previous: bytes | None = None
    for raw in text.split(b"\n"):
        if raw.startswith(b"<<<<<<< ") and side is None:
            side, start, section, before = "ours", line + 1, [], previous
        elif side == "ours" and (raw.startswith(b"||||||| ") or raw == b"======="):
            ranges.append(_place(ours_lines, section, before) or (start, max(start, line)))
            side = "theirs"
        elif side == "theirs" and raw.startswith(b">>>>>>> "):
            side = None
        elif side != "theirs":
            line += 1
            if side == "ours":
                section.append(raw)
            previous = raw
    return ranges


def _place(lines: list[bytes], section: list[bytes], before: bytes | None) -> tuple[int, int] | None:
    """Where SECTION (preceded by BEFORE, when given) is in LINES, 1-based, if in exactly one place."""
    probe = ([before] if before is not None else []) + section
    if not probe:
        return None
    found = [i for i in range(len(lines) - len(probe) + 1) if lines[i:i + len(probe)] == probe]
    if len(found) != 1:
        return None
    first = found[0] + (1 if before is not None else 0) + 1
    return (first, max(first, first + len(section) - 1))


# the two commands ----------------------------------------------------------------------------------


class Unknown(RewindError):
    """Every change in the range has unknown origins: nothing can be told apart, so nothing is guessed."""


class Planner:
    """The tree an agent-only undo or a revert restores, made from the current tree under the restore's
    lock (restore.rewind's `retarget`); `outcome` holds what the last call found."""

    def __init__(self, repo: Repo, items: list[Checkpoint], start: Checkpoint, end: Checkpoint | None,
                 sessions: set[str] | None, merge: bool, what: str, retry: str,
                 only: list[str] | None = None, cwd: str | None = None) -> None:
        self.repo = repo
        self.items = items
        self.start = start
        self.end = end
        self.sessions = sessions
        self.merge = merge
        self.what = what  # "taking back the agents' changes since #12", for messages
        self.retry = retry  # what else to run, for the conflict message
        self.only = only or []
        self.cwd = cwd
        self.outcome: Outcome | None = None

    def __call__(self, current_tree: Oid) -> Oid:
        history = steps(self.repo, self.items, self.start, self.end, current_tree if self.end is None else None)
        outcome = take_back(self.repo, history, self.start.seq, current_tree, self.sessions, self.merge)
        if self.only:
            wanted = _matching(self.repo, [current_tree, outcome.tree], self.only, self.cwd)
            outcome.conflicts = [c for c in outcome.conflicts if c.path in wanted]
        self.outcome = outcome
        if not outcome.runs and outcome.unknown:
            shown = ", ".join(outcome.unknown[:5]) + ("…" if len(outcome.unknown) > 5 else "")
            raise Unknown(f"attribution is unknown for the changes after #{self.start.seq} ({shown}: taken under "
                          "the minimal tier, or before git-rewind recorded origins): nothing is taken back rather "
                          f"than guessed; git rewind undo {self.start.seq} goes back entirely")
        if outcome.conflicts and not self.merge:
            raise Conflicts(self.what, outcome.conflicts, self.retry)
        return outcome.tree


def _matching(repo: Repo, trees_: list[str], only: list[str], cwd: str | None) -> set[str]:
    """The paths of TREES_ that the git pathspecs ONLY match, read from CWD (git decides)."""
    from ..base import gitcmd
    from ..base.scratchindex import scratch_index

    found: set[str] = set()
    with scratch_index(repo) as empty:
        for tree in dict.fromkeys(trees_):
            out = gitcmd.run(["ls-files", "-z", "--full-name", f"--with-tree={tree}", "--", *only],
                             cwd=cwd or repo.root, env=empty)
            found |= {os.fsdecode(p) for p in out.split(b"\0") if p}
    return found


def agent_only(repo: Repo, items: list[Checkpoint], target: Checkpoint, merge: bool,
               only: list[str] | None = None, cwd: str | None = None) -> Planner:
    """`undo TARGET --agent-only`: every agent's change since TARGET taken back, all else kept."""
    return Planner(repo, items, target, None, None, merge, f"taking back the agents' changes since #{target.seq}",
                   f"git rewind undo {target.seq} goes back entirely", only, cwd)


def turn_end(items: list[Checkpoint], start: Checkpoint) -> Checkpoint | None:
    """Where `revert START` stops: the session's next prompt checkpoint when START is a prompt checkpoint,
    else the session's next checkpoint (None: START is its session's newest here)."""
    later = [c for c in items if c.seq > start.seq and c.session == start.session and c.note.rewind is None]
    if "prompt" in start.note.tags:
        return next((c for c in later if "prompt" in c.note.tags), later[-1] if later else None)
    return later[0] if later else None


def revert(repo: Repo, items: list[Checkpoint], start: Checkpoint, end: Checkpoint | None, merge: bool,
           only: list[str] | None = None, cwd: str | None = None) -> Planner:
    """`revert START [END]`: the agents' changes of the turn START begins (or between START and END) taken
    back, everything later kept."""
    if end is not None:
        if end.seq <= start.seq:
            raise RewindError(f"#{end.seq} is not after #{start.seq}: revert ID ID2 takes back the agents' "
                              "changes from ID to the later ID2")
        return Planner(repo, items, start, end, None, merge,
                       f"reverting the agents' changes from #{start.seq} to #{end.seq}",
                       f"git rewind undo {start.seq} --agent-only takes back everything since", only, cwd)
    stop = turn_end(items, start)
    if stop is None:
        raise RewindError(f"nothing after #{start.seq} in its session {start.session[:12]}: no turn to revert "
                          f"(git rewind undo {start.seq} --agent-only takes back every agent change since)")
    return Planner(repo, items, start, stop, {start.session}, merge,
                   f"reverting the turn #{start.seq}..#{stop.seq}",
                   f"git rewind revert {start.seq} {stop.seq} reverts every agent's changes in between", only, cwd)
