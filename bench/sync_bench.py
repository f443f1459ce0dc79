"""Sharing through a remote: `git rewind push` / `fetch` against git's own `push` / `fetch` of the same
objects as a plain branch, in the same run, on the same disk.

    python bench/sync_bench.py              # 1,000 checkpoints of a 20k-file repository, then one more
    python bench/sync_bench.py --scale      # also 50 clones x 40 sessions x 25 checkpoints to one remote
    python bench/sync_bench.py --quick      # smaller, to try it
    python bench/sync_bench.py --list       # only part 3: list --remote of 50,000 fetched checkpoints

Part 1, per operation: the whole `git rewind push` (a process, as a person runs it); the copy and
redaction alone (share.build, in process); the transport alone (`git rewind push` once the copy is built,
so it only sends); and `git push` of the very same commits as a branch to another bare repository: the
ratio transport / git push is what the goal (within 1.2x) is about. Then one new checkpoint, then a fresh
clone's `git rewind fetch` against `git fetch` of that branch.

Part 2 (--scale): many machines pushing to one bare remote, then a fresh clone's fetch and
`list --remote`: time, refs on the remote, its size.

Part 3 (--list): `git rewind list --remote team` over 50 machines' copies of 1,000 checkpoints each, built
directly with one fast-import stream (many_checkpoints.build_fetched: what `fetch` leaves, without 50 pushes):
the first run (no notes cache), then runs after it (the default 20 newest, `-n 0`, `-n 0 --json`), interleaved
with git's CLI reading the same notes (`git notes --ref R list` of each machine's ref, then one `git cat-file
--batch` of every note) and `python -I -S -c pass`. Target: after the first, under 1 s.
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from many_checkpoints import build, build_fetched  # noqa: E402

REWIND = [sys.executable, "-m", "git_rewind"]
ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com", "GIT_REWIND_DAEMON": "off"}


def run(args: list[str], cwd: str, env: dict[str, str] | None = None) -> float:
    """Seconds ARGS took (it must succeed)."""
    started = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env or ENV, capture_output=True)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {done.stderr.decode(errors='replace')}")
    return took


def bare(path: str) -> str:
    subprocess.run(["git", "init", "-q", "--bare", path], check=True, env=ENV)
    return path


def size(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def ratio(a: float, b: float) -> str:
    return f"x{a / b:.2f}" if b else "-"


def part1(root: str, checkpoints: int, files: int) -> None:
    work = build(os.path.join(root, "work"), checkpoints, sessions=12, files=files)
    name = "bench-machine"
    env = {**ENV, "GIT_REWIND_SYNC_NAME": name}
    ours, theirs = bare(os.path.join(root, "ours.git")), bare(os.path.join(root, "theirs.git"))
    ref = f"refs/notes/rewind-share/{name}"
    print(f"part 1: {checkpoints} checkpoints of a {files}-file repository")
    # A first push from scratch, copy included, as a person runs it; then the copy is built again, in process.
    again = bare(os.path.join(root, "again.git"))
    whole = run([*REWIND, "push", again], work, env)
    print(f"  whole first push (copy, redaction, transport, one process): {whole:.2f} s")
    shutil.rmtree(os.path.join(work, ".git", "rewind", "share"))
    subprocess.run(["git", "update-ref", "-d", ref], cwd=work, check=True)
    # The copy and its redaction alone, in process (what the first push spends before any network).
    os.environ.update(env)
    from git_rewind.base.repo import Repo
    from git_rewind.sharing import share
    from git_rewind.store import checkpoints as cps

    repo = Repo.discover(work)
    items = cps.load_all(repo)
    started = time.perf_counter()
    report = share.build(repo, items, name, "bench")
    copy = time.perf_counter() - started
    print(f"  copy + redaction (share.build): {copy:.2f} s for {report.copied} checkpoints "
          f"({1000 * copy / max(report.copied, 1):.2f} ms each); left out {len(report.left_out)} files")
    # The transport alone, in process (sync._send: git push of the built copy, reading its answer), against
    # `git push` of the same commits as a branch; alternating, each into a new bare repository, so neither
    # side gets the warmer cache.
    from git_rewind.sharing import sync

    def send(remote: str) -> float:
        started = time.perf_counter()
        sync._send(repo, sync.Pushed(sync.Remote(remote, sync.url_label(remote)), name, report), False)
        return time.perf_counter() - started

    ours_times, plain_times = [], []
    for rep in range(3):
        ours_times.append(send(bare(os.path.join(root, f"ours{rep}.git"))))
        plain_times.append(run(["git", "push", "-q", bare(os.path.join(root, f"theirs{rep}.git")),
                                f"{ref}:refs/heads/equivalent"], work))
    transport, plain = statistics.median(ours_times), statistics.median(plain_times)
    run([*REWIND, "push", ours], work, env)
    run(["git", "push", "-q", theirs, f"{ref}:refs/heads/equivalent"], work)
    print(f"  transport of the first push (sync._send, median of 3): {transport:.2f} s; "
          f"git push of the same commits as a branch: {plain:.2f} s; {ratio(transport, plain)}")
    # One new checkpoint.
    with open(os.path.join(work, "src", "mod000.py"), "a") as fh:
        fh.write("one more line\n")
    run([*REWIND, "snap", "-m", "one more"], work, env)
    started = time.perf_counter()
    report = share.build(repo, cps.load_all(repo), name, "bench")
    one_copy = time.perf_counter() - started
    one_send = send(ours)
    one_plain = run(["git", "push", "-q", theirs, f"{ref}:refs/heads/equivalent"], work)
    print(f"  one new checkpoint: copy {1000 * one_copy:.0f} ms; transport {1000 * one_send:.0f} ms against "
          f"git push {1000 * one_plain:.0f} ms ({ratio(one_send, one_plain)})")
    with open(os.path.join(work, "src", "mod001.py"), "a") as fh:
        fh.write("and one more\n")
    run([*REWIND, "snap", "-m", "and one more"], work, env)
    whole_one = run([*REWIND, "push", ours], work, env)
    print(f"  one new checkpoint, the whole git rewind push process: {1000 * whole_one:.0f} ms")
    nothing = statistics.median(run([*REWIND, "push", ours], work, env) for _ in range(5))
    print(f"  a push with nothing new: {1000 * nothing:.0f} ms (no network)")
    # Fetches into fresh clones.
    # git rewind fetch checks every object it receives (transfer.fsckObjects): git fetch is timed both ways.
    times = []
    for label, remote, args in (("git rewind fetch", ours, [*REWIND, "fetch"]),
                                ("git fetch", theirs, ["git", "fetch", "-q"]),
                                ("git fetch fsck", theirs, ["git", "-c", "transfer.fsckObjects=true", "fetch", "-q"])):
        fresh = os.path.join(root, f"fresh-{label.replace(' ', '-')}")
        subprocess.run(["git", "init", "-q", fresh], check=True, env=ENV)
        spec = [] if label.startswith("git rewind") else ["refs/heads/equivalent:refs/heads/equivalent"]
        times.append(run([*args, remote, *spec], fresh))
    print(f"  fresh clone's fetch: git rewind fetch {times[0]:.2f} s; git fetch of the branch {times[1]:.2f} s "
          f"({ratio(times[0], times[1])}); with transfer.fsckObjects {times[2]:.2f} s ({ratio(times[0], times[2])})")


def part2(root: str, machines: int, sessions: int, per_session: int) -> None:
    remote = bare(os.path.join(root, "team.git"))
    count = sessions * per_session
    now = time.time()
    print(f"part 2: {machines} clones x {sessions} sessions x {per_session} checkpoints to one remote")
    pushes = []
    for m in range(machines):
        work = build(os.path.join(root, f"clone{m}"), count, sessions=sessions, now=now)
        pushes.append(run([*REWIND, "push", remote], work, {**ENV, "GIT_REWIND_SYNC_NAME": f"machine{m:02d}"}))
        shutil.rmtree(work)
    refs = subprocess.run(["git", "for-each-ref"], cwd=remote, capture_output=True, text=True).stdout.splitlines()
    print(f"  pushes: median {statistics.median(pushes):.2f} s, max {max(pushes):.2f} s; "
          f"remote: {len(refs)} refs, {size(remote) / 1e6:.1f} MB")
    fresh = os.path.join(root, "newcomer")
    subprocess.run(["git", "init", "-q", fresh], check=True, env=ENV)
    fetch = run([*REWIND, "fetch", remote], fresh)
    started = time.perf_counter()
    listed = subprocess.run([*REWIND, "list", "--remote", remote, "-n", "0", "--json"], cwd=fresh, env=ENV,
                            capture_output=True)
    took = time.perf_counter() - started
    import json

    print(f"  fresh clone: fetch {fetch:.2f} s ({size(os.path.join(fresh, '.git')) / 1e6:.1f} MB); "
          f"list --remote of {len(json.loads(listed.stdout))} checkpoints {took:.2f} s")


def part3(root: str, machines: int, per_machine: int, runs: int) -> None:
    count = machines * per_machine
    started = time.perf_counter()
    work = build_fetched(os.path.join(root, "fetched"), "team", machines, per_machine)
    print(f"part 3: list --remote over {count} fetched checkpoints ({machines} machines; built in "
          f"{time.perf_counter() - started:.1f} s); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    cache = os.path.join(work, ".git", "rewind", "fetched-notes-cache")
    # As bench.py: with PYTHONDONTWRITEBYTECODE (some sandboxes set it) every process would compile git-rewind's
    # modules again; an installed package has its bytecode, so give Python a cache of its own here.
    env = {key: value for key, value in ENV.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = os.path.join(root, "pycache")
    run([*REWIND, "--version"], work, env)  # untimed: the bytecode written once
    first = run([*REWIND, "list", "--remote", "team"], work, env)
    size_mb = os.path.getsize(cache) / 1e6
    cli = ("for r in $(git for-each-ref --format='%(refname)' refs/notes/rewind-remote/team); do "
           "git notes --ref $r list; done | cut -d' ' -f1 | git cat-file --batch > /dev/null")
    rows: dict[str, list[float]] = {name: [] for name in (
        "list --remote team (20 newest)", "list --remote team -n 0", "list --remote team -n 0 --json",
        "git CLI: notes list of each ref + cat-file --batch", "git rewind --version (the command's floor)",
        "python -I -S -c pass")}
    commands = {
        "list --remote team (20 newest)": [*REWIND, "list", "--remote", "team"],
        "list --remote team -n 0": [*REWIND, "list", "--remote", "team", "-n", "0"],
        "list --remote team -n 0 --json": [*REWIND, "list", "--remote", "team", "-n", "0", "--json"],
        "git CLI: notes list of each ref + cat-file --batch": ["sh", "-c", cli],
        "git rewind --version (the command's floor)": [*REWIND, "--version"],
        "python -I -S -c pass": [sys.executable, "-I", "-S", "-c", "pass"]}
    for n in range(runs):
        names = list(commands)
        for name in names[n % len(names):] + names[:n % len(names)]:  # a rotating order: the load falls on all
            rows[name].append(run(commands[name], work, env))
    base = statistics.median(rows["git CLI: notes list of each ref + cat-file --batch"])
    print(f"  {'first run (no cache; writes it, ' + f'{size_mb:.0f} MB)':<52} {1000 * first:8.0f} ms")
    for name, values in rows.items():
        print(f"  {name:<52} {1000 * statistics.median(values):8.0f} ms  x{statistics.median(values) / base:.2f} CLI")
    target = statistics.median(rows["list --remote team (20 newest)"])
    print(f"  {'PASS' if target < 1.0 else 'FAIL'}: list --remote of {count} after the first run: "
          f"{1000 * target:.0f} ms (target < 1000 ms); load average {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--scale", action="store_true")
    parser.add_argument("--list", action="store_true", help="only part 3 (list --remote of 50,000)")
    parser.add_argument("--runs", type=int, default=7, help="part 3's runs")
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="sync-bench-")
    try:
        if args.list:
            part3(root, 5 if args.quick else 50, 200 if args.quick else 1000, args.runs)
            return
        if args.quick:
            part1(root, 200, 2000)
        else:
            part1(root, 1000, 20_000)
        if args.scale:
            if args.quick:
                part2(root, 5, 8, 5)
            else:
                part2(root, 50, 40, 25)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
