"""`git rewind snap`: checkpoints as commits on refs/rewind/<session> with JSON notes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from helpers.session import BIG, Agent, chain
from helpers.workdir import Workdir


def test_snap_captures_tracked_and_untracked_but_not_ignored(project: Workdir) -> None:
    before = project.user_state()
    out = project.ok("snap", "-m", "first")
    assert out.startswith("#1 ") and out.rstrip().endswith("first")
    tree = project.tree_of("refs/rewind/manual")
    assert tree == project.add_all_tree()
    files = project.git("ls-tree", "-r", "--name-only", "refs/rewind/manual").split()
    assert "notes.txt" in files and "src/app.py" in files
    assert not any(f.startswith("node_modules") or f in ("debug.log", ".env") for f in files)
    assert project.user_state() == before
    project.fsck()


def test_note_is_json_readable_by_git_notes(project: Workdir) -> None:
    project.ok("snap", "-m", "with note", "--agent", "claude-code", "--trigger", "PreToolUse",
               "--tool", "Edit", "--tag", "a", "--tag", "b", "--session", "s1")
    note = json.loads(project.git("notes", "--ref=rewind", "show", "refs/rewind/s1"))
    assert note["seq"] == 1 and note["session"] == "s1" and note["agent"] == "claude-code"
    assert note["trigger"] == "PreToolUse" and note["tool"] == "Edit" and note["tags"] == ["a", "b"]
    assert note["message"] == "with note" and note["branch"] == "main"
    assert note["head"] == project.git("rev-parse", "HEAD").strip()
    assert note["created"].endswith("Z")
    assert "notes.txt" in note["paths"]  # changed relative to HEAD
    log = project.git("log", "--format=%s", "refs/rewind/s1")
    assert log.strip() == "#1 with note"


def test_unchanged_tree_makes_no_checkpoint_unless_allowed(project: Workdir) -> None:
    project.ok("snap")
    assert project.ok("snap").strip() == "unchanged since #1"
    assert project.git("rev-list", "--count", "refs/rewind/manual").strip() == "1"
    out = project.ok("snap", "--allow-empty", "-m", "again")
    assert out.startswith("#2 ")
    assert project.git("rev-list", "--count", "refs/rewind/manual").strip() == "2"


def test_a_message_or_tag_on_an_unchanged_tree_is_a_checkpoint_of_its_own(project: Workdir) -> None:
    """`snap -m MSG --tag T` names this moment: with nothing changed it is still recorded (the same
    tree as the newest checkpoint, under its own number), and says so; a bare `snap` stays a no-op."""
    project.ok("snap", "-m", "first")
    out = project.ok("snap", "-m", "before the refactor", "--tag", "milestone").strip()
    assert out.startswith("#2 ") and out.endswith("before the refactor (same tree as #1)")
    note = json.loads(project.git("notes", "--ref=rewind", "show", "refs/rewind/manual"))
    assert note["message"] == "before the refactor" and note["tags"] == ["milestone"]
    assert project.tree_of("refs/rewind/manual") == project.tree_of("refs/rewind/manual~1")
    assert project.ok("snap", "--tag", "reviewed", "--path", "src/app.py").startswith("#3 ")  # the named-path way
    tags = json.loads(project.git("notes", "--ref=rewind", "show", "refs/rewind/manual"))["tags"]
    assert tags == ["reviewed"]
    assert project.ok("snap").strip() == "unchanged since #3"
    assert project.ok("snap", "--path", "src/app.py").strip() == "unchanged since #3"
    assert project.git("rev-list", "--count", "refs/rewind/manual").strip() == "3"


def test_sessions_chain_and_share_one_sequence(project: Workdir) -> None:
    project.ok("snap", "--session", "a")
    project.write("notes.txt", "more\n")
    project.ok("snap", "--session", "b")
    project.write("notes.txt", "again\n")
    out = project.ok("snap", env={"GIT_REWIND_SESSION": "a"})
    assert out.startswith("#3 ")
    chain = project.git("log", "--format=%s", "refs/rewind/a").splitlines()
    assert [c.split()[0] for c in chain] == ["#3", "#1"]
    parent = project.git("rev-parse", "refs/rewind/a^").strip()
    first = project.git("log", "--format=%H", "--reverse", "refs/rewind/a").split()[0]
    assert parent == first


def test_json_output_is_the_note_with_commit(project: Workdir) -> None:
    data = json.loads(project.ok("snap", "--json", "-m", "j"))
    assert data["commit"] == project.git("rev-parse", "refs/rewind/manual").strip()
    assert data["seq"] == 1 and data["message"] == "j"
    again = json.loads(project.ok("snap", "--json"))
    assert again == {"unchanged": True, "seq": 1, "commit": data["commit"]}


def test_summary_from_stdin_is_stored(project: Workdir) -> None:
    project.ok("snap", "--summary", "-", input='{"done": "x", "next": "y"}')
    note = json.loads(project.git("notes", "--ref=rewind", "show", "refs/rewind/manual"))
    assert note["summary"] == {"done": "x", "next": "y"}
    project.write("notes.txt", "2\n")
    project.ok("snap", "--summary", "plain words")
    note = json.loads(project.git("notes", "--ref=rewind", "show", "refs/rewind/manual"))
    assert note["summary"] == "plain words"


def test_path_snapshot_reads_only_named_files(project: Workdir) -> None:
    project.ok("snap")
    project.write("src/app.py", "print('changed')\n")
    project.write("notes.txt", "changed too, but not named\n")
    out = project.ok("snap", "--path", "src/app.py", "--tool", "Edit", "--trigger", "PreToolUse")
    assert out.startswith("#2 ") and "before Edit src/app.py" in out
    changed = project.git("diff", "--name-only", "refs/rewind/manual^", "refs/rewind/manual").split()
    assert changed == ["src/app.py"]
    # the un-named change is picked up by the next full snapshot
    project.ok("snap")
    assert project.tree_of("refs/rewind/manual") == project.add_all_tree()


def test_path_snapshot_of_deleted_new_and_ignored_files(project: Workdir) -> None:
    project.ok("snap")
    os.unlink(project.path / "notes.txt")
    project.write("src/new.py", "new\n")
    project.write("more.log", "ignored\n")
    project.ok("snap", "--path", "notes.txt", "--path", "src/new.py", "--path", "more.log")
    files = project.git("ls-tree", "-r", "--name-only", "refs/rewind/manual").split()
    assert "notes.txt" not in files and "src/new.py" in files and "more.log" not in files
    assert project.ok("snap", "--path", "src/new.py").strip() == "unchanged since #2"


def test_path_snapshot_from_subdirectory_and_outside_paths_refused(project: Workdir, tmp_path: Path) -> None:
    project.ok("snap")
    project.write("src/app.py", "v2\n")
    out = project.ok("snap", "--path", "app.py", cwd=project.path / "src")
    assert "src/app.py" in out
    for bad in ("../../outside.txt", str(tmp_path / "elsewhere"), "../.git/config"):
        run = project.rewind("snap", "--path", bad, cwd=project.path / "src")
        assert run.returncode == 1
        assert run.stderr.startswith("error: path outside the working tree")
        assert len(run.stderr.strip().splitlines()) == 1


def test_path_through_symlinked_directory_refused(project: Workdir, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    os.symlink(outside, project.path / "linked")
    project.ok("snap")
    run = project.rewind("snap", "--path", "linked/secret.txt")
    assert run.returncode == 1 and "symbolic link" in run.stderr
    files = project.git("ls-tree", "-r", "refs/rewind/manual").split("\n")
    assert any(line.endswith("\tlinked") and line.startswith("120000") for line in files)


def test_path_snapshot_in_new_session_takes_full_snapshot(project: Workdir) -> None:
    project.ok("snap", "--path", "src/app.py", "--session", "fresh")
    assert project.tree_of("refs/rewind/fresh") == project.add_all_tree()


def test_invalid_session_name_is_one_line_error(project: Workdir) -> None:
    run = project.rewind("snap", "--session", "../../HEAD")
    assert run.returncode == 1 and run.stderr.startswith("error: invalid session name")


def test_snap_in_repository_without_commits(repo: Workdir) -> None:
    repo.write("a.txt", "a\n")
    out = repo.ok("snap")
    assert out.startswith("#1 ")
    note = json.loads(repo.git("notes", "--ref=rewind", "show", "refs/rewind/manual"))
    assert note["head"] is None and note["branch"] == "main" and note["paths"] == ["a.txt"]
    assert not (repo.path / ".git" / "index").exists()
    assert repo.git("rev-parse", "-q", "--verify", "HEAD", check=False) == ""


def test_sequence_survives_a_lost_counter(project: Workdir) -> None:
    project.ok("snap")
    project.write("notes.txt", "2\n")
    project.ok("snap")
    (project.path / ".git" / "rewind" / "seq").unlink()
    project.write("notes.txt", "3\n")
    assert project.ok("snap").startswith("#3 ")


def test_stale_tip_cache_is_not_trusted(project: Workdir) -> None:
    project.ok("snap")
    project.write("notes.txt", "2\n")
    project.ok("snap")
    # someone moves the ref by hand: the cache must not be believed
    project.git("update-ref", "refs/rewind/manual", "refs/rewind/manual^")
    assert project.ok("snap").startswith("#3 ")
    assert project.git("rev-list", "--count", "refs/rewind/manual").strip() == "2"


def test_loose_objects_are_packed_in_the_background(project: Workdir) -> None:
    import hashlib
    import time

    # git estimates loose objects from objects/17/; put one object there so the estimate is 256
    i = 0
    while not hashlib.sha1(b"blob %d\0filler %d" % (len(b"filler %d" % i), i)).hexdigest().startswith("17"):
        i += 1
    subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], input=b"filler %d" % i, cwd=project.path, env=project.env,
        check=True, capture_output=True)
    project.write(".git-rewind.toml", "auto_pack = 100\n")
    project.ok("snap")
    commit = project.git("rev-parse", "refs/rewind/manual").strip()
    loose = project.path / ".git" / "objects" / commit[:2] / commit[2:]
    deadline = time.monotonic() + 30
    while loose.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not loose.exists(), "the checkpoint commit was not packed"
    assert "in-pack: 0" not in project.git("count-objects", "-v")
    project.fsck()
    # a second snapshot right after does not start another repack within the minute
    stamp = (project.path / ".git" / "rewind" / "last-pack").read_text()
    project.write("notes.txt", "again\n")
    project.ok("snap")
    assert (project.path / ".git" / "rewind" / "last-pack").read_text() == stamp


def test_path_snapshot_never_captures_a_file_that_became_ignored(project: Workdir) -> None:
    project.write("config.local", "secret=1\n")
    project.ok("snap")
    project.write(".gitignore", "node_modules/\n*.log\n.env\nconfig.local\n")
    project.write("config.local", "secret=2\n")
    project.ok("snap", "--path", "config.local", "--path", ".gitignore")
    files = project.git("ls-tree", "-r", "--name-only", "refs/rewind/manual").split()
    assert "config.local" not in files
    assert subprocess.run(["git", "cat-file", "-e", project.git("hash-object", "config.local").strip()],
                          cwd=project.path, env=project.env).returncode != 0
    project.ok("snap", "--allow-empty")
    assert project.tree_of("refs/rewind/manual") == project.add_all_tree()


def test_path_snapshot_keeps_a_tracked_file_that_matches_an_ignore_rule(project: Workdir) -> None:
    project.write("keep.log", "tracked although *.log is ignored\n")
    project.git("add", "-f", "keep.log")
    project.ok("snap")
    project.write("keep.log", "changed\n")
    project.ok("snap", "--path", "keep.log")
    assert project.git("show", "refs/rewind/manual:keep.log") == "changed\n"
    assert project.tree_of("refs/rewind/manual") == project.add_all_tree()


def test_path_naming_the_root_is_a_whole_tree_snapshot(project: Workdir) -> None:
    project.ok("snap")
    project.write("notes.txt", "changed\n")
    project.ok("snap", "--path", "..", cwd=project.path / "src")
    note = json.loads(project.git("notes", "--ref=rewind", "show", "refs/rewind/manual"))
    assert note["paths"] == ["notes.txt"]
    assert project.tree_of("refs/rewind/manual") == project.add_all_tree()


def test_the_session_ref_and_the_notes_ref_move_together_or_not_at_all(project: Workdir) -> None:
    """fast-import moves refs one at a time; a failure (or a kill) between the two left a checkpoint commit
    on the session's chain with no note. A ref git cannot write (here refs/notes/rewind, blocked by a ref
    below it) must leave the session's ref where it was too, and say so in one line."""
    blocker = project.git("rev-parse", "HEAD").strip()
    project.git("update-ref", "refs/notes/rewind/blocker", blocker)
    run = project.rewind("snap", "-m", "blocked")
    assert run.returncode != 0 and "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert project.git("for-each-ref", "refs/rewind/") == ""  # no chain without its note
    project.git("update-ref", "-d", "refs/notes/rewind/blocker")
    assert project.ok("snap", "-m", "then").startswith("#")
    chain = project.git("rev-list", "refs/rewind/manual").split()
    noted = {line.split()[1] for line in project.git("notes", "--ref=rewind", "list").splitlines()}
    assert chain and set(chain) <= noted


