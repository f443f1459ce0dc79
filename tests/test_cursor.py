"""Cursor: its hook payloads through the real `git-rewind hook` on real repositories, its hooks.json install,
and the plain refusal to rewind its conversation.

Cursor's CLI cannot be installed here, so the payloads are built from its documentation
(https://cursor.com/docs/agent/hooks; shared/agents/other-agents.md §6): every event carries
conversation_id, generation_id, workspace_roots and hook_event_name; the before* hooks expect a
JSON answer on stdout, which ours always gives as "go on".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.workdir import Run, Workdir

from git_rewind import agents
from git_rewind.agents import cursor, event

ROOT = Path(__file__).resolve().parent.parent
CONVERSATION = "c0ffee00-1111-4222-8333-444455556666"
BIG = "- a paragraph long enough to be worth a checkpoint before it lands\n" * 2


def payload(root: Path, name: str, **fields: Any) -> dict[str, Any]:
    """A Cursor hook payload: the common fields and the event's own."""
    return {"conversation_id": CONVERSATION, "generation_id": "gen-1", "model": "claude-4-sonnet",
            "hook_event_name": name, "cursor_version": "1.7.0", "workspace_roots": [str(root)],
            "user_email": "dev@example.com", **fields}


def call(w: Workdir, data: dict[str, Any], *args: str) -> Run:
    run = w.rewind("hook", *(args or ("--agent", "cursor")), input=json.dumps(data))
    assert run.returncode == 0
    return run


def decisions(w: Workdir) -> list[dict[str, Any]]:
    path = w.path / ".git" / "rewind" / "hook.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# payload → Event -------------------------------------------------------------------------------


