"""End to end with the real Droid CLI (Factory): its hooks, installed by `git rewind install`, checkpoint a session.

Droid runs against the scripted mock model (tests/helpers/mockmodel.py) as a BYOK custom model of the
generic chat-completions provider, with a scratch HOME. Two ways of driving it:

- `droid exec --input-format stream-jsonrpc`: the JSON-RPC protocol Factory's SDK and daemon
  speak. Prompts go through `droid.add_user_message`, so UserPromptSubmit fires (it does not in
  plain `droid exec "…"`), and `droid.load_session` resumes a session offline.
- plain `droid exec "…"`, continued with `--fork` (`-s <id>` needs api.factory.ai).

FACTORY_AIRGAP_ENABLED=1 stops every outbound request but the model's: without it each run
waits ~6 s for a cloud-sync flush that cannot succeed offline.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from helpers import agentcli
from helpers.agentcli import (
    DRAFT_1,
    DRAFT_2,
    DRAFT_3,
    PLAN,
    PLAN_FINAL,
    PLAN_V1,
    PLAN_V2,
    PROMPT_1,
    PROMPT_2,
    SHELL_FILE,
    SHELL_TEXT,
    blob,
    decisions,
    e2e,
)
from helpers.mockmodel import MockModel, Text, ToolCall, Turn
from helpers.workdir import Workdir

pytestmark = e2e

MODEL = "custom:Mock-0"  # customModels[0] of ~/.factory/settings.json, by its displayName
RPC = {"type": "request", "jsonrpc": "2.0", "factoryApiVersion": "1.0.0", "factoryProtocolVersion": "1.220.0"}


@pytest.fixture(scope="module")
def droid() -> Path:
    return agentcli.droid()


def droid_env(work: Workdir, model: MockModel, **extra: str) -> dict[str, str]:
    """Scratch HOME with the mock as the only model, and Droid kept offline."""
    factory = Path(work.env["HOME"]) / ".factory"
    factory.mkdir(parents=True, exist_ok=True)
    (factory / "settings.json").write_text(json.dumps({"customModels": [{
        "model": "mock-model", "displayName": "Mock", "baseUrl": f"{model.url}/v1", "apiKey": "test-key",
        "provider": "generic-chat-completion-api", "maxOutputTokens": 1000}]}))
    return agentcli.agent_env(work.env, FACTORY_AIRGAP_ENABLED="1", **extra)


def edit_script(plan: str) -> dict[str, list[Turn]]:
    """The same session as the Claude Code test, in Droid's tool names (Create, Edit, Execute)."""
    return {
        PROMPT_1: [
            ToolCall("Create", {"file_path": plan, "content": PLAN_V1}),
            ToolCall("Edit", {"file_path": plan, "old_str": DRAFT_1, "new_str": DRAFT_2}),
            ToolCall("Execute", {"command": f"printf '{SHELL_TEXT.strip()}\\n' > {SHELL_FILE}",
                                 "riskLevelReason": "writes one file in the project", "riskLevel": "low"}),
            Text("The plan is written."),
        ],
        PROMPT_2: [
            ToolCall("Edit", {"file_path": plan, "old_str": DRAFT_2, "new_str": DRAFT_3}),  # 3rd edit: batch
            ToolCall("Edit", {"file_path": plan, "old_str": "third draft", "new_str": "final draft"}),  # small
            Text("Polished."),
        ],
    }