def test_two_agents_in_one_work_tree_each_keep_their_own_checkpoints_of_the_same_tree(agent_project: Workdir) -> None:
    """Two sessions at work in one tree: a hook checkpoint whose tree equals the other session's newest is still
    this session's, with where its own conversation stood."""
    w = agent_project
    a, b = Agent(w, session="sess-a"), Agent(w, session="sess-b")
    for agent in (a, b):
        Path(agent.transcript).parent.mkdir(parents=True, exist_ok=True)
        Path(agent.transcript).write_text(json.dumps({"type": "user", "sessionId": agent.session}) + "\n")
    a.prompt("fix the bug")
    assert b.prompt("write the docs")["action"] == "checkpoint"  # the same tree as a's prompt checkpoint
    w.write("src/app.py", "print('fixed')\n")
    assert a.stop()["action"] == "checkpoint"
    assert b.stop()["action"] == "checkpoint"  # the same tree as a's turn end
    mine, theirs = chain(w, "sess-b"), chain(w, "sess-a")
    assert [n["message"] for n in mine] == ["prompt: write the docs", "turn end"]
    assert [n["conversation"]["transcript"] for n in mine] == [b.transcript] * 2
    assert w.git("rev-parse", mine[-1]["commit"] + "^{tree}") == w.git("rev-parse", theirs[-1]["commit"] + "^{tree}")
    listed = json.loads(w.ok("list", "--json", "--session", "sess-b"))
    assert [c["seq"] for c in listed] == sorted((n["seq"] for n in mine), reverse=True)


