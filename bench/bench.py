#!/usr/bin/env python3
"""Benchmark git-rewind against git's own CLI and the shadow-repository approach.

Builds synthetic repositories (nested directories of ~20 files, a .gitignore with an ignored
node_modules/, a first commit of most files plus some untracked ones) in a temporary directory,
then times whole processes (time.perf_counter around subprocess.run) and prints, per size,
the median of each operation for git-rewind and its baselines, their ratio, and PASS/FAIL
for the targets the performance issue sets. See bench/README.md.

    python bench/bench.py                      # sizes 1000,20000,100000
    python bench/bench.py --quick              # sizes 1000,5000, 3 runs: about a minute
    python bench/bench.py --sizes 20000 --runs 9 --json out.json --breakdown

Run it with the Python of the environment git-rewind is installed in: that interpreter is
the one the `python -c pass` reference line measures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

SESSION = "bench"
PY_BARE = "python -I -S -c pass"
GIT_FLOOR = "git store + restore"  # git's CLI storing the changed files, then restoring (bench.git_floor)
DAEMON_SESSION = "bench-daemon"
FILES_PER_DIR = 20
DEFAULT_SIZES = (1000, 20000, 100000)
QUICK_SIZES = (1000, 5000)
GITIGNORE = b"node_modules/\n__pycache__/\n*.log\n.env\nbuild/\n"
WORDS = ("src lib core util api model view test component service handler config internal "
         "pkg cmd doc asset hook store types parser render client server cache index").split()
EXTS = ("py", "ts", "js", "md", "json", "go", "rs", "c", "h", "txt", "tsx", "css")


# `git rewind undo` as the console script runs it (git_rewind.main.main), with the time spent in the safety
# checkpoint (snapshot.scan, the whole-tree scan the plan is made from, and store.save_locked, which commits it)
# summed and written to $BENCH_SAFETY_OUT: a restore's time excluding the safety scan is the whole process's
# minus that, from the same run. The two are wrapped when their modules load (an import hook), so that an undo
# the daemon answers imports no more than the console script's would (its safety checkpoint is the daemon's).
SAFETY_TIMER = """\
import atexit, os, sys, time
spent = [0.0]
WRAP = {"git_rewind.store.snapshot": "scan", "git_rewind.store.store": "save_locked"}
def timed(function):
    def call(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - start
    return call
class Wrapper:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name not in WRAP:
            return None
        for finder in sys.meta_path:
            spec = None if finder is Wrapper else finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            setattr(module, WRAP[name], timed(getattr(module, WRAP[name])))
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, Wrapper)
from git_rewind.main import main
def report():
    with open(os.environ["BENCH_SAFETY_OUT"], "w") as fh:
        fh.write(repr(spent[0] * 1000))
atexit.register(report)
main()
"""


class BenchError(Exception):
    """A setup step or a correctness check failed: the numbers would mean nothing."""


# processes ---------------------------------------------------------------------------------


def run(args: list[str], cwd: str, env: dict[str, str], input: bytes | None = None,
        check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run a command with stdin not a tty; raise BenchError with its stderr if it fails."""
    proc = subprocess.run(args, cwd=cwd, env=env, input=input,
                          stdin=None if input is not None else subprocess.DEVNULL, capture_output=True)
    if check and proc.returncode != 0:
        raise BenchError(f"{' '.join(args)} (in {cwd}) failed with {proc.returncode}:\n"
                         f"{proc.stdout.decode(errors='replace')}{proc.stderr.decode(errors='replace')}")
    return proc


def out(args: list[str], cwd: str, env: dict[str, str], input: bytes | None = None) -> str:
    return run(args, cwd, env, input).stdout.decode().strip()


