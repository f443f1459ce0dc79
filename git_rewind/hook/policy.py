"""When a hook event deserves a checkpoint: the three tiers.

- minimal: only before a tool creates a file (Write, Create); nothing else, no rules.
- balanced: a full checkpoint at session start and at every prompt (prompts even when nothing
  changed: they anchor the conversation); before Write/Edit/MultiEdit/NotebookEdit a known-path
  checkpoint, unless the path is excluded, the change is small and the file not critical,
  another edit checkpoint is younger than the anti-spam interval, or a batch (3+ edits in
  60 s) already has its checkpoint.
  A full checkpoint at every turn end when files changed: with the prompt checkpoint it brackets
  the turn, so what changed between turns is told apart from what the agent did (attribution).
  When the work tree's file-watcher daemon runs, also a full checkpoint after each shell command
  that changed files, so each command's effect is its own step: the daemon says whether anything
  changed since the session's last checkpoint without a scan (a command that changed nothing costs
  one question); without the daemon, nothing after shell commands.
- aggressive: balanced with tighter limits, risky prompts tagged, a full checkpoint after
  every shell command that changed files (daemon or not; with it, one that changed nothing is
  skipped without a scan).
- balanced and aggressive also take a full checkpoint before /clear (SessionEnd, reason
  "clear") and before compaction (PreCompact), even unchanged: it anchors the conversation
  that is about to be wiped or summarised (setting auto_checkpoint_on_clear).

`decide` is pure: it reads the event, the settings and the session's state and returns a
Decision; `record` updates the state once the caller knows what was taken.
"""

from __future__ import annotations

from ..agents import event as ev

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..agents.event import Event
    from ..base.config import Settings

SKIP = "skip"
PATHS = "paths"  # a known-path checkpoint: only the named files are read
FULL = "full"  # a whole-tree scan

BATCH_WINDOW = 60.0  # seconds
BATCH_SIZE = 3  # edits in one window that make it a batch


class Decision:
    """What to do about one event, and why (the reason is logged either way)."""

    __slots__ = ("action", "reason", "tags", "allow_empty", "paths", "verify")

    def __init__(self, action: str, reason: str, tags: list[str] | None = None, allow_empty: bool = False,
                 paths: list[str] | None = None, verify: bool = False) -> None:
        self.action = action
        self.reason = reason
        self.tags = tags or []
        self.allow_empty = allow_empty
        self.paths = paths or []
        self.verify = verify  # count what changed since the session's last checkpoint, in the message


class SessionState:
    """Per-session memory between hook calls: the last edit checkpoint and the current batch."""

    __slots__ = ("last_edit_checkpoint", "batch_start", "batch_edits", "batch_checkpointed")

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        data = data or {}
        self.last_edit_checkpoint: float | None = data.get("last_edit_checkpoint")
        self.batch_start: float | None = data.get("batch_start")
        self.batch_edits: int = int(data.get("batch_edits") or 0)
        self.batch_checkpointed: bool = bool(data.get("batch_checkpointed"))

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


def _skip(reason: str) -> Decision:
    return Decision(SKIP, reason)


def _glob(name: str, pattern: str) -> bool:
    """fnmatch.fnmatchcase without importing it: `*` and `?` here, `[...]` classes through fnmatch.

    fnmatch imports re (with enum and functools), ~7 ms: a third of what a skipped edit may cost.
    """
    if "[" in pattern:
        import fnmatch

        return fnmatch.fnmatchcase(name, pattern)
    n = p = 0
    star, star_n = -1, 0
    while n < len(name):
        if p < len(pattern) and pattern[p] in ("?", name[n]):
            n += 1
            p += 1
        elif p < len(pattern) and pattern[p] == "*":
            star, star_n = p, n
            p += 1
        elif star >= 0:  # let the last * swallow one more character
            star_n += 1
            n, p = star_n, star + 1
        else:
            return False
    return all(c == "*" for c in pattern[p:])


def matches(path: str, patterns: list[str]) -> str | None:
    """The first pattern PATH (work-tree-relative, '/'-separated) matches, gitignore-style.

    'dir/' matches a directory of that name anywhere; a pattern with a '/' matches the whole
    path; any other pattern matches the file name.
    """
    parts = path.split("/")
    for pattern in patterns:
        if pattern.endswith("/"):
            name = pattern.rstrip("/")
            if any(_glob(part, name) for part in parts[:-1]) or _glob(path, name):
                return pattern
        elif "/" in pattern:
            if _glob(path, pattern.lstrip("/")):
                return pattern
        elif _glob(parts[-1], pattern):
            return pattern
    return None


def risky(prompt: str | None, patterns: list[str]) -> str | None:
    """The first risky-prompt regex PROMPT matches (case-insensitive)."""
    if not prompt:
        return None
    import re

    for pattern in patterns:
        if re.search(pattern, prompt, re.IGNORECASE):
            return pattern
    return None


