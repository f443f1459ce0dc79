"""End to end with the real Codex CLI: its hooks, installed by `git rewind install`, checkpoint a session.

Codex runs against the scripted mock model (tests/helpers/mockmodel.py + mockmodel_responses.py, the OpenAI
Responses API) as a custom model provider, with a scratch HOME and CODEX_HOME. The hooks go
into the project's .codex/hooks.json and their trust into CODEX_HOME's config.toml, written by
`git rewind install --agent codex --scope project`: Codex runs them WITHOUT
--dangerously-bypass-hook-trust. (Codex reads a project's .codex/ only once the project is
trusted; the first run passes --trust, as a user answering yes would.)

A session of two prompts, with apply_patch edits and a shell command; then `git rewind undo
<first prompt> --full` restores the files and writes a new rollout holding the conversation
before that prompt, which `codex exec resume <new id>` sends (the mock's request log), while
the original session's rollout is byte for byte as it was.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from helpers import agentcli, mockmodel_responses
from helpers.agentcli import blob, decisions, e2e
from helpers.mockmodel import MockModel, Text, ToolCall, Turn
from helpers.workdir import Workdir

pytestmark = e2e

MODEL = "gpt-5.5"  # a model Codex knows: it offers apply_patch (with an unknown one, only the shell)
PROMPT_1 = "P1-PLAN: write the plan, rewrite it, and leave a note from the shell"
PROMPT_2 = "P2-POLISH: polish the plan"
CONTINUE = "P3-CONTINUE: carry on"
PLAN = "notes/plan.md"
OTHER = "notes/other.md"
PLAN_V1 = "# Plan\n" + "- first draft of the plan, long enough to be worth a checkpoint\n" * 2
SHELL_FILE = "shell_made.txt"


def patch(*sections: str) -> dict[str, str]:
    return {"input": "*** Begin Patch\n" + "".join(sections) + "*** End Patch\n"}


def script(root: Path) -> dict[str, list[Turn]]:
    return {
        PROMPT_1: [
            ToolCall("apply_patch", patch(f"*** Add File: {PLAN}\n" + "".join("+" + line + "\n"
                                                                             for line in PLAN_V1.splitlines()))),
            ToolCall("apply_patch", patch(  # absolute paths, an update and a new file
                f"*** Update File: {root / PLAN}\n@@\n-- first draft of the plan, long enough to be worth a "
                "checkpoint\n-- first draft of the plan, long enough to be worth a checkpoint\n+- second draft, "
                "rewritten from scratch by the edit tool\n",
                f"*** Add File: {root / OTHER}\n+another file, from the same patch\n")),
            ToolCall("exec_command", {"cmd": f"printf 'made by the shell\\n' > {SHELL_FILE}"}),
            Text("The plan is written."),
        ],
        PROMPT_2: [
            ToolCall("apply_patch", patch(f"*** Delete File: {OTHER}\n",
                                          f"*** Update File: {PLAN}\n*** Move to: notes/final.md\n@@\n"
                                          "-- second draft, rewritten from scratch by the edit tool\n"
                                          "+- final draft, moved to its own file by a patch that says so\n")),
            Text("Polished."),
        ],
        CONTINUE: [Text("Carrying on.")],
    }


@pytest.fixture(scope="module")
def codex() -> Path:
    return agentcli.codex()


def codex_env(work: Workdir, model: MockModel) -> dict[str, str]:
    """Scratch CODEX_HOME with the mock as the only provider; Codex kept offline."""
    home = Path(work.env["HOME"]) / "codex-home"  # not ~/.codex: install must follow $CODEX_HOME
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f"""# the user's own settings, kept by install
model = "{MODEL}"
model_provider = "mock"

[model_providers.mock]
name = "Mock"
base_url = "{model.url}/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"

