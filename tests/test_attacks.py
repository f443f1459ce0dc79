"""The attacks of issue 12, kept as regression tests: one test per scenario, in one place.

Each plays the attack against a real repository with real git configuration and checks the one
promise: no byte of the user's data changed (their files, index, HEAD and branches), any error
is one clear line with no traceback, and a restore is byte-exact.

Where each scenario of the issue lives (items as numbered there):
  1  large new files across undo/redo         test_restore.py::
                                                test_a_large_file_created_after_a_checkpoint_survives_undo_and_redo
  2  skip-worktree / assume-unchanged         here
  3  eol=crlf, working-tree-encoding, a size-changing clean/smudge filter, core.autocrlf
                                              test_restore.py::
                                                test_a_restore_writes_what_git_checkout_writes_when_git_converts_content,
                                              and at random in test_differential.py
  7  SHA-256, split index, sparse index       here
  8  a FIFO named by a payload, inside and outside the repository
                                              test_hook.py::test_a_fifo_named_by_a_payload_never_blocks_the_hook
  9  a custom core.excludesFile               here
  11 no tmp_pack_* after unchanged --path     here
  13 gc --older-than 0 keeps the redo target  here (and kill -9 of gc: test_kill.py)
  14 glob characters in directory names       test_ignore.py::test_a_directory_name_with_glob_characters_is_literal;
     a later !negation, a left-out large file never stored, GIT_DIR/GIT_WORK_TREE: here
  hostile hook payloads                       here

The scenarios of issue 26 (trust in every undo, no secret through a side door), each played as a person
would, live beside the module they exercise (items as numbered there):
  1  every preview and result names its target
       test_request.py::test_an_undo_by_date_names_the_checkpoint_it_found_in_its_preview_and_its_result
       test_mcp.py::test_a_rewind_names_its_checkpoint_and_without_an_id_undoes_the_newest_turn
       test_web_page.py::test_the_undo_dialog_names_its_checkpoint_and_the_persons_edits_it_puts_back
  2  a bare undo undoes the newest turn; again, one turn further back
       test_undo.py::test_a_bare_undo_undoes_the_newest_turn_and_again_one_turn_further_back
       test_undo.py::test_a_bare_undo_goes_back_to_the_start_of_each_watch_run
  3  the index a restore contradicts: named, with its command, the index file never written
       test_staging.py (every test)
  4  one baseline for "what changed"
       test_store.py::test_paths_diffstat_list_path_and_changed_by_share_one_baseline
  5  tagged checkpoints kept by gc
       test_gc.py::test_count_and_age_keep_a_tagged_checkpoint_unless_include_tagged
       test_gc.py::test_the_cap_drops_tagged_checkpoints_last_and_says_so
  6  a turn that never ended
       test_turns.py::test_a_turn_quiet_for_turn_timeout_minutes_is_over_and_status_says_why
       test_turns.py::test_a_turn_whose_agent_process_is_gone_is_over_at_once
  7  watch's first edits are the program's
       test_watch.py::test_a_programs_first_edit_is_its_own_and_agent_only_takes_it_back
  8  every session keeps its own anchors
       test_store.py::test_two_agents_in_one_work_tree_each_keep_their_own_checkpoints_of_the_same_tree
  9  list without safety checkpoints
       test_search.py::test_list_leaves_the_safety_checkpoints_out_unless_asked
  10 the smaller things
       test_sync.py::test_the_safety_checkpoint_before_undoing_a_fetched_checkpoint_names_its_full_id
       test_sync.py::test_a_fetch_that_brings_only_transcripts_or_notes_says_so
       test_watch.py::test_a_message_names_only_files_a_checkpoint_holds_not_an_editors_passing_temporary
       test_watch.py::test_a_program_killed_by_sigkill_is_exit_137_as_a_shell_says
       test_web_page.py::test_an_empty_repository_says_how_to_take_the_first_checkpoint
       test_web_page.py::test_the_page_has_its_own_icon
       test_cli.py::test_show_without_an_id_shows_the_newest
       test_restore.py::test_redo_without_undo_and_unknown_ids_are_one_line_errors
       test_aider.py::test_install_and_uninstall_say_to_run_aider_under_watch_and_write_nothing
  11 secrets in file names
       test_sync.py::test_a_path_holding_a_secret_is_left_out_everywhere_a_path_goes
       test_purge.py::test_a_text_in_file_names_leaves_trees_notes_and_every_state_file
  12 encoded secrets
       test_redact.py::test_a_secret_encoded_in_base64_or_hex_is_found_in_text_and_files
       test_sync.py::test_a_secret_encoded_in_base64_is_left_out_as_the_plain_one_is
  13 the page's token and a second local server
       test_web_page.py::test_another_local_server_receives_nothing_that_can_undo
  14 a fresh machine without lighttpd, sshd, chromium
       test_needs.py
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers.checkpoints import listing, snaps
from helpers.session import Agent
from helpers.workdir import REWIND, Workdir


def _stored(w: Workdir, content: bytes) -> bool:
    """Whether a blob with CONTENT is anywhere in the repository's object store."""
    oid = subprocess.run(["git", "hash-object", "--stdin"], input=content, cwd=w.path, env=w.env,
                         capture_output=True, check=True).stdout.decode().strip()
    return subprocess.run(["git", "cat-file", "-e", oid], cwd=w.path, env=w.env).returncode == 0


