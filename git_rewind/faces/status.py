"""`git rewind status`: the settings hooks run with and where each comes from, what is installed
where, and the newest hook decisions, gathered once for the CLI (and anything else that shows it)."""

from __future__ import annotations

from ..base import config
from ..base.repo import Repo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..base.note import Json
    from ..store.checkpoints import Checkpoint

# The settings that decide what hooks do.
POLICY_KEYS = ("tier", "anti_spam_seconds", "min_change_chars", "auto_resume_on_start",
               "auto_checkpoint_on_clear", "verify_before_clear")


class Status:
    """Everything `status` shows."""

    __slots__ = ("repository", "config_error", "settings", "installed", "mcp_installed", "decisions", "redos",
                 "daemon", "store", "sync", "watched", "duplicates", "turns", "shell", "git_hooks")

    def __init__(self, repository: str | None, config_error: str | None, settings: dict[str, config.Setting],
                 installed: list[tuple[str, str, str]], mcp_installed: list[tuple[str, str, str]],
                 decisions: list[dict[str, Json]], redos: int | None = None, store: Store | None = None) -> None:
        self.repository = repository  # the work tree's root; None outside a repository
        self.config_error = config_error  # an invalid config: hooks run on the defaults meanwhile
        self.settings = settings  # POLICY_KEYS only
        self.installed = installed  # (agent, scope, file) holding our hooks
        self.mcp_installed = mcp_installed  # (agent, scope, file) holding our MCP server
        self.decisions = decisions  # the newest hook.log entries, oldest first
        self.redos = redos  # how many redos this work tree's redo stack holds (None outside a repository)
        self.daemon: dict[str, Json] | None = None  # the file-watcher daemon (daemon.describe); None outside
        self.store = store  # the store's size and cap (None outside a repository)
        self.sync: dict[str, Json] | None = None  # sharing: the remote, last push that worked, last error
        self.watched: list[str] = []  # agents with no hooks, checkpointed under `git rewind watch -- PROGRAM`
        self.duplicates: list[tuple[str, str]] = []  # (agent, file): a second copy of our hooks it also loads
        self.turns: list[dict[str, Json]] = []  # the agent turns open in this work tree (turns.describe)
        self.shell: str | None = None  # what the tier does after a shell command now (shell_commands)
        self.git_hooks: list[str] = []  # the git hooks of `install --git-hooks` in place (none outside a repository)

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
            "store": self.store.as_json() if self.store else None,
            "sync": self.sync,
            "watched": list(self.watched),
            "duplicates": [{"agent": a, "file": f} for a, f in self.duplicates],
            "turns": list(self.turns),
            "shell_commands": self.shell,
            "git_hooks": list(self.git_hooks),
        }


class Store:
    """The store's size against max_store_size, and why it stays over when gc cannot bring it under."""

    __slots__ = ("size", "max_size", "needed", "error", "tagged")

    def __init__(self, size: int, max_size: int, needed: int | None, error: str | None = None,
                 tagged: list[int] | None = None) -> None:
        self.size = size  # bytes (storage.measure)
        self.max_size = max_size  # 0: no cap
        self.needed = needed  # over the cap: about what gc must keep takes (None: not over)
        self.error = error  # why the last enforcement in the background failed
        self.tagged = tagged or []  # the tagged checkpoints the last enforcement dropped (seqs)

    @property
    def over(self) -> bool:
        return self.max_size > 0 and self.size > self.max_size

    @property
    def unmet(self) -> bool:
        """gc cannot meet the cap: what it must keep (redo stacks, newest checkpoints) is over it alone."""
        return self.needed is not None and self.needed > self.max_size

    def warning(self) -> str | None:
        from ..store.storage import human

        if self.error:
            return f"the last enforcement of max_store_size in the background failed: {self.error}"
        if not self.over:
            if self.tagged:
                from ..store.checkpoints import seq_runs

                return (f"the last enforcement of max_store_size ({human(self.max_size)}) dropped tagged checkpoints "
                        f"({seq_runs(self.tagged)}): no untagged checkpoint was left to drop; raise max_store_size "
                        "to keep more")
            return None
        if self.unmet:
            return (f"the store ({human(self.size)}) is over max_store_size ({human(self.max_size)}) and gc cannot "
                    f"bring it under: what it must keep (each work tree's redo stack and newest checkpoint) takes "
                    f"about {human(self.needed or 0)}; git rewind redo, or raise max_store_size")
        return (f"the store ({human(self.size)}) is over max_store_size ({human(self.max_size)}): git rewind gc "
                "drops the oldest checkpoints (hooks start it in the background)")

    def as_json(self) -> dict[str, Json]:
        return {"bytes": self.size, "max_store_size": self.max_size, "over": self.over, "unmet": self.unmet,
                "needed": self.needed, "error": self.error, "tagged_dropped": list(self.tagged),
                "warning": self.warning()}


