"""What taking back only the agents' work costs: the turn-end checkpoints the hook now takes, and
`undo --agent-only` against a plain `undo`, each beside git's own CLI doing the same work in the same run.

1. The hook at a turn end (`Stop`, balanced tier): a full checkpoint when files changed since the
   prompt, which opened the turn. Per run, for each size: an untimed `UserPromptSubmit` (the turn's
   prompt checkpoint), K files changed (untimed), then the timed `Stop`; and the same with nothing
   changed. Baseline: git's `add -A` + `write-tree` on a private index (`GIT_INDEX_FILE`) brought up
   to date untimed, the same K files changed, the two processes timed together.
2. `git rewind undo P --agent-only --yes` against `git rewind undo P --yes`: after the prompt
   checkpoint P the agent changes --agent-files files in one turn (its `Stop` checkpoints them), then
   the person edits --person-files others; agent-only takes the agent's back and keeps the person's
   edits (merged by `git merge-tree`), plain undo takes both back. Also both with `--dry-run` (the
   plan and, for agent-only, the merge and conflict detection, nothing written), and
   `git checkout <P> -- .` doing the plain undo's work.

Whole-process wall time, medians, every tool interleaved in a rotating order; before each timed
process the files are edited with content unique to the run and the clock is past the second of the
edits (no racily clean index entries for anyone). Results are checked: the hook's log line and the
turn-end note's origins, every file's content after each undo.

    python bench/agent_only_bench.py                          # 1k and 20k files; undo on 5k; 7 runs
    python bench/agent_only_bench.py --sizes 1000 --undo-files 2000 --runs 3     # quick

Run it with the Python of a non-editable install (`pip install .`): it runs the `git-rewind` script
beside that interpreter. See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b", "GIT_CONFIG_NOSYSTEM": "1", "GIT_REWIND_AUTO_PACK": "0",
           "LC_ALL": "C"}


class BenchError(Exception):
    pass


def rewind_command() -> list[str]:
    beside = os.path.join(os.path.dirname(sys.executable), "git-rewind")
    if os.access(beside, os.X_OK):
        return [beside]
    found = shutil.which("git-rewind")
    return [found] if found else [sys.executable, "-m", "git_rewind"]


def path_of(i: int) -> str:
    return f"src/d{i % 100:02d}/f{i}.txt"


def original(i: int) -> str:
    return f"file {i}\n" + "line of text\n" * 80


def next_second() -> None:
    """Wait until the clock is past the second of the last edit (git's timestamps are in seconds)."""
    now = time.time()
    time.sleep(int(now) + 1.05 - now)


def timed(args: list[str], cwd: str, env: dict[str, str], input: bytes | None = None) -> tuple[float, bytes]:
    os.sync()  # untimed: what the preparation left dirty is written out before the timed process
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, env=env, input=input if input is not None else b"", capture_output=True)
    ms = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise BenchError(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')}")
    return ms, proc.stdout


class Repo:
    """A repository of N committed files of ~1 KB, and the hook and commands run on it."""

    def __init__(self, root: str, files: int, env: dict[str, str], rewind: list[str]) -> None:
        self.root = root
        self.files = files
        self.env = env
        self.rewind = rewind
        self.transcript = os.path.join(os.path.dirname(root), f"transcript-{files}.jsonl")
        self.log_path = os.path.join(root, ".git", "rewind", "hook.log")
        self.private_index = os.path.join(root, ".git", "bench-cli-index")
        subprocess.run(["git", "init", "-q", "-b", "main", root], check=True, env=env)
        for i in range(files):
            self.write(i, original(i))
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "init")
        self.git("status", "--porcelain")  # refresh the user's index, as an editor's git integration does
        with open(self.transcript, "w") as fh:
            fh.write("")
        subprocess.run([*rewind, "snap", "-m", "start"], cwd=root, env=env, check=True, capture_output=True)

    def write(self, i: int, text: str) -> None:
        full = os.path.join(self.root, path_of(i))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as fh:
            fh.write(text)

    def read(self, i: int) -> str:
        with open(os.path.join(self.root, path_of(i))) as fh:
            return fh.read()

    def git(self, *args: str, env: dict[str, str] | None = None) -> str:
        proc = subprocess.run(["git", *args], cwd=self.root, env=env or self.env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise BenchError(f"git {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout.strip()

    # the hook -----------------------------------------------------------------------------------

    def payload(self, event: str, session: str, r: int, **extra: Any) -> bytes:
        data = {"session_id": session, "transcript_path": self.transcript, "cwd": self.root,
                "prompt_id": f"28e4b330-6feb-4007-a1fa-{r:012d}", "permission_mode": "bypassPermissions",
                "hook_event_name": event, **extra}
        return json.dumps(data).encode()

    def hook(self, event: str, session: str, r: int, action: str, reason: str, timed_call: bool = False,
             **extra: Any) -> tuple[float, dict[str, Any]]:
        """One hook call (timed or not); its hook.log line must say ACTION with a reason starting REASON."""
        try:
            offset = os.path.getsize(self.log_path)
        except FileNotFoundError:
            offset = 0
        args = [*self.rewind, "hook", "--agent", "claude-code"]
        data = self.payload(event, session, r, **extra)
        env = {k: v for k, v in self.env.items() if k != "GIT_REWIND_AUTO_PACK"} if timed_call else self.env
        if timed_call:
            ms = timed(args, self.root, env, data)[0]
        else:
            ms = 0.0
            subprocess.run(args, cwd=self.root, env=env, input=data, capture_output=True)
        with open(self.log_path, "rb") as fh:
            fh.seek(offset)
            entries = [json.loads(line) for line in fh.read().splitlines() if line.strip()]
        if len(entries) != 1 or entries[0].get("action") != action or not str(
                entries[0].get("reason", "")).startswith(reason):
            raise BenchError(f"{event} of {session}: expected {action} ({reason}...), hook.log says {entries}")
        return ms, entries[0]

    def prompt(self, session: str, r: int) -> int:
        """An untimed prompt: the turn opens, its checkpoint is taken; returns its seq."""
        _ms, entry = self.hook("UserPromptSubmit", session, r, "checkpoint", "every prompt",
                               prompt=f"change the files, round {r}")
        return int(entry["seq"])

    def stop_extra(self) -> dict[str, Any]:
        return {"stop_hook_active": False, "last_assistant_message": "done", "background_tasks": [],
                "session_crons": []}

    def origins(self, seq: int) -> dict[str, str]:
        for line in self.git("notes", "--ref=rewind", "list").splitlines():
            note = json.loads(self.git("notes", "--ref=rewind", "show", line.split()[1]))
            if note.get("seq") == seq:
                return dict(note.get("origins") or {})
        raise BenchError(f"no note with seq {seq}")


# 1. the turn-end hook -------------------------------------------------------------------------------


def stop_row(repo: Repo, changed: int, r: int, tag: str) -> float:
    session = f"ab-stop-{changed}"
    repo.prompt(session, r)
    paths = [(r * 37 + k * 11) % repo.files for k in range(changed)]
    for i in paths:
        repo.write(i, f"{tag} {r} {i}\n" + original(i))
    next_second()
    if changed:
        ms, entry = repo.hook("Stop", session, r, "checkpoint", "turn end", timed_call=True, **repo.stop_extra())
        want = {path_of(i): "agent" for i in paths}
        if repo.origins(int(entry["seq"])) != want:
            raise BenchError(f"Stop #{entry['seq']}: origins {repo.origins(int(entry['seq']))}, expected {want}")
    else:
        ms, _entry = repo.hook("Stop", session, r, "unchanged", "turn end", timed_call=True, **repo.stop_extra())
    return ms


def cli_row(repo: Repo, changed: int, r: int, tag: str) -> float:
    env = {**repo.env, "GIT_INDEX_FILE": repo.private_index}
    repo.git("add", "-A", env=env)  # up to date, as the hook's private index is after the prompt
    paths = [(r * 37 + k * 11 + 5) % repo.files for k in range(changed)]
    for i in paths:
        repo.write(i, f"{tag} {r} {i}\n" + original(i))
    next_second()
    os.sync()
    start = time.perf_counter()
    for args in (["git", "add", "-A"], ["git", "write-tree"]):
        proc = subprocess.run(args, cwd=repo.root, env=env, capture_output=True)
        if proc.returncode != 0:
            raise BenchError(f"{args} failed: {proc.stderr!r}")
    return (time.perf_counter() - start) * 1000


def python_pass(repo: Repo, _changed: int, _r: int, _tag: str) -> float:
    return timed([sys.executable, "-c", "pass"], repo.root, repo.env)[0]


STOP_ROWS = [("Stop hook, 1 changed", stop_row, 1), ("Stop hook, 10 changed", stop_row, 10),
             ("Stop hook, nothing changed", stop_row, 0),
             ("git add -A + write-tree, 1 changed", cli_row, 1), ("git add -A + write-tree, 10 changed", cli_row, 10),
             ("git add -A + write-tree, nothing changed", cli_row, 0), ("python -c pass", python_pass, 0)]


def bench_stop(repos: list[Repo], runs: int) -> dict[int, dict[str, list[float]]]:
    times: dict[int, dict[str, list[float]]] = {repo.files: {name: [] for name, _f, _c in STOP_ROWS} for repo in repos}
    for r in range(runs):
        for repo in repos:
            order = STOP_ROWS[r % len(STOP_ROWS):] + STOP_ROWS[:r % len(STOP_ROWS)]
            for name, row, changed in order:
                times[repo.files][name].append(row(repo, changed, r, name))
    return times


# 2. undo --agent-only against undo ----------------------------------------------------------------


UNDO_WAYS = ["agent-only", "plain", "agent-only --dry-run", "plain --dry-run", "git checkout"]


def undo_once(repo: Repo, way: str, agent: int, person: int, r: int) -> float:
    session = "ab-undo"
    for i in range(agent + person):  # back to the committed state (untimed)
        repo.write(i, original(i))
    seq = repo.prompt(session, r)
    prompt_commit = repo.git("rev-parse", f"refs/rewind/{session}")
    for i in range(agent):
        repo.write(i, f"agent {way} {r} {i}\n" + original(i))
    _ms, entry = repo.hook("Stop", session, r, "checkpoint", "turn end", **repo.stop_extra())
    origins = repo.origins(int(entry["seq"]))
    if len(origins) != agent or set(origins.values()) != {"agent"}:
        raise BenchError(f"the agent's Stop checkpoint has origins for {len(origins)} paths: {set(origins.values())}")
    for i in range(agent, agent + person):
        repo.write(i, original(i) + f"the person's line {way} {r}\n")
    before = {i: repo.read(i) for i in (0, agent - 1, agent, agent + person - 1)}
    next_second()
    if way == "git checkout":
        ms, out = timed(["git", "checkout", prompt_commit, "--", "."], repo.root, repo.env)
    else:
        flags = (["--agent-only"] if way.startswith("agent-only") else []) + (
            ["--dry-run"] if way.endswith("--dry-run") else ["--yes"])
        ms, out = timed([*repo.rewind, "undo", str(seq), *flags], repo.root, repo.env)
    # What each way must leave: the dry runs nothing changed; plain undo and checkout every file as at the
    # prompt; agent-only the agent's files as at the prompt and the person's edits as they were.
    for i in (0, agent - 1, agent, agent + person - 1):
        have = repo.read(i)
        if way.endswith("--dry-run"):
            want = before[i]
        elif way.startswith("agent-only") and i >= agent:
            want = before[i]
        else:
            want = original(i)
        if have != want:
            raise BenchError(f"{way}: {path_of(i)} is {have[:40]!r}, expected {want[:40]!r}\n{out.decode()[-500:]}")
    listed = out.count(b"\n")
    if way == "agent-only --dry-run" and listed < agent:
        raise BenchError(f"{way} listed {listed} lines for {agent} files")
    return ms


def bench_undo(repo: Repo, agent: int, person: int, runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {way: [] for way in UNDO_WAYS}
    for r in range(runs):
        for way in UNDO_WAYS[r % len(UNDO_WAYS):] + UNDO_WAYS[:r % len(UNDO_WAYS)]:
            times[way].append(undo_once(repo, way, agent, person, r))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 20000], help="repositories for the Stop hook")
    parser.add_argument("--undo-files", type=int, default=5000, help="the repository the undo runs on")
    parser.add_argument("--agent-files", type=int, default=1000)
    parser.add_argument("--person-files", type=int, default=10)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--skip-stop", action="store_true")
    parser.add_argument("--skip-undo", action="store_true")
    args = parser.parse_args()
    temp = tempfile.mkdtemp(prefix="agent-only-bench-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(GIT_ENV, HOME=os.path.join(temp, "home"), XDG_CONFIG_HOME=os.path.join(temp, "home", ".config"))
    os.makedirs(env["XDG_CONFIG_HOME"])
    rewind = rewind_command()
    import git_rewind

    print(f"git-rewind {rewind[0]} (git_rewind from {os.path.dirname(git_rewind.__file__)}); "
          f"{subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.strip()}; "
          f"load average {os.getloadavg()[0]:.1f}; {args.runs} runs, medians in ms, whole process")
    try:
        if not args.skip_stop:
            repos = [Repo(os.path.join(temp, f"stop-{n}"), n, env, rewind) for n in args.sizes]
            times = bench_stop(repos, args.runs)
            for n, rows in times.items():
                med = {name: statistics.median(v) for name, v in rows.items()}
                print(f"\n== the turn-end hook, {n:,} files ==")
                print(f"{'process':<42} {'median ms':>10} {'vs git CLI':>11} {'vs pass':>8}")
                for name, row, _changed in STOP_ROWS:
                    cli = med.get(name.replace("Stop hook,", "git add -A + write-tree,"))
                    ratio = f"{med[name] / cli:.2f}x" if row is stop_row and cli else "-"
                    print(f"{name:<42} {med[name]:>10.1f} {ratio:>11} {med[name] / med['python -c pass']:>7.2f}x")
        if not args.skip_undo:
            repo = Repo(os.path.join(temp, "undo"), args.undo_files, env, rewind)
            times_u = bench_undo(repo, args.agent_files, args.person_files, args.runs)
            med = {way: statistics.median(v) for way, v in times_u.items()}
            print(f"\n== undo of one turn's {args.agent_files:,} changed files, {args.person_files} edited by the "
                  f"person since; {args.undo_files:,} files ==")
            print(f"{'command':<42} {'median ms':>10} {'vs undo':>8} {'vs checkout':>12}")
            for way in UNDO_WAYS:
                command = "git checkout <P> -- ." if way == "git checkout" else "git rewind undo P " + " ".join(
                    ["--agent-only"] * way.startswith("agent-only") + ["--dry-run" if "dry" in way else "--yes"])
                print(f"{command:<42} {med[way]:>10.1f} {med[way] / med['plain']:>7.2f}x "
                      f"{med[way] / med['git checkout']:>11.2f}x")
            print(f"\ngoal (issue 13): agent-only <= 2x plain undo: {med['agent-only'] / med['plain']:.2f}x "
                  f"{'PASS' if med['agent-only'] <= 2 * med['plain'] else 'FAIL'}")
    finally:
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    try:
        main()
    except BenchError as exc:
        sys.exit(f"error: {exc}")
