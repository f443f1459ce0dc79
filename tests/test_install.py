"""`git rewind install / uninstall --agent …`: our hook entries in agents' settings files, and nothing else.

A user installs the hooks for Claude Code or Droid at user, project or local scope, into files
that may already hold their own settings and hooks; installs again; runs the hook the agent
would run, with the agent's sparse PATH; and uninstalls, getting back what they had.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import installed
from helpers.workdir import Workdir

from git_rewind import agents
from git_rewind.agents import install

ROOT = Path(__file__).resolve().parent.parent
# SessionEnd (reason "clear") and PreCompact: a checkpoint before the conversation is wiped or summarised.
EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd", "PreCompact"]
# Claude Code reports a Bash command that exited non-zero as PostToolUseFailure, not PostToolUse.
CLAUDE_EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop",
                 "SessionEnd", "PreCompact"]
AGENT_EVENTS = {"claude-code": CLAUDE_EVENTS, "droid": EVENTS}

# (agent, scope) → the settings file, from the user's home (~) or the project (.)
TARGETS = {
    ("claude-code", "user"): "~/.claude/settings.json",
    ("claude-code", "project"): "./.claude/settings.json",
    ("claude-code", "local"): "./.claude/settings.local.json",
    ("droid", "user"): "~/.factory/hooks.json",
    ("droid", "project"): "./.factory/hooks.json",
    ("gemini", "user"): "~/.gemini/settings.json",
    ("gemini", "project"): "./.gemini/settings.json",
    ("copilot", "user"): "~/.copilot/hooks/git-rewind.json",
    ("copilot", "project"): "./.github/hooks/git-rewind.json",
    ("qwen", "user"): "~/.qwen/settings.json",
    ("qwen", "project"): "./.qwen/settings.json",
}

# What a user already had: their own settings and their own hooks on the events we use too.
CLAUDE_SETTINGS = """{
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": []},
    "env": {"FOO": "bar"},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/audit.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]
    }
}
"""
DROID_HOOKS = """{
  "PostToolUse": [{"matcher": "Execute", "hooks": [{"type": "command", "command": "./lint.sh"}]}],
  "Notification": [{"hooks": [{"type": "command", "command": "say hi"}]}]
}
"""


def settings_path(w: Workdir, home: Path, agent: str, scope: str) -> Path:
    where = TARGETS[(agent, scope)]
    return (home if where.startswith("~") else w.path) / where[2:]


def hook_groups(data: dict[str, Any], agent: str) -> dict[str, Any]:
    """The event → groups mapping: under "hooks" for Claude Code, at the top level for Droid."""
    return data if agent == "droid" else data["hooks"]


def ours(data: dict[str, Any], agent: str) -> dict[str, list[dict[str, Any]]]:
    """Every hook of ours, by event."""
    return {event: [h for g in groups for h in g["hooks"] if install.is_own(h)]
            for event, groups in hook_groups(data, agent).items()
            if isinstance(groups, list) and any(install.is_own(h) for g in groups for h in g["hooks"])}


def without_ours(data: dict[str, Any], agent: str) -> dict[str, Any]:
    """DATA with our hooks (and the groups and events they alone made) taken out, by hand."""
    data = json.loads(json.dumps(data))
    hooks = hook_groups(data, agent)
    for event in list(hooks):
        if not isinstance(hooks[event], list):
            continue
        groups = [g for g in hooks[event] if not all(install.is_own(h) for h in g["hooks"])]
        if groups:
            hooks[event] = groups
        else:
            del hooks[event]
    if agent == "claude-code" and not data["hooks"]:
        del data["hooks"]
    return data


def run_hook_command(w: Workdir, command: str, payload: dict[str, Any],
                     path: str = "/usr/bin:/bin") -> subprocess.CompletedProcess[str]:
    """Run COMMAND the way the agent does: `sh -c`, in the project, with a sparse PATH (just /usr/bin:/bin)."""
    env = {**w.env, "PATH": path}
    for key in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "CLAUDECODE", "FACTORY_PROJECT_DIR", "DROID_PROJECT_DIR"):
        env.pop(key, None)
    return subprocess.run(["sh", "-c", command], cwd=w.path, env=env, input=json.dumps(payload),
                          capture_output=True, text=True, timeout=60)


def test_the_files_under_hooks_are_what_install_writes() -> None:
    claude = json.loads((ROOT / "hooks" / "claude-code" / "settings.json").read_text())
    droid = json.loads((ROOT / "hooks" / "droid" / "hooks.json").read_text())
    assert claude == install.template("claude-code")
    assert droid == install.template("droid")
    assert list(claude) == ["hooks"] and list(claude["hooks"]) == CLAUDE_EVENTS
    assert list(droid) == EVENTS  # Droid ignores a "hooks" wrapper in hooks.json
    assert claude["hooks"]["PreToolUse"][0]["matcher"] == "Write|Edit|MultiEdit|NotebookEdit"
    assert claude["hooks"]["PostToolUse"][0]["matcher"] == "Bash"
    assert claude["hooks"]["PostToolUseFailure"][0]["matcher"] == "Bash"
    assert droid["PreToolUse"][0]["matcher"] == "Create|Edit|MultiEdit|ApplyPatch"
    assert droid["PostToolUse"][0]["matcher"] == "Execute"


def test_the_readable_copies_under_hooks_are_generated_from_the_package(tmp_path: Path) -> None:
    """hooks/<agent>/ is what `python -m git_rewind.resources.readable` writes, file for file."""
    from git_rewind.resources import readable

    assert readable.differences(str(ROOT / "hooks")) == [], "run: python -m git_rewind.resources.readable"
    assert readable.write(str(tmp_path)) == sorted(readable.files())  # from nothing: every file
    assert readable.differences(str(tmp_path)) == [] and readable.write(str(tmp_path)) == []
    (tmp_path / "claude-code" / "commands" / "resume.md").write_text("edited by hand\n")
    (tmp_path / "droid" / "stale.json").write_text("{}")
    assert readable.differences(str(tmp_path)) == ["claude-code/commands/resume.md", "droid/stale.json"]
    assert readable.main(["--check", str(tmp_path)]) == 1
    assert readable.main([str(tmp_path)]) == 0 and readable.differences(str(tmp_path)) == []


@pytest.mark.parametrize(("agent", "scope"), sorted(TARGETS))
def test_install_into_a_fresh_scope_then_uninstall_leaves_nothing(project: Workdir, home: Path, agent: str,
                                                                 scope: str) -> None:
    w = project
    path = settings_path(w, home, agent, scope)
    user = w.user_state()
    out = w.ok("install", "--agent", agent, "--scope", scope)
    assert f"installed {agent} hooks ({scope}) in {path}" in out
    assert "backed up" not in out  # there was nothing to back up
    assert not Path(f"{path}{install.BACKUP_SUFFIX}").exists()

    data = json.loads(path.read_text())
    if scope == "project":  # a file the team commits: exactly the readable copy, the shared command
        assert f"hook command: {installed.hook_command(agent, scope=scope)}" in out
        assert data == install.template(agent)
    else:
        command = installed.hook_command(agent)
        assert f"hook command: {command}" in out
        assert f" hook --agent {agent}" in command  # Copilot's ends `|| true`: its tools are denied otherwise
        program = shlex.split(command)[0]
        assert os.path.isabs(program) and os.access(program, os.X_OK)  # no reliance on the agent's PATH
        # Exactly the template, with the absolute command in place of the shared one.
        shared = agents.get(agent).command(AGENT_EVENTS.get(agent, EVENTS)[0], None)
        readable = json.loads(json.dumps(data).replace(json.dumps(command)[1:-1], json.dumps(shared)[1:-1]))
        assert readable == install.template(agent)

    status = w.ok("status")
    assert f"  {agent:<12} {scope:<8} {path}" in status
    assert json.loads(w.ok("status", "--json"))["installed"] == [{"agent": agent, "scope": scope,
                                                                  "file": str(path)}]
    if scope != "user":  # a project file shows only there; the user's shows everywhere
        assert "hooks installed: none" in w.ok("status", cwd=home)

    assert f"removed {path}" in w.ok("uninstall", "--agent", agent, "--scope", scope)
    assert not path.exists() and not path.parent.exists()  # we created the directory too
    assert "hooks installed: none" in w.ok("status")
    assert w.user_state() == user  # nothing of the user's git state changed, and no stray files appeared


@pytest.mark.parametrize(("agent", "scope", "original"), [
    ("claude-code", "user", CLAUDE_SETTINGS),
    ("claude-code", "local", CLAUDE_SETTINGS),
    ("droid", "project", DROID_HOOKS),
])
def test_install_keeps_every_other_setting_and_uninstall_restores_the_exact_bytes(
        project: Workdir, home: Path, agent: str, scope: str, original: str) -> None:
    w = project
    path = settings_path(w, home, agent, scope)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(original)
    path.chmod(0o600)
    backup = Path(f"{path}{install.BACKUP_SUFFIX}")

    out = w.ok("install", "--agent", agent, "--scope", scope)
    assert f"backed up {path} to {backup}" in out
    assert backup.read_text() == original
    installed = json.loads(path.read_text())
    assert without_ours(installed, agent) == json.loads(original)  # everything else as it was
    assert "hooks" not in installed or agent == "claude-code"
    mine = ours(installed, agent)
    assert sorted(mine) == sorted(AGENT_EVENTS[agent]) and all(len(hooks) == 1 for hooks in mine.values())
    # Other people's hooks on the same events keep running, first.
    groups = hook_groups(installed, agent)
    theirs = json.loads(original)
    for event, their_groups in hook_groups(theirs, agent).items():
        assert groups[event][:len(their_groups)] == their_groups
    assert path.stat().st_mode & 0o777 == 0o600  # a private file stays private

    snapshot = path.read_bytes()
    assert w.ok("install", "--agent", agent, "--scope", scope).startswith(f"already installed: {path}")
    assert path.read_bytes() == snapshot and backup.read_text() == original

    w.ok("uninstall", "--agent", agent, "--scope", scope)
    assert path.read_text() == original
    assert "not installed" in w.ok("uninstall", "--agent", agent, "--scope", scope)
    assert path.read_text() == original


def test_uninstall_after_the_user_changed_the_file_removes_only_ours(project: Workdir, home: Path) -> None:
    w = project
    path = settings_path(w, home, "claude-code", "project")
    path.parent.mkdir()
    path.write_text(CLAUDE_SETTINGS)
    w.ok("install", "--agent", "claude-code", "--scope", "project")
    data = json.loads(path.read_text())
    data["theme"] = "dark"  # the user, later, by hand or through the agent's UI
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "make lint"}]})
    path.write_text(json.dumps(data, indent=4))

    w.ok("uninstall", "--agent", "claude-code", "--scope", "project")
    expected = json.loads(CLAUDE_SETTINGS)
    expected["theme"] = "dark"
    expected["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "make lint"}]})
    assert json.loads(path.read_text()) == expected
    assert Path(f"{path}{install.BACKUP_SUFFIX}").read_text() == CLAUDE_SETTINGS  # the backup is never rewritten


@pytest.mark.parametrize("original", ['{"hooks": {}, "model": "opus"}\n',
                                      '{"model": "opus", "hooks": {"Stop": []}}\n'])
def test_uninstall_restores_empty_hook_containers_the_user_had(project: Workdir, home: Path, original: str) -> None:
    w = project
    path = settings_path(w, home, "claude-code", "user")
    path.parent.mkdir()
    path.write_text(original)
    w.ok("install", "--agent", "claude-code")
    w.ok("uninstall", "--agent", "claude-code")
    assert json.loads(path.read_text()) == json.loads(original)
    assert path.read_text() == original


def test_a_symlinked_settings_file_is_edited_through_its_link(project: Workdir, home: Path, tmp_path: Path) -> None:
    """Settings kept in a dotfiles repository and linked into ~/.claude stay linked."""
    w = project
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude.json"
    real.write_text(CLAUDE_SETTINGS)
    link = settings_path(w, home, "claude-code", "user")
    link.parent.mkdir()
    link.symlink_to(real)
    w.ok("install", "--agent", "claude-code")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert sorted(ours(json.loads(real.read_text()), "claude-code")) == sorted(CLAUDE_EVENTS)
    w.ok("uninstall", "--agent", "claude-code")
    assert link.is_symlink() and real.read_text() == CLAUDE_SETTINGS


@pytest.mark.parametrize("command", [
    "/old/venv/bin/git-rewind hook --agent claude-code",
    "'/Users/me/Library/Application Support/pipx/git-rewind' hook --agent claude-code",
    "/usr/bin/python3 -m git_rewind hook --agent claude-code",
    "git-rewind hook",
])
def test_an_earlier_install_from_elsewhere_is_recognised_and_replaced(project: Workdir, home: Path,
                                                                     command: str) -> None:
    w = project
    path = settings_path(w, home, "claude-code", "user")
    path.parent.mkdir()
    old = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command, "timeout": 30}]},
                              {"hooks": [{"type": "command", "command": "echo my-git-rewind hooks"}]}]}}
    path.write_text(json.dumps(old))
    w.ok("install", "--agent", "claude-code")
    data = json.loads(path.read_text())
    assert {event: [h["command"] for h in hooks] for event, hooks in ours(data, "claude-code").items()} == {
        event: [installed.hook_command("claude-code")] for event in CLAUDE_EVENTS}
    assert {"hooks": [{"type": "command", "command": "echo my-git-rewind hooks"}]} in data["hooks"]["Stop"]


def test_droid_keeps_hooks_it_read_from_settings_json(project: Workdir) -> None:
    """Droid reads settings.json's "hooks" only while hooks.json is absent: creating it must carry them."""
    w = project
    factory = w.path / ".factory"
    factory.mkdir()
    theirs = {"Stop": [{"hooks": [{"type": "command", "command": "./done.sh"}]}]}
    settings = json.dumps({"model": "custom:Mock-0", "hooks": theirs})
    (factory / "settings.json").write_text(settings)
    w.ok("install", "--agent", "droid", "--scope", "project")
    hooks = json.loads((factory / "hooks.json").read_text())
    assert hooks["Stop"][0] == theirs["Stop"][0]
    assert "hooks" not in hooks and "model" not in hooks
    assert (factory / "settings.json").read_text() == settings  # never touched
    w.ok("uninstall", "--agent", "droid", "--scope", "project")
    assert json.loads((factory / "hooks.json").read_text()) == theirs  # still run, now from hooks.json


