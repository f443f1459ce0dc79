"""One checkpoint of one changed file written in process (pygit2, a long-lived `git update-ref`) against the
same checkpoint written through fast-import, in the same process and run, and git's CLI doing the same.

    python bench/writer_bench.py                   # 1,000 files, 21 runs
    python bench/writer_bench.py --size 20000 --runs 11

A repository of `--size` files (20 per directory, one commit) and a first checkpoint. Each run edits one
file (content unique to the run and tool), then times, in a rotating order:

- `write, in process` / `write, fast-import`: what a checkpoint writes once it knows the file (store._commit's
  objects and refs): the blob, the trees down to it, the commit, the note and its notes commit
  (objects.writer), both refs in one transaction (repo.move_refs); timed in this process. In process, the
  long-lived `git update-ref` is started by an untimed first checkpoint, as a daemon starts it once.
- `store.save --path, in process` / `... fast-import`: the whole checkpoint as `snap --path F` takes it
  (locks, hashing the file, the ignore check, attribution, note), in this process.
- `git CLI`: `hash-object -w F`, `update-index --cacheinfo` (a private index), `write-tree`, `commit-tree -p`,
  `update-ref`, whole processes, timed around all five.
- `python -I -S -c pass` and one trivial `git` process, whole processes, for scale.

After the runs, under GIT_TRACE, one more of each in-process row: the git processes each started are listed
(the write: none; a whole `store.save --path`: the ignore check, `git check-ignore`, which is not the
writer's); the last checkpoint holds the file's content and `git fsck` is clean. Target (issue 27): `write,
in process` well under 5 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def _git(repo: str, *args: str, env: dict[str, str] | None = None, input: bytes | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, env=env, input=input, capture_output=True,
                          check=True).stdout.decode().strip()


def _build(repo: str, size: int) -> list[str]:
    _git(repo, "init", "-q", "-b", "main")
    files = []
    for i in range(size):
        rel = f"d{i // 400:03}/s{(i // 20) % 20:02}/f{i}.txt"
        os.makedirs(os.path.join(repo, os.path.dirname(rel)), exist_ok=True)
        with open(os.path.join(repo, rel), "w") as fh:
            fh.write(f"file {i}\n" * 20)
        files.append(rel)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=b", "-c", "user.email=b@e", "commit", "-q", "-m", "init")
    return files


def _timed(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo_dir = os.path.join(tmp, "repo")
        os.makedirs(repo_dir)
        files = _build(repo_dir, args.size)
        os.chdir(repo_dir)
        for key in [k for k in os.environ if k.startswith("GIT_REWIND_")]:
            del os.environ[key]
        os.environ["GIT_REWIND_DAEMON"] = "off"

        from git_rewind.base import objects
        from git_rewind.base.gitcmd import COMMITTER
        from git_rewind.base.repo import NOTES_REF, REF_PREFIX, Repo
        from git_rewind.store import snapshot, store

        repo = Repo.discover(repo_dir)
        store.save(repo, store.Request(session="bench", message="first", auto_pack=0))
        cli_env = {**os.environ, "GIT_INDEX_FILE": os.path.join(tmp, "cli-index")}
        _git(repo_dir, "read-tree", "HEAD", env=cli_env)
        cli_parent = _git(repo_dir, "rev-parse", "HEAD")
        target = files[len(files) // 2]
        counter = [0]

        def edit(tool: str) -> bytes:
            counter[0] += 1
            content = f"{tool} run {counter[0]}\n".encode()
            with open(os.path.join(repo_dir, target), "wb") as fh:
                fh.write(content)
            return content

        def write(on: bool) -> None:
            """store._commit's objects and refs for one changed file."""
            objects.in_process(on)
            content = edit("write")
            tip = store.session_tip(repo, "bench")
            assert tip is not None
            change = snapshot.PathState(target)
            change.mode, change.content = snapshot.MODE_FILE, content
            now = int(time.time())

            def work() -> None:
                with objects.writer(repo) as fi:
                    commit, tree = fi.commit(REF_PREFIX + "bench", b"#0 bench\n", now, [tip.commit], tip.tree,
                                             [change])
                    notes = repo.read_ref(NOTES_REF)
                    made = fi.note(NOTES_REF, notes, commit, b'{"v": 1}\n', b"checkpoint\n", now)
                repo.move_refs({REF_PREFIX + "bench": commit, NOTES_REF: made},
                               {REF_PREFIX + "bench": tip.commit, NOTES_REF: notes})
                store._write_tip(repo, "bench", store.Tip(commit, tree, tip.seq), commit)

            samples[f"write, {'in process' if on else 'fast-import'}"].append(_timed(work))

        def save(on: bool) -> None:
            objects.in_process(on)
            edit("save")
            samples[f"store.save --path, {'in process' if on else 'fast-import'}"].append(
                _timed(lambda: store.save(repo, store.Request(session="bench", paths=[target], auto_pack=0))))

        def cli() -> None:
            nonlocal cli_parent
            edit("cli")

            def work() -> None:
                nonlocal cli_parent
                blob = _git(repo_dir, "hash-object", "-w", target)
                _git(repo_dir, "update-index", "--cacheinfo", f"100644,{blob},{target}", env=cli_env)
                tree = _git(repo_dir, "write-tree", env=cli_env)
                commit = _git(repo_dir, "-c", "user.name=b", "-c", "user.email=b@e", "commit-tree", tree, "-p",
                              cli_parent, "-m", "cli")
                _git(repo_dir, "update-ref", "refs/heads/cli", commit)
                cli_parent = commit

            samples["git CLI (5 processes)"].append(_timed(work))

        def scale() -> None:
            samples["python -I -S -c pass"].append(_timed(lambda: subprocess.run([sys.executable, "-I", "-S", "-c",
                                                                                  "pass"], check=True)))
            samples["git --version"].append(_timed(lambda: subprocess.run(["git", "--version"], check=True,
                                                                          capture_output=True)))

        steps = [lambda: write(True), lambda: write(False), lambda: save(True), lambda: save(False), cli, scale]
        samples: dict[str, list[float]] = {name: [] for name in (
            "write, in process", "write, fast-import", "store.save --path, in process",
            "store.save --path, fast-import", "git CLI (5 processes)", "python -I -S -c pass", "git --version")}
        write(True)  # untimed: pygit2 imported, the long-lived update-ref started, as in a daemon
        for name in samples:
            samples[name].clear()
        for run in range(args.runs):
            for i in range(len(steps)):
                steps[(run + i) % len(steps)]()
        trace = os.path.join(tmp, "trace")

        def traced(step: object) -> list[str]:
            """The git commands STEP started (GIT_TRACE)."""
            if os.path.exists(trace):
                os.unlink(trace)
            os.environ["GIT_TRACE"] = trace
            try:
                step()  # type: ignore[operator]
            finally:
                del os.environ["GIT_TRACE"]
            if not os.path.exists(trace):
                return []
            with open(trace) as fh:
                return [line.split("trace: ", 1)[1].strip() for line in fh if "trace: built-in" in line
                        or "trace: exec" in line]

        spawned_write = traced(lambda: write(True))
        spawned_save = traced(lambda: save(True))
        objects.in_process(True)
        content = edit("last")
        done = store.save(repo, store.Request(session="bench", message="last", auto_pack=0))
        objects.in_process(False)
        assert _git(repo_dir, "show", f"{done.commit}:{target}").encode() + b"\n" == content
        subprocess.run(["git", "fsck", "--no-progress"], cwd=repo_dir, check=True, capture_output=True)
        assert COMMITTER.decode() in _git(repo_dir, "cat-file", "-p", done.commit)

    version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"# writer_bench: {args.size:,} files, {args.runs} runs, load {os.getloadavg()[0]:.2f}, "
          f"Python {sys.version.split()[0]}, {version}")
    floor = statistics.median(samples["python -I -S -c pass"])
    print(f"{'operation (medians, ms)':40} {'median':>9} {'min':>9}  {'x python -I -S':>14}")
    for name, values in samples.items():
        med = statistics.median(values)
        print(f"{name:40} {med:9.2f} {min(values):9.2f}  {med / floor:13.2f}x")
    fi, ip = statistics.median(samples["write, fast-import"]), statistics.median(samples["write, in process"])
    print(f"write: in process {ip:.2f} ms, fast-import {fi:.2f} ms ({fi / ip:.1f}x); "
          f"git CLI {statistics.median(samples['git CLI (5 processes)']):.2f} ms")
    print(f"git processes started in process (GIT_TRACE): by the write {len(spawned_write)} {spawned_write}; "
          f"by a whole store.save --path {len(spawned_save)} {spawned_save}")
    ok = ip < 5.0
    print(f"target: write, in process < 5 ms: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
