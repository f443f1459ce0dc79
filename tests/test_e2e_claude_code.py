"""End to end with the real Claude Code CLI: its hooks, installed by `git rewind install`, checkpoint a session.

Claude Code runs in print mode against the scripted mock model (tests/helpers/mockmodel.py) on 127.0.0.1,
with a scratch HOME, so the real CLI runs real tools and fires real hooks. The request log of the
mock is the ground truth of what the model saw; the checkpoints are read back with plain git.
"""

from __future__ import annotations

import json
from pathlib import Path

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
from helpers.mockmodel import FromResults, MockModel, Text, ToolCall, Turn
from helpers.workdir import Workdir

pytestmark = e2e


@pytest.fixture(scope="module")
def claude() -> Path:
    return agentcli.claude_code()


def claude_env(work: Workdir, model: MockModel, **extra: str) -> dict[str, str]:
    """The environment of one Claude Code run: scratch HOME, the mock as the API, no telemetry or updates."""
    return agentcli.agent_env(
        work.env,
        ANTHROPIC_BASE_URL=model.url,
        ANTHROPIC_API_KEY="test-key",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        IS_SANDBOX="1",  # bypassPermissions is refused to root without it
        **extra,
    )


def run_claude(claude: Path, work: Workdir, env: dict[str, str], prompt: str,
               resume: str | None = None) -> tuple[str, str]:
    """`claude -p PROMPT` (resuming RESUME) in the work tree; returns (session id, final text)."""
    command = [str(claude), "-p", prompt, "--permission-mode", "bypassPermissions",
               "--output-format", "stream-json", "--verbose"]
    if resume:
        command += ["--resume", resume]
    proc = agentcli.run(command, work.path, env)
    assert proc.returncode == 0, f"claude exited {proc.returncode}: {proc.stderr[-2000:]}{proc.stdout[-2000:]}"
    messages = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    result = messages[-1]
    assert result.get("type") == "result" and not result.get("is_error"), result
    return str(result["session_id"]), str(result.get("result"))


