"""Two installs of git-rewind, A and B, timed call by call on the same hook events, interleaved.

Differences of a few percent drown in the drift between whole benchmark runs on a shared
machine; alternating A and B call by call (in a rotating order) puts the same load on both.
Each install is a `git-rewind` executable (a non-editable install of each commit to compare):

    python bench/ab_bench.py /tmp/venv-a/bin/git-rewind /tmp/venv-b/bin/git-rewind --runs 80

Events: a PreToolUse Read (a skip) and a UserPromptSubmit after one file changed (a full-scan
checkpoint), Claude Code's payload shapes. Each install gets a session of its own in one
repository of --files files; the medians and the B/A ratio are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def _repo(root: Path, files: int) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for i in range(files):
        (root / f"d{i % 20}").mkdir(exist_ok=True)
        (root / f"d{i % 20}" / f"f{i}.txt").write_text(f"file {i}\n" * 20)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "base"], cwd=root, check=True, env=env)


def _call(tool: str, root: Path, payload: dict[str, object], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run([tool, "hook", "--agent", "claude-code"], input=json.dumps(payload).encode(), cwd=root,
                          env=env, capture_output=True)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0 or proc.stderr:
        raise SystemExit(f"{tool} failed: {proc.stderr.decode(errors='replace')}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--files", type=int, default=1000)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["GIT_REWIND_AUTO_PACK"] = "0"  # no background repack competing for the cores
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        _repo(root, args.files)
        tools = {"A": args.a, "B": args.b}
        times: dict[tuple[str, str], list[float]] = {(t, k): [] for t in tools for k in ("skip", "checkpoint")}
        for run in range(args.runs):
            for name in (["A", "B"] if run % 2 else ["B", "A"]):
                read = {"session_id": f"read-{name}", "cwd": str(root), "hook_event_name": "PreToolUse",
                        "tool_name": "Read", "tool_input": {"file_path": str(root / "d0" / "f0.txt")},
                        "tool_use_id": f"t{run}"}
                times[(name, "skip")].append(_call(tools[name], root, read, env))
                with open(root / "d1" / f"f{run % 50 * 20 + 1}.txt", "a") as fh:
                    fh.write(f"{name} {run}\n")
                prompt = {"session_id": f"prompt-{name}", "cwd": str(root), "hook_event_name": "UserPromptSubmit",
                          "prompt": f"step {run}", "prompt_id": f"p{run}"}
                times[(name, "checkpoint")].append(_call(tools[name], root, prompt, env))
    print(f"{args.files} files, {args.runs} calls each, interleaved; medians")
    for kind in ("skip", "checkpoint"):
        a, b = statistics.median(times[("A", kind)]), statistics.median(times[("B", kind)])
        print(f"{kind:10}  A {a:7.1f} ms  B {b:7.1f} ms  B/A {b / a:.3f}")


if __name__ == "__main__":
    main()
