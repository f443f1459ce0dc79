"""Checkpoint summaries: what was done, the current state, the next steps, the files.

An agent (or a person) writes a summary before /clear so the next session can pick up the work.
Free text with sections ("Done:", "## Next steps", "**Files:**" …) is stored structured, so the
SessionStart context and tools can use each part; a JSON object is stored as given; text with
no sections stays plain text. Only `snap --summary` and the readers import this module.
"""

from __future__ import annotations

import json
import re
from typing import Any

KEYS = ("done", "state", "next", "files")

# Section names as people write them, longest first so "next steps" wins over "next".
_NAMES = {
    "what was done": "done", "what i did": "done", "what's done": "done", "completed": "done", "done": "done",
    "current state": "state", "state": "state", "status": "state",
    "next steps": "next", "next step": "next", "to do": "next", "todo": "next", "next": "next",
    "files changed": "files", "changed files": "files", "key files": "files", "files": "files",
}
_EMPHASIS = r"(?:\*\*|__|\*|_)?"
_HEADING = re.compile(
    r"^\s*(?P<hash>#{1,6}\s*)?" + _EMPHASIS
    + r"(?P<name>" + "|".join(re.escape(n) for n in sorted(_NAMES, key=len, reverse=True)) + r")"
    + _EMPHASIS + r"\s*(?P<colon>:)?" + _EMPHASIS + r"\s*(?P<rest>.*?)\s*$",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
LABELS = {"done": "Done", "state": "State", "next": "Next", "files": "Files"}


def structured(text: str) -> Any:
    """What `snap --summary` stores: a JSON object as is, sectioned text as a dict, else trimmed text."""
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return parsed
    return parse(text) or text.strip()


def _heading(line: str) -> tuple[str, str] | None:
    """(section key, text after the heading) when LINE opens a section."""
    match = _HEADING.match(line)
    if not match:
        return None
    rest = match.group("rest")
    # "Done: x" and "## Done" open a section; "Done something" in a sentence does not.
    if not match.group("colon") and (rest or not match.group("hash")):
        return None
    return _NAMES[match.group("name").lower()], rest


def parse(text: str) -> dict[str, Any] | None:
    """TEXT's sections as {"done", "state", "next", "files", "text"}, or None when it has none."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        opened = _heading(line)
        if opened is not None:
            key, rest = opened
            current = sections.setdefault(key, [])
            if rest:
                current.append(rest)
        elif current is not None and line.strip():
            current.append(line.rstrip())
    if not sections:
        return None
    result: dict[str, Any] = {key: None for key in KEYS if key != "files"}
    for key in ("done", "state", "next"):
        if key in sections:
            result[key] = _block(sections[key]) or None
    result["files"] = _files(sections.get("files", []))
    result["text"] = text.strip()
    return result


def _block(lines: list[str]) -> str:
    """A section's lines, dedented as a block (bullets kept: they are the author's structure)."""
    indent = min((len(line) - len(line.lstrip()) for line in lines), default=0)
    return "\n".join(line[indent:] for line in lines).strip()


def _files(lines: list[str]) -> list[str]:
    """File names from bullets or comma-separated lines, without backticks or trailing comments."""
    found: list[str] = []
    for line in lines:
        item = _BULLET.sub("", line).strip()
        parts = [item] if _BULLET.match(line) else item.split(",")
        for part in parts:
            name = re.split(r"\s+[-—–(]\s*|:\s+|\s+\(", part.strip(), maxsplit=1)[0]
            name = name.strip().strip("`'\"*").strip()
            if name and name not in found:
                found.append(name)
    return found


def headline(summary: Any, limit: int = 120) -> str:
    """One line for a list or a resume banner: the state, else what was done, else the text."""
    if isinstance(summary, dict):
        text = next((str(summary[k]) for k in ("state", "done", "text", "next") if summary.get(k)), "")
    else:
        text = str(summary or "")
    parts = [" ".join(_BULLET.sub("", line).split()) for line in text.splitlines()]
    first = "; ".join(p for p in parts if p)
    return first[:limit - 1] + "…" if len(first) > limit else first


def render(summary: Any, indent: str = "") -> list[str]:
    """The summary as readable lines: "Done: …", "State: …", "Next: …", "Files: a, b"."""
    if not isinstance(summary, dict):
        return [indent + line for line in str(summary).splitlines()]
    known = [k for k in KEYS if summary.get(k)]
    if not known:
        return [indent + line for line in json.dumps(summary, ensure_ascii=False).splitlines()]
    lines = []
    for key in known:
        value = summary[key]
        if isinstance(value, list):
            lines.append(f"{indent}{LABELS[key]}: {', '.join(str(v) for v in value)}")
            continue
        body = str(value).splitlines() or [""]
        if len(body) == 1:
            lines.append(f"{indent}{LABELS[key]}: {body[0]}")
        else:
            lines.append(f"{indent}{LABELS[key]}:")
            lines.extend(f"{indent}  {line}" for line in body)
    return lines