def test_two_prompts_checkpoint_at_start_prompt_and_edit_and_undo_restores(
        claude: Path, agent_project: Workdir) -> None:
    """Prompt 1 writes a file, rewrites it and makes another from the shell; prompt 2 (--resume) edits it twice.

    Balanced tier with no anti-spam interval: checkpoints at the first session start, both prompts, before
    the big edit and at both turn ends; the Write of a new file and the resumed session's start find
    nothing changed; the resumed session's first edit is the third in a minute (batch), its second is small.
    """
    work = agent_project
    settings = agentcli.install_hooks(work, "claude-code", "project", work.env)
    work.user_state()  # git status may refresh a racily clean index once: the second call is the reference
    user = work.user_state()
    assert settings == work.path / ".claude" / "settings.json"
    ignored = agentcli.ignored_files(work)
    plan = str(work.path / PLAN)
    script: dict[str, list[Turn]] = {
        PROMPT_1: [
            ToolCall("Write", {"file_path": plan, "content": PLAN_V1}),
            ToolCall("Edit", {"file_path": plan, "old_string": DRAFT_1, "new_string": DRAFT_2}),
            ToolCall("Bash", {"command": f"printf '{SHELL_TEXT.strip()}\\n' > {SHELL_FILE}",
                              "description": "leave a note"}),
            Text("The plan is written."),
        ],
        PROMPT_2: [
            ToolCall("Edit", {"file_path": plan, "old_string": DRAFT_2, "new_string": DRAFT_3}),  # 3rd edit: batch
            ToolCall("Edit", {"file_path": plan, "old_string": "third draft", "new_string": "final draft"}),  # small
            Text("Polished."),
        ],
    }
    with MockModel(script) as model:
        # No anti-spam interval: every edit that is not small or batched gets its checkpoint.
        env = claude_env(work, model, GIT_REWIND_ANTI_SPAM_SECONDS="0")
        session, text = run_claude(claude, work, env, PROMPT_1)
        assert text == "The plan is written."
        resumed, text = run_claude(claude, work, env, PROMPT_2, resume=session)
        assert (resumed, text) == (session, "Polished.")

    # The tools really ran: every scripted turn was played and every tool result came back clean.
    assert model.played(PROMPT_1) == script[PROMPT_1] and model.played(PROMPT_2) == script[PROMPT_2]
    ids_1, ids_2 = model.tool_use_ids(PROMPT_1), model.tool_use_ids(PROMPT_2)
    results = model.tool_results()
    for call_id in [*ids_1.values(), *ids_2.values()]:
        assert call_id in results and results[call_id]["is_error"] is False, (call_id, results.get(call_id))
    assert set(ids_1.values()) <= set(model.tool_results(PROMPT_2))  # the resumed conversation was sent
    assert (work.path / PLAN).read_text() == PLAN_FINAL
    assert (work.path / SHELL_FILE).read_text() == SHELL_TEXT
    assert agentcli.hook_errors(work) == ""

    # What the hook decided, call by call, and the checkpoints it made, read with plain git.
    found = agentcli.check_two_prompt_session(work, session, "claude-code", "Write", "Bash")
    start, prompt_1, edit, stop_1, prompt_2, _stop_2 = found
    assert edit.note["conversation"]["tool_use_id"] == ids_1[1]  # the Edit's own tool call, as the mock issued it
    transcript = Path(prompt_1.note["conversation"]["transcript"])
    assert transcript.name == f"{session}.jsonl" and transcript.is_file()
    assert transcript.is_relative_to(Path(work.env["HOME"]) / ".claude" / "projects")
    # A prompt's id is the promptId of the prompt's own user line in the transcript.
    lines = [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]
    prompts = {line["promptId"]: line["message"]["content"] for line in lines
               if line.get("type") == "user" and line.get("promptId") and isinstance(line["message"]["content"], str)}
    assert prompts.get(prompt_1.note["conversation"]["prompt_id"]) == PROMPT_1, prompts
    assert prompts.get(prompt_2.note["conversation"]["prompt_id"]) == PROMPT_2, prompts

    # The trees: before the Write nothing; before the Edit the first draft; the shell's file from
    # the turn end on (a Bash call is not checkpointed in the balanced tier).
    assert blob(work, prompt_1.commit, PLAN) is None and blob(work, prompt_1.commit, SHELL_FILE) is None
    assert blob(work, prompt_1.commit, ".claude/settings.json") == settings.read_text()
    assert blob(work, edit.commit, PLAN) == PLAN_V1 and blob(work, edit.commit, SHELL_FILE) is None
    assert blob(work, prompt_2.commit, PLAN) == PLAN_V2 and blob(work, prompt_2.commit, SHELL_FILE) == SHELL_TEXT
    assert blob(work, stop_1.commit, PLAN) == PLAN_V2 and blob(work, stop_1.commit, SHELL_FILE) == SHELL_TEXT
    assert work.tree_of(prompt_2.commit) == work.tree_of(stop_1.commit)  # a prompt checkpoints even unchanged
    assert work.tree_of(start.commit) == work.tree_of(prompt_1.commit)
    for c in found:
        assert ".env" not in agentcli.tree_files(work, c.commit)  # ignored files are never captured

    # Undo to the first prompt: the working tree is exactly that checkpoint's tree again.
    agentcli.assert_undo_restores(work, prompt_1, ignored)
    assert work.user_state() == user  # index, HEAD, branches and `git status` as before the session
    work.fsck()


