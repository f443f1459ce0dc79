"""The commits' authorship notes (refs/notes/rewind-authorship) through a remote, beside the checkpoints.

The notes are about the person's own commits, which the team shares anyway, so the remote keeps one
`refs/notes/rewind-authorship` for everyone. A push (sync.py) fetches it, lays this clone's notes over
it here (`copy_over`: prompts and every other typed text redacted as the checkpoints' notes are, by
share.redacted_json) and pushes the result as a fast-forward of what it fetched (a rejection: fetch and
lay again, a bounded number of times). A fetch lets in the notes of commits this clone has no note for
(`let_in`: its own notes win), each checked to be an authorship note about a commit that is here; one
bad note and nothing is let in.
"""

from __future__ import annotations

import json
import time

from ..base.errors import RewindError
from ..base.repo import SCRATCH_SHARE
from ..store.authorship import NOTES_REF, Authorship

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..base.repo import Repo

# Authorship note fields that are structure, not text anyone typed.
STRUCTURE = frozenset({"origin", "checkpoint", "model", "authors", "files"})


def notes_of(repo: Repo, commit: str | None) -> dict[str, str]:
    """The notes in notes commit COMMIT: annotated commit → note blob."""
    if commit is None:
        return {}
    found = {}
    for row in repo.git(["ls-tree", "-r", "-z", commit]).split(b"\0"):
        if row:
            meta, _, path = row.partition(b"\t")
            found[path.replace(b"/", b"").decode()] = meta.split()[2].decode()
    return found


def redacted(text: bytes) -> bytes:
    """One note as the remote gets it."""
    from .share import redacted_json

    data, _found = redacted_json(json.loads(text), STRUCTURE)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def copy_over(repo: Repo, theirs_tip: str | None) -> tuple[str | None, int]:
    """The notes commit to push on top of the remote's THEIRS_TIP (None: it has none): this clone's notes,
    redacted, laid over the remote's; and how many it did not have so (0, and no commit: nothing to push)."""
    from ..base.gitcmd import cat_file

    ours = notes_of(repo, repo.read_ref(NOTES_REF))
    if not ours:
        return None, 0
    contents = dict(zip(ours, cat_file(list(ours.values()), repo.root), strict=True))
    theirs = notes_of(repo, theirs_tip)
    held = dict(zip(theirs, cat_file(list(theirs.values()), repo.root), strict=True))
    new = {}
    for commit, found in contents.items():
        if found is None:
            continue
        copy = redacted(found[1])
        if (held.get(commit) or ("", b""))[1] != copy:
            new[commit] = copy
    if not new:
        return None, 0
    return _notes_commit(repo, theirs_tip, new), len(new)


def _notes_commit(repo: Repo, parent: str | None, notes: dict[str, bytes]) -> str:
    """A notes commit on top of PARENT with NOTES (commit → content) set."""
    from ..base.gitcmd import FastImport

    with FastImport(repo.root) as fi:
        fi.commit(SCRATCH_SHARE, b"authorship notes\n", int(time.time()), mark=1, parents=[parent] if parent else [])
        for commit, text in notes.items():
            fi.write(b"N inline " + commit.encode() + b"\n")
            fi.data(text)
        fi.write(b"\n")
        made = fi.get_mark(1)
        fi.reset(SCRATCH_SHARE)
    return made


def let_in(repo: Repo, fetched_tip: str, where: str) -> int:
    """Add the notes of FETCHED_TIP (the remote's notes commit, fetched from WHERE) about commits here that have
    none; how many. Each is checked first: one that is not an authorship note and nothing is let in."""
    from ..base.gitcmd import FastImport, cat_file

    theirs = notes_of(repo, fetched_tip)
    local_tip = repo.read_ref(NOTES_REF)
    ours = notes_of(repo, local_tip)
    wanted = [c for c in theirs if c not in ours]
    kinds = cat_file(wanted, repo.root) if wanted else []
    here = [c for c, kind in zip(wanted, kinds, strict=True) if kind is not None and kind[0] == "commit"]
    bodies = cat_file([theirs[c] for c in here], repo.root)
    for commit, body in zip(here, bodies, strict=True):
        try:
            if body is None or body[0] != "blob":
                raise ValueError("not a blob")
            data = json.loads(body[1])
            if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
                raise ValueError("no files")
            Authorship.from_json(data)
        except ValueError:
            raise RewindError(f"{where}: the authorship note of {commit[:12]} is not one; no authorship "
                              "note was fetched") from None
    if not here:
        return 0
    with FastImport(repo.root) as fi:
        fi.commit(SCRATCH_SHARE, b"authorship notes fetched\n", int(time.time()), mark=1,
                  parents=[local_tip] if local_tip else [])
        for commit in here:
            fi.write(b"N " + theirs[commit].encode() + b" " + commit.encode() + b"\n")
        fi.write(b"\n")
        made = fi.get_mark(1)
        fi.reset(SCRATCH_SHARE)
    repo.move_refs({NOTES_REF: made}, {NOTES_REF: local_tip})
    return len(here)
