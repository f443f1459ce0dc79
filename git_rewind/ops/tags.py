"""Tags added to and removed from a checkpoint after it was taken; they live in its note (`tags`)."""

from __future__ import annotations

from ..base.errors import RewindError
from ..base.repo import Repo
from ..store.checkpoints import Checkpoint
from ..store.store import update_note

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..base.note import Note


def check(names: Sequence[str]) -> list[str]:
    """NAMES as tags: no empty ones, no whitespace or commas (a row shows them space-separated)."""
    for name in names:
        if not name or any(c.isspace() for c in name) or "," in name or len(name) > 100:
            raise RewindError(f"not a tag: {name!r} (a word of at most 100 characters, without spaces or commas)")
    return list(dict.fromkeys(names))


def _own(item: Checkpoint) -> None:
    """Tags go on this repository's checkpoints: a fetched one is another machine's, read-only here."""
    if item.source is not None:
        raise RewindError(f"{item.ident} was fetched from another machine: only its own machine tags it")


def add(repo: Repo, item: Checkpoint, names: Sequence[str]) -> Checkpoint:
    """ITEM with NAMES among its tags (those it has already are left as they are)."""
    wanted = check(names)
    _own(item)

    def edit(note: Note) -> None:
        note.tags = note.tags + [t for t in wanted if t not in note.tags]

    item.note = update_note(repo, item.commit, edit, "tagged " + " ".join(wanted))
    return item


def remove(repo: Repo, item: Checkpoint, names: Sequence[str]) -> Checkpoint:
    """ITEM without NAMES among its tags; a name it does not carry is an error, and nothing changes."""
    unwanted = check(names)
    _own(item)
    missing = [t for t in unwanted if t not in item.note.tags]
    if missing:
        raise RewindError(f"#{item.seq} has no tag {', '.join(missing)}"
                          + (f" (its tags: {' '.join(item.note.tags)})" if item.note.tags else " (it has none)"))

    def edit(note: Note) -> None:
        note.tags = [t for t in note.tags if t not in unwanted]

    item.note = update_note(repo, item.commit, edit, "untagged " + " ".join(unwanted))
    return item
