"""Editing settings files we do not own: load with precise errors, back up once, write atomically,
recognise our own entries, and put the user's exact bytes back when we leave.

The low layer under `install` and the agent modules alike (neither imports the other for this):
the rules pre-commit follows for someone else's hook file. A file is parsed first (invalid JSON
or TOML is an error, and nothing is written); the original is backed up before our first change;
our entries are recognised by their command, so installing twice changes nothing and uninstall
removes exactly ours; a file goes back to its backup's exact bytes when nothing else changed.
"""

from __future__ import annotations

import json
import os
import re
import shlex

from ..base.errors import RewindError
from ..base.fsutil import write_atomic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

BACKUP_SUFFIX = ".git-rewind-backup"
_OWN = re.compile(r"(?:^|[\s/'\"])git-rewind['\"]?\s+hook\b|-m\s+git_rewind['\"]?\s+hook\b|\bgit\s+rewind\s+hook\b"
                  r"|/git_rewind/hook/entry\.py['\"]?\s+hook\b")  # the last: the thin client (install.hook_program)
_OWN_MCP = re.compile(r"(?:^|/)git-rewind\s+mcp$|-m\s+git_rewind\s+mcp$")


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


# our entries: the command they run, and recognising them ---------------------------------------

# The test the shared form of our hook command makes before running git-rewind.
FOUND = "command -v git-rewind >/dev/null 2>&1"


def hook_command(agent: str, program: list[str] | None, reply: str | None = None) -> str:
    """The shell command a hook entry of AGENT runs.

    PROGRAM is what runs `hook --agent AGENT` by absolute path (user and local scope: exact, and found even
    when the agent's PATH lacks its directory): the thin client (install.hook_program) or a git-rewind. None
    is the form for files a team commits (project scope), which must name no path of this machine: the
    git-rewind on PATH, or, where there is none, exit 0 printing only REPLY (the JSON an agent needs to go
    on, if any), because some agents deny a tool when its hook fails. POSIX `sh -c`, whatever shell the
    agent uses.
    """
    if program is not None:
        return " ".join(shlex.quote(part) for part in program) + f" hook --agent {agent}"
    run = f"exec git-rewind hook --agent {agent}"
    if reply is None:
        return f"sh -c '{FOUND} || exit 0; {run}'"
    return f"sh -c '{FOUND} || {{ printf \"%s\\n\" \"$1\"; exit 0; }}; {run}' git-rewind {shlex.quote(reply)}"


def is_own(hook: Any) -> bool:
    """HOOK is a handler of ours: its command (`command`, or Copilot's `bash`) runs `git-rewind hook` (by any
    path, or `-m git_rewind`) or the thin client's `…/git_rewind/hook/entry.py hook`, the absolute forms or
    the shared `sh -c` one (hook_command): all are found, so older installs are too."""
    if not isinstance(hook, dict):
        return False
    return any(isinstance(hook.get(key), str) and bool(_OWN.search(hook[key])) for key in ("command", "bash"))


MCP_NAME = "git-rewind"  # our server's name in an agent's MCP configuration