def _one_line_error(stderr: str) -> None:
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) <= 1, stderr


# 2. index bits that make git look away ----------------------------------------------------------


def test_skip_worktree_and_assume_unchanged_never_hide_a_change(project: Workdir) -> None:
    """The private index is a copy of the user's, but the bits that make `git add -A` look away are not
    copied: a whole-tree checkpoint sees the edits, agrees with a named-path one, and an undo keeps
    them in its safety checkpoint (issue 12, item 2). The user's index keeps its bits."""
    project.write("config.ini", "secret=1\n")
    project.commit_all("config")
    project.git("update-index", "--skip-worktree", "config.ini")
    project.git("update-index", "--assume-unchanged", "README.md")
    flags_before = project.git("ls-files", "-v")
    project.write("config.ini", "secret=2, a local edit\n")
    project.write("README.md", "# edited while assumed unchanged\n")
    project.ok("snap", "-m", "whole tree")
    whole = project.git("rev-parse", "refs/rewind/manual^{tree}").strip()
    assert project.git("show", "refs/rewind/manual:config.ini") == "secret=2, a local edit\n"
    assert project.git("show", "refs/rewind/manual:README.md") == "# edited while assumed unchanged\n"
    project.ok("snap", "--session", "named", "--path", "config.ini", "--path", "README.md", "--allow-empty")
    assert project.git("rev-parse", "refs/rewind/named^{tree}").strip() == whole
    project.write("config.ini", "secret=3\n")
    project.ok("undo", "1", "--yes")
    assert (project.path / "config.ini").read_text() == "secret=2, a local edit\n"
    assert project.git("show", "refs/rewind/manual:config.ini") == "secret=3\n"  # the safety checkpoint has it
    assert project.git("ls-files", "-v") == flags_before


def test_a_sparse_checkout_narrowed_after_the_first_checkpoint_is_not_recorded_as_deleted(project: Workdir) -> None:
    """`git sparse-checkout set` after git-rewind's first checkpoint removes the files outside the cone and
    marks them skip-worktree in the user's index only (the private index was seeded before); `git add -A`
    honours the sparse-checkout patterns, so a checkpoint does not record them as deleted."""
    project.write("docs/guide.md", "guide\n")
    project.commit_all("docs")
    project.ok("snap", "-m", "before the sparse checkout")
    project.git("sparse-checkout", "set", "--no-cone", "/*", "!/docs/")
    assert not (project.path / "docs").exists()
    project.write("notes.txt", "later\n")
    project.ok("snap", "-m", "after")
    assert "docs/guide.md" in project.git("ls-tree", "-r", "--name-only", "refs/rewind/manual").split()


# 3/7. repositories libgit2 cannot open -------------------------------------------------------------


