"""ops/request.py: every rewind's preview and result name the checkpoint it goes to (#N, kind, age, session or
agent, message), the same line in `git rewind`'s text, its `--json`, MCP's answer and the page's (issue 26)."""

from __future__ import annotations

import json
import time

from helpers.workdir import Workdir

from git_rewind.base.note import Note
from git_rewind.base.repo import Repo
from git_rewind.store import store


def _set_created(w: Workdir, seq: int, when: float) -> None:
    """Checkpoint SEQ taken at WHEN, as its note says (what `@{DATE}` and the age read)."""
    repo = Repo.discover(str(w.path))
    commit = next(e["commit"] for e in json.loads(w.ok("list", "--json", "-n", "0")) if e["seq"] == seq)

    def edit(note: Note) -> None:
        note.created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))

    store.update_note(repo, commit, edit)


def test_an_undo_by_date_names_the_checkpoint_it_found_in_its_preview_and_its_result(project: Workdir) -> None:
    w = project
    w.ok("snap", "--session", "s1", "-m", "before the refactor")  # 1, ten minutes ago
    _set_created(w, 1, time.time() - 600)
    w.write("notes.txt", "refactored\n")
    w.ok("snap", "--session", "s1", "-m", "refactored")  # 2, now
    w.write("notes.txt", "broken\n")
    named = "undo to #1 (manual, 10 min ago, session s1): before the refactor"

    dry = w.ok("undo", "@{5 minutes ago}", "--dry-run")
    assert dry.splitlines()[0] == named
    data = json.loads(w.ok("undo", "@{5 minutes ago}", "--dry-run", "--json"))
    target = data["target_checkpoint"]
    assert {k: target[k] for k in ("id", "seq", "kind", "age", "session", "agent", "message", "why")} == {
        "id": "1", "seq": 1, "kind": "manual", "age": "10 min ago", "session": "s1", "agent": None,
        "message": "before the refactor", "why": None}
    assert data["text"].splitlines()[0] == named

    done = w.ok("undo", "@{5 minutes ago}", "--yes")
    assert done.splitlines()[0] == named and "restored #1: 1 written" in done
    assert (w.path / "notes.txt").read_text() == "untracked work\n"

    redone = w.ok("redo", "--yes").splitlines()
    assert redone[0] == "redo: back to #3 (safety checkpoint, just now, session s1): pre-rewind to #1"
    assert (w.path / "notes.txt").read_text() == "broken\n"
    revert = json.loads(w.ok("revert", "1", "--dry-run", "--json"))
    assert revert["text"].splitlines()[0] == "reverting the turn of #1 (manual, 10 min ago, session s1): " \
                                             "before the refactor"
    assert revert["target_checkpoint"]["seq"] == 1
