"""Reading checkpoints: list, show, diff, files; and where the command works at all."""

from __future__ import annotations

import json
import re
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


def _rows(out: str) -> list[str]:
    """`list`'s rows, without its header."""
    lines = out.splitlines()
    assert lines[0].split() == ["seq", "age", "session", "agent", "trigger/tool", "paths", "tags", "message"]
    return lines[1:]


def test_list_newest_first_with_scope_and_limit(project: Workdir) -> None:
    _three(project)
    lines = _rows(project.ok("list"))
    assert [line.split()[0] for line in lines] == ["#3", "#2", "#1"]
    assert "PreToolUse/Edit" in lines[1] and "src/app.py" in lines[1] and lines[1].endswith("two")
    assert "s ago" in lines[0]
    assert [x.split()[0] for x in _rows(project.ok("list", "--session", "s1"))] == ["#2", "#1"]
    scoped = _rows(project.ok("list", env={"GIT_REWIND_SESSION": "s2"}))
    assert [x.split()[0] for x in scoped] == ["#3"]
    everything = _rows(project.ok("list", "--all", env={"GIT_REWIND_SESSION": "s2"}))
    assert len(everything) == 3
    limited = _rows(project.ok("list", "-n", "2"))
    assert limited[-1] == "(1 older; -n 0 shows all)" and len(limited) == 3


def test_list_columns_line_up_under_the_header_with_agent_and_tags(project: Workdir) -> None:
    """Every column starts where its header starts, on every row, however long the values; piped, no message
    is cut and no colour is written."""
    project.ok("snap", "-m", "first", "--session", "a-very-long-session-name-indeed", "--tag", "risky",
               "--tag", "clear")
    project.write("src/app.py", "print('two')\n")
    message = "a message far longer than any terminal is wide " * 5
    project.ok("snap", "-m", message, "--agent", "claude-code", "--trigger", "PreToolUse", "--tool", "Edit",
               "--path", "src/app.py", env={"GIT_REWIND_SESSION": "s1"})
    out = project.ok("list", env={"COLUMNS": "80"})
    assert "\x1b" not in out
    lines = out.splitlines()
    header = lines[0]
    starts = [header.index(name) for name in header.split()]
    rows = lines[1:]
    for row in rows:
        for start in starts[1:]:
            assert row[start - 2:start] == "  " and row[start] != " ", (row, start)
    ends: list[int | None] = [*starts[1:], None]
    newest, oldest = (dict(zip(header.split(), (row[a:b].strip() for a, b in zip(starts, ends, strict=True)),
                               strict=True)) for row in rows)
    assert newest == {"seq": "#2", "age": newest["age"], "session": "s1", "agent": "claude-code",
                      "trigger/tool": "PreToolUse/Edit", "paths": "src/app.py", "tags": "-",
                      "message": message.strip()}
    assert oldest["session"] == "a-very-long-" and oldest["tags"] == "risky,clear" and oldest["agent"] == "-"


def test_list_json_is_notes_with_commits(project: Workdir) -> None:
    _three(project)
    data = json.loads(project.ok("list", "--json", "-n", "0"))
    assert [d["seq"] for d in data] == [3, 2, 1]
    for d in data:
        note = json.loads(project.git("notes", "--ref=rewind", "show", d["commit"]))
        assert note == {k: v for k, v in d.items() if k not in ("commit", "id")}
        assert d["id"] == str(d["seq"])  # what every command accepts (fetched ones: <remote>/<machine>/<seq>)
    assert json.loads(project.ok("list", "--json", "--session", "nope")) == []


def test_show_without_an_id_shows_the_newest(project: Workdir) -> None:
    run = project.rewind("show")
    assert run.returncode == 1 and run.stderr.startswith("error: no checkpoints yet")
    assert "git rewind snap" in run.stderr  # what to do next
    _three(project)
    assert project.ok("show").startswith("checkpoint: #3 ")
    assert project.ok("show", "--json") == project.ok("show", "@", "--json")


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
    assert _rows(project.ok("list", cwd=sub))[0].startswith("#1 ")


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
    shown = _rows(project.ok("list"))[1].split()[3]
    assert shown == long[:12]
    assert [line.split()[0] for line in _rows(project.ok("list", "--session", shown))] == ["#1"]
    ambiguous = project.rewind("list", "--session", "4f9eba75")
    assert ambiguous.returncode != 0 and "ambiguous session: 4f9eba75" in ambiguous.stderr


def _ageless(text: str) -> str:
    return re.sub(r"\(\d+\w* ago\)", "(…)", text)


