#!/usr/bin/env python3
"""Whole-process cost of `git-rewind hook --agent …` per event, against `python -c pass`.

Builds the synthetic repositories of bench.py, then times the installed `git-rewind` script
(beside this interpreter) as Claude Code runs it: a fresh process per call, the event's JSON
payload on stdin, cwd and file paths inside the repository. The agent rows (GitHub Copilot CLI,
Qwen Code, Kilo Code) time each one's most frequent skip and its pre-edit checkpoint with its own
payloads, in the same interleaved runs as Claude Code's rows, so they compare directly. Every
call's decision is read back from .git/rewind/hook.log and must be the one its row claims. Baselines come from the same
run, interleaved: `python -c pass` for every row, git's own CLI for the checkpoint rows.
Prints medians, ratios and PASS/FAIL for the targets of the issue. See bench/README.md.

    python bench/hook_bench.py                    # sizes 1000,100000
    python bench/hook_bench.py --quick            # sizes 1000,10000: about a minute
    python bench/hook_bench.py --sizes 1k,20k --runs 21 --json out.json

Run it with the Python of the environment git-rewind is installed in (not an editable install:
its import hook costs time an installed package does not).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench import (
    Bench,
    BenchError,
    finish,
    fmt_ms,
    fmt_ratio,
    isolated_env,
    out,
    rewind_command,
    rotated,
    run,
    short,
    verdict,
    wait_for_next_second,
)

DEFAULT_SIZES = (1000, 100000)
QUICK_SIZES = (1000, 10000)
SKIP_LIMIT = 2.0  # a skip: at most this many times `python -c pass`
# Issue 27, the hook the daemon answers, through the command install writes (`<python> -I -S …/entry.py`):
THIN_CHECKPOINT_LIMIT = 2.0  # a checkpoint of 1 changed file: at most this many times `python -I -S -c pass`
THIN_SKIP_LIMIT = 1.5  # a skipped event: at most this many times `python -I -S -c pass`
SCALE_LIMIT = 1.2  # a known-path checkpoint on the largest size: at most this many times the smallest
HIGH_ANTI_SPAM = "86400"
# Edits whose old_string/new_string differ by fewer / at least min_change_chars (50 in balanced).
SMALL_EDIT = ("print('hello')", "print('hello, world')")  # the real sample's edit: 7 characters
BIG_EDIT = ("def main():\n    pass\n",
            "def main():\n    args = parse_arguments(sys.argv[1:])\n    return run(args, verbose=True)\n")


SETTLE = True  # --no-settle: False


def settle() -> None:
    """Untimed, right before a timed process: write out what the preparation left dirty.

    fast-import fsyncs its pack, and on ext4 (data=ordered) an fsync commits the journal with
    every file written since the last commit: a known-path checkpoint run right after a full
    scan of 100k files would pay for writing that scan's 10 MB index. Settling first, every row
    measures its own work.
    """
    if SETTLE:
        os.sync()


# payloads: the shape of the real samples (shared/agents/samples/claude-code/*.json, `hook_stdin`) --


def payload(event: str, session: str, cwd: str, transcript: str, r: int, **extra: Any) -> bytes:
    data: dict[str, Any] = {
        "session_id": session,
        "transcript_path": transcript,
        "cwd": cwd,
        "prompt_id": f"28e4b330-6feb-4007-a1fa-{r:012d}",
        "permission_mode": "bypassPermissions",
        "effort": {"level": "high"},
        "hook_event_name": event,
    }
    data.update(extra)
    return json.dumps(data).encode()


def tool_payload(event: str, session: str, cwd: str, transcript: str, r: int, tool: str,
                 tool_input: dict[str, Any]) -> bytes:
    extra: dict[str, Any] = {"tool_name": tool, "tool_input": tool_input, "tool_use_id": f"toolu_bench_{r:08d}"}
    if event == "PostToolUse":
        extra["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False,
                                  "noOutputExpected": False}
        extra["duration_ms"] = 34
    return payload(event, session, cwd, transcript, r, **extra)


def edit_input(path: str, edit: tuple[str, str]) -> dict[str, Any]:
    return {"file_path": path, "old_string": edit[0], "new_string": edit[1], "replace_all": False}


def bash_input() -> dict[str, Any]:
    return {"command": "python scripts/gen.py > out.txt", "description": "Regenerate out.txt"}


# The other agents' payloads, in their own shapes (shared/agents/samples/<agent>/): a prompt that opens
# a session, the event they send most often that must be a cheap skip, and a pre-edit of a known path.


def copilot_payload(session: str, cwd: str, r: int, **fields: Any) -> bytes:
    """GitHub Copilot CLI's camelCase hook payload (epoch-ms timestamp, no tool-call id)."""
    return json.dumps({"sessionId": session, "timestamp": 1795615778651 + r, "cwd": cwd, **fields}).encode()


def qwen_payload(event: str, session: str, cwd: str, transcript: str, r: int, **fields: Any) -> bytes:
    """Qwen Code's Claude-style payload."""
    return json.dumps({"session_id": session, "transcript_path": transcript, "cwd": cwd, "hook_event_name": event,
                       "timestamp": "2026-11-25T14:13:46.446Z", **fields}).encode()


def kilo_payload(event: str, session: str, cwd: str, r: int, **fields: Any) -> bytes:
    """What the OpenCode-family plugin sends for Kilo."""
    return json.dumps({"event": event, "sessionID": session, "directory": cwd, "worktree": cwd,
                       "serverUrl": "http://127.0.0.1:4096", "host": "kilo", **fields}).encode()


def cline_payload(event: str, session: str, cwd: str, r: int, **fields: Any) -> bytes:
    """The cline CLI's payload (3.0.65, docs/agents/cline.md): its runtime's event name, the root session."""
    return json.dumps({"clineVersion": "", "timestamp": "2026-11-29T02:11:19.179Z", "taskId": f"conv_{r}",
                       "sessionContext": {"rootSessionId": session}, "workspaceRoots": [cwd], "userId": "unknown",
                       "agent_id": "agent_1", "parent_agent_id": None, "hookName": event, **fields}).encode()


