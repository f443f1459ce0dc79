#!/usr/bin/env python3
"""What a checkpointing hook process loads and what its start costs, with the daemon answering.

Builds one synthetic repository (bench.py's builder), starts git-rewind's file-watcher daemon in
it, and runs `git-rewind hook --agent claude-code` on a UserPromptSubmit after one changed file
(a full-scan checkpoint the daemon answers with the changed path: checked after every call), as
Claude Code runs it: a fresh process, the payload on stdin. Each run, interleaved:

- the hook under `python -X importtime`: every module it imports, with its own and cumulative
  import time (medians over the runs; -X importtime itself adds a little to each);
- the hook's whole process without -X importtime;
- `python -c pass`, `python -S -c pass` (no site: what the venv's .pth files and site cost),
  and `python -c "import git_rewind.main"` (the entry point alone).

    python bench/hook_imports.py                   # 1,000 files, 15 runs
    python bench/hook_imports.py --files 20000 --runs 21 --top 30

Run it with the Python of a non-editable install. See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench import Bench, BenchError, isolated_env, rewind_command, run, wait_for_next_second

WATCH = ("pygit2", "json", "selectors", "socket", "_socket", "re", "enum", "subprocess", "typing", "click",
         "hashlib", "tomllib", "tomlkit")


def parse_importtime(stderr: str) -> dict[str, tuple[int, int]]:
    """module -> (self µs, cumulative µs) from -X importtime's lines on stderr."""
    found: dict[str, tuple[int, int]] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "imported package" in line:
            continue
        own, cumulative, name = line[len("import time:"):].split("|")
        found[name.strip()] = (int(own), int(cumulative))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=1000, help="files in the repository (default 1000)")
    parser.add_argument("--runs", type=int, default=15, help="runs (default 15)")
    parser.add_argument("--top", type=int, default=25, help="modules to list, by median own time (default 25)")
    parser.add_argument("--seed", type=int, default=20240611)
    parser.add_argument("--json", metavar="FILE", help="also write every sample to FILE")
    args = parser.parse_args(argv)

    rewind = rewind_command()
    base = tempfile.mkdtemp(prefix="git-rewind-imports-")
    env = isolated_env(os.path.join(base, "home"), None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the installed .pyc files are the ones used
    env.pop("PYTHONPYCACHEPREFIX", None)
    b = Bench(base, args.files, args.seed, 1, 1, env, rewind, lambda m: print(m, flush=True))
    script = rewind[0] if len(rewind) == 1 else None
    if script is None:
        print("no git-rewind script beside this interpreter or on PATH", file=sys.stderr)
        return 1
    hook = [sys.executable, script, "hook", "--agent", "claude-code"]
    log = os.path.join(b.repo, ".git", "rewind", "hook.log")
    samples: dict[str, list[float]] = {"hook": [], "hook -X importtime": [], "python -c pass": [],
                                       "python -S -c pass": [], "import git_rewind.main": []}
    modules: dict[str, list[tuple[int, int]]] = {}
    try:
        print(f"building {args.files:,} files ...", flush=True)
        b.build_repo()
        b.daemon_mode = True
        b.daemon_warm()

        def call(r: int, importtime: bool) -> float:
            rel = b.tree.pick("imports", 1, r * 2 + importtime)[0]
            b.modify([rel], f"imports-{r}-{importtime}")
            wait_for_next_second(b.last_change)
            data = json.dumps({"session_id": "imports", "transcript_path": os.path.join(base, "t.jsonl"),
                               "cwd": b.repo, "prompt_id": f"p-{r}", "hook_event_name": "UserPromptSubmit",
                               "permission_mode": "default", "prompt": f"case {r}"}).encode()
            before = b.answered()
            size = os.path.getsize(log) if os.path.exists(log) else 0
            args_ = [sys.executable, "-X", "importtime", *hook[1:]] if importtime else hook
            start = time.perf_counter()
            proc = subprocess.run(args_, cwd=b.repo, env=env, input=data, capture_output=True)
            ms = (time.perf_counter() - start) * 1000
            with open(log, "rb") as fh:
                fh.seek(size)
                entries = [json.loads(line) for line in fh.read().splitlines() if line.strip()]
            if proc.returncode != 0 or proc.stdout or len(entries) != 1 or entries[0].get("action") != "checkpoint":
                raise BenchError(f"hook: exit {proc.returncode}, stdout {proc.stdout!r}, log {entries}")
            b.daemon_check(before, "changes")
            if importtime:
                for name, times in parse_importtime(proc.stderr.decode()).items():
                    modules.setdefault(name, []).append(times)
            elif proc.stderr:
                raise BenchError(f"hook wrote to stderr: {proc.stderr!r}")
            return ms

        def plain(args_: list[str]) -> float:
            start = time.perf_counter()
            run(args_, b.repo, env)
            return (time.perf_counter() - start) * 1000

        jobs = [
            ("hook", lambda r: call(r, False)),
            ("hook -X importtime", lambda r: call(r, True)),
            ("python -c pass", lambda r: plain([sys.executable, "-c", "pass"])),
            ("python -S -c pass", lambda r: plain([sys.executable, "-S", "-c", "pass"])),
            ("import git_rewind.main", lambda r: plain([sys.executable, "-c", "import git_rewind.main"])),
        ]
        for r in range(-1, args.runs):
            for name, job in jobs[r % len(jobs):] + jobs[:r % len(jobs)]:
                ms = job(r)
                if r >= 0:
                    samples[name].append(ms)
    except BenchError as exc:
        print(f"\nABORTED: {exc}", file=sys.stderr)
        return 1
    finally:
        b.daemon_visible(True)
        run([*rewind, "daemon", "stop"], b.repo, env, check=False)

    print(f"\n{args.files:,} files; {args.runs} runs; {os.cpu_count()} CPUs; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; medians")
    print(f"{'process':40} {'ms':>8}")
    for name, values in samples.items():
        print(f"{name:40} {statistics.median(values):8.1f}")
    own = {name: statistics.median(t[0] for t in v) for name, v in modules.items()}
    cumulative = {name: statistics.median(t[1] for t in v) for name, v in modules.items()}
    print(f"\nimports of the hook: {len(modules)} modules, own times summed {sum(own.values()) / 1000:.1f} ms "
          f"(median per module, -X importtime)")
    print(f"{'module':40} {'own ms':>8} {'cumul. ms':>10}")
    for name in sorted(own, key=lambda n: -own[n])[:args.top]:
        print(f"{name:40} {own[name] / 1000:8.2f} {cumulative[name] / 1000:10.2f}")
    print("\nwatched modules: " + ", ".join(f"{n} {'LOADED' if n in modules else 'no'}" for n in WATCH))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"samples_ms": samples, "imports_us": modules}, fh, indent=1)
    import shutil

    shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