class RpcSession:
    """One `droid exec --input-format stream-jsonrpc` process: requests in, responses and notifications out."""

    def __init__(self, droid: Path, work: Workdir, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [str(droid), "exec", "--input-format", "stream-jsonrpc", "--output-format", "stream-jsonrpc",
             "-m", MODEL, "--auto", "high"],
            cwd=work.path, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _wait(self, wanted: Any, what: str, timeout: float = agentcli.RUN_TIMEOUT) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                self.kill()
                pytest.fail(f"droid: no {what} within {timeout} s; last messages: {self.seen[-3:]}", pytrace=False)
            if line is None:
                stderr = self.proc.stderr.read() if self.proc.stderr else ""
                pytest.fail(f"droid exited ({self.proc.wait()}) before {what}: {stderr[-2000:]}", pytrace=False)
            if not line.startswith("{"):
                continue
            message: dict[str, Any] = json.loads(line)
            self.seen.append(message)
            if wanted(message):
                return message

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and return its result (an error response fails the test)."""
        request_id = str(uuid.uuid4())
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({**RPC, "id": request_id, "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        response = self._wait(lambda m: m.get("id") == request_id and m.get("type") == "response", method)
        assert "error" not in response or not response["error"], response
        return dict(response.get("result") or {})

    def prompt(self, text: str) -> dict[str, Any]:
        """Send a user message and wait for the end of the agent's turn."""
        self.request("droid.add_user_message", {"text": text})
        done = self._wait(lambda m: (m.get("params") or {}).get("notification", {}).get("type")
                          == "agent_turn_completed", f"end of the turn for {text!r}")
        return dict(done["params"]["notification"])

    def close(self) -> int:
        """Close stdin (the end of the session) and wait for the process."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=agentcli.RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail("droid did not exit after its stdin closed", pytrace=False)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def check_tools_ran(model: MockModel, script: dict[str, list[Turn]]) -> dict[str, dict[int, str]]:
    """Every scripted turn was played and every tool result came back (Droid marks no is_error: read the text)."""
    results = model.tool_results()
    ids = {}
    for prompt, turns in script.items():
        assert model.played(prompt) == turns
        ids[prompt] = model.tool_use_ids(prompt)
        for call_id in ids[prompt].values():
            assert call_id in results, (call_id, results)
            content = results[call_id]["content"]
            assert "error" not in content.lower() and "rejected" not in content.lower(), content
    return ids


def test_rpc_session_two_prompts_checkpoint_at_start_prompt_and_edit_and_undo_restores(
        droid: Path, agent_project: Workdir) -> None:
    """The Claude Code session in Droid's tools: prompt 1 in one process, prompt 2 after droid.load_session."""
    work = agent_project
    hooks = agentcli.install_hooks(work, "droid", "project", work.env)
    work.user_state()  # git status may refresh a racily clean index once: the second call is the reference
    user = work.user_state()
    assert hooks == work.path / ".factory" / "hooks.json"
    ignored = agentcli.ignored_files(work)
    script = edit_script(str(work.path / PLAN))
    with MockModel(script) as model:
        env = droid_env(work, model, GIT_REWIND_ANTI_SPAM_SECONDS="0")
        first = RpcSession(droid, work, env)
        try:
            started = first.request("droid.initialize_session", {
                "machineId": "git-rewind-tests", "cwd": str(work.path), "sessionId": str(uuid.uuid4()),
                "modelId": MODEL, "autonomyLevel": "high"})
            session = str(started["sessionId"])
            assert first.prompt(PROMPT_1)["reason"] == "completed"
            assert first.close() == 0
        finally:
            first.kill()
        # Resume the session in a new process, as `droid --resume` does.
        second = RpcSession(droid, work, env)
        try:
            loaded = second.request("droid.load_session", {"sessionId": session})
            assert loaded.get("session", {}).get("messages"), loaded
            assert second.prompt(PROMPT_2)["reason"] == "completed"
            assert second.close() == 0
        finally:
            second.kill()

    ids = check_tools_ran(model, script)
    assert set(ids[PROMPT_1].values()) <= set(model.tool_results(PROMPT_2))  # the resumed conversation was sent
    # The resumed session's SessionStart context reached the model: the first session's last checkpoint,
    # its turn end.
    assert "Resumed from checkpoint #4: turn end" in json.dumps(
        model.main_requests(PROMPT_2)[0].body), json.dumps(model.main_requests(PROMPT_2)[0].body)[:3000]
    assert (work.path / PLAN).read_text() == PLAN_FINAL
    assert (work.path / SHELL_FILE).read_text() == SHELL_TEXT
    assert agentcli.hook_errors(work) == ""

    found = agentcli.check_two_prompt_session(work, session, "droid", "Create", "Execute")
    start, prompt_1, edit, stop_1, prompt_2, _stop_2 = found
    transcript = Path(prompt_1.note["conversation"]["transcript"])
    assert transcript.name == f"{session}.jsonl" and transcript.is_file()
    assert transcript.is_relative_to(Path(work.env["HOME"]) / ".factory" / "sessions")
    # A prompt's id is Droid's message_id: the id of the prompt's own message line in the session file.
    lines = [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]
    messages = {line.get("id"): line["message"] for line in lines if line.get("type") == "message"}
    for checkpoint, prompt in ((prompt_1, PROMPT_1), (prompt_2, PROMPT_2)):
        message = messages.get(checkpoint.note["conversation"]["prompt_id"])
        assert message and message["role"] == "user" and message["content"][0]["text"] == prompt, message

    assert blob(work, prompt_1.commit, PLAN) is None and blob(work, prompt_1.commit, SHELL_FILE) is None
    assert blob(work, prompt_1.commit, ".factory/hooks.json") == hooks.read_text()
    assert blob(work, edit.commit, PLAN) == PLAN_V1 and blob(work, edit.commit, SHELL_FILE) is None
    assert blob(work, prompt_2.commit, PLAN) == PLAN_V2 and blob(work, prompt_2.commit, SHELL_FILE) == SHELL_TEXT
    assert blob(work, stop_1.commit, PLAN) == PLAN_V2 and blob(work, stop_1.commit, SHELL_FILE) == SHELL_TEXT
    assert work.tree_of(prompt_2.commit) == work.tree_of(stop_1.commit)
    assert work.tree_of(start.commit) == work.tree_of(prompt_1.commit)
    for c in found:
        assert ".env" not in agentcli.tree_files(work, c.commit)

    agentcli.assert_undo_restores(work, prompt_1, ignored)
    assert work.user_state() == user  # index, HEAD, branches and `git status` as before the session
    work.fsck()


def run_exec(droid: Path, work: Workdir, env: dict[str, str], prompt: str, fork: str | None = None) -> str:
    """Plain `droid exec -o json PROMPT` (forking FORK); returns the session id."""
    command = [str(droid), "exec", "-m", MODEL, "--auto", "high", "-o", "json"]
    if fork:
        command += ["--fork", fork]
    proc = agentcli.run([*command, prompt], work.path, env)
    assert proc.returncode == 0, f"droid exec exited {proc.returncode}: {proc.stderr[-2000:]}{proc.stdout[-2000:]}"
    result = json.loads(proc.stdout)
    assert result.get("type") == "result" and not result.get("is_error"), result
    return str(result["session_id"])


def test_plain_exec_has_no_prompt_hook_and_a_fork_is_a_new_session(droid: Path, agent_project: Workdir) -> None:
    """`droid exec "…"` fires no UserPromptSubmit: the first tool call opens the turn, its Stop checkpoints it.

    The hooks are the user's this time (~/.factory/hooks.json).
    """
    work = agent_project
    agentcli.install_hooks(work, "droid", "user", work.env)
    ignored = agentcli.ignored_files(work)
    script = edit_script(str(work.path / PLAN))
    script[PROMPT_2] = [Text("Nothing to polish.")]
    with MockModel(script) as model:
        env = droid_env(work, model, GIT_REWIND_ANTI_SPAM_SECONDS="0")
        session = run_exec(droid, work, env, PROMPT_1)
        forked = run_exec(droid, work, env, PROMPT_2, fork=session)
    assert forked != session
    ids = check_tools_ran(model, script)
    assert set(ids[PROMPT_1].values()) <= set(model.tool_results(PROMPT_2))  # the fork carries the conversation
    assert agentcli.hook_errors(work) == ""

    assert decisions(agentcli.hook_log(work, session)) == [
        ("SessionStart", None, "checkpoint"),
        ("PreToolUse", "Create", "unchanged"),
        ("PreToolUse", "Edit", "checkpoint"),
        ("PostToolUse", "Execute", "skip"),
        ("Stop", None, "checkpoint"),  # the turn end: files changed
        ("SessionEnd", None, "skip"),  # reason "other": only /clear is checkpointed
    ]
    # The fork starts on the tree the first session's turn end holds: a checkpoint of its own all the same (each
    # session keeps its own anchors, issue 26), then nothing changes.
    assert decisions(agentcli.hook_log(work, forked)) == [
        ("SessionStart", None, "checkpoint"),
        ("Stop", None, "unchanged"),
        ("SessionEnd", None, "skip"),
    ]
    assert sorted(agentcli.sessions(work)) == sorted([session, forked])
    start, edit, stop = agentcli.checkpoints(work, session)
    assert (start.trigger, edit.trigger, edit.note["tool"], stop.trigger) == (
        "SessionStart", "PreToolUse", "Edit", "Stop")
    assert [start.seq, edit.seq, stop.seq] == [1, 2, 3]
    (fork_start,) = agentcli.checkpoints(work, forked)  # the fork's own anchor, on the tree the turn end holds
    assert agentcli.hook_log(work, forked)[0]["seq"] == fork_start.seq == 4 and fork_start.note["paths"] == []
    assert work.git("rev-parse", fork_start.commit + "^{tree}") == work.git("rev-parse", stop.commit + "^{tree}")
    # No prompt hook, yet the agent's changes are the agent's: its first tool call opened the turn.
    assert edit.note["origins"] == {PLAN: "agent"}, edit.note
    assert stop.note["origins"] == {PLAN: "agent", SHELL_FILE: "agent"}, stop.note
    assert stop.note["turn"]["session"] == session and stop.note["turn"]["tools"] == {PLAN: "Edit"}, stop.note
    assert blob(work, edit.commit, PLAN) == PLAN_V1 and blob(work, edit.commit, SHELL_FILE) is None
    assert blob(work, stop.commit, SHELL_FILE) == SHELL_TEXT
    assert blob(work, stop.commit, PLAN) == PLAN_V2

    agentcli.assert_undo_restores(work, start, ignored)


CONTINUE = "P3-CONTINUE: carry on from here"
AGAIN = "P4-AGAIN: and once more"


def rpc_prompt(droid: Path, work: Workdir, env: dict[str, str], session: str | None, prompt: str) -> str:
    """One process: a new session (SESSION None) or `droid.load_session` of SESSION, then PROMPT; its id."""
    rpc = RpcSession(droid, work, env)
    try:
        if session is None:
            started = rpc.request("droid.initialize_session", {
                "machineId": "git-rewind-tests", "cwd": str(work.path), "sessionId": str(uuid.uuid4()),
                "modelId": MODEL, "autonomyLevel": "high"})
            session = str(started["sessionId"])
        else:
            rpc.request("droid.load_session", {"sessionId": session})
        assert rpc.prompt(prompt)["reason"] == "completed"
        assert rpc.close() == 0
    finally:
        rpc.kill()
    return session


def test_undo_full_cuts_the_session_file_and_redo_puts_it_back(droid: Path, agent_project: Workdir) -> None:
    """Two prompts; `undo <first prompt> --full`: files of that moment, the resumed session sends neither prompt;
    redo: the whole conversation back, and what was said after the rewind kept as a session of its own."""
    work = agent_project
    agentcli.install_hooks(work, "droid", "project", work.env)
    ignored = agentcli.ignored_files(work)
    script = edit_script(str(work.path / PLAN))
    script[CONTINUE] = [Text("Carrying on.")]
    script[AGAIN] = [Text("Once more.")]
    with MockModel(script) as model:
        env = droid_env(work, model, GIT_REWIND_ANTI_SPAM_SECONDS="0")
        session = rpc_prompt(droid, work, env, None, PROMPT_1)
        rpc_prompt(droid, work, env, session, PROMPT_2)
        ids = check_tools_ran(model, {PROMPT_1: script[PROMPT_1], PROMPT_2: script[PROMPT_2]})
        found = agentcli.checkpoints(work, session)
        prompt_1 = next(c for c in found if c.trigger == "UserPromptSubmit" and c.note["prompt"] == PROMPT_1)
        transcript = Path(prompt_1.note["conversation"]["transcript"])
        whole = transcript.read_bytes()
        finished = agentcli.disk_files(work.path)

        run = work.rewind("undo", str(prompt_1.seq), "--full", "--yes", env=env)
        assert run.returncode == 0, run.stderr
        assert f"resume with: droid --resume {session}" in run.stdout and PROMPT_1 in run.stdout, run.stdout
        agentcli.assert_tree_on_disk(work, prompt_1.commit, ignored, "after undo --full")
        cut = transcript.read_bytes()
        assert whole.startswith(cut) and PROMPT_1.encode() not in cut
        assert json.loads(cut.splitlines()[0])["type"] == "session_start"
        safety = agentcli.checkpoints(work, session)[-1]
        assert work.git("show", f"{safety.commit}^2:{transcript.name}").encode() == whole
        rpc_prompt(droid, work, env, session, CONTINUE)
        sent = json.dumps(model.main_requests(CONTINUE)[0].body["messages"])
        for gone in (PROMPT_1, PROMPT_2, *ids[PROMPT_1].values(), *ids[PROMPT_2].values()):
            assert gone not in sent, gone

        run = work.rewind("redo", "--yes", env=env)
        assert run.returncode == 0, run.stderr
        assert agentcli.disk_files(work.path) == finished
        assert transcript.read_bytes() == whole
        branch = [s for s in transcript.parent.glob("*.jsonl")
                  if s != transcript and CONTINUE.encode() in s.read_bytes()]
        assert len(branch) == 1 and branch[0].stem in run.stdout, run.stdout
        rpc_prompt(droid, work, env, session, AGAIN)
        sent = json.dumps(model.main_requests(AGAIN)[0].body["messages"])
        for back in (PROMPT_1, PROMPT_2, *ids[PROMPT_1].values(), *ids[PROMPT_2].values()):
            assert back in sent, back
        assert CONTINUE not in sent
    assert agentcli.hook_errors(work) == ""
    work.fsck()
