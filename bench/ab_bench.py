"""Two installs of git-rewind, A and B, timed call by call on the same hook events, interleaved.

Differences of a few percent drown in the drift between whole benchmark runs on a shared
machine; alternating A and B call by call (in a rotating order) puts the same load on both. Each
install works in a copy of its own of the repository: two versions never share `.git/rewind/`
(a newer one would redo, at every call, what it finds an older one did not record).
Each install is a `git-rewind` executable (a non-editable install of each commit to compare):

    python bench/ab_bench.py /tmp/venv-a/bin/git-rewind /tmp/venv-b/bin/git-rewind --runs 80

Events: a PreToolUse Read (a skip), a UserPromptSubmit after one file changed (a full-scan
checkpoint) and a PreToolUse Write naming a file changed since (a known-path checkpoint; the minimal
tier, which takes one before every Write), Claude Code's payload shapes. Each install gets a session of
its own in one repository of --files files (`--attributes`: with `* text=auto` in .gitattributes, where
git converts files); the medians and the B/A ratio are printed.
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


def _repo(root: Path, files: int, attributes: bool) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    if attributes:
        (root / ".gitattributes").write_text("* text=auto\n")
    for i in range(files):
        (root / f"d{i % 20}").mkdir(exist_ok=True)
        (root / f"d{i % 20}" / f"f{i}.txt").write_text(f"file {i}\n" * 20)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "base"], cwd=root, check=True, env=env)


def _call(tool: str, root: Path, payload: dict[str, object], env: dict[str, str]) -> float:
    """One hook process, timed whole; it must exit 0 and say nothing on stderr."""
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
    parser.add_argument("--attributes", action="store_true", help="a .gitattributes with * text=auto")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["GIT_REWIND_AUTO_PACK"] = "0"  # no background repack competing for the cores
    with tempfile.TemporaryDirectory() as tmp:
        built = Path(tmp) / "repo"
        _repo(built, args.files, args.attributes)
        tools = {"A": args.a, "B": args.b}
        roots = {name: Path(tmp) / f"repo-{name}" for name in tools}
        for root in roots.values():
            subprocess.run(["cp", "-a", str(built), str(root)], check=True)
        kinds = ("skip", "checkpoint", "known path")
        times: dict[tuple[str, str], list[float]] = {(t, k): [] for t in tools for k in kinds}
        for run in range(args.runs):
            for name in (["A", "B"] if run % 2 else ["B", "A"]):
                root = roots[name]
                read = {"session_id": f"read-{name}", "cwd": str(root), "hook_event_name": "PreToolUse",
                        "tool_name": "Read", "tool_input": {"file_path": str(root / "d0" / "f0.txt")},
                        "tool_use_id": f"t{run}"}
                times[(name, "skip")].append(_call(tools[name], root, read, env))
                with open(root / "d1" / f"f{run % 50 * 20 + 1}.txt", "a") as fh:
                    fh.write(f"{name} {run}\n")
                prompt = {"session_id": f"prompt-{name}", "cwd": str(root), "hook_event_name": "UserPromptSubmit",
                          "prompt": f"step {run}", "prompt_id": f"p{run}"}
                times[(name, "checkpoint")].append(_call(tools[name], root, prompt, env))
                edited = root / "d2" / f"f{run % 50 * 20 + 2}.txt"
                with open(edited, "a") as fh:
                    fh.write(f"{name} {run}\n")
                write = {"session_id": f"prompt-{name}", "cwd": str(root), "hook_event_name": "PreToolUse",
                         "tool_name": "Write", "tool_input": {"file_path": str(edited), "content": ""},
                         "tool_use_id": f"w{run}"}
                times[(name, "known path")].append(_call(tools[name], root, write,
                                                         {**env, "GIT_REWIND_TIER": "minimal"}))
    print(f"{args.files} files{' with * text=auto' if args.attributes else ''}, {args.runs} calls each, "
          "interleaved; medians")
    for kind in kinds:
        a, b = statistics.median(times[("A", kind)]), statistics.median(times[("B", kind)])
        print(f"{kind:10}  A {a:7.1f} ms  B {b:7.1f} ms  B/A {b / a:.3f}")


if __name__ == "__main__":
    main()
