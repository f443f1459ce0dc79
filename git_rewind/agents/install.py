"""`git rewind install / uninstall`: our hook entries in an agent's settings file, and nothing else.

Edits files we do not own the careful way: the file is parsed first (invalid JSON is an error
and nothing is written), every other key and hook is kept, the original is backed up before our
first change, our own entries are recognised by their command (so installing twice changes
nothing and uninstall removes exactly ours), and the file is replaced atomically.
"""

from __future__ import annotations

import os
import sys

from .. import agents
from ..base.errors import RewindError
from ..base.fsutil import folders_above, write_atomic
from .base import MCP_SCOPES
from .settingsfile import (
    BACKUP_SUFFIX,
    Change,
    CommandChange,
    free_backup,
    is_own,
    is_own_mcp,
    load_json,
    only_ours,
    parse_toml,
    read_bytes,
    read_text,
    remove_created,
    restore_backup,
    same_toml,
    unstamped,
    write_json,
    write_text,
)
from .settingsfile import MCP_NAME as MCP_NAME  # the server's name, as commands print it

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["BACKUP_SUFFIX", "Change", "CommandChange", "is_own"]  # for callers of install


def executable() -> list[str]:
    """How to run this git-rewind, by absolute path: agents' PATH may lack our bin directory."""
    beside = os.path.join(os.path.dirname(sys.executable), "git-rewind")
    if os.access(beside, os.X_OK):
        return [beside]
    import shutil  # here: its imports (bz2, lzma, ~5 ms) are for copies, which a restore makes none of
    found = shutil.which("git-rewind")
    if found:
        return [os.path.abspath(found)]
    return [sys.executable, "-m", "git_rewind"]


# Scopes whose files a team commits: they name no path of this machine (settingsfile.hook_command).
SHARED_SCOPES = ("project",)


def program_for(scope: str, program: list[str] | None = None) -> list[str] | None:
    """What our entries at SCOPE run: PROGRAM or this git-rewind by absolute path, or None (the shared form:
    the git-rewind on PATH, if any) in a file meant to be committed."""
    return None if scope in SHARED_SCOPES else (program or executable())


