"""How checkpoints read on a terminal: the list's aligned table, details, blame lines."""

from __future__ import annotations

from ..base.clock import age, ago
from ..store.checkpoints import Checkpoint

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..base.note import Note
    from ..ops.blame import Line
    from .pager import View

SHORT = 7


def paths_text(paths: list[str], most: int = 3) -> str:
    if not paths:
        return "-"
    shown = ",".join(paths[:most])
    return shown + (f",+{len(paths) - most}" if len(paths) > most else "")


HEADER = ("seq", "age", "worktree", "session", "agent", "trigger/tool", "paths", "tags", "message")
MESSAGE_ROOM = 20  # on a narrow terminal a message keeps at least this many columns (the line wraps)


def _fields(item: Checkpoint, now: float | None, worktree: bool, remote: bool = False) -> list[str]:
    """The columns of ITEM's row, as HEADER names them (the work tree's only with WORKTREE; with REMOTE, who
    made a fetched checkpoint in its place)."""
    note = item.note
    what = "/".join(x for x in (note.trigger or "manual", note.tool) if x)
    where = [note.worktree or "main-worktree"] if worktree else [by(item)] if remote else []
    first = item.ident if item.source is not None else f"#{item.seq}"
    return [first, ago(item.time or None, now), *where, item.session[:12], note.agent or "-", what,
            paths_text(note.paths), ",".join(note.tags) or "-", " ".join(item.message.splitlines())]


def line(item: Checkpoint, now: float | None = None, worktree: bool = False) -> str:
    """`#42  5m ago  4f9e1a2b  claude-code  PreToolUse/Edit  src/app.py  -  before Edit src/app.py`: a row
    of `table` unaligned, for a reader that is not a terminal (the MCP server's text); with WORKTREE the work
    tree's name (`main-worktree` for the main one) after the age."""
    return "  ".join(_fields(item, now, worktree))


def by(item: Checkpoint) -> str:
    """Who made a fetched checkpoint, as its copy says (user.name of the machine that pushed it)."""
    shared = item.note.extra.get("shared")
    user = shared.get("user") if isinstance(shared, dict) else None
    return str(user) if user else "-"


def table(items: list[Checkpoint], now: float | None = None, worktree: bool = False, width: int | None = None,
          view: View | None = None, remote: bool = False) -> list[str]:
    """`git rewind list`: a header row, then one row per checkpoint, each column starting at the same place.

    WIDTH (a terminal's; None when piped): the message is cut so that a row fits. VIEW colours the
    sequence numbers and tags with git's colours for commit ids and tags (color.diff.commit,
    color.decorate.tag), when it colours at all.
    """
    header = [h for h in HEADER if worktree or h != "worktree"]
    if remote:
        header = ["id", *header[1:2], "by", *header[2:]]
    rows = [header] + [_fields(item, now, worktree, remote) for item in items]
    wide = [_widths(row[:-1]) for row in rows]  # each cell's columns, measured once (50,000 rows: -n 0)
    widths = [max(column) for column in zip(*wide, strict=True)]
    start = sum(widths) + 2 * len(widths)  # where the message column begins
    colored = {0: ("color.diff.commit", "yellow"), header.index("tags"): ("color.decorate.tag", "bold yellow")}
    lines = []
    for number, (row, taken) in enumerate(zip(rows, wide, strict=True)):
        cells = []
        for column, (text, cells_wide, used) in enumerate(zip(row[:-1], widths, taken, strict=True)):
            shown = text
            if view is not None and number and column in colored and text != "-":
                shown = view.paint(text, *colored[column])
            cells.append(shown + " " * (cells_wide - used))
        message = row[-1] if width is None else _cut(row[-1], max(width - start, MESSAGE_ROOM))
        lines.append(("  ".join(cells) + "  " + message).rstrip())
    return lines


def _widths(texts: list[str]) -> list[int]:
    """`_cells` of each of TEXTS (one test for a row that is all ASCII, as most are)."""
    return list(map(len, texts)) if "".join(texts).isascii() else [_cells(text) for text in texts]


def _cells(text: str) -> int:
    """How many terminal columns TEXT takes: East Asian wide characters two, combining marks none."""
    import unicodedata

    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
               for ch in text)


def _cut(text: str, room: int) -> str:
    """TEXT in at most ROOM terminal columns, an ellipsis marking a cut."""
    if _cells(text) <= room:
        return text
    used = 0
    for at, ch in enumerate(text):
        used += _cells(ch)
        if used > room - 1:
            return text[:at] + "…"
    return text


