"""The real agent CLIs for the end-to-end tests: found or installed once, and what the tests read back.

The CLIs are installed with npm (Aider with pip) into one cache directory, `$GIT_REWIND_AGENT_CACHE` or
else `~/.cache/git-rewind/agents`, only when their binary is missing, under a file lock so that
parallel test processes install once. Without npm a test needing one is skipped, saying how to install
it (tests/helpers/needs.py; a failure under CI=true); a failed installation fails the test (it is not a
reason to skip); `GIT_REWIND_SKIP_E2E=1` skips the end-to-end tests (`e2e` marker).

The second half reads what a session left behind: the checkpoints of a session with their
notes, the hook's decision log, and whether the working tree equals a checkpoint's tree.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from helpers import needs
from helpers.workdir import REWIND, Workdir

SKIP_ENV = "GIT_REWIND_SKIP_E2E"
CACHE_ENV = "GIT_REWIND_AGENT_CACHE"
INSTALL_TIMEOUT = 900  # seconds for one `npm install` (a cold cache downloads ~250 MB)
RUN_TIMEOUT = 90  # seconds for one agent run against the mock (they take ~1 s)

# The versions shared/agents/ verified; a newer release may change hooks or payloads, so moving
# to one is a deliberate change here (and a rerun of the end-to-end tests).
CLAUDE_CODE_PACKAGES = ["@anthropic-ai/claude-code@2.1.197"]
DROID_PACKAGES = ["@factory/cli@0.225.1", "@factory/cli-linux-x64@0.225.2"]
GEMINI_PACKAGES = ["@google/gemini-cli@0.61.0"]
# The platform binary is an alias of a tagged @openai/codex release; named explicitly, as npm may skip it.
CODEX_PACKAGES = ["@openai/codex@0.169.0", "@openai/codex-linux-x64@npm:@openai/codex@0.169.0-linux-x64"]
OPENCODE_PACKAGES = ["opencode-ai@1.18.33", "opencode-linux-x64@1.18.33"]
# The npm package is a loader; the program is the native binary of the platform package, named explicitly.
COPILOT_PACKAGES = ["@github/copilot@1.0.102", "@github/copilot-linux-x64@1.0.102"]
QWEN_PACKAGES = ["@qwen-code/qwen-code@0.15.10"]
AIDER_PACKAGES = ["aider-chat==0.86.2"]  # from PyPI, into a virtual environment of its own
# The newest @kilocode/cli (7.8.1) does not install: its platform package was never published.
KILO_PACKAGES = ["@kilocode/cli@7.7.7", "@kilocode/cli-linux-x64@7.7.7"]
# The npm package is a loader; the program is the native binary (Bun, the JavaScript inside) of the platform package.
CLINE_PACKAGES = ["cline@3.0.65", "@cline/cli-linux-x64@3.0.65"]

e2e = pytest.mark.skipif(os.environ.get(SKIP_ENV) == "1", reason=f"{SKIP_ENV}=1")


def skip_e2e() -> bool:
    """True when the environment asks to skip the end-to-end tests."""
    return os.environ.get(SKIP_ENV) == "1"


# finding / installing ---------------------------------------------------------


def cache_dir() -> Path:
    """Where the agent CLIs are installed: $GIT_REWIND_AGENT_CACHE or ~/.cache/git-rewind/agents."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "git-rewind" / "agents"


def claude_code() -> Path:
    """The `claude` binary of @anthropic-ai/claude-code, installed if missing."""
    return _ensure("claude-code", CLAUDE_CODE_PACKAGES, Path("node_modules/.bin/claude"))


def droid() -> Path:
    """The `droid` binary of @factory/cli (its platform package named explicitly), installed if missing."""
    return _ensure("droid", DROID_PACKAGES, Path("node_modules/@factory/cli-linux-x64/bin/droid"))


def gemini() -> Path:
    """The `gemini` command of @google/gemini-cli (a Node.js script), installed if missing."""
    return _ensure("gemini", GEMINI_PACKAGES, Path("node_modules/.bin/gemini"))


def codex() -> Path:
    """The `codex` binary (Rust, musl) of @openai/codex's linux-x64 package, installed if missing."""
    return _ensure("codex", CODEX_PACKAGES,
                   Path("node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"))


