"""OpenCode: our plugin's payloads through the real `git-rewind hook`, the plugin's install, and the
conversation rewind against a stand-in for OpenCode's server (tests/helpers/opencodeserver.py; the real
one: tests/test_e2e_opencode.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.opencodeserver import MESSAGES, SESSION, FakeOpenCode, hook, note
from helpers.workdir import Workdir

from git_rewind import agents
from git_rewind.agents import event, opencode

ROOT = Path(__file__).resolve().parent.parent


def payload(w: Workdir, name: str, **fields: Any) -> dict[str, Any]:
    """What the plugin sends for NAME (shared/agents/other-agents.md §4.1, observed live)."""
    return {"event": name, "sessionID": SESSION, "directory": str(w.path), "worktree": str(w.path),
            "serverUrl": "http://localhost:4096/", **fields}


# payload → Event -------------------------------------------------------------------------------


def test_plugin_payloads_become_events(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("x" * 10)
    base = {"sessionID": "ses_a", "directory": str(tmp_path), "worktree": str(tmp_path),
            "serverUrl": "http://127.0.0.1:4096/"}
    write = opencode.AGENT.parse({**base, "event": "tool.execute.before", "tool": "write", "callID": "call_1",
                            "args": {"filePath": str(tmp_path / "old.txt"), "content": "y" * 70}})
    assert (write.kind, write.tool, write.tool_kind, write.paths, write.tool_use_id, write.change_chars) == (
        event.PRE_TOOL, "write", event.WRITE, [str(tmp_path / "old.txt")], "call_1", 70)
    assert (write.session, write.cwd, write.agent) == ("ses_a", str(tmp_path), "opencode")
    edit = opencode.AGENT.parse({**base, "event": "tool.execute.before", "tool": "edit", "callID": "call_2",
                           "args": {"filePath": "a.py", "oldString": "print(1)", "newString": "print(22)"}})
    assert (edit.tool_kind, edit.paths, edit.change_chars) == (event.EDIT, ["a.py"], 2)
    bash = opencode.AGENT.parse({**base, "event": "tool.execute.after", "tool": "bash", "callID": "call_3",
                           "args": {"command": "make"}})
    assert (bash.kind, bash.tool_kind, bash.paths) == (event.POST_TOOL, event.SHELL, [])
    prompt = opencode.AGENT.parse({**base, "event": "chat.message", "messageID": "msg_1", "prompt": "fix it"})
    assert (prompt.kind, prompt.prompt, prompt.prompt_id) == (event.PROMPT, "fix it", "msg_1")
    position = prompt.conversation()
    assert position is not None
    conv = position.to_json()
    assert (conv["transcript"], conv["prompt_id"], conv["server"], conv["directory"]) == (
        None, "msg_1", "http://127.0.0.1:4096/", str(tmp_path))
    kinds = {name: opencode.AGENT.parse({**base, "event": name}).kind for name in (
        "session.created", "session.idle", "experimental.session.compacting", "session.compacted")}
    assert kinds == {"session.created": event.SESSION_START, "session.idle": event.STOP,
                     "experimental.session.compacting": event.PRE_COMPACT, "session.compacted": event.OTHER}
    fork = opencode.AGENT.parse({**base, "event": "session.created", "parentID": "ses_0"})
    assert fork.source == "fork"


def test_a_patch_names_every_file_it_touches(tmp_path: Path) -> None:
    patch = ("*** Begin Patch\n*** Add File: new.py\n+x\n*** Update File: a.py\n*** Move to: b.py\n"
             "*** Delete File: c.py\n*** End Patch\n")
    e = opencode.AGENT.parse({"event": "tool.execute.before", "sessionID": "s", "directory": str(tmp_path),
                        "tool": "patch", "args": {"patchText": patch}})
    assert (e.paths, e.tool_kind) == (["new.py", "a.py", "b.py", "c.py"], event.WRITE)


def test_the_payload_shape_says_opencode_without_the_agent_option() -> None:
    assert agents.detect({"event": "chat.message", "sessionID": "s"}, {}) == "opencode"
    assert agents.detect({"event": "chat.message", "sessionID": "s"}, {"CLAUDECODE": "1"}) == "opencode"


# the real hook ---------------------------------------------------------------------------------


def test_a_session_through_the_hook_checkpoints_start_prompt_and_edit(agent_project: Workdir) -> None:
    w = agent_project
    index = (w.path / ".git" / "index").read_bytes()
    assert hook(w, payload(w, "session.created"))["action"] == "checkpoint"
    assert hook(w, payload(w, "chat.message", messageID="msg_p1", prompt="rewrite app"))["action"] == "checkpoint"
    w.write("src/app.py", "print('hello')\n# written by the agent's first tool\n")
    entry = hook(w, payload(w, "tool.execute.before", tool="edit", callID="call_1", args={
        "filePath": str(w.path / "src/app.py"), "oldString": "print('hello')", "newString": "x" * 80}))
    assert (entry["action"], entry["paths"], entry["tool"]) == ("checkpoint", ["src/app.py"], "edit")
    assert hook(w, payload(w, "tool.execute.after", tool="bash", args={"command": "ls"}))["action"] == "skip"
    assert hook(w, payload(w, "session.idle"))["action"] == "unchanged"  # the turn end: nothing new since the edit
    prompt, edit = note(w, 2), note(w, 3)
    assert (prompt["trigger"], prompt["prompt"], prompt["conversation"]["prompt_id"]) == (
        "chat.message", "rewrite app", "msg_p1")
    assert edit["conversation"]["tool_use_id"] == "call_1" and edit["prompt"] == "rewrite app"
    assert edit["conversation"]["server"] == "http://localhost:4096/"
    assert edit["conversation"]["directory"] == str(w.path)
    assert (w.path / ".git" / "index").read_bytes() == index


def test_resume_hint_is_opencodes_open_command(agent_project: Workdir) -> None:
    w = agent_project
    hook(w, payload(w, "chat.message", messageID="msg_p1", prompt="p"))
    run = w.rewind("undo", "1", "--code", "--yes")
    assert run.returncode == 0 and f"resume with: opencode -s {SESSION}" in run.stdout, run.stdout


# install / uninstall ---------------------------------------------------------------------------


def test_the_plugin_under_hooks_is_the_one_install_copies() -> None:
    shipped = (ROOT / "git_rewind" / "resources" / "opencode" / "git-rewind.ts").read_bytes()
    assert (ROOT / "hooks" / "opencode" / "git-rewind.ts").read_bytes() == shipped
    assert opencode._PROGRAM_LINE in shipped.decode()


def test_install_at_project_scope_then_uninstall_leaves_nothing(project: Workdir) -> None:
    w = project
    out = w.ok("install", "--agent", "opencode", "--scope", "project")
    plugin = w.path / ".opencode" / "plugin" / "git-rewind.ts"
    assert str(plugin) in out
    text = plugin.read_text()
    line = next(x for x in text.splitlines() if x.startswith("const PROGRAM"))
    program = json.loads(line.split("=", 1)[1].split("//")[0])
    assert program == ["git-rewind"] and text == opencode.AGENT.shipped_plugin()  # a project's file: found on PATH
    assert opencode.AGENT.is_own_plugin(text)
    assert "already installed" in w.ok("install", "--agent", "opencode", "--scope", "project")
    assert plugin.read_text() == text
    status = w.ok("status")
    assert "opencode" in status and str(plugin) in status
    assert "removed" in w.ok("uninstall", "--agent", "opencode", "--scope", "project")
    assert not plugin.exists() and not plugin.parent.exists()
    assert "not installed" in w.ok("uninstall", "--agent", "opencode", "--scope", "project")


def test_user_scope_honours_xdg_config_home_and_backs_up_a_file_of_that_name(project: Workdir, home: Path,
                                                                               tmp_path: Path) -> None:
    w = project
    config = tmp_path / "xdg"
    env = {"XDG_CONFIG_HOME": str(config)}
    mine = config / "opencode" / "plugin" / "git-rewind.ts"
    mine.parent.mkdir(parents=True)
    mine.write_text("export const Mine = async () => ({})\n")
    out = w.ok("install", "--agent", "opencode", env=env)
    assert f"backed up {mine}" in out or "backed up" in out, out
    assert opencode.AGENT.is_own_plugin(mine.read_text())
    assert (mine.parent / "git-rewind.ts.git-rewind-backup").read_text().startswith("export const Mine")
    assert not (home / ".config" / "opencode").exists()
    w.ok("uninstall", "--agent", "opencode", env=env)
    assert mine.read_text() == "export const Mine = async () => ({})\n"
    assert sorted(p.name for p in mine.parent.iterdir()) == ["git-rewind.ts"]


def test_a_plugin_the_user_changed_is_left_alone_by_uninstall(project: Workdir) -> None:
    w = project
    w.ok("install", "--agent", "opencode", "--scope", "project")
    plugin = w.path / ".opencode" / "plugin" / "git-rewind.ts"
    plugin.write_text(plugin.read_text() + "// my change\n")
    run = w.rewind("uninstall", "--agent", "opencode", "--scope", "project")
    assert run.returncode != 0 and "left alone" in run.stderr
    assert plugin.read_text().endswith("// my change\n")


def test_an_install_from_another_git_rewind_is_replaced_not_backed_up(project: Workdir) -> None:
    w = project
    plugin = w.path / ".opencode" / "plugin" / "git-rewind.ts"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(opencode.AGENT.render_plugin(["/old/venv/bin/git-rewind"]))
    out = w.ok("install", "--agent", "opencode", "--scope", "project")
    assert "backed up" not in out and "/old/venv" not in plugin.read_text()
    assert not list(plugin.parent.glob("*backup*"))


def test_the_plugin_an_earlier_git_rewind_installed_is_still_ours(project: Workdir) -> None:
    """Installed before the plugin served Kilo too: an install replaces it (no backup), status lists it,
    uninstall removes it."""
    w = project
    earlier = (ROOT / "tests" / "samples" / "opencode" / "git-rewind-1.ts").read_text()
    assert earlier != opencode.AGENT.shipped_plugin() and "AGENT" not in earlier
    plugin = w.path / ".opencode" / "plugin" / "git-rewind.ts"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(earlier.replace('["git-rewind"]', '["/old/bin/git-rewind"]', 1))
    assert str(plugin) in w.ok("status")
    out = w.ok("install", "--agent", "opencode", "--scope", "project")
    assert "backed up" not in out and plugin.read_text() == opencode.AGENT.shipped_plugin()
    plugin.write_text(earlier)
    assert "removed" in w.ok("uninstall", "--agent", "opencode", "--scope", "project")
    assert not plugin.parent.exists()


# conversation rewind against a stand-in server --------------------------------------------------


@pytest.fixture
def fake() -> Any:
    server = FakeOpenCode(MESSAGES)
    yield server
    server.close()


def session_with_checkpoints(w: Workdir, url: str) -> None:
    """#1 the first prompt, #2 before the edit call_e."""
    def send(name: str, **fields: Any) -> None:
        hook(w, {**payload(w, name, **fields), "serverUrl": url})

    send("chat.message", messageID="msg_u1", prompt="first prompt")
    w.write("src/app.py", "print('hello')\n# as the write call_w left it\n")
    send("tool.execute.before", tool="edit", callID="call_e",
         args={"filePath": str(w.path / "src/app.py"), "oldString": "print('hello')", "newString": "y" * 80})
    (w.path / "src/app.py").write_text("y" * 80 + "\n")


