"""Setting git-rewind up and looking at it: `install`, `uninstall`, `status`, `daemon`, `config`."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from ...base import config, turns
from ...base.errors import RewindError
from ...base.repo import Repo
from .common import AGENT_CHOICE, CONTEXT, cli, repo_or_none

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ...agents.settingsfile import Change, CommandChange

def _scope_root(scope: str) -> str | None:
    if scope == "user":
        return None
    return Repo.discover().root


@cli.command("install", context_settings=CONTEXT)
@click.option("--agent", type=AGENT_CHOICE, help="Which agent's hooks to write.")
@click.option("--scope", type=click.Choice(["user", "project", "local"]), default="user", show_default=True,
              help="user: every project; project: the agent's directory in this repository (.claude/, "
                   ".factory/, .gemini/, .codex/, .opencode/, .kilo/, .cursor/, .clinerules/hooks/; shared); local: "
                   ".claude/settings.local.json (Claude Code only; yours only).")
@click.option("--mcp", "mcp_server", is_flag=True,
              help="Add the MCP server (git rewind mcp) to the agent's MCP configuration instead of the hooks.")
@click.option("--git-hooks", "git_hooks", is_flag=True,
              help="Instead: git's post-commit, post-rewrite and prepare-commit-msg hooks in this repository, which "
                   "note who wrote each committed line (refs/notes/rewind-authorship); hooks already there still "
                   "run first.")
def install_command(agent: str | None, scope: str, mcp_server: bool, git_hooks: bool) -> None:
    """Write git-rewind's hook entries (or, with --mcp, its MCP server) into the agent's settings; with
    --git-hooks, add git hooks that record who wrote each line a commit adds."""
    from ...agents import install

    if git_hooks:
        if agent or mcp_server or scope != "user":
            raise click.UsageError("--git-hooks takes no --agent, --scope or --mcp")
        _install_git_hooks()
        return
    if agent is None:
        raise click.UsageError("name the agent (--agent AGENT), or give --git-hooks")
    if mcp_server:
        change = install.install_mcp(agent, scope, _scope_root(scope))
        if not change.changed:
            click.echo(f"already installed: {change.path}")
            return
        if change.backup:
            click.echo(f"backed up {change.path} to {change.backup}")
        click.echo(f"installed the {install.MCP_NAME} MCP server for {agent} ({scope}) in {change.path}")
        return
    change = install.install(agent, scope, _scope_root(scope))
    if not change.changed:
        click.echo(f"already installed: {change.path}")
    else:
        if change.backup:
            click.echo(f"backed up {change.path} to {change.backup}")
        click.echo(f"installed {agent} hooks ({scope}) in {change.path}")
        click.echo(f"hook command: {install.hook_command(agent, scope=scope)}")
        if scope in install.SHARED_SCOPES:
            click.echo("(a project's files are shared: the hooks run the git-rewind on PATH, and exit 0 quietly "
                       "where there is none)")
    for note in change.notes:
        click.echo(note)
    _echo_commands(change.commands)


def _echo_commands(changes: list[CommandChange]) -> None:
    """One line per slash command file install or uninstall changed (or refused to)."""
    for c in changes:
        name = "/" + os.path.splitext(os.path.basename(c.path))[0]
        if c.action == "installed":
            if c.backup:
                click.echo(f"backed up {c.path} to {c.backup}")
            click.echo(f"installed command {name}: {c.path}")
        elif c.action == "removed":
            click.echo(f"removed command {name}: {c.path}")
        elif c.action == "restored":
            click.echo(f"restored your {c.path} from {c.backup}")
        elif c.action == "kept":
            click.echo(f"kept {c.path}: changed since git-rewind installed it, so {name} stays")


@cli.command("uninstall", context_settings=CONTEXT)
@click.option("--agent", type=AGENT_CHOICE, help="Whose hooks to remove.")
@click.option("--scope", type=click.Choice(["user", "project", "local"]), default="user", show_default=True,
              help="Which settings file (as for install).")
@click.option("--mcp", "mcp_server", is_flag=True, help="Remove the MCP server entry instead of the hooks.")
@click.option("--git-hooks", "git_hooks", is_flag=True,
              help="Instead: git-rewind's git hooks in this repository, putting back the hooks they ran first.")
@click.option("--everything", is_flag=True,
              help="Every agent, every scope found (user; project and local in this work tree), hooks and MCP "
                   "entries, and this repository's git hooks; then say how to drop the store.")
def uninstall_command(agent: str | None, scope: str, mcp_server: bool, git_hooks: bool, everything: bool) -> None:
    """Remove exactly git-rewind's own hook entries (or, with --mcp, its MCP server) from the agent's settings;
    with --git-hooks, its git hooks."""
    from ...agents import install

    if everything:
        if agent or mcp_server or git_hooks or scope != "user":
            raise click.UsageError("--everything takes no --agent, --scope, --mcp or --git-hooks")
        _uninstall_everything()
        return
    if git_hooks:
        if agent or mcp_server or scope != "user":
            raise click.UsageError("--git-hooks takes no --agent, --scope or --mcp")
        _uninstall_git_hooks(Repo.discover())
        return
    if agent is None:
        raise click.UsageError("name the agent (--agent AGENT), --git-hooks, or --everything")
    if mcp_server:
        _echo_removal(install.uninstall_mcp(agent, scope, _scope_root(scope)),
                      f"the {install.MCP_NAME} MCP server ({scope})")
        return
    change = install.uninstall(agent, scope, _scope_root(scope))
    _echo_removal(change, f"{agent} hooks ({scope})")
    for note in change.notes:
        click.echo(note)
    _echo_commands(change.commands)


def _uninstall_everything() -> None:
    """`uninstall --everything`: one line per file changed (or refused), then how to drop the store."""
    from ...agents import install
    from ...ops import gc

    repo = repo_or_none()
    removals = install.uninstall_everything(repo.root if repo else None)
    git_hooks = _uninstall_git_hooks(repo, quiet=True) if repo is not None else False
    for r in removals:
        what = f"{r.agent} hooks ({r.scope})" if r.kind == "hooks" else f"the {install.MCP_NAME} MCP server " \
            f"for {r.agent} ({r.scope})"
        if r.change is None:
            click.echo(f"left {what} alone: {r.error}", err=True)
            continue
        _echo_removal(r.change, what)
        for note in r.change.notes:
            click.echo(note)
        _echo_commands(r.change.commands)
    if not removals and not git_hooks:
        click.echo("no hooks or MCP entries of git-rewind found" + ("" if repo else " (user scope; run it in a "
                                                                       "project for its project and local files)"))
    where = "this repository" if repo else "a repository (run these in each one, at its top)"
    click.echo(f"\nThe checkpoints stay in {where}; to drop them all (every checkpoint, note and private file):")
    for line in gc.drop_store_commands(repo):
        click.echo(f"  {line}")
    if any(r.change is None for r in removals):
        sys.exit(1)


def _install_git_hooks() -> None:
    """`install --git-hooks`: one line per hook."""
    from ...hook import gitinstall

    for change in gitinstall.install(Repo.discover()):
        if change.action == "unchanged":
            click.echo(f"already installed: {change.path}")
            continue
        click.echo(f"{change.action} git hook {change.path}"
                   + (f" (runs {change.chained} first)" if change.chained and change.action == "installed" else ""))


def _uninstall_git_hooks(repo: Repo, quiet: bool = False) -> bool:
    """`uninstall --git-hooks` (QUIET: say nothing where none was installed); whether any was ours."""
    from ...hook import gitinstall

    changes = gitinstall.uninstall(repo)
    for change in changes:
        if change.action == "restored":
            click.echo(f"removed git hook {change.path}, put back the hook it ran first")
        elif change.action == "removed":
            click.echo(f"removed git hook {change.path}")
        elif change.action == "kept":
            click.echo(f"left {change.path} alone: not git-rewind's any more ({change.chained} is the hook "
                       "git-rewind's ran first)")
    mine = any(c.action in ("restored", "removed") for c in changes)
    if not mine and not quiet:
        click.echo(f"not installed: no git hooks of git-rewind in {gitinstall.hooks_dir(repo)}")
    return mine


def _echo_removal(change: Change, what: str) -> None:
    if not change.changed:
        click.echo(f"not installed: {change.path}")
    elif change.removed:
        click.echo(f"removed {change.path} (git-rewind had created it)")
    else:
        click.echo(f"removed {what} from {change.path}")


@cli.command("status", context_settings=CONTEXT)
@click.option("-n", "limit", type=click.IntRange(min=0), default=10, show_default=True,
              help="How many recent hook decisions to show (0: all in the log).")
@click.option("--json", "as_json", is_flag=True, help="Print everything as one JSON object.")
def status_command(limit: int, as_json: bool) -> None:
    """The checkpoint tier and where it comes from, recent hook decisions, installed hooks, the store's size."""
    from .. import status

    info = status.collect(limit)
    if as_json:
        click.echo(json.dumps(info.as_json(), indent=2))
        return
    if info.config_error:
        click.echo(f"config error: {info.config_error} (hooks use the defaults)")
    for key, setting in info.settings.items():
        click.echo(f"{key}: {config.format_value(setting.value, bare_string=True)}  ({setting.source})")
    click.echo("hooks installed:" if info.installed else "hooks installed: none (git rewind install --agent …)")
    for agent, scope, path in info.installed:
        click.echo(f"  {agent:<12} {scope:<8} {path}")
    for agent, path in info.duplicates:
        click.echo(f"warning: {agent} also loads git-rewind's hooks from {path}: every hook runs twice; remove one")
    if info.mcp_installed:
        click.echo("MCP server installed:")
    for agent, scope, path in info.mcp_installed:
        click.echo(f"  {agent:<12} {scope:<8} {path}")
    for agent in info.watched:  # nothing to install: not listed as installed
        click.echo(f"{agent} has no hooks to install: run it as git rewind watch -- {agent} …")
    if info.repository is None:
        click.echo("not in a git repository: no decisions to show")
        return
    click.echo("git hooks installed (authorship at commit):" if info.git_hooks
               else "git hooks installed: none (git rewind install --git-hooks)")
    for path in info.git_hooks:
        click.echo(f"  {path}")
    click.echo(f"redos available: {info.redos}" + (" (git rewind redo)" if info.redos else ""))
    click.echo("open turns:" if info.turns else "open turns: none")
    for turn in info.turns:
        click.echo(f"  {turns.describe_line(turn)}")
    if info.daemon is not None:
        click.echo(f"daemon: {_daemon_line(info.daemon)}")
    if info.shell is not None:
        click.echo(f"after shell commands: {info.shell}")
    if info.store is not None:
        from ...store.storage import human

        cap = f"max_store_size {human(info.store.max_size)}" if info.store.max_size else "no max_store_size"
        click.echo(f"store: {human(info.store.size)} ({cap})")
        warning = info.store.warning()
        if warning:
            click.echo(f"warning: {warning}")
    if info.sync is not None:
        click.echo(f"sync: {_sync_line(info.sync)}")
        if info.sync.get("error"):
            click.echo(f"warning: the last push failed: {info.sync['error']}")
    click.echo("recent hook decisions:" if info.decisions else "recent hook decisions: none yet")
    for entry in info.decisions:
        what = " ".join(str(x) for x in (entry.get("event"), entry.get("tool")) if x)
        paths = " ".join(entry.get("paths") or [])
        outcome = entry.get("action", "?")
        if entry.get("seq") is not None:
            outcome += f" #{entry['seq']}"
        where = f"{what} {paths}" if paths else what
        click.echo(f"  {entry.get('time', '')}  {where}: {outcome} ({entry.get('reason')})")


