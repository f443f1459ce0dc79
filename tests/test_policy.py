"""The tiers, decided at explicit moments: when an agent's event deserves a checkpoint, and why not.

`policy.decide` is pure: these tests give it an Event, the settings a tier resolves to, the
session's state and the time, as the hook does, and follow one session edit by edit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from git_rewind.agents import event as ev
from git_rewind.agents.event import Event
from git_rewind.base import config
from git_rewind.hook import policy
from git_rewind.hook.policy import FULL, PATHS, SKIP, SessionState

if TYPE_CHECKING:
    from git_rewind.base.config import Settings

T0 = 1_800_000_000.0  # an arbitrary "now", in seconds


def settings(tier: str = "balanced", **overrides: Any) -> Settings:
    """What the hook gets for TIER with nothing else configured, plus OVERRIDES."""
    layered = {key: config.Setting(value, "default") for key, value in config.DEFAULTS.items()}
    layered["tier"] = config.Setting(tier, "test")
    values = {key: s.value for key, s in config.resolve_tier(layered).items()}
    # Every key of DEFAULTS, as config.as_values gives them; mypy cannot check ** keywords against a TypedDict.
    return cast("Settings", {**values, **overrides})


def edit(path: str = "src/app.py", chars: int | None = 200, tool: str = "Edit") -> Event:
    event = Event("claude-code", "PreToolUse", ev.PRE_TOOL, "s1", "/repo")
    event.tool, event.tool_kind = tool, {"Write": ev.WRITE, "Create": ev.WRITE}.get(tool, ev.EDIT)
    event.paths, event.change_chars = [f"/repo/{path}"], chars
    return event


def prompt(text: str = "add error handling") -> Event:
    event = Event("claude-code", "UserPromptSubmit", ev.PROMPT, "s1", "/repo")
    event.prompt = text
    return event


def simple(name: str, kind: str, tool: str | None = None, tool_kind: str | None = None) -> Event:
    event = Event("claude-code", name, kind, "s1", "/repo")
    event.tool, event.tool_kind = tool, tool_kind
    return event


class Session:
    """One agent session as the hook sees it: decide, then record what was really taken."""

    def __init__(self, tier: str = "balanced", **overrides: Any) -> None:
        self.settings = settings(tier, **overrides)
        self.state = SessionState()

    def at(self, now: float, event: Event, created: bool = True) -> policy.Decision:
        paths = [p.removeprefix("/repo/") for p in event.paths]
        decision = policy.decide(event, self.settings, self.state, now, paths)
        policy.record(self.state, decision, created, now)
        # The state survives a round trip through the hook's JSON file.
        self.state = SessionState(self.state.to_dict())
        return decision


def test_tiers_resolve_their_limits_and_say_where_they_came_from() -> None:
    for tier, anti_spam, min_chars in [("minimal", 0, 0), ("balanced", 30, 50), ("aggressive", 15, 25)]:
        values = settings(tier)
        assert (values["anti_spam_seconds"], values["min_change_chars"]) == (anti_spam, min_chars)
    layered = {key: config.Setting(value, "default") for key, value in config.DEFAULTS.items()}
    layered["tier"] = config.Setting("aggressive", "environment")
    layered["anti_spam_seconds"] = config.Setting(5, "environment")
    resolved = config.resolve_tier(layered)
    assert (resolved["anti_spam_seconds"].value, resolved["anti_spam_seconds"].source) == (5, "environment")
    assert (resolved["min_change_chars"].value, resolved["min_change_chars"].source) == (25, "tier aggressive")
    assert settings()["tier"] == config.DEFAULTS["tier"] == "balanced"


def test_balanced_session_start_and_every_prompt_are_full_checkpoints() -> None:
    session = Session()
    start = simple("SessionStart", ev.SESSION_START)
    start.source = "resume"
    decision = session.at(T0, start)
    assert (decision.action, decision.reason, decision.allow_empty) == (FULL, "session start (resume)", False)
    first = session.at(T0 + 1, prompt())
    assert (first.action, first.tags, first.allow_empty) == (FULL, ["prompt"], True)  # even when unchanged


def test_prompts_are_never_suppressed_by_anti_spam_or_a_batch() -> None:
    session = Session()
    second: float
    for second in range(3):  # a batch that already has its checkpoint
        session.at(T0 + second, edit(f"f{second}.py"))
    assert session.state.batch_checkpointed and session.state.batch_edits == 3
    assert session.at(T0 + 3, edit("f3.py")).action == SKIP
    for second in (4, 4.5, 5):
        assert session.at(T0 + second, prompt()).action == FULL
    # ...and a prompt does not count as an edit checkpoint either.
    assert session.state.last_edit_checkpoint == T0 and session.state.batch_edits == 4


def test_balanced_edits_are_known_path_checkpoints_of_the_files_inside_the_tree() -> None:
    session = Session()
    decision = session.at(T0, edit("src/app.py"))
    assert (decision.action, decision.paths, decision.reason) == (PATHS, ["src/app.py"], "before Edit")
    for tool in ("Write", "MultiEdit", "NotebookEdit"):
        fresh = Session()
        assert fresh.at(T0, edit("src/app.py", tool=tool)).action == PATHS
    outside = edit()
    outside.paths = ["/elsewhere/app.py"]  # the hook found no path inside the work tree
    assert policy.decide(outside, settings(), SessionState(), T0, []).reason == "no file inside the repository"


@pytest.mark.parametrize(("age", "action"), [(0.0, SKIP), (29.9, SKIP), (30.0, PATHS), (31.0, PATHS),
                                             (-5.0, PATHS)])  # a clock that went back does not block
def test_anti_spam_boundary_is_thirty_seconds_in_balanced(age: float, action: str) -> None:
    state = SessionState({"last_edit_checkpoint": T0})
    decision = policy.decide(edit(), settings(), state, T0 + age, ["src/app.py"])
    assert decision.action == action
    if action == SKIP:
        assert decision.reason == f"anti-spam: last edit checkpoint {age:.0f} s ago (< 30 s)"


@pytest.mark.parametrize(("age", "action"), [(14.9, SKIP), (15.0, PATHS)])
def test_anti_spam_is_fifteen_seconds_in_aggressive(age: float, action: str) -> None:
    state = SessionState({"last_edit_checkpoint": T0})
    assert policy.decide(edit(), settings("aggressive"), state, T0 + age, ["src/app.py"]).action == action


def test_anti_spam_counts_only_checkpoints_really_taken() -> None:
    session = Session()
    assert session.at(T0, edit(), created=False).action == PATHS  # the file had not changed: no checkpoint
    assert session.state.last_edit_checkpoint is None
    assert session.at(T0 + 1, edit()).action == PATHS  # so the next edit is not suppressed
    assert session.at(T0 + 2, edit()).action == SKIP


def test_a_batch_of_edits_gets_one_checkpoint() -> None:
    # Without anti-spam, the first two edits are checkpointed; the third within 60 s makes a batch.
    session = Session(anti_spam_seconds=0)
    assert [session.at(T0 + s, edit(f"f{s}.py")).action for s in (0, 1, 2, 3, 59)] == [PATHS, PATHS, SKIP, SKIP, SKIP]
    assert session.at(T0 + 59, edit()).reason == "batch: 6 edits in 59 s, one checkpoint per batch"
    assert session.at(T0 + 60, edit()).action == PATHS  # a new window, a new batch


def test_balanced_edit_rhythm_anti_spam_then_batch_then_a_new_window() -> None:
    session = Session()
    assert session.at(T0, edit()).action == PATHS
    assert session.at(T0 + 10, edit()).reason.startswith("anti-spam")
    third = session.at(T0 + 40, edit())  # past the anti-spam, but the third edit in 60 s
    assert (third.action, third.reason) == (SKIP, "batch: 3 edits in 40 s, one checkpoint per batch")
    assert session.at(T0 + 70, edit()).action == PATHS


@pytest.mark.parametrize(("tier", "chars", "action"), [
    ("balanced", 49, SKIP), ("balanced", 50, PATHS),
    ("aggressive", 24, SKIP), ("aggressive", 25, PATHS),
    ("balanced", None, PATHS),  # size unknown: the benefit of the doubt
])
def test_small_changes_are_not_worth_a_checkpoint(tier: str, chars: int | None, action: str) -> None:
    decision = policy.decide(edit(chars=chars), settings(tier), SessionState(), T0, ["src/app.py"])
    assert decision.action == action
    if action == SKIP:
        limit = 50 if tier == "balanced" else 25
        assert decision.reason == f"small change: {chars} characters < {limit}"


def test_a_small_change_does_not_count_toward_anti_spam_or_batch() -> None:
    session = Session()
    assert session.at(T0, edit(chars=3)).action == SKIP
    assert session.state.batch_edits == 0 and session.state.last_edit_checkpoint is None
    assert session.at(T0 + 1, edit()).action == PATHS


@pytest.mark.parametrize("path", ["package.json", "web/package.json", "requirements.txt", "pyproject.toml",
                                  "Dockerfile", "docker-compose.yml", "tsconfig.json", "webpack.config.js",
                                  "app/vite.config.ts"])
def test_a_small_change_to_a_critical_file_is_checkpointed(path: str) -> None:
    decision = policy.decide(edit(path, chars=1), settings(), SessionState(), T0, [path])
    assert (decision.action, decision.paths) == (PATHS, [path])
    assert decision.reason.startswith("critical file ")


def test_a_critical_file_still_waits_for_anti_spam() -> None:
    state = SessionState({"last_edit_checkpoint": T0})
    assert policy.decide(edit("package.json", chars=1), settings(), state, T0 + 5, ["package.json"]).action == SKIP


@pytest.mark.parametrize(("path", "pattern"), [
    ("node_modules/left-pad/index.js", "node_modules/"),
    ("web/node_modules/x/package.json", "node_modules/"),  # excluded beats critical
    ("dist/bundle.js", "dist/"),
    ("packages/ui/build/index.js", "build/"),
    ("logs/server.log", "*.log"),
])
def test_excluded_paths_are_skipped(path: str, pattern: str) -> None:
    decision = policy.decide(edit(path), settings(), SessionState(), T0, [path])
    assert (decision.action, decision.reason) == (SKIP, f"excluded ({pattern})")


def test_exclusion_matches_directories_and_names_not_substrings() -> None:
    patterns = settings()["exclude_patterns"]
    for path in ("src/build.py", "distribution/app.py", "docs/logging.md", "src/node_modules.py"):
        assert policy.matches(path, patterns) is None, path
    assert policy.matches("a/b/dist/c.js", patterns) == "dist/"
    assert policy.matches("src/gen.py", ["src/*.py"]) == "src/*.py"  # a pattern with '/' matches the whole path
    assert policy.matches("lib/src/gen.py", ["src/*.py"]) is None


def test_only_the_files_not_excluded_are_checkpointed() -> None:
    decision = policy.decide(edit(), settings(), SessionState(), T0, ["dist/app.js", "src/app.py"])
    assert (decision.action, decision.paths) == (PATHS, ["src/app.py"])


def test_balanced_does_nothing_after_tools_and_closes_each_turn_when_files_changed() -> None:
    session = Session()
    for event in (simple("PreToolUse", ev.PRE_TOOL, "Bash", ev.SHELL), simple("PreToolUse", ev.PRE_TOOL, "Read"),
                  simple("PostToolUse", ev.POST_TOOL, "Bash", ev.SHELL),
                  simple("SessionEnd", ev.OTHER), simple("Notification", ev.OTHER)):
        assert session.at(T0, event).action == SKIP, event.name
    stop = session.at(T0, simple("Stop", ev.STOP))  # attribution needs the turn closed off
    assert (stop.action, stop.allow_empty) == (FULL, False)
    assert session.at(T0, simple("PreToolUse", ev.PRE_TOOL, "Bash", ev.SHELL)).reason == (
        "Bash: shell commands are checkpointed after they run (aggressive tier, "
        "or balanced with the daemon)")  # not "does not edit files"
    assert session.at(T0, edit(chars=1)).reason == "small change: 1 character < 50"


def test_aggressive_checkpoints_after_shell_commands_and_at_turn_end() -> None:
    session = Session("aggressive")
    after_bash = session.at(T0, simple("PostToolUse", ev.POST_TOOL, "Bash", ev.SHELL))
    assert (after_bash.action, after_bash.allow_empty) == (FULL, False)  # only when files changed
    assert session.at(T0 + 1, simple("PostToolUse", ev.POST_TOOL, "Execute", ev.SHELL)).action == FULL
    assert session.at(T0 + 2, simple("PostToolUse", ev.POST_TOOL, "Edit", ev.EDIT)).action == SKIP
    stop = session.at(T0 + 3, simple("Stop", ev.STOP))
    assert (stop.action, stop.allow_empty) == (FULL, False)


def after_shell(tier: str, watched: tuple[bool, str] | None, tool: str = "Bash") -> policy.Decision:
    """The decision after a shell command under TIER, with the daemon's word WATCHED (None: no daemon)."""
    return policy.decide(simple("PostToolUse", ev.POST_TOOL, tool, ev.SHELL), settings(tier), SessionState(), T0,
                         [], watched)