@pytest.mark.parametrize("scope", ["user", "local"])
def test_anti_spam_by_default(claude: Path, agent_project: Workdir, scope: str) -> None:
    """With the defaults (balanced, 30 s anti-spam), a second big edit right after one is not checkpointed.

    Hooks installed in the user's settings, then in .claude/settings.local.json: both are honoured in -p mode.
    """
    work = agent_project
    agentcli.install_hooks(work, "claude-code", scope, work.env)
    target = str(work.path / "src" / "big.py")
    first = "".join(f"print('line {i} of the first version')\n" for i in range(4))
    second = "".join(f"print('line {i} of the second version!')\n" for i in range(4))
    third = "".join(f"value_{i} = 'third version of this line'\n" for i in range(4))
    prompt = "P-SPAM: write big.py and rewrite it twice"
    script: dict[str, list[Turn]] = {prompt: [
        ToolCall("Write", {"file_path": target, "content": first}),
        ToolCall("Edit", {"file_path": target, "old_string": first, "new_string": second}),
        ToolCall("Edit", {"file_path": target, "old_string": second, "new_string": third}),
        Text("done"),
    ]}
    with MockModel(script) as model:
        session, _ = run_claude(claude, work, claude_env(work, model), prompt)
    assert model.played(prompt) == script[prompt]
    assert (work.path / "src" / "big.py").read_text() == third
    log = agentcli.hook_log(work, session)
    assert decisions(log) == [
        ("SessionStart", None, "checkpoint"),
        ("UserPromptSubmit", None, "checkpoint"),
        ("PreToolUse", "Write", "unchanged"),
        ("PreToolUse", "Edit", "checkpoint"),
        ("PreToolUse", "Edit", "skip"),
        ("Stop", None, "checkpoint"),  # the turn end: what the skipped edit left is checkpointed
        ("SessionEnd", None, "skip"),  # reason "other": only /clear is checkpointed
    ], json.dumps(log, indent=1)
    assert "anti-spam" in log[4]["reason"], log[4]
    found = agentcli.checkpoints(work, session)
    assert [(c.trigger, c.note["tool"]) for c in found] == [("SessionStart", None), ("UserPromptSubmit", None),
                                                            ("PreToolUse", "Edit"), ("Stop", None)]
    assert blob(work, found[2].commit, "src/big.py") == first
    assert blob(work, found[3].commit, "src/big.py") == third and found[3].note["origins"] == {"src/big.py": "agent"}
    assert agentcli.hook_errors(work) == ""


CONTINUE = "P3-CONTINUE: carry on from here"
AGAIN = "P4-AGAIN: and once more"


def sent_text(model: MockModel, prompt: str) -> str:
    """Everything the CLI sent the model in the first request for PROMPT, as one JSON text."""
    requests = model.main_requests(prompt)
    assert requests, f"no request for {prompt!r}"
    return json.dumps(requests[0].body["messages"])