def details(item: Checkpoint, view: View | None = None) -> list[str]:
    """`git rewind show`: the metadata as 'key: value' lines. VIEW colours them as `git show` colours its
    header: the checkpoint's id in color.diff.commit (yellow), the key names in color.diff.meta (bold)."""
    note = item.note
    rows = [
        ("checkpoint", f"{item.ident if item.source is not None else '#' + str(item.seq)} {item.commit}"),
        ("session", item.session),
        *([("by", f"{by(item)} (machine {item.source}, fetched)")] if item.source is not None else []),
        ("created", f"{note.created} ({age(note.created)})"),
        ("message", item.message),
    ]
    for key, value in (("agent", note.agent), ("trigger", note.trigger), ("tool", note.tool),
                       ("branch", note.branch), ("head", note.head), ("worktree", note.worktree),
                       ("prompt", note.prompt)):
        if value:
            rows.append((key, value))
    if note.paths:
        rows.append(("paths", " ".join(note.paths)))
    if note.named and set(note.named) != set(note.paths):
        rows.append(("named", " ".join(note.named)))
    if note.tags:
        rows.append(("tags", " ".join(note.tags)))
    rows += _origins(note)
    for entry in note.skipped:
        rows.append(("skipped", f"{entry.get('path')} ({entry.get('reason')})"))
    if note.rewind is not None:
        rows.append(("rewind", f"safety checkpoint before restoring {note.rewind.target}"))
    lines = [f"{key + ':':<12}{value}" for key, value in rows]
    if view is not None and view.color:
        lines = [view.paint(f"{key}:", "color.diff.meta", "bold") + " " * (11 - len(key))
                 + (view.paint(value, "color.diff.commit", "yellow") if key == "checkpoint" else value)
                 for key, value in rows]
    if note.summary:
        from ..base.summary import render

        lines.append("summary:")
        lines.extend(render(note.summary, indent="  "))
    return lines


def _origins(note: Note) -> list[tuple[str, str]]:
    """`changed by:` rows: which paths an agent's turn changed since the work tree's previous checkpoint,
    which came from outside, or that it is unknown."""
    if note.origins is None:
        return [("changed by", "unknown (minimal tier, or taken before origins were recorded)")]
    rows = []
    for origin in ("agent", "outside"):
        paths = [p for p, o in note.origins.items() if o == origin]
        if not paths:
            continue
        who = origin
        if origin == "agent" and note.turn:
            prompt = " ".join(str(note.turn.get("prompt") or "").split())
            who = f"agent ({note.turn.get('agent') or '?'}, turn #{note.turn.get('seq')}"
            who += f": {prompt[:50] + '…' if len(prompt) > 50 else prompt})" if prompt else ")"
        more = f" (+{len(paths) - 10})" if len(paths) > 10 else ""
        rows.append(("changed by", f"{who}: {' '.join(paths[:10])}{more}"))
    return rows


def blame(lines: list[Line]) -> list[str]:
    """`git rewind blame`, read like `git blame`: `#12 (agent   claude-code Edit  2026-11-25 10:00  7) text`.

    The checkpoint that first held the line (blank for base lines and for lines changed since the newest
    checkpoint), who (origin, agent, tool), when (UTC), the line number and the text. A committed line whose
    author its commit's authorship note gives shows that commit's short id first, and the checkpoint the note
    names in place of the time.
    """
    rows = []
    for item in lines:
        if item.noted:  # its author from the authorship note of its commit
            first, when = (item.commit or "")[:8], f"#{item.seq}" if item.seq is not None else ""
        else:
            first = f"#{item.seq}" if item.seq is not None else ""
            when = (item.created or "").replace("T", " ")[:16] if item.seq is not None else \
                ("" if item.origin == "base" else "not checkpointed")
        rows.append((first, item.origin or "unknown", item.agent or "", item.tool or "", when, str(item.line),
                     item.text))
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    shown = [i for i in range(1, 5) if widths[i]]  # columns empty on every line (no agent, no tool) are left out
    out = []
    for row in rows:
        who = " ".join(row[i].ljust(widths[i]) for i in shown)
        out.append(f"{row[0].ljust(widths[0])} ({who} {row[5].rjust(widths[5])}) {row[6]}")
    return out