def cline_tool(tool: str, raw: dict[str, Any], r: int) -> dict[str, Any]:
    """The CLI's tool_call fields: the raw input, and the documented object with each value stringified."""
    return {"iteration": 1, "tool_call": {"id": f"call_bench{r:08d}", "name": tool, "input": raw},
            "preToolUse": {"toolName": tool,
                           "parameters": {k: v if isinstance(v, str) else json.dumps(v) for k, v in raw.items()}}}


class AgentPayloads:
    """One agent's three payloads for the agent rows."""

    def __init__(self, agent: str, session_prefix: str) -> None:
        self.agent = agent
        self.prefix = session_prefix

    def session(self, name: str, r: int) -> str:
        if self.agent == "copilot":  # Copilot's sessions are UUIDs
            return f"f3551e92-0000-4000-{8000 + len(name)}-{r + 1000:012d}"
        return f"{self.prefix}{name}-{r + 1000:04d}"

    def prompt(self, session: str, cwd: str, transcript: str, r: int) -> bytes:
        text = f"make the parser handle case {r}"
        if self.agent == "copilot":
            return copilot_payload(session, cwd, r, prompt=text)
        if self.agent == "qwen":
            return qwen_payload("UserPromptSubmit", session, cwd, transcript, r, prompt=text)
        if self.agent == "cline":  # the CLI sends none for `cline "PROMPT"`; the extension's shape
            return cline_payload("UserPromptSubmit", session, cwd, r, userPromptSubmit={"prompt": text})
        return kilo_payload("chat.message", session, cwd, r, messageID=f"msg_bench{r:08d}", prompt=text)

    def skip(self, session: str, cwd: str, transcript: str, r: int, path: str) -> bytes:
        if self.agent == "copilot":  # every tool's preToolUse reaches the hook: there is no matcher
            return copilot_payload(session, cwd, r, toolName="view", toolArgs={"path": path})
        if self.agent == "qwen":  # after every tool result, with an empty prompt
            return qwen_payload("UserPromptSubmit", session, cwd, transcript, r, prompt="")
        if self.agent == "cline":  # every tool's PreToolUse reaches the hook: Cline has no matcher
            read = cline_tool("read_files", {"files": [{"path": path}]}, r)
            return cline_payload("tool_call", session, cwd, r, **read)
        return kilo_payload("tool.execute.before", session, cwd, r, tool="read", callID=f"call_bench{r:08d}",
                            args={"filePath": path})

    def edit(self, session: str, cwd: str, transcript: str, r: int, path: str) -> bytes:
        old, new = BIG_EDIT
        if self.agent == "copilot":
            return copilot_payload(session, cwd, r, toolName="edit", toolArgs={"path": path, "old_str": old,
                                                                              "new_str": new})
        if self.agent == "qwen":
            return qwen_payload("PreToolUse", session, cwd, transcript, r, permission_mode="yolo",
                                tool_name="edit", tool_use_id=f"toolu_{r:013d}_bench",
                                tool_input={"file_path": path, "old_string": old, "new_string": new,
                                            "replace_all": False})
        if self.agent == "cline":
            return cline_payload("tool_call", session, cwd, r,
                                 **cline_tool("editor", {"path": path, "old_text": old, "new_text": new}, r))
        return kilo_payload("tool.execute.before", session, cwd, r, tool="edit", callID=f"call_bench{r:08d}",
                            args={"filePath": path, "oldString": old, "newString": new})


OTHER_AGENTS = {"copilot": AgentPayloads("copilot", ""), "qwen": AgentPayloads("qwen", "qwen-"),
                "kilo": AgentPayloads("kilo", "ses_hb"), "cline": AgentPayloads("cline", "1795918503260_hb")}


# one repository ---------------------------------------------------------------------------------


@dataclass
class Call:
    """What one timed hook call must be: its payload and environment, the decision to find."""

    data: bytes
    env: dict[str, str]
    session: str
    action: str  # "skip" or "checkpoint" (a checkpoint that found nothing new logs "unchanged")
    reason: str  # prefix of the logged reason
    check: Callable[[dict[str, Any]], None] | None = None  # untimed, after the call
    daemon: bool = False  # the daemon's socket in place, and the call must be answered by it (with changes)
    agent: str = "claude-code"  # `hook --agent AGENT`
    thin: bool = False  # the command `install` writes (the thin client), not `git-rewind hook`
    watched: bool = False  # the daemon's socket in place, for a question only (no scan asked): SHELL_QUIET_ROWS


@dataclass
class Row:
    key: str
    event: str
    decision: str  # "skip" / "checkpoint"
    baseline: str | None = None  # key of the git CLI row for "vs git CLI"
    samples: list[float] = field(default_factory=list)
    hook_ms: list[float] = field(default_factory=list)  # the "ms" the hook logs: its own work
    reason: str = ""


