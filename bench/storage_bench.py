#!/usr/bin/env python3
"""What 1,000 checkpoints of a one-line change cost on disk, against the compressed size of the change.

Builds bench.py's synthetic repository (20,000 files by default), takes the session's first
checkpoint (it holds the untracked files), then N checkpoints of a one-line change each, the way
an agent's Edit hook takes them (store.save with the edited path, in this process: no process
start per checkpoint), with the automatic pack on (auto_pack, 2000 loose objects) as hooks run it.
At the end it waits for any background repack and runs the same `git repack -d -q` once more, as
the next automatic pack would. Prints the growth of .git (objects, and git-rewind's private files)
since the first checkpoint, against the zlib-compressed size of what changed: each one-line diff
(a unified diff with 3 lines of context) and each changed file's new content. See bench/README.md.

    python bench/storage_bench.py                       # 20,000 files, 1,000 checkpoints
    python bench/storage_bench.py --files 1000 --checkpoints 200 --spread 50 --json out.json
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import zlib
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from helpers.procs import wait_for_repack  # noqa: E402

from bench import Bench, isolated_env, rewind_command


def tree_bytes(path: str) -> int:
    """Bytes of every file under PATH (sizes, not blocks)."""
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except FileNotFoundError:
                pass
    return total


def by_type(root: str, revs: list[str]) -> dict[str, list[int]]:
    """The objects `git rev-list --objects REVS` lists, by type: [count, bytes on disk]."""
    listed = subprocess.run(["git", "rev-list", "--objects", "--no-object-names", *revs], cwd=root,
                            capture_output=True, check=True).stdout
    sizes = subprocess.run(["git", "cat-file", "--batch-check=%(objecttype) %(objectsize:disk)"], cwd=root,
                           input=listed, capture_output=True, check=True).stdout.decode()
    kinds: dict[str, list[int]] = {}
    for line in sizes.splitlines():
        kind, size = line.split()
        entry = kinds.setdefault(kind, [0, 0])
        entry[0] += 1
        entry[1] += int(size)
    return kinds


def one_line_change(text: bytes, rng: random.Random, n: int) -> bytes:
    """TEXT with one of its lines replaced by an edited version of itself."""
    lines = text.split(b"\n")
    i = rng.randrange(1, max(2, len(lines) - 1))
    lines[i] = lines[i] + f"  # edit {n}".encode()
    return b"\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20000, help="files in the repository (default 20000)")
    parser.add_argument("--checkpoints", type=int, default=1000, help="one-line checkpoints (default 1000)")
    parser.add_argument("--spread", type=int, default=1,
                        help="how many different files the edits go to, in turn (default 1: the same file)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--json", metavar="FILE", help="also write the numbers as JSON")
    args = parser.parse_args(argv)

    base = tempfile.mkdtemp(prefix="rewind-storage-")
    env = isolated_env(os.path.join(base, "home"), os.path.join(base, "pycache"))
    b = Bench(base, args.files, args.seed, 1, 1, env, rewind_command(), print)
    print(f"building {args.files} files in {b.repo}")
    b.build_repo()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(b.repo)
    from git_rewind.base.repo import Repo
    from git_rewind.ops import gc
    from git_rewind.store import checkpoints, storage, store

    repo = Repo.discover(b.repo)
    gitdir = os.path.join(b.repo, ".git")
    user_objects = tree_bytes(os.path.join(gitdir, "objects"))
    store.save(repo, store.Request(session="bench", message="session start"))  # the untracked files
    wait_for_repack(b.repo, timeout=300)
    start_objects = tree_bytes(os.path.join(gitdir, "objects"))
    start_private = tree_bytes(os.path.join(gitdir, "rewind"))
    start_store = storage.measure(repo, checkpoints.load_all(repo))
    start_refs = [repo.read_ref("refs/rewind/bench"), repo.read_ref("refs/notes/rewind")]

    rng = random.Random(args.seed)
    targets = rng.sample(b.tree.tracked, args.spread)
    patch_z = blob_z = blob_raw = 0
    started = time.perf_counter()
    for n in range(args.checkpoints):
        rel = targets[n % len(targets)]
        path = os.path.join(b.repo, rel)
        with open(path, "rb") as fh:
            old = fh.read()
        new = one_line_change(old, rng, n)
        with open(path, "wb") as fh:
            fh.write(new)
        diff = "".join(difflib.unified_diff(old.decode().splitlines(True), new.decode().splitlines(True),
                                            f"a/{rel}", f"b/{rel}"))
        patch_z += len(zlib.compress(diff.encode()))
        blob_z += len(zlib.compress(new))
        blob_raw += len(new)
        result = store.save(repo, store.Request(session="bench", message=f"edit {n}", paths=[rel]))
        if not result.created:
            raise SystemExit(f"checkpoint {n} was not taken")
    took = time.perf_counter() - started
    loose_before = storage.objects_bytes(repo)
    wait_for_repack(b.repo, timeout=300)
    subprocess.run(["git", "repack", "-d", "-q"], cwd=b.repo, check=True)  # what the next automatic pack does
    objects = tree_bytes(os.path.join(gitdir, "objects"))
    private = tree_bytes(os.path.join(gitdir, "rewind"))
    items = checkpoints.load_all(repo)
    t = time.perf_counter()
    store_bytes = storage.measure(repo, items)
    measure_ms = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    plan = gc.cap(repo, max(1, store_bytes // 2), dry_run=True)
    plan_ms = (time.perf_counter() - t) * 1000
    n = args.checkpoints
    growth = objects - start_objects
    kinds = by_type(b.repo, ["refs/rewind/bench", "refs/notes/rewind", "--not", *[r for r in start_refs if r]])
    report: dict[str, Any] = {
        "files": args.files, "checkpoints": n, "spread": args.spread,
        "user_objects_bytes": user_objects,
        "first_checkpoint_objects_bytes": start_objects - user_objects,
        "objects_growth_bytes": growth,
        "private_files_growth_bytes": private - start_private,
        "store_measure_bytes": store_bytes - start_store,
        "objects_before_final_repack_bytes": loose_before - start_objects,
        "patches_zlib_bytes": patch_z, "blobs_zlib_bytes": blob_z, "blobs_raw_bytes": blob_raw,
        "ratio_to_patches": growth / patch_z, "ratio_to_blobs": growth / blob_z,
        "checkpoint_ms": took * 1000 / n, "measure_ms": measure_ms, "cap_plan_ms": plan_ms,
        "cap_plan_drops": len(plan.dropped), "new_objects_by_type": kinds,
    }
    print()
    print(f"{args.files} files; {n} checkpoints of a one-line change to {args.spread} file(s) in turn "
          f"({report['checkpoint_ms']:.1f} ms each, in process)")
    print(f"  the repository's own objects          {user_objects:>12,} B")
    print(f"  the session's first checkpoint        {start_objects - user_objects:>12,} B  (its untracked files)")
    print(f"  .git/objects growth, {n} checkpoints  {growth:>12,} B  ({growth / n:,.0f} B each)")
    print(f"    before the final repack             {loose_before - start_objects:>12,} B")
    for kind, (count, size) in sorted(kinds.items()):
        print(f"    {kind + 's':<8} {count:>6} new, on disk {size:>12,} B  ({size / n:,.0f} B per checkpoint)")
    print(f"  .git/rewind growth (private files)    {private - start_private:>12,} B")
    print(f"  the store's size grew by              {store_bytes - start_store:>12,} B  (storage.measure)")
    print(f"  what changed, zlib: one-line diffs    {patch_z:>12,} B  ({patch_z / n:,.0f} B each)")
    print(f"  what changed, zlib: whole new files   {blob_z:>12,} B  ({blob_z / n:,.0f} B each; raw {blob_raw:,})")
    print(f"  growth / compressed diffs             {growth / patch_z:>12.2f}")
    print(f"  growth / compressed new files         {growth / blob_z:>12.2f}")
    print(f"  storage.measure of the store          {measure_ms:>12.0f} ms")
    print(f"  gc.cap planning half the size (dry)   {plan_ms:>12.0f} ms  (would drop {len(plan.dropped)})")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
    if args.keep:
        print(f"kept {base}")
    else:
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
