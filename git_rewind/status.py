"""`git rewind status`: the settings hooks run with and where each comes from, what is installed
where, and the newest hook decisions, gathered once for the CLI (and anything else that shows it)."""

from __future__ import annotations

from . import config
from .repo import Repo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .note import Json

# The settings that decide what hooks do.
POLICY_KEYS = ("tier", "anti_spam_seconds", "min_change_chars", "auto_resume_on_start",
               "auto_checkpoint_on_clear", "verify_before_clear")


class Status:
    """Everything `status` shows."""

    __slots__ = ("repository", "config_error", "settings", "installed", "mcp_installed", "decisions", "redos",
                 "daemon")

    def __init__(self, repository: str | None, config_error: str | None, settings: dict[str, config.Setting],
                 installed: list[tuple[str, str, str]], mcp_installed: list[tuple[str, str, str]],
                 decisions: list[dict[str, Json]], redos: int | None = None) -> None:
        self.repository = repository  # the work tree's root; None outside a repository
        self.config_error = config_error  # an invalid config: hooks run on the defaults meanwhile
        self.settings = settings  # POLICY_KEYS only
        self.installed = installed  # (agent, scope, file) holding our hooks
        self.mcp_installed = mcp_installed  # (agent, scope, file) holding our MCP server
        self.decisions = decisions  # the newest hook.log entries, oldest first
        self.redos = redos  # how many redos this work tree's redo stack holds (None outside a repository)
        self.daemon: dict[str, Json] | None = None  # the file-watcher daemon (daemon.describe); None outside

    def as_json(self) -> dict[str, Json]:
        return {
            "repository": self.repository,
            "config_error": self.config_error,
            "settings": {k: {"value": s.value, "source": s.source} for k, s in self.settings.items()},
            "installed": [{"agent": a, "scope": s, "file": f} for a, s, f in self.installed],
            "mcp_installed": [{"agent": a, "scope": s, "file": f} for a, s, f in self.mcp_installed],
            "decisions": self.decisions,
            "redos": self.redos,
            "daemon": self.daemon,
        }


def collect(limit: int, path: str | None = None) -> Status:
    """The status seen from PATH (default: the current directory), with the newest LIMIT decisions (0: all)."""
    from . import hook, install, undo
    from .errors import NotARepository

    try:
        repo: Repo | None = Repo.discover(path)
    except NotARepository:
        repo = None
    root = repo.root if repo else None
    settings, error = config.load_or_defaults(root)
    status = Status(root, error, {key: settings[key] for key in POLICY_KEYS},
                    install.installed(root), install.mcp_installed(root),
                    hook.read_decisions(repo, limit) if repo else [],
                    len(undo.redo_stack(repo)) if repo else None)
    if repo is not None:
        from . import daemon

        status.daemon = daemon.describe(repo)
    return status