class HookRepo:
    """One synthetic repository (bench.py's builder) and the hook calls on it."""

    def __init__(self, base: str, size: int, seed: int, env: dict[str, str], rewind: list[str],
                 log: Callable[[str], None], thin: list[str] | None = None) -> None:
        # Untimed git-rewind runs (the priming, `snap` to bring the private index up to date)
        # never start a background repack: see pack(). No hook starts the file-watcher daemon
        # (`daemon = "auto"` would past 5,000 files): the rows are without it, except the
        # +daemon rows of --daemon, whose daemon the benchmark starts itself.
        self.env = {**env, "GIT_REWIND_AUTO_PACK": "0", "GIT_REWIND_DAEMON": "off"}
        self.b = Bench(base, size, seed, 1, 1, self.env, rewind, log)
        self.size = size
        self.rewind = rewind
        self.thin = thin or []  # install's hook command, before `hook --agent NAME`
        self.transcript = os.path.join(self.b.dir, "transcript.jsonl")
        self.log_path = os.path.join(self.b.repo, ".git", "rewind", "hook.log")
        self.log_offset = 0

    @property
    def repo(self) -> str:
        return self.b.repo

    def abs(self, rel: str) -> str:
        return os.path.join(self.repo, rel)

    def hook_env(self, tier: str = "balanced", anti_spam: str | None = None, daemon: bool = False) -> dict[str, str]:
        """The environment of a hook call: the settings' defaults except TIER and ANTI_SPAM (and the
        daemon off unless DAEMON)."""
        drop = {"GIT_REWIND_AUTO_PACK", *(["GIT_REWIND_DAEMON"] if daemon else [])}
        env = {k: v for k, v in self.env.items() if k not in drop}
        env["GIT_REWIND_TIER"] = tier
        if anti_spam is not None:
            env["GIT_REWIND_ANTI_SPAM_SECONDS"] = anti_spam
        return env

    # the hook ---------------------------------------------------------------------------------

    def call(self, c: Call) -> tuple[float, dict[str, Any]]:
        """Run the hook once: wall time in ms, and its hook.log entry (checked)."""
        self.b.daemon_visible(c.daemon or c.watched)
        answered = self.b.answered() if c.daemon and c.action != "skip" else None
        served = self.served() if c.daemon and c.thin else None
        settle()
        start = time.perf_counter()
        proc = subprocess.run([*(self.thin if c.thin else self.rewind), "hook", "--agent", c.agent], cwd=self.repo,
                              env=c.env, input=c.data, capture_output=True)
        ms = (time.perf_counter() - start) * 1000
        if answered is not None:
            self.b.daemon_check(answered, "changes")
        if served is not None and self.served() != served + 1:
            raise BenchError(f"{self.size} files: a hook call was not answered by the daemon (served {served} "
                             f"before, {self.served()} after)")
        what = f"hook {c.session}: {c.data[:300].decode(errors='replace')}"
        expected = b'{"cancel": false}\n' if c.agent == "cline" else b""  # Cline's "go on", printed always
        if proc.returncode != 0 or proc.stderr or proc.stdout != expected:
            raise BenchError(f"{what}\nexit {proc.returncode}, stdout {proc.stdout!r}, stderr {proc.stderr!r}")
        entries = self.new_log_entries()
        if len(entries) != 1:
            raise BenchError(f"{what}\nexpected one new hook.log entry, found {len(entries)}: {entries}")
        entry = entries[0]
        action = entry.get("action")
        ok_action = action == c.action
        if not ok_action or entry.get("session") != c.session or not str(entry.get("reason", "")).startswith(c.reason):
            errors = ""
            if action == "error":
                try:
                    with open(os.path.join(self.repo, ".git", "rewind", "hook-errors.log")) as fh:
                        errors = "\n" + fh.read()[-3000:]
                except FileNotFoundError:
                    pass
            raise BenchError(f"{what}\nexpected action {c.action!r}, reason {c.reason!r}..., "
                             f"session {c.session!r}; hook.log says {entry}{errors}")
        if c.check:
            c.check(entry)
        return ms, entry

    def served(self) -> int:
        """Hook calls the daemon answered whole (`daemon status --json`: served.hook)."""
        info = self.b.daemon_status()
        return int((info.get("served") or {}).get("hook", 0))

    def new_log_entries(self) -> list[dict[str, Any]]:
        try:
            size = os.path.getsize(self.log_path)
        except FileNotFoundError:
            return []
        if size < self.log_offset:  # rotated to hook.log.1
            self.log_offset = 0
        with open(self.log_path, "rb") as fh:
            fh.seek(self.log_offset)
            text = fh.read()
        self.log_offset += len(text)
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def blob_check(self, session: str, rel: str) -> Callable[[dict[str, Any]], None]:
        """The session's checkpoint holds REL exactly as it is on disk."""
        def check(entry: dict[str, Any]) -> None:
            have = self.b.git("rev-parse", f"refs/rewind/{session}:{rel}")
            want = self.b.git("hash-object", "--", rel)
            if have != want:
                raise BenchError(f"{self.size} files, {entry.get('event')} {session}: the checkpoint holds "
                                 f"{rel} as {have}, the work tree as {want}")
        return check

    def tree_check(self, session: str) -> None:
        """The session's checkpoint tree is what `git add -A` writes from a scratch index."""
        want = self.b.scratch_tree()
        have = self.b.git("rev-parse", f"refs/rewind/{session}^{{tree}}")
        if have != want:
            diff = self.b.git("diff-tree", "-r", "--name-status", want, have)[:2000]
            raise BenchError(f"{self.size} files: refs/rewind/{session} has tree {have}, `git add -A` from a "
                             f"scratch index gives {want}:\n{diff}")

    def prompt_call(self, session: str, r: int, env: dict[str, str] | None = None) -> Call:
        return Call(payload("UserPromptSubmit", session, self.repo, self.transcript, r,
                            prompt=f"make the parser handle case {r}"),
                    env or self.hook_env(), session, "checkpoint", "every prompt")

    # setup ------------------------------------------------------------------------------------

    def build(self) -> None:
        b = self.b
        b.build_repo()
        start = time.perf_counter()
        # git-rewind: a first full checkpoint (seeds the private index), the anti-spam session's
        # edit checkpoint; the CLI: its private index from the user's, a first commit.
        prime = {**self.hook_env(), "GIT_REWIND_AUTO_PACK": "0"}
        self.call(self.prompt_call("hb-sync", -1, prime))
        session = "hb-antispam"
        self.call(self.prompt_call(session, -1, prime))
        rel = b.tree.pick("antispam", 1, 0)[0]
        b.modify([rel], "antispam-prime")
        self.call(Call(tool_payload("PreToolUse", session, self.repo, self.transcript, -1, "Edit",
                                    edit_input(self.abs(rel), BIG_EDIT)),
                       {**prime, "GIT_REWIND_ANTI_SPAM_SECONDS": HIGH_ANTI_SPAM}, session, "checkpoint",
                       "before Edit", self.blob_check(session, rel)))
        shutil.copyfile(os.path.join(b.repo, ".git", "index"), b.cli_index)
        b.cli_snapshot()
        self.pack()
        wait_for_next_second(time.time())
        for session in ("hb-prompt", "hb-bash"):
            self.sync(session)
        b.cli_snapshot()
        b.log(f"  hook and git CLI primed in {time.perf_counter() - start:.1f} s")

    def pack(self) -> None:
        """Pack loose objects, untimed, before git-rewind would.

        Its checkpoints start a detached `git repack` once loose objects pass auto_pack (2000,
        estimated from one fan-out directory): that would take a core from the timed runs. The
        first scan hashes every untracked file, and every run adds ~100 objects (checkpoints,
        syncs, the git CLI's commits).
        """
        loose = int(self.b.git("count-objects").split()[0])
        if loose > 300:
            self.b.git("repack", "-d", "-q")

    # the rows: prepare untimed, return the call to time -------------------------------------------

    def skip_read(self, r: int) -> Call:
        rel = self.b.tree.pick("read", 1, r)[0]
        return Call(tool_payload("PreToolUse", "hb-skip", self.repo, self.transcript, r, "Read",
                                 {"file_path": self.abs(rel)}),
                    self.hook_env(), "hb-skip", "skip", "Read does not edit files")

    def skip_stop(self, r: int) -> Call:
        # The balanced tier checkpoints every turn end now (bench/agent_only_bench.py times it); the minimal
        # tier still skips it, the cheapest path of a turn end.
        return Call(payload("Stop", "hb-skip", self.repo, self.transcript, r, stop_hook_active=False,
                            last_assistant_message="done", background_tasks=[], session_crons=[]),
                    self.hook_env("minimal"), "hb-skip", "skip", "minimal tier: only before a file is created")

    def skip_bash(self, r: int) -> Call:
        return Call(tool_payload("PostToolUse", "hb-skip", self.repo, self.transcript, r, "Bash", bash_input()),
                    self.hook_env(), "hb-skip", "skip", "balanced: nothing after Bash")

    def skip_small(self, r: int) -> Call:
        rel = self.b.tree.pick("small", 1, r)[0]
        return Call(tool_payload("PreToolUse", "hb-skip", self.repo, self.transcript, r, "Edit",
                                 edit_input(self.abs(rel), SMALL_EDIT)),
                    self.hook_env(), "hb-skip", "skip", "small change: 7 characters < 50")

    def skip_antispam(self, r: int) -> Call:
        rel = self.b.tree.pick("antispam", 1, r)[0]
        self.b.modify([rel], f"antispam-{r}")  # a real change: only anti-spam stops the checkpoint
        return Call(tool_payload("PreToolUse", "hb-antispam", self.repo, self.transcript, r, "Edit",
                                 edit_input(self.abs(rel), BIG_EDIT)),
                    self.hook_env(anti_spam=HIGH_ANTI_SPAM), "hb-antispam", "skip", "anti-spam: ")

    def checkpoint_edit(self, r: int) -> Call:
        # A session of its own per run, started by a prompt (untimed) as a real one is: its
        # first edit is always checkpointed (batch detection skips the 3rd edit in 60 s of a
        # session that already has a checkpoint for the batch), and it has a tip to carry.
        session = f"hb-edit-{r}"
        self.call(self.prompt_call(session, r, self.hook_env(anti_spam="0")))
        rel = self.b.tree.pick("edit", 1, r)[0]
        self.b.modify([rel], f"edit-{r}")
        return Call(tool_payload("PreToolUse", session, self.repo, self.transcript, r, "Edit",
                                 edit_input(self.abs(rel), BIG_EDIT)),
                    self.hook_env(anti_spam="0"), session, "checkpoint", "before Edit",
                    self.blob_check(session, rel))

    def sync(self, session: str, daemon: bool = False) -> None:
        """Untimed: the private index and SESSION's tip up to date with the work tree.

        The same session as the timed call: as in an agent's session, the last scan is the tip's
        (else the scan diffs the tree against both, which a lone session never does). With DAEMON,
        through the daemon (its base and the session's tip the same tree, as in an agent's session).
        """
        self.b.daemon_visible(daemon)
        run([*self.b.rewind, "snap", "--session", session], self.repo, self.env)

    def start_daemon(self) -> None:
        """--daemon: start the daemon (untimed) and give it a base, through each +daemon row's session."""
        self.b.daemon_mode = True
        self.b.daemon_start()
        wait_for_next_second(self.b.last_change)
        for session in ("hb-dprompt", "hb-dbash"):
            self.sync(session, daemon=True)
        self.b.daemon_visible(True)
        if self.b.answered()[0] < 1:
            raise BenchError(f"{self.size} files: the daemon answered no checkpoint with changes after start")

    def checkpoint_prompt_daemon(self, r: int) -> Call:
        self.sync("hb-dprompt", daemon=True)
        rel = self.b.tree.pick("dprompt", 1, r)[0]
        self.b.modify([rel], f"dprompt-{r}")
        c = self.prompt_call("hb-dprompt", r, self.hook_env(daemon=True))
        c.check = self.blob_check("hb-dprompt", rel)
        c.daemon = c.thin = True
        return c

    def checkpoint_bash_daemon(self, r: int) -> Call:
        self.sync("hb-dbash", daemon=True)
        rel = self.b.tree.pick("dbash", 1, r)[0]
        self.b.modify([rel], f"dbash-{r}")
        return Call(tool_payload("PostToolUse", "hb-dbash", self.repo, self.transcript, r, "Bash", bash_input()),
                    self.hook_env("aggressive", daemon=True), "hb-dbash", "checkpoint",
                    "after Bash, if files changed", self.blob_check("hb-dbash", rel), daemon=True, thin=True)

    def skip_read_daemon(self, r: int) -> Call:
        c = self.skip_read(r)
        c.env, c.daemon, c.thin = self.hook_env(daemon=True), True, True
        return c

    # issue 27 item 4: a shell command that changed nothing, the daemon answering (--daemon) -------------

    def skip_shell_quiet_daemon(self, r: int) -> Call:
        """Balanced tier with the daemon running, after a shell command that changed nothing (`ls`): the hook
        asks the daemon whether anything changed and skips without a scan. Untimed first, the session synced
        through the daemon (its base and the session's tip the same tree, as after the command before it in
        an agent's turn). Checked after each call: no new checkpoint, and no scan asked of the daemon."""
        session = "hb-dquiet"
        self.sync(session, daemon=True)
        tip = self.b.git("rev-parse", f"refs/rewind/{session}")
        before = self.b.answered()

        def check(entry: dict[str, Any]) -> None:
            if self.b.git("rev-parse", f"refs/rewind/{session}") != tip:
                raise BenchError(f"{self.size} files: a shell command that changed nothing made a checkpoint: {entry}")
            if self.b.answered() != before:
                raise BenchError(f"{self.size} files: the skip asked the daemon for a scan: {entry}")
        # The same settings as the `PostToolUse Bash (balanced)` skip row (hooks do not start a daemon): only the
        # running daemon differs.
        return Call(tool_payload("PostToolUse", session, self.repo, self.transcript, r, "Bash",
                                 {"command": "ls -la", "description": "List the files"}),
                    self.hook_env(), session, "skip", "after Bash: nothing changed (daemon: ", check, watched=True,
                    thin=True)

    # ----------------------------------------------------------------------------------------------------

    def checkpoint_prompt(self, r: int) -> Call:
        self.sync("hb-prompt")  # then 1 changed file, as for the git CLI
        rel = self.b.tree.pick("prompt", 1, r)[0]
        self.b.modify([rel], f"prompt-{r}")
        c = self.prompt_call("hb-prompt", r)
        c.check = self.blob_check("hb-prompt", rel)
        return c

    def checkpoint_bash(self, r: int) -> Call:
        self.sync("hb-bash")
        rel = self.b.tree.pick("bash", 1, r)[0]
        self.b.modify([rel], f"bash-{r}")
        return Call(tool_payload("PostToolUse", "hb-bash", self.repo, self.transcript, r, "Bash", bash_input()),
                    self.hook_env("aggressive"), "hb-bash", "checkpoint", "after Bash, if files changed",
                    self.blob_check("hb-bash", rel))

    # the other agents: their hottest skip, and a pre-edit of a known path in a fresh session ----------

    def agent_skip(self, agent: str, r: int) -> Call:
        p = OTHER_AGENTS[agent]
        session = p.session("skip", 0)
        rel = self.b.tree.pick("read", 1, r)[0]
        return Call(p.skip(session, self.repo, self.transcript, r, self.abs(rel)), self.hook_env(), session, "skip",
                    "", agent=agent)

    def agent_edit(self, agent: str, r: int) -> Call:
        p = OTHER_AGENTS[agent]
        session = p.session("edit", r)
        self.call(Call(p.prompt(session, self.repo, self.transcript, r), self.hook_env(anti_spam="0"), session,
                       "checkpoint", "", agent=agent))
        rel = self.b.tree.pick("edit", 1, r)[0]
        self.b.modify([rel], f"{agent}-edit-{r}")
        return Call(p.edit(session, self.repo, self.transcript, r, self.abs(rel)), self.hook_env(anti_spam="0"),
                    session, "checkpoint", "", self.blob_check(session, rel), agent=agent)

    # baselines ------------------------------------------------------------------------------------

    def python_pass(self, r: int) -> float:
        return timed_run([sys.executable, "-c", "pass"], self.repo, self.env)

    def python_bare(self, r: int) -> float:
        """`python -I -S -c pass` of the interpreter install's hook command runs: the floor of a hook."""
        return timed_run([self.thin[0] if self.thin else sys.executable, "-I", "-S", "-c", "pass"], self.repo,
                         self.env)

    def cli_path(self, r: int) -> float:
        """hash-object -w, update-index --add --cacheinfo (private index), write-tree, commit-tree, update-ref."""
        self.b.sync("cli", wait=False)
        rel = self.b.tree.pick("edit", 1, r)[0]
        self.b.modify([rel], f"edit-{r}-cli")
        settle()
        start = time.perf_counter()
        self.b.cli_path(rel)
        return (time.perf_counter() - start) * 1000

    def cli_full(self, r: int) -> float:
        """add -A (private index), write-tree, commit-tree, update-ref: after 1 changed file."""
        self.b.sync("cli", wait=False)
        rel = self.b.tree.pick("prompt", 1, r)[0]
        self.b.modify([rel], f"prompt-{r}-cli")
        settle()
        start = time.perf_counter()
        self.b.cli_snapshot()
        return (time.perf_counter() - start) * 1000


