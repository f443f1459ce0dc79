"""The notes cache (store/notecache.py) behind the one loader of many notes (checkpoints.load_all, load_fetched):
whatever the cache holds, a reader sees exactly what git's notes hold now, as a reader without it does."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.checkpoints import snaps
from helpers.workdir import Workdir

from git_rewind.base import layout
from git_rewind.base.repo import NOTES_REF, REMOTE_PREFIX, Repo
from git_rewind.store import checkpoints, notecache
from git_rewind.store.checkpoints import Checkpoint


def _uncached(repo: Repo, ref: str = NOTES_REF) -> list[Checkpoint]:
    """What `git notes list` and one cat-file give, with no cache anywhere: the oracle."""
    return checkpoints.read_listed(repo, repo.git(["notes", "--ref", ref, "list"]))


def _facts(items: list[Checkpoint]) -> list[tuple[Any, ...]]:
    """Everything a reader reads of each checkpoint, its note whole."""
    return [(c.commit, c.note_blob, c.source, c.seq, c.session, c.worktree, c.safety, c.time, c.label,
             c.note.to_json(), c.note.safety, c.note.worktree) for c in items]


def _cache_file(w: Workdir, name: str = layout.NOTES_CACHE) -> Path:
    return w.path / ".git" / "rewind" / name


def _git_processes(w: Workdir, read: Any) -> tuple[Any, int]:
    """READ() run with GIT_TRACE2_EVENT on: (its result, how many git processes it started)."""
    trace = w.path.parent / "trace.json"
    trace.unlink(missing_ok=True)
    os.environ["GIT_TRACE2_EVENT"] = str(trace)
    try:
        result = read()
    finally:
        del os.environ["GIT_TRACE2_EVENT"]
    events = [json.loads(line) for line in trace.read_text().splitlines()] if trace.exists() else []
    return result, sum(1 for e in events if e.get("event") == "start")


def test_a_second_read_runs_no_git_process_and_reads_the_same(project: Workdir) -> None:
    snaps(project, 4)
    repo = Repo.discover(str(project.path))
    first, ran = _git_processes(project, lambda: checkpoints.load_all(repo))
    assert ran >= 2 and _cache_file(project).exists()
    again, ran = _git_processes(project, lambda: checkpoints.load_all(repo))
    assert ran == 0  # the notes ref is where the cache saw it: nothing to ask git
    assert [c.seq for c in again] == [1, 2, 3, 4] and all(c._note is None for c in again)  # built when asked for
    assert _facts(again) == _facts(first) == _facts(_uncached(repo))


def test_a_changed_note_is_seen_at_once_and_only_what_changed_is_read(project: Workdir) -> None:
    snaps(project, 5)
    repo = Repo.discover(str(project.path))
    checkpoints.load_all(repo)
    project.ok("tag", "2", "keep-me")  # update_note: a new blob for #2's note
    project.git("notes", "--ref", "rewind", "remove", checkpoints.load_all(repo)[3].commit)  # #4's note gone
    project.write("notes.txt", "more\n")
    project.ok("snap", "-m", "six")
    items, ran = _git_processes(project, lambda: checkpoints.load_all(repo))
    assert [c.seq for c in items] == [1, 2, 3, 5, 6] and items[1].note.tags == ["keep-me"]
    assert _facts(items) == _facts(_uncached(repo))
    assert ran == 3  # cat-file --batch-check (the ref's tree), diff-tree from the cached tree, cat-file of 2 notes
    cached = notecache.read(repo, layout.NOTES_CACHE)[NOTES_REF]  # only the notes the ref holds now: bounded
    assert sorted(entry[0] for entry in cached.entries) == sorted(c.note_blob for c in items)


def test_a_note_that_is_not_ours_is_left_out_cached_or_not(project: Workdir) -> None:
    snaps(project, 2)
    project.git("notes", "--ref", "rewind", "add", "-m", "just a comment", "HEAD")
    repo = Repo.discover(str(project.path))
    assert [c.seq for c in checkpoints.load_all(repo)] == [c.seq for c in checkpoints.load_all(repo)] == [1, 2]


def test_a_torn_corrupt_or_foreign_cache_file_is_ignored_and_written_anew(project: Workdir) -> None:
    snaps(project, 3)
    repo = Repo.discover(str(project.path))
    checkpoints.load_all(repo)
    whole = _cache_file(project).read_bytes()
    header, _, body = whole.partition(b"\n")
    flipped = bytearray(whole)
    flipped[-5] ^= 0x20  # one bit of a note's text: the checksum no longer matches
    lying = json.dumps({NOTES_REF: [repo.read_ref(NOTES_REF), "0" * 40, [["0" * 40, "0" * 40, None, None]]]}).encode()
    for bad in (whole[: len(whole) // 2], bytes(flipped), b"not a cache at all\n{}",
                header.replace(b"notes cache 4.", b"notes cache 9.") + b"\n" + body,  # another version's format
                b"git-rewind notes cache " + header.split(b" ")[3] + b" %d 0 0\n" % len(lying) + lying):
        _cache_file(project).write_bytes(bad)
        assert notecache.read(repo, layout.NOTES_CACHE) == {}
        assert _facts(checkpoints.load_all(repo)) == _facts(_uncached(repo))
        assert notecache.read(repo, layout.NOTES_CACHE) != {}  # and the next reader finds it whole again


def test_a_cached_tree_git_no_longer_has_falls_back_to_reading_the_whole_listing(project: Workdir) -> None:
    snaps(project, 3)
    repo = Repo.discover(str(project.path))
    checkpoints.load_all(repo)
    listed = notecache.read(repo, layout.NOTES_CACHE)[NOTES_REF]
    listed.commit, listed.tree = "1" * 40, "2" * 40  # as after a purge pruned the tree the cache was read at
    notecache.write(repo, layout.NOTES_CACHE, {NOTES_REF: listed})
    assert _facts(checkpoints.load_all(repo)) == _facts(_uncached(repo))


def test_two_processes_writing_at_once_leave_a_usable_cache(project: Workdir) -> None:
    snaps(project, 6)
    repo = Repo.discover(str(project.path))
    read = ("import sys; from git_rewind.base.repo import Repo; from git_rewind.store import checkpoints\n"
            "for _ in range(8):\n"
            "    checkpoints.load_all(Repo.discover(sys.argv[1]))\n")
    for _round in range(3):
        _cache_file(project).unlink(missing_ok=True)
        readers = [subprocess.Popen([sys.executable, "-c", read, str(project.path)], env=project.env)
                   for _ in range(4)]
        project.write("notes.txt", f"round {_round}\n")
        project.ok("snap", "-m", f"while they read {_round}")  # the notes ref moves under them
        assert [r.wait(timeout=120) for r in readers] == [0, 0, 0, 0]
        assert notecache.read(repo, layout.NOTES_CACHE) != {}  # one whole file, whoever wrote last
        assert _facts(checkpoints.load_all(repo)) == _facts(_uncached(repo))
    assert [name for name in os.listdir(project.path / ".git" / "rewind") if ".git-rewind-" in name] == []


def test_purge_text_takes_it_out_of_the_cache_too(project: Workdir) -> None:
    secret = 'hunter2 "pässwörd"'  # escaped in JSON both ways: \" and \u00e4
    project.write("notes.txt", "one\n")
    project.ok("snap", "-m", f"deploy with {secret}")
    project.write("notes.txt", "two\n")
    project.ok("snap", "-m", "two")
    project.ok("list")  # the cache now holds the note
    forms = [secret.encode(), json.dumps(secret)[1:-1].encode(), json.dumps(secret, ensure_ascii=False)[1:-1].encode()]

    def held() -> list[str]:
        return [str(path) for path in (project.path / ".git" / "rewind").rglob("*") if path.is_file()
                and any(form in path.read_bytes() for form in forms)]

    assert str(_cache_file(project)) in held()
    project.ok("purge", "--text", secret)
    assert held() == []
    assert "deploy with [PURGED]" in project.ok("list")
    assert held() == []


def test_purge_of_a_text_no_checkpoint_holds_any_more_drops_the_cache_that_still_does(project: Workdir) -> None:
    secret = 'tok"én-7f3a9'  # the cache holds it as JSON writes it: tok\"\u00e9n-7f3a9
    escaped = json.dumps(secret)[1:-1].encode()
    project.write("notes.txt", "one\n")
    project.ok("snap", "-m", "one")
    repo = Repo.discover(str(project.path))
    (item,) = checkpoints.load_all(repo)
    note = project.git("notes", "--ref", "rewind", "show", item.commit)
    with_prompt = json.dumps({**json.loads(note), "prompt": f"use {secret}"})
    project.git("notes", "--ref", "rewind", "add", "-f", "-m", with_prompt, item.commit)  # the prompt had it
    assert checkpoints.load_all(repo)[0].note.prompt == f"use {secret}"
    project.git("notes", "--ref", "rewind", "add", "-f", "-m", note, item.commit)  # and no note has it now
    assert escaped in _cache_file(project).read_bytes()  # until the next read (purge's own) writes it again
    project.ok("purge", "--text", secret)
    assert not _cache_file(project).exists() or escaped not in _cache_file(project).read_bytes()


def _fetched(project: Workdir, machine: str) -> None:
    """A fetched copy, as `fetch` keeps one: a notes ref under refs/notes/rewind-remote/ (here, our own notes)."""
    project.git("update-ref", f"{REMOTE_PREFIX}origin/{machine}", NOTES_REF)


def test_fetched_copies_read_through_one_cache_for_every_machine(project: Workdir) -> None:
    project.git("remote", "add", "origin", "https://example.com/team.git")
    snaps(project, 3)
    _fetched(project, "ada")
    project.write("notes.txt", "more\n")
    project.ok("snap", "-m", "four")
    _fetched(project, "bob")
    repo = Repo.discover(str(project.path))
    uncached = []
    for machine in ("ada", "bob"):
        for item in _uncached(repo, f"{REMOTE_PREFIX}origin/{machine}"):
            item.source = f"origin/{machine}"
            uncached.append(item)
    uncached.sort(key=lambda c: (c.time, c.source or "", c.seq))
    first, ran = _git_processes(project, lambda: checkpoints.load_fetched(repo, "origin"))
    assert ran == 4  # for-each-ref, the refs' trees, one diff-tree for both, one cat-file: not two per machine
    assert len(first) == 7 and _facts(first) == _facts(uncached)
    again, ran = _git_processes(project, lambda: checkpoints.load_fetched(repo, "origin"))
    assert ran == 1 and _facts(again) == _facts(first)  # for-each-ref alone
    assert [c.ident for c in again if c.seq == 4] == ["origin/bob/4"]
    assert _facts(checkpoints.load_fetched(repo, source="origin/ada")) == [f for f in _facts(first)
                                                                          if f[2] == "origin/ada"]
    project.git("update-ref", "-d", f"{REMOTE_PREFIX}origin/ada")  # `gc --remote`, one machine
    assert [c.source for c in checkpoints.load_fetched(repo)] == ["origin/bob"] * 4
    assert set(notecache.read(repo, layout.FETCHED_NOTES_CACHE)) == {f"{REMOTE_PREFIX}origin/bob"}


def test_list_shows_exactly_what_it_showed_without_the_cache(project: Workdir) -> None:
    project.git("remote", "add", "origin", "https://example.com/team.git")
    snaps(project, 4)
    project.ok("undo", "2", "--yes")  # a safety checkpoint: hidden unless --safety
    project.ok("tag", "3", "good")
    _fetched(project, "ada")
    shown = {}
    for cached in (False, True, True):
        if not cached:
            for name in (layout.NOTES_CACHE, layout.FETCHED_NOTES_CACHE):
                _cache_file(project, name).unlink(missing_ok=True)
        runs = [project.ok("list", *args, env={"COLUMNS": "200"}) for args in (
            (), ("-n", "0", "--safety"), ("--json", "-n", "0", "--safety"), ("--remote", "origin", "-n", "0"),
            ("--remote", "origin", "--json", "-n", "0", "--safety"), ("--grep", "v1"))]
        # ages tick between runs, and the age column's width with them
        shown[cached] = [re.sub(r" +", " ", re.sub(r"\d+[smhd] ago", "AGE", run)) for run in runs]
    assert shown[True] == shown[False]
    assert "#3" in shown[True][0] and "hidden" in shown[True][0]


def test_the_page_rows_are_the_same_from_the_cache(project: Workdir) -> None:
    from git_rewind.faces.web.listing import View

    snaps(project, 5)
    project.ok("tag", "4", "good")
    repo = Repo.discover(str(project.path))
    _cache_file(project).unlink(missing_ok=True)
    pages = []
    for _ in range(2):
        view = View("key", checkpoints.load_all(repo), repo.worktree)
        pages.append((view.encoded(range(len(view.rows))), view.encoded_sessions()))
    assert pages[0] == pages[1] and b'"good"' in pages[1][0]


def test_a_long_lived_process_reads_without_freezing_what_is_alive(project: Workdir,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A command freezes what it read (gc.freeze: never walked again); the daemon and the page's server, which
    read notes again and again, must not: each freeze would keep the cyclic garbage made before it for good."""
    import gc

    snaps(project, 3)
    repo = Repo.discover(str(project.path))
    monkeypatch.setattr(checkpoints, "LONG_LIVED", True)
    gc.unfreeze()
    try:
        for _ in range(3):
            Path(repo.store_dir, layout.NOTES_CACHE).unlink(missing_ok=True)  # a whole read each time
            assert [c.seq for c in checkpoints.with_notes(checkpoints.load_all(repo))] == [1, 2, 3]
        assert gc.get_freeze_count() == 0 and gc.isenabled()
        monkeypatch.setattr(checkpoints, "LONG_LIVED", False)
        checkpoints.load_all(repo)
        assert gc.get_freeze_count() > 0  # a command's read does freeze: the test would see a change
    finally:
        gc.unfreeze()


def test_in_the_daemon_a_moved_notes_ref_is_read_in_process_as_git_reads_it(project: Workdir,
                                                                              git_environ: dict[str, str]) -> None:
    """Where objects are read in process (objects.reader: the daemon), the notes added, changed and removed
    since the cache are found by pygit2 (no cat-file, no diff-tree): the same checkpoints as git's listing."""
    from git_rewind.base import objects

    snaps(project, 3)
    repo = Repo.discover(str(project.path))
    checkpoints.load_all(repo)  # the cache, at the notes ref's commit now
    snaps(project, 2)
    project.git("notes", "--ref=rewind", "remove", project.git("rev-parse", "refs/rewind/s~1").strip())
    objects.in_process(True)
    try:
        read, ran = _git_processes(project, lambda: checkpoints.load_all(repo))
    finally:
        objects.close()
    assert ran == 0
    assert [c.seq for c in read] == [1, 2, 3, 5]
    assert _facts(read) == _facts(_uncached(repo))