def test_undo_full_forks_before_the_prompt_and_keeps_the_conversation_in_git(agent_project: Workdir,
                                                                              fake: FakeOpenCode) -> None:
    w = agent_project
    session_with_checkpoints(w, fake.url)
    out = w.ok("undo", "1", "--full", "--yes", env={"PATH": "/usr/bin:/bin"})  # no opencode needed: it answers
    assert fake.forks == [{"messageID": "msg_u1"}]
    assert "resume with: opencode -s ses_fork1" in out and "first prompt" in out and "is unchanged" in out, out
    assert (w.path / "src/app.py").read_text() == "print('hello')\n"  # as at the first prompt
    assert all(q == "directory=" + str(w.path).replace("/", "%2F") for q in fake.queries), fake.queries
    safety = w.git("rev-parse", f"refs/rewind/{SESSION}").strip()
    kept = json.loads(w.git("show", f"{safety}^2:opencode-{SESSION}.json"))
    assert kept["messages"] == MESSAGES
    assert note(w, 1)["conversation"]["message_uuid"] == "msg_u1"
    out = w.ok("redo", "--yes")
    assert f"resume with: opencode -s {SESSION}" in out and "never changed" in out, out
    assert (w.path / "src/app.py").read_text() == "y" * 80 + "\n"


