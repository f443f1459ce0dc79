#!/usr/bin/env python3
"""What `git rewind watch -- PROGRAM` costs the program it wraps, and what its checkpoints cost.

Builds the synthetic repositories of bench.py, then measures, interleaved in a rotating order:

1. The program's start: time from launching until its first byte of output on a pipe, for
   `python3 -c "print(1)"` and `echo`, run alone, under `git-rewind watch --`, and after a
   `git-rewind snap` (the start checkpoint alone, which watch takes before it spawns the program).
   Medians and ratios to the program alone.
2. A settle checkpoint: one file, then 100 files changed; the time `watch` spends on its checkpoint
   (the barrier, the ignored-file check and store.save, in this process as in the resident watch),
   against `git add -A && git write-tree` with a private index on the same tree.

    python bench/watch_bench.py                    # sizes 1000,20000
    python bench/watch_bench.py --quick            # size 1000, 7 runs
    python bench/watch_bench.py --sizes 5k --runs 21 --json out.json

Run it with the Python of the environment git-rewind is installed in. See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from bench import Bench, fmt_ms, isolated_env, rewind_command, rotated

DEFAULT_SIZES = (1000, 20000)
SESSION = "bench-watch"


def first_output(args: list[str], cwd: str, env: dict[str, str]) -> float:
    """Milliseconds from launching ARGS until its first byte on stdout; waits for it to end (untimed)."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    select.select([proc.stdout], [], [], 60)
    elapsed = (time.perf_counter() - start) * 1000
    proc.stdout.read(1)
    proc.communicate(timeout=120)
    return elapsed


