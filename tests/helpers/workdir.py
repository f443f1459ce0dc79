"""Real repositories in temporary directories, and the real `git rewind` command run on them."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# The installed console script when there is one (CI installs the package), else the module.
_SCRIPT = shutil.which("git-rewind")
REWIND = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "git_rewind"]
# The same command with its checkpoints written in process (objects.in_process), as the daemon writes them.
IN_PROCESS = [sys.executable, str(Path(__file__).with_name("inprocess_entry.py"))]


def git_env(home: Path) -> dict[str, str]:
    """An environment with no user or system git config, so tests see only what they set."""
    env = dict(os.environ)
    for key in list(env):
        if key.startswith(("GIT_", "GIT_REWIND_")):
            del env[key]
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.com",
        GIT_PAGER="cat",
        PAGER="cat",
        LC_ALL="C.UTF-8",
    )
    return env


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


class Workdir:
    """A real git repository with helpers that read like a user at a terminal."""

    def __init__(self, path: Path, env: dict[str, str], command: list[str] | None = None) -> None:
        self.path = path
        self.env = env
        self.command = command or REWIND  # how `rewind` runs git-rewind: REWIND, or IN_PROCESS

    def git(self, *args: str, check: bool = True, cwd: Path | None = None) -> str:
        proc = subprocess.run(["git", *args], cwd=cwd or self.path, env=self.env,
                              capture_output=True, text=True, errors="surrogateescape")
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout

    def rewind(self, *args: str, cwd: Path | None = None, input: str | None = None,
               env: dict[str, str] | None = None) -> Run:
        proc = subprocess.run([*self.command, *args], cwd=cwd or self.path, env={**self.env, **(env or {})},
                              capture_output=True, text=True, input=input if input is not None else "",
                              errors="surrogateescape")
        return Run(proc.returncode, proc.stdout, proc.stderr)

    def ok(self, *args: str, **kwargs: object) -> str:
        run = self.rewind(*args, **kwargs)  # type: ignore[arg-type]
        assert run.returncode == 0, f"git rewind {' '.join(args)} failed ({run.returncode}): {run.stderr}"
        return run.stdout

    def write(self, rel: str, content: str | bytes, mode: int | None = None) -> Path:
        path = self.path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.encode()
        path.write_bytes(content)
        if mode is not None:
            path.chmod(mode)
        return path

    def commit_all(self, message: str = "commit") -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)

    def state(self) -> dict[str, tuple[str, str]]:
        """Every non-.git path: kind + content hash (or link target), exec bit included."""
        return tree_state(self.path)

    def user_state(self) -> tuple[bytes, str, str, str]:
        """What we promise never to touch: the index bytes, HEAD, refs/heads, stash.

        The status is read without optional locks: a plain `git status` may rewrite the index it
        is asked about (refreshed or racily-smudged entries), and the next call would see that.
        """
        index = self.path / ".git" / "index"
        return (
            index.read_bytes() if index.exists() else b"",
            self.git("rev-parse", "-q", "--verify", "HEAD", check=False),
            self.git("for-each-ref", "refs/heads", "refs/stash", "refs/tags"),
            self.git("--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all"),
        )

    def add_all_tree(self) -> str:
        """The tree `git add -A` gives in a scratch copy of this work tree's index: what a checkpoint must equal.

        The copy keeps the index file's mtime: git re-hashes entries as new as the index file
        ("racily clean"), so a copy with a fresh mtime would trust stale stat data.
        """
        index = Path(self.git("rev-parse", "--path-format=absolute", "--git-path", "index").strip())
        scratch = index.with_name("scratch-index")
        env = {**self.env, "GIT_INDEX_FILE": str(scratch)}
        if scratch.exists():
            scratch.unlink()
        if index.exists():
            shutil.copy2(index, scratch)
        subprocess.run(["git", "add", "-A"], cwd=self.path, env=env, check=True, capture_output=True)
        tree = subprocess.run(["git", "write-tree"], cwd=self.path, env=env, check=True,
                              capture_output=True, text=True).stdout.strip()
        scratch.unlink()
        return tree

    def tree_of(self, commit: str) -> str:
        return self.git("rev-parse", f"{commit}^{{tree}}").strip()

    def fsck(self) -> None:
        """`git fsck --strict` clean, once the background `git repack` a checkpoint may have started here
        is done (it moves loose objects into a pack while fsck reads them: "unable to mmap")."""
        self.wait_for_repack()
        proc = subprocess.run(["git", "fsck", "--strict", "--no-progress"], cwd=self.path, env=self.env,
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr

    def wait_for_repack(self, timeout: float = 60.0) -> None:
        """Wait while a `git repack` runs in this work tree (store.maybe_pack starts it detached)."""
        from helpers.procs import wait_for_repack

        wait_for_repack(self.path, timeout)


def tree_state(root: Path) -> dict[str, tuple[str, str]]:
    result: dict[str, tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if os.path.abspath(dirpath) == os.path.abspath(root) and ".git" in dirnames:
            dirnames.remove(".git")
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            if os.path.islink(full):
                result[rel] = ("link", os.readlink(full))
            elif os.path.isdir(full):
                if not os.listdir(full):
                    result[rel] = ("emptydir", "")
            else:
                with open(full, "rb") as fh:
                    digest = hashlib.sha1(fh.read()).hexdigest()
                kind = "exec" if os.stat(full).st_mode & 0o100 else "file"
                result[rel] = (kind, digest)
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return result
