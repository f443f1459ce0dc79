"""What a two-phase MCP restore costs: the restore with its token against the one-call restore MCP made before,
and against git's own `git checkout <tree> -- .`, in the same run.

A repository of --files committed files (~1 KB each) and its checkpoint #1; each run changes the same N files
(untimed, content unique to the run), then restores them one of three ways, interleaved in a rotating order:

- `token`: the MCP server's tool (`mcp.Tools.rewind`) in this process: the preview (timed apart: `preview*`),
  then the restore with the preview's token (`token*`): the token read and its MAC checked, the scan, the
  tree compared under the lock, safety checkpoint, writes, read-back;
- `one call`: the same restore as MCP ran it before two phases (`request.Request.undo(...).run()`, no token),
  cold (`one call*`) and, as `after preview*`, right after an untimed preview as the token's restore runs: the
  pair that isolates what the token adds;
- `checkout`: the whole `git checkout <checkpoint's tree> -- .` process.

Also the token's own work alone (issue, read with its MAC, compare), many times over, in microseconds.

    python bench/token_bench.py                     # 5,000 files; 100 changed; 7 runs
    python bench/token_bench.py --files 20000 --changed 1000 --runs 5

Medians; ratios token/one call and each/checkout. See bench/README.md.
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

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from restore_bench import GIT_ENV, build, dirty, path_of  # noqa: E402  (bench/ is not a package)


def measure(root: str, tree: str, changed: int, runs: int, env: dict[str, str]) -> dict[str, list[float]]:
    from git_rewind.base.repo import Repo
    from git_rewind.faces.mcp import Tools
    from git_rewind.ops.request import Request
    from git_rewind.store import checkpoints

    times: dict[str, list[float]] = {"token": [], "one call": [], "after preview": [], "checkout": [], "preview": []}
    order = ["token", "one call", "after preview", "checkout"]
    for run in range(runs):
        for way in order[run % 4:] + order[:run % 4]:
            dirty(root, changed, f"{way} {run}")
            if way == "token":
                tools = Tools(root, "bench")
                start = time.perf_counter()
                _text, preview = tools.rewind("1", "code", preview=True)
                times["preview"].append(time.perf_counter() - start)
                start = time.perf_counter()
                _text, data = tools.rewind("1", "code", token=preview["token"])
                times[way].append(time.perf_counter() - start)
                assert len(data["written"]) == changed and data["verified"], data["text"]
            elif way in ("one call", "after preview"):
                if way == "after preview":
                    Tools(root, "bench").rewind("1", "code", preview=True)
                start = time.perf_counter()
                repo = Repo.discover(root)
                with Request.undo(repo, checkpoints.lookup(repo, "1"), "code", by="bench") as asked:
                    data = asked.run(allow_busy=True).to_json()
                times[way].append(time.perf_counter() - start)
                assert len(data["written"]) == changed and data["verified"], data["text"]
            else:
                start = time.perf_counter()
                subprocess.run(["git", "checkout", tree, "--", "."], cwd=root, env=env, check=True)
                times[way].append(time.perf_counter() - start)
            with open(os.path.join(root, path_of(0))) as fh:
                assert fh.read().startswith("file 0\n"), f"{way} did not restore"
    return times


def token_alone(root: str, rounds: int = 2000) -> float:
    """Microseconds for one token's issue, read (MAC checked) and comparison of an unchanged state."""
    from git_rewind.base.repo import Repo
    from git_rewind.ops import token

    repo = Repo.discover(root)
    binding = token.Binding("undo", "code", "a" * 40, None, [], False, False, None, "the undo (code) to #1")
    state = token.State("b" * 40, "c" * 40, "main", None)
    start = time.perf_counter()
    for _ in range(rounds):
        seen = token.read(repo, token.issue(repo, binding, state), binding)
        token.check_files(repo, seen, "b" * 40, ("c" * 40, "main"))
    return (time.perf_counter() - start) / rounds * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--changed", type=int, nargs="+", default=[100])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    env = {**os.environ, **GIT_ENV}
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")  # this env's git-rewind
    os.environ.update({k: v for k, v in env.items() if k in GIT_ENV or k == "PATH"})
    temp = tempfile.mkdtemp(prefix="token-bench-")
    try:
        root = os.path.join(temp, "repo")
        tree = build(root, args.files, env)
        os.environ["GIT_REWIND_AUTO_PACK"] = str(10**9)  # no background pack landing in another way's run
        print(f"{args.files} files, {args.runs} runs, medians in ms (* in-process, imports not counted)")
        print(f"{'changed':>8} {'preview*':>9} {'token*':>8} {'after preview*':>15} {'token/after':>12} "
              f"{'one call*':>10} {'checkout':>9} {'token/co':>9} {'one/co':>7}")
        for changed in args.changed:
            t = {k: statistics.median(v) * 1000 for k, v in measure(root, tree, changed, args.runs, env).items()}
            print(f"{changed:>8} {t['preview']:>9.0f} {t['token']:>8.0f} {t['after preview']:>15.0f} "
                  f"{t['token'] / t['after preview']:>12.2f} {t['one call']:>10.0f} {t['checkout']:>9.0f} "
                  f"{t['token'] / t['checkout']:>9.2f} {t['one call'] / t['checkout']:>7.2f}")
        print(f"the token alone (issue + read with its MAC + compare): {token_alone(root):.1f} µs")
    finally:
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    main()