@pytest.mark.parametrize("tool", ["Bash", "Execute", "run_shell_command", "bash", "Shell"])
def test_balanced_checkpoints_after_a_shell_command_only_when_the_daemon_runs_and_saw_a_change(tool: str) -> None:
    changed = after_shell("balanced", (True, "file events on 1 path since its base"), tool)
    assert (changed.action, changed.allow_empty, changed.reason) == (FULL, False, f"after {tool}, if files changed")
    quiet = after_shell("balanced", (False, "no file changed since #4"), tool)
    assert (quiet.action, quiet.reason) == (SKIP, f"after {tool}: nothing changed (daemon: no file changed since #4)")
    # No daemon: exactly as before it existed.
    assert (after_shell("balanced", None, tool).action, after_shell("balanced", None, tool).reason) == (
        SKIP, f"balanced: nothing after {tool}")


def test_aggressive_after_a_shell_command_skips_on_the_daemons_word_and_scans_without_it() -> None:
    assert after_shell("aggressive", (False, "no file changed since #4")).action == SKIP
    assert after_shell("aggressive", (True, "the daemon has no base yet")).action == FULL
    assert after_shell("aggressive", None).action == FULL  # as before: the scan decides
    assert after_shell("minimal", (True, "file events on 2 paths since its base")).action == SKIP