def test_undo_full_rewinds_code_and_conversation_and_redo_brings_both_back(
        claude: Path, agent_project: Workdir) -> None:
    """Two prompts; `undo <first prompt> --full`; the resumed session sends nothing of them; redo; all of it again.

    Also a conversation-only rewind to the first prompt's Edit: the resumed conversation ends just
    before that Edit call, and the files are left as they were.
    """
    work = agent_project
    agentcli.install_hooks(work, "claude-code", "project", work.env)
    ignored = agentcli.ignored_files(work)
    plan = str(work.path / PLAN)
    script: dict[str, list[Turn]] = {
        PROMPT_1: [
            ToolCall("Write", {"file_path": plan, "content": PLAN_V1}),
            ToolCall("Edit", {"file_path": plan, "old_string": DRAFT_1, "new_string": DRAFT_2}),
            ToolCall("Bash", {"command": f"printf '{SHELL_TEXT.strip()}\\n' > {SHELL_FILE}",
                              "description": "leave a note"}),
            Text("The plan is written."),
        ],
        PROMPT_2: [
            ToolCall("Edit", {"file_path": plan, "old_string": DRAFT_2, "new_string": DRAFT_3}),
            Text("Polished."),
        ],
        CONTINUE: [Text("Carrying on.")],
        AGAIN: [Text("Once more.")],
    }
    with MockModel(script) as model:
        env = claude_env(work, model, GIT_REWIND_ANTI_SPAM_SECONDS="0")
        session, _ = run_claude(claude, work, env, PROMPT_1)
        run_claude(claude, work, env, PROMPT_2, resume=session)
        ids = model.tool_use_ids(PROMPT_1)
        found = agentcli.checkpoints(work, session)
        prompt_1 = next(c for c in found if c.trigger == "UserPromptSubmit" and c.note["prompt"] == PROMPT_1)
        edit = next(c for c in found if c.trigger == "PreToolUse" and c.note["tool"] == "Edit")
        transcript = Path(prompt_1.note["conversation"]["transcript"])
        finished = agentcli.disk_files(work.path)

        # Conversation only, to just before the first Edit: the files stay, the resumed chat ends before it.
        before = transcript.read_bytes()
        run = work.rewind("undo", str(edit.seq), "--conversation", "--yes", env=env)
        assert run.returncode == 0, run.stderr
        assert f"resume with: claude --resume {session}" in run.stdout, run.stdout
        assert transcript.read_bytes().startswith(before)  # appended to, nothing rewritten
        assert agentcli.disk_files(work.path) == finished
        run_claude(claude, work, env, CONTINUE, resume=session)
        sent = sent_text(model, CONTINUE)
        assert PROMPT_1 in sent and ids[0] in sent  # the prompt and its Write
        assert ids[1] not in sent and ids[2] not in sent and PROMPT_2 not in sent  # not the Edit, nor later

        # Both, to the first prompt: the files of that moment, a conversation that ends before it.
        run = work.rewind("undo", str(prompt_1.seq), "--full", "--yes", env=env)
        assert run.returncode == 0, run.stderr
        assert f"resume with: claude --resume {session}" in run.stdout and PROMPT_1 in run.stdout, run.stdout
        agentcli.assert_tree_on_disk(work, prompt_1.commit, ignored, "after undo --full")
        safety = agentcli.checkpoints(work, session)[-1]
        assert safety.trigger == "pre-rewind" and safety.note["rewind"]["mode"] == "full"
        # The whole transcript as it was is in git, as the safety checkpoint's second parent.
        backup = work.git("show", f"{safety.commit}^2:{transcript.name}")
        assert backup.encode() == transcript.read_bytes()[:len(backup.encode())] and CONTINUE in backup
        # The prompt's message, resolved now, is recorded in its note.
        note = json.loads(work.git("notes", "--ref=rewind", "show", prompt_1.commit))
        uuids = {json.loads(line).get("uuid"): json.loads(line) for line in backup.splitlines() if line.strip()}
        assert uuids[note["conversation"]["message_uuid"]]["message"]["content"] == PROMPT_1
        run_claude(claude, work, env, AGAIN, resume=session)
        sent = sent_text(model, AGAIN)
        for gone in (PROMPT_1, PROMPT_2, CONTINUE, *ids.values()):
            assert gone not in sent, gone

        # Redo: the files as they were before the last undo, its conversation back (AGAIN stays a branch).
        run = work.rewind("redo", "--yes", env=env)
        assert run.returncode == 0, run.stderr
        assert f"resume with: claude --resume {session}" in run.stdout, run.stdout
        assert agentcli.disk_files(work.path) == finished
        model.script["P5-FINAL: done?"] = [Text("Done.")]
        run_claude(claude, work, env, "P5-FINAL: done?", resume=session)
        sent = sent_text(model, "P5-FINAL: done?")
        # Back to the conversation as it stood before the --full undo: the first rewind's cut still holds.
        for back in (PROMPT_1, ids[0], CONTINUE):
            assert back in sent, back
        for gone in (AGAIN, ids[1], PROMPT_2):
            assert gone not in sent, gone
    assert agentcli.hook_errors(work) == ""
    work.fsck()


MCP_PROMPT = "P-MCP: checkpoint, change things, then rewind them through the MCP tools"