[analytics]
enabled = false
""")
    # No anti-spam interval: every edit that is not small or batched gets its checkpoint.
    return agentcli.agent_env(work.env, CODEX_HOME=str(home), MOCK_API_KEY="test-key", NO_COLOR="1",
                              GIT_REWIND_ANTI_SPAM_SECONDS="0")


def exec_codex(codex: Path, work: Workdir, env: dict[str, str], *args: str) -> list[dict[str, object]]:
    run = agentcli.run([str(codex), "exec", "--dangerously-bypass-approvals-and-sandbox", "--json", "-m", MODEL,
                        *args], work.path, env)
    assert run.returncode == 0, f"codex exec {args} failed ({run.returncode}): {run.stderr[-3000:]}"
    assert "--dangerously-bypass-hook-trust" not in args
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]


def thread_id(events: list[dict[str, object]]) -> str:
    started = [e for e in events if e.get("type") == "thread.started"]
    assert started, events
    return str(started[0]["thread_id"])


def rollout(env: dict[str, str], session: str) -> Path:
    found = list((Path(env["CODEX_HOME"]) / "sessions").glob(f"*/*/*/rollout-*-{session}.jsonl"))
    assert len(found) == 1, found
    return found[0]


def hooks_list(codex: Path, work: Workdir, env: dict[str, str]) -> list[dict[str, object]]:
    """What `codex app-server` reports for the project's hooks (hooks/list): key, currentHash, trustStatus."""
    proc = subprocess.Popen([str(codex), "app-server"], cwd=work.path, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for message in ({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"clientInfo": {"name": "git-rewind-test", "version": "1"}}},
                        {"jsonrpc": "2.0", "method": "initialized"},
                        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(work.path)]}}):
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
        for line in proc.stdout:
            answer = json.loads(line)
            if answer.get("id") == 2:
                return list(answer["result"]["data"][0]["hooks"])
        pytest.fail("codex app-server closed without answering hooks/list")
    finally:
        proc.kill()
        proc.wait()


