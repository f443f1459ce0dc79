"""`git rewind undo ID --patch`: hunk by hunk through git's own prompts, after a safety checkpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers import terminal
from helpers.workdir import REWIND, Workdir

LINES = [f"line {i}\n" for i in range(1, 31)]


def _patch(w: Workdir, args: list[str], answers: list[str], cwd: Path | None = None) -> tuple[int, str]:
    return terminal.run([*REWIND, *args], cwd or w.path, w.env, answers)


def _notes(w: Workdir) -> list[dict[str, Any]]:
    notes: list[dict[str, Any]] = json.loads(w.ok("list", "--json", "-n", "0", "--safety"))
    return notes


def _two_hunks(w: Workdir, path: str = "two.txt") -> tuple[str, str]:
    """PATH with thirty lines checkpointed, then changed in two places far apart: (checkpointed, now)."""
    w.write(path, "".join(LINES))
    w.ok("snap", "-m", "base")
    now = LINES.copy()
    now[2], now[26] = "line three\n", "line twenty-seven\n"
    w.write(path, "".join(now))
    return "".join(LINES), "".join(now)


def test_yes_then_no_restores_exactly_the_first_hunk(project: Workdir) -> None:
    _two_hunks(project)
    user = project.user_state()
    code, shown = _patch(project, ["undo", "1", "--patch"], ["y", "n"])
    assert code == 0, shown
    assert "(1/2) Apply this hunk to worktree [y,n,q,a,d,j,J,g,/,e,?]?" in shown  # git's own prompt
    expected = LINES.copy()
    expected[26] = "line twenty-seven\n"
    assert (project.path / "two.txt").read_text() == "".join(expected)
    assert "patched toward #1: 1 written, 0 removed" in shown and "  written  two.txt" in shown
    assert project.user_state()[:3] == user[:3]  # the index byte for byte, HEAD, branches
    project.fsck()


def test_the_safety_checkpoint_comes_first_and_redo_brings_back_the_state_before(project: Workdir) -> None:
    _two_hunks(project)
    project.write("other.txt", "changed since, not chosen\n")
    before = project.state()
    tree_before = project.add_all_tree()
    code, shown = _patch(project, ["undo", "1", "--patch"], ["y", "y", "y"])
    assert code == 0, shown
    assert (project.path / "two.txt").read_text() == "".join(LINES)
    assert not (project.path / "other.txt").exists()
    safety = _notes(project)[0]
    assert safety["trigger"] == "pre-rewind" and safety["rewind"]["to"] == 1
    assert project.tree_of(safety["commit"]) == tree_before  # the state before the patch, whole
    assert safety["rewind"]["only"] == ["other.txt", "two.txt"]  # what the session changed
    assert f"safety checkpoint #{safety['seq']} " in shown
    assert "restored #2" in project.ok("redo", "--yes")
    assert project.state() == before


def test_q_changes_nothing_in_the_rest(project: Workdir) -> None:
    project.write("a.txt", "".join(LINES))
    project.write("b.txt", "one\n")
    project.write("c.txt", "two\n")
    project.ok("snap", "-m", "three files")
    project.write("a.txt", "".join(LINES[:5]) + "changed\n" + "".join(LINES[6:]))
    project.write("b.txt", "one, changed\n")
    project.write("c.txt", "two, changed\n")
    code, shown = _patch(project, ["undo", "1", "--patch"], ["y", "q"])
    assert code == 0, shown
    assert (project.path / "a.txt").read_text() == "".join(LINES)  # answered y
    assert (project.path / "b.txt").read_text() == "one, changed\n"  # q here
    assert (project.path / "c.txt").read_text() == "two, changed\n"  # never asked
    assert "1 written, 0 removed" in shown


def test_a_file_deleted_since_comes_back_only_when_chosen(project: Workdir) -> None:
    project.write("gone.txt", "was here\n")
    project.ok("snap", "-m", "with gone.txt")
    (project.path / "gone.txt").unlink()
    code, shown = _patch(project, ["undo", "1", "--patch"], ["n"])
    assert code == 0 and "Apply addition to worktree" in shown, shown
    assert not (project.path / "gone.txt").exists()
    record = _notes(project)[0]["rewind"]
    assert record["only"] == [] and record["mode"] == "conversation"  # no file for redo to bring back
    project.ok("redo", "--yes")  # and redo does not trip over the declined addition
    code, shown = _patch(project, ["undo", "1", "--patch"], ["y"])
    assert code == 0 and "0 written" not in shown, shown
    assert (project.path / "gone.txt").read_text() == "was here\n"


def test_a_file_added_since_goes_only_when_chosen(project: Workdir) -> None:
    project.ok("snap", "-m", "before new.txt")
    project.write("src/new/new.txt", "new\n")
    code, shown = _patch(project, ["undo", "1", "--patch"], ["n"])
    assert code == 0 and "Apply deletion to worktree" in shown, shown
    assert (project.path / "src/new/new.txt").exists()
    code, shown = _patch(project, ["undo", "1", "--patch"], ["y"])
    assert code == 0 and "0 written, 1 removed" in shown and "  removed  src/new/new.txt" in shown, shown
    assert not (project.path / "src/new").exists()


def test_binary_files_are_asked_whole_with_gits_letters(project: Workdir) -> None:
    project.write("logo.bin", b"\x00\x01old")
    project.write("keep.bin", b"\x00\x01keep")
    project.ok("snap", "-m", "binaries")
    project.write("logo.bin", b"\x00\x01new")
    (project.path / "keep.bin").unlink()
    project.write("made.bin", b"\x00made")
    code, shown = _patch(project, ["undo", "1", "--patch"], ["?", "y", "n", "y"])
    assert code == 0, shown
    assert "Apply addition to worktree [y,n,q,a,d,?]?" in shown  # keep.bin, deleted since
    assert "q - quit; do not apply this file or any of the remaining ones" in shown
    assert (project.path / "keep.bin").read_bytes() == b"\x00\x01keep"
    assert (project.path / "logo.bin").read_bytes() == b"\x00\x01new"  # n
    assert not (project.path / "made.bin").exists()  # y: its deletion


def test_q_on_a_binary_file_skips_gits_session(project: Workdir) -> None:
    _two_hunks(project)
    project.write("logo.bin", b"\x00\x01new")
    code, shown = _patch(project, ["undo", "1", "--patch"], ["q"])
    assert code == 0, shown
    assert "Apply this hunk" not in shown
    assert (project.path / "logo.bin").exists() and "line three" in (project.path / "two.txt").read_text()


def test_paths_after_a_double_dash_narrow_it(project: Workdir) -> None:
    _, now = _two_hunks(project, "src/two.txt")
    project.write("src/app.py", "changed\n")
    code, shown = _patch(project, ["undo", "1", "--patch", "--", "app.py"], ["y"], cwd=project.path / "src")
    assert code == 0, shown
    assert (project.path / "src/app.py").read_text() == "print('hello')\n"
    assert (project.path / "src/two.txt").read_text() == now  # never offered
    assert _notes(project)[0]["rewind"]["only"] == ["src/app.py"]
    code, shown = _patch(project, ["undo", "1", "--patch", "--", "nothing-here"], [])
    assert code == 1 and "error: --only nothing-here: matches no file" in shown


def test_without_a_terminal_it_is_one_line_and_nothing_changes(project: Workdir) -> None:
    _two_hunks(project)
    state, user, notes = project.state(), project.user_state(), _notes(project)
    for args in (["undo", "1", "--patch"], ["undo", "1", "--patch", "--yes", "--", "two.txt"]):
        run = project.rewind(*args)  # stdin and stdout are pipes
        assert run.returncode == 1
        assert run.stderr == "error: --patch asks hunk by hunk and needs a terminal (stdin and stdout); " \
                             "nothing changed\n"
    # stdout a terminal, stdin a pipe: still no
    proc = subprocess.run([*REWIND, "undo", "1", "--patch"], cwd=project.path, env=project.env,
                          stdin=subprocess.PIPE, capture_output=True, text=True)
    assert proc.returncode == 1 and "needs a terminal" in proc.stderr
    assert project.state() == state and project.user_state() == user and _notes(project) == notes


def test_options_that_do_not_go_with_patch_are_one_line_errors(project: Workdir) -> None:
    _two_hunks(project)
    state = project.state()
    for extra, name in ((["--conversation"], "--conversation"), (["--dry-run"], "--dry-run"),
                        (["--full", "--fork"], "--fork")):
        code, shown = _patch(project, ["undo", "1", "--patch", *extra], [])
        assert code == 1 and shown.strip().splitlines() == [
            f"error: --patch does not go with {name}: it chooses hunks of the code, on a terminal"], shown
    run = project.rewind("undo", "1", "--yes", "--", "two.txt")
    assert run.returncode == 1 and "paths after -- go with --patch" in run.stderr
    assert project.state() == state


def test_crlf_files_under_autocrlf_keep_their_line_ends(repo: Workdir) -> None:
    repo.git("config", "core.autocrlf", "true")
    crlf = [line.replace("\n", "\r\n") for line in LINES]
    repo.write("dos.txt", "".join(crlf))
    repo.commit_all("init")
    repo.ok("snap", "-m", "base")
    now = crlf.copy()
    now[2], now[26] = "line three\r\n", "line twenty-seven\r\n"
    repo.write("dos.txt", "".join(now))
    index = (repo.path / ".git" / "index").read_bytes()
    code, shown = _patch(repo, ["undo", "1", "--patch"], ["n", "y"])
    assert code == 0, shown
    expected = crlf.copy()
    expected[2] = "line three\r\n"
    assert (repo.path / "dos.txt").read_bytes() == "".join(expected).encode()
    assert (repo.path / ".git" / "index").read_bytes() == index


def test_ignored_files_and_git_rewinds_own_settings_are_never_offered(project: Workdir) -> None:
    project.ok("snap", "-m", "base")
    project.ok("config", "set", "tier", "aggressive")
    project.write(".env", "SECRET=2\n")
    project.write("node_modules/pkg/new.js", "ignored\n")
    project.write("src/app.py", "changed\n")
    code, shown = _patch(project, ["undo", "1", "--patch"], ["y"])
    assert code == 0, shown
    offered = [line for line in shown.splitlines() if line.startswith("diff --git ")]
    assert offered == ["diff --git b/src/app.py a/src/app.py"], shown
    assert "left alone: .git-rewind.toml" in shown
    assert (project.path / ".git-rewind.toml").read_text() == 'tier = "aggressive"\n'
    assert (project.path / ".env").read_text() == "SECRET=2\n"
    assert (project.path / "node_modules/pkg/new.js").exists()
    assert (project.path / "src/app.py").read_text() == "print('hello')\n"


def test_the_working_tree_already_matching_takes_no_checkpoint(project: Workdir) -> None:
    project.ok("snap", "-m", "base")
    code, shown = _patch(project, ["undo", "1", "--patch"], [])
    assert code == 0 and "the working tree already matches #1" in shown
    assert len(_notes(project)) == 1


def test_any_target_tree_can_be_patched_toward(project: Workdir) -> None:
    """The library takes a tree that is not the checkpoint's own (what --agent-only and revert merge)."""
    _two_hunks(project)
    merged = LINES.copy()
    merged[15] = "line sixteen, merged\n"
    blob = _hash(project, "".join(merged))
    base_tree = project.tree_of(_notes(project)[0]["commit"])
    tree = _tree_with(project, base_tree, "two.txt", blob)
    script = ("import sys; from git_rewind.store import checkpoints; from git_rewind.ops import patch\n"
              "from git_rewind.base.repo import Repo\n"
              "repo = Repo.discover(); target = checkpoints.lookup(repo, '1', checkpoints.load_all(repo))\n"
              f"out = patch.patch(repo, target, [], 1 << 20, retarget=lambda _current: {tree!r})\n"
              "print('WRITTEN', out.written, 'SAFETY', out.safety.seq)\n")
    code, shown = terminal.run([sys.executable, "-c", script], project.path, project.env, ["y", "y", "n"])
    assert code == 0, shown
    assert "WRITTEN ['two.txt'] SAFETY 2" in shown
    result = (project.path / "two.txt").read_text().splitlines(keepends=True)
    assert result[2] == "line 3\n" and result[15] == "line sixteen, merged\n" and result[26] == "line twenty-seven\n"


