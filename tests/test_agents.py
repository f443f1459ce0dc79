"""Agents' hook payloads → Events: every recorded Claude Code payload, and Droid's documented ones.

The Claude Code payloads are the real ones the CLI sent (shared/agents/samples/claude-code), their
paths moved into a temporary project. Droid's are built from the fields its documentation and a
live run showed (shared/agents/other-agents.md §5): Create, Edit, ApplyPatch, Execute, message_id.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.samples import claude_sample

from git_rewind import agents
from git_rewind.agents import claude_code, droid
from git_rewind.agents import event as ev
from git_rewind.base.errors import RewindError
from git_rewind.base.note import Note, Oid, Position
from git_rewind.store.checkpoints import Checkpoint

MAIN = "4f9eba75-a32a-4359-9724-af1840817a93"  # the recorded main session
PROMPT_ID = "28e4b330-6feb-4007-a1fa-39a7c2d93298"  # its prompt "make hello"

# sample → (event kind, tool, tool kind, paths relative to the project, change_chars)
CLAUDE_CASES: dict[str, tuple[str, str | None, str | None, list[str], int | None]] = {
    "SessionStart_startup": (ev.SESSION_START, None, None, [], None),
    "SessionStart_resume": (ev.SESSION_START, None, None, [], None),
    "SessionStart_compact": (ev.SESSION_START, None, None, [], None),
    "UserPromptSubmit": (ev.PROMPT, None, None, [], None),
    # Write of a new 15-character file; Edit of "print('hello')" → "print('hello, world')": ", world".
    "PreToolUse_Write": (ev.PRE_TOOL, "Write", ev.WRITE, ["hello.py"], 15),
    "PreToolUse_Edit": (ev.PRE_TOOL, "Edit", ev.EDIT, ["hello.py"], 7),
    "PreToolUse_Bash": (ev.PRE_TOOL, "Bash", ev.SHELL, [], None),
    "PreToolUse_Bash_subagent": (ev.PRE_TOOL, "Bash", ev.SHELL, [], None),
    "PreToolUse_Read": (ev.PRE_TOOL, "Read", None, ["README.md"], None),
    "PreToolUse_Agent": (ev.PRE_TOOL, "Agent", None, [], None),
    "PostToolUse_Write": (ev.POST_TOOL, "Write", ev.WRITE, ["hello.py"], 15),
    "PostToolUse_Edit": (ev.POST_TOOL, "Edit", ev.EDIT, ["hello.py"], 7),
    "PostToolUse_Bash": (ev.POST_TOOL, "Bash", ev.SHELL, [], None),
    "PostToolUse_Bash_subagent": (ev.POST_TOOL, "Bash", ev.SHELL, [], None),
    "PostToolUse_Read": (ev.POST_TOOL, "Read", None, ["README.md"], None),
    "PostToolUse_Agent": (ev.POST_TOOL, "Agent", None, [], None),
    "PostToolUseFailure_Bash": (ev.POST_TOOL, "Bash", ev.SHELL, [], None),
    "PermissionRequest_Bash": (ev.OTHER, "Bash", ev.SHELL, [], None),
    "PostToolBatch": (ev.OTHER, None, None, [], None),
    "PostToolBatch_subagent": (ev.OTHER, None, None, [], None),
    "Stop": (ev.STOP, None, None, [], None),
    "Stop_stop_hook_active": (ev.STOP, None, None, [], None),
    "SubagentStart_subagent": (ev.OTHER, None, None, [], None),
    "SubagentStop_subagent": (ev.OTHER, None, None, [], None),
    "PreCompact": (ev.PRE_COMPACT, None, None, [], None),
    "PostCompact": (ev.OTHER, None, None, [], None),
    "Notification": (ev.OTHER, None, None, [], None),
    "SessionEnd_other": (ev.SESSION_END, None, None, [], None),
    "SessionEnd_prompt_input_exit": (ev.SESSION_END, None, None, [], None),
}


@pytest.mark.parametrize("name", sorted(CLAUDE_CASES))
def test_every_recorded_claude_code_payload_becomes_an_event(name: str, tmp_path: Path, home: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    payload, hook_env = claude_sample(name, project, home)
    kind, tool, tool_kind, paths, change_chars = CLAUDE_CASES[name]

    assert agents.detect(payload, {}) == "claude-code"  # by its shape alone
    assert agents.detect(payload, hook_env) == "claude-code"  # CLAUDECODE=1
    event = agents.get("claude-code").parse(payload)

    assert (event.agent, event.name, event.session, event.cwd) == (
        "claude-code", payload["hook_event_name"], payload["session_id"], str(project))
    assert (event.kind, event.tool, event.tool_kind) == (kind, tool, tool_kind)
    assert event.paths == [str(project / p) for p in paths]
    assert event.change_chars == change_chars
    assert event.prompt == payload.get("prompt")
    # SessionStart's source, SessionEnd's reason, PreCompact's trigger (PostCompact's is not read).
    expected = payload.get("trigger") if name == "PreCompact" else payload.get("source") or payload.get("reason")
    assert event.source == expected
    position = event.conversation()
    assert position is not None
    conversation = position.to_json()
    assert conversation == {"transcript": payload["transcript_path"], "prompt_id": payload.get("prompt_id"),
                            "tool_use_id": payload.get("tool_use_id"), "message_uuid": None, "offset": None}
    assert conversation["transcript"].startswith(f"{home}/.claude/projects/")


def test_prompt_and_tool_payloads_carry_the_conversation_anchors(tmp_path: Path, home: Path) -> None:
    prompt = claude_code.parse(claude_sample("UserPromptSubmit", tmp_path, home)[0])
    assert (prompt.prompt, prompt.prompt_id, prompt.tool_use_id) == ("make hello", PROMPT_ID, None)
    assert prompt.transcript == f"{home}/.claude/projects/-home-dev-work-proj-main/{MAIN}.jsonl"

    edit = claude_code.parse(claude_sample("PreToolUse_Edit", tmp_path, home)[0])
    assert (edit.session, edit.prompt_id, edit.tool_use_id) == (MAIN, PROMPT_ID, "toolu_mock_601f38abdb2f4e42b38d")

    start = claude_code.parse(claude_sample("SessionStart_startup", tmp_path, home)[0])
    assert start.prompt_id is None and start.source == "startup"  # a fresh session has no prompt yet

    compact = claude_code.parse(claude_sample("PreCompact", tmp_path, home)[0])
    assert (compact.kind, compact.source) == (ev.PRE_COMPACT, "manual")  # its trigger
    end = claude_code.parse(claude_sample("SessionEnd_other", tmp_path, home)[0])
    assert (end.kind, end.source) == (ev.SESSION_END, "other")  # its reason


def test_a_write_is_sized_against_the_file_it_replaces(tmp_path: Path, home: Path) -> None:
    payload = claude_sample("PreToolUse_Write", tmp_path, home)[0]  # writes "print('hello')\n" to hello.py
    (tmp_path / "hello.py").write_text("print('hello')\n")
    assert claude_code.parse(payload).change_chars == 0  # same content: nothing changes
    (tmp_path / "hello.py").write_text("print('hi')\n")
    assert claude_code.parse(payload).change_chars == 4  # "hi" → "hello"

    relative = {**payload, "tool_input": {"file_path": "hello.py", "content": "print('hi')\nprint(2)\n"}}
    event = claude_code.parse(relative)
    assert event.paths == ["hello.py"]  # as the agent named it; the hook resolves it against cwd
    assert event.change_chars == len("print(2)\n")  # sized against the file under cwd


def test_multiedit_and_notebookedit_name_their_file_and_size_every_change(tmp_path: Path) -> None:
    base = {"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "PreToolUse", "tool_use_id": "toolu_1"}
    multi = claude_code.parse({**base, "tool_name": "MultiEdit", "tool_input": {
        "file_path": str(tmp_path / "src/app.py"),
        "edits": [{"old_string": "def f(x):\n    return x", "new_string": "def f(x):\n    return x + 1"},
                  {"old_string": "A = 1", "new_string": "A = 100", "replace_all": True},
                  "not an edit"],
    }})
    assert (multi.kind, multi.tool_kind, multi.paths) == (ev.PRE_TOOL, ev.EDIT, [str(tmp_path / "src/app.py")])
    assert multi.change_chars == len(" + 1") + len("00")

    notebook = claude_code.parse({**base, "tool_name": "NotebookEdit", "tool_input": {
        "notebook_path": str(tmp_path / "analysis.ipynb"), "cell_id": "c1",
        "new_source": "import pandas as pd\n", "cell_type": "code", "edit_mode": "replace",
    }})
    assert (notebook.tool_kind, notebook.paths) == (ev.EDIT, [str(tmp_path / "analysis.ipynb")])
    assert notebook.change_chars == len("import pandas as pd\n")


def test_a_payload_with_odd_fields_still_parses(tmp_path: Path) -> None:
    event = claude_code.parse({"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input": "oops",
                               "session_id": None, "transcript_path": 3, "prompt_id": ""})
    assert (event.kind, event.tool_kind, event.paths, event.change_chars) == (ev.PRE_TOOL, ev.EDIT, [], None)
    assert event.session == "" and event.conversation() is None  # the hook reports the missing session
    unknown = claude_code.parse({"hook_event_name": "SomethingNew", "session_id": "s", "cwd": str(tmp_path)})
    assert (unknown.kind, unknown.tool) == (ev.OTHER, None)


# Droid --------------------------------------------------------------------------------------------

DROID_SESSION = "0b6a1c2e-5d4f-4e8a-9c1b-2f3e4d5c6b7a"


def _droid(root: Path, event_name: str, **fields: object) -> dict[str, Any]:
    """A Droid payload: the base fields every event has, plus FIELDS."""
    return {"session_id": DROID_SESSION, "cwd": str(root), "permission_mode": "auto-high",
            "transcript_path": f"/home/dev/.factory/sessions/-tmp-proj/{DROID_SESSION}.jsonl",
            "hook_event_name": event_name, **fields}


def test_droid_prompt_keeps_its_message_id_and_is_recognised_by_its_shape(tmp_path: Path) -> None:
    payload = _droid(tmp_path, "UserPromptSubmit", message_id="msg-7", prompt="add tests", has_images=False)
    assert agents.detect(payload, {}) == "droid"  # has_images is Droid's own
    event = droid.parse(payload)
    assert (event.agent, event.kind, event.prompt, event.prompt_id) == ("droid", ev.PROMPT, "add tests", "msg-7")
    position = event.conversation()
    assert position is not None
    assert position.to_json() == {"transcript": payload["transcript_path"], "prompt_id": "msg-7",
                                  "tool_use_id": None, "message_uuid": None, "offset": None}


def test_droid_session_and_turn_events(tmp_path: Path) -> None:
    start = _droid(tmp_path, "SessionStart", source="startup", CLAUDE_ENV_FILE="/tmp/env",
                   previous_session_id=None, message_id="msg-0")
    stop = _droid(tmp_path, "Stop", message_id="msg-9", stop_hook_active=False, tool_execution_count=3,
                  elapsed_time=1200)
    end = _droid(tmp_path, "SessionEnd", reason="exit", session_duration_ms=5000, message_count=4)
    assert (droid.parse(start).kind, droid.parse(start).source) == (ev.SESSION_START, "startup")
    assert (droid.parse(stop).kind, droid.parse(stop).prompt_id) == (ev.STOP, "msg-9")
    assert (droid.parse(end).kind, droid.parse(end).source) == (ev.SESSION_END, "exit")
    compact = _droid(tmp_path, "PreCompact", trigger="auto", custom_instructions="")
    assert (droid.parse(compact).kind, droid.parse(compact).source) == (ev.PRE_COMPACT, "auto")
    assert agents.detect(stop, {}) == "droid" and agents.detect(end, {}) == "droid"


def test_droid_create_edit_and_execute(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("print('hello')\n")
    create = droid.parse(_droid(tmp_path, "PreToolUse", tool_name="Create",
                                tool_input={"file_path": str(tmp_path / "new.py"), "content": "x = 1\n" * 10}))
    assert (create.kind, create.tool, create.tool_kind) == (ev.PRE_TOOL, "Create", ev.WRITE)
    assert (create.paths, create.change_chars) == ([str(tmp_path / "new.py")], 60)

    overwrite = droid.parse(_droid(tmp_path, "PreToolUse", tool_name="Create",
                                   tool_input={"file_path": "app.py", "content": "print('hello')\n"}))
    assert (overwrite.paths, overwrite.change_chars) == (["app.py"], 0)  # relative to cwd; same content

    edit = droid.parse(_droid(tmp_path, "PreToolUse", tool_name="Edit", tool_input={
        "file_path": str(tmp_path / "app.py"), "old_str": "print('hello')", "new_str": "print('hello, droid')",
        "change_all": False}))
    assert (edit.tool_kind, edit.paths, edit.change_chars) == (ev.EDIT, [str(tmp_path / "app.py")], 7)

    execute = _droid(tmp_path, "PostToolUse", tool_name="Execute",
                     tool_input={"command": "make", "summary": "build", "timeout": 60},
                     tool_response=json.dumps({"stdout": "ok", "exitCode": 0}))
    assert agents.detect(execute, {}) == "droid"  # Execute is Droid's shell
    parsed = droid.parse(execute)
    assert (parsed.kind, parsed.tool, parsed.tool_kind, parsed.paths) == (ev.POST_TOOL, "Execute", ev.SHELL, [])


PATCH = """*** Begin Patch
*** Update File: src/app.py
@@ def main():
-    print('hello')
+    print('hello, patched')
*** Add File: src/new.py
+x = 1
*** Delete File: old.py
*** Update File: src/a.py
*** Move to: src/b.py
*** End Patch
"""


@pytest.mark.parametrize("as_string", [False, True], ids=["object", "json-string"])
def test_droid_apply_patch_names_every_file_it_touches(tmp_path: Path, as_string: bool) -> None:
    tool_input: object = {"input": PATCH}
    if as_string:
        tool_input = json.dumps(tool_input)  # some builds send tool_input as a JSON string
    payload = _droid(tmp_path, "PreToolUse", tool_name="ApplyPatch", tool_input=tool_input)
    assert agents.detect(payload, {}) == "droid"
    event = droid.parse(payload)
    assert event.paths == ["src/app.py", "src/new.py", "old.py", "src/a.py", "src/b.py"]
    assert event.tool_kind == ev.WRITE  # it adds a file
    assert event.change_chars == len("    print('hello')") + len("    print('hello, patched')") + len("x = 1")


def test_droid_apply_patch_size_ignores_blank_lines(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n\n-a = 1\n+a = 2\n\n\n*** End Patch\n"
    event = droid.parse(_droid(tmp_path, "PreToolUse", tool_name="ApplyPatch", tool_input={"input": patch}))
    assert (event.tool_kind, event.paths) == (ev.EDIT, ["a.py"])  # an update only: an edit
    assert event.change_chars == len("a = 1") + len("a = 2")


# Which agent ------------------------------------------------------------------------------------


def test_the_environment_names_the_agent_before_the_payload_does(tmp_path: Path) -> None:
    claude_like = {"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "PreToolUse", "tool_name": "Edit"}
    assert agents.detect(claude_like, {}) == "claude-code"
    # Droid sets CLAUDE_PROJECT_DIR too, so its own variables win over Claude's.
    assert agents.detect(claude_like, {"FACTORY_PROJECT_DIR": str(tmp_path),
                                       "CLAUDE_PROJECT_DIR": str(tmp_path)}) == "droid"
    assert agents.detect(claude_like, {"DROID_PROJECT_DIR": str(tmp_path)}) == "droid"
    assert agents.detect({**claude_like, "has_images": False}, {"CLAUDECODE": "1"}) == "claude-code"
    assert agents.detect(claude_like, {"CLAUDECODE": ""}) == "claude-code"


def test_an_unknown_agent_is_a_clear_error() -> None:
    assert agents.get("droid") is droid.AGENT and agents.get("claude-code") is claude_code.AGENT
    with pytest.raises(RewindError, match=r"unknown agent: no-such-agent \(one of claude-code, droid, "):
        agents.get("no-such-agent")


@pytest.mark.parametrize(("old", "new", "changed"), [
    ("abc", "abc", 0),
    ("", "hello", 5),
    ("hello", "", 5),
    ("x = compute(a, b)", "x = compute(a, c)", 1),
    ("aa", "aaa", 1),  # prefix and suffix overlap: one character was added
    ("return 1", "return 10000", 4),
])
def test_changed_chars_counts_what_an_edit_really_changes(old: str, new: str, changed: int) -> None:
    assert ev.changed_chars(old, new) == changed


# the Agent interface -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", agents.NAMES)
def test_every_registered_agent_is_an_agent_with_every_capability_declared(name: str, tmp_path: Path) -> None:
    from git_rewind.agents.base import Agent, Rewinder

    agent = agents.get(name)
    assert isinstance(agent, Agent) and agent.name == name and agents.get(name) is agent
    event = agent.parse({})
    assert event.agent == name
    if not agent.scopes:  # a watched agent (git rewind watch -- PROGRAM): no hooks to install anywhere
        assert agent.programs and not agent.hooks and agent.readable_files() == {}
        with pytest.raises(RewindError, match="git rewind watch -- "):
            agent.target("user", str(tmp_path / "proj"), str(tmp_path / "home"))
        assert isinstance(agent.conversation(), (Rewinder, str))
        return
    assert "user" in agent.scopes
    assert all(isinstance(event, str) and (m is None or isinstance(m, str)) for event, m in agent.hooks.items())
    assert isinstance(agent.wrapped, bool) and isinstance(agent.context_on_prompt, bool)
    for scope in agent.scopes:
        assert agent.target(scope, str(tmp_path / "proj"), str(tmp_path / "home")).startswith(str(tmp_path))
    reply = agent.hook_reply("Stop")
    assert reply is None or isinstance(reply, dict)
    resume = agent.resume_command("s1")
    assert resume is None or "s1" in resume
    assert isinstance(agent.handler("cmd"), dict) and agent.readable_files()
    assert isinstance(agent.slash_commands(), dict)
    for scope in ("user", "project"):
        where = agent.mcp_file(scope, str(tmp_path / "proj"), str(tmp_path / "home"))
        assert where is None or where.startswith(str(tmp_path))
    assert agent.mcp_entry(["/bin/git-rewind"])["args"] == ["mcp"]
    conversation = agent.conversation()
    assert isinstance(conversation, Rewinder) or (isinstance(conversation, str) and "--code" in conversation)
    assert not agent.hooks_installed(str(tmp_path / "nothing.json"))


def test_the_refusal_and_the_defaults_are_explicit() -> None:
    from git_rewind.agents import cursor, opencode

    assert agents.get("cursor").conversation() == cursor.NO_CONVERSATION_REWIND
    assert agents.get("cursor").resume_command("s1") is None
    assert agents.get("gemini").context_on_prompt and not agents.get("claude-code").context_on_prompt
    assert agents.get("gemini").hook_reply(None) == {} and agents.get("droid").hook_reply("Stop") is None
    assert agents.get("opencode").mcp_file("user", None, "/h") is None and opencode.AGENT.hooks == {}


FAKE_AGENT = """
from git_rewind.agents.base import Agent
from git_rewind.agents.event import Event


