"""End to end with the real Kilo Code CLI (@kilocode/cli 7.7.7): our plugin, installed by `git rewind install
--agent kilo`, checkpoints a session, and `git rewind undo --full` forks the conversation through Kilo's own
server.

Kilo runs against the scripted mock model (tests/helpers/mockmodel.py, chat completions) as an
`@ai-sdk/openai-compatible` provider in a scratch HOME, with model fetches, autoupdate, session ingest, LSP
downloads and telemetry off (shared/agents/kilo-aider.md A). `kilo run "…"` starts a session, `kilo run -s
<id> "…"` continues one. `kilo run` wraps every argument holding a space in literal double quotes, so each
prompt is passed word by word (Kilo joins them with spaces: the model gets the prompt exactly). At start Kilo
installs `@kilocode/plugin` into each plugin directory's parent (~/.config/kilo, .kilo) with npm (its cache
is kept beside the agent, so reruns reuse it); our plugin imports only types, so it runs either way.

No Kilo server is running when `git rewind undo` runs here (`kilo run` answers on none), so each
conversation rewind starts `kilo serve --pure` itself, from PATH, and stops it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import agentcli
from helpers.agentcli import (
    DRAFT_1,
    DRAFT_2,
    DRAFT_3,
    PLAN,
    PLAN_V1,
    PLAN_V2,
    SHELL_FILE,
    SHELL_TEXT,
    blob,
    decisions,
    e2e,
)
from helpers.mockmodel import MockModel, Text, ToolCall, Turn
from helpers.workdir import Workdir

pytestmark = e2e

PROMPT_1 = "P1-PLAN: write the plan, rewrite it, and leave a note from the shell"
PROMPT_2 = "P2-POLISH: polish the plan"
CONTINUE = "P3-CONTINUE: carry on from here"
AGAIN = "P4-AGAIN: and once more"
FIRST_RUN_TIMEOUT = 240  # seconds: the first start installs @kilocode/plugin with npm


@pytest.fixture(scope="module")
def kilo() -> Path:
    return agentcli.kilo()


def script(plan: str) -> dict[str, list[Turn]]:
    """Prompt 1: write, a big edit, a shell command; prompt 2: one more edit (a batch: no checkpoint)."""
    return {
        PROMPT_1: [
            ToolCall("write", {"filePath": plan, "content": PLAN_V1}),
            ToolCall("edit", {"filePath": plan, "oldString": DRAFT_1, "newString": DRAFT_2}),
            ToolCall("bash", {"command": f"printf '{SHELL_TEXT.strip()}\\n' > {SHELL_FILE}",
                              "description": "leave a note"}),
            Text("The plan is written."),
        ],
        PROMPT_2: [
            ToolCall("edit", {"filePath": plan, "oldString": DRAFT_2, "newString": DRAFT_3}),
            Text("Polished."),
        ],
        CONTINUE: [Text("Carrying on.")],
        AGAIN: [Text("Once more.")],
    }


def kilo_env(work: Workdir, model: MockModel, binary: Path) -> dict[str, str]:
    """Scratch HOME whose global Kilo config has the mock as its only model; Kilo kept offline.

    PATH has Kilo (for the rewind's `kilo serve`) and git-rewind: a project's plugin names no path of this
    machine and runs the git-rewind on PATH, as on a teammate's machine with it installed.
    """
    home = Path(work.env["HOME"])
    config = home / ".config" / "kilo"
    config.mkdir(parents=True, exist_ok=True)
    (config / "kilo.json").write_text(json.dumps({
        "$schema": "https://app.kilo.ai/config.json",
        "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                              "options": {"baseURL": f"{model.url}/v1", "apiKey": "test-key"},
                              "models": {"mock-model": {"name": "Mock Model", "tool_call": True}}}},
        "model": "mock/mock-model", "small_model": "mock/mock-model", "autoupdate": False, "share": "disabled",
        "permission": {"edit": "allow", "bash": "allow", "external_directory": "allow"}}))
    env = dict(work.env)
    env.update(
        PATH=os.pathsep.join([str(binary.parent), agentcli.rewind_bin_dir(), "/usr/bin", "/bin"]),
        XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".local" / "state"),
        KILO_DISABLE_MODELS_FETCH="1", KILO_DISABLE_AUTOUPDATE="1", KILO_DISABLE_SESSION_INGEST="1",
        KILO_DISABLE_LSP_DOWNLOAD="1", KILO_TELEMETRY_LEVEL="off",
        npm_config_cache=str(agentcli.cache_dir() / "kilo-npm-cache"),
        GIT_REWIND_ANTI_SPAM_SECONDS="0",
        PWD=str(work.path),  # as OpenCode, Kilo takes its project directory from PWD
    )
    return env


def run(binary: Path, work: Workdir, env: dict[str, str], prompt: str, session: str | None = None,
        timeout: float = agentcli.RUN_TIMEOUT) -> str:
    """`kilo run --format json [-s SESSION] PROMPT` (word by word); returns the session id it reported."""
    command = [str(binary), "run", "--format", "json", *(["-s", session] if session else []), *prompt.split()]
    proc = agentcli.run(command, work.path, env, timeout=timeout)
    assert proc.returncode == 0, f"kilo run exited {proc.returncode}: {proc.stderr[-2000:]}{proc.stdout[-2000:]}"
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    ids = {e.get("sessionID") for e in events if e.get("sessionID")}
    assert len(ids) == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert not any(e.get("type") == "error" for e in events), proc.stdout[-2000:]
    return str(ids.pop())


def sent(model: MockModel, prompt: str) -> str:
    """The conversation of the first main request made for PROMPT, as JSON text."""
    requests = model.main_requests(prompt)
    assert requests, f"no model request for {prompt!r}"
    return json.dumps(requests[0].body["messages"])


def rewind(work: Workdir, env: dict[str, str], *args: str) -> str:
    result = work.rewind(*args, env=env)
    assert result.returncode == 0, f"git rewind {' '.join(args)}: {result.stderr}{result.stdout}"
    return result.stdout


def new_session(output: str) -> str:
    line = next(x for x in output.splitlines() if x.startswith("resume with: kilo -s "))
    return line.rsplit(" ", 1)[1]


def test_plugin_checkpoints_a_kilo_session_and_undo_full_forks_it_through_kilos_server(
        kilo: Path, agent_project: Workdir) -> None:
    """Two prompts with write, edit and bash; then `undo <first prompt> --full`: its files, and a forked session
    that sends neither prompt; `undo <edit> --conversation`: a fork that stops just before the edit call;
    `undo <turn end> --code`; redo."""
    work = agent_project
    plugin = agentcli.install_hooks(work, "kilo", "project", work.env)
    text = plugin.read_text()
    assert 'const PROGRAM: string[] = ["git-rewind"]' in text and 'const AGENT = "kilo"' in text  # from PATH
    user = work.user_state()
    turns = script(str(work.path / PLAN))
    with MockModel(turns) as model:
        env = kilo_env(work, model, kilo)
        session = run(kilo, work, env, PROMPT_1, timeout=FIRST_RUN_TIMEOUT)
        assert session.startswith("ses_")
        assert run(kilo, work, env, PROMPT_2, session=session) == session
        assert model.played(PROMPT_1) == turns[PROMPT_1] and model.played(PROMPT_2) == turns[PROMPT_2]
        calls = {prompt: model.tool_use_ids(prompt) for prompt in (PROMPT_1, PROMPT_2)}
        results = model.tool_results(PROMPT_2)
        assert set(calls[PROMPT_1].values()) <= set(results), results  # prompt 2 carried prompt 1's tool calls
        assert (work.path / PLAN).read_text() == "# Plan\n" + DRAFT_3
        assert (work.path / SHELL_FILE).read_text() == SHELL_TEXT
        assert agentcli.hook_errors(work) == ""

        log = agentcli.hook_log(work, session)
        # Prompt 2's edit comes within a minute of prompt 1's two (a batch: skipped) only when Kilo is quick; on
        # a loaded machine it is later, and then its checkpoint would equal the prompt's (unchanged). Either way
        # no checkpoint.
        assert log[7]["action"] in ("skip", "unchanged") and log[7].get("seq", log[6]["seq"]) == log[6]["seq"], log[7]
        assert decisions(log[:7] + log[8:]) == [
            ("session.created", None, "checkpoint"),
            ("chat.message", None, "checkpoint"),
            ("tool.execute.before", "write", "unchanged"),  # a new file: the tree equals the prompt's checkpoint
            ("tool.execute.before", "edit", "checkpoint"),
            ("tool.execute.after", "bash", "skip"),
            ("session.idle", None, "checkpoint"),  # the turn end: files changed
            ("chat.message", None, "checkpoint"),
            ("session.idle", None, "checkpoint"),
        ], json.dumps(log, indent=1)
        assert log[7]["event"] == "tool.execute.before" and log[7]["tool"] == "edit", log[7]
        assert agentcli.hook_log(work) == log  # no other session: loading the plugin sent nothing
        assert all(e["paths"] == [PLAN] for e in log if e["event"] == "tool.execute.before"), log
        found = agentcli.checkpoints(work, session)
        assert [c.trigger for c in found] == ["session.created", "chat.message", "tool.execute.before",
                                              "session.idle", "chat.message", "session.idle"]
        agentcli.check_chain(work, found)
        start, prompt_1, edit, idle_1, prompt_2, idle_2 = found
        assert all(c.note["agent"] == "kilo" for c in found)
        assert idle_1.note["origins"] == {PLAN: "agent", SHELL_FILE: "agent"}, idle_1.note
        assert idle_2.note["origins"] == {PLAN: "agent"}, idle_2.note
        assert idle_1.note["turn"]["seq"] == prompt_1.seq and idle_2.note["turn"]["seq"] == prompt_2.seq
        assert prompt_1.note["prompt"] == PROMPT_1 and prompt_2.note["prompt"] == PROMPT_2  # no quotes added
        assert prompt_1.note["conversation"]["prompt_id"].startswith("msg_")
        assert edit.note["conversation"]["tool_use_id"] == calls[PROMPT_1][1]
        assert (edit.note["tool"], edit.note["paths"]) == ("edit", [PLAN])
        assert blob(work, prompt_1.commit, PLAN) is None
        assert blob(work, edit.commit, PLAN) == PLAN_V1 and blob(work, edit.commit, SHELL_FILE) is None
        assert blob(work, prompt_2.commit, PLAN) == PLAN_V2 and blob(work, prompt_2.commit, SHELL_FILE) == SHELL_TEXT
        assert blob(work, start.commit, ".kilo/plugin/git-rewind.ts") == text

        # undo --full to the first prompt: the files of that moment, and a new session with nothing of either prompt.
        ignored = agentcli.ignored_files(work)  # Kilo's own .kilo/node_modules among them, left alone
        output = rewind(work, env, "undo", str(prompt_1.seq), "--full", "--yes")
        assert "is unchanged" in output and PROMPT_1 in output and "new Kilo session" in output, output
        agentcli.assert_tree_on_disk(work, prompt_1.commit, ignored, "after undo --full")
        forked = new_session(output)
        assert forked != session and forked.startswith("ses_")
        safety = agentcli.checkpoints(work, session)[-1]
        assert safety.trigger == "pre-rewind"
        kept = json.loads(work.git("show", f"{safety.commit}^2:kilo-{session}.json"))
        assert [m["info"]["id"] for m in kept["messages"]][0] == prompt_1.note["conversation"]["prompt_id"]
        assert PROMPT_2 in json.dumps(kept)  # the whole conversation is in git
        assert run(kilo, work, env, CONTINUE, session=forked) == forked
        conversation = sent(model, CONTINUE)
        for gone in (PROMPT_1, PROMPT_2, *calls[PROMPT_1].values(), *calls[PROMPT_2].values()):
            assert gone not in conversation, gone

        # undo --conversation to the edit: the fork keeps prompt 1 and its write, not the edit; the files stay.
        before = agentcli.disk_files(work.path)
        output = rewind(work, env, "undo", str(edit.seq), "--conversation", "--yes")
        assert "just before the edit call" in output, output
        assert agentcli.disk_files(work.path) == before
        at_edit = new_session(output)
        assert run(kilo, work, env, AGAIN, session=at_edit) == at_edit
        conversation = sent(model, AGAIN)
        assert PROMPT_1 in conversation and calls[PROMPT_1][0] in conversation
        for gone in (PROMPT_2, calls[PROMPT_1][1], calls[PROMPT_1][2], *calls[PROMPT_2].values()):
            assert gone not in conversation, gone

        # redo: Kilo's sessions were never changed, so it names the original one.
        output = rewind(work, env, "redo", "--yes")
        assert f"resume with: kilo -s {session}" in output, output

        # undo --code to the second turn's end: the files only, back to the end of prompt 2.
        output = rewind(work, env, "undo", str(idle_2.seq), "--code", "--yes")
        agentcli.assert_tree_on_disk(work, idle_2.commit, agentcli.ignored_files(work), "after undo --code")
        assert f"resume with: kilo -s {session}" in output, output
    assert agentcli.hook_errors(work) == ""
    assert work.user_state()[1:3] == user[1:3]  # HEAD and branches as before
    work.fsck()
