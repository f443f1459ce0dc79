"""JSON for the hook's hot path without `import json`.

`import json` pulls in `re` (and with it enum and functools): ~8 ms, about half of what a
whole hook that skips may cost. The C scanner and string encoder behind the json module do
the same work with none of that; anything off the hot path uses the json module.
"""

# No `from __future__ import annotations`: importing __future__ is a module more on the hook's path (the
# annotations here are all valid at run time on Python 3.10).
try:
    import _json
except ImportError:  # pragma: no cover - CPython always has it
    _json = None  # type: ignore[assignment]


class _Context:
    """The attributes the C scanner reads from a json.JSONDecoder."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict[str, str] = {}

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


_scanner = _json.make_scanner(_Context()) if _json is not None else None  # type: ignore[arg-type]
_WHITESPACE = " \t\n\r"


def loads(text: str) -> object:
    """Parse one JSON document; ValueError if it is not one."""
    if _scanner is None:
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scanner(text, start)
    except StopIteration as exc:
        raise ValueError(f"expecting a value at character {exc.value}") from None
    except SystemError:
        # CPython 3.11's scanner reports an error inside a document this way until json.decoder
        # is imported; the json module then raises the precise JSONDecodeError (a ValueError).
        import json

        return json.loads(text)
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"extra data at character {end}")
    return value


def load_file(path: str) -> dict[str, object]:
    """The JSON object in PATH; {} when it is missing, unreadable, not JSON or not an object."""
    from .fsutil import read_bytes

    try:
        data = loads(read_bytes(path).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def dump_file(path: str, data: object) -> None:
    """Replace PATH with DATA as JSON, atomically (a temporary file and a rename)."""
    from .fsutil import write_atomic

    write_atomic(path, dumps(data))


def dumps(value: object) -> str:
    """One-line JSON (UTF-8 kept as is) for dicts, lists, strings, numbers, booleans and None."""
    if _json is None:
        import json

        return json.dumps(value, ensure_ascii=False)
    return "".join(_encode(value))


def _encode(value: object) -> list[str]:
    if value is None:
        return ["null"]
    if value is True:
        return ["true"]
    if value is False:
        return ["false"]
    if isinstance(value, str):
        return [_json.encode_basestring(value)]
    if isinstance(value, (int, float)):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"not valid JSON: {value}")
        return [repr(value) if isinstance(value, float) else str(int(value))]
    if isinstance(value, dict):
        parts = ["{"]
        for i, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                raise TypeError(f"JSON keys must be strings, not {type(key).__name__}")
            parts.append((", " if i else "") + _json.encode_basestring(key) + ": ")
            parts.extend(_encode(item))
        parts.append("}")
        return parts
    if isinstance(value, (list, tuple)):
        parts = ["["]
        for i, item in enumerate(value):
            if i:
                parts.append(", ")
            parts.extend(_encode(item))
        parts.append("]")
        return parts
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def dumps_indented(value: object, indent: int = 1) -> str:
    """What `json.dumps(VALUE, ensure_ascii=True, indent=INDENT)` writes (a note's text, `list --json`), byte
    for byte, several times faster (json's indenting encoder is written in Python, as generators); values that
    function writes in ways this one does not (non-finite floats, keys that are not strings) go to it."""
    if _json is not None:
        try:
            parts: list[str] = []
            _encode_indented(value, parts, "\n", " " * indent)
            return "".join(parts)
        except (TypeError, ValueError):
            pass
    import json

    return json.dumps(value, ensure_ascii=True, indent=indent)


def _encode_indented(value: object, parts: list[str], newline: str, step: str = " ") -> None:
    if isinstance(value, dict):
        if not value:
            parts.append("{}")
            return
        inner = newline + step
        parts.append("{")
        for i, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                raise TypeError("a key that is not a string")
            parts.append(("," if i else "") + inner + _json.encode_basestring_ascii(key) + ": ")
            _encode_indented(item, parts, inner, step)
        parts.append(newline + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            parts.append("[]")
            return
        inner = newline + step
        parts.append("[")
        for i, item in enumerate(value):
            parts.append(("," if i else "") + inner)
            _encode_indented(item, parts, inner, step)
        parts.append(newline + "]")
    elif isinstance(value, str):
        parts.append(_json.encode_basestring_ascii(value))
    else:
        parts.extend(_encode(value))