def _sync_line(info: dict[str, Any]) -> str:
    """One line on sharing: where to, as whom, automatic or not, the last push that worked."""
    from ...base.clock import age

    remote = info.get("remote")
    if not remote:
        return f"no remote (git rewind push REMOTE, or sync_remote); this machine shares as {info.get('name')}"
    auto = "after each turn (sync_auto)" if info.get("auto") else "on git rewind push"
    last = f"last pushed {age(str(info['last_ok']))}" if info.get("last_ok") else "never pushed yet"
    return f"{remote} as {info.get('name')}, {auto}; {last}"


def _daemon_line(info: dict[str, Any]) -> str:
    """One line for the file-watcher daemon: running since when, what it watches, its memory; or why not."""
    if not info.get("running"):
        return "not running" + (f" ({info['reason']})" if info.get("reason") else "")
    memory = f", {info['memory_kib'] / 1024:.1f} MiB" if isinstance(info.get("memory_kib"), int) else ""
    return (f"running since {info.get('since')} (pid {info.get('pid')}), watching {info.get('watched')} "
            f"directories, {info.get('dirty')} paths changed since the last scan{memory}")


@cli.group("daemon", context_settings=CONTEXT)
def daemon_group() -> None:
    """The file watcher that lets checkpoints read only what changed, and gives each agent shell command that
    changes files its own checkpoint under the balanced tier (Linux; one per work tree)."""