def opencode() -> Path:
    """The `opencode` binary of opencode-ai's linux-x64 package, installed if missing."""
    return _ensure("opencode", OPENCODE_PACKAGES, Path("node_modules/opencode-linux-x64/bin/opencode"))


def copilot() -> Path:
    """The `copilot` binary of @github/copilot's linux-x64 package, installed if missing."""
    return _ensure("copilot", COPILOT_PACKAGES, Path("node_modules/@github/copilot-linux-x64/copilot"))


def qwen() -> Path:
    """The `qwen` command of @qwen-code/qwen-code (a Node.js script), installed if missing."""
    return _ensure("qwen", QWEN_PACKAGES, Path("node_modules/.bin/qwen"))


def aider() -> Path:
    """The `aider` script of aider-chat, in a virtual environment under the cache (pip's own cache beside it,
    so a rerun with the environment gone downloads nothing), installed if missing."""
    def commands(prefix: Path) -> list[list[str]]:
        venv = prefix / "venv"
        shutil.rmtree(venv, ignore_errors=True)  # a half-made one from an interrupted install
        return [[sys.executable, "-m", "venv", str(venv)],
                [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *AIDER_PACKAGES]]

    return _install_once("aider", Path("venv/bin/aider"), commands, f"pip install {' '.join(AIDER_PACKAGES)}",
                         PIP_CACHE_DIR=str(cache_dir() / "aider" / "pip-cache"), PIP_DISABLE_PIP_VERSION_CHECK="1")


def kilo() -> Path:
    """The `kilo` binary of @kilocode/cli's linux-x64 package, installed if missing."""
    return _ensure("kilo", KILO_PACKAGES, Path("node_modules/@kilocode/cli-linux-x64/bin/kilo"))


def cline() -> Path:
    """The `cline` binary of cline's linux-x64 package, installed if missing."""
    return _ensure("cline", CLINE_PACKAGES, Path("node_modules/@cline/cli-linux-x64/bin/cline"))


def _usable(binary: Path) -> bool:
    return binary.is_file() and os.access(binary, os.X_OK)


def _ensure(name: str, packages: list[str], binary_rel: Path) -> Path:
    """PACKAGES installed with npm into the cache's NAME directory, for BINARY_REL."""
    def commands(prefix: Path) -> list[list[str]]:
        needs.need("npm")
        return [["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", *packages]]

    return _install_once(name, binary_rel, commands, f"npm install {' '.join(packages)}")


def _install_once(name: str, binary_rel: Path, commands: Callable[[Path], list[list[str]]], what: str,
                  **env: str) -> Path:
    """The cache's NAME/BINARY_REL, made by running COMMANDS (given the directory) only when it is missing, under
    a file lock so that parallel test processes install once; any failure fails the test, saying WHAT failed."""
    prefix = cache_dir() / name
    binary = prefix / binary_rel
    if _usable(binary):
        return binary
    try:
        prefix.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        pytest.fail(f"cannot create the agent cache {prefix}: {exc}", pytrace=False)
    with _FileLock(prefix.parent / f".{name}.install.lock", INSTALL_TIMEOUT + 60):
        if _usable(binary):  # another process installed it while we waited
            return binary
        for command in commands(prefix):
            try:
                proc = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
                                      stdin=subprocess.DEVNULL, env={**os.environ, **env})
            except subprocess.TimeoutExpired:
                pytest.fail(f"`{' '.join(command)}` took more than {INSTALL_TIMEOUT} s", pytrace=False)
            if proc.returncode != 0:
                break
        if proc.returncode != 0 or not _usable(binary):
            why = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-1:] or ["no output"]
            pytest.fail(f"`{what}` into {prefix} did not give {binary_rel} "
                        f"(exit {proc.returncode}): {why[0]}", pytrace=False)
    return binary


class _FileLock:
    """An exclusive flock on PATH, waited for at most TIMEOUT seconds."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self.fd = -1

    def __enter__(self) -> _FileLock:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() > deadline:
                    os.close(self.fd)
                    pytest.fail(f"another process held {self.path} for more than {self.timeout:.0f} s",
                                pytrace=False)
                time.sleep(0.5)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


# the environment agents run in ------------------------------------------------


def rewind_bin_dir() -> str:
    """The directory holding the `git-rewind` command the tests run, for the agents' PATH."""
    if len(REWIND) == 1:
        return str(Path(REWIND[0]).parent)
    return str(Path(sys.executable).parent)