def collect(limit: int, path: str | None = None) -> Status:
    """The status seen from PATH (default: the current directory), with the newest LIMIT decisions (0: all)."""
    from ..agents import install
    from ..base.errors import NotARepository
    from ..hook import hook
    from ..store import checkpoints

    try:
        repo: Repo | None = Repo.discover(path)
    except NotARepository:
        repo = None
    root = repo.root if repo else None
    settings, error = config.load_or_defaults(root)
    redos = store = None
    if repo:
        items = checkpoints.load_all(repo)
        redos = len(checkpoints.redo_stack(checkpoints.of_worktree(items, repo.worktree)))
        store = _store(repo, items, settings["max_store_size"].value)
    status = Status(root, error, {key: settings[key] for key in POLICY_KEYS},
                    install.installed(root), install.mcp_installed(root),
                    hook.read_decisions(repo, limit) if repo else [], redos, store)
    from .. import agents

    status.watched = list(agents.watched())
    status.duplicates = install.duplicates(root)
    if repo is not None:
        import time

        from ..base import daemon, turns

        status.turns = turns.describe(repo, time.time())
        status.daemon = daemon.describe(repo)
        status.shell = shell_commands(str(settings["tier"].value), bool(status.daemon.get("running")))
        status.sync = sync_state(repo, settings)
        from ..hook import gitinstall

        status.git_hooks = gitinstall.installed(repo)
    return status


def shell_commands(tier: str, daemon_running: bool) -> str:
    """What hooks do after an agent's shell command under TIER, now that the daemon runs or not (policy.py)."""
    if tier == "minimal":
        return "no checkpoint (minimal tier)"
    if daemon_running:
        return "a checkpoint after each one that changed files (the daemon says which did)"
    if tier == "aggressive":
        return ("a checkpoint after each one that changed files (a scan after each; "
                "git rewind daemon start makes it cheap)")
    return ("no checkpoint of its own: the next prompt or turn end holds what it changed "
            "(git rewind daemon start gives each one that changes files its own)")


def sync_state(repo: Repo, settings: dict[str, config.Setting]) -> dict[str, Json]:
    """Sharing, for `status`: the remote and this machine's name, whether pushes are automatic, when the
    last push worked and the last error (a background push reports nowhere else)."""
    from ..sharing import share, sync

    last = sync.last_sync(repo)
    name = settings["sync_name"].value or share.default_name(repo)
    auto = bool(settings["sync_auto"].value)
    error = last.get("error")
    if auto and not settings["sync_remote"].value:  # the hooks start no push without one: say so, not nothing
        error = "sync_auto is on but sync_remote is not set: nothing is pushed after turns"
    return {"remote": settings["sync_remote"].value or last.get("remote"), "name": name, "auto": auto,
            "last_ok": last.get("ok"), "last_attempt": last.get("attempt"), "error": error}


def _store(repo: Repo, items: list[Checkpoint], max_size: int) -> Store:
    """The store's size; over MAX_SIZE, also about what gc must keep takes."""
    from ..ops import gc
    from ..store import storage

    size = storage.measure(repo, items)
    state = storage.read_state(repo)
    error = state.get("error") if isinstance(state.get("error"), str) else None
    tagged = [n for n in state.get("tagged") or [] if isinstance(n, int)] if isinstance(state.get("tagged"), list) \
        else []
    if not max_size or size <= max_size:
        return Store(size, max_size, None, error, tagged)
    keep = gc.must_keep(repo, items)
    kept = [c for c in items if c.seq in keep]
    needed = storage.measure_kept(repo, kept, storage.commit_sizes(repo, [c.commit for c in kept]),
                                  storage.attachments(repo))
    return Store(size, max_size, needed, error, tagged)
