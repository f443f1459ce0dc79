"""Reading checkpoints: list, show, diff, files; and where the command works at all."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers.workdir import REWIND, Workdir


def _three(w: Workdir) -> None:
    w.ok("snap", "-m", "one", "--session", "s1")
    w.write("src/app.py", "print('two')\n")
    w.ok("snap", "-m", "two", "--session", "s1", "--trigger", "PreToolUse", "--tool", "Edit",
         "--path", "src/app.py")
    w.write("notes.txt", "three\n")
    w.ok("snap", "-m", "three", "--session", "s2")


def test_list_newest_first_with_scope_and_limit(project: Workdir) -> None:
    _three(project)
    lines = project.ok("list").splitlines()
    assert [line.split()[0] for line in lines] == ["#3", "#2", "#1"]
    assert "PreToolUse/Edit" in lines[1] and "src/app.py" in lines[1] and lines[1].endswith("two")
    assert "s ago" in lines[0]
    assert [x.split()[0] for x in project.ok("list", "--session", "s1").splitlines()] == ["#2", "#1"]
    scoped = project.ok("list", env={"GIT_REWIND_SESSION": "s2"}).splitlines()
    assert [x.split()[0] for x in scoped] == ["#3"]
    everything = project.ok("list", "--all", env={"GIT_REWIND_SESSION": "s2"}).splitlines()
    assert len(everything) == 3
    limited = project.ok("list", "-n", "2").splitlines()
    assert limited[-1] == "(1 older; -n 0 shows all)" and len(limited) == 3


def test_list_json_is_notes_with_commits(project: Workdir) -> None:
    _three(project)
    data = json.loads(project.ok("list", "--json", "-n", "0"))
    assert [d["seq"] for d in data] == [3, 2, 1]
    for d in data:
        note = json.loads(project.git("notes", "--ref=rewind", "show", d["commit"]))
        assert note == {k: v for k, v in d.items() if k != "commit"}
    assert json.loads(project.ok("list", "--json", "--session", "nope")) == []


def test_show_metadata_and_stat(project: Workdir) -> None:
    _three(project)
    out = project.ok("show", "2")
    assert "checkpoint: #2 " in out and "tool:       Edit" in out
    assert "src/app.py | 2 +-" in out
    data = json.loads(project.ok("show", "2", "--json"))
    assert data["seq"] == 2 and data["parent"] == project.git("rev-parse", f"{data['commit']}^").strip()
    first = project.ok("show", "1")
    # A session's first checkpoint compares with the commit HEAD was at, not the empty tree (issue 12,
    # item 15): the untracked notes.txt is what it added; the committed files are not listed.
    assert "create mode 100644 notes.txt" in first and "1 file changed" in first
    assert "README.md" not in first and "src/app.py" not in first
    assert json.loads(project.ok("show", "1", "--json"))["parent"] == project.git("rev-parse", "HEAD").strip()


def test_diff_against_working_tree_and_between_checkpoints(project: Workdir) -> None:
    _three(project)
    project.write("brand-new.txt", "untracked now\n")
    out = project.ok("diff", "3", "--name-status")
    assert "A\tbrand-new.txt" in out
    out = project.ok("diff", "1", "3", "--stat")
    assert "notes.txt" in out and "src/app.py" in out
    full = project.ok("diff", "1", "2")
    assert "-print('hello')" in full and "+print('two')" in full
    # git's own diff settings apply
    project.git("config", "diff.noprefix", "true")
    assert "--- src/app.py" in project.ok("diff", "1", "2")


def test_files_recorded_and_all(project: Workdir) -> None:
    _three(project)
    assert project.ok("files", "2").split() == ["src/app.py"]
    all_files = project.ok("files", "2", "--all").split()
    assert set(all_files) == {".gitignore", "README.md", "bin/run.sh", "notes.txt", "src/app.py"}


def test_works_from_a_subdirectory(project: Workdir) -> None:
    sub = project.path / "src"
    assert project.ok("snap", cwd=sub).startswith("#1 ")
    assert project.ok("list", cwd=sub).startswith("#1 ")


def test_outside_a_repository_and_in_a_bare_one(tmp_path: Path, env: dict[str, str]) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], env=env, check=True)
    for where in (plain, bare, bare / "objects"):
        for args in (["snap"], ["list"], ["undo", "--yes"]):
            proc = subprocess.run([*REWIND, *args], cwd=where, env=env, capture_output=True, text=True)
            assert proc.returncode == 2, (where, args, proc.stderr)
            assert proc.stderr.startswith("error: ") and len(proc.stderr.splitlines()) == 1
    assert list(plain.iterdir()) == []


def test_inside_dot_git_is_refused(project: Workdir) -> None:
    run = project.rewind("snap", cwd=project.path / ".git")
    assert run.returncode == 2 and "work tree" in run.stderr


def test_linked_worktrees_have_their_own_index_and_share_the_sequence(project: Workdir, tmp_path: Path) -> None:
    project.ok("snap", "--session", "main-wt")
    linked = tmp_path / "linked"
    project.git("worktree", "add", "-q", str(linked), "-b", "feature")
    (linked / "feature.txt").write_text("feature\n")
    out = subprocess.run([*REWIND, "snap", "--session", "feat"], cwd=linked, env=project.env,
                         capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("#2 ")
    gitdir = Path(project.git("rev-parse", "--absolute-git-dir", cwd=linked).strip())
    assert (gitdir / "rewind" / "index").exists()
    assert gitdir != project.path / ".git"
    files = project.git("ls-tree", "-r", "--name-only", "refs/rewind/feat").split()
    assert "feature.txt" in files and "notes.txt" not in files
    note = json.loads(project.git("notes", "--ref=rewind", "show", "refs/rewind/feat"))
    assert note["branch"] == "feature"
    # the main work tree's index and status are untouched
    assert "feature.txt" not in project.git("status", "--porcelain")
    (linked / "feature.txt").write_text("broken\n")
    subprocess.run([*REWIND, "undo", "2", "--yes"], cwd=linked, env=project.env, check=True,
                   capture_output=True)
    assert (linked / "feature.txt").read_text() == "feature\n"


def test_no_command_writes_the_users_index_head_branches_stash_or_config(project: Workdir) -> None:
    """Invariant 1, across every command: the user's own git state is byte-for-byte the same."""
    project.write("src/app.py", "staged change\n")
    project.git("add", "src/app.py")
    project.write("stash-me.txt", "x\n")
    project.git("stash", "push", "-q", "--include-untracked", "-m", "mine")
    project.write("src/app.py", "working change\n")
    git_dir = project.path / ".git"

    def user_files() -> dict[str, bytes]:
        names = ["index", "HEAD", "config", "ORIG_HEAD", "logs/HEAD", "logs/refs/stash", "refs/stash"]
        return {n: (git_dir / n).read_bytes() for n in names if (git_dir / n).exists()}

    before = project.user_state()  # runs git status, which may refresh the index: read files after it
    before_files = user_files()
    commands = [
        ["snap", "-m", "a"], ["snap", "--path", "src/app.py"], ["list"], ["list", "--json"],
        ["show", "1"], ["diff", "1"], ["diff", "1", "@"], ["files", "1", "--all"],
        ["undo", "1", "--dry-run"], ["undo", "1", "--yes"], ["redo"], ["gc", "--keep", "100"],
    ]
    for args in commands:
        if args[0] == "undo" and "--yes" in args:
            project.write("src/app.py", "a change to undo\n")
        project.ok(*args)
        after_files = user_files()
        assert after_files == before_files, (args, [k for k in before_files if after_files.get(k) != before_files[k]])
    # HEAD, branches, stash and status (index bytes were compared above, before git status refreshes them)
    assert project.user_state()[1:] == before[1:]
    assert project.git("stash", "list").count("mine") == 1


def test_the_session_list_shows_is_accepted_back(project: Workdir) -> None:
    """`list` cuts sessions to 12 characters (agents' ids are UUIDs); what it shows must work as --session."""
    long = "4f9eba75-a32a-4359-9724-af1840817a93"
    project.ok("snap", "--session", long, "-m", "agent's")
    project.write("notes.txt", "more\n")
    project.ok("snap", "--session", "4f9eba75-b000-other", "-m", "other")
    shown = project.ok("list").splitlines()[1].split()[3]
    assert shown == long[:12]
    assert [line.split()[0] for line in project.ok("list", "--session", shown).splitlines()] == ["#1"]
    ambiguous = project.rewind("list", "--session", "4f9eba75")
    assert ambiguous.returncode != 0 and "ambiguous session: 4f9eba75" in ambiguous.stderr
