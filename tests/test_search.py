"""Finding checkpoints: `list --grep/--path/--tag/--agent/--since/--until`, `@{DATE}` ids, `tag`, and the
MCP list's filters, on real repositories; git's own log and date parser are the oracles."""

from __future__ import annotations

import calendar
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.workdir import REWIND, Workdir

from git_rewind.base.note import Note, Oid
from git_rewind.base.repo import Repo
from git_rewind.ops import search
from git_rewind.store import store
from git_rewind.store.checkpoints import Checkpoint


def _item(seq: int, session: str = "s", tags: list[str] | None = None, agent: str | None = None,
          message: str = "", prompt: str | None = None, summary: Any = None) -> Checkpoint:
    note = Note(seq, session, "2026-11-22T10:00:00Z", tags=tags or [], agent=agent, message=message, prompt=prompt,
                summary=summary)
    return Checkpoint(Oid(f"{seq:040x}"), note, Oid("0" * 40))


ITEMS = [
    _item(1, "session-one", agent="claude-code", message="before Edit src/app.py", prompt="Fix the Login bug"),
    _item(2, "session-two", ["x"], agent="codex", message="prompt", summary={"done": "Refactored the PARSER"}),
    _item(5, "session-one", ["x", "y"], message="by hand"),
    _item(12, "session-one", agent="claude-code", message="turn end"),
]
NO_REPO: Any = None  # select reads nothing from git without dates or paths


def seqs(items: list[Checkpoint]) -> list[int]:
    return [c.seq for c in items]


@pytest.mark.parametrize(("query", "expected"), [
    (search.Query(), [1, 2, 5, 12]),
    (search.Query(session="session-o"), [1, 5, 12]),  # the start of a session, as `list` shows them cut
    (search.Query(tags=["x"]), [2, 5]),
    (search.Query(tags=["x", "y"]), [5]),  # every tag
    (search.Query(agent="CLAUDE-code"), [1, 12]),
    (search.Query(agent="manual"), [5]),  # taken by hand: no agent
    (search.Query(text=["login"]), [1]),  # the prompt, any case
    (search.Query(text=["parser"]), [2]),  # the summary
    (search.Query(text=["turn end", "by hand"]), [5, 12]),  # any of several, as git log --grep
    (search.Query(text=["x"], tags=["x"]), []),  # every filter must hold
    (search.Query(session="session-one", tags=["y"], text=["hand"]), [5]),
])
def test_select_narrows_by_every_filter_given(query: search.Query, expected: list[int]) -> None:
    assert seqs(search.select(NO_REPO, ITEMS, query)) == expected


def _taken(w: Workdir, path: str, text: str, message: str, session: str = "s") -> None:
    w.write(path, text)
    w.ok("snap", "--session", session, "-m", message)


def _listed(w: Workdir, *args: str, cwd: Path | None = None) -> list[int]:
    out = w.rewind("list", "--json", "-n", "0", *args, cwd=cwd)
    assert out.returncode == 0, out.stderr
    return [entry["seq"] for entry in json.loads(out.stdout)]


def _git_diff(w: Workdir, *pathspecs: str, cwd: Path | None = None) -> set[str]:
    """The checkpoints git's own diff, one checkpoint at a time, says changed what PATHSPECS match since the
    checkpoint before them in the work tree, whichever session took it (the first: since HEAD then)."""
    entries = sorted(json.loads(w.ok("list", "--json", "-n", "0")), key=lambda e: e["seq"])
    found: set[str] = set()
    last: str | None = None
    for entry in entries:
        base = last or entry["head"]
        out = subprocess.run(["git", "diff", "--name-only", "--no-renames", base, entry["commit"], "--", *pathspecs],
                             cwd=cwd or w.path, env=w.env, capture_output=True, text=True, check=True)
        if out.stdout.strip():
            found.add(entry["commit"])
        last = entry["commit"]
    return found


def _commits(w: Workdir, seqs_: list[int]) -> set[str]:
    listed = {e["seq"]: e["commit"] for e in json.loads(w.ok("list", "--json", "-n", "0"))}
    return {listed[s] for s in seqs_}