@pytest.mark.parametrize(("text", "says", "commands"), [
    ('{"model": "opus",, }', "not valid JSON", ("install", "uninstall")),
    ("[1, 2]", "not a JSON object", ("install", "uninstall")),
    ('{"hooks": ["Stop"]}', '"hooks" is not an object', ("install", "uninstall")),
    ('{"hooks": {"Stop": {"command": "x"}}}', "hooks for Stop are not a list", ("install",)),
])
def test_a_settings_file_we_cannot_read_is_a_clear_error_and_left_untouched(
        project: Workdir, home: Path, text: str, says: str, commands: tuple[str, ...]) -> None:
    w = project
    path = settings_path(w, home, "claude-code", "project")
    path.parent.mkdir()
    path.write_text(text)
    for command in commands:
        run = w.rewind(command, "--agent", "claude-code", "--scope", "project")
        assert run.returncode != 0 and run.stdout == "" and len(run.stderr.splitlines()) == 1
        assert str(path) in run.stderr and says in run.stderr, run.stderr
        assert path.read_text() == text
    if "uninstall" not in commands:  # nothing of ours in it: nothing to remove, nothing written
        assert w.ok("uninstall", "--agent", "claude-code", "--scope", "project").startswith("not installed")
        assert path.read_text() == text
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]  # no backup, no temp file


