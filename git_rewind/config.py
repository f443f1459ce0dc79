"""Settings, layered: built-in defaults < user file < project file < GIT_REWIND_* environment.

The files are TOML, read with tomlkit only when they exist, so the hot path pays no import.
"""

from __future__ import annotations

import os
import re
from typing import Any

from .errors import RewindError

DEFAULTS: dict[str, Any] = {
    "max_file_size": 50 * 1024 * 1024,
    "gc_keep": 1000,
    "gc_older_than_days": 30,
    "lock_timeout": 60,
    "auto_pack": 2000,
}

PROJECT_FILE = ".git-rewind.toml"
_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]i?b?|b)?\s*$", re.IGNORECASE)


def xdg_config_home() -> str:
    """$XDG_CONFIG_HOME, else ~/.config: where our config and git's global ignore file live."""
    return os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")


def user_file() -> str:
    return os.path.join(xdg_config_home(), "git-rewind", "config.toml")


def parse_size(value: Any) -> int:
    """Bytes from an int or a string such as '50M' or '2GiB'."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    match = _SIZE.match(str(value))
    if not match:
        raise ValueError(f"not a size: {value!r}")
    factor = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get((match.group(2) or "b")[0].lower(), 1)
    return int(match.group(1)) * factor


def _non_negative_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(f"not a whole number: {value!r}")
    number = int(value)
    if number < 0:
        raise ValueError(f"must not be negative: {value!r}")
    return number


_CONVERT = {
    "max_file_size": parse_size,
    "gc_keep": _non_negative_int,
    "gc_older_than_days": _non_negative_int,
    "lock_timeout": _non_negative_int,
    "auto_pack": _non_negative_int,
}


class Setting:
    """A value and where it came from."""

    __slots__ = ("value", "source")

    def __init__(self, value: Any, source: str) -> None:
        self.value = value
        self.source = source


def _read_toml(path: str) -> dict[str, Any]:
    if not os.path.exists(path):
        return {}
    import tomlkit

    try:
        with open(path, encoding="utf-8") as fh:
            return dict(tomlkit.parse(fh.read()).unwrap())
    except Exception as exc:  # tomlkit raises several types
        raise RewindError(f"{path}: invalid TOML: {exc}") from None


def load(root: str | None) -> dict[str, Setting]:
    """Every setting with its source; an invalid value is an error naming the file and key."""
    settings = {key: Setting(value, "default") for key, value in DEFAULTS.items()}
    layers: list[tuple[str, dict[str, Any]]] = [(user_file(), _read_toml(user_file()))]
    if root:
        project = os.path.join(root, PROJECT_FILE)
        layers.append((project, _read_toml(project)))
    env = {
        key: os.environ[f"GIT_REWIND_{key.upper()}"]
        for key in DEFAULTS
        if f"GIT_REWIND_{key.upper()}" in os.environ
    }
    layers.append(("environment", env))
    for source, values in layers:
        for key, raw in values.items():
            if key not in _CONVERT:
                continue  # unknown keys belong to later versions or other tools
            try:
                settings[key] = Setting(_CONVERT[key](raw), source)
            except (TypeError, ValueError) as exc:
                where = f"GIT_REWIND_{key.upper()}" if source == "environment" else f"{source}: {key}"
                raise RewindError(f"{where}: {exc}") from None
    return settings


def values(root: str | None) -> dict[str, Any]:
    """Just the values."""
    return {key: setting.value for key, setting in load(root).items()}