def test_a_sha256_repository_works_end_to_end(tmp_path: Path, env: dict[str, str]) -> None:
    """libgit2 cannot open SHA-256 repositories: nothing may depend on it. Named-path checkpoints hash in
    the repository's format (an unchanged file says so), undo, redo and a gc rewrite all work (issue 12,
    item 7)."""
    path = tmp_path / "sha256"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", "-b", "main", str(path)], env=env, check=True)
    w = Workdir(path, env)
    w.write("a.txt", "one\n")
    w.commit_all("init")
    snaps(w, 3)
    assert w.ok("snap", "--session", "s", "--path", "notes.txt").startswith("unchanged since #3")
    assert len(w.git("rev-parse", "refs/rewind/s").strip()) == 64
    assert w.tree_of("refs/rewind/s") == w.add_all_tree()
    assert "restored #1" in w.ok("undo", "1", "--yes")
    assert (path / "notes.txt").read_text() == "version 0\n"
    w.ok("redo", "--yes")
    assert (path / "notes.txt").read_text() == "version 2\n"
    assert "dropped 3 checkpoints (#1..#3), kept 2" in w.ok("gc", "--keep", "2")  # a chain rewrite
    assert [(d["seq"], d["trigger"]) for d in listing(w)] == [(5, "pre-redo"), (4, "pre-rewind")]
    assert "notes.txt" in w.ok("show", "4")  # its first checkpoint now: against the empty tree of sha256
    w.fsck()


@pytest.mark.parametrize("setup", ["split-index", "sparse-index"])
def test_split_and_sparse_index_repositories_work_end_to_end(tmp_path: Path, env: dict[str, str], setup: str) -> None:
    """Indexes libgit2 cannot read: list, undo, redo and gc go through git's own CLI (issue 12, item 7)."""
    path = tmp_path / setup
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], env=env, check=True)
    w = Workdir(path, env)
    if setup == "split-index":
        w.git("config", "core.splitIndex", "true")
    w.write("d/a.txt", "a\n")
    w.write("e/b.txt", "b\n")
    w.commit_all("init")
    if setup == "split-index":
        assert [p for p in (path / ".git").iterdir() if p.name.startswith("sharedindex.")]
    else:
        w.git("sparse-checkout", "set", "--sparse-index", "d")
        assert not (path / "e").exists() and w.git("config", "index.sparse").strip() == "true"
    w.ok("snap", "-m", "one")
    w.write("d/a.txt", "changed\n")
    assert "restored #1" in w.ok("undo", "1", "--yes")
    assert (path / "d" / "a.txt").read_text() == "a\n"
    w.ok("redo", "--yes")
    assert (path / "d" / "a.txt").read_text() == "changed\n"
    assert "#1" in w.ok("list") and "dropped" in w.ok("gc", "--keep", "1")
    assert w.git("ls-tree", "-r", "--name-only", "refs/rewind/manual").split() == ["d/a.txt", "e/b.txt"]
    w.fsck()


# 9, 14. ignore rules ------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["repository", "global"])
def test_a_custom_excludes_file_that_starts_ignoring_a_secret_stops_its_capture(project: Workdir, where: str,
                                                                                 home: Path) -> None:
    """core.excludesFile (commonly ~/.gitignore_global) is a source of ignore rules like any other: once it
    ignores a file, checkpoints stop capturing it (issue 12, item 9)."""
    project.write("deploy.key", "PRIVATE\n")
    project.ok("snap", "-m", "before")
    assert "deploy.key" in project.git("ls-tree", "-r", "--name-only", "refs/rewind/manual").split()
    rules = home / ".gitignore_global"
    rules.write_text("*.key\n")
    if where == "repository":
        project.git("config", "core.excludesFile", str(rules))
    else:
        project.git("config", "--global", "core.excludesFile", "~/.gitignore_global")
    project.write("notes.txt", "later\n")
    project.ok("snap", "-m", "after")
    files = project.git("ls-tree", "-r", "--name-only", "refs/rewind/manual").split()
    assert "deploy.key" not in files and "notes.txt" in files
    assert project.tree_of("refs/rewind/manual") == project.add_all_tree()
    assert (project.path / "deploy.key").read_text() == "PRIVATE\n"


# 11, 13. the object store and gc --------------------------------------------------------------


def test_an_unchanged_named_path_leaves_no_garbage_in_the_object_store(project: Workdir) -> None:
    """Every pre-edit hook of an unchanged file asks fast-import and then has nothing to write: it
    must end cleanly, not be killed with an empty tmp_pack_* left behind (issue 12, item 11)."""
    project.ok("snap", "-m", "base")
    for _ in range(3):
        assert project.ok("snap", "--path", "src/app.py").startswith("unchanged since #1")
    counts = dict(line.split(": ", 1) for line in project.git("count-objects", "-v").splitlines())
    assert counts["garbage"] == "0", project.git("count-objects", "-v")
    assert not [p for p in os.listdir(project.path / ".git" / "objects" / "pack") if p.startswith("tmp_")]
    project.write("src/app.py", "print('changed')\n")
    assert project.ok("snap", "--path", "src/app.py").startswith("#2 ")
    project.fsck()