def agent_env(base: dict[str, str], **extra: str) -> dict[str, str]:
    """BASE (the tests' git environment with the scratch HOME) with git-rewind first on PATH."""
    env = dict(base)
    env["PATH"] = os.pathsep.join([rewind_bin_dir(), env.get("PATH", os.defpath)])
    env.update(extra)
    return env


def install_hooks(work: Workdir, agent: str, scope: str, env: dict[str, str]) -> Path:
    """`git rewind install --agent AGENT --scope SCOPE`, run as a user would; returns the file it wrote."""
    run = work.rewind("install", "--agent", agent, "--scope", scope, env=env)
    assert run.returncode == 0, (f"git rewind install --agent {agent} --scope {scope} failed "
                                 f"({run.returncode}): {run.stderr.strip() or run.stdout.strip()}")
    home = Path(env["HOME"])
    where = {
        ("claude-code", "user"): home / ".claude" / "settings.json",
        ("claude-code", "project"): work.path / ".claude" / "settings.json",
        ("claude-code", "local"): work.path / ".claude" / "settings.local.json",
        ("droid", "user"): home / ".factory" / "hooks.json",
        ("droid", "project"): work.path / ".factory" / "hooks.json",
        ("gemini", "user"): home / ".gemini" / "settings.json",
        ("gemini", "project"): work.path / ".gemini" / "settings.json",
        ("copilot", "user"): Path(env.get("COPILOT_HOME") or home / ".copilot") / "hooks" / "git-rewind.json",
        ("copilot", "project"): work.path / ".github" / "hooks" / "git-rewind.json",
        ("qwen", "user"): home / ".qwen" / "settings.json",
        ("qwen", "project"): work.path / ".qwen" / "settings.json",
        ("opencode", "project"): work.path / ".opencode" / "plugin" / "git-rewind.ts",
        ("kilo", "user"): Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "kilo" / "plugin" / "git-rewind.ts",
        ("kilo", "project"): work.path / ".kilo" / "plugin" / "git-rewind.ts",
        ("cline", "user"): home / "Documents" / "Cline" / "Hooks" / "PreToolUse",  # one file of each event's
        ("cline", "project"): work.path / ".clinerules" / "hooks" / "PreToolUse",
    }[(agent, scope)]
    assert where.is_file(), f"git rewind install --agent {agent} --scope {scope} wrote no {where}"
    return where


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: float = RUN_TIMEOUT,
        input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run an agent CLI, bounded; a timeout fails the test with what it printed so far."""
    try:
        return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                              input=input if input is not None else "")
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        pytest.fail(f"{Path(command[0]).name} did not finish in {timeout} s\nstdout: {out[-2000:]}\n"
                    f"stderr: {err[-2000:]}", pytrace=False)


# what a session left behind ---------------------------------------------------


@dataclass
class Checkpoint:
    """One commit of refs/rewind/<session> with its note."""

    commit: str
    note: dict[str, Any]

    @property
    def seq(self) -> int:
        return int(self.note["seq"])

    @property
    def trigger(self) -> str:
        return str(self.note.get("trigger"))


NOTE_KEYS = {"seq", "session", "agent", "trigger", "tool", "paths", "prompt", "conversation"}
CONVERSATION_KEYS = {"transcript", "prompt_id", "tool_use_id"}


def checkpoints(work: Workdir, session: str) -> list[Checkpoint]:
    """The session's checkpoints, oldest first, read with plain git (log + notes)."""
    ref = f"refs/rewind/{session}"
    if not work.git("rev-parse", "-q", "--verify", ref, check=False).strip():
        return []
    commits = work.git("log", "--first-parent", "--format=%H", ref).split()  # ^2: transcript backups
    found = []
    for commit in reversed(commits):
        note = json.loads(work.git("notes", "--ref=rewind", "show", commit))
        missing = NOTE_KEYS - note.keys()
        assert not missing, f"note of {commit} lacks {sorted(missing)}: {note}"
        conversation = note.get("conversation")
        if conversation is not None:
            assert CONVERSATION_KEYS <= conversation.keys(), f"conversation of {commit}: {conversation}"
        found.append(Checkpoint(commit, note))
    return found


def sessions(work: Workdir) -> list[str]:
    """The sessions with checkpoints (refs/rewind/*)."""
    refs = work.git("for-each-ref", "--format=%(refname)", "refs/rewind/").split()
    return [ref[len("refs/rewind/"):] for ref in refs]