def timed_run(args: list[str], cwd: str, env: dict[str, str]) -> float:
    settle()
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True)
    ms = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise BenchError(f"{' '.join(args)} failed: {proc.stderr.decode(errors='replace')}")
    return ms


# (key, event, decision, method, git CLI baseline key)
HOOK_ROWS = [
    ("read", "PreToolUse Read", "skip", HookRepo.skip_read, None),
    ("stop", "Stop (minimal)", "skip", HookRepo.skip_stop, None),
    ("bash-skip", "PostToolUse Bash (balanced)", "skip", HookRepo.skip_bash, None),
    ("small", "PreToolUse Edit, 7 chars", "skip", HookRepo.skip_small, None),
    ("antispam", "PreToolUse Edit, anti-spam", "skip", HookRepo.skip_antispam, None),
    ("edit", "PreToolUse Edit, known path", "checkpoint", HookRepo.checkpoint_edit, "cli-path"),
    ("prompt", "UserPromptSubmit", "checkpoint", HookRepo.checkpoint_prompt, "cli-full"),
    ("bash", "PostToolUse Bash (aggressive)", "checkpoint", HookRepo.checkpoint_bash, "cli-full"),
    ("copilot-skip", "copilot preToolUse view", "skip", lambda h, r: h.agent_skip("copilot", r), None),
    ("copilot-edit", "copilot preToolUse edit, known path", "checkpoint", lambda h, r: h.agent_edit("copilot", r),
     "cli-path"),
    ("qwen-skip", "qwen UserPromptSubmit \"\" (after a tool)", "skip", lambda h, r: h.agent_skip("qwen", r), None),
    ("qwen-edit", "qwen PreToolUse edit, known path", "checkpoint", lambda h, r: h.agent_edit("qwen", r), "cli-path"),
    ("kilo-skip", "kilo tool.execute.before read", "skip", lambda h, r: h.agent_skip("kilo", r), None),
    ("kilo-edit", "kilo tool.execute.before edit, known path", "checkpoint", lambda h, r: h.agent_edit("kilo", r),
     "cli-path"),
    ("cline-skip", "cline tool_call read_files", "skip", lambda h, r: h.agent_skip("cline", r), None),
    ("cline-edit", "cline tool_call editor, known path", "checkpoint", lambda h, r: h.agent_edit("cline", r),
     "cli-path"),
]
BASELINES = [
    ("pass", "python -c pass", HookRepo.python_pass),
    ("cli-path", "git CLI, known path (5 processes)", HookRepo.cli_path),
    ("cli-full", "git CLI, add -A + write-tree + commit (4)", HookRepo.cli_full),
]
# The +daemon rows run the command install writes (the thin client: `<python> -I -S …/hook/entry.py`), each
# call checked to be answered whole by the daemon (served.hook up by one; a checkpoint's scan answered with
# the changed paths too).
DAEMON_ROWS = [
    ("prompt-d", "UserPromptSubmit +daemon", "checkpoint", HookRepo.checkpoint_prompt_daemon, "cli-full"),
    ("bash-d", "PostToolUse Bash (aggressive) +daemon", "checkpoint", HookRepo.checkpoint_bash_daemon, "cli-full"),
    ("read-d", "PreToolUse Read +daemon", "skip", HookRepo.skip_read_daemon, None),
]
BARE = ("bare", "python -I -S -c pass", HookRepo.python_bare)  # with --daemon: the thin rows' baseline
FULL_SCAN = {"prompt", "bash", "prompt-d", "bash-d"}
# issue 27 item 4 (--daemon): a shell command that changed nothing, against the skip row and `python -I -S -c pass`.
SHELL_QUIET_ROWS = [
    ("bash-quiet-d", "PostToolUse Bash (balanced) +daemon, unchanged", "skip", HookRepo.skip_shell_quiet_daemon,
     None),
]
SHELL_QUIET_LIMIT = 1.0  # at most the skip's cost (`PostToolUse Bash (balanced)`, no daemon)
LIGHT_BASELINES = {"pass", "bare"}  # repeated like the skips


