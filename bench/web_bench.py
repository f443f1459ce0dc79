#!/usr/bin/env python3
"""How fast `git rewind web` answers on 10,000 checkpoints, against git's CLI doing comparable work.

Builds a repository with bench/many_checkpoints.py, starts the real `git rewind web --no-open`
on it, and times (medians of interleaved runs, whole request over a fresh connection):

- the first answer after start (the cache is read in the background as the server starts);
- `GET /api/checkpoints?limit=500` and `limit=5000` (what the page asks first, then for the lanes),
  a filtered one (`q=`), and the list after a new checkpoint (only the changed notes are read);
- baselines in the same run: `git notes --ref rewind list` (the listing alone) and
  `git log --notes=rewind --format=%H%n%N -n 500 --glob=refs/rewind` (500 newest with their notes);
- a checkpointing hook call (`git-rewind hook --agent claude-code`, PreToolUse Edit) with and without
  the server running: the server must not slow the hook (it only polls one ref a second).

    python bench/web_bench.py                 # 10,000 checkpoints, 15 runs
    python bench/web_bench.py --count 2000 --runs 7
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from many_checkpoints import build  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = shutil.which("git-rewind", path=os.path.dirname(sys.executable)) or shutil.which("git-rewind")
REWIND = [SCRIPT] if SCRIPT else [sys.executable, "-m", "git_rewind"]
LOAD_ALL = ("from git_rewind.store import checkpoints; from git_rewind.base.repo import Repo; "
            "checkpoints.load_all(Repo.discover())")


class Server:
    def __init__(self, repo: str) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen([*REWIND, "web", "--no-open"], cwd=repo, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        url = urlsplit(self.proc.stdout.readline().strip())
        self.port = int(url.port or 0)
        self.token = self.open_tab(url.fragment.split("=", 1)[1])

    def open_tab(self, launch: str) -> str:
        """The tab credential the page gets for the link's launch token (POST /api/session, as the page)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        conn.request("POST", "/api/session", body=json.dumps({"launch": launch}), headers={
            "Host": f"127.0.0.1:{self.port}", "Origin": f"http://127.0.0.1:{self.port}",
            "Content-Type": "application/json"})
        response = conn.getresponse()
        body = response.read()
        conn.close()
        if response.status != 200:
            raise SystemExit(f"/api/session: HTTP {response.status}: {body[:200]!r}")
        token: str = json.loads(body)["token"]
        return token

    def get(self, path: str) -> tuple[float, bytes]:
        """One GET over a new connection, as the page's fetch: (ms, body)."""
        start = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        conn.request("GET", path, headers={"Host": f"127.0.0.1:{self.port}", "X-Rewind-Token": self.token})
        response = conn.getresponse()
        body = response.read()
        conn.close()
        if response.status != 200:
            raise SystemExit(f"{path}: HTTP {response.status}: {body[:200]!r}")
        return (time.perf_counter() - start) * 1000, body

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def timed(args: list[str], cwd: str, data: bytes | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(args, cwd=cwd, input=data, stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1000


def hook_call(repo: str, n: int) -> float:
    """One PreToolUse Edit hook call on a file changed just before: a checkpoint is taken."""
    path = os.path.join(repo, "src", "mod007.py")
    with open(path, "a") as fh:
        fh.write(f"# edit {n}\n")
    payload = {"session_id": "web-bench-session", "transcript_path": None, "cwd": repo,
               "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": path, "old_string": "line 1 of module 7", "new_string": f"edit {n}"}}
    return timed([*REWIND, "hook", "--agent", "claude-code"], repo, json.dumps(payload).encode())


def med(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    options = parser.parse_args()
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.split()[-1]
    print(f"web bench: {options.count} checkpoints, {options.runs} runs; git {git}; "
          f"Python {sys.version.split()[0]}; {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        repo = build(os.path.join(tmp, "repo"), options.count)
        loads = [timed([sys.executable, "-c", LOAD_ALL], repo) for _ in range(3)]
        print(f"checkpoints.load_all, whole process: {med(loads):.0f} ms (what the server reads once, at start)")
        server = Server(repo)
        first, body = server.get("/api/info")
        assert json.loads(body)["count"] == options.count, body[:200]
        print(f"first answer (/api/info) {first:.0f} ms after the URL; "
              f"{(time.perf_counter() - server.started) * 1000:.0f} ms after start")
        rows: dict[str, list[float]] = {name: [] for name in (
            "api limit=500", "api limit=5000", "api q=faster (filter)", "git notes list", "git log -n 500 + notes")}
        for _ in range(options.runs):
            rows["api limit=500"].append(server.get("/api/checkpoints?limit=500")[0])
            rows["api limit=5000"].append(server.get("/api/checkpoints?limit=5000")[0])
            rows["api q=faster (filter)"].append(server.get("/api/checkpoints?q=faster&limit=500")[0])
            rows["git notes list"].append(timed(["git", "notes", "--ref", "rewind", "list"], repo))
            rows["git log -n 500 + notes"].append(timed(
                ["git", "log", "--notes=rewind", "--format=%H%n%N", "-n", "500", "--glob=refs/rewind"], repo))
        base = med(rows["git log -n 500 + notes"])
        for name, values in rows.items():
            print(f"  {name:<26} {med(values):7.1f} ms  (x{med(values) / base:.2f} git log -n 500)")
        hook_without: list[float] = []
        hook_with: list[float] = []
        after_snap: list[float] = []
        server.stop()
        for n in range(options.runs):  # interleaved, in turn first with and first without the server
            for running in ((True, False) if n % 2 else (False, True)):
                if running:
                    server = Server(repo)
                    server.get("/api/info")
                time.sleep(2)  # the same quiet before each call; the server polls nothing without a page
                (hook_with if running else hook_without).append(hook_call(repo, len(hook_with) + len(hook_without)))
                if running:
                    time.sleep(1)
                    after_snap.append(server.get("/api/checkpoints?limit=500")[0])
                    server.stop()
        print(f"  {'api after a new checkpoint':<26} {med(after_snap):7.1f} ms  (only the changed notes read)")
        w, wo = med(hook_with), med(hook_without)
        print(f"hook (PreToolUse Edit, a checkpoint): median {wo:.0f} ms without the server, {w:.0f} ms with it "
              f"(x{w / wo:.2f}); fastest {min(hook_without):.0f} and {min(hook_with):.0f} ms "
              f"(x{min(hook_with) / min(hook_without):.2f})")
        target = med(rows["api limit=500"])
        print(f"{'PASS' if target < 200 else 'FAIL'}: /api/checkpoints answers in {target:.0f} ms (< 200 ms)")


if __name__ == "__main__":
    main()