def hook_log(work: Workdir, session: str | None = None) -> list[dict[str, Any]]:
    """The hook's decisions from .git/rewind/hook.log (one JSON object a line), optionally of one session."""
    path = work.path / ".git" / "rewind" / "hook.log"
    if not path.exists():
        return []
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [e for e in entries if session is None or e.get("session") == session]


def hook_errors(work: Workdir) -> str:
    """The hook's error log, '' when it had none."""
    path = work.path / ".git" / "rewind" / "hook-errors.log"
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def tree_files(work: Workdir, commit: str) -> dict[str, tuple[str, str]]:
    """Every file of COMMIT's tree: path → (mode, blob id), from `git ls-tree -r`."""
    files = {}
    for line in work.git("ls-tree", "-r", "-z", commit).split("\0"):
        if not line:
            continue
        meta, path = line.split("\t", 1)
        mode, kind, oid = meta.split()
        if kind == "blob":
            files[path] = (mode, oid)
    return files


def disk_files(root: Path) -> dict[str, tuple[str, str]]:
    """Every file under ROOT but .git, in the same terms: path → (mode, blob id of the content)."""
    files = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if Path(dirpath) == root and ".git" in dirnames:
            dirnames.remove(".git")
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                data, mode = os.readlink(full).encode(), "120000"
            else:
                with open(full, "rb") as fh:
                    data = fh.read()
                mode = "100755" if st.st_mode & 0o100 else "100644"
            files[rel] = (mode, hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest())
    return files