def test_scopes_an_agent_does_not_have_or_a_project_scope_outside_a_repository(project: Workdir, home: Path,
                                                                               tmp_path: Path) -> None:
    w = project
    run = w.rewind("install", "--agent", "droid", "--scope", "local")
    assert run.returncode != 0 and "droid has no local scope (one of user, project)" in run.stderr
    plain = tmp_path / "plain"
    plain.mkdir()
    run = w.rewind("install", "--agent", "claude-code", "--scope", "project", cwd=plain)
    assert run.returncode == 2 and "not a git repository" in run.stderr
    run = w.rewind("install", "--agent", "roo-code")
    assert run.returncode == 2 and "roo-code" in run.stderr
    assert not (home / ".claude").exists() and not (home / ".factory").exists()
    assert not (w.path / ".factory").exists() and not (plain / ".claude").exists()


@pytest.mark.parametrize(("agent", "scope"), [("claude-code", "user"), ("claude-code", "local"), ("droid", "user")])
def test_the_installed_command_checkpoints_even_with_the_agents_sparse_path(project: Workdir, home: Path,
                                                                            agent: str, scope: str) -> None:
    """User and local scope name this git-rewind by its absolute path: found whatever the agent's PATH."""
    w = project
    w.ok("install", "--agent", agent, "--scope", scope)
    data = json.loads(settings_path(w, home, agent, scope).read_text())
    command = ours(data, agent)["UserPromptSubmit"][0]["command"]
    payload = {"session_id": f"{agent}-sparse", "transcript_path": str(home / "t.jsonl"), "cwd": str(w.path),
               "hook_event_name": "UserPromptSubmit", "prompt": "hello from the agent", "prompt_id": "p1",
               "message_id": "p1"}
    proc = run_hook_command(w, command, payload)
    assert (proc.returncode, proc.stderr) == (0, "")
    commit = w.git("rev-parse", f"refs/rewind/{agent}-sparse").strip()
    note = json.loads(w.git("notes", "--ref=rewind", "show", commit))
    assert (note["agent"], note["trigger"], note["prompt"]) == (agent, "UserPromptSubmit", "hello from the agent")
    assert note["conversation"]["prompt_id"] == "p1"


