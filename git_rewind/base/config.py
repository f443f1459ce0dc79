"""Settings, layered: built-in defaults < user file < project file < GIT_REWIND_* environment.

The files are TOML, parsed only when they exist (tomllib, else tomlkit; tomlkit writes them), and
hooks cache the parse by mtime, so the hot path pays no TOML import.
"""

from __future__ import annotations

import os

from .errors import RewindError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypedDict

    class Settings(TypedDict):
        """The values every command reads (DEFAULTS' keys, tier values resolved): a key that is not one of
        them fails in mypy, not at run time."""

        max_file_size: int
        gc_keep: int
        gc_older_than_days: int
        lock_timeout: int
        auto_pack: int
        daemon: str
        daemon_min_files: int
        daemon_idle_minutes: int
        watch_settle_ms: int
        turn_timeout_minutes: int | float
        max_store_size: int
        tier: str
        anti_spam_seconds: int
        min_change_chars: int
        critical_files: list[str]
        exclude_patterns: list[str]
        risky_prompts: list[str]
        auto_resume_on_start: bool
        auto_checkpoint_on_clear: bool
        verify_before_clear: bool
        sync_name: str | None
        sync_remote: str | None
        sync_conversation: bool
        sync_auto: bool
        commit_trailer: bool

    from .repo import Repo

TIERS = ("minimal", "balanced", "aggressive")

DEFAULTS: dict[str, Any] = {
    "max_file_size": 50 * 1024 * 1024,
    "gc_keep": 1000,
    "gc_older_than_days": 30,
    "lock_timeout": 60,
    "auto_pack": 2000,
    # The file-watcher daemon (daemon.py): "auto" starts it for repositories past daemon_min_files.
    "daemon": "auto",
    "daemon_min_files": 5000,
    "daemon_idle_minutes": 30,
    # `git rewind watch` (watch.py): a checkpoint once the tree has been quiet this long.
    "watch_settle_ms": 1500,
    # An agent turn with no hook call for this long (or whose agent process is gone) is over (turns.py).
    "turn_timeout_minutes": 10,
    # What the checkpoints' own objects may take on disk (storage.py); 0: no cap.
    "max_store_size": 1 << 30,
    # When hooks checkpoint: see policy.py.
    "tier": "balanced",
    "anti_spam_seconds": None,  # None: the tier's (minimal 0, balanced 30, aggressive 15)
    "min_change_chars": None,  # None: the tier's (minimal 0, balanced 50, aggressive 25)
    "critical_files": [
        "package.json", "requirements.txt", "pyproject.toml", "Dockerfile",
        "docker-compose.yml", "tsconfig.json", "*.config.js", "*.config.ts",
    ],
    "exclude_patterns": ["node_modules/", ".git/", "dist/", "build/", "*.log"],
    "risky_prompts": ["refactor all", "delete.*files", "migrate all", "convert all", "rewrite.*all"],
    # Picking up after /clear, compaction or a restart: see hook.py and resume.py.
    "auto_resume_on_start": True,  # SessionStart tells the agent about the last checkpoint
    "auto_checkpoint_on_clear": True,  # a full checkpoint before /clear and compaction (balanced, aggressive)
    "verify_before_clear": True,  # that checkpoint's message counts what changed since the previous one
    # Sharing through a git remote (sync.py): no remote unless named, never an implicit `origin`.
    "sync_name": None,  # this machine's copy on remotes; None: a slug of git's user.name (or login) and host
    "sync_remote": None,
    "sync_conversation": False,  # push redacted transcripts too (push --with-conversation)
    "sync_auto": False,  # a background push after each turn end
    # The git hooks (install --git-hooks): an Assisted-by trailer on commits that hold agents' lines.
    "commit_trailer": False,
}

# The tier's value for a setting left at None.
TIER_VALUES: dict[str, dict[str, int]] = {
    "anti_spam_seconds": {"minimal": 0, "balanced": 30, "aggressive": 15},
    "min_change_chars": {"minimal": 0, "balanced": 50, "aggressive": 25},
}

PROJECT_FILE = ".git-rewind.toml"
_SIZE = r"^\s*(\d+)\s*([kmg]i?b?|b)?\s*$"


