"""What `git rewind blame` costs against `git blame` of a similar linear history.

Builds a repository of --files files with one file of --lines lines that --checkpoints checkpoints
(`git rewind snap`) each hold a different version of (a few lines changed, added or removed each
time; every fourth checkpoint changes other files too), then a plain repository whose linear history
commits the same versions in the same order. Times, whole process, median of --runs, interleaved:

- `git rewind blame F`: load the notes, build the synthetic history (one fast-import), git blame, print;
- `git blame F` in the plain repository (the same versions as commits);
- `git rewind --version`, for the interpreter's start.

    python bench/blame_bench.py                          # 200 checkpoints, 300 lines, 2,000 files, 7 runs
    python bench/blame_bench.py --checkpoints 1000 --runs 5

See bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b", "GIT_CONFIG_NOSYSTEM": "1"}
FILE = "src/app.py"


def rewind_command() -> list[str]:
    beside = os.path.join(os.path.dirname(sys.executable), "git-rewind")
    return [beside] if os.path.exists(beside) else [shutil.which("git-rewind") or "git-rewind"]


def versions(count: int, lines: int, seed: int) -> list[list[str]]:
    """COUNT versions of a file, each a few lines away from the one before."""
    rng = random.Random(seed)
    current = [f"line {i}: original text of the file\n" for i in range(lines)]
    found = [list(current)]
    for n in range(count):
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(current))
            kind = rng.random()
            if kind < 0.5:
                current[at] = f"line {at}: changed at version {n}\n"
            elif kind < 0.8 or len(current) < lines // 2:
                current.insert(at, f"added at version {n}\n")
            else:
                del current[at]
        found.append(list(current))
    return found


def write(root: str, path: str, text: str) -> None:
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as fh:
        fh.write(text)


def build(root: str, plain: str, files: int, all_versions: list[list[str]], env: dict[str, str]) -> None:
    for where in (root, plain):
        subprocess.run(["git", "init", "-q", "-b", "main", where], check=True, env=env)
    for i in range(files):
        write(root, f"other/d{i % 40:02d}/f{i}.txt", f"file {i}\n" * 20)
    write(root, FILE, "".join(all_versions[0]))
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=root, check=True, env=env)
    for n, version in enumerate(all_versions[1:], 1):
        write(root, FILE, "".join(version))
        if n % 4 == 0:
            write(root, f"other/d00/f{n % files}.txt", f"changed {n}\n")
        subprocess.run([*rewind_command(), "snap", "-m", f"v{n}"], cwd=root, check=True, env=env,
                       capture_output=True)
    for n, version in enumerate(all_versions):
        write(plain, FILE, "".join(version))
        subprocess.run(["git", "add", FILE], cwd=plain, check=True, env=env)
        subprocess.run(["git", "commit", "-q", "-m", f"v{n}"], cwd=plain, check=True, env=env)


def timed(args: list[str], cwd: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, cwd=cwd, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoints", type=int, default=200)
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--keep", action="store_true", help="Leave the repositories in the temporary directory.")
    args = parser.parse_args()
    env = {**os.environ, **GIT_ENV}
    base = tempfile.mkdtemp(prefix="blame-bench-")
    root, plain = os.path.join(base, "repo"), os.path.join(base, "plain")
    try:
        started = time.perf_counter()
        build(root, plain, args.files, versions(args.checkpoints, args.lines, args.seed), env)
        print(f"built {args.checkpoints} checkpoints of a {args.lines}-line file among {args.files} files "
              f"in {time.perf_counter() - started:.0f} s")
        cases = {
            "git rewind blame": ([*rewind_command(), "blame", FILE], root),
            "git blame (linear history)": (["git", "blame", FILE], plain),
            "git rewind --version": ([*rewind_command(), "--version"], root),
        }
        for command, cwd in cases.values():
            timed(command, cwd, env)  # warm the page cache
        times: dict[str, list[float]] = {name: [] for name in cases}
        names = list(cases)
        for run in range(args.runs):
            for name in names[run % len(names):] + names[:run % len(names)]:
                times[name].append(timed(*cases[name], env))
        medians = {name: statistics.median(values) for name, values in times.items()}
        for name, value in medians.items():
            print(f"{name:<28} {value * 1000:7.1f} ms")
        ratio = medians["git rewind blame"] / medians["git blame (linear history)"]
        print(f"ratio git rewind blame / git blame: {ratio:.1f}x")
    finally:
        if args.keep:
            print(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