def test_status_lists_every_installed_agent_and_scope(project: Workdir, home: Path) -> None:
    w = project
    assert "hooks installed: none (git rewind install --agent …)" in w.ok("status")
    for agent, scope in (("claude-code", "user"), ("claude-code", "local"), ("droid", "project")):
        w.ok("install", "--agent", agent, "--scope", scope)
    installed = json.loads(w.ok("status", "--json"))["installed"]
    assert [(i["agent"], i["scope"], i["file"]) for i in installed] == [
        ("claude-code", "user", str(home / ".claude" / "settings.json")),
        ("claude-code", "local", str(w.path / ".claude" / "settings.local.json")),
        ("droid", "project", str(w.path / ".factory" / "hooks.json")),
    ]
    w.ok("uninstall", "--agent", "claude-code", "--scope", "local")
    assert [i["scope"] for i in json.loads(w.ok("status", "--json"))["installed"]] == ["user", "project"]


# Slash commands (Claude Code): /checkpoint, /resume, /rewind ----------------------------------------

COMMANDS = ["checkpoint.md", "resume.md", "rewind.md"]
SHIPPED = ROOT / "git_rewind" / "resources" / "claude-code" / "commands"


def commands_dir(w: Workdir, home: Path, scope: str) -> Path:
    return (home if scope == "user" else w.path) / ".claude" / "commands"


def test_the_commands_under_hooks_are_the_ones_install_copies() -> None:
    readable = ROOT / "hooks" / "claude-code" / "commands"
    assert sorted(p.name for p in readable.iterdir()) == COMMANDS
    assert sorted(p.name for p in SHIPPED.iterdir()) == COMMANDS
    for name in COMMANDS:
        text = (readable / name).read_text()
        assert (SHIPPED / name).read_text() == text, f"hooks/claude-code/commands/{name} differs from the package's"
        front, body = text.split("---\n", 2)[1:]
        keys = dict(line.split(": ", 1) for line in front.splitlines())
        assert set(keys) <= {"description", "allowed-tools", "argument-hint"} and keys["description"]
        assert keys["allowed-tools"].startswith("Bash(git rewind ")
        assert body.strip()
    checkpoint = (readable / "checkpoint.md").read_text()
    assert "git rewind snap" in checkpoint and "--summary -" in checkpoint and "$ARGUMENTS" in checkpoint
    for section in ("Done:", "State:", "Next:", "Files:"):
        assert f"\n{section} " in checkpoint
    assert "!`git rewind show @`" in (readable / "resume.md").read_text()
    rewind = (readable / "rewind.md").read_text()
    assert "!`git rewind list -n 20`" in rewind and "claude --resume <session id>" in rewind
    for flag in ("--code", "--conversation", "--full", "--fork", "git rewind redo"):
        assert flag in rewind


@pytest.mark.parametrize("scope", ["user", "project", "local"])
def test_install_copies_the_commands_once_and_uninstall_removes_them(project: Workdir, home: Path,
                                                                     scope: str) -> None:
    w = project
    where = commands_dir(w, home, scope)
    out = w.ok("install", "--agent", "claude-code", "--scope", scope)
    for name in COMMANDS:
        assert f"installed command /{name[:-3]}: {where / name}" in out
        assert (where / name).read_bytes() == (SHIPPED / name).read_bytes()
    again = w.ok("install", "--agent", "claude-code", "--scope", scope)
    assert again.startswith("already installed: ") and "command /" not in again

    out = w.ok("uninstall", "--agent", "claude-code", "--scope", scope)
    for name in COMMANDS:
        assert f"removed command /{name[:-3]}: {where / name}" in out
    assert not where.exists() and not where.parent.exists()  # nothing of ours left, not even .claude/
    assert w.ok("uninstall", "--agent", "claude-code", "--scope", scope).startswith("not installed: ")


def test_droid_gets_no_commands(project: Workdir, home: Path) -> None:
    out = project.ok("install", "--agent", "droid", "--scope", "project")
    assert "command /" not in out and not (project.path / ".factory" / "commands").exists()


def test_a_users_own_command_is_backed_up_and_put_back(project: Workdir, home: Path) -> None:
    w = project
    where = commands_dir(w, home, "user")
    where.mkdir(parents=True)
    mine = "---\ndescription: my own checkpoint\n---\nDo it my way.\n"
    (where / "checkpoint.md").write_text(mine)
    (where / "deploy.md").write_text("Deploy.\n")
    backup = where / f"checkpoint.md{install.BACKUP_SUFFIX}"

    out = w.ok("install", "--agent", "claude-code")
    assert f"backed up {where / 'checkpoint.md'} to {backup}" in out
    assert backup.read_text() == mine
    assert (where / "checkpoint.md").read_bytes() == (SHIPPED / "checkpoint.md").read_bytes()
    assert "command /" not in w.ok("install", "--agent", "claude-code")  # idempotent: no second backup
    assert sorted(p.name for p in where.iterdir()) == sorted([*COMMANDS, "deploy.md", backup.name])

    out = w.ok("uninstall", "--agent", "claude-code")
    assert f"restored your {where / 'checkpoint.md'} from {backup}" in out
    assert (where / "checkpoint.md").read_text() == mine
    assert sorted(p.name for p in where.iterdir()) == ["checkpoint.md", "deploy.md"]


