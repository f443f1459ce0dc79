"""status.collect: what `git rewind status` shows, gathered from a real repository and settings files."""

from __future__ import annotations

import json
from typing import Any

import pytest

from git_rewind.faces import status


@pytest.fixture
def isolated(project: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The test process sees the project's HOME and no GIT_REWIND_* settings (status runs in-process)."""
    for key, value in project.env.items():
        monkeypatch.setenv(key, value)
    for key in [k for k in project.env if k.startswith("GIT_REWIND_")]:
        monkeypatch.delenv(key)
    return project


def test_settings_installs_and_decisions(isolated: Any) -> None:
    project = isolated
    project.write(".git-rewind.toml", 'tier = "aggressive"\n')
    project.ok("install", "--agent", "claude-code", "--scope", "project")
    payload = json.dumps({"session_id": "s", "cwd": str(project.path), "hook_event_name": "PreToolUse",
                          "tool_name": "Read", "tool_input": {"file_path": "README.md"}})
    project.ok("hook", "--agent", "claude-code", input=payload)
    info = status.collect(10, str(project.path))
    assert info.repository == str(project.path) and info.config_error is None
    assert list(info.settings) == list(status.POLICY_KEYS)
    assert (info.settings["tier"].value, info.settings["tier"].source) == ("aggressive",
                                                                         str(project.path / ".git-rewind.toml"))
    assert info.settings["anti_spam_seconds"].source == "tier aggressive"
    assert ("claude-code", "project", str(project.path / ".claude" / "settings.json")) in info.installed
    assert [d["reason"] for d in info.decisions] == ["Read does not edit files"]
    assert info.as_json()["installed"][0]["agent"] == "claude-code"


def test_an_invalid_config_shows_the_defaults_hooks_run_on_and_why(isolated: Any, tmp_path: Any) -> None:
    isolated.write(".git-rewind.toml", "tier = [\n")
    info = status.collect(0, str(isolated.path))
    assert info.config_error is not None and "invalid TOML" in info.config_error
    assert (info.settings["tier"].value, info.settings["tier"].source) == ("balanced", "default")
    outside = status.collect(5, str(tmp_path))
    assert outside.repository is None and outside.decisions == []


def test_the_store_size_and_a_warning_when_gc_cannot_meet_the_cap(isolated: Any) -> None:
    import os

    project = isolated
    project.write("big.bin", os.urandom(100 * 1024))
    project.ok("snap", "--session", "s")  # #1
    project.write("big.bin", os.urandom(100 * 1024))
    project.ok("snap", "--session", "s")  # #2
    info = status.collect(0, str(project.path))
    assert info.store is not None and info.store.size > 200 * 1024 and info.store.max_size == 1 << 30
    assert info.store.warning() is None and info.as_json()["store"]["over"] is False

    project.write(".git-rewind.toml", 'max_store_size = "150K"\n')
    info = status.collect(0, str(project.path))
    assert info.store is not None and info.store.over and not info.store.unmet
    assert "git rewind gc drops the oldest" in (info.store.warning() or "")

    project.ok("undo", "1", "--yes")  # #3, on the redo stack, holds #2's big.bin
    project.write(".git-rewind.toml", 'max_store_size = "50K"\n')
    assert "dropped 2 checkpoints (#1..#2)" in project.ok("gc")  # #3 stays: still over
    info = status.collect(0, str(project.path))
    assert info.store is not None and info.store.unmet and info.store.needed is not None
    assert info.store.needed > 100 * 1024
    assert "gc cannot bring it under" in (info.store.warning() or "")
    shown = project.ok("status")
    assert "store: " in shown and "(max_store_size 50.0 KiB)" in shown and "warning: " in shown
    assert json.loads(project.ok("status", "--json"))["store"]["unmet"] is True


def test_status_says_what_the_tier_does_after_a_shell_command_with_the_daemon_and_without(
        isolated: Any, daemons: list[Any]) -> None:
    project = isolated
    assert status.collect(10, str(project.path)).as_json()["shell_commands"].startswith("no checkpoint of its own")
    assert "after shell commands: no checkpoint of its own" in project.ok("status")
    daemons.append(project)
    project.ok("daemon", "start")
    assert status.collect(10, str(project.path)).shell == (
        "a checkpoint after each one that changed files (the daemon says which did)")
    project.write(".git-rewind.toml", 'tier = "minimal"\n')
    assert status.collect(10, str(project.path)).shell == "no checkpoint (minimal tier)"


def test_status_lists_the_git_hooks_install_added_and_none_after_uninstall(isolated: Any) -> None:
    project = isolated
    assert status.collect(10, str(project.path)).git_hooks == []
    assert "git hooks installed: none (git rewind install --git-hooks)" in project.ok("status")
    project.ok("install", "--git-hooks")
    hooks = project.path / ".git" / "hooks"
    expected = [str(hooks / name) for name in ("post-commit", "post-rewrite", "prepare-commit-msg")]
    assert status.collect(10, str(project.path)).git_hooks == expected
    shown = json.loads(project.ok("status", "--json"))
    assert shown["git_hooks"] == expected
    assert f"git hooks installed (authorship at commit):\n  {expected[0]}\n" in project.ok("status")
    project.ok("uninstall", "--git-hooks")
    assert json.loads(project.ok("status", "--json"))["git_hooks"] == []
