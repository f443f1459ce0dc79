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

`--daemon`: each install's daemon runs in its copy, and every call goes through the command `install`
writes (`<python> -I -S …/git_rewind/hook/entry.py hook`): the skip, the prompt's checkpoint of one
changed file, the aggressive tier's checkpoint after a shell command that changed a file, and the
balanced tier after one that changed nothing (no checkpoint); `python -I -S -c pass` runs between them,
for the ratios issue 27 sets. Every call must have been answered by the daemon (`served`); os.sync()
before each timed process, as hook_bench.py does, so that no call pays for the writeback of the one before.
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


def _call(tool: str | list[str], root: Path, payload: dict[str, object], env: dict[str, str]) -> float:
    """One hook process, timed whole; it must exit 0 and say nothing on stderr."""
    start = time.perf_counter()
    command = [tool, "hook"] if isinstance(tool, str) else [*tool, "hook"]
    proc = subprocess.run([*command, "--agent", "claude-code"], input=json.dumps(payload).encode(), cwd=root,
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
    parser.add_argument("--daemon", action="store_true", help="the hooks the daemon answers (see above)")
    args = parser.parse_args()
    if args.daemon:
        _daemon_main(args)
        return
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


def _thin(tool: str) -> list[str]:
    """The command `install` writes for the install of TOOL (a `git-rewind` script in a venv's bin)."""
    python = str(Path(tool).parent / "python")
    # -I: not the current directory's git_rewind (a checkout's source, when the bench runs from one) but the install's
    entry = subprocess.run([python, "-I", "-c", "import git_rewind.hook.entry as e; print(e.__file__)"],
                           capture_output=True, text=True, check=True).stdout.strip()
    return [python, "-I", "-S", entry]


def _served(tool: str, root: Path, env: dict[str, str]) -> int:
    info = json.loads(subprocess.run([tool, "daemon", "status", "--json"], cwd=root, env=env, capture_output=True,
                                     text=True, check=True).stdout)
    served = info.get("served") or {}
    return int(served.get("hook", 0)) if info.get("running") else -1


def _daemon_main(args: argparse.Namespace) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["GIT_REWIND_AUTO_PACK"] = "0"
    with tempfile.TemporaryDirectory() as tmp:
        built = Path(tmp) / "repo"
        _repo(built, args.files, args.attributes)
        tools = {"A": args.a, "B": args.b}
        thin = {name: _thin(tool) for name, tool in tools.items()}
        python = thin["A"][0]
        roots = {name: Path(tmp) / f"repo-{name}" for name in tools}
        for name, root in roots.items():
            subprocess.run(["cp", "-a", str(built), str(root)], check=True)
            subprocess.run([tools[name], "daemon", "start"], cwd=root, env=env, check=True, capture_output=True)
        kinds = ("skip", "checkpoint", "bash checkpoint", "quiet bash")
        times: dict[tuple[str, str], list[float]] = {(t, k): [] for t in [*tools, "pass"] for k in kinds}
        shell = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""}}
        try:
            for run in range(-2, args.runs):  # two untimed rounds: each session's first checkpoint, caches
                for name in (["A", "B"] if run % 2 else ["B", "A"]):
                    root, before = roots[name], _served(tools[name], roots[name], env)
                    got: dict[str, float] = {}
                    read = {"session_id": f"read-{name}", "cwd": str(root), "hook_event_name": "PreToolUse",
                            "tool_name": "Read", "tool_input": {"file_path": str(root / "d0" / "f0.txt")},
                            "tool_use_id": f"t{run}"}
                    os.sync()
                    got["skip"] = _call(thin[name], root, read, env)
                    with open(root / "d1" / f"f{run % 50 * 20 + 1}.txt", "a") as fh:
                        fh.write(f"{name} {run}\n")
                    prompt = {"session_id": f"prompt-{name}", "cwd": str(root), "hook_event_name": "UserPromptSubmit",
                              "prompt": f"step {run}", "prompt_id": f"p{run}"}
                    os.sync()
                    got["checkpoint"] = _call(thin[name], root, prompt, env)
                    with open(root / "d2" / f"f{run % 50 * 20 + 2}.txt", "a") as fh:
                        fh.write(f"{name} {run}\n")
                    bash = {"session_id": f"bash-{name}", "cwd": str(root), "hook_event_name": "PostToolUse",
                            "tool_use_id": f"b{run}", **shell}
                    os.sync()
                    got["bash checkpoint"] = _call(thin[name], root, bash, {**env, "GIT_REWIND_TIER": "aggressive"})
                    quiet = {"session_id": f"bash-{name}", "cwd": str(root), "hook_event_name": "PostToolUse",
                             "tool_use_id": f"q{run}", **shell}
                    os.sync()
                    got["quiet bash"] = _call(thin[name], root, quiet, env)
                    if _served(tools[name], root, env) != before + len(got):
                        raise SystemExit(f"{name}: a call was not answered by the daemon")
                    if run >= 0:
                        for kind, ms in got.items():
                            times[(name, kind)].append(ms)
                for kind in kinds:
                    os.sync()
                    start = time.perf_counter()
                    subprocess.run([python, "-I", "-S", "-c", "pass"], check=True)
                    if run >= 0:
                        times[("pass", kind)].append((time.perf_counter() - start) * 1000)
        finally:
            for name, root in roots.items():
                subprocess.run([tools[name], "daemon", "stop"], cwd=root, env=env, capture_output=True)
    floor = statistics.median([ms for kind in kinds for ms in times[("pass", kind)]])
    print(f"{args.files} files, the daemon answering, the installed command; {args.runs} calls each, interleaved; "
          f"medians; python -I -S -c pass {floor:.1f} ms; load average {os.getloadavg()[0]:.1f}")
    skip = {name: statistics.median(times[(name, "skip")]) for name in tools}
    for kind in kinds:
        a, b = statistics.median(times[("A", kind)]), statistics.median(times[("B", kind)])
        extra = f"  (vs skip: A {a / skip['A']:.2f}x B {b / skip['B']:.2f}x)" if kind == "quiet bash" else ""
        print(f"{kind:16} A {a:6.1f} ms {a / floor:5.2f}x   B {b:6.1f} ms {b / floor:5.2f}x   B/A {b / a:.3f}{extra}")


if __name__ == "__main__":
    main()