def hook_program() -> list[str]:
    """What our hook entries run at user and local scope (before `hook --agent NAME`): this interpreter without
    `site`, by absolute path, on the package's hook/entry.py, the thin client (hook/client.py) that lets the
    daemon answer; ~4x cheaper to start than the console script, which must set up `site` first."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [sys.executable, "-I", "-S", os.path.join(package, "hook", "entry.py")]


def hook_program_for(scope: str, program: list[str] | None = None) -> list[str] | None:
    """What our hook entries at SCOPE run: PROGRAM (a git-rewind given by path) or the thin client
    (hook_program), or None (the shared form: the git-rewind on PATH) in a file meant to be committed."""
    return None if scope in SHARED_SCOPES else (program or hook_program())


def hook_command(agent: str, program: list[str] | None = None, scope: str = "user") -> str:
    """The shell command an agent runs for its hook events (at SCOPE), as the agent writes it (Agent.command:
    Copilot CLI's keeps its exit status 0 even where git-rewind is gone)."""
    return agents.get(agent).command(None, hook_program_for(scope, program))


def template(agent: str) -> dict[str, Any]:
    """The readable file under hooks/<agent>/ that documents what install writes."""
    return agents.get(agent).template()


def target(agent: str, scope: str, root: str | None, home: str | None = None) -> str:
    """The settings file for AGENT at SCOPE."""
    return agents.get(agent).target(scope, root, home)


def install(agent: str, scope: str, root: str | None, home: str | None = None,
            program: list[str] | None = None) -> Change:
    """Write our hook entries (and slash commands) for AGENT at SCOPE; a second install changes nothing."""
    change = agents.get(agent).install_hooks(scope, root, home, hook_program_for(scope, program))
    change.commands = install_commands(agent, scope, root, home)
    return change


def uninstall(agent: str, scope: str, root: str | None, home: str | None = None) -> Change:
    """Remove exactly our entries (and unchanged slash commands) for AGENT at SCOPE; a file we created and
    left empty goes too."""
    commands: list[CommandChange] = []
    if agents.get(agent).slash_commands():
        load_json(target(agent, scope, root, home))  # an unreadable file: an error, and nothing changes
        commands = uninstall_commands(agent, scope, root, home)  # first: their directory is in the hooks' one
    change = agents.get(agent).uninstall_hooks(scope, root, home)
    change.commands = commands
    return change


class Removal:
    """What `uninstall --everything` did at one place: KIND "hooks" (with slash commands) or "mcp", the
    agent and scope, and the Change, or the one-line ERROR that left that file alone."""

    __slots__ = ("kind", "agent", "scope", "change", "error")

    def __init__(self, kind: str, agent: str, scope: str, change: Change | None = None,
                 error: str | None = None) -> None:
        self.kind = kind
        self.agent = agent
        self.scope = scope
        self.change = change
        self.error = error


def uninstall_everything(root: str | None, home: str | None = None) -> list[Removal]:
    """Remove our hooks, slash commands and MCP entries for every agent, at every scope where they are
    found (project and local only inside a work tree, ROOT), each exactly as `uninstall` does, so
    nothing that is not ours changes. A file that cannot be read is reported and the others still go."""
    done = []
    places = [(agent, scope) for agent, scope, _path in installed(root, home)]
    places += [(a, s) for a in agents.NAMES for s in agents.get(a).scopes
               if (a, s) not in places and (s == "user" or root is not None) and _has_own_commands(a, s, root, home)]
    for agent, scope in places:
        try:
            done.append(Removal("hooks", agent, scope, uninstall(agent, scope, root, home)))
        except RewindError as exc:
            done.append(Removal("hooks", agent, scope, error=str(exc)))
    for agent, scope, _path in mcp_installed(root, home):
        try:
            done.append(Removal("mcp", agent, scope, uninstall_mcp(agent, scope, root, home)))
        except RewindError as exc:
            done.append(Removal("mcp", agent, scope, error=str(exc)))
    return done


def _has_own_commands(agent: str, scope: str, root: str | None, home: str | None) -> bool:
    """A slash command of ours, exactly as shipped, is in AGENT's commands directory at SCOPE."""
    return any(read_bytes(path) == content for path, content in _commands(agent, scope, root, home)[1])


# slash commands ----------------------------------------------------------------------------------
#
# An agent's slash commands (Claude Code's /checkpoint, /resume and /rewind) are files shipped in
# git_rewind/resources/<agent>/commands/ (Agent.slash_commands). A file is ours when its bytes are
# exactly the shipped ones: a user's own file of the same name is backed up before we write ours,
# and put back on uninstall; a file of ours the user changed since is left where it is.

def commands_dir(agent: str, scope: str, root: str | None, home: str | None = None) -> str:
    """The commands directory beside the settings file (~/.claude/commands for Claude Code's user scope)."""
    return os.path.join(os.path.dirname(target(agent, scope, root, home)), "commands")


def _commands(agent: str, scope: str, root: str | None, home: str | None) -> tuple[str, list[tuple[str, bytes]]]:
    """(the commands directory, [(path, shipped content)] for each slash command of AGENT)."""
    shipped = agents.get(agent).slash_commands()
    directory = commands_dir(agent, scope, root, home) if shipped else ""
    return directory, [(os.path.join(directory, name), content) for name, content in shipped.items()]


def install_commands(agent: str, scope: str, root: str | None, home: str | None = None) -> list[CommandChange]:
    """Copy our slash commands into the agent's commands directory, backing up a different file first."""
    changes = []
    for path, content in _commands(agent, scope, root, home)[1]:
        current = read_bytes(path)
        if current == content:
            changes.append(CommandChange(path, "unchanged"))
            continue
        backup = None
        if current is not None:
            backup = free_backup(path)
            import shutil
            shutil.copy2(path, backup)
        write_atomic(path, content, makedirs=True)
        changes.append(CommandChange(path, "installed", backup))
    return changes


def uninstall_commands(agent: str, scope: str, root: str | None, home: str | None = None) -> list[CommandChange]:
    """Remove our slash commands that are still exactly as shipped, putting back what they replaced."""
    directory, shipped = _commands(agent, scope, root, home)
    changes = []
    for path, content in shipped:
        current = read_bytes(path)
        if current is None:
            continue
        if current != content:
            changes.append(CommandChange(path, "kept"))
            continue
        backup = path + BACKUP_SUFFIX
        if os.path.exists(backup):
            os.replace(backup, path)
            changes.append(CommandChange(path, "restored", backup))
        else:
            os.unlink(path)
            changes.append(CommandChange(path, "removed"))
    if changes and not os.listdir(directory):
        os.rmdir(directory)  # ours alone were in it
    return changes


def installed(root: str | None, home: str | None = None) -> list[tuple[str, str, str]]:
    """(agent, scope, file) for every settings file that holds our hooks."""
    found = []
    for name in agents.NAMES:
        agent = agents.get(name)
        for scope in agent.scopes:
            if scope != "user" and root is None:
                continue
            path = agent.target(scope, root, home)
            if agent.hooks_installed(path):
                found.append((name, scope, path))
    return found


def duplicates(root: str | None, home: str | None = None) -> list[tuple[str, str]]:
    """(agent, file) for every copy of our hooks an agent loads besides what install wrote (Agent.also_loaded)."""
    home = home or os.path.expanduser("~")
    return [(name, path) for name in agents.NAMES for path in agents.get(name).also_loaded(root, home)]


# the MCP server ----------------------------------------------------------------------------------
#
# `install --mcp` adds one server, "git-rewind", to the agent's MCP configuration (where, and the
# entry's shape, are the agent's: Agent.mcp_file, Agent.mcp_entry): a JSON file's "mcpServers",
# or a TOML file's [mcp_servers] (Codex). Ours is the entry named git-rewind whose command runs
# `git-rewind mcp`.


def mcp_target(agent: str, scope: str, root: str | None, home: str | None = None) -> str:
    """The MCP configuration file for AGENT at SCOPE."""
    home = home or os.path.expanduser("~")
    if scope not in MCP_SCOPES:
        raise RewindError(f"the MCP server installs at --scope user or project, not {scope}")
    if scope == "project" and root is None:
        raise RewindError("--scope project needs a git work tree; run it inside your project")
    path = agents.get(agent).mcp_file(scope, root, home)
    if path is None:
        raise RewindError(f"no MCP configuration known for {agent}")
    return path


def mcp_entry(agent: str, program: list[str] | None = None, scope: str = "user") -> dict[str, Any]:
    """The server entry: `git-rewind mcp` by the absolute path of this installation, or, in a file meant to be
    committed (.mcp.json), by name (a teammate's agent finds theirs on PATH)."""
    return agents.get(agent).mcp_entry(program_for(scope, program) or ["git-rewind"])


def install_mcp(agent: str, scope: str, root: str | None, home: str | None = None,
                program: list[str] | None = None) -> Change:
    """Add our MCP server entry, keeping every other server and key; a second install changes nothing."""
    path = mcp_target(agent, scope, root, home)
    if path.endswith(".toml"):
        return _install_mcp_toml(path, mcp_entry(agent, program, scope))
    original = read_text(path)
    data = load_json(path)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise RewindError(f"{path}: \"mcpServers\" is not an object; nothing changed")
    if MCP_NAME in servers and not is_own_mcp(servers[MCP_NAME]):
        raise RewindError(f"{path}: an MCP server named {MCP_NAME} that is not this one is there; nothing changed")
    entry = mcp_entry(agent, program, scope)
    if original is not None and servers.get(MCP_NAME) == entry:
        return Change(path, changed=False)
    # A file holding nothing but our hooks is ours: no backup (which would keep them after an uninstall).
    found = agents.get(agent)
    mine = only_ours(data, found.wrapped, found.agent_keys)
    servers[MCP_NAME] = entry
    return Change(path, changed=True, backup=write_json(path, data, None if mine else original))


def uninstall_mcp(agent: str, scope: str, root: str | None, home: str | None = None) -> Change:
    """Remove exactly our server entry; a file we created and left empty goes too."""
    path = mcp_target(agent, scope, root, home)
    if path.endswith(".toml"):
        return _uninstall_mcp_toml(path)
    original = read_text(path)
    if original is None:
        return Change(path, changed=False)
    data = load_json(path)
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or not is_own_mcp(servers.get(MCP_NAME)):
        return Change(path, changed=False)
    found = agents.get(agent)
    mine = only_ours(data, found.wrapped, found.agent_keys)
    del servers[MCP_NAME]
    if not servers:
        del data["mcpServers"]  # an empty table is ours too (a backup below brings back one that was there)
    # Keys the agent stamps into files it loads (Qwen Code's "$version") are nobody's settings, as for hooks.
    if not data.keys() - set(found.agent_keys) and not os.path.exists(path + BACKUP_SUFFIX):
        # we created it and nothing else is in it; its folder goes too if now empty (.qwen/), never the project
        # or the home folder a file such as .mcp.json sits in
        folder = os.path.dirname(os.path.abspath(path))
        return remove_created(path, rmdir=folder not in {os.path.abspath(p) for p in (root, home) if p})

    def same(backup: str) -> bool:
        before = load_json(backup)
        return before == unstamped(data, before, found.agent_keys)

    if restore_backup(path, same):
        return Change(path, changed=True)  # back to its exact bytes from before us
    return Change(path, changed=True, backup=write_json(path, data, None if mine else original))


def mcp_installed(root: str | None, home: str | None = None) -> list[tuple[str, str, str]]:
    """(agent, scope, file) for every MCP configuration that holds our server."""
    found = []
    for agent in agents.NAMES:
        for scope in MCP_SCOPES:
            if scope == "project" and root is None:
                continue
            try:
                path = mcp_target(agent, scope, root, home)  # an agent with no MCP support here: none
                servers = _toml_servers(path)[1] if path.endswith(".toml") else load_json(path).get("mcpServers")
            except RewindError:
                continue
            if isinstance(servers, dict) and is_own_mcp(servers.get(MCP_NAME)):
                found.append((agent, scope, path))
    return found


def _toml_servers(path: str) -> tuple[Any, Any]:
    """(the parsed TOML document, its mcp_servers table or None); a clear error for a bad file."""
    doc = parse_toml(path, read_text(path))
    return doc, doc.get("mcp_servers")


def _install_mcp_toml(path: str, entry: dict[str, Any]) -> Change:
    """`[mcp_servers.git-rewind]` in a Codex config.toml, comments and everything else kept."""
    import tomlkit

    original = read_text(path)
    doc, servers = _toml_servers(path)
    if servers is not None and MCP_NAME in servers:
        ours = servers[MCP_NAME].unwrap()  # every tomlkit item unwraps to plain values
        if not is_own_mcp(ours):
            raise RewindError(f"{path}: an MCP server named {MCP_NAME} that is not this one is there; "
                              "nothing changed")
        if ours == entry:
            return Change(path, changed=False)
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    table = tomlkit.table()
    for key, value in entry.items():
        table[key] = value
    servers[MCP_NAME] = table
    return Change(path, changed=True, backup=write_text(path, tomlkit.dumps(doc), original))


def _uninstall_mcp_toml(path: str) -> Change:
    import tomlkit

    original = read_text(path)
    if original is None:
        return Change(path, changed=False)
    doc, servers = _toml_servers(path)
    if servers is None or MCP_NAME not in servers or not is_own_mcp(servers[MCP_NAME].unwrap()):
        return Change(path, changed=False)
    del servers[MCP_NAME]
    if not servers:
        del doc["mcp_servers"]
    text = tomlkit.dumps(doc)
    if not text.strip() and not os.path.exists(path + BACKUP_SUFFIX):
        return remove_created(path, rmdir=False)  # we created it and nothing else is in it
    if restore_backup(path, lambda backup: same_toml(backup, text)):
        return Change(path, changed=True)  # back to its exact bytes from before us
    return Change(path, changed=True, backup=write_text(path, text, original))


# surviving a restore ------------------------------------------------------------------------------
#
# A project's own settings files (.claude/settings.json, .mcp.json, .gemini/settings.json, …) are in
# the work tree, so a restore to a checkpoint taken before `install` would take our entries out of
# them: an undo must not uninstall git-rewind. The restore asks which of our installs live inside the
# work tree before it writes, and puts back those it took away (the rest of each file as restored).


def in_tree(root: str, touched: list[str], home: str | None = None) -> list[tuple[str, str, str, str]]:
    """(kind "hooks" or "mcp", agent, scope, file) of our project installs whose files a restore touching
    TOUCHED (work-tree paths) may change: their settings or MCP file, or anything in the same folder
    (slash commands). Nothing is read for agents whose files the restore does not touch."""
    touched_set = set(touched)
    above = folders_above(touched)

    def affected(path: str) -> bool:
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        if rel.startswith("../"):
            return False
        folder = os.path.dirname(rel)
        return rel in touched_set or (bool(folder) and folder in above)

    found = []
    for name in agents.NAMES:
        agent = agents.get(name)
        for scope in agent.scopes:
            if scope == "user":
                continue
            path = agent.target(scope, root, home)
            if affected(path) and agent.hooks_installed(path):
                found.append(("hooks", name, scope, path))
        try:
            path = mcp_target(name, "project", root, home)
        except RewindError:
            continue  # no MCP configuration known for this agent
        if affected(path):
            found += [("mcp", a, s, p) for a, s, p in mcp_installed(root, home) if p == path and a == name]
    return found


def reinstate(root: str, entries: list[tuple[str, str, str, str]], home: str | None = None) -> list[str]:
    """Install ENTRIES again where a restore took them out; the files whose entries were put back. An install the
    agent refuses now (Kilo: the restored files hold our plugin elsewhere already) is left out: the restore
    stands."""
    restored = []
    for kind, agent, scope, path in entries:
        try:
            change = (install_mcp if kind == "mcp" else install)(agent, scope, root, home)
        except RewindError:
            continue
        if change.changed or any(c.action == "installed" for c in change.commands):
            restored.append(path)
    return restored