def test_gc_keeps_what_redo_needs(project: Workdir) -> None:
    """`gc --older-than 0` (or --keep 0) must not drop the safety checkpoint of the newest undo: redo
    restores it (issue 12, item 13)."""
    snaps(project, 3)
    project.write("notes.txt", "work the undo replaces\n")
    project.ok("undo", "1", "--yes")  # safety checkpoint #4 holds that work
    out = project.ok("gc", "--older-than", "0")
    assert "dropped 3 checkpoints (#1..#3), kept 1" in out
    assert [(d["seq"], d["trigger"]) for d in listing(project)] == [(4, "pre-rewind")]
    assert "nothing to drop (1 checkpoints kept)" in project.ok("gc", "--keep", "0")
    project.ok("redo", "--yes")
    assert (project.path / "notes.txt").read_text() == "work the undo replaces\n"
    project.fsck()


# 14. ignore rules, large files and unusual layouts ----------------------------------------------


def test_a_negation_in_either_rule_set_never_cancels_an_ignore_of_the_other(project: Workdir, home: Path) -> None:
    """Across a .gitignore change a path ignored under the target's rules or the current ones is neither
    captured nor touched, whichever set holds a later `!negation` (issue 12, item 14). git decides each
    set on its own: `git check-ignore` with that set is the oracle."""
    project.write(".gitignore", "node_modules/\n*.log\n.env\n")
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("*.key\n")  # the user's global rules
    project.write("secret.log", "ignored at the checkpoint\n")
    project.write(".gitignore", "node_modules/\n*.log\n.env\n!keep.key\n")
    project.write("keep.key", "wanted at the checkpoint\n")
    project.ok("snap", "-m", "target")
    assert "keep.key" in project.git("ls-tree", "-r", "--name-only", "refs/rewind/manual").split()
    # Now the negation moves: secret.log is re-included, keep.key is a secret the global rules ignore.
    project.write(".gitignore", "node_modules/\n*.log\n.env\n!secret.log\n")
    project.ok("snap", "-m", "secret.log tracked now")
    project.write("keep.key", "A NEW PRIVATE KEY\n")
    before = project.state()
    out = project.ok("undo", "1", "--yes")
    assert "restored #1" in out
    after = project.state()
    assert after.pop(".gitignore") != before.pop(".gitignore")  # the target's rules are back
    assert after == before  # secret.log not removed, keep.key not overwritten
    assert not _stored(project, b"A NEW PRIVATE KEY\n")  # the safety checkpoint left it out
    safety = project.git("ls-tree", "-r", "--name-only", "refs/rewind/manual").split()
    assert "secret.log" not in safety and "keep.key" not in safety
    project.fsck()


def test_a_left_out_large_file_is_never_written_into_the_object_store(project: Workdir) -> None:
    """A file over max_file_size is left out of checkpoints, so it must not cost its size in .git either,
    loose or (over core.bigFileThreshold) streamed into a pack (issue 12, item 14)."""
    project.env["GIT_REWIND_MAX_FILE_SIZE"] = "1k"
    project.git("config", "core.bigFileThreshold", "3k")
    project.ok("snap", "-m", "before")
    loose, packed = os.urandom(2000), os.urandom(5000)  # under and over the threshold
    project.write("data/loose.bin", loose)
    project.write("data/packed.bin", packed)
    project.write("notes.txt", "a change beside them\n")
    out = project.rewind("snap", "-m", "with large files")
    assert out.returncode == 0 and "left out data/loose.bin" in out.stderr
    assert not _stored(project, loose) and not _stored(project, packed)
    project.write("notes.txt", "another change\n")
    project.ok("undo", "1", "--yes")  # the safety checkpoint scans them again
    assert not _stored(project, loose) and not _stored(project, packed)
    assert (project.path / "data" / "loose.bin").read_bytes() == loose
    assert (project.path / "data" / "packed.bin").read_bytes() == packed
    counts = dict(line.split(": ", 1) for line in project.git("count-objects", "-v").splitlines())
    assert counts["garbage"] == "0" and counts["size-pack"] == "0"
    project.fsck()