def test_codex_session_checkpoints_and_undo_full_resumes_the_cut_conversation(
        codex: Path, agent_project: Workdir) -> None:
    work = agent_project
    with MockModel(script(work.path)) as model:
        env = codex_env(work, model)
        run = work.rewind("install", "--agent", "codex", "--scope", "project", env=env)
        assert run.returncode == 0, run.stderr
        hooks_file = work.path / ".codex" / "hooks.json"
        config = Path(env["CODEX_HOME"]) / "config.toml"
        assert f"in {hooks_file}" in run.stdout and f"trusted the 7 hooks in {config}" in run.stdout
        assert not (Path(env["HOME"]) / ".codex").exists()  # CODEX_HOME, not ~/.codex
        assert "# the user's own settings, kept by install" in config.read_text()

        # Codex itself computes the same hashes: every handler of ours is trusted.
        listed = hooks_list(codex, work, env)
        ours = [h for h in listed if str(h.get("sourcePath")) == str(hooks_file)]
        assert ours == []  # Codex reads a project's .codex/ only once the project is trusted

        first = exec_codex(codex, work, env, "--trust", PROMPT_1)
        session = thread_id(first)
        listed = hooks_list(codex, work, env)
        ours = [h for h in listed if str(h.get("sourcePath")) == str(hooks_file)]
        untrusted = [(h["key"], h["trustStatus"], h["timeoutSec"]) for h in ours if h["trustStatus"] != "trusted"]
        assert len(ours) == 7 and not untrusted, untrusted  # SessionEnd too: its hash has the clamped 3 s
        assert "--dangerously-bypass-hook-trust" not in run.stdout

        exec_codex(codex, work, env, "resume", session, PROMPT_2)
        # The resumed session's SessionStart context reached the model (Codex: a developer message).
        request = json.dumps(model.main_requests(PROMPT_2)[0].body)
        assert "Resumed from checkpoint #4: turn end" in request, request[-3000:]
        # Every tool ran and its result came back.
        assert set(model.tool_use_ids(PROMPT_1).values()) <= set(model.tool_results(PROMPT_2))

    errors = agentcli.hook_errors(work)
    assert not errors, errors
    log = agentcli.hook_log(work, session)
    assert decisions(log) == [
        ("SessionStart", None, "checkpoint"),
        ("UserPromptSubmit", None, "checkpoint"),
        ("PreToolUse", "apply_patch", "unchanged"),  # a new file: the tree equals the prompt's checkpoint
        ("PreToolUse", "apply_patch", "checkpoint"),
        ("PostToolUse", "Bash", "skip"),
        ("Stop", None, "checkpoint"),  # the turn end: the patch and the shell changed files
        ("SessionEnd", None, "skip"),  # reason "other": only /clear is checkpointed
        ("SessionStart", None, "unchanged"),  # resumed: nothing changed since the turn end
        ("UserPromptSubmit", None, "checkpoint"),
        ("PreToolUse", "apply_patch", "skip"),  # the third edit within a minute: one checkpoint per batch
        ("Stop", None, "checkpoint"),
        ("SessionEnd", None, "skip"),
    ], json.dumps(log, indent=1)
    assert "batch" in log[9]["reason"], log[9]
    # Every path a patch names, relative or absolute, resolved into the work tree.
    assert [e["paths"] for e in log if e["event"] == "PreToolUse"] == [
        [PLAN], [PLAN, OTHER], [OTHER, PLAN, "notes/final.md"]]

    found = agentcli.checkpoints(work, session)
    assert [c.trigger for c in found] == ["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop",
                                          "UserPromptSubmit", "Stop"]
    agentcli.check_chain(work, found)
    _start, prompt_1, edit, stop_1, prompt_2, stop_2 = found
    # Each turn end records its turn's changes as the agent's (the first: the patch and the shell's file).
    assert set(stop_1.note["origins"].values()) == {"agent"} and SHELL_FILE in stop_1.note["origins"], stop_1.note
    assert stop_1.note["turn"]["seq"] == prompt_1.seq and stop_2.note["turn"]["seq"] == prompt_2.seq
    assert set(stop_2.note["origins"]) == {PLAN, OTHER, "notes/final.md"}, stop_2.note
    transcript = rollout(env, session)
    for c in found:
        assert (c.note["agent"], c.note["session"]) == ("codex", session)
        assert c.note["conversation"]["transcript"] == str(transcript)
    assert prompt_1.note["prompt"] == PROMPT_1 and prompt_2.note["prompt"] == PROMPT_2
    assert prompt_1.note["conversation"]["prompt_id"]  # the turn's id
    assert (edit.note["tool"], edit.note["named"]) == ("apply_patch", [PLAN, OTHER])  # the files the patch names
    assert edit.note["paths"] and set(edit.note["paths"]) <= {PLAN, OTHER}  # those of them changed since #prompt_1
    model_1_ids = list(model.tool_use_ids(PROMPT_1).values())
    assert edit.note["conversation"]["tool_use_id"] == model_1_ids[1]
    assert blob(work, edit.commit, PLAN) == PLAN_V1 and blob(work, edit.commit, OTHER) is None
    assert blob(work, prompt_2.commit, OTHER) == "another file, from the same patch\n"
    assert (work.path / "notes" / "final.md").exists() and not (work.path / OTHER).exists()

    # undo --full to the first prompt: the files as they were before it, the conversation cut before it.
    original = transcript.read_bytes()
    ignored = agentcli.ignored_files(work)
    undo = work.rewind("undo", str(prompt_1.seq), "--full", "--yes", env=env)
    assert undo.returncode == 0, undo.stderr
    agentcli.assert_tree_on_disk(work, prompt_1.commit, ignored, "after undo --full")
    assert not (work.path / "notes").exists() and not (work.path / SHELL_FILE).exists()
    new = re.search(r"resume with: codex resume ([0-9a-f-]{36})", undo.stdout)
    assert new and new.group(1) != session, undo.stdout
    assert "the prompt it cut, to send again or edit:" in undo.stdout and PROMPT_1 in undo.stdout
    assert transcript.read_bytes() == original  # the original session is never changed
    new_rollout = rollout(env, new.group(1))
    head = json.loads(new_rollout.read_text().splitlines()[0])
    assert head["type"] == "session_meta" and head["payload"]["id"] == new.group(1)

    # Both sessions resume: the new one with the conversation before the first prompt, the old one whole.
    with MockModel(script(work.path)) as model:
        env = codex_env(work, model)
        exec_codex(codex, work, env, "resume", new.group(1), CONTINUE)
        sent = model.main_requests(CONTINUE)
        assert sent, [r.path for r in model.requests]
        texts = mockmodel_responses.user_texts(sent[0].body)
        assert texts[-1] == CONTINUE and not any(PROMPT_1 in t or PROMPT_2 in t for t in texts), texts
        assert transcript.read_bytes() == original


        # The conversation alone, to the second prompt: the new session holds the first turn only.
        files = agentcli.disk_files(work.path)
        undo = work.rewind("undo", str(prompt_2.seq), "--conversation", "--yes", env=env)
        assert undo.returncode == 0, undo.stderr
        assert agentcli.disk_files(work.path) == files  # --conversation leaves the files alone
        second = re.search(r"resume with: codex resume ([0-9a-f-]{36})", undo.stdout)
        assert second and second.group(1) not in (session, new.group(1)), undo.stdout
        exec_codex(codex, work, env, "resume", second.group(1), CONTINUE)
        texts = mockmodel_responses.user_texts(model.main_requests(CONTINUE)[-1].body)
        assert [t for t in texts if t in (PROMPT_1, PROMPT_2, CONTINUE)] == [PROMPT_1, CONTINUE], texts
        # The first turn's tool calls and results went with it.
        assert set(model.tool_results(CONTINUE)) >= set(model_1_ids)

        # To the second apply_patch of the first prompt: cut mid-turn, just before that call.
        undo = work.rewind("undo", str(edit.seq), "--conversation", "--yes", env=env)
        assert undo.returncode == 0, undo.stderr
        assert "cut just before the apply_patch call" in undo.stdout
        third = re.search(r"resume with: codex resume ([0-9a-f-]{36})", undo.stdout)
        assert third, undo.stdout
        exec_codex(codex, work, env, "resume", third.group(1), CONTINUE)
        body = model.main_requests(CONTINUE)[-1].body
        texts = mockmodel_responses.user_texts(body)
        assert [t for t in texts if t in (PROMPT_1, PROMPT_2, CONTINUE)] == [PROMPT_1, CONTINUE], texts
        calls = [i.get("call_id") for i in body["input"] if i.get("type") in ("custom_tool_call", "function_call")]
        assert calls == model_1_ids[:1], calls  # the first patch was kept, the checkpoint's own call was not

        # redo: nothing to put back in the original, which resumes whole.
        redo = work.rewind("redo", "--yes", env=env)
        assert redo.returncode == 0, redo.stderr
        assert f"resume with: codex resume {session}" in redo.stdout
        exec_codex(codex, work, env, "resume", session, CONTINUE)
        texts = mockmodel_responses.user_texts(model.main_requests(CONTINUE)[-1].body)
        assert [t for t in texts if t in (PROMPT_1, PROMPT_2, CONTINUE)] == [PROMPT_1, PROMPT_2, CONTINUE], texts
        assert transcript.read_bytes() != original  # resumed: Codex appended the new turn itself

    # uninstall: the hooks and exactly their trust entries go; the user's config stays.
    run = work.rewind("uninstall", "--agent", "codex", "--scope", "project", env=env)
    assert run.returncode == 0, run.stderr
    assert not hooks_file.exists()
    text = config.read_text()
    assert "hooks.state" not in text and "[model_providers.mock]" in text and "# the user's own settings" in text