def xdg_config_home() -> str:
    """$XDG_CONFIG_HOME, else ~/.config: where our config and git's global ignore file live."""
    return os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")


def user_file() -> str:
    return os.path.join(xdg_config_home(), "git-rewind", "config.toml")


def parse_size(value: Any) -> int:
    """Bytes from an int or a string such as '50M' or '2GiB'."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    import re

    match = re.match(_SIZE, str(value), re.IGNORECASE)
    if not match:
        raise ValueError(f"not a size: {value!r}")
    factor = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get((match.group(2) or "b")[0].lower(), 1)
    return int(match.group(1)) * factor


def _non_negative_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"not a whole number: {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"not a whole number: {value!r}") from None
    if number < 0:
        raise ValueError(f"must not be negative: {value!r}")
    return number


def _positive_int(value: Any) -> int:
    number = _non_negative_int(value)
    if number == 0:
        raise ValueError(f"must be at least 1: {value!r}")
    return number


def _non_negative_number(value: Any) -> int | float:
    """A whole or fractional number, not negative (minutes: 0.5 is half a minute)."""
    import math

    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"not a number: {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"not a number: {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"not a number: {value!r}")
    if number < 0:
        raise ValueError(f"must not be negative: {value!r}")
    return int(number) if number.is_integer() else number


DAEMON_MODES = ("auto", "on", "off")


def _daemon_mode(value: Any) -> str:
    if isinstance(value, bool):
        value = "on" if value else "off"
    if value not in DAEMON_MODES:
        raise ValueError(f"not a daemon mode: {value!r} (one of {', '.join(DAEMON_MODES)})")
    return str(value)


def _tier(value: Any) -> str:
    if value not in TIERS:
        raise ValueError(f"not a tier: {value!r} (one of {', '.join(TIERS)})")
    return str(value)


def _sync_name(value: Any) -> str:
    """A machine's name on a remote: one ref name component of letters, digits, '.', '_' and '-'."""
    import re

    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}", value) \
            or value.endswith((".", ".lock")) or ".." in value:
        raise ValueError(f"not a machine name: {value!r} (letters, digits, '.', '_', '-'; at most 64)")
    return value


def _remote_name(value: Any) -> str:
    """A git remote's name or URL (checked against git when used)."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"not a remote: {value!r}")
    return value.strip()


def _string_list(value: Any) -> list[str]:
    """A TOML array of strings, or (environment, command line) a comma-separated string."""
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"not a list of strings: {value!r}")
    return list(value)


def _regex_list(value: Any) -> list[str]:
    import re

    patterns = _string_list(value)
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {pattern!r} ({exc})") from None
    return patterns


_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


def _bool(value: Any) -> bool:
    """A TOML boolean, or (environment, command line) true/false, 1/0, yes/no, on/off."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError(f"not a boolean: {value!r} (true or false)")


_CONVERT = {
    "max_file_size": parse_size,
    "gc_keep": _non_negative_int,
    "gc_older_than_days": _non_negative_int,
    "lock_timeout": _non_negative_int,
    "auto_pack": _non_negative_int,
    "daemon": _daemon_mode,
    "daemon_min_files": _non_negative_int,
    "daemon_idle_minutes": _non_negative_number,
    "watch_settle_ms": _positive_int,
    "turn_timeout_minutes": _non_negative_number,
    "max_store_size": parse_size,
    "tier": _tier,
    "anti_spam_seconds": _non_negative_int,
    "min_change_chars": _non_negative_int,
    "critical_files": _string_list,
    "exclude_patterns": _string_list,
    "risky_prompts": _regex_list,
    "auto_resume_on_start": _bool,
    "auto_checkpoint_on_clear": _bool,
    "verify_before_clear": _bool,
    "sync_name": _sync_name,
    "sync_remote": _remote_name,
    "sync_conversation": _bool,
    "sync_auto": _bool,
    "commit_trailer": _bool,
}


class Setting:
    """A value and where it came from."""

    __slots__ = ("value", "source")

    def __init__(self, value: Any, source: str) -> None:
        self.value = value
        self.source = source