def measure(repos: list[HookRepo], runs: int, warmup: int, repeat: int,
            log: Callable[[str], None]) -> dict[int, dict[str, Row]]:
    """Every row on every size, interleaved: per run the sizes and then the rows in a rotating order.

    The skips and `python -c pass` take ~20 ms: they run REPEAT times per run (more samples
    where the noise of a loaded machine weighs most, for little time).
    """
    rows = {h.size: {key: Row(key, event, decision, base) for key, event, decision, _m, base in HOOK_ROWS}
            for h in repos}
    for h in repos:
        for key, label, _m in BASELINES:
            rows[h.size][key] = Row(key, label, "baseline")
    # Every row once, then the skips and the reference again, up to REPEAT rounds of them.
    items: list[tuple[str, Callable[..., Any], bool]] = [(k, m, True) for k, _e, _d, m, _b in HOOK_ROWS]
    items += [(k, m, False) for k, _label, m in BASELINES]
    light: list[tuple[str, Callable[..., Any], bool]] = [(k, m, True) for k, _e, d, m, _b in HOOK_ROWS if d == "skip"]
    light += [(k, m, False) for k, _label, m in BASELINES if k in LIGHT_BASELINES]
    items += light * (repeat - 1)
    started = time.perf_counter()
    for r in range(-warmup, runs):
        for h in rotated(repos, r):
            for key, method, is_hook in rotated(items, r):
                row = rows[h.size][key]
                if is_hook:
                    c = method(h, r)
                    ms, entry = h.call(c)
                    if r >= 0:
                        row.hook_ms.append(float(entry.get("ms", float("nan"))))
                        row.reason = f"{entry['action']}: {entry['reason']}"
                        if r == runs - 1 and key in FULL_SCAN:
                            h.tree_check(c.session)
                        if r == runs - 1 and key == "edit":
                            h.tree_check(c.session)
                else:
                    ms = method(h, r)
                if r >= 0:
                    row.samples.append(ms)
        for h in repos:
            h.pack()
        if r >= 0:
            log(f"  run {r + 1}/{runs} done ({time.perf_counter() - started:.0f} s)")
    return rows


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def report_size(h: HookRepo, rows: dict[str, Row], py: float, targets: list[dict[str, Any]]) -> list[list[str]]:
    """The table of one size; PY is `python -c pass`, pooled over all sizes (it does not depend on them)."""
    table = []
    for key, *_rest in HOOK_ROWS:
        row = rows[key]
        mine = med(row.samples)
        cli = med(rows[row.baseline].samples) if row.baseline else float("nan")
        target = ""
        if row.decision == "skip":
            v = verdict(mine / py, SKIP_LIMIT)
            target = f"<={SKIP_LIMIT:.1f}x pass: {v}"
            targets.append({"size": h.size, "target": f"skip {row.event} <= {SKIP_LIMIT}x python -c pass",
                            "ratio": mine / py, "verdict": v})
        elif key == "edit":
            target = "see summary"
        reason = row.reason if len(row.reason) <= 52 else row.reason[:49] + "..."
        table.append([row.event, reason, fmt_ms(mine), fmt_ms(med(row.hook_ms)), fmt_ratio(mine / py),
                      fmt_ms(cli), fmt_ratio(mine / cli), target])
    for key, label, _m in BASELINES[1:]:
        if key == "bare":
            continue
        table.append([label, "baseline", fmt_ms(med(rows[key].samples)), "", fmt_ratio(med(rows[key].samples) / py),
                      "", "", ""])
    return table