def test_path_takes_git_pathspecs_from_the_current_directory_as_git_log_does(project: Workdir) -> None:
    w = project
    _taken(w, "src/app.py", "v1\n", "app one")  # 1
    _taken(w, "docs/guide.md", "guide\n", "docs", session="t")  # 2, another session
    _taken(w, "src/util/helpers.py", "h\n", "helpers")  # 3
    _taken(w, "README.txt", "top\n", "readme", session="t")  # 4
    (w.path / "src" / "app.py").unlink()
    w.ok("snap", "--session", "s", "-m", "app deleted")  # 5: a deletion is a change
    every = [int(e["seq"]) for e in json.loads(w.ok("list", "--json", "-n", "0"))]
    assert len(every) == 5
    src = w.path / "src"
    cases: list[tuple[tuple[str, ...], Path]] = [
        (("src/app.py",), w.path), (("*.py",), w.path), (("src",), w.path), (("docs", "README.txt"), w.path),
        (("app.py",), src), ((":(top)docs",), src), (("*.md",), w.path), ((":(exclude)src",), w.path),
        (("util/",), src), (("nothing/here",), w.path),
    ]
    for specs, cwd in cases:
        listed = _listed(w, *[a for spec in specs for a in ("--path", spec)], cwd=cwd)
        assert _commits(w, listed) == _git_diff(w, *specs, cwd=cwd), (specs, cwd)
    assert sorted(_listed(w, "--path", "src/app.py")) == [1, 5]  # not 2: a session's first compares with #1
    assert sorted(_listed(w, "--path", "*.md", "--session", "t")) == [2]
    bad = w.rewind("list", "--path", ":(nonsense)x")
    assert bad.returncode != 0 and bad.stderr.startswith("error: --path: ") and len(bad.stderr.splitlines()) == 1


def _set_created(w: Workdir, seq: int, stamp: str) -> None:
    repo = Repo.discover(str(w.path))
    commit = next(e["commit"] for e in json.loads(w.ok("list", "--json", "-n", "0")) if e["seq"] == seq)

    def edit(note: Note) -> None:
        note.created = stamp

    store.update_note(repo, commit, edit)


def _git_date(w: Workdir, text: str) -> int:
    """What git's own date parser makes of TEXT (`rev-parse --since` prints it as --max-age)."""
    return int(w.git("rev-parse", f"--since={text}").strip().removeprefix("--max-age="))


def test_since_and_until_and_at_date_read_dates_as_git_does(project: Workdir) -> None:
    w = project
    for i in range(4):
        _taken(w, "notes.txt", f"v{i}\n", f"v{i}")
    now = time.time()
    # Each a minute or more from the boundaries asked below ("3 days ago" is read twice, by the test's git and
    # by git rewind's, a moment apart: a checkpoint on the boundary itself would fall on either side).
    stamps = {1: now - 3 * 86400 + 120, 2: now - 26 * 3600, 3: now - 2 * 3600 - 60}  # 4 is now
    for seq, when in stamps.items():
        _set_created(w, seq, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when)))
    created = {e["seq"]: calendar.timegm(time.strptime(e["created"], "%Y-%m-%dT%H:%M:%SZ"))
               for e in json.loads(w.ok("list", "--json", "-n", "0"))}
    assert created[1] < created[2] < created[3] < created[4]
    for since in ("2 hours ago", "yesterday", "3 days ago", "2.days.ago", "4 days ago", "1 minute ago"):
        cut = _git_date(w, since)
        assert _listed(w, "--since", since) == [s for s in (4, 3, 2, 1) if created[s] >= cut], since
    assert _listed(w, "--until", "2 hours ago") == [3, 2, 1]
    assert _listed(w, "--since", "2 days ago", "--until", "1 hour ago") == [3, 2]
    for bad in ("soon-ish", "never"):
        run = w.rewind("list", "--since", bad)
        assert run.returncode != 0 and "not a date" in run.stderr and len(run.stderr.splitlines()) == 1, bad

    def shown(ident: str) -> int:
        return int(json.loads(w.ok("show", ident, "--json"))["seq"])

    assert shown("@{1 hour ago}") == 3
    assert shown("@{25 hours ago}") == 2
    assert shown("@{now}") == 4
    old = w.rewind("show", "@{1 week ago}")
    assert old.returncode != 0 and "no checkpoint at or before 1 week ago" in old.stderr
    assert len(old.stderr.splitlines()) == 1
    w.write("notes.txt", "changed since\n")
    before = w.user_state()
    plan = w.ok("undo", "@{25 hours ago}", "--dry-run")
    assert "notes.txt" in plan and w.user_state() == before  # a dry run: the plan of going back to #2
    w.ok("undo", "@{25 hours ago}", "--yes")
    assert (w.path / "notes.txt").read_text() == "v1\n"