def test_mcp_tools_called_by_the_real_claude_code(claude: Path, agent_project: Workdir) -> None:
    """`git rewind install --mcp` puts the server in .mcp.json; the model checkpoints, writes, rewinds.

    The tool results come back in the next request, and the files on disk are the checkpoint's again.
    """
    work = agent_project
    run = work.rewind("install", "--agent", "claude-code", "--scope", "project", "--mcp",
                      env=agentcli.agent_env(work.env))
    assert run.returncode == 0, run.stderr
    servers = json.loads((work.path / ".mcp.json").read_text())["mcpServers"]
    assert servers["git-rewind"]["args"][-1] == "mcp"
    work.commit_all("the MCP configuration")  # so the checkpoint and the rewind are about the files below
    readme = work.path / "README.md"
    script: dict[str, list[Turn]] = {MCP_PROMPT: [
        ToolCall("mcp__git-rewind__checkpoint_create", {"description": "before the rewrite", "tags": ["e2e"]}),
        ToolCall("Write", {"file_path": str(work.path / PLAN), "content": PLAN_V1}),
        ToolCall("Bash", {"command": f"printf '# rewritten demo\\n' > {readme}", "description": "rewrite"}),
        ToolCall("mcp__git-rewind__checkpoint_rewind_code", {"checkpoint_id": "1", "preview": True}),
        # Two phases: the restore hands back the token the preview's result gave the model.
        ToolCall("mcp__git-rewind__checkpoint_rewind_code", {"checkpoint_id": "1",
                                                             "token": FromResults(r"(rw1\.[\w-]+\.[\w-]+)")}),
        Text("Rewound."),
    ]}
    before = agentcli.disk_files(work.path)
    with MockModel(script) as model:
        # Claude Code connects MCP servers in the background by default, and the mock model answers at once:
        # the first call could come before our server's tools are listed (its WaitForMcpServers tool exists
        # only while one is pending). MCP_CONNECTION_NONBLOCKING=false makes it connect them first, but for
        # MCP_CONNECT_TIMEOUT_MS only (5 s by default), then it goes on without them: our server answers
        # `initialize` in ~0.9 s on an idle machine (mostly the MCP SDK's import) and took up to 15 s on this
        # shared one under load, so the wait is bounded by the run's own timeout instead.
        wait = str(agentcli.RUN_TIMEOUT * 1000)
        env = {**claude_env(work, model), "MCP_CONNECTION_NONBLOCKING": "false", "MCP_CONNECT_TIMEOUT_MS": wait,
               "MCP_TIMEOUT": wait}
        run_claude(claude, work, env, MCP_PROMPT)
    assert model.played(MCP_PROMPT) == script[MCP_PROMPT]
    ids = model.tool_use_ids(MCP_PROMPT)
    results = model.tool_results(MCP_PROMPT)
    created, previewed, rewound = results[ids[0]], results[ids[3]], results[ids[4]]
    # Claude Code gives the model the structured content: the token, and its text saying how to use it.
    assert "token: rw1." in json.loads(previewed["content"])["text"], previewed
    assert created["is_error"] is False and '"seq":1' in created["content"].replace(" ", ""), created
    assert "before the rewrite" in created["content"]
    assert rewound["is_error"] is False and PLAN in rewound["content"] and "README.md" in rewound["content"], rewound
    # The tool results reached the model: the request after each call carries it.
    last = model.main_requests(MCP_PROMPT)[-1].body
    assert ids[4] in json.dumps(last["messages"])
    assert all(r["is_error"] is False for r in results.values()), results
    assert agentcli.disk_files(work.path) == before  # the Write and the shell's rewrite are undone
    notes = [json.loads(work.git("notes", "--ref=rewind", "show", line.split()[1]))
             for line in work.git("notes", "--ref=rewind", "list").splitlines()]
    assert {(n["seq"], n["session"], n["trigger"]) for n in notes} == {
        (1, "mcp-claude-code", "mcp"), (2, "mcp-claude-code", "pre-rewind")}
    work.fsck()


AGENT_1 = "P-AGENT-1: make the greeting louder and add a helper"
AGENT_2 = "P-AGENT-2: make the farewell warmer"
APP = "src/app.py"
HELPER = "src/helper.py"
PERSON_NOTE = "notes/person.md"
APP_V0 = ('"""The demo app."""\n\n\n'
          'def greet(name):\n    return f"hello, {name}"\n\n\n'
          'def farewell(name):\n    return f"goodbye, {name}"\n\n\n'
          'def shout(text):\n    return text.upper()\n\n\n'
          'def main():\n    print(greet("world"))\n    print(farewell("world"))\n\n\n'
          'if __name__ == "__main__":\n    main()\n')
GREET_0 = '    return f"hello, {name}"\n'
GREET_1 = '    return f"hello, {name}! Welcome to the demo, glad to see you."\n'
FAREWELL_0 = '    return f"goodbye, {name}"\n'
FAREWELL_2 = '    return f"goodbye, {name}, and thank you for trying the demo today."\n'
MAIN_0, MAIN_PERSON = "    main()\n", "    main()  # run by hand, see notes/person.md\n"
HELPER_TEXT = '"""Helpers the agent added."""\n\n\ndef exclaim(text):\n    return text + "!"\n'
PERSON_TEXT = "# What I changed by hand\n\n- a comment on the entry point\n"


