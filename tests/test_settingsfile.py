"""Editing a settings file we do not own: precise errors and nothing written on bad input, one backup,
our entries recognised by their command, and the user's exact bytes back when we leave."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from git_rewind.agents import settingsfile as sf
from git_rewind.base.errors import RewindError

OURS: dict[str, Any] = {"type": "command", "command": "/opt/venv/bin/git-rewind hook --agent claude-code",
                        "timeout": 30}
ENTRIES: dict[str, list[dict[str, Any]]] = {"PreToolUse": [{"matcher": "Edit", "hooks": [OURS]}],
                                            "Stop": [{"hooks": [OURS]}]}
USERS = '{\n    "model": "opus",\n    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}\n}\n'


@pytest.mark.parametrize(("command", "ours"), [
    ("git-rewind hook --agent droid", True), ("'/a b/git-rewind' hook", True), ("python -m git_rewind hook", True),
    ("git rewind hook --agent x", True), ("git-rewind-hook", False), ("my-git-rewind hook", False),
    ("echo git-rewind", False),
])
def test_our_handlers_are_known_by_their_command(command: str, ours: bool) -> None:
    assert sf.is_own({"type": "command", "command": command}) is ours
    assert sf.is_own("git-rewind hook") is False  # not a handler at all


def test_invalid_files_are_one_error_naming_them_and_nothing_is_written(tmp_path: Path) -> None:
    for text, error in [("{not json", "not valid JSON"), ("[1, 2]", "not a JSON object"),
                        ('{"hooks": []}', '"hooks" is not an object'),
                        ('{"hooks": {"Stop": {}}}', "hooks for Stop are not a list")]:
        path = tmp_path / "settings.json"
        path.write_text(text)
        with pytest.raises(RewindError, match=error):
            sf.write_hooks(str(path), ENTRIES, wrapped=True)
        assert path.read_text() == text and sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_install_keeps_everything_else_backs_up_once_and_uninstall_brings_back_the_exact_bytes(
        tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(USERS)
    first = sf.write_hooks(str(path), ENTRIES, wrapped=True)
    assert first.changed and first.backup == str(path) + sf.BACKUP_SUFFIX
    data = json.loads(path.read_text())
    assert data["model"] == "opus" and data["hooks"]["Stop"][0]["hooks"][0]["command"] == "say done"
    assert data["hooks"]["Stop"][1]["hooks"] == [OURS] and sf.has_own_hooks(str(path), wrapped=True)
    again = sf.write_hooks(str(path), ENTRIES, wrapped=True)
    assert not again.changed and Path(first.backup).read_text() == USERS
    removed = sf.remove_hooks(str(path), wrapped=True)
    assert removed.changed and not removed.removed
    assert path.read_bytes() == USERS.encode()  # the user's own layout, not a re-dump
    assert not sf.has_own_hooks(str(path), wrapped=True)
    assert not sf.remove_hooks(str(path), wrapped=True).changed


def test_a_file_we_created_goes_with_its_folder_and_a_changed_one_is_rewritten(tmp_path: Path) -> None:
    path = tmp_path / ".factory" / "hooks.json"
    created = sf.write_hooks(str(path), ENTRIES, wrapped=False)
    assert created.changed and created.backup is None and sorted(json.loads(path.read_text())) == ["PreToolUse",
                                                                                                   "Stop"]
    assert sf.remove_hooks(str(path), wrapped=False).removed and not path.parent.exists()
    # What a new file is seeded with (Droid's hooks carried over from settings.json) is not ours: it stays.
    inherited = {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}
    sf.write_hooks(str(path), ENTRIES, wrapped=False, seed=lambda: inherited)
    assert not sf.remove_hooks(str(path), wrapped=False).removed and json.loads(path.read_text()) == inherited

    path = tmp_path / "settings.json"
    path.write_text(USERS)
    sf.write_hooks(str(path), ENTRIES, wrapped=True)
    data = json.loads(path.read_text())
    data["model"] = "sonnet"  # the user changed something since: no going back to the backup
    path.write_text(json.dumps(data))
    sf.remove_hooks(str(path), wrapped=True)
    after = json.loads(path.read_text())
    assert after["model"] == "sonnet" and not sf.has_own_hooks(str(path), wrapped=True)
    assert after["hooks"] == {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}


def test_a_linked_settings_file_stays_linked_and_backups_are_numbered_when_taken(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text(USERS)
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    sf.write_hooks(str(link), ENTRIES, wrapped=True)
    assert link.is_symlink() and sf.has_own_hooks(str(real), wrapped=True)
    taken = tmp_path / "x.md"
    taken.write_text("")
    Path(str(taken) + sf.BACKUP_SUFFIX).write_text("")
    assert sf.free_backup(str(taken)) == str(taken) + sf.BACKUP_SUFFIX + ".1"