def snap_then(args: list[str], rewind: list[str], cwd: str, env: dict[str, str]) -> float:
    """The start checkpoint taken first (`snap`), then the program: until its first byte."""
    start = time.perf_counter()
    subprocess.run([*rewind, "snap", "--session", SESSION + "-first", "--allow-empty", "-m", "start"], cwd=cwd,
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1000 + first_output(args, cwd, env)


def start_rows(b: Bench, rewind: list[str], runs: int) -> list[dict[str, Any]]:
    # python -c print, for scale: any wrapper written in Python starts an interpreter before the program.
    programs = {"python3 -c print": [sys.executable, "-c", "print(1)"], "echo": ["/bin/echo", "1"]}
    samples: dict[tuple[str, str], list[float]] = {}
    for r in range(runs):
        for name, args in rotated(list(programs.items()), r):
            ways = [("alone", lambda a=args: first_output(a, b.repo, b.env)),
                    ("watch --", lambda a=args: first_output([*rewind, "watch", "--session", SESSION, "--", *a],
                                                             b.repo, b.env)),
                    ("snap, then", lambda a=args: snap_then(a, rewind, b.repo, b.env))]
            for way, measure in rotated(ways, r):
                samples.setdefault((name, way), []).append(measure())
    rows = []
    for name in programs:
        alone = statistics.median(samples[(name, "alone")])
        for way in ("alone", "watch --", "snap, then"):
            median = statistics.median(samples[(name, way)])
            rows.append({"size": b.size, "program": name, "way": way, "median_ms": median,
                         "added_ms": median - alone, "ratio": median / alone})
    return rows


def settle_rows(b: Bench, runs: int) -> list[dict[str, Any]]:
    """A settle checkpoint in a resident watch (this process), against git add -A + write-tree."""
    from git_rewind.base import config
    from git_rewind.base.repo import Repo
    from git_rewind.watching import watch

    os.environ.clear()
    os.environ.update(b.env)
    os.chdir(b.repo)
    repo = Repo.find(b.repo)
    settings = config.for_repo(repo)
    session = watch.Session(repo, settings, SESSION + "-settle", "bench")
    loop = watch.Loop(session, 1500)
    loop.open()
    loop.checkpoint("start", final=True)
    index = os.path.join(b.dir, "watch-bench.index")
    git_env = {**b.env, "GIT_INDEX_FILE": index}
    subprocess.run(["git", "add", "-A"], cwd=b.repo, env=git_env, check=True)
    samples: dict[tuple[int, str], list[float]] = {}
    try:
        for r in range(runs):
            for k in (1, 100):
                for tool in rotated(["watch", "git add -A + write-tree"], r):
                    b.modify(b.tree.pick(f"settle-{tool}", k, r), f"{tool}{r}")
                    time.sleep(0.05)
                    if tool == "watch":
                        loop._read_events()  # what the event loop has done by the time the tree settles
                        start = time.perf_counter()
                        result = loop.checkpoint()
                        elapsed = (time.perf_counter() - start) * 1000
                        assert result is not None, "the settle checkpoint found no change"
                    else:
                        start = time.perf_counter()
                        subprocess.run(["git", "add", "-A"], cwd=b.repo, env=git_env, check=True)
                        subprocess.run(["git", "write-tree"], cwd=b.repo, env=git_env, check=True,
                                       stdout=subprocess.DEVNULL)
                        elapsed = (time.perf_counter() - start) * 1000
                    samples.setdefault((k, tool), []).append(elapsed)
    finally:
        loop.close()
    rows = []
    for k in (1, 100):
        git = statistics.median(samples[(k, "git add -A + write-tree")])
        ours = statistics.median(samples[(k, "watch")])
        rows.append({"size": b.size, "changed": k, "watch_ms": ours, "git_ms": git, "ratio": ours / git})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=None, help="comma-separated file counts (1k, 20k ...)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=20240611)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    sizes = [int(s.lower().replace("k", "000")) for s in args.sizes.split(",")] if args.sizes else (
        [1000] if args.quick else list(DEFAULT_SIZES))
    runs = 7 if args.quick and args.runs == 15 else args.runs
    base = tempfile.mkdtemp(prefix="watch-bench-")
    home = os.path.join(base, "home")
    env = {**isolated_env(home, os.path.join(base, "pycache")), "GIT_REWIND_DAEMON": "off"}
    rewind = rewind_command()
    report: dict[str, Any] = {"start": [], "settle": [], "runs": runs, "loadavg_start": os.getloadavg()}
    try:
        for size in sizes:
            print(f"building {size:,} files ...", flush=True)
            b = Bench(base, size, args.seed, runs, 1, env, rewind, lambda m: None)
            b.build_repo()
            subprocess.run([*rewind, "snap", "--session", "warm"], cwd=b.repo, env=env, check=True,
                           stdout=subprocess.DEVNULL)
            report["start"] += start_rows(b, rewind, runs)
            report["settle"] += settle_rows(b, runs)
        print(f"\nthe program's start (first byte of output), median of {runs}:")
        print(f"  {'files':>7}  {'program':<18} {'way':<11} {'median':>9} {'added':>9} {'ratio':>6}")
        for row in report["start"]:
            print(f"  {row['size']:>7,}  {row['program']:<18} {row['way']:<11} {fmt_ms(row['median_ms']):>9} "
                  f"{fmt_ms(row['added_ms']):>9} {row['ratio']:>5.2f}x")
        print(f"\na settle checkpoint, median of {runs}:")
        print(f"  {'files':>7}  {'changed':>7}  {'watch':>9}  {'git add -A + write-tree':>24}  {'ratio':>6}")
        for row in report["settle"]:
            print(f"  {row['size']:>7,}  {row['changed']:>7}  {fmt_ms(row['watch_ms']):>9}  "
                  f"{fmt_ms(row['git_ms']):>24}  {row['ratio']:>5.2f}x")
        report["loadavg_end"] = os.getloadavg()
        print(f"\nload average: {report['loadavg_start'][0]:.2f} at the start, {report['loadavg_end'][0]:.2f} "
              "at the end")
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(report, fh, indent=1)
    finally:
        os.chdir("/")
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