def test_a_command_the_user_changed_is_left_and_reported(project: Workdir, home: Path) -> None:
    w = project
    where = commands_dir(w, home, "project")
    w.ok("install", "--agent", "claude-code", "--scope", "project")
    changed = (where / "resume.md").read_text() + "\nAlso run the tests first.\n"
    (where / "resume.md").write_text(changed)

    out = w.ok("uninstall", "--agent", "claude-code", "--scope", "project")
    assert f"kept {where / 'resume.md'}: changed since git-rewind installed it, so /resume stays" in out
    assert (where / "resume.md").read_text() == changed
    assert sorted(p.name for p in where.iterdir()) == ["resume.md"]
    assert not (w.path / ".claude" / "settings.json").exists()

    # Installing again backs the changed file up before writing ours, so nothing is lost.
    out = w.ok("install", "--agent", "claude-code", "--scope", "project")
    assert f"backed up {where / 'resume.md'} to {where / 'resume.md'}{install.BACKUP_SUFFIX}" in out
    assert Path(f"{where / 'resume.md'}{install.BACKUP_SUFFIX}").read_text() == changed


# The MCP server ----------------------------------------------------------------------------------


def test_mcp_install_adds_one_server_keeps_the_rest_and_uninstall_puts_the_bytes_back(
        project: Workdir, home: Path) -> None:
    w = project
    path = w.path / ".mcp.json"
    theirs = '{\n    "mcpServers": {"docs": {"command": "docs-server", "args": []}},\n    "note": "mine"\n}\n'
    path.write_text(theirs)
    first = w.rewind("install", "--agent", "claude-code", "--scope", "project", "--mcp")
    assert first.returncode == 0 and f"installed the git-rewind MCP server for claude-code (project) in {path}" \
        in first.stdout, first.stderr
    data = json.loads(path.read_text())
    assert data["note"] == "mine" and data["mcpServers"]["docs"] == {"command": "docs-server", "args": []}
    ours = data["mcpServers"]["git-rewind"]
    # A file the team commits: git-rewind by name, found on each machine's PATH.
    assert ours == {"type": "stdio", "command": "git-rewind", "args": ["mcp"]}
    # The command it wrote really serves: `<command> <args...> --help` is the mcp command's help.
    on_path = {**w.env, "PATH": f"{os.path.dirname(install.executable()[0])}:/usr/bin:/bin"}
    helped = subprocess.run([ours["command"], *ours["args"], "-h"], capture_output=True, text=True, env=on_path)
    assert helped.returncode == 0 and "Model Context Protocol" in helped.stdout
    assert Path(str(path) + install.BACKUP_SUFFIX).read_text() == theirs
    again = w.rewind("install", "--agent", "claude-code", "--scope", "project", "--mcp")
    assert again.returncode == 0 and "already installed" in again.stdout
    status = w.rewind("status", "--json")
    assert json.loads(status.stdout)["mcp_installed"] == [{"agent": "claude-code", "scope": "project",
                                                            "file": str(path)}]
    gone = w.rewind("uninstall", "--agent", "claude-code", "--scope", "project", "--mcp")
    assert gone.returncode == 0 and path.read_text() == theirs
    assert "not installed" in w.rewind("uninstall", "--agent", "claude-code", "--scope", "project", "--mcp").stdout


@pytest.mark.parametrize("agent", ["gemini", "qwen"])
@pytest.mark.parametrize("order", ["hooks first", "mcp first"])
def test_hooks_and_mcp_in_one_file_we_created_leave_nothing_behind_whichever_goes_first(
        project: Workdir, home: Path, agent: str, order: str) -> None:
    """Hooks and the MCP entry share the agent's settings.json: a file only git-rewind ever wrote is never backed
    up (a backup would bring our entries back), and removing both, in either order, removes it and its folder."""
    w = project
    path = w.path / f".{agent}" / "settings.json"
    before = sorted(p.name for p in w.path.iterdir())
    kinds = [[], ["--mcp"]] if order == "hooks first" else [["--mcp"], []]
    for extra in kinds:
        w.ok("install", "--agent", agent, "--scope", "project", *extra)
    data = json.loads(path.read_text())
    assert "git-rewind" in data["mcpServers"] and data["hooks"], data
    assert not Path(str(path) + install.BACKUP_SUFFIX).exists()
    if agent == "qwen":  # Qwen stamps its own key into every settings file it loads
        path.write_text(json.dumps({**data, "$version": 4}, indent=2))
    for extra in kinds:
        w.ok("uninstall", "--agent", agent, "--scope", "project", *extra)
    assert not path.parent.exists(), sorted(p.name for p in path.parent.iterdir())
    assert sorted(p.name for p in w.path.iterdir()) == before


def test_mcp_install_for_droid_writes_what_droid_mcp_add_writes(project: Workdir, home: Path) -> None:
    w = project
    assert w.rewind("install", "--agent", "droid", "--mcp", env={"HOME": str(home)}).returncode == 0
    path = home / ".factory" / "mcp.json"
    entry = json.loads(path.read_text())["mcpServers"]["git-rewind"]
    assert set(entry) == {"type", "command", "args", "disabled"} and entry["disabled"] is False
    assert w.rewind("uninstall", "--agent", "droid", "--mcp", env={"HOME": str(home)}).returncode == 0
    assert not path.exists()  # we created it, and it held nothing else


def test_mcp_install_refuses_a_foreign_server_of_that_name_and_the_local_scope(project: Workdir) -> None:
    w = project
    path = w.path / ".mcp.json"
    foreign = '{"mcpServers": {"git-rewind": {"command": "something-else"}}}\n'
    path.write_text(foreign)
    run = w.rewind("install", "--agent", "claude-code", "--scope", "project", "--mcp")
    assert run.returncode == 1 and "not this one" in run.stderr and path.read_text() == foreign
    run = w.rewind("install", "--agent", "claude-code", "--scope", "local", "--mcp")
    assert run.returncode == 1 and "user or project" in run.stderr


