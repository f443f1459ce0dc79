"""Cline: its hook payloads through the real `git-rewind hook` on real repositories, its hook files' install
and uninstall, and the plain refusal to rewind its task history.

Two payload shapes: the CLI's, as `cline` 3.0.65 sent them to a hook file in tests/test_e2e_cline.py's runs
(`hookName` in its runtime's names, `tool_call`/`tool_result` beside the documented objects, every
parameter stringified in those); and the VS Code extension's, from Cline's hook reference
(docs/agents/cline.md: PascalCase `hookName`, `preToolUse.parameters`, its tools write_to_file,
replace_in_file and execute_command), which cannot be run here.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import installed
from helpers.workdir import Run, Workdir

from git_rewind import agents
from git_rewind.agents import cline, event, install
from git_rewind.base.errors import RewindError

ROOT = Path(__file__).resolve().parent.parent
TASK = "1795918278260"  # the extension's taskId: Date.now()
SESSION = "1795918503260_pzlza"  # the CLI's root session (`cline --id`)
BIG = "- a paragraph long enough to be worth a checkpoint before it lands\n" * 2


def vscode(root: Path, name: str, **fields: Any) -> dict[str, Any]:
    """The extension's payload (Cline's hook reference): base fields and the event's own object."""
    return {"clineVersion": "3.38.0", "hookName": name, "timestamp": "1795918278260", "taskId": TASK,
            "workspaceRoots": [str(root)], "userId": "u-1", **fields}


def cli(root: Path, name: str, **fields: Any) -> dict[str, Any]:
    """The CLI's payload, as recorded from cline 3.0.65."""
    return {"clineVersion": "", "timestamp": "2026-11-29T02:11:19.179Z", "taskId": "conv_1795918503269_br3qcl7",
            "sessionContext": {"rootSessionId": SESSION}, "workspaceRoots": [str(root)],
            "workspaceInfo": {"rootPath": str(root), "hint": root.name}, "userId": "unknown",
            "agent_id": "agent_1795918278517_a1a0su", "parent_agent_id": None, "hookName": name, **fields}