class Fake(Agent):
    name = "fake"
    hooks = {"Start": None, "Tool": "Edit"}
    settings_path = (".fake", "settings.json")
    mcp_path = (".fake", "mcp.json")

    def parse(self, payload):
        return Event("fake", str(payload.get("event") or ""), "other", str(payload.get("session") or ""), "")


AGENT = Fake()
"""


def test_an_agent_is_one_module_and_its_line_in_the_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new agent needs nothing outside its module: install, status, uninstall and MCP all go by the interface."""
    import sys

    from git_rewind.agents import install

    (tmp_path / "fake_agent_module.py").write_text(FAKE_AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(agents.MODULES, "fake", "fake_agent_module")
    monkeypatch.setattr(agents, "NAMES", (*agents.NAMES, "fake"))
    monkeypatch.delitem(sys.modules, "fake_agent_module", raising=False)
    home = tmp_path / "home"

    change = install.install("fake", "user", None, str(home), program=["/bin/git-rewind"])
    settings = home / ".fake" / "settings.json"
    assert change.changed and change.path == str(settings) and not change.commands
    assert json.loads(settings.read_text()) == {"hooks": {
        "Start": [{"hooks": [{"type": "command", "command": "/bin/git-rewind hook --agent fake", "timeout": 30}]}],
        "Tool": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "/bin/git-rewind hook --agent fake",
                                                "timeout": 30}]}]}}
    assert ("fake", "user", str(settings)) in install.installed(None, str(home))
    assert install.install_mcp("fake", "user", None, str(home), program=["/bin/git-rewind"]).changed
    assert json.loads((home / ".fake" / "mcp.json").read_text())["mcpServers"]["git-rewind"] == {
        "type": "stdio", "command": "/bin/git-rewind", "args": ["mcp"]}
    assert install.uninstall_mcp("fake", "user", None, str(home)).removed
    assert install.uninstall("fake", "user", None, str(home)).removed and not (home / ".fake").exists()
    assert "fake" not in [agent for agent, _scope, _path in install.installed(None, str(home))]
    with pytest.raises(RewindError, match="^conversation rewind is not available for fake$") as refused:
        from git_rewind.ops import undo

        note = Note(1, "s", "2026-11-25T00:00:00Z", agent="fake", conversation=Position("/t.jsonl"))
        undo.plan_conversation(Checkpoint(Oid("0" * 40), note, Oid("0" * 40)), False)
    assert refused.value.remedy == "code-only"  # each face words it: a flag, a tool, a choice on the page



def test_each_agent_says_in_its_own_module_what_marks_its_payloads() -> None:
    """agents.detect only weighs the claims: every agent module answers for itself, and a payload two agents
    would claim (Qwen Code's environment has Gemini CLI's and Claude Code's variables) goes to the stronger."""
    import importlib

    for name in agents.NAMES:
        module = importlib.import_module(agents.MODULES[name])
        assert callable(module.detect), name
    qwen_env = {"QWEN_PROJECT_DIR": "/p", "GEMINI_PROJECT_DIR": "/p", "CLAUDE_PROJECT_DIR": "/p", "CLAUDECODE": "1"}
    assert agents.detect({"hook_event_name": "PreToolUse"}, qwen_env) == "qwen"
    assert agents.detect({"sessionID": "s", "event": "x", "host": "kilo"}, {"CLAUDECODE": "1"}) == "kilo"
    assert agents.detect({"hook_event_name": "Stop"}, {}) == "claude-code"  # claimed by none