def test_mcp_install_for_gemini_codex_and_cursor_writes_what_their_own_mcp_add_writes(
        project: Workdir, home: Path) -> None:
    """Gemini CLI: settings.json's mcpServers beside its hooks; Codex: [mcp_servers.git-rewind] in config.toml,
    comments kept; Cursor: .cursor/mcp.json. The shapes are those `gemini mcp add` and `codex mcp add` write."""
    w = project
    codex_home = home / "codex-home"
    codex_home.mkdir()
    config = codex_home / "config.toml"
    theirs = '# my Codex settings\nmodel = "o4"\n\n[mcp_servers.docs]\ncommand = "docs"\n'
    config.write_text(theirs)
    env = {"HOME": str(home), "CODEX_HOME": str(codex_home)}
    assert w.rewind("install", "--agent", "gemini", "--scope", "project", env=env).returncode == 0  # the hooks
    for agent, scope in (("gemini", "project"), ("codex", "user"), ("cursor", "project")):
        run = w.rewind("install", "--agent", agent, "--scope", scope, "--mcp", env=env)
        assert run.returncode == 0, run.stderr
    settings = json.loads((w.path / ".gemini" / "settings.json").read_text())
    entry = settings["mcpServers"]["git-rewind"]
    assert entry == {"command": "git-rewind", "args": ["mcp"]} and "hooks" in settings  # project: by name
    assert json.loads((w.path / ".cursor" / "mcp.json").read_text())["mcpServers"]["git-rewind"] == entry
    import tomllib

    text = config.read_text()
    assert text.startswith("# my Codex settings\n") and tomllib.loads(text)["mcp_servers"] == {
        "docs": {"command": "docs"}, "git-rewind": {"command": install.executable()[0], "args": ["mcp"]}}
    assert "already installed" in w.rewind("install", "--agent", "codex", "--mcp", env=env).stdout
    status = json.loads(w.rewind("status", "--json", env=env).stdout)["mcp_installed"]
    assert {(s["agent"], s["scope"]) for s in status} == {("gemini", "project"), ("codex", "user"),
                                                           ("cursor", "project")}
    for agent, scope in (("gemini", "project"), ("codex", "user"), ("cursor", "project")):
        assert w.rewind("uninstall", "--agent", agent, "--scope", scope, "--mcp", env=env).returncode == 0
    assert config.read_text() == theirs  # its bytes back
    assert "mcpServers" not in json.loads((w.path / ".gemini" / "settings.json").read_text())
    assert not (w.path / ".cursor" / "mcp.json").exists()


# project scope: files a team commits ------------------------------------------------------------------
#
# A project's settings files go into the repository, so what they run must work on a teammate's
# machine: no path of this one, the git-rewind on PATH, and nothing at all (exit 0, and only the JSON
# the agent needs to go on) where git-rewind is not installed, since some agents deny a tool when
# its hook fails.

HOOK_AGENTS = ["claude-code", "codex", "cursor", "droid", "gemini", "qwen"]
PROMPT_EVENTS = {"claude-code": "UserPromptSubmit", "codex": "UserPromptSubmit", "droid": "UserPromptSubmit",
                 "gemini": "BeforeAgent", "cursor": "beforeSubmitPrompt", "qwen": "UserPromptSubmit"}
SPARSE_PATH = "/usr/bin:/bin"


def entry_commands(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(event, command) of every hook entry in a hooks file of any agent's shape."""
    hooks = data["hooks"] if isinstance(data.get("hooks"), dict) else data
    found = []
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            for handler in group["hooks"] if "hooks" in group else [group]:
                found.append((event, handler["command"]))
    return found


def machine_paths(w: Workdir, home: Path) -> list[str]:
    """Paths of this machine a committed file must not name: the virtualenv and git-rewind's own directory,
    the home folder, the project itself."""
    return [sys.prefix, os.path.dirname(install.executable()[0]), str(home), str(w.path)]


@pytest.mark.parametrize("agent", sorted(n for n in agents.NAMES if "project" in agents.get(n).scopes))
def test_a_project_install_names_no_path_of_this_machine(project: Workdir, home: Path, agent: str) -> None:
    w = project
    before = set(w.git("ls-files", "--others", "--exclude-standard").split())
    w.ok("install", "--agent", agent, "--scope", "project")
    if agents.get(agent).mcp_file("project", str(w.path), str(home)) is not None:
        w.ok("install", "--agent", agent, "--scope", "project", "--mcp")
    written = set(w.git("ls-files", "--others", "--exclude-standard").split()) - before
    assert written, "install wrote nothing into the project"
    for name in sorted(written):
        text = (w.path / name).read_text()
        assert "git-rewind" in text, name
        for path in machine_paths(w, home):
            assert path not in text, f"{name} names {path}:\n{text}"


@pytest.mark.parametrize("agent", HOOK_AGENTS)
def test_the_project_hook_command_without_git_rewind_exits_0_and_prints_only_what_the_agent_needs(
        project: Workdir, home: Path, agent: str) -> None:
    w = project
    assert shutil.which("git-rewind", path=SPARSE_PATH) is None
    w.ok("install", "--agent", agent, "--scope", "project")
    path = agents.get(agent).target("project", str(w.path), str(home))
    commands = entry_commands(json.loads(Path(path).read_text()))
    assert sorted(event for event, _ in commands) == sorted(agents.get(agent).hooks)
    for event, command in commands:
        proc = run_hook_command(w, command, {"session_id": "s", "hook_event_name": event, "cwd": str(w.path)})
        reply = agents.get(agent).hook_reply(event)
        expected = "" if reply is None else json.dumps(reply, separators=(",", ":")) + "\n"
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, expected, ""), (event, command)
        if reply is not None:
            assert json.loads(proc.stdout) == reply  # what the agent reads: valid JSON, its "go on"
    assert w.git("for-each-ref", "refs/rewind/") == ""