def test_tag_adds_and_removes_tags_in_the_note_and_list_finds_them(project: Workdir) -> None:
    w = project
    _taken(w, "a.txt", "a\n", "first")
    _taken(w, "b.txt", "b\n", "second")
    note_before = json.loads(w.ok("show", "1", "--json"))
    assert w.ok("tag", "1", "good", "reviewed", "good") == "#1 tags: good reviewed\n"
    assert w.ok("tag", "1") == "good\nreviewed\n"
    assert _listed(w, "--tag", "good") == [1]
    assert _listed(w, "--tag", "good", "--tag", "reviewed") == [1]
    assert "tags:       good reviewed" in w.ok("show", "1")
    after = json.loads(w.ok("show", "1", "--json"))
    assert {k: v for k, v in after.items() if k != "tags"} == {k: v for k, v in note_before.items() if k != "tags"}
    assert w.ok("tag", "-d", "1", "good") == "#1 tags: reviewed\n"
    for args, error in ((("-d", "1", "good"), "#1 has no tag good (its tags: reviewed)"),
                        (("1", "two words"), "not a tag: 'two words'"),
                        (("99", "x"), "unknown checkpoint: 99")):
        notes_before = w.git("rev-parse", "refs/notes/rewind")
        run = w.rewind("tag", *args)
        assert run.returncode != 0 and error in run.stderr and len(run.stderr.splitlines()) == 1, args
        assert w.git("rev-parse", "refs/notes/rewind") == notes_before  # nothing written
    notes_before = w.git("rev-parse", "refs/notes/rewind")
    w.ok("tag", "1", "reviewed")  # already there: the note is not written again
    assert w.git("rev-parse", "refs/notes/rewind") == notes_before
    # git's own view: the note in refs/notes/rewind holds the tags
    commit = after["commit"]
    assert json.loads(w.git("notes", "--ref=rewind", "show", commit))["tags"] == ["reviewed"]


def test_tags_written_at_once_by_many_processes_are_all_kept(project: Workdir) -> None:
    w = project
    _taken(w, "a.txt", "a\n", "first")
    procs = [subprocess.Popen([*REWIND, "tag", "1", f"t{i}"], cwd=w.path, env=w.env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for i in range(6)]
    for proc in procs:
        assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    assert sorted(w.ok("tag", "1").split()) == [f"t{i}" for i in range(6)]


def test_mcp_checkpoint_list_takes_the_same_filters(project: Workdir) -> None:
    from helpers.mcpclient import session

    w = project
    _taken(w, "src/app.py", "v1\n", "app one")
    _taken(w, "docs/guide.md", "guide\n", "the docs")
    w.ok("tag", "2", "docs")
    seen: dict[str, Any] = {}

    def story(call: Any) -> None:
        seen["path"] = call("checkpoint_list", path=["docs"])
        seen["grep"] = call("checkpoint_list", grep="APP")
        seen["tag"] = call("checkpoint_list", tags=["docs"], since="1 hour ago")
        seen["none"] = call("checkpoint_list", until="2 days ago")
        seen["bad"] = call("checkpoint_list", since="whenever")

    session(w, story)
    assert [c["seq"] for c in seen["path"].data["checkpoints"]] == [2]
    assert [c["seq"] for c in seen["grep"].data["checkpoints"]] == [1]
    assert [c["seq"] for c in seen["tag"].data["checkpoints"]] == [2]
    assert seen["none"].data["checkpoints"] == [] and "no checkpoints matching --until" in seen["none"].text
    assert seen["bad"].error and "not a date" in seen["bad"].text


# safety checkpoints -------------------------------------------------------------------------------


def test_list_leaves_the_safety_checkpoints_out_unless_asked(project: Workdir) -> None:
    """Every undo and redo takes a safety checkpoint first: a third of a busy list. `list` leaves them out and
    says how many; --safety shows them; their ids work all the same."""
    w = project
    _taken(w, "notes.txt", "one\n", "one")
    _taken(w, "notes.txt", "two\n", "two")
    w.ok("undo", "1", "--yes")  # #3, pre-rewind
    w.ok("redo", "--yes")  # #4, pre-redo
    assert _listed(w) == [2, 1]
    assert _listed(w, "--safety") == [4, 3, 2, 1]
    rows = w.ok("list").splitlines()
    assert [row.split()[0] for row in rows[1:-1]] == ["#2", "#1"]
    assert rows[-1] == "(2 safety checkpoints hidden; --safety shows them)"
    assert "hidden" not in w.ok("list", "--safety")
    assert json.loads(w.ok("show", "3", "--json"))["trigger"] == "pre-rewind"  # still named by its id
    # Only the ones every other filter matches are counted.
    assert w.ok("list", "--grep", "two").splitlines()[-1].startswith("#2 ")
    assert w.ok("list", "--grep", "to #1").strip() == \
        "no checkpoints matching --grep 'to #1' (1 safety checkpoint hidden; --safety shows them)"
    assert _listed(w, "--grep", "to #1", "--safety") == [3]