def test_undo_agent_only_keeps_the_persons_edit_between_turns_and_revert_takes_back_one_turn(
        claude: Path, agent_project: Workdir) -> None:
    """Turn 1 edits app.py and writes helper.py; the person edits another line of app.py and writes a note;
    turn 2 (--resume) edits a third line. `undo <prompt 1> --agent-only` leaves only the person's work,
    `redo` brings the agent's back byte for byte, `revert <prompt 2>` takes back turn 2 alone.
    """
    work = agent_project
    work.write(APP, APP_V0)
    work.commit_all("the demo app")
    agentcli.install_hooks(work, "claude-code", "project", work.env)
    work.user_state()  # git status may refresh a racily clean index once: the second call is the reference
    user = work.user_state()[:3]  # index bytes, HEAD, branches and stash (status changes with the files)
    ignored = agentcli.ignored_files(work)
    app = work.path / APP
    script: dict[str, list[Turn]] = {
        AGENT_1: [
            ToolCall("Read", {"file_path": str(app)}),
            ToolCall("Edit", {"file_path": str(app), "old_string": GREET_0, "new_string": GREET_1}),
            ToolCall("Write", {"file_path": str(work.path / HELPER), "content": HELPER_TEXT}),
            Text("Louder, with a helper."),
        ],
        AGENT_2: [
            ToolCall("Read", {"file_path": str(app)}),
            ToolCall("Edit", {"file_path": str(app), "old_string": FAREWELL_0, "new_string": FAREWELL_2}),
            Text("Warmer."),
        ],
    }
    with MockModel(script) as model:
        env = claude_env(work, model, GIT_REWIND_ANTI_SPAM_SECONDS="0")
        session, text = run_claude(claude, work, env, AGENT_1)
        assert text == "Louder, with a helper."
        after_turn_1 = app.read_text()
        assert after_turn_1 == APP_V0.replace(GREET_0, GREET_1)
        # Between the turns, as a person would: another line of app.py in an editor, and a new note.
        app.write_text(after_turn_1.replace(MAIN_0, MAIN_PERSON))
        work.write(PERSON_NOTE, PERSON_TEXT)
        resumed, text = run_claude(claude, work, env, AGENT_2, resume=session)
        assert (resumed, text) == (session, "Warmer.")
    assert model.played(AGENT_1) == script[AGENT_1] and model.played(AGENT_2) == script[AGENT_2]
    results = model.tool_results()
    for call_id in [*model.tool_use_ids(AGENT_1).values(), *model.tool_use_ids(AGENT_2).values()]:
        assert results[call_id]["is_error"] is False, results[call_id]
    finished_app = APP_V0.replace(GREET_0, GREET_1).replace(FAREWELL_0, FAREWELL_2).replace(MAIN_0, MAIN_PERSON)
    assert app.read_text() == finished_app
    assert agentcli.hook_errors(work) == ""
    finished = agentcli.disk_files(work.path)

    # The notes: each turn end took a checkpoint holding its agent's changes, with the turn that made them;
    # the person's edits were recorded as outside by the first checkpoint after them (prompt 2's, or as
    # here the resumed session's start).
    found = agentcli.checkpoints(work, session)
    by_trigger = [(c.trigger, c.note.get("prompt")) for c in found]
    prompt_1 = next(c for c in found if c.trigger == "UserPromptSubmit" and c.note["prompt"] == AGENT_1)
    prompt_2 = next(c for c in found if c.trigger == "UserPromptSubmit" and c.note["prompt"] == AGENT_2)
    stops = [c for c in found if c.trigger == "Stop"]
    assert len(stops) == 2, by_trigger
    stop_1, stop_2 = stops
    assert prompt_1.seq < stop_1.seq < prompt_2.seq < stop_2.seq, by_trigger
    assert stop_1.note["origins"] == {APP: "agent", HELPER: "agent"}, stop_1.note
    assert stop_2.note["origins"] == {APP: "agent"}, stop_2.note
    for stop, prompt, tools in ((stop_1, prompt_1, {APP: "Edit", HELPER: "Write"}), (stop_2, prompt_2, {APP: "Edit"})):
        turn = stop.note["turn"]
        assert (turn["session"], turn["agent"], turn["prompt"], turn["seq"]) == (
            session, "claude-code", prompt.note["prompt"], prompt.seq), turn
        assert turn["tools"] == tools, turn
    between = [c for c in found if stop_1.seq < c.seq <= prompt_2.seq and c.note.get("origins")]
    assert [c.note["origins"] for c in between] == [{APP: "outside", PERSON_NOTE: "outside"}], [
        (c.seq, c.trigger, c.note.get("origins")) for c in found]
    # Claude Code's resumed session starts with a SessionStart: its checkpoint is the first after the edits.
    assert between[0].trigger == "SessionStart" and between[0].note.get("turn") is None, between[0].note
    assert prompt_2.note["origins"] == {}, prompt_2.note  # nothing changed between the session start and prompt
    assert blob(work, stop_1.commit, APP) == APP_V0.replace(GREET_0, GREET_1)
    assert blob(work, between[0].commit, PERSON_NOTE) == PERSON_TEXT

    # Agent-only undo to the first prompt, previewed: app.py is merged (the person's line is kept), nothing else.
    preview = work.rewind("undo", str(prompt_1.seq), "--agent-only", "--dry-run")
    assert preview.returncode == 0, preview.stderr
    assert f"merge   {APP}" in preview.stdout and HELPER in preview.stdout, preview.stdout
    assert PERSON_NOTE not in preview.stdout, preview.stdout
    assert agentcli.disk_files(work.path) == finished  # a dry run writes nothing

    run = work.rewind("undo", str(prompt_1.seq), "--agent-only", "--yes")
    assert run.returncode == 0, run.stderr + run.stdout
    assert app.read_text() == APP_V0.replace(MAIN_0, MAIN_PERSON)  # both turns' lines back, the person's kept
    assert not (work.path / HELPER).exists()  # the file the agent created is gone
    assert (work.path / PERSON_NOTE).read_bytes() == PERSON_TEXT.encode()
    now = agentcli.disk_files(work.path)
    unchanged = {p: v for p, v in finished.items() if p not in (APP, HELPER)}
    assert {p: v for p, v in now.items() if p != APP} == unchanged  # every other file byte for byte
    assert agentcli.ignored_files(work) == ignored
    assert work.user_state()[:3] == user

    # Redo: the agent's version exactly as it was.
    run = work.rewind("redo", "--yes")
    assert run.returncode == 0, run.stderr + run.stdout
    assert agentcli.disk_files(work.path) == finished
    assert work.user_state()[:3] == user

    # Revert the second turn alone: its line goes back; turn 1's lines, its file and the person's work stay.
    run = work.rewind("revert", str(prompt_2.seq), "--yes")
    assert run.returncode == 0, run.stderr + run.stdout
    assert app.read_text() == APP_V0.replace(GREET_0, GREET_1).replace(MAIN_0, MAIN_PERSON)
    assert (work.path / HELPER).read_text() == HELPER_TEXT
    assert (work.path / PERSON_NOTE).read_text() == PERSON_TEXT
    now = agentcli.disk_files(work.path)
    assert {p: v for p, v in now.items() if p != APP} == {p: v for p, v in finished.items() if p != APP}
    assert agentcli.ignored_files(work) == ignored
    assert work.user_state()[:3] == user
    assert agentcli.hook_errors(work) == ""
    work.fsck()