def test_an_edit_checkpoint_that_finds_the_file_as_another_sessions_newest_holds_it_is_still_taken(
        agent_project: Workdir) -> None:
    """The named-files path builds on the work tree's newest checkpoint (another session's): nothing new in the
    file is still a checkpoint of this session, the tree it is about to edit."""
    w = agent_project
    a, b = Agent(w, session="sess-a"), Agent(w, session="sess-b")
    b.prompt("write the docs")
    a.prompt("fix the bug")
    w.write("src/app.py", "print('fixed')\n")
    a.stop()  # the work tree's newest: a's, src/app.py fixed
    logged = b.write("README.md", BIG)  # README.md as a's checkpoint holds it
    assert (logged["action"], logged["reason"]) == ("checkpoint", logged["reason"])
    mine, theirs = chain(w, "sess-b"), chain(w, "sess-a")
    assert mine[-1]["message"] == "before Write README.md" and mine[-1]["named"] == ["README.md"]
    assert mine[-1]["paths"] == []  # nothing changed since the work tree's previous checkpoint (a's)
    assert w.git("rev-parse", mine[-1]["commit"] + "^{tree}") == w.git("rev-parse", theirs[-1]["commit"] + "^{tree}")


# one baseline for "what changed" ---------------------------------------------------------------------------


