"""What a restore's read-back costs: `restore.rewind` with and without verification, against git's own
`git checkout <tree> -- .` doing the same work in the same run.

After writing and removing, a restore reads back every path it touched (removed ones must be gone,
contents read and hashed in-process, as `git hash-object --no-filters` would). This bench restores N changed
files of a repository of --files files, four ways, interleaved in a rotating order, each after the
same N files were changed again (untimed, with content unique to the run):

- `rewind, verified`: `restore.rewind(...)` timed inside one Python process (scan, safety checkpoint,
  writes, read-back); interpreter start and imports are not counted;
- `rewind, unverified`: the same with `verify=False` (a switch for this bench only);
- `git rewind undo`: the whole `git rewind undo 1 --yes` process, as a user runs it;
- `git checkout`: the whole `git checkout <checkpoint's tree> -- .` process.

    python bench/restore_bench.py                     # 5,000 files; 100 and 1,000 changed; 7 runs
    python bench/restore_bench.py --files 20000 --changed 1000 --runs 5

Medians; the ratios are verified / unverified and each / `git checkout`. See bench/README.md.
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
           "GIT_COMMITTER_EMAIL": "b@b", "GIT_CONFIG_NOSYSTEM": "1"}
IN_PROCESS = """
import sys, time
from git_rewind.store import checkpoints
from git_rewind.ops import restore
from git_rewind.base.repo import Repo
repo = Repo.discover()
target = checkpoints.lookup(repo, "1")
start = time.perf_counter()
outcome = restore.rewind(repo, target, [], 50 * 1024 * 1024, auto_pack=10**9, verify={verify})
elapsed = time.perf_counter() - start
assert len(outcome.written) == {n} and outcome.verified is {verify}, (len(outcome.written), outcome.verified)
# The read-back alone, once more on the files just written (as warm as the restore's own read-back).
expected = {{c.path: (c.mode, c.oid) for c in outcome.plan.writes}}
start = time.perf_counter()
assert not restore._verify(repo, outcome, expected)
print(elapsed, time.perf_counter() - start)
"""


def path_of(i: int) -> str:
    return f"src/d{i % 50:02d}/f{i}.txt"


def build(root: str, files: int, env: dict[str, str]) -> str:
    """A repository of FILES committed files of ~1 KB and its first checkpoint (#1); the commit's tree."""
    subprocess.run(["git", "init", "-q", "-b", "main", root], check=True, env=env)
    for i in range(files):
        full = os.path.join(root, path_of(i))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as fh:
            fh.write(f"file {i}\n" + "line of text\n" * 80)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=root, check=True, env=env)
    subprocess.run(["git", "rewind", "snap", "-m", "clean"], cwd=root, check=True, env=env, capture_output=True)
    return subprocess.run(["git", "rev-parse", "HEAD^{tree}"], cwd=root, check=True, env=env,
                          capture_output=True, text=True).stdout.strip()


def dirty(root: str, changed: int, tag: str) -> None:
    for i in range(changed):
        with open(os.path.join(root, path_of(i)), "w") as fh:
            fh.write(f"changed {tag}\n")
    time.sleep(1.05)  # past the second of the edits: no racily clean index entries for either tool


def timed(args: list[str], cwd: str, env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr}")
    return elapsed, proc.stdout


def measure(root: str, tree: str, changed: int, runs: int, env: dict[str, str]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"verified": [], "unverified": [], "undo": [], "checkout": [], "read-back": []}
    order = list(times)[:4]
    for run in range(runs):
        for way in order[run % 4:] + order[:run % 4]:
            dirty(root, changed, f"{way} {run}")
            if way in ("verified", "unverified"):
                code = IN_PROCESS.format(verify=way == "verified", n=changed)
                _, out = timed([sys.executable, "-c", code], root, env)
                rewind, read_back = (float(x) for x in out.split())
                times[way].append(rewind)
                times["read-back"].append(read_back)
            elif way == "undo":
                elapsed, out = timed(["git", "rewind", "undo", "1", "--yes"], root, env)
                assert f"{changed} written, 0 removed (verified)" in out, out
                times[way].append(elapsed)
            else:
                elapsed, _ = timed(["git", "checkout", tree, "--", "."], root, env)
                times[way].append(elapsed)
            with open(os.path.join(root, path_of(0))) as fh:
                assert fh.read().startswith("file 0\n"), f"{way} did not restore"
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--changed", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    env = {**os.environ, **GIT_ENV}
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")  # this env's git-rewind
    temp = tempfile.mkdtemp(prefix="restore-bench-")
    try:
        root = os.path.join(temp, "repo")
        tree = build(root, args.files, env)
        print(f"{args.files} files, {args.runs} runs, medians in ms (whole process unless marked in-process)")
        print(f"{'changed':>8} {'verified*':>10} {'unverified*':>12} {'v/u':>6} {'read-back*':>11} "
              f"{'undo':>8} {'checkout':>9} {'v*/co':>6} {'undo/co':>8} {'rb*/co':>7}")
        for changed in args.changed:
            t = {k: statistics.median(v) * 1000 for k, v in measure(root, tree, changed, args.runs, env).items()}
            print(f"{changed:>8} {t['verified']:>10.0f} {t['unverified']:>12.0f} "
                  f"{t['verified'] / t['unverified']:>6.2f} {t['read-back']:>11.1f} "
                  f"{t['undo']:>8.0f} {t['checkout']:>9.0f} {t['verified'] / t['checkout']:>6.2f} "
                  f"{t['undo'] / t['checkout']:>8.2f} {t['read-back'] / t['checkout']:>7.3f}")
        print("* in-process: restore.rewind alone (scan, safety checkpoint, writes, read-back); read-back*: "
              "the verification pass alone (lstat of each path + one git hash-object), timed on its own")
    finally:
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    main()
