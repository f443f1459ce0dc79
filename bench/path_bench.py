"""`snap --path F` in a repository with `.gitattributes` against the same repository without them, and both
against git's own CLI doing the same work, interleaved in one run.

Two copies of bench.py's synthetic tree (`--size` files, one commit, untracked files): one plain, one with
`* text=auto eol=lf` and `*.bat text eol=crlf` in its `.gitattributes` and some files committed with CRLF
(as jq's decNumber or any Windows-born project). With attributes, git's add may convert a file and takes
its decision from the user's index, so git-rewind hashes the named files through git (a scratch index
seeded from the user's entries) instead of in Python; it still reads only those files, as without
attributes. The git CLI baseline is what a tool that knows the file would run: without attributes
`hash-object -w F` + `update-index --cacheinfo`, with them `git add F` (git's own decision, with a private
index), then `write-tree`, `commit-tree -p`, `update-ref`.

    python bench/path_bench.py                     # 20,000 files, 11 runs
    python bench/path_bench.py --size 100000 --runs 7

Each run edits one file (the same path in both copies, content unique to the run and tool), then times the
whole process. After the runs a full `snap` must find nothing the `--path` checkpoints missed, and the
checkpoint must be the tree `git add -A` writes in a copy of the user's index.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402

ATTRIBUTES = b"* text=auto eol=lf\n*.bat text eol=crlf\n"


class Copy:
    """One repository of the pair, and its git CLI baseline's private index."""

    def __init__(self, base: str, name: str, size: int, seed: int, env: dict[str, str], attributes: bool) -> None:
        self.name = name
        self.repo = os.path.join(base, name)
        os.makedirs(self.repo)
        self.env = env
        self.attributes = attributes
        self.tree = B.Tree(self.repo, size, seed)
        self.cli_index = os.path.join(base, f"{name}.cli-index")
        self.cli_env = {**env, "GIT_INDEX_FILE": self.cli_index}
        self.cli_prev = ""
        self.crlf: list[str] = []

    def git(self, *args: str, env: dict[str, str] | None = None, input: bytes | None = None) -> str:
        return B.out(["git", *args], self.repo, env or self.env, input)

    def build(self) -> None:
        t = self.tree
        self.git("init", "-q", "-b", "main")
        with open(os.path.join(self.repo, ".gitignore"), "wb") as fh:
            fh.write(B.GITIGNORE)
        for rel in t.tracked:
            t.write(rel, t.content(rel))
        if self.attributes:
            # Every 50th file committed with CRLF, before the attributes came: the index decides for those.
            self.crlf = t.tracked[::50]
            for rel in self.crlf:
                t.write(rel, t.content(rel).replace(b"\n", b"\r\n"))
        self.git("add", "-A")  # the untracked files come after
        self.git("commit", "-q", "-m", "files")
        if self.attributes:
            with open(os.path.join(self.repo, ".gitattributes"), "wb") as fh:
                fh.write(ATTRIBUTES)
            self.git("add", ".gitattributes")
            self.git("commit", "-q", "-m", "attributes")
        for rel in t.untracked:
            t.write(rel, t.content(rel))
        B.wait_for_next_second(time.time())
        self.git("reset", "-q")  # a fresh user index, as after a commit
        shutil.copyfile(os.path.join(self.repo, ".git", "index"), self.cli_index)
        self.git("add", "-A", env=self.cli_env)
        self.cli_prev = self.git("commit-tree", self.git("write-tree", env=self.cli_env), "-m", "cli",
                                 env=self.cli_env)

    def cli_path(self, rel: str) -> None:
        """The git CLI doing what `snap --path REL` does."""
        if self.attributes:
            B.run(["git", "add", "--", rel], self.repo, self.cli_env)
        else:
            oid = self.git("hash-object", "-w", "--", rel)
            mode = "100755" if os.stat(os.path.join(self.repo, rel)).st_mode & 0o100 else "100644"
            B.run(["git", "update-index", "--cacheinfo", f"{mode},{oid},{rel}"], self.repo, self.cli_env)
        tree = self.git("write-tree", env=self.cli_env)
        self.cli_prev = self.git("commit-tree", tree, "-p", self.cli_prev, "-m", "cli", env=self.cli_env)
        B.run(["git", "update-ref", "refs/cli/path", self.cli_prev], self.repo, self.env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--seed", type=int, default=20240611)
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="path-bench-")
    rewind = B.rewind_command()
    try:
        env = B.isolated_env(os.path.join(base, "home"), os.path.join(base, "pycache"))
        env["GIT_REWIND_AUTO_PACK"] = "0"
        env["GIT_REWIND_DAEMON"] = "off"
        copies = [Copy(base, "plain", args.size, args.seed, env, False),
                  Copy(base, "attributes", args.size, args.seed, env, True)]
        for copy in copies:
            start = time.perf_counter()
            copy.build()
            B.run([*rewind, "snap", "--session", "bench"], copy.repo, env)
            B.run([*rewind, "snap", "--session", "bench", "--path", copy.tree.tracked[0]], copy.repo, env)
            print(f"{copy.name}: {args.size} files built in {time.perf_counter() - start:.1f} s", flush=True)
        times: dict[tuple[str, str], list[float]] = {}
        edited: set[str] = set()
        for r in range(args.runs):
            # A file with CRLF in the user's index where there is one: the decision the index makes.
            picks = copies[1].crlf or copies[1].tree.tracked
            rel = picks[(r * 7919) % len(picks)]
            edited.add(rel)
            for copy in B.rotated(copies, r):
                for tool in B.rotated(["rewind", "cli"], r):
                    copy.tree.modify([rel], f"{r}-{tool}")
                    if copy.attributes and rel in copy.crlf:
                        path = os.path.join(copy.repo, rel)
                        with open(path, "rb") as fh:
                            data = fh.read().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
                        with open(path, "wb") as fh:
                            fh.write(data)
                    start = time.perf_counter()
                    if tool == "rewind":
                        B.run([*rewind, "snap", "--session", "bench", "--path", rel], copy.repo, env)
                    else:
                        copy.cli_path(rel)
                    times.setdefault((copy.name, tool), []).append((time.perf_counter() - start) * 1000)
        for copy in copies:
            # The files as the last tool left them, named once more; then a whole scan must find nothing else.
            named = [a for rel in sorted(edited) for a in ("--path", rel)]
            B.run([*rewind, "snap", "--session", "bench", *named], copy.repo, env)
            listed = B.out([*rewind, "snap", "--session", "bench"], copy.repo, env)
            if not listed.startswith("unchanged"):
                raise B.BenchError(f"{copy.name}: a full snap after the --path runs found more: {listed!r}")
            scratch = os.path.join(base, f"{copy.name}.oracle")
            shutil.copy2(os.path.join(copy.repo, ".git", "index"), scratch)
            B.run(["git", "add", "-A"], copy.repo, {**env, "GIT_INDEX_FILE": scratch})
            oracle = copy.git("write-tree", env={**env, "GIT_INDEX_FILE": scratch})
            if copy.git("rev-parse", "refs/rewind/bench^{tree}") != oracle:
                raise B.BenchError(f"{copy.name}: the --path checkpoint is not git add -A's tree")
        med = {key: statistics.median(values) for key, values in times.items()}
        print(f"\n--path, 1 file changed, {args.size} files, {args.runs} runs (median ms, whole process)")
        print(f"{'repository':<12} {'git-rewind':>11} {'git CLI':>9} {'ratio':>7}")
        for copy in copies:
            ours, git = med[(copy.name, "rewind")], med[(copy.name, "cli")]
            print(f"{copy.name:<12} {ours:>11.1f} {git:>9.1f} {ours / git:>6.2f}x")
        ratio = med[("attributes", "rewind")] / med[("plain", "rewind")]
        print(f"\ngit-rewind with attributes / without: {ratio:.2f}x "
              f"(git CLI: {med[('attributes', 'cli')] / med[('plain', 'cli')]:.2f}x)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