def test_show_patch_is_git_diff_of_the_previous_checkpoint(project: Workdir) -> None:
    _three(project)
    out = project.ok("show", "2", "--patch")
    plain = project.ok("show", "2")
    parent = json.loads(project.ok("show", "2", "--json"))["parent"]
    commit = json.loads(project.ok("show", "2", "--json"))["commit"]
    patch = project.git("diff", parent, commit)
    assert patch.startswith("diff --git a/src/app.py b/src/app.py") and "+print('two')" in patch
    # the note and its stat, a blank line, then git's own patch (ages aside: a second may pass between runs)
    assert _ageless(out) == _ageless(plain + "\n" + patch)
    assert _ageless(project.ok("show", "2", "-p", "--color=never")) == _ageless(out)
    assert "diff --git" not in project.ok("show", "2")
    assert json.loads(project.ok("show", "2", "--json", "--patch"))["patch"] == patch
    assert "patch" not in json.loads(project.ok("show", "2", "--json"))


def test_diff_paths_after_dashes_limit_it_as_git_pathspecs(project: Workdir) -> None:
    project.ok("snap", "-m", "one")
    project.write("src/app.py", "print('two')\n")
    project.write("src/lib/util.py", "x = 1\n")
    project.write("notes.txt", "changed\n")
    project.ok("snap", "-m", "two")
    assert set(project.ok("diff", "1", "2", "--name-status").split()) == \
        {"M", "A", "src/app.py", "src/lib/util.py", "notes.txt"}
    assert project.ok("diff", "1", "2", "--name-status", "--", "notes.txt").split() == ["M", "notes.txt"]
    # relative to the current directory, globs and magic as git reads them
    sub = project.path / "src"
    assert project.ok("diff", "1", "2", "--name-status", "--", "app.py", cwd=sub).split() == ["M", "src/app.py"]
    assert project.ok("diff", "1", "2", "--stat", "--", ":(top)notes.txt", cwd=sub).split()[0] == "notes.txt"
    globbed = project.ok("diff", "1", "2", "--name-status", "--", "lib/*.py", cwd=sub).split()
    assert globbed == ["A", "src/lib/util.py"]
    # against the working tree too
    project.write("README.md", "# changed\n")
    assert project.ok("diff", "2", "--name-status", "--", "README.md").split() == ["M", "README.md"]
    assert project.ok("diff", "2", "--name-status", "--", "src").strip() == ""


def _cat(w: Workdir, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """`git rewind cat …`, its stdout as bytes."""
    return subprocess.run([*REWIND, "cat", *args], cwd=cwd or w.path, env=w.env, capture_output=True)


def test_cat_prints_the_bytes_a_restore_writes(project: Workdir) -> None:
    """Byte for byte what `undo ID --only PATH` writes: eol=crlf converted, a binary file untouched, under the
    checkpoint's attributes even after they changed, and a path relative to the current directory."""
    project.write(".gitattributes", "*.txt text eol=crlf\n*.dat binary\n")
    project.write("docs/readme.txt", "line one\nline two\n")
    project.write("data/blob.dat", bytes(range(256)) + b"\r\n\n\0end")
    project.write("src/app.py", "print('crlf? no')\n")
    project.ok("snap", "-m", "attributes")
    project.write(".gitattributes", "*.txt -text\n")  # changed since: the checkpoint's own still apply
    project.ok("snap", "-m", "attributes changed")
    cases = {"docs/readme.txt": b"line one\r\nline two\r\n", "data/blob.dat": None, "src/app.py": None}
    for path, expected in cases.items():
        shown = _cat(project, "1", path)
        assert shown.returncode == 0, shown.stderr
        if expected is not None:
            assert shown.stdout == expected
        project.write(path, "changed since\n")
        project.ok("undo", "1", "--only", path, "--yes")
        assert (project.path / path).read_bytes() == shown.stdout, path
    sub = project.path / "docs"
    assert _cat(project, "1", "readme.txt", cwd=sub).stdout == b"line one\r\nline two\r\n"
    assert _cat(project, "1", "../src/app.py", cwd=sub).stdout == b"print('crlf? no')\n"


def test_cat_of_a_file_not_there_is_one_line_and_changes_nothing(project: Workdir, tmp_path: Path) -> None:
    project.ok("snap", "-m", "one")
    before = (project.state(), project.user_state())
    for args, message in ((["1", "missing.txt"], "error: no file missing.txt in checkpoint #1"),
                          (["1", "src"], "error: src is a directory in checkpoint #1"),
                          (["1", str(tmp_path / "elsewhere.txt")], "error: path outside the working tree"),
                          (["1", "../../etc/passwd"], "error: path outside the working tree"),
                          (["9", "README.md"], "error: unknown checkpoint: 9")):
        run = _cat(project, *args)
        stderr = run.stderr.decode()
        assert run.returncode != 0 and run.stdout == b"", args
        assert stderr.startswith(message) and len(stderr.splitlines()) == 1, stderr
    assert (project.state(), project.user_state()) == before
