"""`git rewind purge` on repositories with many checkpoints (bench/many_checkpoints.py), against git's own
`git gc --prune=now` on a copy of the same repository (what removing unreachable objects costs git).

    python bench/purge_bench.py [COUNT...]      # default: 500 5000

Three purges per size, each on a fresh copy: a text in a sixth of the prompts (notes only), a text in one
file of one checkpoint (its session's chain is rewritten from there on), and a path every session touched.
Whole-process wall times, seconds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from many_checkpoints import build  # noqa: E402

CASES = (("--text", "make the tests pass"), ("--text", "changed by checkpoint 250\n"), ("--path", "src/mod013.py"))


def timed(args: list[str], cwd: str) -> tuple[float, str]:
    started = time.perf_counter()
    out = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {out.stderr}")
    return time.perf_counter() - started, out.stdout


def main(counts: list[int]) -> None:
    rewind = [sys.executable, "-m", "git_rewind"]
    with tempfile.TemporaryDirectory() as scratch:
        for count in counts:
            base = build(os.path.join(scratch, f"r{count}"), count)
            subprocess.run(["git", "repack", "-adq"], cwd=base, check=True)
            for option, value in CASES:
                copy = shutil.copytree(base, os.path.join(scratch, "copy"), symlinks=True)
                seconds, out = timed([*rewind, "purge", option, value], copy)
                first = out.splitlines()[0] if out else ""
                print(f"{count:>6} checkpoints  purge {option} {value.strip()!r:30} {seconds:6.2f} s  {first[:90]}")
                shutil.rmtree(copy)
            copy = shutil.copytree(base, os.path.join(scratch, "copy"), symlinks=True)
            seconds, _ = timed(["git", "gc", "-q", "--prune=now"], copy)
            print(f"{count:>6} checkpoints  git gc --prune=now (reference)        {seconds:6.2f} s")
            shutil.rmtree(copy)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [500, 5000])
