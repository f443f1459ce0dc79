"""How fast every checkpoint is read: git-rewind's one reader against git's CLI doing the same work.

`checkpoints.load_all` runs `git notes list` and one `git cat-file --batch`, then parses each note
into a typed Note. The baseline is those two git commands alone in a shell pipeline (what any
reader pays); for scale, the reader it replaced (pygit2's notes iterator plus json.loads).

    python bench/reader_bench.py                 # 100, 1,000 and 10,000 checkpoints, 9 runs
    python bench/reader_bench.py --sizes 1000 --runs 5

Whole-process wall time, medians, interleaved runs. The repositories are built with one
`git fast-import` stream (a chain of commits on refs/rewind/bench, one JSON note each, shaped as
store.py writes them) in a temporary directory.
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

READER = ("from git_rewind.store import checkpoints; from git_rewind.base.repo import Repo; "
          "items = checkpoints.load_all(Repo.discover()); assert len(items) == {n}, len(items)")
PYGIT2 = ("import json, pygit2; r = pygit2.Repository('.git'); "
          "items = [json.loads(n.message) for n in r.notes('refs/notes/rewind')]; assert len(items) == {n}")
GIT_CLI = "git notes --ref rewind list | cut -d' ' -f1 | git cat-file --batch > /dev/null"


def build(path: str, count: int) -> None:
    """A repository with COUNT checkpoints on one session, each with a note like store.py writes."""
    subprocess.run(["git", "init", "-q", path], check=True)
    stream = bytearray()
    for seq in range(1, count + 1):
        message = f"#{seq} before Edit src/file{seq % 50}.py\n".encode()
        stream += b"commit refs/rewind/bench\nmark :%d\ncommitter b <b@b> %d +0000\n" % (seq, 1_700_000_000 + seq)
        stream += b"data %d\n%s" % (len(message), message)
        stream += b"M 100644 inline src/file%d.py\n" % (seq % 50)
        body = b"print(%d)\n" % seq
        stream += b"data %d\n%s\n" % (len(body), body)
    stream += b"commit refs/notes/rewind\ncommitter b <b@b> 1700000000 +0000\ndata 6\nnotes\n"
    for seq in range(1, count + 1):
        note = {"v": 1, "seq": seq, "session": "bench", "agent": "claude-code", "trigger": "PreToolUse",
                "tool": "Edit", "paths": [f"src/file{seq % 50}.py"], "message": f"before Edit src/file{seq % 50}.py",
                "prompt": "make it faster", "summary": None, "tags": [], "head": None, "branch": "main",
                "created": "2026-11-22T10:00:00Z",
                "conversation": {"transcript": "/home/u/.claude/projects/p/s.jsonl", "prompt_id": "p",
                                 "tool_use_id": f"toolu_{seq}", "message_uuid": None, "offset": seq * 100},
                "skipped": []}
        data = (json.dumps(note, indent=1) + "\n").encode()
        stream += b"N inline :%d\ndata %d\n%s\n" % (seq, len(data), data)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=path, input=bytes(stream), check=True)


def timed(args: list[str], cwd: str, shell: bool = False) -> float:
    start = time.perf_counter()
    subprocess.run(args if not shell else args[0], cwd=cwd, check=True, shell=shell,
                   stdout=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--runs", type=int, default=9)
    options = parser.parse_args()
    sizes = [int(s) for s in options.sizes.split(",")]
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.split()[-1]
    print(f"reader bench: {options.runs} runs; git {git}; Python {sys.version.split()[0]}; {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for n in sizes:
            path = os.path.join(tmp, f"r{n}")
            build(path, n)
            tools = {
                "git-rewind checkpoints.load_all": lambda n=n, path=path: timed(
                    [sys.executable, "-c", READER.format(n=n)], path),
                "git CLI: notes list | cat-file --batch": lambda path=path: timed([GIT_CLI], path, shell=True),
                "pygit2 notes + json.loads (old reader)": lambda n=n, path=path: timed(
                    [sys.executable, "-c", PYGIT2.format(n=n)], path),
                "python -c pass": lambda path=path: timed([sys.executable, "-c", "pass"], path),
            }
            samples: dict[str, list[float]] = {name: [] for name in tools}
            for run in range(options.runs + 1):
                names = list(tools)
                names = names[run % len(names):] + names[:run % len(names)]
                for name in names:
                    ms = tools[name]()
                    if run:
                        samples[name].append(ms)
            rows.append((n, {name: statistics.median(values) for name, values in samples.items()}))
        base = "git CLI: notes list | cat-file --batch"
        print(f"\n{'checkpoints':>11}  {'reader':<40} {'median ms':>9}  {'vs git CLI':>10}")
        for n, medians in rows:
            for name, ms in medians.items():
                print(f"{n:>11,}  {name:<40} {ms:>9.1f}  {ms / medians[base]:>9.2f}x")


if __name__ == "__main__":
    main()