def report_shell_quiet(repos: list[HookRepo], results: dict[int, dict[str, Row]],
                       targets: list[dict[str, Any]]) -> None:
    """Issue 27 item 4's target: after a shell command that changed nothing, with the daemon, no new checkpoint
    (checked after every call) and at most the cost of a skipped event: the same command (install's), the same
    daemon answering (`PreToolUse Read +daemon`), in the same runs; the skip without a daemon for scale."""
    table = []
    for h in repos:
        rows = results[h.size]
        quiet, skip = med(rows["bash-quiet-d"].samples), med(rows["read-d"].samples)
        plain = med(rows["bash-skip"].samples)
        floor = med(rows["bare"].samples)
        v = verdict(quiet / skip, SHELL_QUIET_LIMIT)
        targets.append({"size": h.size, "ratio": quiet / skip, "verdict": v,
                        "target": f"shell command that changed nothing, +daemon: no checkpoint, "
                                  f"<= {SHELL_QUIET_LIMIT}x a skip +daemon"})
        table.append([f"{h.size:,}", fmt_ms(quiet), fmt_ms(med(rows["bash-quiet-d"].hook_ms)), fmt_ms(skip),
                      fmt_ratio(quiet / skip), fmt_ms(plain), fmt_ms(floor), fmt_ratio(quiet / floor),
                      "0", f"none, <={SHELL_QUIET_LIMIT:.1f}x skip: {v}"])
    print_rows("summary: after a shell command that changed nothing, balanced +daemon, against a skipped event "
               "+daemon, a skip without it and python -I -S -c pass (same interleaved runs, install's command)",
               ["files", "+daemon ms", "in hook", "skip +daemon", "vs skip", "skip, no daemon", "-I -S ms",
                "vs -I -S", "new checkpoints", "target"], table, {0, 1, 2, 3, 4, 5, 6, 7, 8})