SHELL_PROMPT = "P-SHELL: fix both notes with sed, and look at them in between"
SED_ONE = "sed -i 's/first line/FIRST LINE/' notes/one.txt"
LOOK = "ls notes && cat notes/one.txt"
SED_TWO = "sed -i 's/second line/SECOND LINE/' notes/two.txt"


@pytest.mark.parametrize("with_daemon", [True, False], ids=["daemon", "no-daemon"])
def test_with_the_daemon_each_file_changing_shell_command_is_its_own_step_and_undo_takes_back_one(
        claude: Path, agent_project: Workdir, daemons: list[Workdir], with_daemon: bool) -> None:
    """One turn, three Bash calls: two `sed -i` on two files and an `ls`/`cat` that changes nothing.

    Balanced tier. With the file-watcher daemon: one checkpoint after each `sed` (named by its command line) and
    none after the `ls`, skipped on the daemon's word; `undo` to the first `sed`'s checkpoint takes back exactly
    the second (byte-exact), the first's change stays. Without the daemon: no checkpoint after any command.
    """
    work = agent_project
    agentcli.install_hooks(work, "claude-code", "project", work.env)
    work.write("notes/one.txt", "first line\nkept as it is\n")
    work.write("notes/two.txt", "second line\nkept as well\n")
    ignored = agentcli.ignored_files(work)
    if with_daemon:
        daemons.append(work)
        work.ok("daemon", "start")
    script: dict[str, list[Turn]] = {SHELL_PROMPT: [
        ToolCall("Bash", {"command": SED_ONE, "description": "fix the first note"}),
        ToolCall("Bash", {"command": LOOK, "description": "look at the notes"}),
        ToolCall("Bash", {"command": SED_TWO, "description": "fix the second note"}),
        Text("Both notes fixed."),
    ]}
    with MockModel(script) as model:
        session, text = run_claude(claude, work, claude_env(work, model), SHELL_PROMPT)
    assert text == "Both notes fixed."
    assert model.played(SHELL_PROMPT) == script[SHELL_PROMPT]
    results = model.tool_results()
    assert all(results[i]["is_error"] is False for i in model.tool_use_ids(SHELL_PROMPT).values()), results
    assert (work.path / "notes" / "one.txt").read_bytes() == b"FIRST LINE\nkept as it is\n"
    assert (work.path / "notes" / "two.txt").read_bytes() == b"SECOND LINE\nkept as well\n"
    assert agentcli.hook_errors(work) == ""

    log = agentcli.hook_log(work, session)
    after_shell = [(e["action"], e["reason"]) for e in log if e["event"] == "PostToolUse"]
    steps = [c for c in agentcli.checkpoints(work, session) if c.trigger == "PostToolUse"]
    if not with_daemon:  # exactly as before the daemon could tell: the turn end holds both commands' changes
        assert after_shell == [("skip", "balanced: nothing after Bash")] * 3, json.dumps(log, indent=1)
        assert steps == []
        return
    assert decisions(log) == [
        ("SessionStart", None, "checkpoint"),
        ("UserPromptSubmit", None, "checkpoint"),
        ("PostToolUse", "Bash", "checkpoint"),  # sed on one.txt
        ("PostToolUse", "Bash", "skip"),  # ls / cat: nothing changed
        ("PostToolUse", "Bash", "checkpoint"),  # sed on two.txt
        ("Stop", None, "unchanged"),  # the last command's checkpoint already holds the turn's end
        ("SessionEnd", None, "skip"),
    ], json.dumps(log, indent=1)
    first, second = steps
    assert after_shell[1][1] == f"after Bash: nothing changed (daemon: no file changed since #{first.seq})"
    assert [(c.note["tool"], c.note["paths"], c.note["message"], c.note["command"]) for c in steps] == [
        ("Bash", ["notes/one.txt"], f"after Bash: {SED_ONE}", SED_ONE),
        ("Bash", ["notes/two.txt"], f"after Bash: {SED_TWO}", SED_TWO)]
    assert (blob(work, first.commit, "notes/one.txt"), blob(work, first.commit, "notes/two.txt")) == (
        "FIRST LINE\nkept as it is\n", "second line\nkept as well\n")
    assert work.tree_of(second.commit) == work.add_all_tree()
    listed = work.ok("list")
    assert f"after Bash: {SED_ONE}" in listed and f"after Bash: {SED_TWO}" in listed

    # Undo to the first command's checkpoint: the second command's change is gone, the first's stays.
    agentcli.assert_undo_restores(work, first, ignored)
    assert (work.path / "notes" / "one.txt").read_bytes() == b"FIRST LINE\nkept as it is\n"
    assert (work.path / "notes" / "two.txt").read_bytes() == b"second line\nkept as well\n"
    work.fsck()
