"""Settings: defaults < user file < project file < environment, with errors naming file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_rewind import config
from git_rewind.errors import RewindError


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for key in config.DEFAULTS:
        monkeypatch.delenv(f"GIT_REWIND_{key.upper()}", raising=False)
    root = tmp_path / "proj"
    root.mkdir()
    return root


def test_layers_in_order(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert config.load(str(isolated))["gc_keep"].source == "default"
    user = Path(config.user_file())
    user.parent.mkdir(parents=True)
    user.write_text("# mine\ngc_keep = 10\nmax_file_size = '2M'\n")
    (isolated / ".git-rewind.toml").write_text("gc_keep = 20\n")
    settings = config.load(str(isolated))
    assert settings["gc_keep"].value == 20 and settings["gc_keep"].source.endswith(".git-rewind.toml")
    assert settings["max_file_size"].value == 2 * 1024 * 1024 and settings["max_file_size"].source == str(user)
    monkeypatch.setenv("GIT_REWIND_GC_KEEP", "30")
    settings = config.load(str(isolated))
    assert settings["gc_keep"].value == 30 and settings["gc_keep"].source == "environment"


@pytest.mark.parametrize("text,needle", [
    ("gc_keep = -1\n", "gc_keep"),
    ("max_file_size = 'lots'\n", "max_file_size"),
    ("gc_keep = \n", "invalid TOML"),
])
def test_invalid_values_name_file_and_key(isolated: Path, text: str, needle: str) -> None:
    (isolated / ".git-rewind.toml").write_text(text)
    with pytest.raises(RewindError) as err:
        config.load(str(isolated))
    assert ".git-rewind.toml" in str(err.value) and needle in str(err.value)


def test_invalid_environment_value(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_REWIND_MAX_FILE_SIZE", "huge")
    with pytest.raises(RewindError, match="GIT_REWIND_MAX_FILE_SIZE"):
        config.load(str(isolated))


@pytest.mark.parametrize("raw,expected", [(0, 0), ("512", 512), ("1K", 1024), ("3 MiB", 3 << 20), ("1g", 1 << 30)])
def test_sizes(raw: object, expected: int) -> None:
    assert config.parse_size(raw) == expected


def test_unknown_keys_are_kept_for_later_versions(isolated: Path) -> None:
    (isolated / ".git-rewind.toml").write_text("tier = 'balanced'\n")
    assert "tier" not in config.values(str(isolated))
