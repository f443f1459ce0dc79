"""End to end with the real GitHub Copilot CLI: its hooks, installed by `git rewind install`, checkpoint a session,
and `undo --full` rewinds the code and the conversation that `copilot --resume` then sends.

Copilot runs offline against the scripted mock model (COPILOT_OFFLINE, COPILOT_PROVIDER_BASE_URL, COPILOT_MODEL:
streamed chat completions) with a scratch HOME. Its first run unpacks its JavaScript (~235 MB) into
COPILOT_CACHE_HOME: that is kept in the agent cache, so only a cold cache pays it (~4 s).

In `-p` mode Copilot loads a project's hooks (.github/hooks/) only in a trusted folder (--trust-folder on a new
session, which --resume refuses; or GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true), and the user's
(<Copilot home>/hooks/) always: the two-prompt session uses the user scope, the project scope is checked on its
own.
"""

from __future__ import annotations

import json
import re
import subprocess
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

CONTINUE = "P3-CONTINUE: carry on from here"
AGAIN = "P4-AGAIN: and once more"


@pytest.fixture(scope="module")
def copilot() -> Path:
    return agentcli.copilot()


def copilot_env(work: Workdir, model: MockModel, **extra: str) -> dict[str, str]:
    """Scratch HOME, the mock as the only model, no update check, its unpacked JavaScript kept in the cache."""
    return agentcli.agent_env(
        work.env, COPILOT_OFFLINE="true", COPILOT_PROVIDER_BASE_URL=f"{model.url}/v1",
        COPILOT_PROVIDER_API_KEY="dummy", COPILOT_MODEL="mock-model", COPILOT_AUTO_UPDATE="false",
        COPILOT_CACHE_HOME=str(agentcli.cache_dir() / "copilot" / "unpacked"), GIT_REWIND_ANTI_SPAM_SECONDS="0",
        **extra)


def edit_script(plan: str) -> dict[str, list[Turn]]:
    """The session the other agents play, in Copilot's tools (create, edit, bash); create makes no folder."""
    Path(plan).parent.mkdir(exist_ok=True)
    return {
        PROMPT_1: [
            ToolCall("create", {"path": plan, "file_text": PLAN_V1}),
            ToolCall("edit", {"path": plan, "old_str": DRAFT_1, "new_str": DRAFT_2}),
            ToolCall("bash", {"command": f"printf '{SHELL_TEXT.strip()}\\n' > {SHELL_FILE}",
                              "description": "leave a note from the shell"}),
            Text("The plan is written."),
        ],
        PROMPT_2: [
            ToolCall("edit", {"path": plan, "old_str": DRAFT_2, "new_str": DRAFT_3}),  # 3rd edit: batch
            ToolCall("edit", {"path": plan, "old_str": "third draft", "new_str": "final draft"}),  # small
            Text("Polished."),
        ],
        CONTINUE: [Text("Carrying on.")],
        AGAIN: [Text("Once more.")],
    }


