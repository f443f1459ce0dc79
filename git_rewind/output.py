"""How checkpoints read on a terminal: one line each, ages, short ids."""

from __future__ import annotations

from datetime import datetime, timezone

from .checkpoints import Checkpoint

SHORT = 7


def age(when: datetime, now: datetime | None = None) -> str:
    """'42s ago', '5m ago', '3h ago', '12d ago'."""
    seconds = max(0, int(((now or datetime.now(timezone.utc)) - when).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def paths_text(paths: list[str], most: int = 3) -> str:
    if not paths:
        return "-"
    shown = ",".join(paths[:most])
    return shown + (f",+{len(paths) - most}" if len(paths) > most else "")


def line(item: Checkpoint, now: datetime | None = None) -> str:
    """`#42  5m ago  4f9e1a2b  PreToolUse/Edit  src/app.py  before Edit src/app.py`"""
    note = item.note
    what = "/".join(str(x) for x in (note.get("trigger") or "manual", note.get("tool")) if x)
    session = item.session[:12]
    return "  ".join(
        [f"#{item.seq}", age(item.created, now), session, what,
         paths_text(list(note.get("paths") or [])), item.message]
    )


def details(item: Checkpoint) -> list[str]:
    """`git rewind show`: the metadata as 'key: value' lines."""
    note = item.note
    rows = [
        ("checkpoint", f"#{item.seq} {item.commit}"),
        ("session", item.session),
        ("created", f"{note.get('created')} ({age(item.created)})"),
        ("message", item.message),
    ]
    for key in ("agent", "trigger", "tool", "branch", "head", "prompt"):
        if note.get(key):
            rows.append((key, str(note[key])))
    if note.get("paths"):
        rows.append(("paths", " ".join(note["paths"])))
    if note.get("tags"):
        rows.append(("tags", " ".join(note["tags"])))
    for entry in note.get("skipped") or []:
        rows.append(("skipped", f"{entry.get('path')} ({entry.get('reason')})"))
    if note.get("rewind"):
        rows.append(("rewind", f"safety checkpoint before restoring #{note['rewind'].get('to')}"))
    lines = [f"{key + ':':<12}{value}" for key, value in rows]
    if note.get("summary"):
        from .summary import render

        lines.append("summary:")
        lines.extend(render(note["summary"], indent="  "))
    return lines