@pytest.mark.parametrize("agent", HOOK_AGENTS)
def test_the_project_hook_command_with_git_rewind_on_path_checkpoints(project: Workdir, home: Path,
                                                                      agent: str) -> None:
    w = project
    w.ok("install", "--agent", agent, "--scope", "project")
    path = agents.get(agent).target("project", str(w.path), str(home))
    event = PROMPT_EVENTS[agent]
    command = dict(entry_commands(json.loads(Path(path).read_text())))[event]
    session = f"{agent}-shared"
    payload = {"session_id": session, "conversation_id": session, "generation_id": "g1", "turn_id": "t1",
               "hook_event_name": event, "prompt": "hello from a teammate", "cwd": str(w.path),
               "workspace_roots": [str(w.path)], "transcript_path": None}
    proc = run_hook_command(w, command, payload, path=f"{os.path.dirname(install.executable()[0])}:{SPARSE_PATH}")
    assert (proc.returncode, proc.stderr) == (0, ""), proc
    note = json.loads(w.git("notes", "--ref=rewind", "show", f"refs/rewind/{session}"))
    assert (note["agent"], note["prompt"]) == (agent, "hello from a teammate")


# The agents that take our plugin rather than a hooks file (OpenCode's family), and where a project's goes.
PLUGIN_TARGETS = {"opencode": "./.opencode/plugin/git-rewind.ts", "kilo": "./.kilo/plugin/git-rewind.ts"}


@pytest.mark.parametrize(("agent", "where"), sorted(PLUGIN_TARGETS.items()))
def test_the_plugin_in_a_project_runs_git_rewind_from_path(project: Workdir, agent: str, where: str) -> None:
    """The plugin spawns PROGRAM and swallows a spawn error: in a project it is the shipped bare name, with the
    agent's own name as AGENT."""
    w = project
    w.ok("install", "--agent", agent, "--scope", "project")
    text = (w.path / where).read_text()
    assert text == agents.get(agent).readable_files()["git-rewind.ts"].decode()
    assert 'const PROGRAM: string[] = ["git-rewind"]' in text and f'const AGENT = "{agent}"' in text


@pytest.mark.parametrize("agent", HOOK_AGENTS)
def test_entries_of_an_older_absolute_install_are_found_replaced_and_removed(project: Workdir, home: Path,
                                                                             agent: str) -> None:
    """A project file written by an earlier git-rewind names its absolute path: status still lists it, a
    new install replaces those entries (none twice), and uninstall removes old and new alike."""
    w = project
    w.ok("install", "--agent", agent, "--scope", "project")
    path = Path(agents.get(agent).target("project", str(w.path), str(home)))
    shared = path.read_text()
    old_command = install.hook_command(agent)  # the absolute form, as earlier versions wrote it
    assert os.path.isabs(shlex.split(old_command)[0])
    data = json.loads(shared)
    for _event, command in entry_commands(data):
        assert install.is_own({"command": command}) and install.is_own({"command": old_command})
    path.write_text(re.sub(r'"command": "sh -c [^\n]*?(?<!\\)"(,?)$',
                           lambda m: f'"command": {json.dumps(old_command)}{m.group(1)}', shared, flags=re.MULTILINE))
    assert sys.prefix in path.read_text() and "sh -c" not in path.read_text()
    assert f"  {agent:<12} project  {path}" in w.ok("status")
    w.ok("install", "--agent", agent, "--scope", "project")
    assert path.read_text() == shared
    path.write_text(path.read_text().replace(json.dumps(entry_commands(data)[0][1]), json.dumps(old_command), 1))
    w.ok("uninstall", "--agent", agent, "--scope", "project")
    assert not agents.get(agent).hooks_installed(str(path))
    assert f"  {agent:<12} project" not in w.ok("status")


def test_user_scope_writes_the_thin_client_which_runs_without_site_and_takes_the_checkpoint(
        project: Workdir, home: Path) -> None:
    """At user scope every entry runs this interpreter with `-I -S` on the package's hook entry (absolute
    paths, nothing from the agent's PATH); run as the agent runs it, it checkpoints."""
    w = project
    w.ok("install", "--agent", "claude-code")
    data = json.loads((home / ".claude" / "settings.json").read_text())
    commands = {h["command"] for groups in data["hooks"].values() for g in groups for h in g["hooks"]}
    program = installed.hook_program()  # the installed package's entry, by absolute path
    assert program[1:3] == ["-I", "-S"] and program[3].endswith(os.path.join("git_rewind", "hook", "entry.py"))
    assert commands == {shlex.join([*program, "hook", "--agent", "claude-code"])}
    proc = run_hook_command(w, commands.pop(), {"session_id": "s1", "cwd": str(w.path),
                                                "hook_event_name": "UserPromptSubmit", "prompt": "go"})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert w.git("for-each-ref", "refs/rewind/s1")


def test_a_user_install_of_an_earlier_version_is_ours_and_installing_again_upgrades_it(project: Workdir,
                                                                                       home: Path) -> None:
    """`/path/to/git-rewind hook --agent NAME`, what earlier versions wrote at user scope: status lists it,
    install replaces it by the thin client (no entry twice), uninstall removes either."""
    w = project
    w.ok("install", "--agent", "claude-code")
    path = home / ".claude" / "settings.json"
    thin = path.read_text()
    old = shlex.join([*install.executable(), "hook", "--agent", "claude-code"])
    new = installed.hook_command("claude-code")
    assert old != new and install.is_own({"command": old}) and install.is_own({"command": new})
    path.write_text(thin.replace(json.dumps(new), json.dumps(old)))
    assert json.dumps(new) not in path.read_text()
    assert f"  {'claude-code':<12} user" in w.ok("status")
    w.ok("install", "--agent", "claude-code")
    assert path.read_text() == thin
    path.write_text(thin.replace(json.dumps(new), json.dumps(old), 1))
    w.ok("uninstall", "--agent", "claude-code")
    assert not agents.get("claude-code").hooks_installed(str(path))


