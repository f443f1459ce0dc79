"""The session both agents of OpenCode's family (OpenCode, Kilo) play end to end, once, against the mock model:
our plugin checkpoints it, and `git rewind undo` forks the conversation through the agent's own server.

Each agent runs as an `@ai-sdk/openai-compatible` provider pointing at the mock (tests/helpers/mockmodel.py,
chat completions) in a scratch HOME, kept offline (shared/agents/other-agents.md §4.5, kilo-aider.md A).
`<agent> run "…"` starts a session, `<agent> run -s <id> "…"` continues one. At startup each installs its
plugin package (@opencode-ai/plugin, @kilocode/plugin) into every plugin directory's parent with npm, whose
cache is kept beside the agent so reruns reuse it; our plugin imports only types, so it runs either way.

No server of the agent is running when `git rewind undo` runs (`run` answers on none), so each
conversation rewind starts `<agent> serve --pure` itself, from PATH, and stops it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

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
    Checkpoint,
    blob,
    decisions,
)
from helpers.mcpclient import Reply, session
from helpers.mockmodel import MockModel, Text, ToolCall, Turn
from helpers.procs import processes
from helpers.webserver import Served
from helpers.workdir import Workdir

PROMPT_1 = "P1-PLAN: write the plan, rewrite it, and leave a note from the shell"
PROMPT_2 = "P2-POLISH: polish the plan"
CONTINUE = "P3-CONTINUE: carry on from here"
AGAIN = "P4-AGAIN: and once more"
FIRST_RUN_TIMEOUT = 240  # seconds: the first start installs the agent's plugin package with npm
TURN_END_WAIT = 30.0  # seconds for the turn end's hook to finish after `run` exits


@dataclass(frozen=True)
class Family:
    """What differs between the agents of the family, for the session they play."""

    name: str  # the agent's name (`--agent`), its program, and its folder under ~/.config
    title: str  # its name in git-rewind's messages
    config_file: str  # its global config file, under ~/.config/<name>/
    environment: dict[str, str] = field(default_factory=dict)  # what keeps it offline
    # `kilo run` wraps each argument holding a space in literal double quotes: such an agent gets the prompt
    # word by word (it joins them with spaces, so the model sees the prompt exactly).
    prompt_by_words: bool = False
    permission: dict[str, str] = field(default_factory=dict)  # further permissions its config allows
    run_timeout: float = agentcli.RUN_TIMEOUT  # seconds for one `run`

    @property
    def project_plugin(self) -> str:
        return f".{self.name}/plugin/git-rewind.ts"


OPENCODE = Family("opencode", "OpenCode", "opencode.json", {
    "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1"})
KILO = Family("kilo", "Kilo", "kilo.json", {
    "KILO_DISABLE_MODELS_FETCH": "1", "KILO_DISABLE_AUTOUPDATE": "1", "KILO_DISABLE_SESSION_INGEST": "1",
    "KILO_DISABLE_LSP_DOWNLOAD": "1", "KILO_TELEMETRY_LEVEL": "off",
    # Kilo's own snapshot of the work tree taking over 10 s (a loaded machine) makes it ask "Continue with
    # snapshots / Disable for this project" and, in `run`, wait out its 120 s turn budget unanswered.
    "KILO_SNAPSHOT_TRACK_TIMEOUT_MS": "600000"}, prompt_by_words=True, permission={"external_directory": "allow"},
    run_timeout=180)  # Kilo starts slower: 20-45 s a run measured on a loaded 2-core machine


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


def family_env(family: Family, work: Workdir, model: MockModel, binary: Path) -> dict[str, str]:
    """Scratch HOME whose global config has the mock as the only model; the agent kept offline.

    PATH has the agent (for the rewind's `serve`) and git-rewind: a project's plugin names no path of this
    machine and runs the git-rewind on PATH, as on a teammate's machine with it installed.
    """
    home = Path(work.env["HOME"])
    config = home / ".config" / family.name
    config.mkdir(parents=True, exist_ok=True)
    (config / family.config_file).write_text(json.dumps({
        "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                              "options": {"baseURL": f"{model.url}/v1", "apiKey": "test-key"},
                              "models": {"mock-model": {"name": "Mock Model", "tool_call": True}}}},
        "model": "mock/mock-model", "small_model": "mock/mock-model", "autoupdate": False, "share": "disabled",
        "permission": {"edit": "allow", "bash": "allow", **family.permission}}))
    env = dict(work.env)
    env.update(
        PATH=os.pathsep.join([str(binary.parent), agentcli.rewind_bin_dir(), "/usr/bin", "/bin"]),
        XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".local" / "state"),
        npm_config_cache=str(agentcli.cache_dir() / f"{family.name}-npm-cache"),
        GIT_REWIND_ANTI_SPAM_SECONDS="0",
        PWD=str(work.path),  # the agent takes its project directory from PWD, not from its cwd
        **family.environment,
    )
    return env


def run(family: Family, binary: Path, work: Workdir, env: dict[str, str], prompt: str, session: str | None = None,
        timeout: float | None = None) -> str:
    """`<agent> run --format json [-s SESSION] PROMPT`; returns the session id it reported."""
    words = prompt.split() if family.prompt_by_words else [prompt]
    command = [str(binary), "run", "--format", "json", *(["-s", session] if session else []), *words]
    idle = _turn_ends(work)
    started = time.monotonic()
    proc = agentcli.run(command, work.path, env, timeout=timeout or family.run_timeout)
    print(f"{family.name} run {prompt.split()[0]} took {time.monotonic() - started:.1f} s")  # pytest -s shows it
    _await_turn_end(work, idle)
    assert proc.returncode == 0, f"{family.name} run: {proc.returncode}: {proc.stderr[-2000:]}{proc.stdout[-2000:]}"
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    ids = {e.get("sessionID") for e in events if e.get("sessionID")}
    assert len(ids) == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert not any(e.get("type") == "error" for e in events), proc.stdout[-2000:]
    return str(ids.pop())


def _turn_ends(work: Workdir) -> int:
    return sum(1 for e in agentcli.hook_log(work) if e.get("event") == "session.idle")


def _await_turn_end(work: Workdir, before: int, timeout: float = TURN_END_WAIT) -> None:
    """Wait for the hook of the turn end `run` has just reported: `run` exits as its session goes idle, and the
    plugin's hook for that event (a process of its own, not waited for by the exiting agent) may still be
    checkpointing. Returns at once when it is done; after TIMEOUT, the test's own checks say what is missing."""
    deadline = time.monotonic() + timeout
    while _turn_ends(work) <= before and time.monotonic() < deadline:
        time.sleep(0.1)


def sent(model: MockModel, prompt: str) -> str:
    """The conversation of the first main request made for PROMPT, as JSON text."""
    requests = model.main_requests(prompt)
    assert requests, f"no model request for {prompt!r}"
    return json.dumps(requests[0].body["messages"])


def rewind(work: Workdir, env: dict[str, str], *args: str) -> str:
    result = work.rewind(*args, env=env)
    assert result.returncode == 0, f"git rewind {' '.join(args)}: {result.stderr}{result.stdout}"
    return result.stdout


def new_session(family: Family, output: str) -> str:
    line = next(x for x in output.splitlines() if x.startswith(f"resume with: {family.name} -s "))
    return line.rsplit(" ", 1)[1]


def play(family: Family, binary: Path, work: Workdir) -> list[Checkpoint]:
    """Two prompts with write, edit and bash; then `undo <first prompt> --full`: its files, and a forked session
    that sends neither prompt; `undo <edit> --conversation`: a fork that stops just before the edit call; redo;
    `undo <second turn end> --code`. Returns the session's six checkpoints."""
    plugin = agentcli.install_hooks(work, family.name, "project", work.env)
    text = plugin.read_text()
    assert 'const PROGRAM: string[] = ["git-rewind"]' in text  # a project's plugin: the git-rewind on PATH
    assert f'const AGENT = "{family.name}"' in text
    user = work.user_state()
    turns = script(str(work.path / PLAN))
    with MockModel(turns) as model:
        env = family_env(family, work, model, binary)
        session = run(family, binary, work, env, PROMPT_1, timeout=FIRST_RUN_TIMEOUT)
        assert session.startswith("ses_")
        assert run(family, binary, work, env, PROMPT_2, session=session) == session
        assert model.played(PROMPT_1) == turns[PROMPT_1] and model.played(PROMPT_2) == turns[PROMPT_2]
        calls = {prompt: model.tool_use_ids(prompt) for prompt in (PROMPT_1, PROMPT_2)}
        results = model.tool_results(PROMPT_2)
        assert set(calls[PROMPT_1].values()) <= set(results), results  # prompt 2 carried prompt 1's tool calls
        assert (work.path / PLAN).read_text() == "# Plan\n" + DRAFT_3
        assert (work.path / SHELL_FILE).read_text() == SHELL_TEXT
        assert agentcli.hook_errors(work) == ""

        log = agentcli.hook_log(work, session)
        assert agentcli.hook_log(work) == log  # no other session: loading the plugin (serve, export…) sends nothing
        # Prompt 2's edit comes within a minute of prompt 1's two (a batch: skipped) when the agent is quick; on a
        # loaded machine it comes later, and then its checkpoint would equal the prompt's (unchanged). Either
        # way, no checkpoint.
        edit_2 = log[7] if len(log) > 7 else {}
        assert (edit_2.get("event"), edit_2.get("tool")) == ("tool.execute.before", "edit"), json.dumps(log, indent=1)
        assert edit_2["action"] in ("skip", "unchanged") and edit_2.get("seq", log[6]["seq"]) == log[6]["seq"]
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
        assert all(e["paths"] == [PLAN] for e in log if e["event"] == "tool.execute.before"), log
        found = agentcli.checkpoints(work, session)
        assert [c.trigger for c in found] == ["session.created", "chat.message", "tool.execute.before",
                                              "session.idle", "chat.message", "session.idle"]
        agentcli.check_chain(work, found)
        start, prompt_1, edit, idle_1, prompt_2, idle_2 = found
        assert all(c.note["agent"] == family.name for c in found)
        assert idle_1.note["origins"] == {PLAN: "agent", SHELL_FILE: "agent"}, idle_1.note
        assert idle_2.note["origins"] == {PLAN: "agent"}, idle_2.note
        assert idle_1.note["turn"]["seq"] == prompt_1.seq and idle_2.note["turn"]["seq"] == prompt_2.seq
        assert prompt_1.note["prompt"] and PROMPT_1 in prompt_1.note["prompt"]
        assert prompt_1.note["conversation"]["prompt_id"].startswith("msg_")
        assert edit.note["conversation"]["tool_use_id"] == calls[PROMPT_1][1]
        assert (edit.note["tool"], edit.note["paths"]) == ("edit", [PLAN])
        assert blob(work, prompt_1.commit, PLAN) is None
        assert blob(work, edit.commit, PLAN) == PLAN_V1 and blob(work, edit.commit, SHELL_FILE) is None
        assert blob(work, prompt_2.commit, PLAN) == PLAN_V2 and blob(work, prompt_2.commit, SHELL_FILE) == SHELL_TEXT
        assert blob(work, start.commit, family.project_plugin) == text

        # undo --full to the first prompt: the files of that moment, and a new session with nothing of either prompt.
        ignored = agentcli.ignored_files(work)  # the agent's own node_modules among them, left alone
        output = rewind(work, env, "undo", str(prompt_1.seq), "--full", "--yes")
        assert "is unchanged" in output and PROMPT_1 in output and f"new {family.title} session" in output, output
        agentcli.assert_tree_on_disk(work, prompt_1.commit, ignored, "after undo --full")
        forked = new_session(family, output)
        assert forked != session and forked.startswith("ses_")
        safety = agentcli.checkpoints(work, session)[-1]
        assert safety.trigger == "pre-rewind"
        kept = json.loads(work.git("show", f"{safety.commit}^2:{family.name}-{session}.json"))
        assert [m["info"]["id"] for m in kept["messages"]][0] == prompt_1.note["conversation"]["prompt_id"]
        assert PROMPT_2 in json.dumps(kept)  # the whole conversation is in git
        assert run(family, binary, work, env, CONTINUE, session=forked) == forked
        conversation = sent(model, CONTINUE)
        for gone in (PROMPT_1, PROMPT_2, *calls[PROMPT_1].values(), *calls[PROMPT_2].values()):
            assert gone not in conversation, gone

        # undo --conversation to the edit: the fork keeps prompt 1 and its write, not the edit; the files stay.
        before = agentcli.disk_files(work.path)
        output = rewind(work, env, "undo", str(edit.seq), "--conversation", "--yes")
        assert "just before the edit call" in output, output
        assert agentcli.disk_files(work.path) == before
        at_edit = new_session(family, output)
        assert run(family, binary, work, env, AGAIN, session=at_edit) == at_edit
        conversation = sent(model, AGAIN)
        assert PROMPT_1 in conversation and calls[PROMPT_1][0] in conversation
        for gone in (PROMPT_2, calls[PROMPT_1][1], calls[PROMPT_1][2], *calls[PROMPT_2].values()):
            assert gone not in conversation, gone

        # redo: the agent's sessions were never changed, so it names the original one.
        output = rewind(work, env, "redo", "--yes")
        assert f"resume with: {family.name} -s {session}" in output, output

        # undo --code to the second turn's end: the files only, as they were at the end of prompt 2.
        output = rewind(work, env, "undo", str(idle_2.seq), "--code", "--yes")
        agentcli.assert_tree_on_disk(work, idle_2.commit, agentcli.ignored_files(work), "after undo --code")
        assert f"resume with: {family.name} -s {session}" in output, output

        previews_leave_no_server(family, work, env, prompt_1.seq)
    assert agentcli.hook_errors(work) == ""
    assert work.user_state()[1:3] == user[1:3]  # HEAD and branches as before
    work.fsck()
    return found


def serving(family: Family) -> list[int]:
    """The `<agent> serve --pure` processes running on this machine (what a conversation rewind starts)."""
    return [pid for pid, argv, _cwd in processes()
            if b"serve" in argv and b"--pure" in argv and os.path.basename(argv[0]).startswith(family.name.encode())]


def previews_leave_no_server(family: Family, work: Workdir, env: dict[str, str], seq: int) -> None:
    """A full rewind previewed from the page and through MCP: each plans the conversation through a `serve`
    it starts, says where it would cut, and stops that server before it answers (the page's and the MCP
    server's processes live on: nothing but the plan's own end may stop it)."""
    assert serving(family) == []
    served = Served(Workdir(work.path, env))
    try:
        reply = served.post("/api/undo", {"id": str(seq), "mode": "full", "dry_run": True})
        assert reply.status == 200, reply.text
        assert reply.json()["conversation"].startswith("conversation: cut"), reply.json()
        assert serving(family) == [], f"the page's preview left the agent's server running: {_described(family)}"
    finally:
        served.stop()
    seen: list[Reply] = []
    left: list[int] = []

    def story(call: Callable[..., Reply]) -> None:
        seen.append(call("checkpoint_rewind_full", checkpoint_id=str(seq), preview=True))
        left.extend(serving(family))  # while the MCP server still runs

    session(Workdir(work.path, env), story)
    assert not seen[0].error and seen[0].data["dry_run"], seen[0].text
    assert seen[0].data["conversation"].startswith("conversation: cut"), seen[0].data
    assert left == [], f"the MCP preview left the agent's server running: {_described(family)}"


def _described(family: Family) -> list[str]:
    """Each `serve --pure` process still there, with its parent and working directory: which test started it
    (a failure seen once in CI, 2026-11-29, not reproduced: the next one says more)."""
    found = []
    for pid in serving(family):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                ppid = fh.read().rsplit(b")", 1)[1].split()[1].decode()
            found.append(f"pid {pid} (parent {ppid}) in {os.readlink(f'/proc/{pid}/cwd')}")
        except OSError:
            found.append(f"pid {pid} (gone since)")
    return found