def _parse_toml(path: str) -> dict[str, Any]:
    try:
        import tomllib  # Python 3.11+: a third of tomlkit's import time

        parse: Any = tomllib.loads
    except ImportError:
        import tomlkit

        def parse(text: str) -> dict[str, Any]:
            return dict(tomlkit.parse(text).unwrap())

    try:
        with open(path, encoding="utf-8") as fh:
            return dict(parse(fh.read()))
    except Exception as exc:  # either parser raises several types
        raise RewindError(f"{path}: invalid TOML: {exc}") from None


def _read_toml(path: str, cache: dict[str, Any] | None = None) -> dict[str, Any]:
    """The file's keys; with CACHE, reuse the parse while the file's mtime and size are the same."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return {}
    stamp = f"{st.st_mtime_ns}:{st.st_size}"
    if cache is not None:
        hit = cache.get(path)
        if isinstance(hit, list) and len(hit) == 2 and hit[0] == stamp and isinstance(hit[1], dict):
            return hit[1]
    data = _parse_toml(path)
    if cache is not None:
        cache[path] = [stamp, data]
        cache[""] = True  # changed: write it back
    return data


def _save_cache(path: str, cache: dict[str, Any]) -> None:
    from . import minijson

    cache.pop("", None)
    try:
        minijson.dump_file(path, cache)
    except (TypeError, ValueError, OSError):
        pass  # a value JSON cannot hold (a TOML date), or no .git/rewind yet: parse each time instead


def load(root: str | None, cache_file: str | None = None) -> dict[str, Setting]:
    """Every setting with its source; an invalid value is an error naming the file and key.

    Hooks pass CACHE_FILE: parsing TOML costs ~8 ms of imports on every hook call otherwise.
    """
    settings = {key: Setting(value, "default") for key, value in DEFAULTS.items()}
    if cache_file:
        from . import minijson

        cache: dict[str, Any] | None = minijson.load_file(cache_file)
    else:
        cache = None
    layers: list[tuple[str, dict[str, Any]]] = [(user_file(), _read_toml(user_file(), cache))]
    if root:
        project = os.path.join(root, PROJECT_FILE)
        layers.append((project, _read_toml(project, cache)))
    if cache_file and cache is not None and cache.get(""):
        _save_cache(cache_file, cache)
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
    return resolve_tier(settings)


def resolve_tier(settings: dict[str, Setting]) -> dict[str, Setting]:
    """Fill settings left at None with their tier's value (source: "tier <name>")."""
    tier = settings["tier"].value
    for key, by_tier in TIER_VALUES.items():
        if settings[key].value is None:
            settings[key] = Setting(by_tier[tier], f"tier {tier}")
    return settings


def values(root: str | None, cache_file: str | None = None) -> Settings:
    """Just the values."""
    return as_values(load(root, cache_file))


def as_values(settings: dict[str, Setting]) -> Settings:
    """The values of SETTINGS (load's or defaults'), typed: every key of DEFAULTS is there."""
    return {key: setting.value for key, setting in settings.items()}  # type: ignore[return-value]


def defaults() -> dict[str, Setting]:
    """The built-in settings, tier values resolved: what runs while a config file is invalid."""
    return resolve_tier({key: Setting(value, "default") for key, value in DEFAULTS.items()})


def load_or_defaults(root: str | None, cache_file: str | None = None) -> tuple[dict[str, Setting], str | None]:
    """The settings, or the defaults and why when the config is invalid (hooks and `status` go on with them)."""
    try:
        return load(root, cache_file), None
    except RewindError as exc:
        return defaults(), str(exc)


def for_repo(repo: Repo) -> Settings:
    """The values for a command in REPO; its lock timeout is set from them."""
    settings = values(repo.root)
    repo.lock_timeout = float(settings["lock_timeout"])
    return settings


# Reading and writing single settings: `git rewind config`. tomlkit is imported only to write a file
# (and to read a TOML array given on the command line).


def project_file(root: str) -> str:
    return os.path.join(root, PROJECT_FILE)