def run_copilot(copilot: Path, work: Workdir, env: dict[str, str], prompt: str, resume: str | None = None,
                *flags: str) -> str:
    """`copilot -p PROMPT --allow-all` (resuming RESUME); returns the session id it prints."""
    command = [str(copilot), *([f"--resume={resume}"] if resume else []), "-p", prompt, "--allow-all", *flags]
    proc = agentcli.run(command, work.path, env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"copilot exited {proc.returncode}: {out[-3000:]}"
    found = re.search(r"copilot --resume=([0-9a-f-]{36})", out)
    assert found, out[-2000:]
    return found.group(1)


def check_tools_ran(model: MockModel, script: dict[str, list[Turn]], prompts: tuple[str, ...]) -> dict[str, list[str]]:
    """Every scripted turn of PROMPTS was played and every tool call's result came back (not denied)."""
    results = model.tool_results()
    ids = {}
    for prompt in prompts:
        assert model.played(prompt) == script[prompt]
        ids[prompt] = list(model.tool_use_ids(prompt).values())
        for call_id in ids[prompt]:
            content = results[call_id]["content"]
            assert "denied" not in content.lower() and "error" not in content.lower(), content
    return ids


def sent(model: MockModel, prompt: str) -> str:
    return json.dumps(model.main_requests(prompt)[0].body["messages"])


def first_two(log: list[dict[str, Any]], start: int) -> set[tuple[Any, ...]]:
    """sessionStart and userPromptSubmitted run at once: their entries in either order."""
    return set(decisions(log[start:start + 2]))


def test_two_prompts_checkpoint_and_undo_full_rewinds_code_and_the_resumed_conversation(
        copilot: Path, agent_project: Workdir) -> None:
    work = agent_project
    hooks = agentcli.install_hooks(work, "copilot", "user", work.env)
    assert hooks == Path(work.env["HOME"]) / ".copilot" / "hooks" / "git-rewind.json"
    work.user_state()
    user = work.user_state()
    ignored = agentcli.ignored_files(work)
    script = edit_script(str(work.path / PLAN))
    with MockModel(script) as model:
        env = copilot_env(work, model)
        session = run_copilot(copilot, work, env, PROMPT_1)
        assert run_copilot(copilot, work, env, PROMPT_2, session) == session
        ids = check_tools_ran(model, script, (PROMPT_1, PROMPT_2))
        for call_id in ids[PROMPT_1]:  # the resumed session sent the first prompt's calls and results
            assert call_id in sent(model, PROMPT_2)
        # The resumed session was told where the first one stood (sessionStart's additionalContext).
        assert "Resumed from checkpoint #" in sent(model, PROMPT_2), sent(model, PROMPT_2)[:3000]
        assert (work.path / PLAN).read_text() == PLAN_FINAL
        assert (work.path / SHELL_FILE).read_text() == SHELL_TEXT
        assert agentcli.hook_errors(work) == ""

        log = agentcli.hook_log(work, session)
        assert first_two(log, 0) <= {("sessionStart", None, "checkpoint"), ("sessionStart", None, "unchanged"),
                                     ("userPromptSubmitted", None, "checkpoint")}, log[:2]
        assert decisions(log[2:10]) == [
            ("preToolUse", "create", "unchanged"),  # a new file: the tree equals the prompt's checkpoint
            ("postToolUse", "create", "skip"),
            ("preToolUse", "edit", "checkpoint"),
            ("postToolUse", "edit", "skip"),
            ("preToolUse", "bash", "skip"),  # every tool reaches the hook (no matcher): skipped at once
            ("postToolUse", "bash", "skip"),  # balanced: nothing after the shell
            ("agentStop", None, "checkpoint"),  # the turn end: files changed
            ("sessionEnd", None, "skip"),  # reason "complete": only /clear is checkpointed
        ], json.dumps(log, indent=1)
        assert first_two(log, 10) == {("sessionStart", None, "unchanged"), ("userPromptSubmitted", None, "checkpoint")}
        assert decisions(log[12:]) == [
            ("preToolUse", "edit", "skip"), ("postToolUse", "edit", "skip"),
            ("preToolUse", "edit", "skip"), ("postToolUse", "edit", "skip"),
            ("agentStop", None, "checkpoint"), ("sessionEnd", None, "skip"),
        ], json.dumps(log, indent=1)
        assert "batch" in log[12]["reason"] and "small" in log[14]["reason"]
        assert max(e["ms"] for e in log if e["action"] == "skip" and e["event"] == "preToolUse") < 1000

        found = agentcli.checkpoints(work, session)
        agentcli.check_chain(work, found)
        assert [c.seq for c in found] == list(range(1, len(found) + 1))  # one session, no seq lost or reused
        triggers = [c.trigger for c in found]
        assert triggers in (["sessionStart", "userPromptSubmitted", "preToolUse", "agentStop", "userPromptSubmitted",
                             "agentStop"],
                            ["userPromptSubmitted", "preToolUse", "agentStop", "userPromptSubmitted", "agentStop"])
        prompt_1, edit, stop_1, prompt_2, stop_2 = found[-5:]
        transcript = Path(prompt_1.note["conversation"]["transcript"])
        assert transcript == Path(work.env["HOME"]) / ".copilot" / "session-state" / session / "events.jsonl"
        for c in found:
            assert c.note["agent"] == "copilot" and c.note["conversation"]["transcript"] == str(transcript)
            assert isinstance(c.note["conversation"]["hook_ms"], int)
        assert (prompt_1.note["prompt"], edit.note["prompt"], prompt_2.note["prompt"]) == (PROMPT_1, PROMPT_1,
                                                                                           PROMPT_2)
        assert (edit.note["tool"], edit.note["paths"]) == ("edit", [PLAN])
        assert blob(work, prompt_1.commit, PLAN) is None and blob(work, edit.commit, PLAN) == PLAN_V1
        assert blob(work, stop_1.commit, PLAN) == PLAN_V2 and blob(work, stop_1.commit, SHELL_FILE) == SHELL_TEXT
        assert blob(work, stop_2.commit, PLAN) == PLAN_FINAL
        # Attribution: each turn's changes are the agent's, closed off by its agentStop.
        assert edit.note["origins"] == {PLAN: "agent"}, edit.note
        assert stop_1.note["origins"] == {PLAN: "agent", SHELL_FILE: "agent"}, stop_1.note
        assert stop_2.note["origins"] == {PLAN: "agent"}, stop_2.note
        for stop, prompt in ((stop_1, prompt_1), (stop_2, prompt_2)):
            assert stop.note["turn"]["seq"] == prompt.seq, stop.note

        # undo --full to the first prompt: the files of that moment, and the resumed session says neither prompt.
        whole = transcript.read_bytes()
        finished = agentcli.disk_files(work.path)
        run = work.rewind("undo", str(prompt_1.seq), "--full", "--yes", env=env)
        assert run.returncode == 0, run.stderr
        assert f"resume with: copilot --resume={session}" in run.stdout and PROMPT_1 in run.stdout, run.stdout
        agentcli.assert_tree_on_disk(work, prompt_1.commit, ignored, "after undo --full")
        assert work.user_state() == user  # index, HEAD, branches and `git status` as before the session
        cut = transcript.read_bytes()
        assert whole.startswith(cut)
        assert not [e for e in map(json.loads, cut.splitlines()) if e["type"].startswith(("user.", "assistant."))]
        safety = agentcli.checkpoints(work, session)[-1]
        assert work.git("show", f"{safety.commit}^2:events.jsonl").encode() == whole  # all of it kept in git
        assert run_copilot(copilot, work, env, CONTINUE, session) == session
        for gone in (PROMPT_1, PROMPT_2, *ids[PROMPT_1], *ids[PROMPT_2]):
            assert gone not in sent(model, CONTINUE), gone
        # The resumed session's prompt hook told it the files were rewound under it (a top-level additionalContext).
        assert "rewound from outside this session" in sent(model, CONTINUE), sent(model, CONTINUE)[:3000]

        # redo: the files and the whole conversation back; what was said meanwhile kept as a session of its own.
        run = work.rewind("redo", "--yes", env=env)
        assert run.returncode == 0, run.stderr
        assert agentcli.disk_files(work.path) == finished
        assert transcript.read_bytes() == whole
        branch = [p for p in transcript.parent.parent.glob("*/events.jsonl")
                  if p != transcript and CONTINUE.encode() in p.read_bytes()]
        assert len(branch) == 1 and branch[0].parent.name in run.stdout, run.stdout
        assert run_copilot(copilot, work, env, AGAIN, session) == session
        for back in (PROMPT_1, PROMPT_2, *ids[PROMPT_1], *ids[PROMPT_2]):
            assert back in sent(model, AGAIN), back
        assert CONTINUE not in sent(model, AGAIN)
    assert agentcli.hook_errors(work) == ""
    work.fsck()


def test_a_forked_rewind_to_the_edit_resumes_as_a_new_session_without_the_edit(
        copilot: Path, agent_project: Workdir) -> None:
    """`undo <edit> --conversation --fork`: a new session whose conversation stops before the edit call; the
    original session is untouched."""
    work = agent_project
    agentcli.install_hooks(work, "copilot", "user", work.env)
    script = edit_script(str(work.path / PLAN))
    with MockModel(script) as model:
        env = copilot_env(work, model)
        session = run_copilot(copilot, work, env, PROMPT_1)
        ids = check_tools_ran(model, script, (PROMPT_1,))
        edit = next(c for c in agentcli.checkpoints(work, session) if c.trigger == "preToolUse")
        transcript = Path(edit.note["conversation"]["transcript"])
        whole = transcript.read_bytes()
        run = work.rewind("undo", str(edit.seq), "--conversation", "--fork", "--yes", env=env)
        assert run.returncode == 0, run.stderr
        forked = re.search(r"new session ([0-9a-f-]{36})", run.stdout)
        assert forked and f"copilot --resume={forked.group(1)}" in run.stdout, run.stdout
        assert transcript.read_bytes() == whole
        assert run_copilot(copilot, work, env, CONTINUE, forked.group(1)) == forked.group(1)
        messages = sent(model, CONTINUE)
        create, edit_call, shell = ids[PROMPT_1]
        assert PROMPT_1 in messages and create in messages  # what came before the edit call
        assert edit_call not in messages and shell not in messages
    assert (work.path / PLAN).read_text() == PLAN_V2  # --conversation: the files stay
    assert agentcli.hook_errors(work) == ""


def test_project_hooks_run_only_in_a_trusted_folder(copilot: Path, agent_project: Workdir) -> None:
    """Installed in the project (.github/hooks/git-rewind.json): `copilot -p` skips them in an untrusted folder
    without a word, and runs them with GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true (or --trust-folder)."""
    work = agent_project
    hooks = agentcli.install_hooks(work, "copilot", "project", work.env)
    assert hooks == work.path / ".github" / "hooks" / "git-rewind.json"
    script: dict[str, list[Turn]] = {"P0-QUIET: say hello": [Text("Hello.")], **edit_script(str(work.path / PLAN))}
    with MockModel(script) as model:
        env = copilot_env(work, model)
        quiet = run_copilot(copilot, work, env, "P0-QUIET: say hello")
        assert agentcli.hook_log(work, quiet) == []
        trusted = dict(env, GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS="true")
        session = run_copilot(copilot, work, trusted, PROMPT_1)
    found = agentcli.checkpoints(work, session)
    assert [c.trigger for c in found][-3:] == ["userPromptSubmitted", "preToolUse", "agentStop"]
    assert blob(work, found[-1].commit, ".github/hooks/git-rewind.json") == hooks.read_text()
    assert agentcli.hook_errors(work) == ""
    ignored = agentcli.ignored_files(work)
    agentcli.assert_undo_restores(work, found[-3], ignored)
    assert not (work.path / PLAN).exists() and hooks.is_file()  # git-rewind's own entries survive the restore


def test_a_broken_git_rewind_never_denies_a_tool(copilot: Path, agent_project: Workdir, tmp_path: Path) -> None:
    """The user's hooks name a git-rewind that is gone: Copilot still runs every tool (our entries exit 0)."""
    from git_rewind.agents import install

    work = agent_project
    gone = tmp_path / "gone" / "git-rewind"
    install.install("copilot", "user", str(work.path), work.env["HOME"], program=[str(gone)])
    script = edit_script(str(work.path / PLAN))
    with MockModel(script) as model:
        run_copilot(copilot, work, copilot_env(work, model), PROMPT_1)
        check_tools_ran(model, script, (PROMPT_1,))
    assert (work.path / PLAN).read_text() == PLAN_V2 and (work.path / SHELL_FILE).read_text() == SHELL_TEXT
    assert subprocess.run(["git", "for-each-ref", "refs/rewind/"], cwd=work.path, capture_output=True,
                          text=True, env=work.env).stdout == ""


def test_copilot_lists_the_mcp_server_install_wrote(copilot: Path, agent_project: Workdir) -> None:
    work = agent_project
    assert work.rewind("install", "--agent", "copilot", "--scope", "user", "--mcp").returncode == 0
    with MockModel({}) as model:
        proc = agentcli.run([str(copilot), "mcp", "get", "git-rewind"], work.path, copilot_env(work, model))
    assert proc.returncode == 0, proc.stderr
    assert "git-rewind" in proc.stdout and " mcp" in proc.stdout and "User" in proc.stdout, proc.stdout