def isolated_env(home: str, pycache: str | None) -> dict[str, str]:
    """No user or system git config, a fixed identity: only what the benchmark sets counts.

    With PYCACHE, Python caches bytecode there even if PYTHONDONTWRITEBYTECODE is set (as in
    some sandboxes): an installed package has its bytecode compiled, and recompiling every
    module on every run would be measured instead of git-rewind. The source tree is not touched.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    if pycache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    os.makedirs(os.path.join(home, ".config"), exist_ok=True)
    env.update(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"), GIT_CONFIG_NOSYSTEM="1",
               GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="bench@example.com",
               GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="bench@example.com",
               LC_ALL="C", GIT_PAGER="cat", PAGER="cat")
    return env


def rewind_command() -> list[str]:
    """The installed console script beside this interpreter, else on PATH, else `-m git_rewind`."""
    beside = os.path.join(os.path.dirname(sys.executable), "git-rewind")
    if os.access(beside, os.X_OK):
        return [beside]
    found = shutil.which("git-rewind")
    return [found] if found else [sys.executable, "-m", "git_rewind"]


def rotated(items: list[Any], r: int) -> list[Any]:
    """ITEMS starting at position R: no tool always runs first (after an edit, a sync, ...)."""
    r %= len(items)
    return list(items[r:]) + list(items[:r])


def wait_for_next_second(since: float) -> None:
    """git compares mtimes in whole seconds: an index written in the same second as a file was
    changed keeps that entry 'racy' (re-hashed every time). Let the clock move on first."""
    now = time.time()
    if int(now) <= int(since):
        time.sleep(int(since) + 1.02 - now)


# the synthetic tree --------------------------------------------------------------------------


class Tree:
    """The files of one synthetic repository; every file's content is a function of its path."""

    def __init__(self, root: str, size: int, seed: int) -> None:
        self.root = root
        self.size = size
        self.seed = seed
        rng = random.Random(f"{seed}:{size}:layout")
        text_rng = random.Random(f"{seed}:text")
        tokens = ["def", "return", "import", "class", "self", "value", "if", "else", "for", "in",
                  "const", "let", "function", "=>", "{", "}", "(", ")", "[", "]", "=", "+", "-",
                  "0", "1", "42", "None", "true", "false", "#", "//", "node", "item", "result"]
        lines = []
        for _ in range(20000):
            indent = " " * (4 * text_rng.randint(0, 3))
            lines.append(indent + " ".join(text_rng.choice(tokens + WORDS)
                                           for _ in range(text_rng.randint(2, 12))))
        self._pool = ("\n".join(lines) + "\n").encode()
        # Sizes: log-normal, median ~1.1 KB, mean ~1.8 KB, capped at 64 KB.
        self._sizes = [int(min(65536, max(60, text_rng.lognormvariate(7.0, 1.0)))) for _ in range(4096)]

        untracked = max(10, size // 100)
        dirs = self._layout(rng, -(-size // FILES_PER_DIR))
        self.files: list[str] = []  # every file a snapshot holds, except .gitignore
        counts = [max(1, FILES_PER_DIR + rng.randint(-8, 8)) for _ in dirs]
        while sum(counts) < size:
            counts[rng.randrange(len(counts))] += 1
        while sum(counts) > size:
            i = rng.randrange(len(counts))
            if counts[i] > 1:
                counts[i] -= 1
        for d, n in zip(dirs, counts, strict=True):
            for i in range(n):
                name = f"{rng.choice(WORDS)}_{i}.{rng.choice(EXTS)}"
                self.files.append(f"{d}/{name}" if d else name)
        self.files = list(dict.fromkeys(self.files))
        picked = set(rng.sample(range(len(self.files)), untracked))
        self.untracked = [f for i, f in enumerate(self.files) if i in picked]
        self.tracked = [f for i, f in enumerate(self.files) if i not in picked]
        self.executable = {f for f in self.files if zlib.crc32(f.encode()) % 97 == 0}
        self.ignored = self._ignored_paths(rng, dirs)

    @staticmethod
    def _layout(rng: random.Random, wanted: int) -> list[str]:
        """Directory paths, breadth first, 2-6 subdirectories each: depth grows like a real tree."""
        dirs = [""]
        i = 0
        while len(dirs) < wanted:
            parent = dirs[i]
            for j in range(rng.randint(2, 6)):
                if len(dirs) >= wanted:
                    break
                name = f"{rng.choice(WORDS)}{j}"
                dirs.append(f"{parent}/{name}" if parent else name)
            i += 1
        return dirs

    def _ignored_paths(self, rng: random.Random, dirs: list[str]) -> list[str]:
        paths = []
        for i in range(min(5000, max(100, self.size // 10))):
            paths.append(f"node_modules/pkg{i // 25}/lib/mod{i % 25}.js")
        for d in dirs[:: 50]:
            for i in range(3):
                paths.append(f"{d}/__pycache__/m{i}.pyc" if d else f"__pycache__/m{i}.pyc")
        paths.append("debug.log")
        paths.append(".env")
        return paths

    def content(self, rel: str, tag: str = "") -> bytes:
        """A file's base content (unique per path), with an edit marker when TAG is given."""
        h = zlib.crc32(f"{self.seed}:{rel}".encode())
        size = self._sizes[h % len(self._sizes)]
        start = (h >> 12) % (len(self._pool) - size)
        body = b"# " + rel.encode() + b"\n" + self._pool[start:start + size]
        return body + (f"\n// edit {tag}\n".encode() if tag else b"")

    def write(self, rel: str, data: bytes) -> None:
        full = os.path.join(self.root, rel)
        try:
            fh = open(full, "wb")
        except FileNotFoundError:
            os.makedirs(os.path.dirname(full), exist_ok=True)
            fh = open(full, "wb")
        with fh:
            fh.write(data)
        if rel in self.executable:
            os.chmod(full, 0o755)

    def modify(self, paths: list[str], tag: str) -> float:
        """Give PATHS new content; returns the time, for racy-entry bookkeeping."""
        for rel in paths:
            self.write(rel, self.content(rel, tag))
        return time.time()

    def pick(self, kind: str, k: int, run_no: int) -> list[str]:
        """The same K files for every tool in run RUN_NO of KIND (fixed seed)."""
        rng = random.Random(f"{self.seed}:{self.size}:{kind}:{k}:{run_no}")
        return sorted(rng.sample(self.files, min(k, len(self.files))))


# one benchmark repository ------------------------------------------------------------------------


@dataclass
class Op:
    """One measured operation: samples in milliseconds."""

    name: str
    tool: str
    samples: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.samples) if self.samples else float("nan")


class Bench:
    """A repository of SIZE files and the state of the three tools on it."""

    def __init__(self, base: str, size: int, seed: int, runs: int, heavy_runs: int,
                 env: dict[str, str], rewind: list[str], log: Callable[[str], None]) -> None:
        self.dir = os.path.join(base, f"n{size}")
        self.repo = os.path.join(self.dir, "repo")
        self.shadow = os.path.join(self.dir, "shadow.git")
        self.cli_index = os.path.join(self.dir, "cli.index")
        self.scratch_index = os.path.join(self.dir, "scratch.index")
        self.size = size
        self.runs = runs
        self.heavy_runs = heavy_runs
        self.env = env
        self.rewind = rewind
        self.log = log
        self.cli_env = {**env, "GIT_INDEX_FILE": self.cli_index}
        self.cli_prev: str | None = None
        self.last_change = 0.0
        self.ops: dict[tuple[str, str], Op] = {}
        self.notes: list[str] = []
        self.breakdown = False
        self.traces: list[dict[str, Any]] = []
        self.user_index_digest = ""
        self.daemon_mode = False
        self.daemon_info: dict[str, Any] = {}
        os.makedirs(self.repo)
        self.tree = Tree(self.repo, size, seed)

    # helpers ---------------------------------------------------------------------------------

    def git(self, *args: str, env: dict[str, str] | None = None, input: bytes | None = None) -> str:
        return out(["git", *args], self.repo, env or self.env, input)

    def shadow_git(self, *args: str) -> list[str]:
        return ["git", f"--git-dir={self.shadow}", "--work-tree=.", *args]

    def record(self, name: str, tool: str, ms: float) -> None:
        self.ops.setdefault((name, tool), Op(name, tool)).samples.append(ms)

    def median(self, name: str, tool: str) -> float:
        op = self.ops.get((name, tool))
        return op.median if op else float("nan")

    def timed(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> float:
        """Wall time of FN(*ARGS, **KWARGS) in ms: the processes it runs, end to end."""
        start = time.perf_counter()
        fn(*args, **kwargs)
        return (time.perf_counter() - start) * 1000

    def modify(self, paths: list[str], tag: str) -> None:
        self.last_change = self.tree.modify(paths, tag)

    def user_index(self) -> str:
        with open(os.path.join(self.repo, ".git", "index"), "rb") as fh:
            return str(zlib.crc32(fh.read()))

    # setup -----------------------------------------------------------------------------------

    def build(self) -> None:
        self.build_repo()
        self.prime_tools()

    def build_repo(self) -> None:
        """The repository alone: files, one packed commit, untracked files, a fresh user index."""
        start = time.perf_counter()
        t = self.tree
        self.git("init", "-q", "-b", "main")
        with open(os.path.join(self.repo, ".gitignore"), "wb") as fh:
            fh.write(GITIGNORE)
        for rel in t.tracked:
            t.write(rel, t.content(rel))
        for rel in t.ignored:
            t.write(rel, b"ignored " + rel.encode() + b"\n")
        self.log(f"  wrote the files in {time.perf_counter() - start:.1f} s")
        # The first commit through fast-import: one pack, as in a clone, without writing
        # (and then repacking) a loose object per file.
        self.import_commit("refs/heads/main", [".gitignore", *t.tracked])
        for rel in t.untracked:
            t.write(rel, t.content(rel))
        self.last_change = time.time()
        wait_for_next_second(self.last_change)
        self.git("reset", "-q")  # index = HEAD with fresh stat data and cache-tree, like after a commit
        self.user_index_digest = self.user_index()
        self.log(f"  built {len(t.tracked)} tracked + {len(t.untracked)} untracked files, "
                 f"{len(t.ignored)} ignored, in {time.perf_counter() - start:.1f} s")

    def prime_tools(self) -> None:
        # Each tool's first snapshot, then a warm one once the clock has moved on. The CLI's
        # private index and the shadow repository start from the user's index and objects
        # (untimed; the timed first snapshots come later).
        start = time.perf_counter()
        self.rewind_snap()
        shutil.copyfile(os.path.join(self.repo, ".git", "index"), self.cli_index)
        self.cli_snapshot()
        run(["git", "init", "-q", "--bare", self.shadow], self.repo, self.env)
        self.git("push", "-q", self.shadow, "main:main")
        shutil.copyfile(os.path.join(self.repo, ".git", "index"), os.path.join(self.shadow, "index"))
        self.shadow_snapshot()
        wait_for_next_second(time.time())
        self.rewind_snap()
        self.cli_snapshot()
        self.shadow_snapshot()
        self.log(f"  tools primed in {time.perf_counter() - start:.1f} s")
        self.check_trees("after the first warm snapshot")

    def import_commit(self, ref: str, paths: list[str]) -> None:
        proc = subprocess.Popen(["git", "fast-import", "--quiet", "--done"], cwd=self.repo, env=self.env,
                                stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdin is not None
        w = proc.stdin.write
        w(f"commit {ref}\ncommitter Bench <bench@example.com> 1700000000 +0000\n".encode())
        w(b"data 8\ninitial\n\n")
        for rel in paths:
            data = GITIGNORE if rel == ".gitignore" else self.tree.content(rel)
            mode = b"100755" if rel in self.tree.executable else b"100644"
            w(b"M " + mode + b" inline " + rel.encode() + b"\ndata %d\n" % len(data) + data + b"\n")
        w(b"\ndone\n")
        proc.stdin.close()
        err = proc.stderr.read() if proc.stderr else b""
        if proc.wait() != 0:
            raise BenchError(f"git fast-import failed: {err.decode(errors='replace')}")

    # the tools -------------------------------------------------------------------------------

    def rewind_snap(self, *extra: str, expect: str | None = None) -> str:
        """`git rewind snap` without the daemon (in --daemon mode its socket is moved aside first)."""
        self.daemon_visible(False)
        return self._snap(SESSION, extra, expect)

    def _snap(self, session: str, extra: tuple[str, ...], expect: str | None) -> str:
        proc = run([*self.rewind, "snap", "--session", session, *extra], self.repo, self.env)
        text = proc.stdout.decode().strip()
        if expect and not re.match(expect, text):
            raise BenchError(f"git rewind snap {' '.join(extra)}: expected /{expect}/, got {text!r}\n"
                             f"{proc.stderr.decode(errors='replace')}")
        return text

    # the daemon (--daemon) -------------------------------------------------------------------
    # One daemon per repository, started before the warm rows and kept running. The rows of
    # git-rewind without it run in the same repository, interleaved, with the daemon's socket
    # moved aside (a command then finds no daemon and scans the whole tree, as without one);
    # the daemon keeps watching, and since it is not told of those scans, its next answer still
    # names every path changed since its own last checkpoint. Each tool has a session of its own,
    # so each one's tip is the tree of its own last scan, as in a real session.

    @property
    def daemon_sock(self) -> str:
        return os.path.join(self.repo, ".git", "rewind", "daemon.sock")

    def daemon_visible(self, on: bool) -> None:
        """Put the daemon's socket where commands look for it (ON), or aside."""
        if not self.daemon_mode:
            return
        aside = self.daemon_sock + ".bench-aside"
        src, dst = (aside, self.daemon_sock) if on else (self.daemon_sock, aside)
        if os.path.exists(src):
            os.replace(src, dst)

    def daemon_status(self) -> dict[str, Any]:
        """`git rewind daemon status --json` (the socket put in place first)."""
        self.daemon_visible(True)
        info: dict[str, Any] = json.loads(out([*self.rewind, "daemon", "status", "--json"], self.repo, self.env))
        return info

    def answered(self) -> tuple[int, int]:
        info = self.daemon_status()
        a = info.get("answered")
        if not info.get("running") or not isinstance(a, dict):
            raise BenchError(f"the daemon is not running: {info}")
        return int(a["changes"]), int(a["full"])

    def served_undos(self) -> int:
        """How many `git rewind undo ID --yes` the daemon ran (`served`)."""
        served = self.daemon_status().get("served") or {}
        return int(served.get("undo", 0))

    def daemon_start(self) -> None:
        self.daemon_visible(True)
        run([*self.rewind, "daemon", "start"], self.repo, self.env)

    def daemon_stop(self) -> None:
        self.daemon_visible(True)
        run([*self.rewind, "daemon", "stop"], self.repo, self.env)

    def daemon_snap(self, *extra: str, expect: str | None = None, how: str = "changes") -> str:
        """`git rewind snap` answered by the daemon, checked: HOW is "changes" (it named the changed
        paths) or "full" (it asked for a full scan); anything else fails the bench."""
        before = self.answered()
        text = self._snap(DAEMON_SESSION, extra, expect)
        self.daemon_check(before, how)
        return text

    def daemon_check(self, before: tuple[int, int], how: str) -> None:
        after = self.answered()
        want = (before[0] + 1, before[1]) if how == "changes" else (before[0], before[1] + 1)
        if after != want:
            info = self.daemon_status()
            raise BenchError(f"a snap with the daemon was not answered with {how}: answered (changes, full) "
                             f"went from {before} to {after}; last full scan: {info.get('last_full')!r}")

    def timed_daemon_snap(self, expect: str) -> float:
        """Wall time of the snap alone; the answered-check around it is untimed."""
        before = self.answered()
        ms = self.timed(self._snap, DAEMON_SESSION, (), expect)
        self.daemon_check(before, "changes")
        return ms

    def daemon_warm(self) -> None:
        """Start the daemon (untimed: it scans the tree once, its base) and take a first checkpoint with it."""
        self.daemon_start()
        wait_for_next_second(self.last_change)
        self.daemon_snap(how="changes")
        self.daemon_snap(how="changes")

    def daemon_idle(self, seconds: float) -> dict[str, Any]:
        """The daemon's resident memory, and the CPU time it used over SECONDS of doing nothing."""
        info = self.daemon_status()
        pid = int(info["pid"])
        ticks = os.sysconf("SC_CLK_TCK")

        def cpu() -> int:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
        first = cpu()
        time.sleep(seconds)
        used = cpu() - first
        return {"pid": pid, "memory_kib": info.get("memory_kib"), "watched": info.get("watched"),
                "idle_seconds": seconds, "idle_cpu_ms": used * 1000 / ticks}

    def cli_snapshot(self) -> None:
        """git's CLI with a private index: add -A, write-tree, commit-tree, update-ref."""
        run(["git", "add", "-A"], self.repo, self.cli_env)
        self.cli_commit()

    def cli_first(self) -> None:
        """cli_snapshot into a fresh private index, with its `add -A` also recorded on its own."""
        self.record("first snapshot, add -A alone", "cli", self.timed(run, ["git", "add", "-A"], self.repo,
                                                                        self.cli_env))
        self.cli_commit()

    def cli_commit(self) -> None:
        tree = run(["git", "write-tree"], self.repo, self.cli_env).stdout.decode().strip()
        parent = ["-p", self.cli_prev] if self.cli_prev else []
        commit = run(["git", "commit-tree", tree, *parent, "-m", "x"], self.repo,
                     self.cli_env).stdout.decode().strip()
        run(["git", "update-ref", "refs/x", commit], self.repo, self.cli_env)
        self.cli_prev = commit

    def cli_path(self, rel: str) -> None:
        """The CLI's known-path snapshot: hash-object -w, update-index --cacheinfo, write-tree, ..."""
        oid = run(["git", "hash-object", "-w", "--", rel], self.repo, self.cli_env).stdout.decode().strip()
        mode = "100755" if rel in self.tree.executable else "100644"
        run(["git", "update-index", "--add", "--cacheinfo", f"{mode},{oid},{rel}"], self.repo, self.cli_env)
        tree = run(["git", "write-tree"], self.repo, self.cli_env).stdout.decode().strip()
        commit = run(["git", "commit-tree", tree, "-p", str(self.cli_prev), "-m", "x"], self.repo,
                     self.cli_env).stdout.decode().strip()
        run(["git", "update-ref", "refs/x", commit], self.repo, self.cli_env)
        self.cli_prev = commit

    def shadow_snapshot(self) -> None:
        # Auto gc off: a detached `gc --auto` would steal a core from later measurements.
        run(self.shadow_git("add", "-A"), self.repo, self.env)
        run(self.shadow_git("-c", "gc.auto=0", "-c", "maintenance.auto=false", "commit", "-q",
                            "-m", "x", "--allow-empty"), self.repo, self.env)

    def shadow_first(self) -> None:
        run(["git", "init", "-q", "--bare", self.shadow], self.repo, self.env)
        self.shadow_snapshot()

    def rewind_forget(self) -> None:
        """A fresh start for git-rewind: no .git/rewind/, no refs/rewind/*, no refs/notes/rewind."""
        shutil.rmtree(os.path.join(self.repo, ".git", "rewind"), ignore_errors=True)
        refs = self.git("for-each-ref", "--format=%(refname)", "refs/rewind/", "refs/notes/rewind")
        if refs:
            self.git("update-ref", "--stdin",
                     input="".join(f"delete {r}\n" for r in refs.splitlines()).encode())

    def sync(self, tool: str, wait: bool = True) -> None:
        """Bring TOOL's state up to date with the work tree, untimed, before its timed runs.

        Inside a loop (WAIT false) the files changed this second are the ones the timed run
        changes again anyway, so their racy index entries cost nothing extra.
        """
        if wait:
            wait_for_next_second(self.last_change)
        if tool == "rewind":
            self.rewind_snap()
        elif tool == "rewind+daemon":
            self.daemon_snap()
        elif tool == "cli":
            self.cli_snapshot()
        else:
            self.shadow_snapshot()

    def tools(self) -> list[str]:
        return ["rewind", "cli", "shadow", *(["rewind+daemon"] if self.daemon_mode else [])]

    # correctness -------------------------------------------------------------------------------

    def scratch_tree(self) -> str:
        """The tree `git add -A` writes from an empty index: what a snapshot must equal."""
        if os.path.exists(self.scratch_index):
            os.unlink(self.scratch_index)
        env = {**self.env, "GIT_INDEX_FILE": self.scratch_index}
        run(["git", "add", "-A"], self.repo, env)
        tree = out(["git", "write-tree"], self.repo, env)
        os.unlink(self.scratch_index)
        return tree

    def check_trees(self, when: str, tools: tuple[str, ...] = ("rewind", "cli", "shadow")) -> None:
        expected = self.scratch_tree()
        found = {}
        if "rewind" in tools:
            found[f"git-rewind refs/rewind/{SESSION}"] = self.git("rev-parse",
                                                                   f"refs/rewind/{SESSION}^{{tree}}")
        if "rewind+daemon" in tools:
            found[f"git-rewind+daemon refs/rewind/{DAEMON_SESSION}"] = self.git(
                "rev-parse", f"refs/rewind/{DAEMON_SESSION}^{{tree}}")
        if "cli" in tools:
            found["git CLI refs/x"] = self.git("rev-parse", "refs/x^{tree}")
        if "shadow" in tools:
            found["shadow HEAD"] = out(["git", f"--git-dir={self.shadow}", "rev-parse", "HEAD^{tree}"],
                                       self.repo, self.env)
        bad = {k: v for k, v in found.items() if v != expected}
        if bad:
            detail = "; ".join(f"{k} has {v}" for k, v in bad.items())
            diff = ""
            for v in bad.values():
                diff += self.git("diff-tree", "-r", "--name-status", expected, v)[:2000]
            raise BenchError(f"{when}: `git add -A` from a scratch index gives tree {expected}, "
                             f"but {detail}\n(scratch -> snapshot):\n{diff}")
        if self.user_index() != self.user_index_digest:
            raise BenchError(f"{when}: the user's .git/index changed")

    # the measurements --------------------------------------------------------------------------

    # Every operation runs its tools interleaved, in a rotating order, so that load from
    # elsewhere on the machine falls on all of them alike. Edits are unique per run and tool:
    # no tool finds its new blobs already written by another one.

    def measure_warm_unchanged(self) -> None:
        for tool in self.tools():
            self.sync(tool)
        tools: list[tuple[str, Callable[[], Any]]] = [
            ("rewind", lambda: self.rewind_snap(expect=r"unchanged since #\d+")),
            ("rewind --allow-empty", lambda: self.rewind_snap("--allow-empty", expect=r"#\d+ ")),
            ("cli", self.cli_snapshot),
            ("shadow", self.shadow_snapshot),
        ]
        if self.daemon_mode:
            tools.append(("rewind+daemon", lambda: None))
        for r in range(self.runs):
            for tool, fn in rotated(tools, r):
                if tool == "rewind+daemon":
                    ms = self.timed_daemon_snap(r"unchanged since #\d+")
                else:
                    ms = self.timed(fn)
                self.record("warm, no change", tool, ms)
        self.sync("rewind")
        self.traced("warm, no change", ["snap", "--session", SESSION])

    def measure_warm_changes(self, k: int) -> None:
        name = f"warm, {k} changed"
        tools: list[tuple[str, Callable[[], Any]]] = [
            ("rewind", lambda: self.rewind_snap(expect=r"#\d+ ")),
            ("cli", self.cli_snapshot),
            ("shadow", self.shadow_snapshot),
        ]
        if self.daemon_mode:
            tools.append(("rewind+daemon", lambda: None))
        for r in range(self.runs):
            for tool, fn in rotated(tools, r):
                self.sync(tool, wait=False)  # untimed: other tools' edits are not this run's changes
                self.modify(self.tree.pick("warm", k, r), f"warm{k}-{r}-{tool}")
                if tool == "rewind+daemon":
                    ms = self.timed_daemon_snap(r"#\d+ ")
                else:
                    ms = self.timed(fn)
                self.record(name, tool, ms)
        for tool, _fn in tools:
            self.sync(tool)
        self.check_trees(f"after '{name}'", tuple(self.tools()))
        self.traced(name, ["snap", "--session", SESSION],
                    partial(self.modify, self.tree.pick("trace", k, 0), f"trace-{k}"))

    def measure_path(self) -> None:
        for r in range(self.runs):
            rel = self.tree.pick("path", 1, r)[0]
            for tool in rotated(["rewind", "cli"], r):
                self.sync(tool, wait=False)
                self.modify([rel], f"path-{r}-{tool}")
                if tool == "rewind":
                    ms = self.timed(self.rewind_snap, "--path", rel, expect=r"#\d+ ")
                    # Checked at once, untimed: what --path wrote is what a full scan sees.
                    if r == self.runs - 1:
                        self.check_trees("after a --path snapshot", ("rewind",))
                else:
                    ms = self.timed(self.cli_path, rel)
                    if r == self.runs - 1:
                        self.check_trees("after the git CLI's --path equivalent", ("cli",))
                self.record("--path, 1 changed", tool, ms)
        text = self.rewind_snap()
        if text.startswith("#"):  # the last edit was the CLI's, made after git-rewind's run
            text = self.rewind_snap()
        if not text.startswith("unchanged"):
            self.notes.append(f"after the --path runs a second full `snap` still found changes: {text!r}")
        rel = self.tree.pick("trace-path", 1, 0)[0]
        self.traced("--path, 1 changed", ["snap", "--session", SESSION, "--path", rel],
                    partial(self.modify, [rel], "trace-path"))

    def measure_first(self) -> None:
        warm_first = []
        # The shadow repository writes every object again: ~20 s at 100k files here, so it runs
        # once on large trees (its figure is an order of magnitude off either way).
        shadow_runs = self.heavy_runs if self.size < 50000 else 1
        for r in range(self.heavy_runs):
            tools = ["rewind", "cli", "shadow"] if r < shadow_runs else ["rewind", "cli"]
            if self.daemon_mode:
                tools.append("rewind+daemon")
            for tool in rotated(tools, r):
                # New untracked content, as in a fresh clone: none of it is in any object store.
                self.modify(self.tree.untracked, f"first-{r}-{tool}")
                if tool == "rewind+daemon":
                    self.measure_first_daemon(r, r == self.heavy_runs - 1)
                    continue
                if tool == "rewind":
                    self.rewind_forget()
                    fn: Callable[[], Any] = partial(self.rewind_snap, expect=r"#1 ")
                elif tool == "cli":
                    os.unlink(self.cli_index)
                    self.cli_prev = None
                    fn = self.cli_first
                else:
                    shutil.rmtree(self.shadow)
                    fn = self.shadow_first
                self.record("first snapshot", tool, self.timed(fn))
                last = r == (shadow_runs if tool == "shadow" else self.heavy_runs) - 1
                if last:
                    self.check_trees(f"after a first snapshot ({tool})", (tool,))
                if tool == "rewind":  # a warm snapshot right after, for first/warm
                    wait_for_next_second(self.last_change)
                    # One file changed (an untracked one: the tree stays HEAD + untracked files).
                    self.modify([self.tree.untracked[r % len(self.tree.untracked)]], f"firstwarm-{r}")
                    warm_first.append(self.timed(self.rewind_snap, expect=r"#2 "))
                    if last:
                        self.check_trees("after the warm snapshot that follows a first one", ("rewind",))
        self.ops[("warm after first", "rewind")] = Op("warm after first", "rewind", warm_first)
        if self.daemon_mode:
            self.daemon_warm()  # for the warm rows

        def fresh() -> None:
            self.modify(self.tree.untracked, "trace-first")
            self.rewind_forget()
        self.traced("first snapshot", ["snap", "--session", SESSION], fresh)

    def measure_first_daemon(self, r: int, last: bool) -> None:
        """The first checkpoint with the daemon starting: `git rewind daemon start` (it returns once the
        daemon answers, every directory watched) then `git rewind snap`, timed together from a fresh
        start (no .git/rewind/, no checkpoint). The daemon scans the whole tree once before it answers
        anyone (`daemon start` returns after that), so it answers that snap with the changed paths (none),
        as it must the warm snap after it."""
        self.rewind_forget()
        start = time.perf_counter()
        self.daemon_start()
        started = time.perf_counter()
        self._snap(DAEMON_SESSION, (), r"#1 ")
        end = time.perf_counter()
        self.record("first snapshot", "rewind+daemon", (end - start) * 1000)
        self.record("first snapshot, daemon start alone", "rewind+daemon", (started - start) * 1000)
        self.record("first snapshot, snap alone", "rewind+daemon", (end - started) * 1000)
        if self.answered() != (1, 0):
            raise BenchError(f"the first snap after `daemon start` was not answered with the changed paths: "
                             f"{self.daemon_status()}")
        if last:
            self.check_trees("after a first snapshot (rewind+daemon)", ("rewind+daemon",))
        wait_for_next_second(self.last_change)
        self.modify([self.tree.untracked[r % len(self.tree.untracked)]], f"firstwarm-daemon-{r}")
        self.record("warm after first", "rewind+daemon", self.timed_daemon_snap(r"#2 "))
        if last:
            self.check_trees("after the warm snapshot that follows a first one (rewind+daemon)",
                             ("rewind+daemon",))
        self.daemon_stop()

    def measure_idle(self) -> None:
        """The daemon's memory and its CPU time over 10 s of nothing happening."""
        self.daemon_info = self.daemon_idle(10.0)

    def measure_restore(self, k: int) -> None:
        """Restore K files: `git rewind undo` (with --daemon: also with the daemon answering its safety
        checkpoint, and `python -I -S -c pass` for scale) against `git restore --source`, interleaved."""
        name = f"restore {k} files"
        self.sync("rewind")
        self.sync("cli")
        target = self.rewind_snap("--allow-empty", "-m", "restore target", expect=r"#\d+ ")
        seq = target.split()[0].lstrip("#")
        source = str(self.cli_prev)
        rewind_tree = self.git("rev-parse", f"refs/rewind/{SESSION}^{{tree}}")
        if rewind_tree != self.git("rev-parse", f"{source}^{{tree}}"):
            raise BenchError("before the restore runs: git-rewind's and the git CLI's trees differ")
        tools = ["rewind", "cli", GIT_FLOOR, PY_BARE, *(["rewind+daemon"] if self.daemon_mode else [])]
        for r in range(self.runs):
            paths = self.tree.pick("restore", k, r)
            for tool in rotated(tools, r):
                if tool == PY_BARE:
                    self.record(name, tool, self.timed(run, [sys.executable, "-I", "-S", "-c", "pass"],
                                                       self.dir, self.env))
                    continue
                before = {p: self.read(p) for p in paths}
                self.modify(paths, f"restore{k}-{r}-{tool}")
                if tool.startswith("rewind"):
                    ms = self.timed_undo(seq, tool, len(paths), oracle=r == 0)
                    self.check_contents(before, f"git rewind undo ({name}, {tool})")
                    if tool == "rewind":  # (with the daemon answering, its safety checkpoint is the daemon's)
                        self.record(name, tool + " excl. safety", ms - self.safety_ms())
                else:
                    ms = self.timed(self.git_floor if tool == GIT_FLOOR else self.git_restore, source, paths)
                    self.check_contents(before, f"{tool} ({name})")
                    # Untimed: the private index as the next snapshot would leave it.
                    run(["git", "add", "-A"], self.repo, self.cli_env)
                self.record(name, tool, ms)
        if self.user_index() != self.user_index_digest:
            raise BenchError(f"{name}: the user's .git/index changed")
        prep = partial(self.modify, self.tree.pick("trace-restore", k, 0), f"trace-restore-{k}")
        self.daemon_visible(False)
        self.traced(name, ["undo", seq, "--yes"], prep, safety=True)
        if self.daemon_mode:
            self.daemon_visible(True)
            prep = partial(self.modify, self.tree.pick("trace-restore-daemon", k, 0), f"trace-restore-d-{k}")
            self.traced(name + " +daemon", ["undo", seq, "--yes"], prep, safety=True)

    def git_restore(self, source: str, paths: list[str]) -> None:
        run(["git", "restore", f"--source={source}", "--worktree", "--", "."], self.repo, self.cli_env)

    def git_floor(self, source: str, paths: list[str]) -> None:
        """What an undo that keeps the files it replaces costs git's own CLI: the changed files stored
        (`hash-object -w`, as `git add` stores them), then `git restore`."""
        run(["git", "hash-object", "-w", "--stdin-paths"], self.repo, self.cli_env, input="\n".join(paths).encode())
        self.git_restore(source, paths)

    def timed_undo(self, seq: str, tool: str, k: int, oracle: bool) -> float:
        """One timed `git rewind undo SEQ --yes` of K changed files; with the daemon (TOOL rewind+daemon) the
        daemon must have run it (its `served` undos) and answered the safety checkpoint with the changed paths.
        ORACLE: the safety checkpoint's tree must be `git add -A`'s from a scratch index, taken (untimed) right
        before."""
        expected = self.scratch_tree() if oracle else None
        daemon = tool == "rewind+daemon"
        asked = self.answered() if daemon else None
        undos = self.served_undos() if daemon else 0
        self.daemon_visible(daemon)
        done: list[subprocess.CompletedProcess[bytes]] = []
        ms = self.timed(self.rewind_undo, seq, done)
        text = done[0].stdout.decode()
        if f"restored #{seq}: {k} written, 0 removed" not in text:
            raise BenchError(f"git rewind undo {seq} ({tool}): expected {k} written, got {text!r}")
        if asked is not None:
            self.daemon_check(asked, "changes")
            if self.served_undos() != undos + 1:
                raise BenchError(f"git rewind undo {seq} (+daemon): the daemon did not run it")
        if expected is not None:
            safety = re.search(r"safety checkpoint #\d+ ([0-9a-f]+)", text)
            found = self.git("rev-parse", f"{safety.group(1)}^{{tree}}") if safety else None
            if found != expected:
                raise BenchError(f"git rewind undo ({tool}): the safety checkpoint's tree {found} is not "
                                 f"`git add -A`'s {expected}")
        return ms

    def rewind_undo(self, seq: str, done: list[subprocess.CompletedProcess[bytes]]) -> None:
        """`git rewind undo SEQ --yes`, as the console script runs it, timing its safety checkpoint (SAFETY_TIMER)."""
        done.append(run(self.undo_command(seq), self.repo, {**self.env, "BENCH_SAFETY_OUT": self.safety_file}))

    def undo_command(self, seq: str) -> list[str]:
        timer = os.path.join(self.dir, "safety_timer.py")
        if not os.path.exists(timer):
            with open(timer, "w") as fh:
                fh.write(SAFETY_TIMER)
        return [sys.executable, timer, "undo", seq, "--yes"]

    @property
    def safety_file(self) -> str:
        return os.path.join(self.dir, "safety-ms")

    def safety_ms(self) -> float:
        """What the last undo spent in its safety checkpoint (scan + commit), in ms."""
        with open(self.safety_file) as fh:
            return float(fh.read())

    def read(self, rel: str) -> bytes:
        with open(os.path.join(self.repo, rel), "rb") as fh:
            return fh.read()

    def check_contents(self, expected: dict[str, bytes], what: str) -> None:
        for rel, data in expected.items():
            with open(os.path.join(self.repo, rel), "rb") as fh:
                if fh.read() != data:
                    raise BenchError(f"{what}: {rel} does not have its checkpointed content")

    # where the time goes -------------------------------------------------------------------------

    def traced(self, label: str, args: list[str], prep: Callable[[], None] | None = None,
               safety: bool = False) -> None:
        """With --breakdown: one more run of a git-rewind command, with the git processes it ran
        and their times (GIT_TRACE2_EVENT); whatever is left is Python's. SAFETY (an undo): also the
        time its safety checkpoint took (SAFETY_TIMER)."""
        if not self.breakdown:
            return
        if prep:
            prep()
        trace = os.path.join(self.dir, "trace2.json")
        if os.path.exists(trace):
            os.unlink(trace)
        env = {**self.env, "GIT_TRACE2_EVENT": trace, "BENCH_SAFETY_OUT": self.safety_file}
        command = self.undo_command(args[1]) if safety else [*self.rewind, *args]
        start = time.perf_counter()
        run(command, self.repo, env)
        total = (time.perf_counter() - start) * 1000
        item = {"op": label, "total_ms": total, "git": parse_trace2(trace)}
        if safety:
            item["safety_ms"] = self.safety_ms()
        self.traces.append(item)


def parse_trace2(path: str) -> list[dict[str, Any]]:
    """Top-level git processes in a GIT_TRACE2_EVENT file: argv and elapsed ms, in start order."""
    procs: dict[str, dict[str, Any]] = {}
    try:
        with open(path) as fh:
            events = [json.loads(line) for line in fh if line.strip()]
    except FileNotFoundError:
        return []
    for ev in events:
        sid = ev.get("sid", "")
        if "/" in sid:
            continue  # a child of a git process: already inside its parent's time
        if ev.get("event") == "start":
            procs[sid] = {"argv": " ".join(ev.get("argv", [])[1:]), "ms": None}
        elif ev.get("event") in ("exit", "atexit") and sid in procs:
            procs[sid]["ms"] = float(ev.get("t_abs", 0)) * 1000
    return [p for p in procs.values() if p["ms"] is not None]


# reporting --------------------------------------------------------------------------------------


def short(n: int) -> str:
    return f"{n / 1000:g}k" if n >= 1000 else str(n)


def fmt_ms(value: float) -> str:
    return "-" if value != value else f"{value:,.1f}"


def fmt_ratio(value: float) -> str:
    return "-" if value != value else f"{value:.2f}x"


def verdict(ratio: float, limit: float) -> str:
    if ratio != ratio:
        return "n/a"
    return "PASS" if ratio <= limit else "FAIL"


def size_rows(b: Bench) -> tuple[list[list[str]], list[dict[str, Any]]]:
    """Table rows and the targets of one size."""
    rows: list[list[str]] = []
    targets: list[dict[str, Any]] = []

    def row(label: str, name: str, rewind_tool: str = "rewind", target: str = "",
            cli_tool: str = "cli", limit: float | None = None) -> None:
        mine = b.median(name, rewind_tool)
        cli = b.median(name, cli_tool)
        shadow = b.median(name, "shadow")
        ratio = mine / cli
        cell = ""
        if limit is not None:
            v = verdict(ratio, limit)
            cell = f"<={limit:.1f}x git CLI: {v}"
            targets.append({"size": b.size, "target": f"{label} <= {limit}x git CLI", "ratio": ratio,
                            "verdict": v})
        rows.append([label, fmt_ms(mine), fmt_ms(cli), fmt_ratio(ratio), fmt_ms(shadow),
                     fmt_ratio(mine / shadow), cell or target])

    row("warm, no change (no commit)", "warm, no change", limit=1.0)
    row("warm, no change --allow-empty", "warm, no change", "rewind --allow-empty", limit=1.0)
    row("warm, 1 changed", "warm, 1 changed", limit=1.0)
    row("warm, 100 changed", "warm, 100 changed", limit=1.0)
    row("--path, 1 changed", "--path, 1 changed", target="see summary")
    row("first snapshot", "first snapshot")
    first = b.median("first snapshot", "rewind")
    warm = b.median("warm, no change", "rewind --allow-empty")
    ratio = first / warm
    v = verdict(ratio, 2.0)
    rows[-1][-1] = f"first/warm {ratio:.2f}x <=2x: {v}"
    targets.append({"size": b.size, "target": "first snapshot <= 2x warm (--allow-empty)", "ratio": ratio,
                    "verdict": v})
    rows.append(["  (warm right after first)", fmt_ms(b.median("warm after first", "rewind")), "", "", "", "",
                 f"first/this {first / b.median('warm after first', 'rewind'):.2f}x"])
    for k in (1, 100, 1000):
        kk = min(k, len(b.tree.files))
        row(f"restore {kk} files", f"restore {kk} files", limit=1.0 if k == 1000 else None)
        row("  excl. safety checkpoint", f"restore {kk} files", "rewind excl. safety")
    return rows, targets


def warm_limit(size: int) -> float:
    """The issue's target for a warm checkpoint of one changed file with the daemon, against git's CLI."""
    return 0.25 if size >= 100000 else 0.5 if size >= 20000 else 1.5


MEMORY_LIMIT_KIB = 150 * 1024  # at 100k files


def restore_rows(b: Bench) -> tuple[list[list[str]], list[dict[str, Any]]]:
    """Restores of one size, whole process, safety checkpoint included: git-rewind with the daemon (--daemon)
    and without it against `git restore --source` and `python -I -S -c pass` of the same interpreter, all from
    the same interleaved runs. Targets (issue 27): with the daemon at most the larger of 1.0x git restore and
    3x python -I -S; without it at most 1.5x that."""
    rows: list[list[str]] = []
    targets: list[dict[str, Any]] = []
    for k in (1, 100, 1000):
        name = f"restore {min(k, len(b.tree.files))} files"
        cli, bare = b.median(name, "cli"), b.median(name, PY_BARE)
        bound = max(cli, 3 * bare)
        basis = "git restore" if bound == cli else "3x python -I -S"
        floor = b.median(name, GIT_FLOOR)
        rows.append([f"{name}, git's CLI storing the changed files first", fmt_ms(floor), "", fmt_ms(cli),
                     fmt_ratio(floor / cli), fmt_ms(3 * bare), fmt_ratio(floor / (3 * bare)),
                     f"floor: {floor / bound:.2f}x max(git restore, 3x py -I -S)"])
        for tool, label, limit in (("rewind+daemon", "+daemon", 1.0), ("rewind", "no daemon", 1.5)):
            mine = b.median(name, tool)
            if mine != mine:
                continue
            v = verdict(mine / bound, limit)
            cell = f"<={limit:g}x max(git restore, 3x py -I -S) ({basis}): {v}"
            targets.append({"size": b.size, "target": f"{name}, {label} <= {limit:g}x max(git restore, 3x "
                            f"python -I -S)", "ratio": mine / bound, "verdict": v})
            rows.append([f"{name}, {label}", fmt_ms(mine), fmt_ms(b.median(name, tool + " excl. safety")),
                         fmt_ms(cli), fmt_ratio(mine / cli), fmt_ms(3 * bare), fmt_ratio(mine / (3 * bare)), cell])
    return rows, targets


RESTORE_HEADER = ["operation", "git-rewind", "excl. safety", "git restore", "ratio", "3x py -I -S", "ratio",
                  "target"]


def daemon_rows(b: Bench) -> tuple[list[list[str]], list[dict[str, Any]]]:
    """The --daemon table of one size: git-rewind with the daemon against git-rewind without it and git's CLI."""
    rows: list[list[str]] = []
    targets: list[dict[str, Any]] = []

    def row(label: str, name: str, limit: float | None = None, cli_name: str | None = None,
            cli_tool: str = "cli") -> None:
        mine = b.median(name, "rewind+daemon")
        plain = b.median(name, "rewind")
        cli = b.median(cli_name or name, cli_tool)
        ratio = mine / cli
        cell = ""
        if limit is not None:
            v = verdict(ratio, limit)
            cell = f"<={limit:g}x git CLI: {v}"
            targets.append({"size": b.size, "target": f"daemon: {label} <= {limit}x git CLI", "ratio": ratio,
                            "verdict": v})
        rows.append([label, fmt_ms(mine), fmt_ms(plain), fmt_ratio(mine / plain), fmt_ms(cli), fmt_ratio(ratio),
                     cell])

    row("warm, no change (no commit)", "warm, no change", 0.5 if b.size >= 20000 else None)
    row("warm, 1 changed", "warm, 1 changed", warm_limit(b.size))
    row("warm, 100 changed", "warm, 100 changed")
    row("first snapshot, daemon starting", "first snapshot", 2.0, "first snapshot, add -A alone")
    rows[-1][4:6] = [rows[-1][4] + " (add -A)", rows[-1][5]]
    for part in ("daemon start alone", "snap alone"):
        ms = b.median(f"first snapshot, {part}", "rewind+daemon")
        rows.append([f"  (of which {part})", fmt_ms(ms), "", "", "", "", ""])
    row("  (warm right after first)", "warm after first")
    rows[-1][4:6] = ["", ""]
    info = b.daemon_info
    if info:
        mem = info.get("memory_kib")
        cell = ""
        if b.size >= 100000 and isinstance(mem, int):
            v = "PASS" if mem < MEMORY_LIMIT_KIB else "FAIL"
            cell = f"<150 MB: {v}"
            targets.append({"size": b.size, "target": "daemon memory < 150 MB", "ratio": mem / MEMORY_LIMIT_KIB,
                            "verdict": v})
        rows.append([f"daemon memory (VmRSS), {info.get('watched')} dirs watched",
                     f"{mem / 1024:.1f} MB" if isinstance(mem, int) else "-", "", "", "", "", cell])
        cpu = float(info["idle_cpu_ms"])
        v = "PASS" if cpu == 0 else "FAIL"
        targets.append({"size": b.size, "target": f"daemon CPU over {info['idle_seconds']:g} s idle = 0",
                        "ratio": cpu, "verdict": v})
        rows.append([f"daemon CPU over {info['idle_seconds']:g} s idle", f"{cpu:.0f} ms", "", "", "", "",
                     f"0 ms: {v}"])
    return rows, targets


DAEMON_HEADER = ["operation", "+daemon", "git-rewind", "ratio", "git CLI", "ratio", "target"]


def print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    print(f"\n{title}")
    line = "  ".join(h.ljust(w) if i in (0, len(header) - 1) else h.rjust(w)
                     for i, (h, w) in enumerate(zip(header, widths, strict=True)))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(c.ljust(w) if i in (0, len(r) - 1) else c.rjust(w)
                        for i, (c, w) in enumerate(zip(r, widths, strict=True))))


HEADER = ["operation", "git-rewind", "git CLI", "ratio", "shadow", "ratio", "target"]


def reference_lines(runs: int, env: dict[str, str], cwd: str) -> list[tuple[str, float]]:
    cases = [
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ('python -c "import pygit2"', [sys.executable, "-c", "import pygit2"]),
        ("git version (one git process)", ["git", "version"]),
    ]
    result = []
    for label, args in cases:
        samples = []
        for _ in range(max(runs, 5)):
            start = time.perf_counter()
            proc = subprocess.run(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True)
            samples.append((time.perf_counter() - start) * 1000)
            if proc.returncode != 0:
                samples = [float("nan")]
                break
        result.append((label, statistics.median(samples)))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", help="comma-separated file counts (default 1000,20000,100000)")
    parser.add_argument("--runs", type=int, help="timed runs per operation (default 7; --quick: 3)")
    parser.add_argument("--heavy-runs", type=int,
                        help="runs of the first-snapshot comparison (default: min(runs, 3); --quick: 1)")
    parser.add_argument("--quick", action="store_true", help="sizes 1000,5000 and 3 runs: under a minute")
    parser.add_argument("--seed", type=int, default=20240611, help="random seed of the trees and edits")
    parser.add_argument("--json", metavar="FILE", help="also write every sample and median to FILE")
    parser.add_argument("--breakdown", action="store_true",
                        help="trace one run of each git-rewind operation: the git processes and their ms")
    parser.add_argument("--tmpdir", help="where to build the repositories (default: the system's temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the repositories afterwards")
    parser.add_argument("--python-env-as-is", action="store_true",
                        help="do not give Python a bytecode cache (PYTHONPYCACHEPREFIX) in the temp dir")
    parser.add_argument("--daemon", action="store_true",
                        help="the snapshot and restore rows, with git-rewind's file-watcher daemon as one more tool")
    parser.add_argument("--restore", action="store_true",
                        help="the restore rows only (with --daemon: with the daemon and without, interleaved)")
    args = parser.parse_args(argv)

    sizes = [int(s.replace("_", "").replace("k", "000")) for s in args.sizes.split(",")] if args.sizes \
        else list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    runs = args.runs or (3 if args.quick else 7)
    heavy = args.heavy_runs or (1 if args.quick else min(runs, 3))
    rewind = rewind_command()
    base = tempfile.mkdtemp(prefix="git-rewind-bench-", dir=args.tmpdir)
    env = isolated_env(os.path.join(base, "home"),
                       None if args.python_env_as_is else os.path.join(base, "pycache"))
    for _ in range(2):  # fill the bytecode cache
        run([*rewind, "--version"], base, env)
        run([sys.executable, "-c", "import git_rewind.faces.snapcmd, git_rewind.store.store, git_rewind.faces.cli, "
             "git_rewind.ops.restore, pygit2"], base, env)
    load = os.getloadavg()
    git_version = out(["git", "--version"], base, env)
    started = time.perf_counter()
    print(f"git-rewind bench: sizes {', '.join(f'{s:,}' for s in sizes)}; {runs} runs "
          f"({heavy} for first snapshots); seed {args.seed}")
    print(f"{git_version}; Python {platform.python_version()} ({sys.executable}); "
          f"{os.cpu_count()} CPUs; git-rewind: {' '.join(rewind)}; in {base}")
    print("medians of whole-process wall time in ms; ratio = git-rewind / baseline")
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
          + ("  (WARNING: something else is running; numbers will be noisy)" if load[0] > 0.7 else ""))
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and not args.python_env_as_is:
        print("PYTHONDONTWRITEBYTECODE is set here: bytecode is cached in the temp dir instead "
              "(--python-env-as-is to measure without a cache)")

    report: dict[str, Any] = {
        "meta": {"git": git_version, "python": sys.executable, "python_version": platform.python_version(),
                 "cpus": os.cpu_count(), "platform": platform.platform(), "seed": args.seed, "runs": runs,
                 "heavy_runs": heavy, "rewind_command": rewind, "sizes": sizes},
        "reference": {}, "sizes": {}, "targets": [], "breakdown": {}, "notes": [],
    }
    refs = reference_lines(runs, env, base)
    report["reference"] = {label: ms for label, ms in refs}
    print_table("reference", ["process", "median ms"], [[label, fmt_ms(ms)] for label, ms in refs])

    benches: list[Bench] = []
    failed = False
    try:
        for size in sizes:
            print(f"\nbuilding {size:,} files ...", flush=True)
            b = Bench(base, size, args.seed, runs, heavy, env, rewind, lambda m: print(m, flush=True))
            b.breakdown = args.breakdown
            b.daemon_mode = args.daemon
            benches.append(b)
            b.build()
            restores: list[tuple[str, Callable[[], None]]] = [
                (f"restore {k}", partial(b.measure_restore, min(k, len(b.tree.files)))) for k in (1, 100, 1000)]
            steps: list[tuple[str, Callable[[], None]]] = [
                ("first snapshot", b.measure_first),  # first: the tree is HEAD + untracked files only
                ("warm, no change", b.measure_warm_unchanged),
                ("warm, 1 changed", partial(b.measure_warm_changes, 1)),
                ("warm, 100 changed", partial(b.measure_warm_changes, 100)),
            ]
            if args.restore:  # (with --daemon: started for them, stopped after)
                steps = [("daemon start", b.daemon_warm), *restores, ("daemon stop", b.daemon_stop)] \
                    if args.daemon else restores
            elif args.daemon:
                steps += [*restores, ("daemon idle", b.measure_idle), ("daemon stop", b.daemon_stop)]
            else:
                steps += [("--path", b.measure_path), *restores]
            for label, step in steps:
                t0 = time.perf_counter()
                step()
                print(f"  {label}: {time.perf_counter() - t0:.1f} s", flush=True)
            t = b.tree
            title = (f"== {size:,} files ({len(t.tracked):,} tracked + {len(t.untracked):,} untracked; "
                     f"{len(t.ignored):,} ignored) ==")
            if args.daemon or args.restore:
                targets: list[dict[str, Any]] = []
                if not args.restore:
                    rows, targets = daemon_rows(b)
                    print_table(title + "  with the daemon", DAEMON_HEADER, rows)
                rows, more = restore_rows(b)
                targets += more
                print_table(title + "  restores" + ("  with the daemon and without" if args.daemon else ""),
                            RESTORE_HEADER, rows)
                report["daemon"] = {**report.get("daemon", {}), str(size): b.daemon_info}
            else:
                rows, targets = size_rows(b)
                print_table(title, HEADER, rows)
            for note in b.notes:
                print(f"NOTE: {note}")
            report["sizes"][str(size)] = {
                "files": len(t.files), "tracked": len(t.tracked), "untracked": len(t.untracked),
                "ignored": len(t.ignored),
                "ops": [{"op": op.name, "tool": op.tool, "median_ms": op.median, "samples_ms": op.samples}
                        for op in b.ops.values()],
            }
            report["targets"] += targets
            report["notes"] += [f"{size}: {n}" for n in b.notes]
            if args.breakdown:
                report["breakdown"][str(size)] = b.traces
                print_breakdown(b.traces)
            # Kept until the end: the --path comparison across sizes runs on all of them.
    except BenchError as exc:
        print(f"\nABORTED: {exc}", file=sys.stderr)
        failed = True

    for b in benches:  # never leave a daemon behind, whatever happened
        if b.daemon_mode and os.path.isdir(os.path.join(b.repo, ".git", "rewind")):
            b.daemon_visible(True)
            run([*rewind, "daemon", "stop"], b.repo, env, check=False)
    if len(benches) >= 2 and not failed and not args.daemon and not args.restore:
        try:
            path_summary(benches, 2 * runs, report)
        except BenchError as exc:
            print(f"\nABORTED: {exc}", file=sys.stderr)
            failed = True
    return finish(report, load, started, args, base, failed)


def finish(report: dict[str, Any], load: tuple[float, float, float], started: float, args: argparse.Namespace,
           base: str, failed: bool) -> int:
    """Print the targets and the load, write --json, remove the repositories unless --keep; the exit code."""
    if report["targets"]:
        print("\ntargets:")
        for t in report["targets"]:
            print(f"  {t['verdict']:4}  {t['size']:>7,} files  {t['target']}: {t['ratio']:.2f}x")
    load_end = os.getloadavg()
    report["meta"]["loadavg_start"] = list(load)
    report["meta"]["loadavg_end"] = list(load_end)
    print(f"\ntotal {time.perf_counter() - started:.0f} s; load average at the end: "
          f"{load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1)
        print(f"wrote {args.json}")
    if args.keep:
        print(f"kept {base}")
    else:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if failed else 0


def path_summary(benches: list[Bench], runs: int, report: dict[str, Any]) -> None:
    """--path on every size again, interleaved: a ratio across sizes must not be load drift."""
    print(f"\n--path across sizes: {runs} more runs, interleaved over the sizes ...", flush=True)
    samples: dict[tuple[int, str], list[float]] = {}
    for r in range(runs):
        for b in rotated(benches, r):
            rel = b.tree.pick("path-across", 1, r)[0]
            for tool in rotated(["rewind", "cli"], r):
                b.sync(tool, wait=False)  # --path carries the rest of the tree from the tip
                b.modify([rel], f"across-{r}-{tool}")
                if tool == "rewind":
                    ms = b.timed(b.rewind_snap, "--path", rel, expect=r"#\d+ ")
                else:
                    ms = b.timed(b.cli_path, rel)
                samples.setdefault((b.size, tool), []).append(ms)
                if r == runs - 1:
                    b.check_trees("after the --path runs across sizes", (tool,))
    small, large = benches[0], benches[-1]

    def med(size: int, tool: str) -> float:
        return statistics.median(samples[(size, tool)])

    rows = []
    for tool, label in (("rewind", "git-rewind --path"), ("cli", "git CLI (hash-object + update-index)")):
        ratio = med(large.size, tool) / med(small.size, tool)
        v = verdict(ratio, 1.2)
        if tool == "rewind":
            report["targets"].append({"size": large.size, "ratio": ratio, "verdict": v,
                                      "target": f"--path {large.size} <= 1.2x --path {small.size}"})
        rows.append([label, *(fmt_ms(med(b.size, tool)) for b in benches), fmt_ratio(ratio),
                     f"<=1.2x: {v}" if tool == "rewind" else ""])
    report["path_across_sizes"] = {f"{size} {tool}": v for (size, tool), v in samples.items()}
    print_table("summary: --path snapshot across sizes (interleaved runs)",
                ["tool", *(f"{b.size:,} files" for b in benches),
                 f"{short(large.size)}/{short(small.size)}", "target"], rows)


def print_breakdown(items: list[dict[str, Any]]) -> None:
    print("\nbreakdown (one traced run each; git processes by trace2 t_abs; the rest is Python. A restore's\n"
          "processes overlap: ls-files runs beside the scan and cat-file beside the writes, so there 'git' counts\n"
          "some time twice and 'rest' is less than Python's share)")
    for item in items:
        git_ms = sum(p["ms"] for p in item["git"])
        print(f"  {item['op']}: total {item['total_ms']:.1f} ms, git {git_ms:.1f} ms "
              f"({len(item['git'])} processes), rest {item['total_ms'] - git_ms:.1f} ms")
        if item["op"].endswith("+daemon"):
            print("      the daemon ran it: its safety checkpoint, the restore and every git process it started")
        elif "safety_ms" in item:
            print(f"      safety checkpoint (scan + commit, in-process) {item['safety_ms']:.1f} ms; "
                  f"the restore without it {item['total_ms'] - item['safety_ms']:.1f} ms")
        for p in item["git"]:
            print(f"      {p['ms']:8.1f}  git {p['argv'][:110]}")


if __name__ == "__main__":
    sys.exit(main())
