"""Real histories replayed into a work tree (tests/test_real_history.py): the corpus of ../shared/corpus/, its
commits written one after another into the files without touching the user's index, and what git's own CLI
says each checkpoint, undo, take-back and blame must be.

The corpus is test data nobody here wrote; it is read where it lies and never copied into the project.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers.oracle import oracle_tree
from helpers.workdir import Workdir

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
LIMIT = 50 * 1024 * 1024  # max_file_size, the default
NULL = "0" * 40


def corpus() -> Path:
    """The corpus folder; without it the test is skipped, saying so (a failure under CI=true: CI has it)."""
    if not CORPUS.is_dir() or not list(CORPUS.glob("*.bundle")):
        pytest.skip(f"the real-history corpus is not at {CORPUS} (../shared/corpus beside the project)")
    return CORPUS


def bundle_names() -> list[str]:
    """The bundles the corpus holds (jq, requests, git), or the three it is known to hold when it is absent
    (the tests then skip, each saying why)."""
    found = sorted(p.stem for p in CORPUS.glob("*.bundle")) if CORPUS.is_dir() else []
    return found or ["git", "jq", "requests"]


class Mismatch(AssertionError):
    """A replay step where git-rewind and git disagree: named by the step and the path."""


class Replay:
    """One bundle cloned, its commits written into the work tree one by one: `at` is the commit the files equal.

    The user's index is git's own: it moves only when the user runs git (`checkout`), never when the
    replay writes files (a private index of the replay's own, then `checkout-index` of the changed paths,
    as `git checkout` of that commit would write them, attributes and autocrlf included).
    """

    def __init__(self, tmp: Path, bundle: str, env: dict[str, str], autocrlf: bool) -> None:
        self.name = bundle
        self.path = tmp / bundle
        config = ["-c", "core.autocrlf=true"] if autocrlf else []
        subprocess.run(["git", "clone", "-q", "--no-checkout", *config, str(corpus() / f"{bundle}.bundle"),
                        str(self.path)], env=env, check=True, capture_output=True)
        self.w = Workdir(self.path, env)
        self.commits = self.w.git("rev-list", "--reverse", "--first-parent", "HEAD").split()
        self.index = self.path / ".git" / "replay-index"
        self.step = "clone"
        self.at = -1
        self.merged = 0  # files take_back merged with git merge-file

    def begin(self, start: int) -> None:
        """The person's clone checked out at commit START."""
        self.w.git("checkout", "-q", "--detach", self.commits[start])
        self.at = start

    def __len__(self) -> int:
        return len(self.commits)

    # moving the files ------------------------------------------------------------------------

    def changes(self, a: int, b: int) -> list[tuple[str, str, str]]:
        """(status, new mode, path) from commit A to commit B, no renames."""
        out = self.w.git("diff-tree", "-r", "-z", "--no-renames", self.commits[a], self.commits[b])
        parts = out.split("\0")
        found = []
        for meta, path in zip(parts[0:-1:2], parts[1::2], strict=False):
            fields = meta.lstrip(":").split()
            found.append((fields[4], fields[1], path))
        return found

    def move(self, to: int) -> list[str]:
        """Write commit TO's files over the work tree (the user's index untouched); the paths that changed."""
        changed = self.changes(self.at, to)
        env = {**self.w.env, "GIT_INDEX_FILE": str(self.index)}
        subprocess.run(["git", "read-tree", self.commits[to]], cwd=self.path, env=env, check=True)
        for status, _mode, path in changed:
            if status == "D":
                self.remove(path)
        files = [path for status, _mode, path in changed if status != "D"]
        if files:
            for path in files:  # a file where a directory stood (or the reverse) goes first
                full = self.path / path
                if full.is_dir() and not full.is_symlink():
                    shutil.rmtree(full)
            subprocess.run(["git", "checkout-index", "-f", "-z", "--stdin"], cwd=self.path, env=env, check=True,
                           input="".join(p + "\0" for p in files).encode("utf-8", "surrogateescape"))
        self.at = to
        return [path for _s, _m, path in changed]

    def remove(self, path: str) -> None:
        full = self.path / path
        if full.is_symlink() or full.is_file():
            full.unlink()
        elif full.is_dir() and not any(full.iterdir()):
            full.rmdir()
        parent = full.parent
        while parent != self.path and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent

    def checkout(self, to: int) -> None:
        """What a person does: `git checkout` (a pull) of commit TO, which moves the user's index and HEAD."""
        self.w.git("checkout", "-q", "-f", "--detach", self.commits[to])
        self.at = to

    def crlf_blobs(self) -> list[str]:
        """The paths whose blob in the user's index has CRLF: where git's add reads the index to decide."""
        out = self.w.git("ls-files", "--eol", "-z").split("\0")
        return [r.split("\t", 1)[1] for r in out if r.startswith(("i/crlf", "i/mixed"))]

    def renames(self, a: int, b: int) -> bool:
        """Whether git finds a rename from commit A to commit B."""
        return bool(self.w.git("diff-tree", "-r", "-M", "--diff-filter=R", "--name-only", self.commits[a],
                               self.commits[b]).strip())

    # what git says ------------------------------------------------------------------------

    def oracle(self) -> str:
        """The tree a checkpoint taken now must hold: `git add -A` + `write-tree` in a copy of the user's index."""
        return oracle_tree(self.w, LIMIT)

    def expect_tree(self, ours: str, what: str) -> None:
        """OURS (a checkpoint's tree) is the oracle's, or a Mismatch naming the step and every path that differs."""
        theirs = self.oracle()
        if ours == theirs:
            return
        raise Mismatch(f"{self.name}, {self.step}: {what} holds another tree than git add -A: "
                       + "; ".join(self.differences(ours, theirs)))

    def differences(self, ours: str, theirs: str, limit: int = 12) -> list[str]:
        out = self.w.git("diff-tree", "-r", "-z", "--no-renames", ours, theirs).split("\0")
        found = []
        for meta, path in zip(out[0:-1:2], out[1::2], strict=False):
            mode_a, mode_b, a, b, status = meta.lstrip(":").split()
            found.append(f"{path} ({status}: ours {mode_a} {a[:10]}, git's {mode_b} {b[:10]}"
                         f"{self.eol(a, b)})")
        more = len(found) - limit
        return found[:limit] + ([f"… and {more} more"] if more > 0 else [])

    def eol(self, a: str, b: str) -> str:
        """', CRLF in ours only' and the like: what tells two blobs of one file apart at a glance."""
        def crlf(oid: str) -> bool | None:
            if oid == NULL:
                return None
            return b"\r\n" in subprocess.run(["git", "cat-file", "blob", oid], cwd=self.path, env=self.w.env,
                                             capture_output=True).stdout
        mine, git = crlf(a), crlf(b)
        if mine and git is False:
            return ", CRLF in ours only"
        if git and mine is False:
            return ", CRLF in git's only"
        return ""

    def take_back(self, before: str, agent: str, person: str) -> tuple[str, list[str]]:
        """What taking back the change BEFORE → AGENT from PERSON gives, file by file by `git merge-file` (ours:
        the person's, base: the agent's, theirs: before the agent): the tree, and the paths that conflict."""
        was, now, keep = self.entries(before), self.entries(agent), self.entries(person)
        result = dict(keep)
        conflicts = []
        for path in sorted(set(was) | set(now)):
            theirs, base, ours = was.get(path), now.get(path), keep.get(path)
            if theirs == base:
                continue
            if ours == base:  # the person left it as the agent did: it goes back whole
                if theirs is None:
                    result.pop(path, None)
                else:
                    result[path] = theirs
            elif ours == theirs:
                continue
            elif theirs is None or base is None or ours is None or len({e[0] for e in (theirs, base, ours) if e}) > 1 \
                    or self.binary(path, [e[1] for e in (theirs, base, ours) if e]):
                conflicts.append(path)  # a deletion against a change, a mode change, binary content
            else:
                merged = self.merge_file(ours[1], base[1], theirs[1])
                if merged is None:
                    conflicts.append(path)
                else:
                    result[path] = (ours[0], merged)
                    self.merged += 1
        index = self.path / ".git" / "take-back-index"
        index.unlink(missing_ok=True)
        env = {**self.w.env, "GIT_INDEX_FILE": str(index)}
        info = "".join(f"{mode} {oid}\t{path}\0" for path, (mode, oid) in sorted(result.items()))
        subprocess.run(["git", "update-index", "-z", "--index-info"], cwd=self.path, env=env, check=True,
                       input=info.encode("utf-8", "surrogateescape"))
        tree = subprocess.run(["git", "write-tree"], cwd=self.path, env=env, check=True, capture_output=True,
                              text=True).stdout.strip()
        index.unlink()
        return tree, conflicts

    def binary(self, path: str, blobs: list[str]) -> bool:
        """git merges the path as binary: its attributes say so (-text, -merge, binary), or a blob has a NUL in
        what git looks at."""
        attrs = self.w.git("check-attr", "merge", "text", "--", path)
        if "merge: unset" in attrs or "text: unset" in attrs:
            return True
        for oid in blobs:
            data = subprocess.run(["git", "cat-file", "blob", oid], cwd=self.path, env=self.w.env,
                                  capture_output=True, check=True).stdout
            if b"\0" in data[:8000]:
                return True
        return False

    def merge_file(self, ours: str, base: str, theirs: str) -> str | None:
        """The blob `git merge-file` makes of three blobs, stored; None when it conflicts."""
        stage = self.path / ".git" / "merge-file"
        stage.mkdir(exist_ok=True)
        names = []
        for name, oid in (("ours", ours), ("base", base), ("theirs", theirs)):
            data = subprocess.run(["git", "cat-file", "blob", oid], cwd=self.path, env=self.w.env,
                                  capture_output=True, check=True).stdout
            (stage / name).write_bytes(data)
            names.append(str(stage / name))
        merged = subprocess.run(["git", "merge-file", "-p", *names], cwd=self.path, env=self.w.env,
                                capture_output=True)
        if merged.returncode != 0:
            return None
        return subprocess.run(["git", "hash-object", "-w", "--no-filters", "--stdin"], cwd=self.path,
                              env=self.w.env, input=merged.stdout, capture_output=True, check=True
                              ).stdout.decode().strip()

    def checked_out(self, tree: str, stage: Path) -> Path:
        """TREE written by `git checkout-index` into STAGE (the user's config, TREE's own attributes)."""
        if stage.exists():
            shutil.rmtree(stage)
        stage.mkdir(parents=True)
        env = {**self.w.env, "GIT_INDEX_FILE": str(stage / ".index")}
        subprocess.run(["git", "read-tree", tree], cwd=self.path, env=env, check=True)
        subprocess.run(["git", f"--work-tree={stage}", "checkout-index", "-a", "-f", f"--prefix={stage}/files/"],
                       cwd=self.path, env=env, check=True, capture_output=True)
        return stage / "files"

    def expect_restore(self, tree: str, before: str, what: str, stage: Path) -> None:
        """A restore from BEFORE to TREE left the files as `git checkout-index` of TREE writes them: every path
        whose blob the restore had to change is those bytes (exec bit, link target), every other path of TREE
        is there, and nothing is on disk that a checkpoint would capture and TREE lacks."""
        written = self.checked_out(tree, stage)
        target, was = self.entries(tree), self.entries(before)
        problems = []
        for path, entry in sorted(target.items()):
            if entry[0] == "160000":
                continue
            if was.get(path) != entry:
                problem = same_entry(self.path / path, written / path)
            else:
                problem = None if os.path.lexists(self.path / path) else "missing"
            if problem:
                problems.append(f"{path}: {problem}")
        problems += [f"{p}: on disk, not in the checkpoint" for p in self.untracked_now() if p not in target]
        if problems:
            more = len(problems) - 12
            raise Mismatch(f"{self.name}, {self.step}: {what}: " + "; ".join(problems[:12])
                           + (f"; … and {more} more" if more > 0 else ""))

    def entries(self, tree: str) -> dict[str, tuple[str, str]]:
        """path → (mode, blob) of every entry of TREE."""
        found = {}
        for record in self.w.git("ls-tree", "-r", "-z", tree).split("\0"):
            if record:
                meta, path = record.split("\t", 1)
                mode, _kind, oid = meta.split()
                found[path] = (mode, oid)
        return found

    def untracked_now(self) -> list[str]:
        """Files on disk a checkpoint would capture (tracked or not, not ignored), by git's own listing."""
        out = self.w.git("ls-files", "-z", "-c", "-o", "--exclude-standard")
        return [p for p in out.split("\0") if p and os.path.lexists(self.path / p)
                and not (self.path / p).is_dir()]


def same_entry(ours: Path, theirs: Path) -> str | None:
    """What differs between a path on disk and git's checkout of it (None: nothing)."""
    if theirs.is_symlink():
        if not ours.is_symlink():
            return "not a symbolic link"
        return None if os.readlink(ours) == os.readlink(theirs) else "another link target"
    if ours.is_symlink() or not ours.is_file():
        return "missing" if not os.path.lexists(ours) else "not a regular file"
    if bool(ours.stat().st_mode & 0o100) != bool(theirs.stat().st_mode & 0o100):
        return "exec bit differs"
    mine, git = ours.read_bytes(), theirs.read_bytes()
    if mine == git:
        return None
    if mine.replace(b"\r\n", b"\n") == git.replace(b"\r\n", b"\n"):
        return "line endings differ (" + ("CRLF on disk, git writes LF" if b"\r\n" in mine else
                                          "LF on disk, git writes CRLF") + ")"
    return "content differs"