def _hash(w: Workdir, text: str) -> str:
    proc = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=w.path, env=w.env, input=text,
                          capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def _tree_with(w: Workdir, tree: str, path: str, blob: str) -> str:
    env = {**w.env, "GIT_INDEX_FILE": str(w.path / ".git" / "scratch-test-index")}
    subprocess.run(["git", "read-tree", tree], cwd=w.path, env=env, check=True)
    subprocess.run(["git", "update-index", "--cacheinfo", f"100644,{blob},{path}"], cwd=w.path, env=env, check=True)
    out = subprocess.run(["git", "write-tree"], cwd=w.path, env=env, check=True, capture_output=True, text=True)
    (w.path / ".git" / "scratch-test-index").unlink()
    return out.stdout.strip()


def test_what_a_killed_session_left_is_swept_and_a_live_ones_kept(project: Workdir) -> None:
    _two_hunks(project)
    finished = subprocess.Popen(["true"])
    finished.wait()
    dead = finished.pid  # waited for: no such process now
    left = project.path / ".git" / "rewind" / f"patch-{dead}-abc"
    live = project.path / ".git" / "rewind" / f"patch-{os.getpid()}-abc"
    for folder in (left, live):
        folder.mkdir()
        (folder / "index").write_bytes(b"DIRC")
    code, shown = _patch(project, ["undo", "1", "--patch"], ["n", "n"])
    assert code == 0, shown
    assert not left.exists() and live.exists()
    assert [p.name for p in live.parent.iterdir() if p.name.startswith("patch-")] == [live.name]  # its own went too


def test_ctrl_c_keeps_what_was_applied_and_redo_takes_it_back(project: Workdir) -> None:
    project.write("a.txt", "a\n")
    project.write("b.txt", "b\n")
    project.ok("snap", "-m", "base")
    project.write("a.txt", "a, changed\n")
    project.write("b.txt", "b, changed\n")
    before = project.state()
    code, shown = _patch(project, ["undo", "1", "--patch"], ["y", terminal.INTERRUPT])
    assert code == 1, shown
    assert "error: interrupted; what was applied stays (1 written, 0 removed): safety checkpoint #2 " in shown
    assert (project.path / "a.txt").read_text() == "a\n" and (project.path / "b.txt").read_text() == "b, changed\n"
    assert _notes(project)[0]["rewind"]["only"] == ["a.txt"]
    assert not [p for p in (project.path / ".git" / "rewind").iterdir() if p.name.startswith("patch-")]
    project.ok("redo", "--yes")
    assert project.state() == before
    project.fsck()