@daemon_group.command("start")
def daemon_start() -> None:
    """Start this work tree's daemon in the background (it exits after daemon_idle_minutes unused)."""
    from ...base import daemon

    live = daemon.launch(Repo.discover())
    click.echo(f"daemon running (pid {live.get('pid')}), watching {live.get('watched')} directories")


@daemon_group.command("stop")
def daemon_stop() -> None:
    """Stop this work tree's daemon; commands scan the whole tree again until it runs."""
    from ...base import daemon

    click.echo("daemon stopped" if daemon.stop(Repo.discover()) else "no daemon was running")


@daemon_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print it as JSON.")
def daemon_status(as_json: bool) -> None:
    """Whether this work tree's daemon runs, since when, what it watches, its memory."""
    from ...base import daemon

    info = daemon.describe(Repo.discover())
    click.echo(json.dumps(info, indent=2) if as_json else f"daemon: {_daemon_line(info)}")


@daemon_group.command("run", hidden=True)
def daemon_run() -> None:
    """Serve in the foreground (what `start` runs, detached)."""
    from ...hook import githook, hook
    from ...watching import daemonserver
    from .. import undocmd

    sys.exit(daemonserver.run(Repo.discover(), {"hook": hook.serve, "githook": githook.serve,
                                                "undo": undocmd.serve}))


