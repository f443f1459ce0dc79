"""`git rewind install / uninstall`: our hook entries in an agent's settings file, and nothing else.

Edits files we do not own the careful way: the file is parsed first (invalid JSON is an error
and nothing is written), every other key and hook is kept, the original is backed up before our
first change, our own entries are recognised by their command (so installing twice changes
nothing and uninstall removes exactly ours), and the file is replaced atomically.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from typing import Any

from . import agents
from .errors import RewindError

BACKUP_SUFFIX = ".git-rewind-backup"
TIMEOUT = 30  # seconds the agent gives our hook
_OWN = re.compile(r"(?:^|[\s/'\"])git-rewind['\"]?\s+hook\b|-m\s+git_rewind['\"]?\s+hook\b|\bgit\s+rewind\s+hook\b")


class Change:
    """What install or uninstall did to one file (and to the agent's slash commands)."""

    __slots__ = ("path", "changed", "backup", "removed", "commands", "notes")

    def __init__(self, path: str, changed: bool, backup: str | None = None, removed: bool = False,
                 commands: list[CommandChange] | None = None) -> None:
        self.path = path
        self.changed = changed
        self.backup = backup
        self.removed = removed  # the file itself was deleted (we had created it)
        self.commands = commands or []
        self.notes: list[str] = []  # further lines for the user (e.g. another file an agent module changed)


class CommandChange:
    """What install or uninstall did to one slash command file.

    action: "installed", "unchanged" (already ours), "removed", "restored" (the user's own file
    put back from its backup), "kept" (changed since we installed it: left alone).
    """

    __slots__ = ("path", "action", "backup")

    def __init__(self, path: str, action: str, backup: str | None = None) -> None:
        self.path = path
        self.action = action
        self.backup = backup


def executable() -> list[str]:
    """How to run this git-rewind, by absolute path: agents' PATH may lack our bin directory."""
    beside = os.path.join(os.path.dirname(sys.executable), "git-rewind")
    if os.access(beside, os.X_OK):
        return [beside]
    found = shutil.which("git-rewind")
    if found:
        return [os.path.abspath(found)]
    return [sys.executable, "-m", "git_rewind"]


def hook_command(agent: str, program: list[str] | None = None) -> str:
    """The shell command an agent runs for every hook event."""
    return " ".join(shlex.quote(part) for part in (program or executable())) + f" hook --agent {agent}"


def entries(agent: str, command: str) -> dict[str, list[dict[str, Any]]]:
    """Our hook groups, event by event, in the agents' common format."""
    result: dict[str, list[dict[str, Any]]] = {}
    module = agents.module(agent)
    for event_name, matcher in module.HOOKS.items():
        group: dict[str, Any] = {}
        if matcher is not None:
            group["matcher"] = matcher
        handler = getattr(module, "handler", None)  # an agent's own handler shape (e.g. timeouts in ms)
        group["hooks"] = [handler(command) if handler else {"type": "command", "command": command,
                                                            "timeout": TIMEOUT}]
        result[event_name] = [group]
    return result


def template(agent: str) -> dict[str, Any]:
    """The readable file under hooks/<agent>/ that documents what install writes."""
    hooks = entries(agent, f"git-rewind hook --agent {agent}")
    return {"hooks": hooks} if agents.module(agent).WRAPPED else dict(hooks)


def target(agent: str, scope: str, root: str | None, home: str | None = None) -> str:
    """The settings file for AGENT at SCOPE."""
    module = agents.module(agent)
    if scope not in module.SCOPES:
        raise RewindError(f"{agent} has no {scope} scope (one of {', '.join(module.SCOPES)})")
    if scope != "user" and root is None:
        raise RewindError(f"--scope {scope} needs a git work tree; run it inside your project")
    return str(module.settings_file(scope, root, home or os.path.expanduser("~")))


def is_own(hook: Any) -> bool:
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and bool(_OWN.search(hook["command"]))


def _load(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise RewindError(f"{path}: cannot read: {exc}") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise RewindError(f"{path}: not valid JSON ({exc}); nothing changed") from None
    if not isinstance(data, dict):
        raise RewindError(f"{path}: not a JSON object; nothing changed")
    return data


def _hooks_of(data: dict[str, Any], wrapped: bool, path: str) -> dict[str, Any]:
    hooks = data.setdefault("hooks", {}) if wrapped else data
    if not isinstance(hooks, dict):
        raise RewindError(f"{path}: \"hooks\" is not an object; nothing changed")
    return hooks


def _strip_own(hooks: dict[str, Any]) -> int:
    """Remove our entries from every event; drop groups and events they leave empty."""
    removed = 0
    for event_name in list(hooks):
        groups = hooks[event_name]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                kept = [h for h in group["hooks"] if not is_own(h)]
                removed += len(group["hooks"]) - len(kept)
                if not kept and len(group["hooks"]) > 0:
                    continue
                group["hooks"] = kept
            kept_groups.append(group)
        if kept_groups:
            hooks[event_name] = kept_groups
        elif groups:
            del hooks[event_name]
    return removed


def _write(path: str, data: dict[str, Any], original: str | None) -> str | None:
    """Atomically replace PATH with DATA as JSON, backing up ORIGINAL the first time; the backup's path."""
    return _write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", original)


def _pruned(data: dict[str, Any], wrapped: bool) -> dict[str, Any]:
    """DATA without empty event lists or an empty "hooks": what removing our entries cannot tell apart."""
    data = json.loads(json.dumps(data))
    hooks = data.get("hooks") if wrapped else data
    if isinstance(hooks, dict):
        for name in [name for name, groups in hooks.items() if groups == []]:
            del hooks[name]
        if wrapped and not hooks:
            del data["hooks"]
    return data


def _original(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def _droid_inherited_hooks(path: str) -> dict[str, Any]:
    """Droid reads settings.json's "hooks" only while hooks.json is absent: carry them over."""
    settings = _load(os.path.join(os.path.dirname(path), "settings.json"))
    hooks = settings.get("hooks")
    return json.loads(json.dumps(hooks)) if isinstance(hooks, dict) else {}


def install(agent: str, scope: str, root: str | None, home: str | None = None,
            program: list[str] | None = None) -> Change:
    """Write our hook entries (and slash commands) for AGENT at SCOPE; a second install changes nothing.

    An agent whose configuration is not a Claude-style hooks file provides `install_hooks` (and
    `uninstall_hooks`, `hooks_installed`) in its module; this one is used otherwise.
    """
    module = agents.module(agent)
    if hasattr(module, "install_hooks"):
        return module.install_hooks(scope, root, home, hook_command(agent, program))
    change = write_hooks(agent, target(agent, scope, root, home), hook_command(agent, program))
    change.commands = install_commands(agent, scope, root, home)
    return change


def write_hooks(agent: str, path: str, command: str) -> Change:
    """Our hook groups, running COMMAND, into the Claude-style hooks file PATH (after the others of
    each event); every other key and hook kept. Invalid JSON: an error, and nothing written."""
    module = agents.module(agent)
    original = _original(path)
    data = _load(path)
    if original is None and not module.WRAPPED:
        data.update(_droid_inherited_hooks(path))
    before = json.dumps(data, sort_keys=True)
    hooks = _hooks_of(data, module.WRAPPED, path)
    _strip_own(hooks)
    for event_name, groups in entries(agent, command).items():
        existing = hooks.setdefault(event_name, [])
        if not isinstance(existing, list):
            raise RewindError(f"{path}: hooks for {event_name} are not a list; nothing changed")
        existing.extend(groups)
    if original is not None and json.dumps(data, sort_keys=True) == before:
        return Change(path, changed=False)
    return Change(path, changed=True, backup=_write(path, data, original))


def uninstall(agent: str, scope: str, root: str | None, home: str | None = None) -> Change:
    """Remove exactly our entries (and unchanged slash commands) for AGENT at SCOPE; a file we created and
    left empty goes too."""
    module = agents.module(agent)
    if hasattr(module, "uninstall_hooks"):
        return module.uninstall_hooks(scope, root, home)
    path = target(agent, scope, root, home)
    _load(path)  # an unreadable file: an error, and nothing changes
    commands = uninstall_commands(agent, scope, root, home)  # first: their directory is in the hooks' one
    change = remove_hooks(agent, path)
    change.commands = commands
    return change


def remove_hooks(agent: str, path: str) -> Change:
    """Remove exactly our entries from the Claude-style hooks file PATH; a file we created and left
    empty goes too, one we changed gets its exact bytes back when nothing else changed since."""
    module = agents.module(agent)
    original = _original(path)
    if original is None:
        return Change(path, changed=False)
    data = _load(path)
    had_hooks = "hooks" in data
    hooks = _hooks_of(data, module.WRAPPED, path)
    if not _strip_own(hooks):
        if module.WRAPPED and not had_hooks:
            del data["hooks"]
        return Change(path, changed=False)
    if module.WRAPPED and not hooks:
        del data["hooks"]
    backup = path + BACKUP_SUFFIX
    if not data and not os.path.exists(backup):
        os.unlink(path)  # we created it; nothing of anyone else's is in it
        try:
            os.rmdir(os.path.dirname(path))  # .claude/ or .factory/, if we made it and it is empty
        except OSError:
            pass
        return Change(path, changed=True, removed=True)
    try:
        # Back to what it was before us: put back its exact bytes.
        if _pruned(_load(backup), module.WRAPPED) == _pruned(data, module.WRAPPED):
            shutil.copy2(backup, path)
            return Change(path, changed=True)
    except RewindError:
        pass
    return Change(path, changed=True, backup=_write(path, data, original))


# slash commands (Claude Code) --------------------------------------------------------------------
#
# /checkpoint, /resume and /rewind are markdown files shipped inside the package (readable copies
# in hooks/claude-code/commands/). A file is ours when its bytes are exactly the shipped ones: a
# user's own file of the same name is backed up before we write ours, and put back on uninstall;
# a file of ours the user changed since is left where it is.

COMMANDS_PACKAGE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "slash_commands")


def shipped_commands(agent: str) -> dict[str, bytes]:
    """File name → content of the slash commands we install for AGENT (none for Droid)."""
    if agent != "claude-code":
        return {}
    found = {}
    for name in sorted(os.listdir(COMMANDS_PACKAGE_DIR)):
        if name.endswith(".md"):
            with open(os.path.join(COMMANDS_PACKAGE_DIR, name), "rb") as fh:
                found[name] = fh.read()
    if not found:
        raise RewindError(f"no slash commands in {COMMANDS_PACKAGE_DIR}: is git-rewind installed whole?")
    return found


def commands_dir(agent: str, scope: str, root: str | None, home: str | None = None) -> str:
    """~/.claude/commands (user) or <project>/.claude/commands (project, local): beside the settings file."""
    return os.path.join(os.path.dirname(target(agent, scope, root, home)), "commands")


def _read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def _free_backup(path: str) -> str:
    """PATH + BACKUP_SUFFIX, or with .1, .2 … when an earlier backup is there already."""
    backup = path + BACKUP_SUFFIX
    n = 0
    while os.path.lexists(backup):
        n += 1
        backup = f"{path}{BACKUP_SUFFIX}.{n}"
    return backup


def install_commands(agent: str, scope: str, root: str | None, home: str | None = None) -> list[CommandChange]:
    """Copy our slash commands into the agent's commands directory, backing up a different file first."""
    shipped = shipped_commands(agent)
    if not shipped:
        return []
    directory = commands_dir(agent, scope, root, home)
    changes = []
    for name, content in shipped.items():
        path = os.path.join(directory, name)
        current = _read_bytes(path)
        if current == content:
            changes.append(CommandChange(path, "unchanged"))
            continue
        backup = None
        if current is not None:
            backup = _free_backup(path)
            shutil.copy2(path, backup)
        os.makedirs(directory, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(content)
        os.replace(tmp, path)
        changes.append(CommandChange(path, "installed", backup))
    return changes


def uninstall_commands(agent: str, scope: str, root: str | None, home: str | None = None) -> list[CommandChange]:
    """Remove our slash commands that are still exactly as shipped, putting back what they replaced."""
    shipped = shipped_commands(agent)
    if not shipped:
        return []
    directory = commands_dir(agent, scope, root, home)
    changes = []
    for name, content in shipped.items():
        path = os.path.join(directory, name)
        current = _read_bytes(path)
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
    for agent in agents.NAMES:
        for scope in agents.module(agent).SCOPES:
            if scope != "user" and root is None:
                continue
            path = target(agent, scope, root, home)
            if hasattr(agents.module(agent), "hooks_installed"):
                if agents.module(agent).hooks_installed(path):
                    found.append((agent, scope, path))
                continue
            try:
                data = _load(path)
            except RewindError:
                continue
            hooks = data.get("hooks") if agents.module(agent).WRAPPED else data
            if isinstance(hooks, dict) and any(
                isinstance(group, dict) and any(is_own(h) for h in group.get("hooks") or [])
                for groups in hooks.values() if isinstance(groups, list) for group in groups
            ):
                found.append((agent, scope, path))
    return found


# the MCP server ----------------------------------------------------------------------------------
#
# `install --mcp` adds one server, "git-rewind", to the agent's MCP configuration: Claude Code reads
# <project>/.mcp.json and ~/.claude.json, Droid .factory/mcp.json and ~/.factory/mcp.json (the shape
# `droid mcp add` writes). Ours is the entry named git-rewind whose command runs `git-rewind mcp`.

MCP_NAME = "git-rewind"


def mcp_target(agent: str, scope: str, root: str | None, home: str | None = None) -> str:
    """The MCP configuration file for AGENT at SCOPE."""
    home = home or os.path.expanduser("~")
    if scope not in ("user", "project"):
        raise RewindError(f"the MCP server installs at --scope user or project, not {scope}")
    if scope == "project" and root is None:
        raise RewindError("--scope project needs a git work tree; run it inside your project")
    if agent == "claude-code":
        return os.path.join(home, ".claude.json") if scope == "user" else os.path.join(str(root), ".mcp.json")
    if agent == "droid":
        return os.path.join(home if scope == "user" else str(root), ".factory", "mcp.json")
    if agent == "gemini":  # the settings file its hooks live in, under "mcpServers" (as `gemini mcp add`)
        return os.path.join(home if scope == "user" else str(root), ".gemini", "settings.json")
    if agent == "cursor":
        return os.path.join(home if scope == "user" else str(root), ".cursor", "mcp.json")
    if agent == "codex":  # TOML: [mcp_servers.git-rewind] (as `codex mcp add`)
        from .agents import codex

        return codex.config_file(home) if scope == "user" else os.path.join(str(root), ".codex", "config.toml")
    raise RewindError(f"no MCP configuration known for {agent}")


def mcp_entry(agent: str, program: list[str] | None = None) -> dict[str, Any]:
    """The server entry: `git-rewind mcp` by the absolute path of this installation."""
    command = program or executable()
    entry: dict[str, Any] = {"type": "stdio", "command": command[0], "args": [*command[1:], "mcp"]}
    if agent == "droid":
        entry["disabled"] = False
    if agent in ("gemini", "cursor", "codex"):  # what their own `mcp add` writes: no type
        del entry["type"]
    return entry


def _is_own_mcp(entry: Any) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    line = " ".join([entry["command"], *(str(a) for a in entry.get("args") or [])])
    return bool(re.search(r"(?:^|/)git-rewind\s+mcp$|-m\s+git_rewind\s+mcp$", line))


def install_mcp(agent: str, scope: str, root: str | None, home: str | None = None,
                program: list[str] | None = None) -> Change:
    """Add our MCP server entry, keeping every other server and key; a second install changes nothing."""
    path = mcp_target(agent, scope, root, home)
    if path.endswith(".toml"):
        return _install_mcp_toml(path, mcp_entry(agent, program))
    original = _original(path)
    data = _load(path)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise RewindError(f"{path}: \"mcpServers\" is not an object; nothing changed")
    if MCP_NAME in servers and not _is_own_mcp(servers[MCP_NAME]):
        raise RewindError(f"{path}: an MCP server named {MCP_NAME} that is not this one is there; nothing changed")
    entry = mcp_entry(agent, program)
    if original is not None and servers.get(MCP_NAME) == entry:
        return Change(path, changed=False)
    servers[MCP_NAME] = entry
    return Change(path, changed=True, backup=_write(path, data, original))


def uninstall_mcp(agent: str, scope: str, root: str | None, home: str | None = None) -> Change:
    """Remove exactly our server entry; a file we created and left empty goes too."""
    path = mcp_target(agent, scope, root, home)
    if path.endswith(".toml"):
        return _uninstall_mcp_toml(path)
    original = _original(path)
    if original is None:
        return Change(path, changed=False)
    data = _load(path)
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or not _is_own_mcp(servers.get(MCP_NAME)):
        return Change(path, changed=False)
    del servers[MCP_NAME]
    if not servers:
        del data["mcpServers"]  # an empty table is ours too (a backup below brings back one that was there)
    backup = path + BACKUP_SUFFIX
    if not data and not os.path.exists(backup):
        os.unlink(path)  # we created it and nothing else is in it
        return Change(path, changed=True, removed=True)
    try:
        if os.path.exists(backup) and _load(backup) == data:
            shutil.copy2(backup, path)  # back to its exact bytes from before us
            return Change(path, changed=True)
    except RewindError:
        pass
    return Change(path, changed=True, backup=_write(path, data, original))


def mcp_installed(root: str | None, home: str | None = None) -> list[tuple[str, str, str]]:
    """(agent, scope, file) for every MCP configuration that holds our server."""
    found = []
    for agent in agents.NAMES:
        for scope in ("user", "project"):
            if scope == "project" and root is None:
                continue
            try:
                path = mcp_target(agent, scope, root, home)  # an agent with no MCP support here: none
                servers = _toml_servers(path)[1] if path.endswith(".toml") else _load(path).get("mcpServers")
            except RewindError:
                continue
            if isinstance(servers, dict) and _is_own_mcp(servers.get(MCP_NAME)):
                found.append((agent, scope, path))
    return found


def _toml_servers(path: str) -> tuple[Any, Any]:
    """(the parsed TOML document, its mcp_servers table or None); a clear error for a bad file."""
    import tomlkit

    original = _original(path)
    try:
        doc = tomlkit.parse(original or "")
    except Exception as exc:  # tomlkit's parse errors have no common base worth naming
        raise RewindError(f"{path}: not valid TOML ({exc}); nothing changed") from None
    return doc, doc.get("mcp_servers")


def _install_mcp_toml(path: str, entry: dict[str, Any]) -> Change:
    """`[mcp_servers.git-rewind]` in a Codex config.toml, comments and everything else kept."""
    import tomlkit

    original = _original(path)
    doc, servers = _toml_servers(path)
    if servers is not None and MCP_NAME in servers:
        if not _is_own_mcp(servers[MCP_NAME].unwrap() if hasattr(servers[MCP_NAME], "unwrap") else None):
            raise RewindError(f"{path}: an MCP server named {MCP_NAME} that is not this one is there; "
                              "nothing changed")
        if servers[MCP_NAME].unwrap() == entry:
            return Change(path, changed=False)
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    table = tomlkit.table()
    for key, value in entry.items():
        table[key] = value
    servers[MCP_NAME] = table
    return Change(path, changed=True, backup=_write_text(path, tomlkit.dumps(doc), original))


def _uninstall_mcp_toml(path: str) -> Change:
    import tomlkit

    original = _original(path)
    if original is None:
        return Change(path, changed=False)
    doc, servers = _toml_servers(path)
    if servers is None or MCP_NAME not in servers or not _is_own_mcp(servers[MCP_NAME].unwrap()):
        return Change(path, changed=False)
    del servers[MCP_NAME]
    if not servers:
        del doc["mcp_servers"]
    text = tomlkit.dumps(doc)
    backup = path + BACKUP_SUFFIX
    if not text.strip() and not os.path.exists(backup):
        os.unlink(path)  # we created it and nothing else is in it
        return Change(path, changed=True, removed=True)
    if os.path.exists(backup) and _original(backup) is not None and \
            tomlkit.parse(_original(backup) or "").unwrap() == tomlkit.parse(text).unwrap():
        shutil.copy2(backup, path)  # back to its exact bytes from before us
        return Change(path, changed=True)
    return Change(path, changed=True, backup=_write_text(path, text, original))


def _write_text(path: str, text: str, original: str | None) -> str | None:
    """Atomically replace PATH with TEXT, backing up ORIGINAL the first time; the backup's path."""
    backup = None
    if original is not None and not os.path.exists(path + BACKUP_SUFFIX):
        backup = path + BACKUP_SUFFIX
        shutil.copy2(path, backup)
    target = os.path.realpath(path)  # a settings file linked from a dotfiles repository stays linked
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = f"{target}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    if original is not None:
        shutil.copymode(target, tmp)
    os.replace(tmp, target)
    return backup