@pytest.mark.parametrize(("text", "pattern"), [
    ("Please REFACTOR ALL the handlers", "refactor all"),
    ("delete the generated files", "delete.*files"),
    ("migrate all tests to pytest", "migrate all"),
    ("rewrite it all in Rust", "rewrite.*all"),
    ("add a docstring", None),
])
def test_aggressive_tags_risky_prompts(text: str, pattern: str | None) -> None:
    decision = policy.decide(prompt(text), settings("aggressive"), SessionState(), T0, [])
    assert decision.action == FULL
    if pattern:
        assert decision.tags == ["prompt", "risky"]
        assert decision.reason == f"risky prompt (matches {pattern!r})"
    else:
        assert (decision.tags, decision.reason) == (["prompt"], "every prompt")
    balanced = policy.decide(prompt(text), settings(), SessionState(), T0, [])
    assert balanced.tags == ["prompt"]  # only aggressive looks for risk


def test_minimal_checkpoints_only_before_a_file_is_created() -> None:
    session = Session("minimal")
    for when in (0, 0.5, 1):  # no anti-spam, no batch, no size threshold
        decision = session.at(T0 + when, edit("src/new.py", chars=1, tool="Write"))
        assert (decision.action, decision.paths, decision.reason) == (PATHS, ["src/new.py"], "minimal: before Write")
    assert session.at(T0 + 2, edit("src/new.py", tool="Create")).action == PATHS  # Droid's Write
    for event in (simple("SessionStart", ev.SESSION_START), prompt(), edit(),
                  simple("PostToolUse", ev.POST_TOOL, "Bash", ev.SHELL), simple("Stop", ev.STOP)):
        decision = session.at(T0 + 3, event)
        assert decision.action == SKIP and decision.reason.startswith("minimal tier"), event.name
    assert policy.decide(edit(tool="Write"), settings("minimal"), SessionState(), T0, []).action == SKIP


@hypothesis_settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab.*?/", max_size=8), st.text(alphabet="ab./", max_size=10))
def test_glob_agrees_with_fnmatch(pattern: str, name: str) -> None:
    """The policy's own matcher (no `re` import on the hot path) means what fnmatchcase means."""
    import fnmatch

    assert policy._glob(name, pattern) == fnmatch.fnmatchcase(name, pattern)
