"""Kilo Code CLI: our plugin's payloads (as Kilo 7.7.7 fed it, shared/agents/kilo-aider.md A) through the real
`git-rewind hook`, the plugin's install in one place only, and the conversation rewind against a stand-in
for Kilo's server (OpenCode's API: tests/helpers/opencodeserver.py; the real one: tests/test_e2e_kilo.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.opencodeserver import SESSION, FakeOpenCode, note
from helpers.opencodeserver import hook as plugin_hook
from helpers.workdir import Workdir

from git_rewind import agents
from git_rewind.agents import event, kilo, opencode

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = Path(".kilo") / "plugin" / "git-rewind.ts"


def payload(w: Workdir, name: str, **fields: Any) -> dict[str, Any]:
    """What the plugin sends in Kilo for NAME."""
    return {"event": name, "host": "kilo", "sessionID": SESSION, "directory": str(w.path), "worktree": str(w.path),
            "serverUrl": "http://127.0.0.1:4096/", **fields}


def hook(w: Workdir, data: dict[str, Any]) -> dict[str, Any]:
    """The real hook as our plugin runs it in Kilo (`--agent kilo`); its log entry."""
    return plugin_hook(w, data, "--agent", "kilo")


# payload → Event -------------------------------------------------------------------------------


def test_kilos_payloads_become_kilo_events(tmp_path: Path) -> None:
    base = {"host": "kilo", "sessionID": "ses_decf2997fffeTzPODn4Q5m8cmh", "directory": str(tmp_path),
            "worktree": str(tmp_path), "serverUrl": "http://127.0.0.1:4096/"}
    write = kilo.AGENT.parse({**base, "event": "tool.execute.before", "tool": "write", "callID": "call_f6b8d606e2",
                              "args": {"content": "hello from mock model\n", "filePath": str(tmp_path / "hello.txt")}})
    assert (write.agent, write.kind, write.tool_kind, write.paths, write.tool_use_id, write.change_chars) == (
        "kilo", event.PRE_TOOL, event.WRITE, [str(tmp_path / "hello.txt")], "call_f6b8d606e2", 22)
    bash = kilo.AGENT.parse({**base, "event": "tool.execute.after", "tool": "bash", "callID": "call_2",
                             "args": {"command": "echo hi > from_shell.txt", "description": "Write hi"}})
    assert (bash.kind, bash.tool_kind, bash.paths) == (event.POST_TOOL, event.SHELL, [])
    prompt = kilo.AGENT.parse({**base, "event": "chat.message", "messageID": "msg_2130d76ec", "agent": "code",
                               "prompt": "Please create the file. FILE=hello.txt"})
    assert (prompt.kind, prompt.prompt, prompt.prompt_id, prompt.agent) == (
        event.PROMPT, "Please create the file. FILE=hello.txt", "msg_2130d76ec", "kilo")
    kinds = {name: kilo.AGENT.parse({**base, "event": name}).kind for name in (
        "session.created", "session.idle", "session.drained", "file.edited")}
    assert kinds == {"session.created": event.SESSION_START, "session.idle": event.STOP,
                     "session.drained": event.OTHER, "file.edited": event.OTHER}
    # Kilo's own tools that are neither edits nor a shell are tools we do not know: no kind, no paths.
    other = kilo.AGENT.parse({**base, "event": "tool.execute.after", "tool": "background_process",
                              "args": {"command": "sleep 1"}})
    assert (other.tool_kind, other.paths) == (None, [])


def test_the_payload_says_kilo_and_a_plugin_without_host_is_opencodes() -> None:
    assert agents.detect({"event": "chat.message", "sessionID": "s", "host": "kilo"}, {}) == "kilo"
    assert agents.detect({"event": "chat.message", "sessionID": "s", "host": "opencode"}, {}) == "opencode"
    assert agents.detect({"event": "chat.message", "sessionID": "s"}, {"CLAUDECODE": "1"}) == "opencode"


@pytest.mark.parametrize("bad", [
    {"sessionID": 42}, {"sessionID": ["ses_x"]}, {"sessionID": None}, {"event": {"x": 1}, "sessionID": None},
    {"args": "not an object", "sessionID": None},
])
def test_a_payload_with_fields_of_the_wrong_type_gives_one_line_and_changes_nothing(agent_project: Workdir,
                                                                                    bad: dict[str, Any]) -> None:
    w = agent_project
    data = {**payload(w, "tool.execute.before", tool="edit", args={"filePath": "src/app.py"}), **bad}
    refs = w.git("for-each-ref")
    run = w.rewind("hook", "--agent", "kilo", input=json.dumps(data))
    assert run.returncode == 0 and run.stdout == "" and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "session" in run.stderr, run.stderr
    assert w.git("for-each-ref") == refs


def test_unknown_tools_and_fields_of_the_wrong_type_inside_args_are_skipped(agent_project: Workdir) -> None:
    w = agent_project
    assert hook(w, payload(w, "tool.execute.before", tool="board_post", args={"text": 1}))["action"] == "skip"
    entry = hook(w, payload(w, "tool.execute.before", tool="edit",
                            args={"filePath": 7, "oldString": ["x"], "newString": {"y": 1}}))
    assert entry["paths"] == [] and entry["action"] in ("checkpoint", "skip", "unchanged"), entry


# the real hook ---------------------------------------------------------------------------------


def test_a_kilo_session_through_the_hook_is_recorded_as_kilos(agent_project: Workdir) -> None:
    w = agent_project
    index = (w.path / ".git" / "index").read_bytes()
    assert hook(w, payload(w, "session.created"))["action"] == "checkpoint"
    prompt = payload(w, "chat.message", messageID="msg_p1", prompt="rewrite app")
    assert plugin_hook(w, prompt)["action"] == "checkpoint"  # without --agent: the payload's host says kilo
    w.write("src/app.py", "print('hello')\n# written by the agent's first tool\n")
    entry = hook(w, payload(w, "tool.execute.before", tool="edit", callID="call_1", args={
        "filePath": str(w.path / "src/app.py"), "oldString": "print('hello')", "newString": "x" * 80}))
    assert (entry["action"], entry["paths"], entry["tool"]) == ("checkpoint", ["src/app.py"], "edit")
    assert hook(w, payload(w, "tool.execute.after", tool="bash", args={"command": "ls"}))["action"] == "skip"
    prompt, edit = note(w, 2), note(w, 3)
    assert (prompt["agent"], prompt["trigger"], prompt["prompt"]) == ("kilo", "chat.message", "rewrite app")
    assert (edit["agent"], edit["conversation"]["tool_use_id"], edit["origins"]) == (
        "kilo", "call_1", {"src/app.py": "agent"})
    assert (w.path / ".git" / "index").read_bytes() == index
    run = w.rewind("undo", "1", "--code", "--yes")
    assert run.returncode == 0 and f"resume with: kilo -s {SESSION}" in run.stdout, run.stdout


def test_files_kilos_own_revert_rewrites_between_turns_are_not_the_agents(agent_project: Workdir) -> None:
    """Kilo's revert (`POST /session/{id}/revert`, the TUI's /undo) rewrites files from its own snapshot while the
    session is idle: no tool call reports them, so the next checkpoint sees them as changed outside a turn."""
    w = agent_project
    hook(w, payload(w, "chat.message", messageID="msg_p1", prompt="write it"))
    w.write("src/app.py", "print('by the agent')\n")
    assert hook(w, payload(w, "session.idle"))["action"] == "checkpoint"
    assert note(w, 2)["origins"] == {"src/app.py": "agent"}
    w.write("src/app.py", "print('hello')\n")  # what Kilo's revert writes back
    assert hook(w, payload(w, "chat.message", messageID="msg_p2", prompt="again"))["action"] == "checkpoint"
    assert note(w, 3)["origins"] == {"src/app.py": "outside"}


# install / uninstall: one place only ---------------------------------------------------------------


def test_the_plugin_under_hooks_is_the_shipped_one_with_kilos_name() -> None:
    shipped = (ROOT / "git_rewind" / "resources" / "opencode" / "git-rewind.ts").read_text()
    readable = (ROOT / "hooks" / "kilo" / "git-rewind.ts").read_text()
    assert readable == kilo.AGENT.shipped_plugin() == shipped.replace(
        'const AGENT = "opencode"', 'const AGENT = "kilo"', 1)
    assert readable != shipped and 'const AGENT = "kilo"' in readable
    assert not opencode.AGENT.is_own_plugin(readable) and not kilo.AGENT.is_own_plugin(shipped)


def test_install_at_project_scope_then_uninstall_leaves_nothing(project: Workdir) -> None:
    w = project
    before = w.state()
    out = w.ok("install", "--agent", "kilo", "--scope", "project")
    plugin = w.path / PLUGIN
    assert f"installed kilo hooks (project) in {plugin}" in out and "backed up" not in out
    assert plugin.read_text() == kilo.AGENT.shipped_plugin()  # a project's file: the git-rewind on PATH
    assert "already installed" in w.ok("install", "--agent", "kilo", "--scope", "project")
    status = w.ok("status")
    assert f"kilo         project  {plugin}" in status and "warning" not in status, status
    assert "removed" in w.ok("uninstall", "--agent", "kilo", "--scope", "project")
    assert not plugin.exists() and not plugin.parent.exists()
    assert w.state() == before
    assert "not installed" in w.ok("uninstall", "--agent", "kilo", "--scope", "project")


def test_a_users_own_plugin_of_that_name_is_backed_up_and_put_back(project: Workdir) -> None:
    w = project
    plugin = w.path / PLUGIN
    plugin.parent.mkdir(parents=True)
    plugin.write_text("export const Mine = async () => ({})\n")
    out = w.ok("install", "--agent", "kilo", "--scope", "project")
    assert "backed up" in out and kilo.AGENT.is_own_plugin(plugin.read_text())
    w.ok("uninstall", "--agent", "kilo", "--scope", "project")
    assert plugin.read_text() == "export const Mine = async () => ({})\n"
    assert [p.name for p in plugin.parent.iterdir()] == ["git-rewind.ts"]


def test_install_refuses_while_our_plugin_is_in_kilocode_and_status_warns(project: Workdir) -> None:
    """Kilo loads .kilo/plugin/ and .kilocode/plugin/ both: a second copy would run every hook twice."""
    w = project
    other = w.path / ".kilocode" / "plugin" / "rewind.ts"
    other.parent.mkdir(parents=True)
    other.write_text(kilo.AGENT.render_plugin(["/opt/git-rewind/bin/git-rewind"]))
    state = w.state()
    run = w.rewind("install", "--agent", "kilo", "--scope", "project")
    assert run.returncode != 0 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert str(other) in run.stderr and "twice" in run.stderr
    assert not (w.path / ".kilo").exists() and w.state() == state
    assert "warning" not in w.ok("status")  # one copy, wherever it is, runs once
    # One more, put there by hand: status warns.
    (w.path / PLUGIN).parent.mkdir(parents=True)
    (w.path / PLUGIN).write_text(kilo.AGENT.shipped_plugin())
    status = w.ok("status")
    assert f"warning: kilo also loads git-rewind's hooks from {other}: every hook runs twice" in status, status
    assert json.loads(w.ok("status", "--json"))["duplicates"] == [{"agent": "kilo", "file": str(other)}]
    (w.path / PLUGIN).unlink()
    # Someone else's plugin there is no reason to refuse.
    other.write_text("export const Other = async () => ({})\n")
    w.ok("install", "--agent", "kilo", "--scope", "project")
    assert "warning" not in w.ok("status")


def test_user_scope_goes_to_xdg_config_home_and_counts_kilos_other_user_folders(project: Workdir, home: Path,
                                                                                tmp_path: Path) -> None:
    w = project
    assert kilo.AGENT.settings_file("user", None, str(home)) == str(home / ".config" / "kilo" / "plugin" /
                                                                    "git-rewind.ts")
    config = tmp_path / "xdg"
    extra = tmp_path / "extra-kilo"
    env = {"XDG_CONFIG_HOME": str(config), "KILO_CONFIG_DIR": str(extra)}
    # $KILO_CONFIG_DIR is a further folder Kilo loads, not a replacement: ours there would run twice.
    stray = extra / "plugins" / "git-rewind.ts"
    stray.parent.mkdir(parents=True)
    stray.write_text(kilo.AGENT.shipped_plugin())
    run = w.rewind("install", "--agent", "kilo", env=env)
    assert run.returncode != 0 and str(stray) in run.stderr, run.stderr
    stray.unlink()
    for folder in (home / ".kilocode" / "plugin", home / ".kilo" / "plugin"):
        folder.mkdir(parents=True)
        (folder / "git-rewind.ts").write_text(kilo.AGENT.shipped_plugin())
        run = w.rewind("install", "--agent", "kilo", env=env)
        assert run.returncode != 0 and str(folder / "git-rewind.ts") in run.stderr, run.stderr
        (folder / "git-rewind.ts").unlink()
    out = w.ok("install", "--agent", "kilo", env=env)
    mine = config / "kilo" / "plugin" / "git-rewind.ts"
    assert str(mine) in out and kilo.AGENT.is_own_plugin(mine.read_text())
    assert '"git-rewind"]' not in mine.read_text()  # user scope: this git-rewind by absolute path
    assert not (home / ".config").exists()
    # Both scopes: allowed (a team's project file, a person's user install), but said.
    out = w.ok("install", "--agent", "kilo", "--scope", "project", env=env)
    assert f"also installed at user scope ({mine})" in out and "twice" in out, out
    assert f"warning: kilo also loads git-rewind's hooks from {w.path / PLUGIN}" in w.ok("status", env=env)
    w.ok("uninstall", "--agent", "kilo", env=env)
    assert not mine.exists()


def test_an_opencode_install_is_not_kilos_and_kilo_never_writes_opencodes_folder(project: Workdir) -> None:
    w = project
    w.ok("install", "--agent", "opencode", "--scope", "project")
    w.ok("install", "--agent", "kilo", "--scope", "project")
    assert (w.path / ".opencode" / "plugin" / "git-rewind.ts").read_text() == opencode.AGENT.shipped_plugin()
    assert (w.path / PLUGIN).read_text() == kilo.AGENT.shipped_plugin()
    status = w.ok("status")
    assert "opencode" in status and f"kilo         project  {w.path / PLUGIN}" in status
    w.ok("uninstall", "--agent", "kilo", "--scope", "project")
    assert (w.path / ".opencode" / "plugin" / "git-rewind.ts").exists()


# conversation rewind ---------------------------------------------------------------------------


@pytest.fixture
def fake() -> Any:
    from helpers.opencodeserver import MESSAGES

    server = FakeOpenCode(MESSAGES)
    yield server
    server.close()


def test_undo_full_forks_through_kilos_server_and_names_kilos_resume(agent_project: Workdir,
                                                                     fake: FakeOpenCode) -> None:
    w = agent_project
    hook(w, {**payload(w, "chat.message", messageID="msg_u1", prompt="first prompt"), "serverUrl": fake.url})
    w.write("src/app.py", "changed\n")
    out = w.ok("undo", "1", "--full", "--yes", env={"PATH": "/usr/bin:/bin"})  # no kilo needed: it answers
    assert fake.forks == [{"messageID": "msg_u1"}]
    assert "resume with: kilo -s ses_fork1" in out and "new Kilo session ses_fork1" in out, out
    safety = w.git("rev-parse", f"refs/rewind/{SESSION}").strip()
    assert json.loads(w.git("show", f"{safety}^2:kilo-{SESSION}.json"))["info"]["id"] == SESSION
    out = w.ok("redo", "--yes")
    assert f"resume with: kilo -s {SESSION}" in out and "new Kilo session; the original" in out, out


def test_undo_conversation_without_a_server_or_kilo_fails_in_one_line_naming_kilo(agent_project: Workdir) -> None:
    w = agent_project
    hook(w, {**payload(w, "chat.message", messageID="msg_1", prompt="p"), "serverUrl": "http://127.0.0.1:9/"})
    refs = w.git("for-each-ref")
    state = w.state()
    run = w.rewind("undo", "1", "--full", "--yes", env={"PATH": "/usr/bin:/bin"})
    assert run.returncode != 0 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "Kilo's server is not running and `kilo` is not on PATH" in run.stderr, run.stderr
    assert w.git("for-each-ref") == refs and w.state() == state


def test_a_kilo_conversation_is_not_handed_over(agent_project: Workdir) -> None:
    refusal = kilo.AGENT.handover_refusal()
    assert refusal.startswith("handing over a Kilo conversation is not available") and "--" not in refusal
    with pytest.raises(Exception, match="Kilo keeps its sessions in its own database"):
        kilo.AGENT.adopt_transcript(b"{}\n", SESSION, str(agent_project.path))


def test_an_undo_to_a_checkpoint_with_our_plugin_in_kilocode_does_not_put_a_second_copy_back(
        agent_project: Workdir) -> None:
    """A restore puts back our own plugin where it took it out, unless Kilo would then load two copies: the
    undo still succeeds, with the one copy the checkpoint had."""
    w = agent_project
    other = w.path / ".kilocode" / "plugin" / "git-rewind.ts"
    other.parent.mkdir(parents=True)
    other.write_text(kilo.AGENT.shipped_plugin())
    w.ok("snap", "-m", "with the plugin in .kilocode")
    other.unlink()
    w.ok("install", "--agent", "kilo", "--scope", "project")
    run = w.rewind("undo", "1", "--yes")
    assert run.returncode == 0, run.stderr
    assert other.read_text() == kilo.AGENT.shipped_plugin() and not (w.path / PLUGIN).exists()
    assert "warning" not in w.ok("status")