def _claude(w: Workdir, session: str, event: str, **fields: object) -> None:
    payload = {"session_id": session, "transcript_path": None, "cwd": str(w.path), "hook_event_name": event, **fields}
    run = w.rewind("hook", "--agent", "claude-code", input=json.dumps(payload))
    assert run.returncode == 0 and "hook skipped" not in run.stderr, run


def _changed_since_previous(w: Workdir, notes: list[dict[str, object]], index: int) -> set[str]:
    """What git says changed from the work tree's previous checkpoint (or HEAD, for the first) to NOTES[INDEX]."""
    base = str(notes[index - 1]["commit"]) if index else "HEAD"
    return set(w.git("diff", "--name-only", "--no-renames", base, str(notes[index]["commit"])).split())


def test_paths_diffstat_list_path_and_changed_by_share_one_baseline(agent_project: Workdir) -> None:
    """A session that starts on a tree someone else's session changed claims none of those changes: its note's
    paths, `show`'s diffstat, `list --path` and "changed by" all count from the work tree's previous checkpoint,
    whichever session took it (git's own diff is the oracle)."""
    w = agent_project
    w.write("src/app.py", "print('mine')\n")
    w.write("README.md", "# mine\n")
    w.ok("snap", "--session", "person", "-m", "my edits")  # #1: notes.txt, README.md, src/app.py since HEAD
    w.write("bin/run.sh", "#!/bin/sh\necho mine\n", mode=0o755)
    _claude(w, "agent", "SessionStart", source="startup")  # #2: bin/run.sh alone, not the others HEAD lacks
    _claude(w, "agent", "UserPromptSubmit", prompt="add a helper")  # #3: nothing new
    w.write("src/helper.py", "def helper(): ...\n")
    _claude(w, "agent", "Stop", stop_hook_active=False)  # #4: src/helper.py, the agent's
    w.write("notes.txt", "later\n")
    w.ok("snap", "--session", "person", "-m", "more notes")  # #5: notes.txt alone, not src/helper.py
    notes = sorted(json.loads(w.ok("list", "--json", "-n", "0", "--all")), key=lambda n: n["seq"])
    assert [n["seq"] for n in notes] == [1, 2, 3, 4, 5]
    assert notes[1]["message"].startswith("session start")
    expected = [{"README.md", "notes.txt", "src/app.py"}, {"bin/run.sh"}, set(), {"src/helper.py"}, {"notes.txt"}]
    for index, note in enumerate(notes):
        assert set(note["paths"]) == expected[index] == _changed_since_previous(w, notes, index), note["seq"]
        assert set(note["origins"]) == expected[index], note["seq"]
        shown = json.loads(w.ok("show", str(note["seq"]), "--json"))
        assert shown["parent"] == (notes[index - 1]["commit"] if index else w.git("rev-parse", "HEAD").strip())
        stat_files = {line.split("|")[0].strip() for line in shown["stat"].splitlines() if "|" in line}
        assert stat_files == expected[index], note["seq"]
    assert notes[1]["origins"] == {"bin/run.sh": "outside"} and notes[3]["origins"] == {"src/helper.py": "agent"}
    assert notes[4]["origins"] == {"notes.txt": "outside"}
    assert "no change since the previous checkpoint" in w.ok("show", "3")
    listed = {p: [n["seq"] for n in json.loads(w.ok("list", "--json", "-n", "0", "--all", "--path", p))]
              for p in ("src/app.py", "bin/run.sh", "src/helper.py", "notes.txt")}
    assert listed == {"src/app.py": [1], "bin/run.sh": [2], "src/helper.py": [4], "notes.txt": [5, 1]}
    assert w.ok("files", "5").split() == ["notes.txt"]


def test_the_files_a_request_named_are_kept_apart_from_what_changed(project: Workdir) -> None:
    """`snap --path` (as a hook before an edit) names files; `paths` holds those of them that changed since the
    work tree's previous checkpoint, `named` all of them."""
    w = project
    w.ok("snap", "--session", "s", "-m", "start")
    w.write("src/app.py", "print('changed')\n")
    w.ok("snap", "--session", "s", "--path", "src/app.py", "--path", "README.md")
    note = json.loads(w.ok("show", "@", "--json"))
    assert note["paths"] == ["src/app.py"] and note["named"] == ["src/app.py", "README.md"]
    assert "named:      src/app.py README.md" in w.ok("show", "@")
    w.write("notes.txt", "whole scan\n")
    w.ok("snap", "--session", "s")
    assert "named" not in json.loads(w.ok("show", "@", "--json"))  # nothing named: no key