def print_rows(title: str, header: list[str], rows: list[list[str]], numeric: set[int]) -> None:
    """A plain-text table: columns in NUMERIC right-aligned, the others left-aligned."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    print(f"\n{title}")
    for i, r in enumerate([header, *rows]):
        print("  ".join(c.rjust(w) if j in numeric else c.ljust(w)
                        for j, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip())
        if i == 0:
            print("-" * (sum(widths) + 2 * (len(widths) - 1)))


HEADER = ["event", "decision (from hook.log)", "median ms", "in hook", "vs pass", "git CLI", "vs CLI", "target"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", help="comma-separated file counts (default 1000,100000)")
    parser.add_argument("--runs", type=int, help="timed runs per row (default 21; --quick: 15)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="calls per run of each skip row and of python -c pass (default 3)")
    parser.add_argument("--quick", action="store_true", help="sizes 1000,10000 and 15 runs: about a minute")
    parser.add_argument("--seed", type=int, default=20240611, help="random seed of the trees and edits")
    parser.add_argument("--no-settle", action="store_true",
                        help="do not os.sync() before each timed process (rows then pay for earlier writes)")
    parser.add_argument("--json", metavar="FILE", help="also write every sample, median and target to FILE")
    parser.add_argument("--tmpdir", help="where to build the repositories (default: the system's temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the repositories afterwards")
    parser.add_argument("--daemon", action="store_true",
                        help="also the full-scan checkpoint rows with the file-watcher daemon answering (+daemon)")
    args = parser.parse_args(argv)
    if args.daemon:
        HOOK_ROWS.extend(DAEMON_ROWS)
        HOOK_ROWS.extend(SHELL_QUIET_ROWS)
        BASELINES.append(BARE)

    sizes = [int(s.replace("_", "").replace("k", "000")) for s in args.sizes.split(",")] if args.sizes \
        else list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    runs = args.runs or (15 if args.quick else 21)
    global SETTLE
    SETTLE = not args.no_settle
    rewind = rewind_command()
    base = tempfile.mkdtemp(prefix="git-rewind-hook-bench-", dir=args.tmpdir)
    env = isolated_env(os.path.join(base, "home"), None)
    # An installed package has its bytecode compiled at install time; PYTHONDONTWRITEBYTECODE
    # (set in some sandboxes) would only make a module without it recompile on every run.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    for _ in range(2):
        run([sys.executable, "-c", "import git_rewind.hook.hook, git_rewind.hook.policy, git_rewind.store.store, "
             "git_rewind.agents.claude_code, git_rewind.store.snapshot, git_rewind.base.config"], base, env)
    where = out([sys.executable, "-c", "import git_rewind; print(git_rewind.__file__)"], base, env)
    thin: list[str] = json.loads(out([sys.executable, "-c", "import json; from git_rewind.agents.install import "
                                      "hook_program; print(json.dumps(hook_program()))"], base, env))
    git_version = out(["git", "--version"], base, env)
    load = os.getloadavg()
    started = time.perf_counter()
    print(f"git-rewind hook bench: sizes {', '.join(f'{s:,}' for s in sizes)}; {runs} runs "
          f"(+{args.warmup} warm-up; skips and python -c pass x{args.repeat} per run); seed {args.seed}; "
          f"{time.strftime('%Y-%m-%d %H:%M')}")
    print(f"{git_version}; Python {platform.python_version()} ({sys.executable}); {os.cpu_count()} CPUs")
    print(f"hook: {' '.join(rewind)} hook --agent claude-code; git_rewind imported from {where}")
    if args.daemon:
        print(f"+daemon rows: {' '.join(thin)} hook --agent claude-code (what install writes)")
    if "site-packages" not in where:
        print("WARNING: git_rewind is not imported from site-packages (an editable install?): "
              "numbers include what an installed package does not pay")
    print("medians of whole-process wall time in ms; 'in hook' = the ms the hook logs for its own work; "
          "vs = ratio to the baseline" + ("; os.sync() before each timed process" if SETTLE else "; not settled"))
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
          + ("  (WARNING: something else is running; numbers will be noisy)" if load[0] > 0.7 else ""))

    report: dict[str, Any] = {
        "meta": {"git": git_version, "python": sys.executable, "python_version": platform.python_version(),
                 "cpus": os.cpu_count(), "platform": platform.platform(), "seed": args.seed, "runs": runs,
                 "warmup": args.warmup, "repeat": args.repeat, "settle": SETTLE, "rewind_command": rewind,
                 "git_rewind_module": where, "sizes": sizes,
                 "date": time.strftime("%Y-%m-%dT%H:%M:%S%z")},
        "sizes": {}, "targets": [], "notes": [],
    }
    failed = False
    repos: list[HookRepo] = []
    try:
        for size in sizes:
            print(f"\nbuilding {size:,} files ...", flush=True)
            h = HookRepo(base, size, args.seed, env, rewind, lambda m: print(m, flush=True), thin)
            repos.append(h)
            h.build()
            if args.daemon:
                h.start_daemon()
        print(f"\nmeasuring: {runs} runs, each over every size and row in a rotating order ...", flush=True)
        results = measure(repos, runs, args.warmup, args.repeat, lambda m: print(m, flush=True))
    except BenchError as exc:
        print(f"\nABORTED: {exc}", file=sys.stderr)
        failed = True
        results = {}
    for h in repos:
        if h.b.daemon_mode:
            h.b.daemon_visible(True)
            run([*rewind, "daemon", "stop"], h.repo, env, check=False)

    targets: list[dict[str, Any]] = []
    if results:
        py_samples = [ms for h in repos for ms in results[h.size]["pass"].samples]
        py = med(py_samples)
        report["python_pass"] = {"median_ms": py, "samples_ms": py_samples}
        print_rows("reference (all sizes pooled; interleaved with the rows)", ["process", "median ms", "runs"],
                   [["python -c pass", fmt_ms(py), str(len(py_samples))]], {1, 2})
    for h in repos if results else []:
        rows = results[h.size]
        t = h.b.tree
        print_rows(f"== {h.size:,} files ({len(t.tracked):,} tracked + {len(t.untracked):,} untracked; "
                   f"{len(t.ignored):,} ignored) ==", HEADER, report_size(h, rows, py, targets), {2, 3, 4, 5, 6})
        if os.path.exists(os.path.join(h.repo, ".git", "rewind", "last-pack")):
            note = (f"{h.size}: a hook started a background `git repack` during the timed runs "
                    "(it competed with them for the CPU)")
            print(f"NOTE: {note}")
            report["notes"].append(note)
        report["sizes"][str(h.size)] = {
            "files": len(t.files),
            "rows": [{"key": r.key, "event": r.event, "decision": r.reason or r.decision,
                      "median_ms": med(r.samples), "hook_logged_median_ms": med(r.hook_ms),
                      "samples_ms": r.samples, "hook_logged_ms": r.hook_ms} for r in rows.values()],
        }
    if len(repos) >= 2 and results:
        small, large = repos[0], repos[-1]
        table = []
        for key, label in (("edit", "hook PreToolUse Edit, known path"), ("cli-path", "git CLI, known path")):
            a, z = med(results[small.size][key].samples), med(results[large.size][key].samples)
            ratio = z / a
            cell = ""
            if key == "edit":
                v = verdict(ratio, SCALE_LIMIT)
                cell = f"<={SCALE_LIMIT:.1f}x: {v}"
                targets.append({"size": large.size, "ratio": ratio, "verdict": v,
                                "target": f"known-path checkpoint {large.size} <= {SCALE_LIMIT}x {small.size}"})
            table.append([label, *(fmt_ms(med(results[h.size][key].samples)) for h in repos), fmt_ratio(ratio),
                          cell])
        print_rows("summary: known-path checkpoint across sizes (same interleaved runs)",
                   ["", *(f"{h.size:,} files" for h in repos), f"{short(large.size)}/{short(small.size)}",
                    "target"], table, set(range(1, len(repos) + 2)))
    if args.daemon and results:
        table = []
        for h in repos:
            cli = med(results[h.size]["cli-full"].samples)
            for key, label in (("prompt", "UserPromptSubmit"), ("bash", "PostToolUse Bash (aggressive)")):
                plain, fast = med(results[h.size][key].samples), med(results[h.size][key + "-d"].samples)
                table.append([f"{h.size:,}", label, fmt_ms(plain), fmt_ms(fast), fmt_ratio(fast / plain), fmt_ms(cli),
                              fmt_ratio(plain / cli), fmt_ratio(fast / cli)])
        print_rows("summary: full-scan checkpoint hooks without and with the daemon (same interleaved runs)",
                   ["files", "event", "no daemon", "+daemon", "ratio", "git CLI", "no daemon/CLI", "+daemon/CLI"],
                   table, {0, 2, 3, 4, 5, 6, 7})
        table = []
        for h in repos:
            bare = med(results[h.size]["bare"].samples)
            for key, limit in (("prompt-d", THIN_CHECKPOINT_LIMIT), ("bash-d", THIN_CHECKPOINT_LIMIT),
                               ("read-d", THIN_SKIP_LIMIT)):
                row = results[h.size][key]
                ratio = med(row.samples) / bare
                v = verdict(ratio, limit)
                targets.append({"size": h.size, "ratio": ratio, "verdict": v,
                                "target": f"{row.event} <= {limit}x python -I -S -c pass"})
                table.append([f"{h.size:,}", row.event, fmt_ms(med(row.samples)), fmt_ms(med(row.hook_ms)),
                              fmt_ms(bare), fmt_ratio(ratio), f"<={limit:.1f}x: {v}"])
        print_rows("summary: hooks the daemon answers, through install's command, against python -I -S -c pass "
                   "(same interleaved runs)",
                   ["files", "event", "+daemon", "in hook", "-I -S pass", "ratio", "target"], table, {0, 2, 3, 4, 5})
    if args.daemon and results:
        report_shell_quiet(repos, results, targets)
    report["targets"] = targets
    return finish(report, load, started, args, base, failed)


if __name__ == "__main__":
    sys.exit(main())