@cli.group("config", context_settings=CONTEXT)
def config_group() -> None:
    """Show and change settings: defaults < user file < project file < GIT_REWIND_<KEY>."""


def _root_or_none() -> str | None:
    """The work tree's root, or None outside one (only the user file and environment apply)."""
    from ...base.errors import NotARepository

    try:
        return Repo.discover().root
    except NotARepository:
        return None


def _config_target(user: bool, project: bool) -> tuple[str, str | None]:
    """The file `config set/unset` edit (default: the project's inside a work tree) and the work tree's root."""
    from ...base.errors import NotARepository

    if user and project:
        raise click.UsageError("--user and --project exclude each other")
    try:
        root = Repo.discover().root if project else _root_or_none()
    except NotARepository as exc:
        raise NotARepository(f"--project needs a git work tree: {exc}") from None
    if user or root is None:
        return config.user_file(), root
    return config.project_file(root), root


def _note_override(key: str, path: str, root: str | None) -> None:
    """Say so when a later layer hides what was just written."""
    try:
        setting = config.load(root)[key]
    except RewindError:
        return  # an invalid value elsewhere: the next command reports it
    source = setting.source
    if source == "environment":
        source = f"GIT_REWIND_{key.upper()}"
    elif not (root and source == config.project_file(root) and source != path):
        return
    click.echo(f"note: {key} is {config.format_value(setting.value)} here: {source} overrides it", err=True)


@config_group.command("get", context_settings=CONTEXT)
@click.argument("key")
def config_get(key: str) -> None:
    """Print KEY's effective value (lists as TOML arrays, sizes in bytes)."""
    config.check_key(key)
    settings = config.load(_root_or_none())
    click.echo(config.format_value(settings[key].value, bare_string=True))


@config_group.command("list", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="One JSON object: each key's value and source.")
def config_list(as_json: bool) -> None:
    """Every setting, its effective value and where that comes from."""
    settings = config.load(_root_or_none())
    if as_json:
        click.echo(json.dumps({k: {"value": s.value, "source": s.source} for k, s in settings.items()}, indent=2))
        return
    for key, setting in settings.items():
        click.echo(f"{key} = {config.format_value(setting.value)}  # {setting.source}")


_USER_HELP = "The user file, $XDG_CONFIG_HOME/git-rewind/config.toml (default outside a work tree)."
_PROJECT_HELP = "The project file, .git-rewind.toml at the work tree's root (default inside one)."


@config_group.command("set", context_settings={**CONTEXT, "ignore_unknown_options": True})
@click.argument("key")
@click.argument("value")
@click.option("--user", is_flag=True, help=_USER_HELP)
@click.option("--project", is_flag=True, help=_PROJECT_HELP)
def config_set(key: str, value: str, user: bool, project: bool) -> None:
    """Store KEY = VALUE in a settings file.

    VALUE is checked first; the file keeps its comments, layout and other keys.
    Lists: comma-separated, or a TOML array such as '["a", "b"]'.
    """
    path, root = _config_target(user, project)
    stored = config.set_value(path, key, value)
    click.echo(f"{key} = {config.format_value(stored)} in {path}")
    _note_override(key, path, root)


@config_group.command("unset", context_settings=CONTEXT)
@click.argument("key")
@click.option("--user", is_flag=True, help=_USER_HELP)
@click.option("--project", is_flag=True, help=_PROJECT_HELP)
def config_unset(key: str, user: bool, project: bool) -> None:
    """Remove KEY from a settings file, keeping everything else."""
    path, _ = _config_target(user, project)
    if config.unset_value(path, key):
        click.echo(f"removed {key} from {path}")
    else:
        click.echo(f"{key} is not set in {path}")