def decisions(entries: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """(event, tool, action) of each log entry: the shape of a session at a glance."""
    return [(e.get("event"), e.get("tool"), e.get("action")) for e in entries]


# the session both agents play ------------------------------------------------

PROMPT_1 = "P1-PLAN: write the plan, rewrite it, and leave a note from the shell"
PROMPT_2 = "P2-POLISH: polish the plan"
PLAN = "notes/plan.md"
PLAN_V1 = "# Plan\n" + "- first draft of the plan, long enough to be worth a checkpoint\n" * 2
DRAFT_1 = "- first draft of the plan, long enough to be worth a checkpoint\n" * 2
DRAFT_2 = "- second draft, rewritten from scratch by the edit tool\n"
DRAFT_3 = "- third draft: rewritten once more, and again long enough to count\n"
PLAN_V2 = "# Plan\n" + DRAFT_2
PLAN_FINAL = "# Plan\n" + DRAFT_3.replace("third draft", "final draft")
SHELL_FILE = "shell_made.txt"
SHELL_TEXT = "made by the shell\n"


def ignored_files(work: Workdir) -> dict[str, tuple[str, str]]:
    """The ignored files on disk (path → mode, blob id): a restore must leave them alone."""
    listed = work.git("ls-files", "-z", "--others", "--ignored", "--exclude-standard").split("\0")
    every = disk_files(work.path)
    return {path: every[path] for path in listed if path}


def blob(work: Workdir, commit: str, path: str) -> str | None:
    """The content of PATH in COMMIT, None when the commit lacks it."""
    if path not in tree_files(work, commit):
        return None
    return work.git("show", f"{commit}:{path}")


def check_chain(work: Workdir, found: list[Checkpoint]) -> None:
    """Each checkpoint's first parent is the session's previous checkpoint; seqs strictly increase."""
    for before, after in zip(found, found[1:], strict=False):
        assert work.git("rev-parse", f"{after.commit}^").strip() == before.commit
        assert after.seq > before.seq


def assert_undo_restores(work: Workdir, checkpoint: Checkpoint, ignored: dict[str, tuple[str, str]]) -> None:
    """`git rewind undo <seq> --yes` leaves exactly the checkpoint's files on disk (byte and mode),
    and the ignored files (IGNORED, taken before the session) as they were."""
    undo = work.rewind("undo", str(checkpoint.seq), "--yes")
    assert undo.returncode == 0, f"git rewind undo {checkpoint.seq} --yes failed ({undo.returncode}): {undo.stderr}"
    assert_tree_on_disk(work, checkpoint.commit, ignored, f"after undo {checkpoint.seq}")


def assert_tree_on_disk(work: Workdir, commit: str, ignored: dict[str, tuple[str, str]], when: str) -> None:
    """The files on disk are exactly COMMIT's tree (byte and mode), the ignored files (IGNORED) as they were."""
    ignored_now = ignored_files(work)
    assert ignored_now == ignored
    want = tree_files(work, commit)
    have = {path: v for path, v in disk_files(work.path).items() if path not in ignored_now}
    assert have == want, (f"{when}: missing {sorted(want.keys() - have.keys())}, "
                          f"extra {sorted(have.keys() - want.keys())}, differing "
                          f"{sorted(p for p in want.keys() & have.keys() if want[p] != have[p])}")


def check_two_prompt_session(work: Workdir, session: str, agent: str, write_tool: str,
                             shell_tool: str) -> list[Checkpoint]:
    """The decisions and checkpoints of the scripted two-prompt session (write, big edit, shell; then a
    batched and a small edit), in the balanced tier with no anti-spam interval; returns the six checkpoints
    (session start, prompt 1, the Edit, turn end 1, prompt 2, turn end 2)."""
    log = hook_log(work, session)
    assert decisions(log) == [
        ("SessionStart", None, "checkpoint"),
        ("UserPromptSubmit", None, "checkpoint"),
        ("PreToolUse", write_tool, "unchanged"),  # a new file: the pre-edit tree equals the prompt's checkpoint
        ("PreToolUse", "Edit", "checkpoint"),
        ("PostToolUse", shell_tool, "skip"),
        ("Stop", None, "checkpoint"),  # the turn end: files changed since the prompt
        ("SessionEnd", None, "skip"),  # reason "other": only /clear is checkpointed
        ("SessionStart", None, "unchanged"),  # resumed: nothing changed since the turn end's checkpoint
        ("UserPromptSubmit", None, "checkpoint"),
        ("PreToolUse", "Edit", "skip"),
        ("PreToolUse", "Edit", "skip"),
        ("Stop", None, "checkpoint"),
        ("SessionEnd", None, "skip"),
    ], json.dumps(log, indent=1)
    assert "batch" in log[9]["reason"], log[9]
    assert "small" in log[10]["reason"], log[10]
    # The resumed session was told where it stood: at the first session's turn end, nothing changed since.
    assert log[7]["context"] == {"from": 4, "changed": 0, "summary": None}, log[7]
    assert log[0]["context"] == "none: no earlier checkpoint", log[0]
    assert all(e.get("paths") == [PLAN] for e in log if e["event"] == "PreToolUse"), log

    assert sessions(work) == [session]
    found = checkpoints(work, session)
    assert [c.trigger for c in found] == ["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop",
                                          "UserPromptSubmit", "Stop"]
    assert [c.seq for c in found] == [1, 2, 3, 4, 5, 6]
    assert [e["seq"] for e in log if e["action"] == "checkpoint"] == [c.seq for c in found]
    check_chain(work, found)
    _start, prompt_1, edit, stop_1, prompt_2, stop_2 = found
    for c in found:
        assert c.note["session"] == session and c.note["agent"] == agent, c.note
    assert (edit.note["tool"], edit.note["paths"]) == ("Edit", [PLAN])
    assert prompt_1.note["prompt"] == PROMPT_1 and edit.note["prompt"] == PROMPT_1
    assert prompt_2.note["prompt"] == PROMPT_2
    # Where each change came from: the turns' own changes, each recorded by the checkpoint after it.
    assert edit.note["origins"] == {PLAN: "agent"}, edit.note
    assert stop_1.note["origins"] == {PLAN: "agent", SHELL_FILE: "agent"}, stop_1.note
    assert prompt_2.note["origins"] == {}, prompt_2.note
    assert stop_2.note["origins"] == {PLAN: "agent"}, stop_2.note
    for stop, prompt in ((stop_1, prompt_1), (stop_2, prompt_2)):
        assert (stop.note["turn"]["session"], stop.note["turn"]["seq"]) == (session, prompt.seq), stop.note
    return found

if __name__ == "__main__":
    # `.ci/run` installs every CLI up front: `PYTHONPATH=tests python -m helpers.agentcli`.
    for find in (claude_code, droid, gemini, codex, opencode, copilot, qwen, kilo, cline, aider):
        try:
            print(f"{find.__name__}: {find()}")
        except pytest.fail.Exception as exc:
            sys.exit(f"error: {exc}")
