"""Picking up where the work stood: the context a new agent session is given, and the count of
what changed that a checkpoint before /clear or compaction records.

Both run once per session start, /clear or compaction, never before a tool call, so they may
read every note (through git's CLI: no pygit2) and scan the work tree.
"""

from __future__ import annotations

import calendar
import json
import time
from typing import Any

from .repo import NOTES_REF, Repo

MAX_FILES = 20  # files listed in the context; the rest are counted
_STATUS = {"A": "added", "M": "modified", "D": "deleted", "T": "type changed"}


class Counts:
    """Files changed and lines added and removed between two trees (`git diff --numstat`)."""

    __slots__ = ("files", "added", "removed")

    def __init__(self, files: int = 0, added: int = 0, removed: int = 0) -> None:
        self.files = files
        self.added = added
        self.removed = removed

    def text(self) -> str:
        return f"Files changed: {self.files}, lines added: {self.added}, lines removed: {self.removed}"

    def to_dict(self) -> dict[str, int]:
        return {"files": self.files, "added": self.added, "removed": self.removed}


def numstat(repo: Repo, old_tree: str, new_tree: str) -> Counts:
    """What changed from OLD_TREE to NEW_TREE; a binary file counts as changed with 0 lines."""
    counts = Counts()
    if old_tree == new_tree:
        return counts
    out = repo.git(["diff-tree", "-r", "-z", "--no-renames", "--numstat", old_tree, new_tree])
    for record in out.split(b"\0"):
        fields = record.split(b"\t", 2)
        if len(fields) != 3:
            continue
        counts.files += 1
        counts.added += int(fields[0]) if fields[0].isdigit() else 0
        counts.removed += int(fields[1]) if fields[1].isdigit() else 0
    return counts


def save_counted(repo: Repo, req: Any) -> Any:
    """Checkpoint REQ whole, its message ending with what changed since the session's last checkpoint.

    The tree is scanned first (under the work-tree lock) so the count is of exactly the tree
    the checkpoint records; the count is also kept in the note as `changes`.
    """
    from . import snapshot, store

    with repo.worktree_lock():
        tip = store.session_tip(repo, req.session)
        if tip is not None:
            base, since = tip.tree, f"#{tip.seq}"
        else:
            head, _branch = repo.head()
            base = repo.tree_of(head) if head else snapshot.EMPTY_TREE
            since = "HEAD" if head else "an empty tree"
        scan = snapshot.scan(repo, req.max_file_size, req.excludes_file, base_tree=base)
        added = [p for status, p in scan.changes if status in ("A", "M", "T")]
        snapshot.leave_out_large(repo, scan, added, req.max_file_size)
        counts = numstat(repo, base, scan.tree)
        req.message = f"{req.message}: {counts.text()} (since {since})"
        req.extra["changes"] = {**counts.to_dict(), "since": tip.seq if tip is not None else None}
        return store.save_locked(repo, req, scan)


# the context at session start -----------------------------------------------------------------


def all_notes(repo: Repo) -> list[tuple[str, dict[str, Any]]]:
    """(commit, note) of every checkpoint, oldest first: `git notes list` and one `git cat-file --batch`."""
    if repo.read_ref(NOTES_REF) is None:
        return []
    pairs = [line.split() for line in repo.git(["notes", "--ref", NOTES_REF, "list"]).decode().splitlines()]
    pairs = [p for p in pairs if len(p) == 2]
    if not pairs:
        return []
    out = repo.git(["cat-file", "--batch"], input="".join(f"{blob}\n" for blob, _ in pairs).encode())
    result = []
    pos = 0
    for _blob, commit in pairs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3:  # "<oid> missing"
            continue
        size = int(header[2])
        body = out[pos:pos + size]
        pos += size + 1
        try:
            note = json.loads(body)
        except ValueError:
            continue
        if isinstance(note, dict) and isinstance(note.get("seq"), int):
            result.append((commit, note))
    result.sort(key=lambda item: int(item[1]["seq"]))
    return result


def ago(created: Any, now: float | None = None) -> str:
    """'just now', '5 min ago', '2 h ago', '3 days ago' for a note's UTC time."""
    try:
        then = calendar.timegm(time.strptime(str(created), "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return "at an unknown time"
    seconds = max(0, int((time.time() if now is None else now) - then))
    if seconds < 60:
        return "just now"
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {'day' if unit == 'days' and count == 1 else unit} ago"
    return "just now"  # pragma: no cover


def context(repo: Repo, taken: Any, max_file_size: int) -> tuple[str | None, dict[str, Any]]:
    """The text a new session is given about the newest earlier checkpoint, and what to log.

    TAKEN is the store's result for this SessionStart's own checkpoint (None when none was
    attempted): a checkpoint it created is not "earlier", and its tree is the tree of now.
    """
    from . import snapshot

    items = all_notes(repo)
    if taken is not None and taken.created:
        items = [(c, n) for c, n in items if c != taken.commit]
    if not items:
        return None, {"context": "none: no earlier checkpoint"}
    commit, note = items[-1]
    if taken is not None:
        now_tree = taken.tree
    else:
        with repo.worktree_lock():
            now_tree = snapshot.scan(repo, max_file_size).tree
    changed = snapshot.changed_paths(repo, repo.tree_of(commit), now_tree)
    summarised = next(((c, n) for c, n in reversed(items) if n.get("summary")), None)
    lines = _banner(note, summarised)
    lines += _changes(int(note["seq"]), changed)
    lines.append(_how_to_rewind(note))
    info = {"context": {"from": note["seq"], "changed": len(changed),
                        "summary": summarised[1]["seq"] if summarised else None}}
    return "\n".join(lines), info


def _banner(note: dict[str, Any], summarised: tuple[str, dict[str, Any]] | None) -> list[str]:
    from .summary import headline, render

    seq = note["seq"]
    what = (headline(note["summary"]) if note.get("summary") else "") or str(note.get("message") or "")
    lines = [f"Resumed from checkpoint #{seq}: {what} (saved {ago(note.get('created'))})."]
    if summarised is not None:
        source = summarised[1]
        if source["seq"] == seq:
            lines.append("Summary saved with it:")
        else:
            lines.append(f"Latest summary, saved with checkpoint #{source['seq']} ({ago(source.get('created'))}):")
        lines += render(source["summary"], indent="  ")
    return lines


def _how_to_rewind(note: dict[str, Any]) -> str:
    """The commands, offering --full only where there is a conversation to rewind with the code."""
    seq = note["seq"]
    code = f"To rewind: `git rewind undo {seq}` restores the code as it was at #{seq}; "
    if note.get("conversation"):
        code += f"`git rewind undo {seq} --full` restores the code and the conversation; "
    return code + "`git rewind list` shows every checkpoint."


def _changes(seq: int, changed: list[tuple[str, str]]) -> list[str]:
    if not changed:
        return [f"Files changed since #{seq}: none."]
    lines = [f"Files changed since #{seq} ({len(changed)}):"]
    lines += [f"  {_STATUS.get(status, status)} {path}" for status, path in changed[:MAX_FILES]]
    if len(changed) > MAX_FILES:
        lines.append(f"  and {len(changed) - MAX_FILES} more")
    return lines
