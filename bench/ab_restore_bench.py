"""Two installs of git-rewind, A and B, restoring the same files of one repository, interleaved with
`git restore --source` (private index) in a rotating order: whole-process times and, for A and B,
the same minus the safety checkpoint (bench.SAFETY_TIMER: `snapshot.scan` + `store.save_locked`).

Each install is the Python of a venv holding a non-editable install of the commit to compare:

    python bench/ab_restore_bench.py /tmp/venv-a/bin/python /tmp/venv-b/bin/python --size 20000 --changed 1 1000

The repository is bench.py's synthetic tree (`--size` files); before each run the same `--changed`
files get content unique to the run and tool. Medians; ratios are against `git restore`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402

# Load what a restore loads, whichever layout the install has (flat before the sub-packages, ops/ after).
WARM = ("import importlib\nfor names in (('git_rewind.ops.restore', 'git_rewind.ops.undo'), "
        "('git_rewind.restore', 'git_rewind.undo')):\n    try:\n        [importlib.import_module(n) for n in names]\n"
        "        break\n    except ImportError:\n        pass\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pythons", nargs="+", help="the python of each install")
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--changed", type=int, nargs="+", default=[1, 1000])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="ab-restore-")
    try:
        env = B.isolated_env(os.path.join(base, "home"), os.path.join(base, "pycache"))
        env["GIT_REWIND_AUTO_PACK"] = "0"  # no background repack competing for the cores
        first = [os.path.join(os.path.dirname(args.pythons[0]), "git-rewind")]
        b = B.Bench(base, args.size, 20240611, args.runs, 1, env, first, lambda _m: None)
        b.build()
        timer = os.path.join(base, "safety_timer.py")
        with open(timer, "w") as fh:
            fh.write(B.SAFETY_TIMER)
        for python in args.pythons:  # fill each install's bytecode cache
            B.run([python, "-c", WARM], base, env)
        b.sync("rewind")
        b.sync("cli")
        seq = b.rewind_snap("--allow-empty", "-m", "restore target", expect=r"#\d+ ").split()[0].lstrip("#")
        tools = [f"{chr(65 + i)}" for i in range(len(args.pythons))] + ["git"]
        safety_out = os.path.join(base, "safety-ms")
        for k in args.changed:
            whole: dict[str, list[float]] = {t: [] for t in tools}
            excl: dict[str, list[float]] = {t: [] for t in tools}
            for r in range(args.runs):
                paths = b.tree.pick("restore", k, r)
                for tool in B.rotated(tools, r):
                    before = {p: b.read(p) for p in paths}
                    b.modify(paths, f"ab{k}-{r}-{tool}")
                    start = time.perf_counter()
                    if tool == "git":
                        B.run(["git", "restore", f"--source={b.cli_prev}", "--worktree", "--", "."], b.repo, b.cli_env)
                        ms = (time.perf_counter() - start) * 1000
                        B.run(["git", "add", "-A"], b.repo, b.cli_env)  # untimed, as bench.py
                    else:
                        python = args.pythons[ord(tool) - 65]
                        done = B.run([python, timer, "undo", seq, "--yes"], b.repo,
                                     {**env, "BENCH_SAFETY_OUT": safety_out})
                        ms = (time.perf_counter() - start) * 1000
                        if f"{len(paths)} written, 0 removed (verified)" not in done.stdout.decode():
                            raise B.BenchError(f"{tool}: {done.stdout.decode()}{done.stderr.decode()}")
                        with open(safety_out) as fh:
                            excl[tool].append(ms - float(fh.read()))
                    b.check_contents(before, tool)
                    whole[tool].append(ms)
            git = statistics.median(whole["git"])
            print(f"{args.size} files, {k} changed, {args.runs} runs: git restore {git:.1f} ms")
            for tool in tools[:-1]:
                w, e = statistics.median(whole[tool]), statistics.median(excl[tool])
                print(f"  {tool} {args.pythons[ord(tool) - 65]}: {w:.1f} ms ({w / git:.2f}x), "
                      f"excl. safety checkpoint {e:.1f} ms ({e / git:.2f}x)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
