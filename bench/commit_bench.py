"""What the git hooks (`git rewind install --git-hooks`) add to `git commit`.

Builds a repository of --files files (--lines lines each) with --checkpoints checkpoints (`git rewind
snap`, each changing a few files), then copies it: one copy gets no hooks, one the git hooks, one the git
hooks and a running daemon (which then answers them). Each run changes 1 file, then 100 files (a line
appended to each, as the person would), in each copy, and times `git commit -qam` there, whole process,
interleaved; a hooked commit writes the authorship note of every added line (blame's engine over the
checkpoints for each changed file). Also `python -I -S -c pass`, the interpreter start every hook pays, for
scale. Prints medians, the ratios and the absolute extra time.

    python bench/commit_bench.py                    # 300 files, 50 checkpoints, 7 runs
    python bench/commit_bench.py --checkpoints 200 --runs 9

See bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b", "GIT_CONFIG_NOSYSTEM": "1", "GIT_REWIND_ANTI_SPAM_SECONDS": "0"}


def rewind_command() -> list[str]:
    beside = os.path.join(os.path.dirname(sys.executable), "git-rewind")
    return [beside] if os.path.exists(beside) else [shutil.which("git-rewind") or "git-rewind"]


def name(i: int) -> str:
    return f"src/d{i % 20:02d}/f{i}.py"


def append(root: str, path: str, text: str) -> None:
    with open(os.path.join(root, path), "a") as fh:
        fh.write(text)


def build(root: str, files: int, lines: int, checkpoints: int, env: dict[str, str]) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", root], check=True, env=env)
    for i in range(files):
        full = os.path.join(root, name(i))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as fh:
            fh.write("".join(f"def f{i}_{n}(): return {n}\n" for n in range(lines)))
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=root, check=True, env=env)
    for n in range(checkpoints):
        for i in range(n * 7, n * 7 + 5):
            append(root, name(i % files), f"# checkpoint {n}\n")
        subprocess.run([*rewind_command(), "snap", "-m", f"step {n}"], cwd=root, check=True, env=env,
                       capture_output=True)
    subprocess.run(["git", "commit", "-qam", "checkpointed work"], cwd=root, check=True, env=env)


VARIANTS = ("plain", "hooked", "daemon")  # no hooks; the hooks alone; the hooks answered by the daemon


def timed_commit(root: str, files: list[str], run: int, env: dict[str, str]) -> float:
    for path in files:
        append(root, path, f"# run {run}\n")
    start = time.perf_counter()
    proc = subprocess.run(["git", "commit", "-qam", f"run {run}"], cwd=root, env=env, capture_output=True)
    took = time.perf_counter() - start
    if proc.returncode != 0 or b"git-rewind" in proc.stderr:
        raise SystemExit(f"commit failed in {root}: {proc.stderr.decode()}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--lines", type=int, default=50)
    parser.add_argument("--checkpoints", type=int, default=50)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="Leave the repositories in the temporary directory.")
    args = parser.parse_args()
    env = {**os.environ, **GIT_ENV}
    base = tempfile.mkdtemp(prefix="commit-bench-")
    roots = {which: os.path.join(base, which) for which in VARIANTS}
    plain = roots["plain"]
    try:
        started = time.perf_counter()
        build(plain, args.files, args.lines, args.checkpoints, env)
        for which in ("hooked", "daemon"):
            shutil.copytree(plain, roots[which], symlinks=True)
            subprocess.run([*rewind_command(), "install", "--git-hooks"], cwd=roots[which], check=True, env=env,
                           capture_output=True)
        subprocess.run([*rewind_command(), "daemon", "start"], cwd=roots["daemon"], check=True, env=env,
                       capture_output=True)
        print(f"built {args.files} files with {args.checkpoints} checkpoints in {time.perf_counter() - started:.0f} s")
        load = os.getloadavg()
        sizes = (1, 100)
        times: dict[tuple[str, int], list[float]] = {(w, n): [] for w in VARIANTS for n in sizes}
        interpreter: list[float] = []
        for run in range(args.runs + 1):  # the first run warms the page cache and is dropped
            for n in sizes:
                picked = [name((run * 131 + k * 3) % args.files) for k in range(n)]
                order = VARIANTS[run % 3:] + VARIANTS[:run % 3]
                for which in order:
                    took = timed_commit(roots[which], picked, run, env)
                    if run:
                        times[(which, n)].append(took)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
            if run:
                interpreter.append(time.perf_counter() - start)
        notes = [subprocess.run(["git", "notes", "--ref", "rewind-authorship", "list"], cwd=roots[which], env=env,
                                capture_output=True, text=True).stdout.count("\n") for which in ("hooked", "daemon")]
        print(f"load average at the start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
              f"authorship notes written: {notes[0]} by the hooks alone, {notes[1]} with the daemon")
        print(f"python -I -S -c pass: {statistics.median(interpreter) * 1000:.1f} ms")
        for n in sizes:
            without = statistics.median(times[("plain", n)])
            row = f"git commit, {n:>3} changed file{'s' if n != 1 else ' '}: without hooks {without * 1000:7.1f} ms"
            for which, label in (("hooked", "with"), ("daemon", "with the daemon")):
                took = statistics.median(times[(which, n)])
                row += f"; {label} {took * 1000:7.1f} ms: {took / without:.2f}x, +{(took - without) * 1000:.1f} ms"
            print(row)
    finally:
        subprocess.run([*rewind_command(), "daemon", "stop"], cwd=roots["daemon"], env=env, capture_output=True)
        if args.keep:
            print(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
