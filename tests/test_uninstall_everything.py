"""`git rewind uninstall --everything`: a user leaving git-rewind, with every agent installed at every
scope, among settings of their own, gets back exactly the files they had, and is told how to drop the
store (and the commands it prints really drop it).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from helpers.workdir import Workdir

from git_rewind import agents

# What the user had before git-rewind, at every place an agent reads (paths from HOME "~" or the project ".").
THEIRS = {
    "~/.claude/settings.json": '{"model": "opus",\n "hooks": {"Stop": [{"hooks": [{"type": "command", '
                               '"command": "notify-send done"}]}]}}\n',
    "~/.claude.json": '{"numStartups": 3, "mcpServers": {"docs": {"type": "stdio", "command": "docs-server"}}}',
    "~/.claude/commands/mine.md": "my own command\n",
    "./.claude/settings.json": '{\n  "permissions": {"allow": ["Bash(npm test:*)"]},\n  "hooks": {"PreToolUse": '
                               '[{"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]}]}\n}\n',
    "./.claude/settings.local.json": '{"env": {"FOO": "bar"}}\n',
    "./.mcp.json": '{"mcpServers": {"db": {"command": "db-mcp", "args": ["--ro"]}}}\n',
    "~/.factory/hooks.json": '{"Notification": [{"hooks": [{"type": "command", "command": "say hi"}]}]}\n',
    "~/.factory/mcp.json": '{"mcpServers": {"docs": {"type": "stdio", "command": "docs", "disabled": false}}}\n',
    "./.factory/hooks.json": '{"PostToolUse": [{"matcher": "Execute", "hooks": [{"type": "command", '
                             '"command": "./lint.sh"}]}]}\n',
    "~/.gemini/settings.json": '{"theme": "dark", "mcpServers": {"docs": {"command": "docs"}}}\n',
    "./.gemini/settings.json": '{"hooks": {"AfterAgent": [{"hooks": [{"type": "command", "name": "mine", '
                               '"command": "./after.sh", "timeout": 5000}]}]}}\n',
    "~/.codex/config.toml": '# my Codex settings\nmodel = "o4"\n\n[mcp_servers.docs]\ncommand = "docs"\n',
    "~/.codex/hooks.json": '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./codex-done.sh"}]}]}}\n',
    "./.codex/config.toml": '[mcp_servers.db]\ncommand = "db"\n',
    "~/.config/opencode/plugin/other.ts": "export const Other = async () => ({})\n",
    "./.kilo/plugin/other.ts": "export const Other = async () => ({})\n",
    "./.cursor/hooks.json": '{"version": 1, "hooks": {"stop": [{"command": "./cursor-stop.sh"}]}}\n',
    "~/.cursor/mcp.json": '{"mcpServers": {"docs": {"command": "docs"}}}\n',
    "~/Documents/Cline/Hooks/TaskError": "#!/bin/sh\necho '{\"cancel\": false}'\n",
    "./.clinerules/hooks/PreToolUse.sh": "#!/bin/sh\n./audit.sh\n",
    "./.clinerules/style.md": "# house rules\n",
}


def _where(w: Workdir, home: Path, name: str) -> Path:
    return (home if name.startswith("~") else w.path) / name[2:]


def _files(w: Workdir, home: Path) -> dict[str, bytes]:
    """Every file under HOME and the project (outside .git), but the backups install leaves beside them."""
    found = {}
    for base, label in ((home, "~"), (w.path, ".")):
        for folder, dirs, names in os.walk(base):
            dirs[:] = [d for d in dirs if not (base == w.path and folder == str(w.path) and d == ".git")]
            for name in names:
                path = Path(folder) / name
                if ".git-rewind-backup" not in name and not str(path).startswith(str(home / ".local")):
                    found[f"{label}/{path.relative_to(base)}"] = path.read_bytes()
    return found


def test_uninstall_everything_removes_every_entry_of_ours_and_nothing_else(agent_project: Workdir,
                                                                          home: Path) -> None:
    w = agent_project
    w.env["CODEX_HOME"] = str(home / ".codex")
    for name, text in THEIRS.items():
        _where(w, home, name).parent.mkdir(parents=True, exist_ok=True)
        _where(w, home, name).write_text(text)
    w.ok("snap", "-m", "before install")
    before = _files(w, home)
    for name in agents.NAMES:
        agent = agents.get(name)
        for scope in agent.scopes:
            w.ok("install", "--agent", name, "--scope", scope)
            if scope != "local" and agent.mcp_file(scope, str(w.path), str(home)) is not None:
                w.ok("install", "--agent", name, "--scope", scope, "--mcp")
    status = json.loads(w.ok("status", "--json"))
    assert len(status["installed"]) == sum(len(agents.get(n).scopes) for n in agents.NAMES) == 21
    assert len(status["mcp_installed"]) == 14  # every agent with hooks but OpenCode and Kilo, user and project

    out = w.ok("uninstall", "--everything")
    after = _files(w, home)
    assert after == before, sorted(k for k in after.keys() | before.keys() if after.get(k) != before.get(k))
    status = json.loads(w.ok("status", "--json"))
    assert (status["installed"], status["mcp_installed"]) == ([], [])
    for path in ("~/.claude/settings.json", "./.mcp.json", "~/.codex/config.toml", "./.cursor/hooks.json"):
        assert str(_where(w, home, path)) in out
    assert "refs/rewind" in out and "git gc --prune=now" in out
    again = w.ok("uninstall", "--everything")
    assert "no hooks or MCP entries of git-rewind found" in again and _files(w, home) == before


def _objects(w: Workdir) -> set[str]:
    out = w.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(out.split())


def _kept_by_git(w: Workdir) -> set[str]:
    """What `git gc --prune=now` must keep: everything reachable from a ref, a HEAD, a reflog or an index."""
    out = w.git("rev-list", "--objects", "--no-object-names", "--all", "--reflog", "--indexed-objects")
    return set(out.split())


def test_the_printed_commands_drop_the_whole_store_and_nothing_of_the_users(project: Workdir,
                                                                           tmp_path: Path) -> None:
    """Every kind of ref git-rewind writes is there first (checkpoints, notes, a rewind's transcript copy,
    this machine's shareable copy, another machine's fetched copy); after the printed commands no ref of
    ours is left and not one object that only git-rewind made."""
    w = project
    w.ok("snap", "-m", "one")
    w.write("notes.txt", "two\n")
    w.ok("snap", "-m", "two", "--session", "other")
    w.ok("undo", "1", "--yes")  # a safety checkpoint
    bare = tmp_path / "shared.git"
    w.git("init", "-q", "--bare", str(bare))
    w.git("remote", "add", "team", str(bare))
    w.ok("push", "team")
    mate = Workdir(tmp_path / "mate", w.env)
    w.git("clone", "-q", str(w.path), str(mate.path))
    mate.git("config", "user.name", "Mate")
    mate.git("remote", "add", "team", str(bare))
    mate.write("mate.txt", "theirs\n")
    mate.ok("snap", "-m", "the mate's")
    mate.ok("push", "team")
    w.ok("fetch", "team")
    linked = tmp_path / "linked"
    w.git("worktree", "add", "-q", "-b", "side", str(linked))
    w.ok("snap", "-m", "in the linked worktree", cwd=linked)
    checkpoint = w.git("rev-parse", "refs/rewind/manual").strip()
    ours = {ref for ref in w.git("for-each-ref", "--format=%(refname)").split() if "rewind" in ref}
    assert any(r.startswith("refs/notes/rewind-share/") for r in ours), ours
    assert any(r.startswith("refs/notes/rewind-remote/") for r in ours), ours
    user = w.user_state()
    w.git("gc", "-q", "--prune=now")  # what is unreachable before git-rewind's store goes is not ours to count
    users_objects = _objects(w) - _kept_by_git(w)
    out = w.ok("uninstall", "--everything")
    commands = [line.strip() for line in out.split("to drop them all", 1)[1].splitlines() if line.startswith("  ")]
    assert len(commands) == 3
    for command in commands:  # from a subdirectory: the paths printed are absolute
        run = subprocess.run(["sh", "-c", command], cwd=w.path / "src", env=w.env, capture_output=True, text=True)
        assert run.returncode == 0, (command, run.stderr)
    assert [ref for ref in w.git("for-each-ref", "--format=%(refname)").split() if "rewind" in ref] == []
    assert subprocess.run(["git", "cat-file", "-e", checkpoint], cwd=w.path, env=w.env).returncode != 0
    # Every object left is the person's: reachable from their refs, HEADs, reflogs or indexes.
    assert _objects(w) - _kept_by_git(w) == set() and users_objects == set()
    made = w.git("log", "--all", "--format=%H %cn")
    assert "git-rewind" not in made
    assert not (w.path / ".git" / "rewind").exists()
    assert not (w.path / ".git" / "worktrees" / "linked" / "rewind").exists()
    assert w.user_state() == user
    w.git("fsck", "--no-progress")
    assert w.ok("list").strip() in ("", "no checkpoints")