def test_undo_conversation_of_a_tool_checkpoint_forks_at_the_message_holding_the_call(
        agent_project: Workdir, fake: FakeOpenCode) -> None:
    w = agent_project
    session_with_checkpoints(w, fake.url)
    out = w.ok("undo", "2", "--conversation", "--yes")
    assert fake.forks == [{"messageID": "msg_a2"}]
    assert "just before the edit call (2 messages kept)" in out, out
    assert (w.path / "src/app.py").read_text() == "y" * 80 + "\n"  # --conversation: the files stay


def test_an_unknown_message_fails_in_one_sentence_and_changes_nothing(agent_project: Workdir,
                                                                      fake: FakeOpenCode) -> None:
    w = agent_project
    session_with_checkpoints(w, fake.url)
    fake.messages = MESSAGES[1:]  # the first prompt is gone (e.g. OpenCode's own /undo purged it)
    refs = w.git("for-each-ref")
    state = w.state()
    run = w.rewind("undo", "1", "--full", "--yes")
    assert run.returncode != 0 and "msg_u1" in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert fake.forks == [] and w.git("for-each-ref") == refs and w.state() == state


def test_undo_conversation_fails_cleanly_when_opencode_cannot_be_reached(agent_project: Workdir) -> None:
    """No server at the recorded URL and no `opencode` on PATH: one sentence, nothing changed."""
    w = agent_project
    hook(w, {**payload(w, "chat.message", messageID="msg_1", prompt="p"), "serverUrl": "http://127.0.0.1:9/"})
    refs = w.git("for-each-ref")
    state = w.state()
    run = w.rewind("undo", "1", "--full", "--yes", env={"PATH": "/usr/bin:/bin"})
    assert run.returncode != 0
    assert "opencode" in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert w.git("for-each-ref") == refs and w.state() == state


def test_dry_run_shows_the_cut_and_forks_nothing(agent_project: Workdir, fake: FakeOpenCode) -> None:
    w = agent_project
    session_with_checkpoints(w, fake.url)
    state = w.state()
    out = w.ok("undo", "2", "--full", "--dry-run")
    assert "conversation: cut just before the edit call, as a new session" in out, out
    assert fake.forks == [] and w.state() == state


@pytest.mark.parametrize(("url", "allowed"), [
    ("http://127.0.0.1:4096", True), ("http://localhost:4096/", True), ("http://[::1]:4096", True),
    ("http://127.3.0.1:80", True), ("https://127.0.0.1", True),
    ("http://10.0.0.5:4096", False), ("http://example.com", False), ("http://169.254.169.254/latest", False),
    ("file:///etc/passwd", False), ("http://127.0.0.1.evil.example/", False), ("http://[::1", False),
])
def test_a_note_sends_the_rewind_only_to_a_server_on_loopback(url: str, allowed: bool) -> None:
    """The note records the server the plugin saw; a note is data, so any other address is never asked."""
    assert opencode.on_loopback(url) is allowed