def tool_call(root: Path, name: str, tool: str, raw: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    """The CLI's tool_call / tool_result payload: the raw input, and the documented object with it stringified."""
    strings = {k: v if isinstance(v, str) else json.dumps(v) for k, v in raw.items()}
    if name == "tool_call":
        return cli(root, name, iteration=1, tool_call={"id": call_id, "name": tool, "input": raw},
                   preToolUse={"toolName": tool, "parameters": strings})
    return cli(root, name, iteration=1, tool_result={"id": call_id, "name": tool, "input": raw, "output": "ok"},
               postToolUse={"toolName": tool, "parameters": strings, "result": "ok", "success": True,
                            "executionTimeMs": 5})


def call(w: Workdir, data: dict[str, Any] | str, *args: str) -> Run:
    run = w.rewind("hook", *(args or ("--agent", "cline")),
                   input=data if isinstance(data, str) else json.dumps(data))
    assert run.returncode == 0
    return run


def decisions(w: Workdir) -> list[dict[str, Any]]:
    path = w.path / ".git" / "rewind" / "hook.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# payload → Event -------------------------------------------------------------------------------


def test_each_documented_event_of_the_extension_becomes_an_event(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    start = cline.parse(vscode(tmp_path, "TaskStart", taskStart={"taskMetadata": {"taskId": TASK, "ulid": "01J"}}))
    assert (start.kind, start.source, start.session, start.cwd) == (event.SESSION_START, "startup", TASK,
                                                                    str(tmp_path))
    assert cline.parse(vscode(tmp_path, "TaskResume")).source == "resume"
    prompt = cline.parse(vscode(tmp_path, "UserPromptSubmit", userPromptSubmit={"prompt": "add tests",
                                                                                "attachments": []}))
    assert (prompt.kind, prompt.prompt) == (event.PROMPT, "add tests")
    write = cline.parse(vscode(tmp_path, "PreToolUse", preToolUse={
        "toolName": "write_to_file", "parameters": {"path": "a.py", "content": "y = 22\n"}}))
    assert (write.kind, write.tool, write.tool_kind, write.paths, write.change_chars) == (
        event.PRE_TOOL, "write_to_file", event.WRITE, ["a.py"], 6)
    diff = "------- SEARCH\nx = 1\n=======\nx = 100\n+++++++ REPLACE\n<<<<<<< SEARCH\nz\n=======\nzz\n>>>>>>> REPLACE\n"
    edit = cline.parse(vscode(tmp_path, "PreToolUse", preToolUse={
        "toolName": "replace_in_file", "parameters": {"path": "a.py", "diff": diff}}))
    assert (edit.tool_kind, edit.paths, edit.change_chars) == (event.EDIT, ["a.py"], 2 + 1)
    shell = cline.parse(vscode(tmp_path, "PostToolUse", postToolUse={
        "toolName": "execute_command", "parameters": {"command": "make test", "requires_approval": "false"},
        "result": "ok", "success": True, "executionTimeMs": 40}))
    assert (shell.kind, shell.tool_kind, shell.command) == (event.POST_TOOL, event.SHELL, "make test")
    for name, kind in (("TaskComplete", event.STOP), ("TaskCancel", event.STOP), ("PreCompact", event.PRE_COMPACT)):
        assert cline.parse(vscode(tmp_path, name)).kind == kind
    assert cline.parse(vscode(tmp_path, "TaskCancel")).source == "cancel"
    assert cline.parse(vscode(tmp_path, "Notification")).kind == event.OTHER


def test_the_clis_payloads_become_the_documented_events(tmp_path: Path) -> None:
    """The CLI's runtime names map onto the hook files' names; its raw tool input is read (lists stay lists)."""
    (tmp_path / "old.txt").write_text("keep this line\n")
    start = cline.parse(cli(tmp_path, "agent_start", taskStart={"taskMetadata": {}}))
    assert (start.name, start.kind, start.session) == ("TaskStart", event.SESSION_START, SESSION)
    create = cline.parse(tool_call(tmp_path, "tool_call", "editor", {"path": str(tmp_path / "new.md"),
                                                                     "new_text": BIG}, "call_7"))
    assert (create.name, create.kind, create.tool, create.tool_kind, create.paths, create.change_chars,
            create.tool_use_id) == ("PreToolUse", event.PRE_TOOL, "editor", event.WRITE, [str(tmp_path / "new.md")],
                                    len(BIG), "call_7")
    edit = cline.parse(tool_call(tmp_path, "tool_call", "editor", {
        "path": str(tmp_path / "old.txt"), "old_text": "keep this line", "new_text": "keep that line"}))
    assert (edit.tool_kind, edit.change_chars) == (event.EDIT, 2)  # "is" → "at"
    insert = cline.parse(tool_call(tmp_path, "tool_call", "editor", {
        "path": str(tmp_path / "old.txt"), "new_text": "x\n", "insert_line": 1}))
    assert (insert.tool_kind, insert.change_chars) == (event.EDIT, 2)
    shell = cline.parse(tool_call(tmp_path, "tool_result", "run_commands",
                                  {"commands": ["npm test", "echo done > out.txt"]}))
    assert (shell.name, shell.kind, shell.tool_kind, shell.command) == (
        "PostToolUse", event.POST_TOOL, event.SHELL, "npm test; echo done > out.txt")
    strings = cli(tmp_path, "tool_call", preToolUse={"toolName": "run_commands",
                                                     "parameters": {"commands": '["ls -la"]'}})
    assert cline.parse(strings).command == "ls -la"  # only the stringified parameters: its JSON is read
    patch = "*** Begin Patch\n*** Add File: src/new.py\n+print(1)\n*** Update File: old.txt\n@@\n-a\n+b\n*** End Patch"
    patched = cline.parse(tool_call(tmp_path, "tool_call", "apply_patch", {"input": patch}))
    assert (patched.paths, patched.tool_kind) == (["src/new.py", "old.txt"], event.WRITE)
    assert [cline.parse(cli(tmp_path, n)).name for n in ("agent_end", "agent_abort", "agent_error")] == [
        "TaskComplete", "TaskCancel", "TaskError"]
    assert {cline.parse(cli(tmp_path, n)).kind for n in ("agent_end", "agent_abort", "agent_error")} == {event.STOP}
    shutdown = cline.parse(cli(tmp_path, "session_shutdown", reason="exit"))
    assert (shutdown.kind, shutdown.source) == (event.SESSION_END, "exit")
    assert cline.parse(cli(tmp_path, "tool_call")).tool is None  # nothing to read: no crash


def test_the_payload_shape_says_cline() -> None:
    assert agents.detect(vscode(Path("/p"), "PreToolUse"), {}) == "cline"
    assert agents.detect(cli(Path("/p"), "tool_call"), {}) == "cline"
    assert cline.detect({"hook_event_name": "PreToolUse"}, {}) is None


def test_a_cli_session_names_its_resume_command_and_an_extension_task_none() -> None:
    assert cline.resume_command(SESSION) == f"cline --id {SESSION}"
    assert cline.resume_command(TASK) is None


# the real hook ---------------------------------------------------------------------------------


def test_a_task_checkpoints_at_start_prompt_big_edit_shell_and_end_and_always_goes_on(
        agent_project: Workdir) -> None:
    w = agent_project
    index = (w.path / ".git" / "index").read_bytes()
    answers = []
    env = {"GIT_REWIND_TIER": "aggressive", "GIT_REWIND_ANTI_SPAM_SECONDS": "0"}

    def send(data: dict[str, Any]) -> dict[str, Any]:
        run = w.rewind("hook", "--agent", "cline", input=json.dumps(data), env=env)
        assert (run.returncode, run.stderr) == (0, "")
        answers.append(json.loads(run.stdout))
        return decisions(w)[-1]

    assert send(vscode(w.path, "TaskStart", taskStart={"taskMetadata": {"taskId": TASK}}))["action"] == "checkpoint"
    assert send(vscode(w.path, "UserPromptSubmit", userPromptSubmit={"prompt": "write the plan"}))["action"] == \
        "checkpoint"  # every prompt has one, even with nothing changed
    w.write("notes/plan.md", "draft\n")
    entry = send(vscode(w.path, "PreToolUse", preToolUse={
        "toolName": "replace_in_file",
        "parameters": {"path": "notes/plan.md", "diff": f"------- SEARCH\ndraft\n=======\n{BIG}+++++++ REPLACE\n"}}))
    assert (entry["action"], entry["paths"]) == ("checkpoint", ["notes/plan.md"])
    w.write("notes/plan.md", BIG)
    assert send(vscode(w.path, "PreToolUse", preToolUse={"toolName": "execute_command",
                                                         "parameters": {"command": "echo hi > out.txt"}}))[
        "action"] == "skip"
    w.write("out.txt", "hi\n")
    shell = send(vscode(w.path, "PostToolUse", postToolUse={
        "toolName": "execute_command", "parameters": {"command": "echo hi > out.txt"}, "success": True}))
    assert shell["action"] == "checkpoint"
    assert send(vscode(w.path, "TaskComplete"))["action"] == "unchanged"
    assert all(a == {"cancel": False} for a in answers[1:]) and answers[0]["cancel"] is False
    notes = sorted(json.loads(w.ok("list", "--json", "-n", "0")), key=lambda n: n["seq"])
    assert [(n["trigger"], n["tool"]) for n in notes] == [
        ("TaskStart", None), ("UserPromptSubmit", None), ("PreToolUse", "replace_in_file"),
        ("PostToolUse", "execute_command")]
    _start, prompt, edit, after = notes
    assert prompt["prompt"] == "write the plan" and prompt["message"] == "prompt: write the plan"
    assert {n["agent"] for n in notes} == {"cline"} and {n["session"] for n in notes} == {TASK}
    assert edit["prompt"] == "write the plan" and edit["origins"] == {"notes/plan.md": "agent"}
    assert w.git("show", f"{edit['commit']}:notes/plan.md") == "draft\n"
    assert after["message"] == "after execute_command: echo hi > out.txt"
    assert after["origins"] == {"notes/plan.md": "agent", "out.txt": "agent"}
    assert (w.path / ".git" / "index").read_bytes() == index


def test_the_session_start_context_goes_back_as_context_modification(agent_project: Workdir) -> None:
    w = agent_project
    w.ok("snap", "-m", "earlier work")
    run = call(w, vscode(w.path, "TaskStart"))
    answer = json.loads(run.stdout)
    assert answer["cancel"] is False and "earlier work" in answer["contextModification"], answer


@pytest.mark.parametrize("data", ["", "not json", "[1, 2]", json.dumps({"hookName": "PreToolUse"})])
def test_a_malformed_payload_exits_0_with_one_stderr_line_and_lets_cline_go_on(agent_project: Workdir,
                                                                             data: str) -> None:
    w = agent_project
    run = call(w, data)
    assert json.loads(run.stdout) == {"cancel": False}
    assert len(run.stderr.splitlines()) == 1 and run.stderr.startswith("git-rewind: "), run.stderr
    assert w.git("for-each-ref", "refs/rewind/") == ""


ODD_FIELDS = [{"workspaceRoots": "not a list"}, {"workspaceRoots": [3]}, {"sessionContext": ["x"]},
              {"sessionContext": {"rootSessionId": 5}}, {"preToolUse": "write_to_file"},
              {"preToolUse": {"toolName": ["editor"], "parameters": [1]}},
              {"preToolUse": {"toolName": "editor", "parameters": {"path": 7, "old_text": None, "insert_line": []}}},
              {"tool_call": {"name": "run_commands", "input": {"commands": [None, {"args": 3}, 5]}}},
              {"preToolUse": {"toolName": "run_commands", "parameters": {"commands": "[not json"}}},
              {"preToolUse": {"toolName": "replace_in_file", "parameters": {"path": "a", "diff": 12}}},
              {"preToolUse": {"toolName": "apply_patch", "parameters": {"input": {"x": 1}}}}]


@pytest.mark.parametrize("odd", ODD_FIELDS)
def test_fields_of_the_wrong_type_never_break_the_hook(agent_project: Workdir, odd: dict[str, Any]) -> None:
    w = agent_project
    data = {**vscode(w.path, "PreToolUse"), **odd}
    event_ = cline.parse(data)  # parses, whatever the types
    assert event_.agent == "cline" and all(isinstance(p, str) for p in event_.paths)
    run = call(w, data)
    assert json.loads(run.stdout) == {"cancel": False} and len(run.stderr.splitlines()) <= 1, run


def test_a_payload_outside_a_repository_goes_on_quietly(agent_project: Workdir, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    run = call(agent_project, vscode(outside, "TaskStart"))
    assert (json.loads(run.stdout), run.stderr) == ({"cancel": False}, "")


# conversation rewind: refused plainly ----------------------------------------------------------


@pytest.mark.parametrize("mode", ["--conversation", "--full"])
def test_undo_of_the_conversation_is_refused_in_one_line_and_changes_nothing(agent_project: Workdir,
                                                                            mode: str) -> None:
    w = agent_project
    call(w, vscode(w.path, "TaskStart"))
    w.write("src/app.py", "changed\n")
    refs = w.git("for-each-ref")
    state = w.state()
    run = w.rewind("undo", "1", mode, "--yes")
    assert run.returncode != 0
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Cline's task history cannot be rewound" in lines[0] and "--code" in lines[0], lines
    assert w.git("for-each-ref") == refs and w.state() == state


def test_undo_code_takes_back_the_edit_and_names_the_clis_resume_command(agent_project: Workdir) -> None:
    w = agent_project
    call(w, cli(w.path, "agent_start"))
    w.write("src/app.py", "changed\n")
    out = w.ok("undo", "1", "--code", "--yes")
    assert (w.path / "src/app.py").read_text() == "print('hello')\n"
    assert f"resume with: cline --id {SESSION}" in out


# install / uninstall ---------------------------------------------------------------------------

USER_HOOKS = ("Documents", "Cline", "Hooks")


def _hook_files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())} if folder.is_dir() else {}


def test_the_files_under_hooks_are_what_install_writes() -> None:
    assert _hook_files(ROOT / "hooks" / "cline") == {n: t.encode() for n, t in cline.AGENT.template().items()}


def test_install_writes_one_executable_file_per_event_and_uninstall_leaves_nothing(project: Workdir,
                                                                                   home: Path) -> None:
    w = project
    out = w.ok("install", "--agent", "cline")
    folder = home.joinpath(*USER_HOOKS)
    assert f"installed cline hooks (user) in {folder}" in out and "enabled in its settings" in out
    files = _hook_files(folder)
    assert sorted(files) == sorted(cline.EVENTS)
    program = " ".join(installed.hook_program())  # the interpreter the installed git-rewind runs
    for name, content in files.items():
        assert content == f"#!/bin/sh\n{cline.HEADER}\nexec {program} hook --agent cline\n".encode(), name
        assert os.stat(folder / name).st_mode & stat.S_IXUSR
    assert "already installed" in w.ok("install", "--agent", "cline")
    assert str(folder) in w.ok("status")
    w.ok("uninstall", "--agent", "cline")
    assert not (home / "Documents" / "Cline").exists()  # ~/Documents, a folder of the desktop's, stays


def test_a_project_install_runs_the_git_rewind_on_path_and_answers_where_there_is_none(project: Workdir) -> None:
    w = project
    w.ok("install", "--agent", "cline", "--scope", "project")
    folder = w.path / ".clinerules" / "hooks"
    assert _hook_files(folder) == {n: t.encode() for n, t in cline.AGENT.template().items()}
    env = {k: v for k, v in w.env.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = "/usr/bin:/bin"  # no git-rewind on it
    for name in cline.EVENTS:  # as the CLI runs it (its #! line: sh FILE) and as the extension does (executed)
        for command in (["sh", str(folder / name)], [str(folder / name)]):
            proc = subprocess.run(command, cwd=w.path, env=env, input=json.dumps(vscode(w.path, name)),
                                  capture_output=True, text=True, timeout=30)
            assert (proc.returncode, proc.stdout, proc.stderr) == (0, '{"cancel":false}\n', ""), (name, proc)
    assert w.git("for-each-ref", "refs/rewind/") == ""
    w.ok("uninstall", "--agent", "cline", "--scope", "project")
    assert not (w.path / ".clinerules").exists()


def test_the_installed_hook_file_checkpoints_when_cline_runs_it(project: Workdir, home: Path) -> None:
    w = project
    w.ok("install", "--agent", "cline")
    hook = home.joinpath(*USER_HOOKS, "TaskStart")
    proc = subprocess.run([str(hook)], cwd=w.path, env=w.env, input=json.dumps(cli(w.path, "agent_start")),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and json.loads(proc.stdout.splitlines()[-1])["cancel"] is False, proc
    assert w.git("for-each-ref", "--format=%(refname)", "refs/rewind/").split() == [f"refs/rewind/{SESSION}"]


def test_uninstall_leaves_the_users_own_hooks_and_files_byte_exact(project: Workdir, home: Path) -> None:
    w = project
    folder = w.path / ".clinerules" / "hooks"
    folder.mkdir(parents=True)
    (w.path / ".clinerules" / "style.md").write_text("# house rules\n")
    mine = {"TaskError": b"#!/bin/sh\necho '{\"cancel\":false}'\n", "PreToolUse.sh": b"#!/bin/sh\nexit 0\n"}
    for name, content in mine.items():
        (folder / name).write_bytes(content)
        (folder / name).chmod(0o750)
    w.ok("install", "--agent", "cline", "--scope", "project")
    assert sorted(_hook_files(folder)) == sorted([*cline.EVENTS, *mine])
    w.ok("uninstall", "--agent", "cline", "--scope", "project")
    assert _hook_files(folder) == mine
    assert {n: stat.S_IMODE(os.stat(folder / n).st_mode) for n in mine} == dict.fromkeys(mine, 0o750)
    assert (w.path / ".clinerules" / "style.md").read_text() == "# house rules\n"


def test_install_refuses_where_the_user_has_a_hook_of_that_name_and_writes_nothing(project: Workdir,
                                                                                   home: Path) -> None:
    w = project
    folder = home.joinpath(*USER_HOOKS)
    folder.mkdir(parents=True)
    (folder / "PostToolUse").write_bytes(b"#!/bin/sh\n./lint.sh\n")
    run = w.rewind("install", "--agent", "cline")
    assert run.returncode != 0 and "PostToolUse is not git-rewind's" in run.stderr, run
    assert _hook_files(folder) == {"PostToolUse": b"#!/bin/sh\n./lint.sh\n"}
    with pytest.raises(RewindError, match="one hook file per event"):
        install.install("cline", "user", None, str(home))


def test_a_hook_file_of_ours_the_user_changed_is_not_ours_any_more(project: Workdir, home: Path) -> None:
    w = project
    w.ok("install", "--agent", "cline")
    changed = home.joinpath(*USER_HOOKS, "PreCompact")
    changed.write_text(changed.read_text() + "echo extra\n")
    w.ok("uninstall", "--agent", "cline")
    assert _hook_files(home.joinpath(*USER_HOOKS)) == {"PreCompact": changed.read_bytes()}
    assert not cline.is_own_script(changed.read_bytes())


def test_an_older_install_by_another_git_rewind_is_recognised_and_replaced(project: Workdir, home: Path) -> None:
    w = project
    folder = home.joinpath(*USER_HOOKS)
    folder.mkdir(parents=True)
    for name in cline.EVENTS:
        (folder / name).write_text(cline.script("/opt/old/bin/git-rewind hook --agent cline"))
    assert ("cline", "user", str(folder)) in install.installed(None, str(home))
    w.ok("install", "--agent", "cline")
    assert all(b"/opt/old" not in c for c in _hook_files(folder).values())
    assert all(os.access(folder / n, os.X_OK) for n in cline.EVENTS)


def test_status_warns_of_our_hooks_in_a_folder_the_cli_also_reads(project: Workdir, home: Path) -> None:
    w = project
    w.ok("install", "--agent", "cline")
    extra = home / ".cline" / "hooks"
    extra.mkdir(parents=True)
    (extra / "PreToolUse").write_text(cline.script("git-rewind hook --agent cline"))
    assert cline.AGENT.also_loaded(str(w.path), str(home)) == [str(extra / "PreToolUse")]
    assert str(extra / "PreToolUse") in w.ok("status")


def test_an_undo_to_before_the_project_install_keeps_the_hook_files(project: Workdir) -> None:
    """The project's hook files are in the work tree: a restore to a checkpoint taken before `install` puts back
    the rest of .clinerules/ as it was and git-rewind's hook files as installed (a restore never uninstalls)."""
    w = project
    (w.path / ".clinerules").mkdir()
    (w.path / ".clinerules" / "style.md").write_text("# rules, first version\n")
    w.ok("snap", "-m", "before install")
    (w.path / ".clinerules" / "style.md").write_text("# rules, second version\n")
    w.ok("install", "--agent", "cline", "--scope", "project")
    folder = w.path / ".clinerules" / "hooks"
    installed_files = _hook_files(folder)
    out = w.ok("undo", "1", "--yes")
    assert f"kept git-rewind installed: its entries are back in {folder}" in out, out
    assert (w.path / ".clinerules" / "style.md").read_text() == "# rules, first version\n"
    assert _hook_files(folder) == installed_files
    assert all(os.access(folder / name, os.X_OK) for name in cline.EVENTS)


def test_a_hooks_folder_that_is_a_file_is_an_error_in_one_line_and_nothing_changes(project: Workdir,
                                                                                  home: Path) -> None:
    w = project
    (w.path / ".clinerules").write_text("rules kept in one file\n")
    run = w.rewind("install", "--agent", "cline", "--scope", "project")
    assert run.returncode != 0 and run.stderr.startswith("error: ") and len(run.stderr.splitlines()) == 1, run
    assert (w.path / ".clinerules").read_text() == "rules kept in one file\n"
    assert "not installed" in w.ok("uninstall", "--agent", "cline", "--scope", "project")
    assert not cline.AGENT.hooks_installed(str(w.path / ".clinerules" / "hooks"))
