"""How fast `redact.secret_paths` scans a checkpoint tree's blobs, and what it flags in real source.

Builds a scratch repository whose objects are the files of real source trees (default: this machine's
Python libraries and C headers, up to --files files), then times `secret_paths` on every (path, blob)
pair with an empty cache (the first push) and again with the cache it left (a later push), and lists
every file flagged (each one a false positive unless the tree really holds a secret). --lines also
counts the detectors' hits in text (the agents' sample transcripts and a repository's log), the
measure behind the plugins left out in redact.py's docstring.

    python bench/redact_bench.py --files 20000
    python bench/redact_bench.py --lines --log-repo /work/main
    python bench/redact_bench.py --decoding --tree /tmp/git --tree /tmp/jq --tree /tmp/requests
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from git_rewind.base.repo import Repo  # noqa: E402
from git_rewind.sharing import redact  # noqa: E402

DEFAULT_TREES = [f"/usr/lib/python3.{sys.version_info.minor}", "/usr/lib/python3/dist-packages", "/usr/include",
                 "/usr/share/doc"]


def source_files(trees: list[str], limit: int) -> list[str]:
    """Up to LIMIT regular files under TREES, in a stable order."""
    found: list[str] = []
    for tree in trees:
        for folder, dirs, files in os.walk(tree):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(folder, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    found.append(path)
                    if len(found) >= limit:
                        return found
    return found


def bench_files(count: int, trees: list[str]) -> None:
    files = source_files(trees, count)
    size = sum(os.path.getsize(f) for f in files)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["git", "init", "-q", tmp], check=True)
        out = subprocess.run(["git", "hash-object", "-w", "--stdin-paths", "--no-filters"], cwd=tmp, check=True,
                             input="\n".join(files).encode(), capture_output=True).stdout.decode().split()
        entries = [(path.lstrip("/"), oid) for path, oid in zip(files, out, strict=True)]
        repo = Repo.discover(tmp)
        start, cpu = time.perf_counter(), time.process_time()
        flagged = redact.secret_paths(repo, entries)
        cold, cpu = time.perf_counter() - start, time.process_time() - cpu
        redact._READ.clear()  # as a new process (the next push) finds it
        redact._path_facts.cache_clear()
        start = time.perf_counter()
        again = redact.secret_paths(repo, entries)
        warm = time.perf_counter() - start
        start = time.perf_counter()
        redact.secret_paths(repo, entries)
        memo = time.perf_counter() - start  # the same process asking again (once per checkpoint)
        assert again == flagged
    mib = size / 2**20
    print(f"{len(files)} files, {mib:.1f} MiB: first scan {cold:.2f} s ({len(files) / cold:.0f} files/s, "
          f"{mib / cold:.1f} MiB/s; {cpu:.2f} s of this process's CPU, the rest git and waiting); "
          f"again from the cache {warm * 1000:.0f} ms (a new process), {memo * 1000:.0f} ms (the same one)")
    print(f"flagged {len(flagged)}:")
    for path, reason in sorted(flagged.items()):
        print(f"  {path}: {reason}")


def text_strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in text_strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in text_strings(v)]
    return []


def bench_lines(log_repo: str) -> None:
    """Hits per detector, every detect-secrets plugin included, on the sample transcripts and a log."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
    from detect_secrets.plugins.keyword import QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP, KeywordDetector

    texts: list[str] = []
    for pattern in ("tests/samples/**/*.json*", "/work/shared/agents/samples/**/*.json*"):
        for name in glob.glob(pattern if pattern.startswith("/") else os.path.join(ROOT, pattern), recursive=True):
            for raw in open(name, errors="replace"):
                try:
                    texts += text_strings(json.loads(raw))
                except ValueError:
                    texts.append(raw)
    texts.append(subprocess.run(["git", "-C", log_repo, "log", "--format=%B", "-n", "3000"], capture_output=True,
                                text=True).stdout)
    lines = [line for text in texts for line in text.splitlines()]
    hits: collections.Counter[str] = collections.Counter()
    examples: dict[str, list[str]] = collections.defaultdict(list)
    for cls in get_mapping_from_secret_type_to_class().values():
        plugin = cls()
        for line in lines:
            if isinstance(plugin, HighEntropyStringsPlugin):
                found = [s for s in plugin.analyze_string(line)
                         if plugin.calculate_shannon_entropy(s) > plugin.entropy_limit]
            elif isinstance(plugin, KeywordDetector):
                found = list(plugin.analyze_string(line, QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP))
            else:
                found = list(plugin.analyze_string(line))
            hits[cls.__name__] += len(found)
            examples[cls.__name__] += found[: max(0, 3 - len(examples[cls.__name__]))]
    print(f"{len(lines)} lines, {sum(map(len, lines))} characters")
    for name, count in hits.most_common():
        if count:
            print(f"  {count:4} {name}: {examples[name]}")
    start = time.perf_counter()
    redacted = [redact.redact_text(text)[1] for text in texts]
    took = time.perf_counter() - start
    print(f"redact_text over them: {took:.2f} s, {sum(map(len, redacted))} findings "
          f"{collections.Counter(f.kind for found in redacted for f in found)}")


def bench_decoding(count: int, trees: list[str]) -> None:
    """What decoding base64 and hex runs adds: each file scanned with and without it (scan_file), every
    verdict it changes listed (a false hit unless the file really holds an encoded secret), the time it
    costs; and the paths whose names the scanner flags (secret_names)."""
    files = source_files(trees, count)
    decoding = redact._encoded
    changed: list[tuple[str, str | None]] = []
    size, plain, decoded = 0, 0.0, 0.0
    for path in files:
        with open(path, "rb") as fh:
            data = fh.read()
        size += len(data)
        redact._encoded = lambda *args: iter(())  # type: ignore[assignment,misc]
        start = time.perf_counter()
        without = redact.scan_file(path, data)
        plain += time.perf_counter() - start
        redact._encoded = decoding  # type: ignore[assignment]
        start = time.perf_counter()
        verdict = redact.scan_file(path, data)
        decoded += time.perf_counter() - start
        if verdict != without:
            changed.append((path, verdict))
    names = redact.secret_names(os.path.relpath(path, "/") for path in files)
    print(f"{len(files)} files, {size / 2**20:.1f} MiB: scanned in {plain:.2f} s without decoding, {decoded:.2f} s "
          f"with; verdicts decoding changed: {len(changed)}; names flagged: {len(names)}")
    for path, verdict in changed:
        print(f"  {path}: {verdict}")
    for path, kind in sorted(names.items()):
        print(f"  name: {path}: {kind}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--tree", action="append", help="a source tree to read (repeatable)")
    parser.add_argument("--lines", action="store_true", help="count detector hits in sample text instead")
    parser.add_argument("--decoding", action="store_true",
                        help="what decoding base64 and hex adds to scan_file: verdicts changed, time")
    parser.add_argument("--log-repo", default=ROOT)
    args = parser.parse_args()
    if args.lines:
        bench_lines(args.log_repo)
    elif args.decoding:
        bench_decoding(args.files, args.tree or DEFAULT_TREES)
    else:
        bench_files(args.files, args.tree or DEFAULT_TREES)


if __name__ == "__main__":
    main()