def check_key(key: str, where: str | None = None) -> None:
    """A RewindError for a key this version does not know, naming WHERE (a file) when given."""
    if key not in _CONVERT:
        prefix = f"{where}: " if where else ""
        raise RewindError(f"{prefix}{key}: unknown key (`git rewind config list` shows them all)")


def format_value(value: Any, bare_string: bool = False) -> str:
    """VALUE as TOML would write it: `["a", "b"]`, `42`, `"balanced"` (or `balanced` if BARE_STRING)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_string(item) for item in value) + "]"
    if isinstance(value, str):
        return value if bare_string else _toml_string(value)
    return str(value)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_string(text: str) -> str:
    escaped = (_ESCAPES.get(c) or (f"\\u{ord(c):04x}" if c < " " or c == "\x7f" else c) for c in text)
    return '"' + "".join(escaped) + '"'


def from_command_line(key: str, text: str) -> Any:
    """The value to store for KEY given as TEXT, checked by the key's converter (ValueError if invalid).

    Lists are comma-separated or a TOML array literal; sizes with a suffix stay strings ("10M").
    """
    convert = _CONVERT[key]
    raw: Any = text
    if convert in (_string_list, _regex_list) and text.lstrip().startswith("["):
        raw = _toml_array(text)
    value = convert(raw)
    if convert is parse_size and not text.strip().isdigit():
        return text.strip()
    return value


def _toml_array(text: str) -> list[Any]:
    import tomlkit

    try:
        doc = tomlkit.parse("value = " + text)
    except Exception:  # tomlkit raises several types
        raise ValueError(f"not a TOML array: {text!r}") from None
    value = doc.unwrap().get("value")
    if list(doc) != ["value"] or not isinstance(value, list):
        raise ValueError(f"not a TOML array: {text!r}")
    return value


def set_value(path: str, key: str, text: str) -> Any:
    """Store KEY = TEXT in the TOML file at PATH, keeping its comments and layout; returns the stored value.

    Nothing is written (the file stays byte for byte) if the key, the value or the file is invalid.
    """
    check_key(key, path)
    try:
        value = from_command_line(key, text)
    except (TypeError, ValueError) as exc:
        raise RewindError(f"{path}: {key}: {exc}") from None
    import tomlkit

    original, doc = _edit(path)
    doc[key] = tomlkit.item(value)
    _save(path, original, doc, key, value)
    return value


def unset_value(path: str, key: str) -> bool:
    """Remove KEY from the TOML file at PATH, keeping everything else; False if it was not set there."""
    check_key(key, path)
    original, doc = _edit(path)
    if original is None or key not in doc:
        return False
    del doc[key]
    _save(path, original, doc, key, None)
    return True


def _edit(path: str) -> tuple[str | None, Any]:
    """The file's text (None if missing) and its tomlkit document, for editing in place."""
    import tomlkit

    try:
        with open(path, encoding="utf-8", newline="") as fh:  # newline="": keep CRLF files CRLF
            original: str | None = fh.read()
    except FileNotFoundError:
        original = None
    except (OSError, UnicodeDecodeError) as exc:
        raise RewindError(f"{path}: cannot read: {exc}") from None
    try:
        return original, tomlkit.parse(original or "")
    except Exception as exc:  # tomlkit raises several types
        raise RewindError(f"{path}: invalid TOML: {exc}") from None


def _save(path: str, original: str | None, doc: Any, key: str, value: Any) -> None:
    """Atomically replace PATH (through a symbolic link, keeping its mode) with DOC, checked first."""
    import tomlkit

    text = doc.as_string()
    if original and "\r\n" in original and original.count("\n") == original.count("\r\n"):
        # A CRLF file stays CRLF: tomlkit ends the lines it adds with "\n".
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    written = tomlkit.parse(text).unwrap().get(key)
    if written != value:  # tomlkit would have written something else: leave the file alone
        raise RewindError(f"{path}: {key}: could not be written as {format_value(value)}")
    if text == original:
        return
    from .fsutil import write_atomic

    try:
        write_atomic(path, text, follow=True, makedirs=True)
    except OSError as exc:
        raise RewindError(f"{path}: cannot write: {exc}") from None