# git hooks: install --git-hooks ------------------------------------------------------------------------------

# The person's own hooks, in a core.hooksPath folder: each leaves a trace of its arguments (and stdin).
THEIR_HOOKS = {
    "post-commit": ("#!/bin/sh\necho \"post-commit $*\" >> \"$(git rev-parse --git-common-dir)/their.log\"\n", 0o755),
    "prepare-commit-msg": ("#!/bin/sh\n# refuses a message saying REJECT\n"
                           "grep -q REJECT \"$1\" && exit 7\necho \"prepare $*\" >> .git/their.log\nexit 0\n", 0o750),
    "post-rewrite": ("#!/bin/sh\n{ echo \"post-rewrite $*\"; cat; } >> .git/their.log\n", 0o700),
}


def _hook_files(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mode & 0o7777) for p in sorted(folder.iterdir())}


def _git(w: Workdir, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd or w.path, env={**w.env, "GIT_EDITOR": "true"},
                          capture_output=True, text=True)


def test_git_hooks_chain_the_persons_hooks_in_core_hooks_path_and_uninstall_puts_them_back_byte_exact(
        project: Workdir) -> None:
    w = project
    folder = w.path / ".githooks"
    folder.mkdir()
    for name, (text, mode) in THEIR_HOOKS.items():
        (folder / name).write_text(text)
        (folder / name).chmod(mode)
    (folder / "pre-push").write_text("#!/bin/sh\nexit 0\n")  # not one of ours: never touched
    w.git("config", "core.hooksPath", ".githooks")
    before = _hook_files(folder)
    index = (w.path / ".git" / "index").read_bytes()

    out = w.ok("install", "--git-hooks")
    assert out.count("installed git hook") == 3 and out.count("runs ") == 3
    assert (w.path / ".git" / "hooks" / "post-commit").exists() is False  # git's hooksPath, not .git/hooks
    for name in THEIR_HOOKS:
        assert (folder / (name + ".git-rewind-chained")).read_bytes() == before[name][0]
    assert (w.path / ".git" / "index").read_bytes() == index
    installed_now = _hook_files(folder)
    assert w.ok("install", "--git-hooks").count("already installed") == 3  # idempotent
    assert _hook_files(folder) == installed_now

    # A commit runs theirs (with git's arguments) and ours.
    w.write("src/app.py", "print('hello')\nprint('more')\n")
    run = _git(w, "commit", "-qam", "more")
    assert run.returncode == 0 and run.stderr == "", run.stderr
    log = (w.path / ".git" / "their.log").read_text()
    assert "post-commit \n" in log and "prepare .git/COMMIT_EDITMSG message" in log
    assert json.loads(w.git("notes", "--ref", "rewind-authorship", "show", "HEAD"))["files"]["src/app.py"]
    # Their prepare-commit-msg's refusal still counts: the commit is not made.
    head = w.git("rev-parse", "HEAD")
    w.write("src/app.py", "print('hello')\n")
    run = _git(w, "commit", "-qam", "REJECT this")
    assert run.returncode != 0 and w.git("rev-parse", "HEAD") == head
    # post-rewrite: theirs reads the same pairs on stdin as ours.
    old = head.strip()
    run = _git(w, "commit", "-q", "--amend", "-m", "more, amended")
    assert run.returncode == 0, run.stderr
    new = w.git("rev-parse", "HEAD").strip()
    assert f"post-rewrite amend\n{old} {new}\n" in (w.path / ".git" / "their.log").read_text()
    assert w.git("notes", "--ref", "rewind-authorship", "list", new).strip()

    out = w.ok("uninstall", "--everything")
    assert out.count("removed git hook") == 3
    assert _hook_files(folder) == before  # every hook back: bytes and modes, nothing of ours left
    assert w.ok("uninstall", "--git-hooks").startswith("not installed")


def test_git_hooks_in_the_default_folder_and_a_hook_that_is_not_ours_is_left_alone(project: Workdir) -> None:
    w = project
    hooks = w.path / ".git" / "hooks"
    samples = _hook_files(hooks)
    w.ok("install", "--git-hooks")
    assert {"post-commit", "post-rewrite", "prepare-commit-msg"} <= set(_hook_files(hooks))
    # A linked work tree shares them (git's common folder).
    linked = w.path.parent / "linked"
    w.git("worktree", "add", "-q", "-b", "side", str(linked))
    (linked / "side.txt").write_text("side\n")
    _git(w, "add", "side.txt", cwd=linked)
    run = _git(w, "commit", "-qm", "side", cwd=linked)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert w.git("notes", "--ref", "rewind-authorship", "list", "side").strip()

    assert json.loads(w.git("notes", "--ref", "rewind-authorship", "show", "side"))["files"] == {
        "side.txt": [[1, 1, 0]]}
    (hooks / "post-rewrite").write_text("#!/bin/sh\n# a tool replaced it\n")  # someone else's now
    out = w.ok("uninstall", "--git-hooks")
    assert out.count("removed git hook") == 2 and "post-rewrite" not in out
    assert (hooks / "post-rewrite").read_text() == "#!/bin/sh\n# a tool replaced it\n"
    (hooks / "post-rewrite").unlink()
    assert _hook_files(hooks) == samples
    refused = w.rewind("install", "--git-hooks", "--agent", "claude-code")
    assert refused.returncode == 2 and "--git-hooks takes no --agent" in refused.stderr