def test_each_documented_event_becomes_an_event(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    prompt = cursor.parse(payload(tmp_path, "beforeSubmitPrompt", prompt="add tests", attachments=[]))
    assert (prompt.kind, prompt.prompt, prompt.prompt_id, prompt.session, prompt.cwd) == (
        event.PROMPT, "add tests", "gen-1", CONVERSATION, str(tmp_path))
    write = cursor.parse(payload(tmp_path, "preToolUse", tool_name="Write", tool_use_id="tu_1",
                                 tool_input={"file_path": str(tmp_path / "a.py"), "contents": "y = 22\n"}))
    assert (write.kind, write.tool, write.tool_kind, write.paths, write.tool_use_id, write.change_chars) == (
        event.PRE_TOOL, "Write", event.WRITE, [str(tmp_path / "a.py")], "tu_1", 6)
    edit = cursor.parse(payload(tmp_path, "preToolUse", tool_name="Edit",
                                tool_input={"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 100"}))
    assert (edit.tool_kind, edit.paths, edit.change_chars) == (event.EDIT, ["a.py"], 2)
    shell = cursor.parse(payload(tmp_path, "beforeShellExecution", command="make", cwd=str(tmp_path)))
    assert (shell.kind, shell.tool, shell.tool_kind) == (event.PRE_TOOL, "Shell", event.SHELL)
    after = cursor.parse(payload(tmp_path, "afterShellExecution", command="make", output="ok", duration=12))
    assert (after.kind, after.tool_kind) == (event.POST_TOOL, event.SHELL)
    edited = cursor.parse(payload(tmp_path, "afterFileEdit", file_path=str(tmp_path / "a.py"),
                                  edits=[{"old_string": "x = 1", "new_string": "x = 10"},
                                         {"old_string": "", "new_string": "z = 3\n"}]))
    assert (edited.kind, edited.paths, edited.change_chars) == (event.POST_TOOL, [str(tmp_path / "a.py")], 7)
    stop = cursor.parse(payload(tmp_path, "stop", status="completed", loop_count=0))
    assert (stop.kind, stop.source) == (event.STOP, "completed")
    assert cursor.parse(payload(tmp_path, "afterAgentThought")).kind == event.OTHER


def test_the_payload_shape_says_cursor() -> None:
    assert agents.detect(payload(Path("/p"), "stop"), {}) == "cursor"


# the real hook ---------------------------------------------------------------------------------


def test_a_session_checkpoints_at_the_prompt_and_before_a_big_edit_and_always_allows(
        agent_project: Workdir) -> None:
    w = agent_project
    index = (w.path / ".git" / "index").read_bytes()
    answers = []

    def send(name: str, **fields: Any) -> dict[str, Any]:
        run = call(w, payload(w.path, name, **fields))
        assert run.stderr == ""
        answers.append(run.stdout)
        return decisions(w)[-1]

    assert send("beforeSubmitPrompt", prompt="write the plan", attachments=[])["action"] == "checkpoint"
    w.write("notes/plan.md", "draft\n")
    entry = send("preToolUse", tool_name="Edit", tool_input={
        "file_path": str(w.path / "notes/plan.md"), "old_string": "draft\n", "new_string": BIG})
    assert (entry["action"], entry["paths"]) == ("checkpoint", ["notes/plan.md"])
    w.write("notes/plan.md", BIG)
    assert send("afterFileEdit", file_path=str(w.path / "notes/plan.md"),
                edits=[{"old_string": "draft\n", "new_string": BIG}])["action"] == "skip"
    assert send("beforeShellExecution", command="echo hi > out.txt", cwd=str(w.path))["action"] == "skip"
    assert send("afterShellExecution", command="echo hi > out.txt", output="", duration=3)["action"] == "skip"
    w.write("out.txt", "hi\n")
    end = send("stop", status="completed", loop_count=0)
    assert (end["action"], end["reason"]) == ("checkpoint", "turn end, if files changed")
    assert answers == ['{"continue": true}\n', '{"permission": "allow"}\n', "", '{"permission": "allow"}\n',
                       "", "{}\n"]
    notes = json.loads(w.ok("list", "--json", "-n", "0", "--safety"))
    prompt, edit, turn_end = sorted(notes, key=lambda n: n["seq"])
    assert turn_end["origins"] == {"notes/plan.md": "agent", "out.txt": "agent"}
    assert turn_end["turn"]["prompt"] == "write the plan" and turn_end["turn"]["tools"] == {"notes/plan.md": "Edit"}
    assert (prompt["agent"], prompt["trigger"], prompt["prompt"], prompt["session"]) == (
        "cursor", "beforeSubmitPrompt", "write the plan", CONVERSATION)
    assert (edit["trigger"], edit["tool"], edit["paths"]) == ("preToolUse", "Edit", ["notes/plan.md"])
    assert w.git("show", f"{edit['commit']}:notes/plan.md") == "draft\n"
    assert (w.path / ".git" / "index").read_bytes() == index


def test_a_failing_hook_still_allows_the_tool(agent_project: Workdir, tmp_path: Path) -> None:
    """No conversation id: an error line on stderr, and still the allowing answer; outside a repository too."""
    w = agent_project
    data = payload(w.path, "preToolUse", tool_name="Write", tool_input={"file_path": "x", "contents": "y"})
    del data["conversation_id"]
    run = call(w, data)
    assert run.stdout == '{"permission": "allow"}\n' and run.stderr.startswith("git-rewind: hook skipped")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    run = call(w, payload(outside, "beforeShellExecution", command="ls"))
    assert (run.stdout, run.stderr) == ('{"permission": "allow"}\n', "")


# conversation rewind: refused plainly ----------------------------------------------------------


@pytest.mark.parametrize("mode", ["--conversation", "--full"])
def test_undo_of_the_conversation_is_refused_in_one_line_and_changes_nothing(agent_project: Workdir,
                                                                            mode: str) -> None:
    w = agent_project
    call(w, payload(w.path, "beforeSubmitPrompt", prompt="p", transcript_path=str(w.path.parent / "t.jsonl")))
    w.write("src/app.py", "changed\n")
    refs = w.git("for-each-ref")
    state = w.state()
    run = w.rewind("undo", "1", mode, "--yes")
    assert run.returncode != 0
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Cursor's conversation cannot be rewound" in lines[0] and "--code" in lines[0], lines
    assert w.git("for-each-ref") == refs and w.state() == state


def test_undo_code_restores_and_names_no_resume_command(agent_project: Workdir) -> None:
    w = agent_project
    call(w, payload(w.path, "beforeSubmitPrompt", prompt="p"))
    w.write("src/app.py", "changed\n")
    out = w.ok("undo", "1", "--code", "--yes")
    assert (w.path / "src/app.py").read_text() == "print('hello')\n"
    assert "resume with" not in out


# install / uninstall ---------------------------------------------------------------------------


def test_the_file_under_hooks_is_what_install_writes() -> None:
    assert json.loads((ROOT / "hooks" / "cursor" / "hooks.json").read_text()) == cursor.AGENT.template()


def test_install_into_a_fresh_project_then_uninstall_leaves_nothing(project: Workdir) -> None:
    w = project
    w.ok("install", "--agent", "cursor", "--scope", "project")
    path = w.path / ".cursor" / "hooks.json"
    data = json.loads(path.read_text())
    commands = {e["command"] for entries in data["hooks"].values() for e in entries}
    # A project's file names git-rewind, found on PATH; the before* hooks answer "go on" where it is missing.
    assert all(c.startswith("sh -c ") and "exec git-rewind hook --agent cursor" in c for c in commands)
    assert data == cursor.AGENT.template()
    assert "sessionStart" not in data["hooks"]
    assert "already installed" in w.ok("install", "--agent", "cursor", "--scope", "project")
    assert str(path) in w.ok("status")
    w.ok("uninstall", "--agent", "cursor", "--scope", "project")
    assert not path.exists() and not path.parent.exists()


def test_install_keeps_the_users_hooks_and_uninstall_restores_the_exact_bytes(project: Workdir,
                                                                            home: Path) -> None:
    w = project
    path = home / ".cursor" / "hooks.json"
    path.parent.mkdir()
    original = ('{\n  "version": 1,\n  "hooks": {\n    "afterFileEdit": [{"command": "./format.sh"}],\n'
                '    "beforeMCPExecution": [{"command": "audit", "timeout": 5}]\n  }\n}\n')
    path.write_text(original)
    w.ok("install", "--agent", "cursor")
    data = json.loads(path.read_text())
    assert data["version"] == 1
    assert data["hooks"]["afterFileEdit"][0] == {"command": "./format.sh"}
    assert data["hooks"]["beforeMCPExecution"] == [{"command": "audit", "timeout": 5}]
    assert len(data["hooks"]["afterFileEdit"]) == 2 and set(data["hooks"]) >= set(cursor.HOOKS)
    w.ok("install", "--agent", "cursor")
    assert json.loads(path.read_text()) == data
    w.ok("uninstall", "--agent", "cursor")
    assert path.read_text() == original


def test_uninstall_after_the_user_changed_the_file_removes_only_ours(project: Workdir, home: Path) -> None:
    w = project
    w.ok("install", "--agent", "cursor")
    path = home / ".cursor" / "hooks.json"
    data = json.loads(path.read_text())
    data["hooks"]["stop"].append({"command": "notify-send done"})
    path.write_text(json.dumps(data))
    w.ok("uninstall", "--agent", "cursor")
    assert json.loads(path.read_text()) == {"version": 1, "hooks": {"stop": [{"command": "notify-send done"}]}}


def test_a_hooks_file_that_is_not_json_is_an_error_and_left_untouched(project: Workdir, home: Path) -> None:
    w = project
    path = home / ".cursor" / "hooks.json"
    path.parent.mkdir()
    path.write_text("{not json")
    run = w.rewind("install", "--agent", "cursor")
    assert run.returncode != 0 and "not valid JSON" in run.stderr
    assert path.read_text() == "{not json"