def is_own_mcp(entry: Any) -> bool:
    """ENTRY is our MCP server: its command and arguments run `git-rewind mcp`."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    line = " ".join([entry["command"], *(str(a) for a in entry.get("args") or [])])
    return bool(_OWN_MCP.search(line))


# reading -----------------------------------------------------------------------------------------


def read_text(path: str) -> str | None:
    """PATH's text, None when it does not exist."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def read_bytes(path: str) -> bytes | None:
    """PATH's bytes, None when it does not exist."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def load_json(path: str) -> dict[str, Any]:
    """The JSON object in PATH ({} when missing or blank); a RewindError naming the file otherwise."""
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


def parse_toml(path: str, text: str | None) -> Any:
    """TEXT (PATH's content, None: missing) as a tomlkit document, comments kept; a clear error if bad."""
    import tomlkit

    try:
        return tomlkit.parse(text or "")
    except Exception as exc:  # tomlkit's parse errors have no common base worth naming
        raise RewindError(f"{path}: not valid TOML ({exc}); nothing changed") from None


def same_toml(path: str, text: str) -> bool:
    """The TOML file PATH holds the same values as TEXT (comments and layout aside)."""
    return bool(parse_toml(path, read_text(path)).unwrap() == parse_toml(path, text).unwrap())


def copy_json(data: Any) -> Any:
    """A deep copy of JSON data."""
    return json.loads(json.dumps(data))


# writing -----------------------------------------------------------------------------------------


def free_backup(path: str) -> str:
    """PATH + BACKUP_SUFFIX, or with .1, .2 … when an earlier backup is there already."""
    backup = path + BACKUP_SUFFIX
    n = 0
    while os.path.lexists(backup):
        n += 1
        backup = f"{path}{BACKUP_SUFFIX}.{n}"
    return backup


def write_text(path: str, text: str, original: str | None) -> str | None:
    """Atomically replace PATH with TEXT, backing up ORIGINAL the first time; the backup's path.

    A settings file linked from a dotfiles repository stays linked (the link's target is written).
    """
    backup = None
    if original is not None and not os.path.exists(path + BACKUP_SUFFIX):
        backup = path + BACKUP_SUFFIX
        import shutil  # here: its imports (bz2, lzma, ~5 ms) are for copies, which a restore makes none of
        shutil.copy2(path, backup)
    write_atomic(path, text, follow=True, makedirs=True)
    return backup


def write_json(path: str, data: dict[str, Any], original: str | None) -> str | None:
    """Atomically replace PATH with DATA as JSON, backing up ORIGINAL the first time; the backup's path."""
    return write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", original)


def restore_backup(path: str, same: Callable[[str], bool]) -> bool:
    """Put PATH's backup back, exact bytes, when SAME(the backup's path) says it holds what PATH would now.

    An unreadable or invalid backup is not the same: the caller writes the file instead.
    """
    backup = path + BACKUP_SUFFIX
    try:
        if not os.path.exists(backup) or not same(backup):
            return False
    except (RewindError, OSError, ValueError):  # unreadable, not UTF-8, not valid
        return False
    import shutil
    shutil.copy2(backup, path)
    return True


def remove_created(path: str, rmdir: bool = True) -> Change:
    """Delete PATH, a file we created with nothing of anyone else's in it (and its folder, if empty)."""
    os.unlink(path)
    if rmdir:
        try:
            os.rmdir(os.path.dirname(path))  # .claude/ or .factory/, if we made it and it is empty
        except OSError:
            pass
    return Change(path, changed=True, removed=True)


# Claude-style hooks files: {"hooks": {Event: [{"matcher": …, "hooks": [handler, …]}]}} ------------
#
# WRAPPED: the events sit under "hooks"; otherwise (Droid's hooks.json) at the top level.


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


def _pruned(data: dict[str, Any], wrapped: bool) -> dict[str, Any]:
    """DATA without empty event lists or an empty "hooks": what removing our entries cannot tell apart."""
    data = copy_json(data)
    hooks = data.get("hooks") if wrapped else data
    if isinstance(hooks, dict):
        for name in [name for name, groups in hooks.items() if groups == []]:
            del hooks[name]
        if wrapped and not hooks:
            del data["hooks"]
    return data


def only_ours(data: dict[str, Any], wrapped: bool, agent_keys: tuple[str, ...] = ()) -> bool:
    """DATA holds nothing but our own hooks and MCP entry (and keys the agent stamps in, AGENT_KEYS): a file
    git-rewind created, which is nobody's to back up, so that removing the last of ours removes it."""
    rest = copy_json(data)
    hooks = rest.get("hooks") if wrapped else rest
    if isinstance(hooks, dict):
        _strip_own(hooks)
    servers = rest.get("mcpServers")
    if isinstance(servers, dict):
        if is_own_mcp(servers.get(MCP_NAME)):
            del servers[MCP_NAME]
        if not servers:
            del rest["mcpServers"]
    return not _pruned(rest, wrapped).keys() - set(agent_keys)


def unstamped(data: dict[str, Any], before: dict[str, Any], agent_keys: tuple[str, ...]) -> dict[str, Any]:
    """DATA without the AGENT_KEYS the agent stamped in since BEFORE (the backup) was taken: what to compare with
    the backup to tell whether nothing but us changed the file."""
    return {key: value for key, value in data.items() if key not in agent_keys or key in before}


def write_hooks(path: str, entries: dict[str, list[dict[str, Any]]], wrapped: bool,
                seed: Callable[[], dict[str, Any]] | None = None, agent_keys: tuple[str, ...] = ()) -> Change:
    """ENTRIES (our groups, event by event) into the hooks file PATH, after the others of each event;
    every other key and hook kept. SEED: what a file we create starts from. Invalid JSON: an error. A file
    holding only what we wrote (only_ours: our MCP entry) is not backed up."""
    original = read_text(path)
    data = load_json(path)
    mine = only_ours(data, wrapped, agent_keys)
    if original is None and seed is not None:
        data.update(seed())
    before = json.dumps(data, sort_keys=True)
    hooks = _hooks_of(data, wrapped, path)
    _strip_own(hooks)
    for event_name, groups in entries.items():
        existing = hooks.setdefault(event_name, [])
        if not isinstance(existing, list):
            raise RewindError(f"{path}: hooks for {event_name} are not a list; nothing changed")
        existing.extend(groups)
    if original is not None and json.dumps(data, sort_keys=True) == before:
        return Change(path, changed=False)
    return Change(path, changed=True, backup=write_json(path, data, None if mine else original))


def remove_hooks(path: str, wrapped: bool, agent_keys: tuple[str, ...] = ()) -> Change:
    """Remove exactly our entries from the hooks file PATH; a file we created and left empty goes too,
    one we changed gets its exact bytes back when nothing else changed since. AGENT_KEYS: top-level keys the
    agent itself adds when it rewrites the file (Qwen Code's "$version"), nobody's settings: a file left
    with only those counts as empty, and one the backup lacks does not stop the backup coming back."""
    original = read_text(path)
    if original is None:
        return Change(path, changed=False)
    data = load_json(path)
    mine = only_ours(data, wrapped, agent_keys)
    had_hooks = "hooks" in data
    hooks = _hooks_of(data, wrapped, path)
    if not _strip_own(hooks):
        if wrapped and not had_hooks:
            del data["hooks"]
        return Change(path, changed=False)
    if wrapped and not hooks:
        del data["hooks"]
    if not data.keys() - set(agent_keys) and not os.path.exists(path + BACKUP_SUFFIX):
        return remove_created(path)

    def same(backup: str) -> bool:
        before = load_json(backup)
        return _pruned(before, wrapped) == _pruned(unstamped(data, before, agent_keys), wrapped)

    if restore_backup(path, same):
        return Change(path, changed=True)  # back to what it was before us: its exact bytes
    return Change(path, changed=True, backup=write_json(path, data, None if mine else original))


def has_own_hooks(path: str, wrapped: bool) -> bool:
    """The hooks file PATH holds at least one handler of ours (an unreadable file: no)."""
    try:
        data = load_json(path)
    except RewindError:
        return False
    hooks = data.get("hooks") if wrapped else data
    return isinstance(hooks, dict) and any(
        isinstance(group, dict) and any(is_own(h) for h in group.get("hooks") or [])
        for groups in hooks.values() if isinstance(groups, list) for group in groups
    )


# Flat hooks files: {"version": 1, "hooks": {event: [handler, …]}}, no matcher groups (Cursor's hooks.json,
# Copilot CLI's hooks/*.json). Our handlers are recognised by is_own; "version" and everything else stay.


def _load_flat(path: str) -> tuple[dict[str, Any], str | None]:
    original = read_text(path)
    data = load_json(path)
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise RewindError(f"{path}: \"hooks\" is not an object; nothing changed")
    for name, entries in hooks.items():
        if not isinstance(entries, list):
            raise RewindError(f"{path}: hooks for {name} are not a list; nothing changed")
    return data, original


def _strip_flat(hooks: dict[str, Any]) -> int:
    removed = 0
    for name in list(hooks):
        kept = [e for e in hooks[name] if not is_own(e)]
        removed += len(hooks[name]) - len(kept)
        if kept or not hooks[name]:
            hooks[name] = kept
        else:
            del hooks[name]
    return removed


def _pruned_flat(data: dict[str, Any], version: int) -> dict[str, Any]:
    data = copy_json(data)
    if data.get("version") == version:
        del data["version"]  # install adds it when missing
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        for name in [n for n, entries in hooks.items() if entries == []]:
            del hooks[name]
        if not hooks:
            del data["hooks"]
    return data


def write_flat_hooks(path: str, entries: dict[str, dict[str, Any]], version: int) -> Change:
    """ENTRIES (our one handler per event) into the flat hooks file PATH, after the others of each event
    ("version" kept, or set to VERSION); a second install changes nothing. Invalid JSON: an error."""
    data, original = _load_flat(path)
    before = json.dumps(data, sort_keys=True)
    data.setdefault("version", version)
    hooks = data.setdefault("hooks", {})
    _strip_flat(hooks)
    for name, handler in entries.items():
        hooks.setdefault(name, []).append(handler)
    if original is not None and json.dumps(data, sort_keys=True) == before:
        return Change(path, changed=False)
    return Change(path, changed=True, backup=write_json(path, data, original))


def remove_flat_hooks(path: str, version: int) -> Change:
    """Remove exactly our handlers from the flat hooks file PATH; a file we created and left empty goes, one
    we changed gets its exact bytes back when nothing else changed since."""
    data, original = _load_flat(path)
    if original is None or not _strip_flat(data.get("hooks", {})):
        return Change(path, changed=False)
    hooks = data.get("hooks", {})
    for name in [n for n, entries in hooks.items() if entries == []]:
        del hooks[name]
    if not os.path.exists(path + BACKUP_SUFFIX):
        if not hooks and set(data) <= {"hooks", "version"}:
            return remove_created(path)  # nothing of anyone else's is in it
    elif restore_backup(path, lambda backup: _pruned_flat(load_json(backup), version) == _pruned_flat(data, version)):
        return Change(path, changed=True)  # back to its exact bytes from before us
    if not hooks:
        data.pop("hooks", None)
    return Change(path, changed=True, backup=write_json(path, data, original))


def has_own_flat_hooks(path: str) -> bool:
    """The flat hooks file PATH holds at least one handler of ours (an unreadable file: no)."""
    try:
        data, _ = _load_flat(path)
    except RewindError:
        return False
    return any(is_own(e) for entries in data.get("hooks", {}).values() for e in entries)
