"""Real histories nobody here wrote (../shared/corpus/), replayed commit by commit into a work tree, with what
people do between commits mixed in, and every checkpoint, undo, take-back and blame held against git's own CLI.

Each bundle is cloned and its first-parent commits are written into the files one after another without
touching the user's index (tests/helpers/replay.py). Between commits, drawn from a seed per step: a file
deleted, checkpointed and brought back (a file whose blob has CRLF, half the time); untracked files with
LF, CRLF or binary content; a `git checkout` of a later commit (what a pull does: the user's index and HEAD
move, files arrive by git). Each step is checkpointed by a whole-tree `snap`, by `snap --path` naming the
changed files, or by an agent's hook naming them one by one; with `core.autocrlf` on and off, and with the
file-watcher daemon off or started midway. Held against git:
- every checkpoint's tree is the one `git add -A` + `git write-tree` gives in a copy of the user's index;
- an undo to a sample of checkpoints, and the redo after it, write every file they change exactly as `git
  checkout-index` writes the target's tree, and leave nothing a checkpoint would capture beside it;
- `undo --agent-only` after a turn that applied one real commit and a person who applied the next takes
  back what `git merge-file` says (or refuses, exit 3, where it conflicts);
- `blame` names, for every line, the checkpoint `git blame` finds over the checkpoint chain.

By default each configuration replays a window of WINDOW commits (WINDOWS: fewer for git's own history), at an
offset of its own so that together they cover more of each history (a few minutes in all); GIT_REWIND_REPLAY=full
replays every commit of every bundle in every configuration. Once more per bundle with every command writing its
checkpoints in process (objects.in_process, as the daemon writes them), the daemon on, on half a window. Every
mismatch is collected, named by the bundle, the step and the path (GIT_REWIND_REPLAY_STOP=1: the first one stops
the replay, its repository left as it is).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import daemon as daemon_helper
from helpers import stress
from helpers.replay import Mismatch, Replay, bundle_names, corpus
from helpers.session import Agent
from helpers.workdir import IN_PROCESS, Workdir, git_env

FULL = os.environ.get("GIT_REWIND_REPLAY") == "full"
WINDOW = stress.count(24, 10)  # commits per configuration in the default run (GIT_REWIND_TESTS=fast: 10)
WINDOWS = {"git": stress.count(14, 8)}  # fewer where a step costs more (git's ~4,500 files and many files per commit)
SESSION = "replay"
CONFIGS = [(False, False), (True, False), (False, True), (True, True)]  # (autocrlf, daemon)
SHOWN = 25  # mismatches listed when a replay fails


def _env(home: Path, daemon: bool) -> dict[str, str]:
    env = git_env(home)
    env["GIT_REWIND_DAEMON_MIN_FILES"] = "100000000"  # never started by a hook: the test starts it, midway
    if not daemon:
        env["GIT_REWIND_DAEMON"] = "off"
    return env


def _window(total: int, slot: int, width: int) -> tuple[int, int]:
    """Commits START..END for configuration SLOT of len(CONFIGS): the whole history when FULL."""
    if FULL or total - 1 <= width:
        return 0, total - 1
    start = slot * (total - 1 - width) // (len(CONFIGS) - 1)
    return start, start + width


class Run:
    """One replay of a bundle in one configuration, the checkpoints it took and what disagreed with git."""

    def __init__(self, tmp: Path, bundle: str, autocrlf: bool, daemon: bool, in_process: bool = False) -> None:
        corpus()
        home = tmp / "home"
        home.mkdir()
        self.env = _env(home, daemon)
        self.autocrlf, self.daemon = autocrlf, daemon
        self.r = Replay(tmp, bundle, self.env, autocrlf)
        width = WINDOWS.get(bundle, WINDOW)
        if in_process:  # half the window of the same configuration written by fast-import
            self.r.w.command = IN_PROCESS
            width = max(width // 2, 8)  # the daemon, started midway, must see a few commits even in the quick tier
        self.start, self.end = _window(len(self.r), CONFIGS.index((autocrlf, daemon)), width)
        self.r.begin(self.start)
        self.tmp = tmp
        self.agent = Agent(self.r.w, session="replay-agent", env={"GIT_REWIND_TIER": "minimal"})
        self.taken: list[tuple[int, str]] = []  # (seq, tree) of every checkpoint the replay compared
        self.untracked: list[str] = []
        self.counts = {"checkpoints": 0, "path": 0, "hook": 0, "deleted and back": 0, "checkouts": 0, "undos": 0,
                       "redos": 0, "agent-only": 0, "agent-only conflicts": 0}
        self.mismatches: list[str] = []

    @property
    def w(self) -> Workdir:
        return self.r.w

    def expect(self, check: Callable[[], None]) -> None:
        """Run one comparison with git; a mismatch is kept and the replay goes on."""
        try:
            check()
        except Mismatch as exc:
            if os.environ.get("GIT_REWIND_REPLAY_STOP"):  # the state left as it is at the first one, to look at
                raise
            self.mismatches.append(str(exc))

    def newest(self) -> tuple[int, str]:
        """(seq, tree) of the work tree's newest checkpoint."""
        newest = json.loads(self.w.ok("list", "--json", "-n", "1", "--all"))[0]
        return newest["seq"], self.w.tree_of(newest["commit"])

    # checkpoints ---------------------------------------------------------------------------

    def snap(self, what: str) -> tuple[int, str]:
        taken = json.loads(self.w.ok("snap", "--session", SESSION, "-m", f"{self.r.step}: {what}", "--json"))
        tree = self.w.tree_of(taken["commit"])
        self.expect(lambda: self.r.expect_tree(tree, f"snap ({what}) #{taken['seq']}"))
        self.record(taken["seq"], tree)
        return taken["seq"], tree

    def snap_paths(self, paths: list[str]) -> None:
        args = [a for p in paths for a in ("--path", p)]
        taken = json.loads(self.w.ok("snap", "--session", SESSION, *args, "-m", f"{self.r.step}: --path",
                                     "--json"))
        tree = self.w.tree_of(taken["commit"])
        self.expect(lambda: self.r.expect_tree(tree, f"snap --path {' '.join(paths[:3])} #{taken['seq']}"))
        self.record(taken["seq"], tree)
        self.counts["path"] += 1

    def hook_paths(self, paths: list[str]) -> None:
        """The agent's pre-edit hook naming each changed file in turn (the minimal tier: a known-path
        checkpoint at each); after the last, the tree holds every change."""
        for path in paths:
            self.agent.write(path, "")
        self.agent.stop()  # its turn ends (the minimal tier takes no checkpoint there): what follows is not its
        seq, tree = self.newest()
        self.expect(lambda: self.r.expect_tree(tree, f"the hook's checkpoint #{seq} naming {' '.join(paths[:3])}"))
        self.record(seq, tree)
        self.counts["hook"] += 1

    def record(self, seq: int, tree: str) -> None:
        self.taken.append((seq, tree))
        self.counts["checkpoints"] += 1

    # what people do between commits ----------------------------------------------------------

    def untracked_files(self, rng: random.Random) -> list[str]:
        """Untracked files written or deleted: the paths touched."""
        touched = []
        if self.untracked and rng.random() < 0.3:
            gone = self.untracked.pop(rng.randrange(len(self.untracked)))
            (self.r.path / gone).unlink(missing_ok=True)
            touched.append(gone)
        if rng.random() < 0.4:
            dirs = sorted({os.path.dirname(p) for p in self.tracked_files()})
            name = os.path.join(rng.choice(dirs), f"untracked-{self.r.at}.{rng.choice(['txt', 'c', 'dat'])}")
            content = rng.choice([b"one\ntwo\n", b"one\r\ntwo\r\n", b"mixed\r\nends\n", bytes(range(256)),
                                  b"x" * rng.randrange(1, 3000)])
            target = self.r.path / name
            if not os.path.lexists(target):
                target.write_bytes(content)
                self.untracked.append(name)
                touched.append(name)
        return touched

    def tracked_files(self) -> list[str]:
        out = self.w.git("ls-tree", "-r", "-z", self.r.commits[self.r.at]).split("\0")
        return [r.split("\t", 1)[1] for r in out if r and r.split()[0] in ("100644", "100755")]

    def delete_and_bring_back(self, rng: random.Random) -> None:
        """A tracked file deleted, checkpointed, and brought back as it was (a checkpoint again)."""
        files = [p for p in self.tracked_files() if not p.endswith((".gitattributes", ".gitignore"))
                 and (self.r.path / p).is_file() and not (self.r.path / p).is_symlink()]
        crlf = [p for p in self.r.crlf_blobs() if p in files]
        path = rng.choice(crlf if crlf and rng.random() < 0.5 else files)
        full = self.r.path / path
        content, mode = full.read_bytes(), full.stat().st_mode
        full.unlink()
        self.snap(f"{path} deleted")
        full.write_bytes(content)
        full.chmod(mode)
        self.snap(f"{path} brought back")
        self.counts["deleted and back"] += 1

    # undo, redo, take-back -------------------------------------------------------------------

    def undo_sample(self, rng: random.Random) -> None:
        """Undo to an earlier checkpoint, then redo: each writes what checkout-index writes of its target."""
        if len(self.taken) < 2:
            return
        seq, tree = self.taken[rng.randrange(len(self.taken) - 1)]
        before = self.taken[-1][1]
        self.w.ok("undo", str(seq), "--yes")
        self.counts["undos"] += 1
        self.expect(lambda: self.r.expect_restore(tree, before, f"undo to #{seq}", self.tmp / "stage"))
        self.w.ok("redo", "--yes")
        self.counts["redos"] += 1
        self.expect(lambda: self.r.expect_restore(before, tree, f"redo after the undo to #{seq}", self.tmp / "stage"))

    def agent_only_sample(self, i: int) -> bool:
        """A turn applies commit I (the agent's change), the person then applies commit I+1 (outside, no
        turn); `undo --agent-only` to the turn's prompt checkpoint takes back what `git merge-file` of each
        file says (the person's version, the agent's, the one before), or refuses (exit 3) where one
        conflicts. Redo puts the person's state back. False when the commits rename files (git's merge
        follows renames, merge-file does not) or change nothing: nothing was tried."""
        if self.r.renames(self.r.at, i) or self.r.renames(i, i + 1) or not self.r.changes(self.r.at, i):
            return False
        self.r.step = f"commits {i} and {i + 1}, a turn and the person ({self.r.commits[i][:10]})"
        turn = Agent(self.w, session=f"turn-{i}")
        prompt = turn.prompt("apply the next commit")
        self.r.move(i)
        turn.stop()
        self.r.move(i + 1)
        _seq, person = self.snap("the person's change, after the turn")
        before = self.tree_of_seq(prompt["seq"])
        agent = self.agent_tree(prompt["seq"], turn.session)
        expected, conflicts = self.r.take_back(before, agent, person)
        run = self.w.rewind("undo", str(prompt["seq"]), "--agent-only", "--yes")
        self.counts["agent-only"] += 1
        what = f"undo --agent-only to #{prompt['seq']}"
        if conflicts:
            self.counts["agent-only conflicts"] += 1
            if run.returncode != 3:
                self.mismatches.append(f"{self.r.name}, {self.r.step}: {what} exits {run.returncode}, but git "
                                       f"merge-file conflicts in {', '.join(conflicts[:5])}: {run.stderr.strip()}")
            self.expect(lambda: self.r.expect_restore(person, person, f"{what} (a conflict: nothing written)",
                                                      self.tmp / "stage"))
            return True
        if run.returncode != 0:
            self.mismatches.append(f"{self.r.name}, {self.r.step}: {what} exits {run.returncode} where git "
                                   f"merge-file merges cleanly: {run.stderr.strip()}")
            return True
        self.expect(lambda: self.r.expect_restore(expected, person, what, self.tmp / "stage"))
        self.w.ok("redo", "--yes")
        self.expect(lambda: self.r.expect_restore(person, expected, f"redo after {what}", self.tmp / "stage"))
        return True

    def tree_of_seq(self, seq: int) -> str:
        return self.w.tree_of(json.loads(self.w.ok("show", str(seq), "--json"))["commit"])

    def agent_tree(self, prompt_seq: int, session: str) -> str:
        """The tree at the turn's end: the session's newest checkpoint (the prompt's, if the turn changed nothing)."""
        listed = json.loads(self.w.ok("list", "--json", "--session", session, "-n", "1"))
        return self.w.tree_of(listed[0]["commit"]) if listed else self.tree_of_seq(prompt_seq)

    # the replay ---------------------------------------------------------------------------------

    def play(self) -> None:
        self.r.step = f"commit {self.start} (the clone)"
        self.snap("the clone")
        started = False
        count = max(2, (self.end - self.start) // 25)  # take-back samples: 2 in a default window, 6 in a whole one
        samples = sorted(random.Random(f"{self.r.name} {self.autocrlf} {self.daemon}").sample(
            range(self.start + 2, self.end - 1), count)) if self.end - self.start > 6 else []
        i = self.start
        while i < self.end:
            i += 1
            rng = random.Random(f"{self.r.name} {self.autocrlf} {self.daemon} {i}")
            self.r.step = f"commit {i} ({self.r.commits[i][:10]})"
            if self.daemon and not started and i >= self.start + (self.end - self.start) // 3:
                self.w.ok("daemon", "start")
                started = True
            if samples and i >= samples[0] and i + 1 <= self.end:
                samples.pop(0)
                if self.agent_only_sample(i):
                    i += 1
                    continue
            touched = self.untracked_files(rng)
            if rng.random() < 0.15:
                self.delete_and_bring_back(rng)
            if rng.random() < 0.08 and i + 2 <= self.end:
                self.r.checkout(i + rng.randrange(0, 2))
                self.counts["checkouts"] += 1
                self.snap(f"after git checkout of commit {self.r.at}")
                i = self.r.at
                continue
            changed = self.r.move(i) + touched
            files = [p for p in changed if (self.r.path / p).is_file() or not os.path.lexists(self.r.path / p)]
            how = rng.random()
            if files and len(files) == len(changed) and len(files) <= 40 and how < 0.3:
                self.snap_paths(files)
            elif files and len(files) == len(changed) and len(files) <= 40 and how < 0.5:
                self.hook_paths(files)
            else:
                self.snap(f"{len(changed)} files changed")
            if rng.random() < 0.12:
                self.undo_sample(rng)

    def report(self) -> str:
        return (f"{self.r.name} autocrlf={self.autocrlf} daemon={self.daemon}: commits {self.start}..{self.end}, "
                + ", ".join(f"{v} {k}" for k, v in self.counts.items())
                + f", {self.r.merged} files merged three-way, {len(self.mismatches)} mismatches")


@pytest.mark.parametrize(("autocrlf", "daemon"), CONFIGS, ids=["plain", "autocrlf", "daemon", "autocrlf+daemon"])
@pytest.mark.parametrize("bundle", bundle_names())
def test_a_real_history_replayed_agrees_with_git_at_every_step(
        tmp_path: Path, bundle: str, autocrlf: bool, daemon: bool, daemons: list[Workdir]) -> None:
    _replay(tmp_path, bundle, autocrlf, daemon, daemons, in_process=False)


@pytest.mark.parametrize("bundle", bundle_names())
def test_a_real_history_replayed_in_process_agrees_with_git(tmp_path: Path, bundle: str,
                                                             daemons: list[Workdir]) -> None:
    """The same with every command writing its checkpoints in process (objects.in_process: pygit2 and a long-lived
    `git update-ref`, as the daemon writes them), the daemon started midway, on half a window."""
    _replay(tmp_path, bundle, False, True, daemons, in_process=True)


def _replay(tmp_path: Path, bundle: str, autocrlf: bool, daemon: bool, daemons: list[Workdir],
            in_process: bool) -> None:
    run = Run(tmp_path, bundle, autocrlf, daemon, in_process)
    if daemon:
        daemons.append(run.w)
    run.play()
    print(run.report())
    assert not run.mismatches, f"{run.report()}:\n" + "\n".join(run.mismatches[:SHOWN])
    assert run.counts["checkpoints"] > (run.end - run.start) // 2
    assert run.counts["agent-only"] or run.end - run.start <= 6
    if daemon:  # the daemon answered with the paths that changed, not only with "scan it all"
        assert daemon_helper.answered(run.w)["changes"] > 0


BLAME_WINDOW = 16  # as many in the quick tier: a text file must change twice in it
ROOT = "the first checkpoint"


@pytest.mark.parametrize("bundle", bundle_names())
def test_blame_over_a_real_history_agrees_with_git_blame_of_the_checkpoint_chain(tmp_path: Path, bundle: str) -> None:
    """Commits replayed and checkpointed one by one in one session; for each text file they changed more than
    once, every line's checkpoint by `git rewind blame` is the commit `git blame --first-parent` finds on
    refs/rewind/<session> (its root: a line older than the first checkpoint, "base")."""
    corpus()
    home = tmp_path / "home"
    home.mkdir()
    r = Replay(tmp_path, bundle, _env(home, False), autocrlf=False)
    total = len(r)
    start = 0 if FULL else (total - 1 - BLAME_WINDOW) // 2
    end = total - 1 if FULL else start + BLAME_WINDOW
    r.begin(start)
    w = r.w
    changed: dict[str, int] = {}
    w.ok("snap", "--session", "blame", "-m", "the clone")
    for i in range(start + 1, end + 1):
        for path in r.move(i):
            changed[path] = changed.get(path, 0) + 1
        w.ok("snap", "--session", "blame", "-m", f"commit {i}")
    seq_of = {}
    for commit in w.git("rev-list", "--first-parent", "refs/rewind/blame").split():
        seq_of[commit] = json.loads(w.git("notes", "--ref=rewind", "show", commit))["seq"]
    candidates = [p for p, n in sorted(changed.items(), key=lambda item: (-item[1], item[0])) if n > 1
                  and (r.path / p).is_file() and not (r.path / p).is_symlink()
                  and b"\0" not in (r.path / p).read_bytes()[:8000]]
    assert candidates, "no text file changed twice in the window"
    problems = []
    for path in candidates[:6]:
        ours = json.loads(w.ok("blame", "--json", path))
        out = subprocess.run(["git", "blame", "-l", "-s", "--first-parent", "refs/rewind/blame", "--", path],
                             cwd=r.path, env=w.env, capture_output=True, check=True).stdout
        theirs = _blamed_lines(out)
        if len(ours) != len(theirs):
            problems.append(f"{path}: {len(ours)} lines blamed, git blame has {len(theirs)}")
            continue
        for line, (commit, text) in zip(ours, theirs, strict=True):
            want = None if commit == ROOT else seq_of[commit]
            got = line["seq"] if line["origin"] != "base" else None
            if got != want or line["text"] != text.rstrip(b"\r").decode("utf-8", "replace"):
                problems.append(f"{path}:{line['line']}: git rewind blame says #{got} ({line['origin']}), "
                                f"git blame #{want}")
                break
    assert not problems, f"{bundle}, commits {start}..{end}: " + "; ".join(problems)


def _blamed_lines(out: bytes) -> list[tuple[str, bytes]]:
    """(commit, text) of each line of `git blame -l -s`: "<commit> <n>) <text>", the root commit written
    "^<its id less one digit>" (returned as ROOT)."""
    found = []
    for row in out.split(b"\n")[:-1]:
        meta, _, text = row.partition(b") ")
        commit = meta.split()[0].decode()
        found.append((ROOT if commit.startswith("^") else commit, text))
    return found