def test_git_dir_and_git_work_tree_set_with_the_cwd_outside_the_work_tree(project: Workdir, tmp_path: Path) -> None:
    """git's CLI works with GIT_DIR and GIT_WORK_TREE set from anywhere (relative paths included), so
    git rewind must too, not call it a bare repository (issue 12, item 14)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"GIT_DIR": os.path.relpath(project.path / ".git", elsewhere),
           "GIT_WORK_TREE": os.path.relpath(project.path, elsewhere)}
    before = project.user_state()
    assert project.ok("snap", "-m", "from outside", cwd=elsewhere, env=env).startswith("#1 ")
    assert project.tree_of("refs/rewind/manual") == project.add_all_tree()
    project.write("notes.txt", "changed\n")
    assert "#1" in project.ok("list", cwd=elsewhere, env=env)
    assert "restored #1" in project.ok("undo", "1", "--yes", cwd=elsewhere, env=env)
    assert (project.path / "notes.txt").read_text() == "untracked work\n"
    assert os.listdir(elsewhere) == []
    assert project.user_state() == before


def test_core_worktree_pointing_away_from_the_git_directory(tmp_path: Path, env: dict[str, str]) -> None:
    """A git directory whose core.worktree names another directory: from beside the git directory git's CLI
    works on that work tree, and so must git rewind (its git processes run at the root, where no .git
    leads back)."""
    holder, tree = tmp_path / "holder", tmp_path / "tree"
    tree.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(holder)], env=env, check=True)
    w = Workdir(tree, {**env, "GIT_DIR": str(holder / ".git")})
    w.git("config", "core.worktree", str(tree))
    w.write("a.txt", "one\n")
    w.commit_all("init")
    w.write("a.txt", "two\n")
    env_here = {k: v for k, v in w.env.items() if k != "GIT_DIR"}
    bare = Workdir(holder, env_here)
    assert bare.ok("snap", "-m", "from beside the git directory").startswith("#1 ")
    w.write("a.txt", "three\n")
    assert "restored #1" in bare.ok("undo", "1", "--yes")
    assert (tree / "a.txt").read_text() == "two\n"
    assert "#2" in bare.ok("list", "--safety")  # the safety checkpoint, taken there too


# hostile hook payloads ---------------------------------------------------------------------------


def _hostile_payloads(w: Workdir, outside: Path) -> dict[str, bytes]:
    agent = Agent(w)

    def write(path: str) -> bytes:
        return json.dumps(agent.payload("PreToolUse", tool_name="Write", tool_use_id="toolu_x",
                                        tool_input={"file_path": path, "content": "x" * 200})).encode()

    return {
        "malformed JSON": b'{"session_id": "s", "cwd": ',
        "binary": bytes(range(256)) * 64,
        "path outside the repository": write(str(outside)),
        "../ traversal": write(str(w.path / ".." / outside.name)),
        "relative traversal": write(f"../{outside.name}"),
        "cwd outside": json.dumps({**json.loads(write(str(outside))), "cwd": str(outside.parent)}).encode(),
        "into .git": write(str(w.path / ".git" / "config")),
        "huge": json.dumps(agent.payload("PreToolUse", tool_name="Write", tool_use_id="toolu_y",
                                         tool_input={"file_path": str(w.path / "notes.txt"),
                                                     "content": "y" * 20_000_000})).encode(),
    }


@pytest.mark.parametrize("kind", ["malformed JSON", "binary", "path outside the repository", "../ traversal",
                                  "relative traversal", "cwd outside", "into .git", "huge"])
def test_a_hostile_payload_exits_0_and_changes_nothing(agent_project: Workdir, tmp_path: Path, kind: str) -> None:
    w = agent_project
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"OUTSIDE-DATA, never read into the store\n")
    payload = _hostile_payloads(w, outside)[kind]
    before, user, config = w.state(), w.user_state(), (w.path / ".git" / "config").read_bytes()
    run = subprocess.run([*REWIND, "hook"], input=payload, capture_output=True, cwd=w.path, timeout=60,
                         env={**w.env, **Agent(w).env})
    assert run.returncode == 0
    _one_line_error(run.stderr.decode(errors="replace"))
    assert w.state() == before and w.user_state() == user
    assert (w.path / ".git" / "config").read_bytes() == config
    assert outside.read_bytes() == b"OUTSIDE-DATA, never read into the store\n"
    assert not _stored(w, outside.read_bytes())