def decide(event: Event, settings: Settings, state: SessionState, now: float,
           paths: list[str], watched: tuple[bool, str] | None = None) -> Decision:
    """The decision for EVENT; PATHS are its files inside the work tree, relative to the root. WATCHED, after
    a shell command: the daemon's word on whether anything changed since the session's last checkpoint and
    why (daemon.changed_since_tip); None when no daemon answered."""
    tier = settings["tier"]
    kind = event.kind
    if tier == "minimal":
        if kind == ev.PRE_TOOL and event.tool_kind == ev.WRITE:
            if not paths:
                return _skip("no file inside the repository")
            return Decision(PATHS, f"minimal: before {event.tool}", paths=paths)
        what = " ".join(x for x in (event.name, event.tool) if x)
        return _skip(f"minimal tier: only before a file is created ({what})")
    if kind == ev.SESSION_START:
        return Decision(FULL, f"session start ({event.source or 'unknown'})")
    if kind == ev.PROMPT:
        tags = ["prompt"]
        reason = "every prompt"
        if tier == "aggressive":
            pattern = risky(event.prompt, settings["risky_prompts"])
            if pattern:
                tags.append("risky")
                reason = f"risky prompt (matches {pattern!r})"
        return Decision(FULL, reason, tags=tags, allow_empty=True)
    if kind == ev.PRE_TOOL:
        if event.tool_kind == ev.SHELL:  # it may well change files: the tiers look after it, not before
            return _skip(f"{event.tool}: shell commands are checkpointed after they run "
                         "(aggressive tier, or balanced with the daemon)")
        if event.tool_kind not in (ev.WRITE, ev.EDIT):
            return _skip(f"{event.tool or 'tool'} does not edit files")
        return _before_edit(event, settings, state, now, paths)
    if kind == ev.POST_TOOL:
        if event.tool_kind == ev.SHELL:
            return _after_shell(event, tier, watched)
        return _skip(f"{tier}: nothing after {event.tool or 'a tool'}")
    if kind == ev.STOP:  # what the turn changed is the agent's: attribution needs it closed off
        return Decision(FULL, "turn end, if files changed")
    if kind in (ev.SESSION_END, ev.PRE_COMPACT):
        return _before_clear(event, settings)
    return _skip(f"no checkpoint for {event.name or 'this event'}")


def _after_shell(event: Event, tier: str, watched: tuple[bool, str] | None) -> Decision:
    """After a shell command: one checkpoint for what it changed (aggressive always, balanced when the daemon
    runs), none when the daemon knows it changed nothing."""
    if watched is None:
        if tier == "aggressive":
            return Decision(FULL, f"after {event.tool}, if files changed")
        return _skip(f"{tier}: nothing after {event.tool}")
    changed, why = watched
    if not changed:
        return _skip(f"after {event.tool}: nothing changed (daemon: {why})")
    return Decision(FULL, f"after {event.tool}, if files changed")


def _before_clear(event: Event, settings: Settings) -> Decision:
    """SessionEnd "clear" and PreCompact: the conversation is about to go; keep where it stood."""
    if event.kind == ev.SESSION_END and event.source != "clear":
        return _skip(f"session end ({event.source or 'unknown'}): only /clear is checkpointed")
    what = "before /clear" if event.kind == ev.SESSION_END else f"before compaction ({event.source or 'unknown'})"
    if not settings["auto_checkpoint_on_clear"]:
        return _skip(f"{what}: auto_checkpoint_on_clear is off")
    tag = "clear" if event.kind == ev.SESSION_END else "compact"
    return Decision(FULL, what, tags=[tag], allow_empty=True, verify=bool(settings["verify_before_clear"]))


def _before_edit(event: Event, settings: Settings, state: SessionState, now: float,
                 paths: list[str]) -> Decision:
    if not paths:
        return _skip("no file inside the repository")
    kept = [p for p in paths if not matches(p, settings["exclude_patterns"])]
    if not kept:
        return _skip(f"excluded ({matches(paths[0], settings['exclude_patterns'])})")
    critical = next((p for p in kept if matches(p, settings["critical_files"])), None)
    threshold = settings["min_change_chars"]
    if critical is None and event.change_chars is not None and event.change_chars < threshold:
        unit = "character" if event.change_chars == 1 else "characters"
        return _skip(f"small change: {event.change_chars} {unit} < {threshold}")
    # This edit counts toward the batch whatever happens next.
    if state.batch_start is None or now - state.batch_start >= BATCH_WINDOW:
        state.batch_start, state.batch_edits, state.batch_checkpointed = now, 0, False
    state.batch_edits += 1
    why = f"critical file {critical}" if critical else f"before {event.tool}"
    anti_spam = settings["anti_spam_seconds"]
    if anti_spam and state.last_edit_checkpoint is not None:
        age = now - state.last_edit_checkpoint
        if 0 <= age < anti_spam:
            return _skip(f"anti-spam: last edit checkpoint {age:.0f} s ago (< {anti_spam} s)")
    if state.batch_edits >= BATCH_SIZE and state.batch_checkpointed:
        return _skip(f"batch: {state.batch_edits} edits in {now - state.batch_start:.0f} s, "
                     "one checkpoint per batch")
    return Decision(PATHS, why, paths=kept)


def record(state: SessionState, decision: Decision, created: bool, now: float) -> None:
    """Remember an edit checkpoint that was really taken (an unchanged tree takes none)."""
    if decision.action == PATHS and created:
        state.last_edit_checkpoint = now
        state.batch_checkpointed = True