def test_user_scope_hooks_in_codex_home_run_trusted_without_any_flag(codex: Path, agent_project: Workdir) -> None:
    """`install --scope user` writes $CODEX_HOME/hooks.json and its trust: no project trust, no bypass flag."""
    work = agent_project
    one: dict[str, list[Turn]] = {
        PROMPT_1: [ToolCall("apply_patch", patch(f"*** Add File: {PLAN}\n+{'x' * 80}\n")), Text("Done.")]}
    with MockModel(one) as model:
        env = codex_env(work, model)
        run = work.rewind("install", "--agent", "codex", "--scope", "user", env=env)
        assert run.returncode == 0, run.stderr
        assert f"in {Path(env['CODEX_HOME']) / 'hooks.json'}" in run.stdout
        session = thread_id(exec_codex(codex, work, env, PROMPT_1))
        assert model.played(PROMPT_1) == one[PROMPT_1]
    assert agentcli.hook_errors(work) == ""
    assert decisions(agentcli.hook_log(work, session))[:3] == [
        ("SessionStart", None, "checkpoint"), ("UserPromptSubmit", None, "checkpoint"),
        ("PreToolUse", "apply_patch", "unchanged")]
    assert "trust_level" not in (Path(env["CODEX_HOME"]) / "config.toml").read_text()  # the project was not trusted


def test_the_mcp_server_installed_for_codex_is_listed_enabled(codex: Path, agent_project: Workdir) -> None:
    """`git rewind install --agent codex --mcp` writes [mcp_servers.git-rewind] where Codex reads it."""
    work = agent_project
    with MockModel({}) as model:
        env = codex_env(work, model)
        run = work.rewind("install", "--agent", "codex", "--mcp", env=env)
        assert run.returncode == 0, run.stderr
        listed = agentcli.run([str(codex), "mcp", "list", "--json"], work.path, env)
    assert listed.returncode == 0, listed.stderr
    servers = {s["name"]: s for s in json.loads(listed.stdout)}
    ours = servers["git-rewind"]
    assert ours["enabled"] is True and ours["transport"]["args"][-1] == "mcp", ours
