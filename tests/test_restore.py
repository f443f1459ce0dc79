"""`git rewind undo` / `redo`: back to any checkpoint, and back again, losing nothing."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.workdir import REWIND, Workdir

from git_rewind.base.note import Oid
from git_rewind.base.repo import Repo
from git_rewind.ops import restore
from git_rewind.store import journal, snapshot


def _notes(w: Workdir) -> list[dict[str, Any]]:
    notes: list[dict[str, Any]] = json.loads(w.ok("list", "--json", "-n", "0", "--safety"))
    return notes


def test_undo_restores_exact_tree_after_a_safety_checkpoint(project: Workdir) -> None:
    project.ok("snap", "-m", "good")
    good = project.state()
    before_user = project.user_state()
    project.write("src/app.py", "broken\n")
    project.write("src/extra/deep/new.py", "new\n")
    os.unlink(project.path / "notes.txt")
    (project.path / "bin" / "run.sh").chmod(0o644)
    os.symlink("README.md", project.path / "link")
    broken = project.state()
    out = project.ok("undo", "1", "--yes")
    assert out.splitlines()[0] == "undo to #1 (manual, just now, session manual): good"  # the target, named
    assert out.splitlines()[1].startswith("safety checkpoint #2 ")
    assert project.state() == good
    assert not (project.path / "src" / "extra").exists()  # emptied directories go too
    notes = _notes(project)
    safety = notes[0]
    assert safety["seq"] == 2 and safety["trigger"] == "pre-rewind" and safety["rewind"]["to"] == 1
    assert project.tree_of(safety["commit"]) != project.tree_of(notes[1]["commit"])
    assert project.user_state()[:3] == before_user[:3]
    # the safety checkpoint holds the broken state: redo brings it back
    out = project.ok("redo")
    assert "restored #2" in out
    assert project.state() == broken
    project.fsck()


def test_undo_defaults_to_newest_and_accepts_every_id_form(project: Workdir) -> None:
    project.ok("snap")
    project.write("notes.txt", "two\n")
    project.ok("snap")
    project.write("notes.txt", "three\n")
    assert "restored #2" in project.ok("undo", "--yes")
    assert (project.path / "notes.txt").read_text() == "two\n"
    first = _notes(project)[-1]["commit"]
    assert "restored #1" in project.ok("undo", first[:8], "--yes")
    assert (project.path / "notes.txt").read_text() == "untracked work\n"
    # @ is the safety checkpoint just taken (#4, "two"); @~1 the one before it (#3, "three")
    assert "restored #3" in project.ok("undo", "@~1", "--yes")
    assert (project.path / "notes.txt").read_text() == "three\n"
    assert "restored #4" in project.ok("undo", "latest~1", "--yes")
    assert (project.path / "notes.txt").read_text() == "two\n"


def test_a_scripted_undo_loads_no_click_and_prints_what_the_click_command_prints(project: Workdir) -> None:
    """`undo [ID] --yes` is read without click (~40 ms of imports of a restore); any other form goes
    through click. Both print the same lines for the same restore."""
    project.ok("snap", "-m", "good")
    probe = ("import atexit, sys\nfrom git_rewind.main import main\n"
             "atexit.register(lambda: print('click loaded' if 'click' in sys.modules else 'no click',\n"
             "                              file=sys.stderr))\n"
             "main(sys.argv[1:])\n")
    outputs = []
    for args, loaded in ((["undo", "--code", "-y"], "no click"), (["undo", "1", "--yes"], "no click"),
                         (["undo", "1", "--yes", "--only", "."], "click loaded")):
        project.write("src/app.py", "broken\n")
        os.unlink(project.path / "notes.txt")
        proc = subprocess.run([sys.executable, "-c", probe, *args], cwd=project.path, env=project.env,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.splitlines()[-1] == loaded, (args, proc.stderr)
        outputs.append(re.sub(r"#\d+ [0-9a-f]{7}", "#N", proc.stdout))
    assert outputs[1] == outputs[2]
    assert outputs[1].splitlines() == ["undo to #1 (manual, just now, session manual): good",
                                       "safety checkpoint #N (git rewind redo goes back)",
                                       "restored #1: 2 written, 0 removed (verified)"]
    assert outputs[0].splitlines()[0].startswith("undo to #1, the newest checkpoint that is not a safety ")
    assert outputs[0].splitlines()[1:] == outputs[1].splitlines()[1:]


def test_a_scripted_undo_reads_only_its_plain_forms() -> None:
    from git_rewind.faces import undocmd

    assert undocmd.parse(["3", "--yes"]) == ("3",)
    assert undocmd.parse(["-y", "--code"]) == (None,)
    assert undocmd.parse(["@~1", "--code", "--yes"]) == ("@~1",)
    for other in (["3"], ["3", "--yes", "--dry-run"], ["--yes", "--full"], ["3", "4", "--yes"], ["--yes", "--help"],
                  ["--yes=1"], ["-yp"], ["3", "--yes", "--", "a.txt"], ["--yes", "--only", "a"]):
        assert undocmd.parse(other) is None, other


def test_a_plain_undo_after_an_undo_does_not_flip_back(project: Workdir) -> None:
    """With no agent turn recorded, a bare undo goes to the newest checkpoint that is not a safety checkpoint,
    and a second one right after to the one before it: never to what the first one replaced (issue 12, item 5;
    issue 26: one step further back, as an editor's undo); `@` still can."""
    project.ok("snap")  # 1: "untracked work"
    project.write("notes.txt", "two\n")
    project.ok("snap")  # 2
    project.write("notes.txt", "agent's mess\n")
    assert "restored #2" in project.ok("undo", "--yes")  # safety checkpoint #3 holds the mess
    project.write("notes.txt", "more mess\n")
    out = project.ok("undo", "--yes")  # not #3: that would bring the mess back
    assert out.startswith("undo to #1, the checkpoint before #2, where the last undo went (manual, ")
    assert "restored #1" in out
    assert (project.path / "notes.txt").read_text() == "untracked work\n"
    further = project.rewind("undo", "--yes")
    assert further.returncode == 1 and further.stderr.startswith("error: nothing further back: #1, where the last")
    assert "restored #4" in project.ok("undo", "@", "--yes")  # @: the newest of all, the safety checkpoint
    assert (project.path / "notes.txt").read_text() == "more mess\n"
    assert "not a safety checkpoint" in " ".join(project.ok("undo", "-h").split())


def test_dry_run_changes_nothing(project: Workdir) -> None:
    project.ok("snap")
    project.write("src/app.py", "changed\n")
    project.write("new.txt", "new\n")
    state = project.state()
    refs = project.git("for-each-ref")
    out = project.ok("undo", "1", "--dry-run")
    assert "write   src/app.py" in out and "remove  new.txt" in out
    assert project.state() == state
    assert project.git("for-each-ref") == refs


def test_only_limits_the_restore(project: Workdir) -> None:
    project.ok("snap")
    project.write("src/app.py", "changed\n")
    project.write("notes.txt", "keep my change\n")
    project.ok("undo", "1", "--yes", "--only", "src")
    assert (project.path / "src" / "app.py").read_text() == "print('hello')\n"
    assert (project.path / "notes.txt").read_text() == "keep my change\n"
    run = project.rewind("undo", "1", "--yes", "--only", "../elsewhere")
    assert run.returncode == 1 and "is outside repository" in run.stderr and len(run.stderr.splitlines()) == 1


def test_ignored_files_are_never_touched(project: Workdir) -> None:
    project.ok("snap")
    ignored = {p: (project.path / p).read_bytes() for p in ("node_modules/pkg/index.js", "debug.log", ".env")}
    project.write("node_modules/pkg/other.js", "also ignored\n")
    project.write("src/app.py", "changed\n")
    project.ok("undo", "1", "--yes")
    for p, content in ignored.items():
        assert (project.path / p).read_bytes() == content
    assert (project.path / "node_modules/pkg/other.js").exists()


def test_gitignore_change_neither_captures_nor_deletes_ignored_files(project: Workdir) -> None:
    """Pitfall: the agent deleted .gitignore; a naive safety snapshot captures node_modules and .env."""
    project.ok("snap")
    os.unlink(project.path / ".gitignore")
    project.write("src/app.py", "changed\n")
    out = project.ok("undo", "1", "--yes")
    safety = _notes(project)[0]
    captured = project.git("ls-tree", "-r", "--name-only", safety["commit"]).split()
    assert ".env" not in captured and not any(p.startswith("node_modules") for p in captured)
    assert "debug.log" not in captured
    assert (project.path / ".env").read_text() == "SECRET=1\n"
    assert (project.path / "node_modules/pkg/index.js").exists()
    assert (project.path / ".gitignore").exists()
    assert "restored #1" in out
    # the secret never reached the object database
    secret_blob = project.git("hash-object", ".env").strip()
    assert project.git("cat-file", "-e", secret_blob, check=False) == ""
    assert subprocess.run(["git", "cat-file", "-e", secret_blob], cwd=project.path,
                          env=project.env).returncode != 0


def test_ignored_file_where_the_checkpoint_has_a_tracked_one_is_left_alone(project: Workdir) -> None:
    project.write("build.out", "checkpointed\n")
    project.ok("snap")
    os.unlink(project.path / "build.out")
    project.write(".gitignore", "node_modules/\n*.log\n.env\nbuild.out\n")
    project.write("build.out", "now ignored, fresh content\n")
    out = project.ok("undo", "1", "--yes")
    assert (project.path / "build.out").read_text() == "now ignored, fresh content\n"
    assert "left alone" in project.rewind("undo", "1", "--dry-run").stdout or "restored" in out


def test_a_file_kept_out_by_a_directory_of_ignored_files_is_counted_as_not_restored(project: Workdir) -> None:
    """The target has a file `build` where a directory of ignored files now stands: the ignored files are
    never touched, so `build` cannot come back, and the result line must not count the restore as whole."""
    project.write("build", "a file\n")
    project.ok("snap", "-m", "with build")
    os.unlink(project.path / "build")
    project.write("build/x.log", "ignored\n")
    project.write("notes.txt", "changed\n")
    run = project.rewind("undo", "1", "--yes")
    assert run.returncode == 0
    assert "restored #1: 1 written, 0 removed, 1 not restored (verified)" in run.stdout
    assert "not restored (a directory with uncaptured files is in the way): build" in run.stderr
    assert (project.path / "build" / "x.log").read_text() == "ignored\n"
    assert (project.path / "notes.txt").read_text() == "untracked work\n"


def test_file_replaced_by_directory_and_back(project: Workdir) -> None:
    project.ok("snap")
    os.unlink(project.path / "notes.txt")
    project.write("notes.txt/inside.txt", "now a directory\n")
    os.rename(project.path / "src", project.path / "src_old")
    project.write("src", "now a file\n")
    state_dir = project.state()
    project.ok("snap")
    project.ok("undo", "1", "--yes")
    assert (project.path / "notes.txt").read_text() == "untracked work\n"
    assert (project.path / "src" / "app.py").exists()
    project.ok("redo")
    assert project.state() == state_dir


def test_redo_without_undo_and_unknown_ids_are_one_line_errors(project: Workdir) -> None:
    run = project.rewind("undo", "--yes")
    # Each error says what to do next (the engine's remedy, in the command line's words).
    assert run.returncode == 1 and run.stderr.strip() == (
        "error: no checkpoints yet in this repository; take one with git rewind snap, or let an agent's hooks "
        "take them as it works (git rewind install --agent NAME)")
    project.ok("snap")
    run = project.rewind("redo")
    assert run.returncode == 1 and run.stderr.startswith("error: nothing to redo")
    for bad in ("99", "@~5", "deadbeef", "nonsense"):
        run = project.rewind("undo", bad, "--yes")
        assert run.returncode == 1, bad
        assert run.stderr.startswith("error: unknown checkpoint") and len(run.stderr.splitlines()) == 1
        assert run.stderr.strip().endswith("; git rewind list shows the ids there are (with --remote NAME, the "
                                           "fetched ones)"), run.stderr


def test_undo_to_current_state_does_nothing(project: Workdir) -> None:
    project.ok("snap")
    out = project.ok("undo", "--yes")
    assert "already matches #1" in out
    assert len(_notes(project)) == 1


def test_undo_from_subdirectory(project: Workdir) -> None:
    project.ok("snap")
    project.write("src/app.py", "changed\n")
    project.ok("undo", "1", "--yes", "--only", "app.py", cwd=project.path / "src")
    assert (project.path / "src" / "app.py").read_text() == "print('hello')\n"


def _run_on_tty(w: Workdir, args: list[str], answer: bytes) -> tuple[int, bytes]:
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(w.path)
        os.execvpe(REWIND[0], [*REWIND, *args], w.env)
    output = b""
    deadline = time.monotonic() + 30
    sent = False
    while time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
        if not sent and b"[y/N]" in output:
            os.write(fd, answer)
            sent = True
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), output


def test_tty_asks_before_restoring(project: Workdir) -> None:
    project.ok("snap")
    project.write("src/app.py", "changed\n")
    code, out = _run_on_tty(project, ["undo", "1"], b"n\n")
    assert b"Rewind the working tree to #1?" in out and code == 1
    assert (project.path / "src" / "app.py").read_text() == "changed\n"
    code, out = _run_on_tty(project, ["undo", "1"], b"y\n")
    assert code == 0 and b"restored #1" in out
    assert (project.path / "src" / "app.py").read_text() == "print('hello')\n"


def test_leftover_temporary_files_of_a_killed_restore_are_swept(project: Workdir) -> None:
    project.ok("snap")
    tmp = project.write("src/.app.py.rewind-tmp", "half written")
    (project.path / ".git" / "rewind" / "restore.journal").write_bytes(b"src/.app.py.rewind-tmp\0")
    project.write("notes.txt", "v2\n")
    project.ok("snap")
    assert not tmp.exists()
    files = project.git("ls-tree", "-r", "--name-only", "refs/rewind/manual").split()
    assert "src/.app.py.rewind-tmp" not in files


# What a restore may touch: the pieces of a plan, on real trees -------------------------------------


def _repo(w: Workdir) -> Repo:
    return Repo.discover(str(w.path))


def test_diff_lists_every_change_between_two_trees(project: Workdir, git_environ: dict[str, str]) -> None:
    """Additions, removals, content and mode changes, links: with the modes the restore writes."""
    old = Oid(project.tree_of("HEAD"))
    project.write("src/app.py", "changed\n")
    project.write("new/file.txt", "new\n")
    (project.path / "bin" / "run.sh").chmod(0o644)
    os.unlink(project.path / "README.md")
    os.symlink("src/app.py", project.path / "link")
    new = Oid(project.add_all_tree())
    changes = {c.path: c for c in restore._diff(_repo(project), old, new)}
    blob = project.git("rev-parse", f"{new}:src/app.py").strip()
    assert changes["src/app.py"] == restore.Change("src/app.py", 0o100644, blob, 0o100644)
    assert changes["README.md"] == restore.Change("README.md", None, None, 0o100644)
    assert changes["new/file.txt"].mode == 0o100644 and changes["new/file.txt"].old_mode is None
    assert (changes["bin/run.sh"].mode, changes["bin/run.sh"].old_mode) == (0o100644, 0o100755)
    assert changes["link"].mode == 0o120000
    assert "notes.txt" in changes  # untracked work is part of the new tree
    assert not {".env", "debug.log"} & changes.keys()  # ignored files are in neither tree
    assert restore._diff(_repo(project), new, new) == []


def test_a_parent_path_is_created_unless_a_file_or_a_link_stands_in_its_way(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "dir").mkdir(parents=True)
    (root / "file").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(str(outside), root / "link")
    folders: set[str] = set()  # one restore's: each directory looked at once
    assert restore._ensure_parent(str(root), "dir/a/b/c.txt", folders) and (root / "dir" / "a" / "b").is_dir()
    assert restore._ensure_parent(str(root), "dir/a/b/d.txt", folders)
    assert restore._ensure_parent(str(root), "top.txt", folders)
    for _ in range(2):  # (a second time: what stood in the way is not taken for a directory)
        assert not restore._ensure_parent(str(root), "file/c.txt", folders)
        assert not restore._ensure_parent(str(root), "link/c.txt", folders)  # never through a link, even to a dir
        assert not restore._ensure_parent(str(root), "link/a/c.txt", folders) and list(outside.iterdir()) == []


def test_a_write_goes_through_a_temporary_name_and_never_through_a_link(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(str(outside), root / "link")
    (root / "busy" / "inner").mkdir(parents=True)

    def change(path: str, mode: int = 0o100644) -> restore.Change:
        return restore.Change(path, mode, "0" * 40, None)

    def write(c: restore.Change, data: bytes, umask: int) -> bool:
        return restore._write(str(root), c, data, umask, journal.temp_name(c.path, journal.new_token()), set())

    assert write(change("a/b.txt"), b"content", 0o022)
    assert (root / "a" / "b.txt").read_bytes() == b"content"
    assert (root / "a" / "b.txt").stat().st_mode & 0o777 == 0o644
    assert write(change("run.sh", 0o100755), b"#!/bin/sh\n", 0o027)
    assert (root / "run.sh").stat().st_mode & 0o777 == 0o750
    assert write(change("ln", 0o120000), b"a/b.txt", 0o022)
    assert os.readlink(root / "ln") == "a/b.txt"
    assert not write(change("link/escape.txt"), b"x", 0o022)  # a link in the way
    assert not write(change("busy"), b"x", 0o022)  # a directory with content
    assert list(outside.iterdir()) == [] and (root / "busy" / "inner").is_dir()
    assert write(change("a/b.txt"), b"again", 0o022)  # replaces the file in place
    leftovers = [p.name for p in root.rglob("*") if p.name.endswith(".rewind-tmp")]
    assert (root / "a" / "b.txt").read_bytes() == b"again" and leftovers == []


def test_only_directories_left_empty_by_removals_are_removed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for rel in ("a/b/c", "a/keep", "d/e", "other"):
        (root / rel).mkdir(parents=True)
    (root / "a" / "keep" / "ignored.log").write_text("x")
    restore._remove_empty_dirs(str(root), ["a/b/c/gone.txt", "d/e/gone.txt", "top.txt"])
    assert not (root / "a" / "b").exists() and not (root / "d").exists()
    assert (root / "a" / "keep" / "ignored.log").exists()  # what the restore did not remove stays
    assert (root / "other").is_dir() and root.is_dir()  # directories no removal emptied stay


def test_uncaptured_and_mode_only_changes(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "dir").mkdir(parents=True)
    (root / "file").write_bytes(b"same\n")
    os.symlink("missing", root / "dangling")
    assert restore._uncaptured_file(str(root / "file")) and restore._uncaptured_file(str(root / "dangling"))
    assert not restore._uncaptured_file(str(root / "dir")) and not restore._uncaptured_file(str(root / "none"))
    oid = snapshot.blob_oid(b"same\n")
    repo = Repo(str(root), str(root / ".git"), str(root / ".git"))  # a plain folder: SHA-1 names
    assert restore._same_content_new_mode(repo, restore.Change("file", 0o100755, oid, 0o100644))
    assert not restore._same_content_new_mode(repo, restore.Change("file", 0o100755, "0" * 40, 0o100644))
    assert not restore._same_content_new_mode(repo, restore.Change("file", 0o100644, oid, 0o100644))
    assert not restore._same_content_new_mode(repo, restore.Change("file", 0o100755, oid, None))
    assert not restore._same_content_new_mode(repo, restore.Change("file", 0o120000, oid, 0o100644))
    assert not restore._same_content_new_mode(repo, restore.Change("gone", 0o100755, oid, 0o100644))


# Content git converts between the store and the disk ---------------------------------------------
#
# The oracle is git's own checkout: every file is first written by `git checkout`, checkpointed, then
# changed (sizes too); `undo` must write back exactly the bytes git checkout wrote (issue 12, item 3).

UPPER_FILTER = """#!/bin/sh
# smudge: a header line on top and every letter upper-cased (changes the size); clean: the reverse
if [ "$1" = smudge ]; then printf '# generated\\n'; tr 'a-z' 'A-Z'; else sed '1{/^# generated$/d;}' | tr 'A-Z' 'a-z'; fi
"""


def _setup_converting(w: Workdir, kind: str) -> None:
    if kind == "eol":
        w.write(".gitattributes", "*.bat text eol=crlf\n*.txt text\n")
    elif kind == "nested-eol":
        w.write("win/.gitattributes", "*.bat text eol=crlf\n")
    elif kind == "encoding":
        w.write(".gitattributes", "*.u16 text working-tree-encoding=UTF-16LE eol=lf\n")
    elif kind == "filter":
        script = w.path.parent / "upper.sh"  # outside the work tree: present whatever a checkout does
        script.write_text(UPPER_FILTER)
        script.chmod(0o755)
        w.git("config", "filter.upper.smudge", f"{script} smudge")
        w.git("config", "filter.upper.clean", f"{script} clean")
        w.git("config", "filter.upper.required", "true")
        w.write(".gitattributes", "*.up filter=upper\n")
    elif kind == "autocrlf":
        w.git("config", "core.autocrlf", "true")
    w.write("run.bat", "echo a\necho b\n")
    w.write("win/run.bat", "echo c\n")
    w.write("notes.txt", "one\ntwo\n")
    w.write("data.u16", "plain\n")
    if kind == "encoding":
        w.write("data.u16", "héllo\nwörld\n".encode("utf-16-le"))
    w.write("code.up", "some text\nmore text\n")
    w.commit_all("converting")
    for path in w.git("ls-files").split():  # now every file is what git's checkout writes
        (w.path / path).unlink()
    w.git("checkout", "--", ".")


@pytest.mark.parametrize("kind", ["eol", "nested-eol", "encoding", "filter", "autocrlf"])
def test_a_restore_writes_what_git_checkout_writes_when_git_converts_content(repo: Workdir, kind: str) -> None:
    _setup_converting(repo, kind)
    checked_out = {p: (repo.path / p).read_bytes() for p in repo.git("ls-files").split()}
    assert repo.ok("snap", "-m", "as checked out").startswith("#1 ")
    assert repo.tree_of("refs/rewind/manual") == repo.add_all_tree()
    for path in ("run.bat", "win/run.bat", "notes.txt", "code.up"):
        repo.write(path, "CHANGED, and longer than it was\r\nsecond line\r\n")
    (repo.path / "data.u16").unlink()
    # A named-path checkpoint of a converted file must equal git's own add -A too.
    repo.ok("snap", "--path", "run.bat", "--path", "win/run.bat", "--session", "s")
    assert repo.tree_of("refs/rewind/s") == repo.add_all_tree()
    out = repo.ok("undo", "1", "--yes")
    assert "restored #1: 5 written, 0 removed (verified)" in out  # the read-back does not cry wolf (item 16)
    if kind == "filter":
        assert checked_out["code.up"] == b"# generated\nSOME TEXT\nMORE TEXT\n"  # the oracle did smudge
    for path, data in checked_out.items():
        assert (repo.path / path).read_bytes() == data, path
    assert repo.git("status", "--porcelain") == ""
    assert "(verified)" in repo.ok("redo", "--yes")
    assert (repo.path / "run.bat").read_bytes() == b"CHANGED, and longer than it was\r\nsecond line\r\n"
    assert not (repo.path / "data.u16").exists()
    assert not [p for p in (repo.path / ".git" / "rewind").iterdir() if p.name.startswith("restore-")]
    repo.fsck()


def test_a_large_file_created_after_a_checkpoint_survives_undo_and_redo(project: Workdir) -> None:
    """A file over max_file_size is never captured, so a restore must never remove it: it plans against
    the tree its safety checkpoint records, large files left out (issue 12, item 1)."""
    project.env["GIT_REWIND_MAX_FILE_SIZE"] = "1k"
    project.ok("snap", "-m", "before the big file")
    big = b"x" * 5000
    project.write("data/big.bin", big)
    project.write("notes.txt", "changed\n")
    out = project.rewind("undo", "1", "--yes")
    assert out.returncode == 0 and "restored #1" in out.stdout, out.stderr
    assert (project.path / "data" / "big.bin").read_bytes() == big
    assert (project.path / "notes.txt").read_text() == "untracked work\n"
    safety = project.git("ls-tree", "-r", "--name-only", "refs/rewind/manual").split()
    assert "data/big.bin" not in safety and "notes.txt" in safety
    note = json.loads(project.git("notes", "--ref=rewind", "show", "refs/rewind/manual"))
    assert [e["path"] for e in note["skipped"]] == ["data/big.bin"]
    project.ok("redo", "--yes")
    assert (project.path / "data" / "big.bin").read_bytes() == big
    assert (project.path / "notes.txt").read_text() == "changed\n"
    # A file that was small at the checkpoint and grew past the limit is left as it is too.
    project.write("notes.txt", "y" * 5000)
    project.ok("undo", "1", "--yes")
    assert (project.path / "notes.txt").read_text() == "y" * 5000
    project.fsck()


def test_an_undo_never_uninstalls_git_rewind(project: Workdir) -> None:
    """Restoring a checkpoint taken before `install` restores the rest of the agents' settings files but
    keeps git-rewind's own entries, slash commands and configuration, and says so (issue 12, item 6)."""
    project.write(".claude/settings.json", '{"model": "opus"}\n')
    project.ok("snap", "-m", "before install")
    project.write(".claude/settings.json", '{"model": "sonnet"}\n')
    project.ok("install", "--agent", "claude-code", "--scope", "project")
    project.ok("install", "--agent", "claude-code", "--scope", "project", "--mcp")
    project.ok("config", "set", "tier", "aggressive")
    preview = project.ok("undo", "1", "--dry-run")
    assert "leave   .git-rewind.toml (git-rewind's own settings)" in preview
    out = project.ok("undo", "1", "--yes")
    assert f"kept git-rewind installed: its entries are back in {project.path / '.claude' / 'settings.json'}" in out
    settings = json.loads((project.path / ".claude" / "settings.json").read_text())
    assert settings["model"] == "opus"  # the rest of the file is as the checkpoint had it
    assert "git-rewind" in json.dumps(settings["hooks"]["PreToolUse"])
    assert sorted(p.name for p in (project.path / ".claude" / "commands").iterdir()) == [
        "checkpoint.md", "resume.md", "rewind.md"]
    assert "git-rewind" in json.loads((project.path / ".mcp.json").read_text())["mcpServers"]
    assert (project.path / ".git-rewind.toml").read_text() == 'tier = "aggressive"\n'
    status = project.ok("status")
    assert "claude-code  project" in status and "tier: aggressive" in status


def test_a_filter_that_fails_stops_the_restore_before_any_file_changes(repo: Workdir) -> None:
    """When git writes the contents (a required smudge filter) and fails, the restore stops with one error
    before it has removed or written anything; the safety checkpoint holds the state it left."""
    _setup_converting(repo, "filter")
    repo.ok("snap", "-m", "as checked out")
    repo.write("code.up", "changed\n")
    repo.write("extra.txt", "created after the checkpoint\n")  # the restore would remove it
    before = {p: (repo.path / p).read_bytes() for p in ("code.up", "extra.txt", "run.bat")}
    repo.git("config", "filter.upper.smudge", "false")  # the filter now fails, as a broken git-lfs would
    run = repo.rewind("undo", "1", "--yes")
    assert run.returncode != 0 and run.stderr.startswith("error: ") and len(run.stderr.strip().splitlines()) == 1
    assert {p: (repo.path / p).read_bytes() for p in before} == before
    assert not [p for p in (repo.path / ".git" / "rewind").iterdir() if p.name.startswith("restore-")]
    assert repo.git("show", "refs/rewind/manual:extra.txt") == "created after the checkpoint\n"
    repo.fsck()


# --only: git's own pathspec rules (issue 12, item 12) ------------------------------------------------


def test_only_follows_gits_pathspec_rules(project: Workdir) -> None:
    """`--only` takes git pathspecs, read from the current directory: globs, `:(top)`, and `src` never
    matches a sibling `src2/`; redo brings back exactly what the undo restored."""
    project.write("src/deep/x.py", "x = 1\n")
    project.write("src2/app.py", "sibling\n")
    project.ok("snap")
    for path in ("src/app.py", "src/deep/x.py", "src2/app.py", "README.md", "notes.txt"):
        project.write(path, "changed\n")
    src = project.path / "src"
    named, preview = project.ok("undo", "1", "--dry-run", "--only", "src").split("\n", 1)
    assert named.startswith("undo to #1 (manual, ")  # its message names the paths snapped, src2 among them
    assert "write   src/app.py" in preview and "write   src/deep/x.py" in preview and "src2" not in preview
    out = project.ok("undo", "1", "--yes", "--only", "*.py", cwd=src)  # the glob is read from src/
    assert "restored #1: 2 written, 0 removed" in out
    assert (src / "app.py").read_text() == "print('hello')\n" and (src / "deep" / "x.py").read_text() == "x = 1\n"
    assert (project.path / "src2" / "app.py").read_text() == "changed\n"
    project.ok("undo", "1", "--yes", "--only", ":(top)README.md", cwd=src)
    assert (project.path / "README.md").read_text() == "# demo\n"
    assert (project.path / "notes.txt").read_text() == "changed\n"
    # redo of the README undo brings back README only, from wherever it is run
    project.write("src/app.py", "edited after the undo\n")
    project.ok("redo", "--yes")
    assert (project.path / "README.md").read_text() == "changed\n"
    assert (src / "app.py").read_text() == "edited after the undo\n"


def test_a_pathspec_that_matches_nothing_is_an_error_and_changes_nothing(project: Workdir) -> None:
    project.ok("snap")
    project.write("src/app.py", "changed\n")
    state, refs = project.state(), project.git("for-each-ref")
    for args in (["--only", "nothing-here"], ["--only", "src/app.py", "--only", "*.rs"], ["--only", "app.py"],
                 ["--only", ".env"]):  # ignored: on disk, but never in a checkpoint
        run = project.rewind("undo", "1", "--yes", *args)
        assert run.returncode == 1 and len(run.stderr.splitlines()) == 1, run
        assert "matches no file in #1 nor in the working tree (ignored files are never restored); nothing " \
               "changed" in run.stderr
        assert project.state() == state and project.git("for-each-ref") == refs
    # the error names the pathspecs that match nothing, not the others; --dry-run checks them too
    run = project.rewind("undo", "1", "--yes", "--only", "src/app.py", "--only", "*.rs", "--only", "x/")
    assert run.stderr.startswith("error: --only *.rs, x/: matches no file in #1")
    assert project.rewind("undo", "1", "--dry-run", "--only", "*.rs").returncode == 1


# temporary names never meet a file of the user's (issue 12, item 14) ----------------------------------


def test_a_users_file_named_like_a_temporary_file_survives_a_restore(project: Workdir) -> None:
    project.ok("snap")
    project.write("src/app.py", "changed\n")
    with open(project.path / ".git" / "info" / "exclude", "a") as fh:
        fh.write("*.rewind-tmp\n")
    mine = project.write("src/.app.py.rewind-tmp", "my own notes\n")
    out = project.ok("undo", "1", "--yes")
    assert "restored #1: 1 written" in out
    assert (project.path / "src" / "app.py").read_text() == "print('hello')\n"
    assert mine.read_text() == "my own notes\n"
    assert sorted(p.name for p in (project.path / "src").iterdir()) == [".app.py.rewind-tmp", "app.py"]
    project.ok("snap", "--allow-empty")  # the next command's sweep leaves it too
    assert mine.read_text() == "my own notes\n"


# a restore is read back before it is reported (issue 12, item 16) -------------------------------------


def _unwritable(path: Path) -> bool:
    """Make directory PATH refuse new entries, as a read-only mount or another owner's folder does
    (root ignores permissions: the immutable bit then); False where neither is possible."""
    if os.geteuid() != 0:
        path.chmod(0o555)
        return True
    return subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0


def _writable(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)
    path.chmod(0o755)


def test_a_restore_that_did_not_happen_is_never_reported_as_done(project: Workdir) -> None:
    """A directory the restore cannot write in: the paths it could not write or remove are listed, the
    exit status is 4, the rest is restored, and the safety checkpoint holds the state before."""
    project.ok("snap")
    project.write("src/app.py", "changed\n")
    project.write("src/new.py", "created after the checkpoint\n")
    project.write("notes.txt", "changed too\n")
    if not _unwritable(project.path / "src"):
        pytest.skip("no way to make a directory unwritable here")
    try:
        run = project.rewind("undo", "1", "--yes")
    finally:
        _writable(project.path / "src")
    assert run.returncode == 4, run
    assert "restored #1" not in run.stdout and "verified" not in run.stdout
    lines = run.stderr.splitlines()
    assert lines[0] == "error: the restore to #1 did not fully happen: 2 paths not as #1 has them"
    assert any(line.startswith("  src/app.py: not written:") for line in lines)
    assert any(line.startswith("  src/new.py: not removed:") for line in lines)
    assert "safety checkpoint #2" in lines[-1]
    assert (project.path / "notes.txt").read_text() == "untracked work\n"  # the rest was restored
    assert (project.path / "src" / "app.py").read_text() == "changed\n"
    assert project.git("show", "refs/rewind/manual:src/app.py") == "changed\n"
    assert not list(project.path.rglob("*.rewind-tmp"))
    assert "restored #1: 1 written, 1 removed (verified)" in project.ok("undo", "1", "--yes")
    project.fsck()


def test_the_read_back_finds_every_way_a_path_can_differ(project: Workdir, git_environ: dict[str, str]) -> None:
    """What the read-back compares, on a real restore: contents (hashed by git), exec bits, links, and
    removed paths; then each is spoiled as a writer racing the restore (an agent still running, an
    editor saving its old buffer) would."""
    from git_rewind.store import checkpoints

    os.symlink("README.md", project.path / "link")
    project.ok("snap")
    project.write("src/app.py", "changed\n")
    (project.path / "bin" / "run.sh").chmod(0o644)
    (project.path / "link").unlink()
    os.symlink("notes.txt", project.path / "link")
    project.write("new.txt", "created after the checkpoint\n")
    repo = _repo(project)
    outcome = restore.rewind(repo, checkpoints.lookup(repo, "1"), [], 1 << 20, verify=False)
    assert not outcome.verified and sorted(outcome.written) == ["bin/run.sh", "link", "src/app.py"]
    assert outcome.removed == ["new.txt"]
    expected: dict[str, tuple[int, str]] = {}
    for c in outcome.plan.writes:
        assert c.mode is not None and c.oid is not None  # a write, not a removal
        expected[c.path] = (c.mode, c.oid)
    assert restore._verify(repo, outcome, expected) == []
    project.write("src/app.py", "print('hello')\r\n")  # one byte more
    (project.path / "bin" / "run.sh").chmod(0o644)
    (project.path / "link").unlink()
    project.write("link", "README.md")  # a file holding the link's target
    project.write("new.txt", "back again\n")
    assert dict(restore._verify(repo, outcome, expected)) == {
        "src/app.py": "content differs from the checkpoint after it was written",
        "bin/run.sh": "executable bit differs",
        "link": "not the symbolic link the checkpoint has",
        "new.txt": "still there after its removal",
    }


def test_verification_does_not_false_alarm_on_crlf_blobs_under_text_auto(repo: Workdir) -> None:
    """A blob committed with CRLF before `* text=auto` came: git's checkout writes it as it is, and hashing
    it back through the clean side would normalise it. The read-back compares the bytes git wrote."""
    repo.write("win.txt", b"one\r\ntwo\r\n")
    repo.write("plain.txt", "one\ntwo\n")
    repo.commit_all("crlf committed")
    repo.write(".gitattributes", "* text=auto\n")
    repo.ok("snap")
    repo.write("win.txt", "edited\n")
    repo.write("plain.txt", "edited\n")
    out = repo.ok("undo", "1", "--yes")
    assert "restored #1: 2 written, 0 removed (verified)" in out
    assert (repo.path / "win.txt").read_bytes() == b"one\r\ntwo\r\n"


# what a restore does not do (issue 12, item 17) ---------------------------------------------------------


def test_undo_warns_about_another_branch_and_ignored_files_changed_since(project: Workdir) -> None:
    hour_ago = time.time() - 3600
    for path in ("debug.log", ".env", "node_modules", "node_modules/pkg", "node_modules/pkg/index.js"):
        os.utime(project.path / path, (hour_ago, hour_ago))
    project.ok("snap")  # on main
    main_head = project.git("rev-parse", "--short=7", "HEAD").strip()
    project.git("checkout", "-q", "-b", "feature")
    project.write("README.md", "# on feature\n")
    project.commit_all("feature work")
    feature_head = project.git("rev-parse", "--short=7", "HEAD").strip()
    project.write(".env", "SECRET=2\n")
    project.write("node_modules/fresh.js", "installed since\n")
    project.write("src/app.py", "changed\n")
    run = project.rewind("undo", "1", "--dry-run")
    assert run.returncode == 0
    assert (f"warning: #1 was taken on branch main ({main_head}); you are on branch feature ({feature_head}): "
            "files come back as they were then, the branch and HEAD stay") in run.stderr
    assert ("warning: ignored files changed since #1, left as they are: .env, node_modules/"
            in run.stderr.splitlines())
    out = project.rewind("undo", "1", "--yes")
    assert out.returncode == 0 and "restored #1" in out.stdout
    assert "taken on branch main" in out.stderr and ".env, node_modules/" in out.stderr
    assert (project.path / ".env").read_text() == "SECRET=2\n"
    # same branch, HEAD moved: said too; the same branch and HEAD: nothing to say
    project.git("checkout", "-q", "-f", "main")
    project.ok("snap", "-m", "on main")
    project.git("commit", "-q", "--allow-empty", "-m", "later")
    assert "and HEAD is at" in project.rewind("undo", "@", "--dry-run").stderr
    project.git("reset", "-q", "--hard", "HEAD~1")
    assert "warning: #" not in project.rewind("undo", "@", "--dry-run").stderr


def test_a_restore_writes_only_the_paths_that_differ(project: Workdir) -> None:
    """Files the target has as they are on disk are never rewritten: same inode, same modification time
    (an editor, a build watcher or `make` sees no change); only the changed file, the removed one and the
    mode change are touched."""
    for i in range(30):
        project.write(f"lib/m{i}.py", f"module {i}\n")
    project.ok("snap", "-m", "good")
    good = project.state()
    project.write("lib/m3.py", "broken\n")
    project.write("lib/extra.py", "new\n")
    (project.path / "bin" / "run.sh").chmod(0o644)
    touched = {"lib/m3.py", "lib/extra.py", "bin/run.sh"}
    time.sleep(0.01)  # a rewrite now would show in the modification time, whatever its granularity
    before = {str(p.relative_to(project.path)): (p.stat().st_ino, p.stat().st_mtime_ns)
              for p in project.path.rglob("*") if p.is_file() and ".git" not in p.parts}
    out = project.ok("undo", "1", "--yes")
    assert "restored #1: 2 written, 1 removed (verified)" in out
    assert project.state() == good
    after = {str(p.relative_to(project.path)): (p.stat().st_ino, p.stat().st_mtime_ns)
             for p in project.path.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert {p: v for p, v in after.items() if p not in touched} == \
        {p: v for p, v in before.items() if p not in touched}
    assert after["lib/m3.py"] != before["lib/m3.py"]  # (the check can see a rewrite)


def test_a_secret_the_target_ignores_changed_since_it_was_captured_never_reaches_the_objects(
        project: Workdir) -> None:
    """The agent's .gitignore stopped ignoring .env, a checkpoint captured it (those rules said so), the
    secret changed: the undo to a checkpoint whose rules ignore .env neither captures nor stores the new secret,
    though the private index holds .env from that checkpoint (git add never reads it)."""
    project.ok("snap", "-m", "good")
    project.write(".gitignore", "node_modules/\n*.log\n")
    project.ok("snap", "-m", "rules changed")
    project.write(".env", "SECRET=rotated\n")
    project.write("src/app.py", "changed\n")
    project.ok("undo", "1", "--yes")
    safety = _notes(project)[0]
    assert ".env" not in project.git("ls-tree", "-r", "--name-only", safety["commit"]).split()
    assert (project.path / ".env").read_text() == "SECRET=rotated\n"
    rotated = project.git("hash-object", ".env").strip()
    assert subprocess.run(["git", "cat-file", "-e", rotated], cwd=project.path, env=project.env).returncode != 0


# Read in process (the daemon: objects.reader) ------------------------------------------------------------------


@pytest.fixture
def reads_in_process() -> Any:
    """objects.in_process switched on in the test process (as the daemon has it), and off again after."""
    from git_rewind.base import objects

    objects.in_process(True)
    yield objects
    objects.close()


def _traced(tmp_path: Path, call: Any) -> list[str]:
    """The git commands CALL started in this process (GIT_TRACE)."""
    trace = tmp_path / "trace"
    trace.unlink(missing_ok=True)
    os.environ["GIT_TRACE"] = str(trace)
    try:
        call()
    finally:
        del os.environ["GIT_TRACE"]
    lines = trace.read_text().splitlines() if trace.exists() else []
    return [line.split("trace: built-in: git ", 1)[1] for line in lines if "trace: built-in: git " in line]


def _restores_own(spawned: list[str]) -> list[str]:
    """Of SPAWNED, what reads the target's tree, compares trees for the plan, or reads and writes blobs (the
    safety checkpoint's own `diff-tree --name-status` is the store's)."""
    return [c for c in spawned if c.startswith(("cat-file", "rev-parse", "checkout-index"))
            or c.startswith("diff-tree") and "--name-status" not in c]


def test_the_daemons_tree_diff_is_git_diff_trees(project: Workdir, git_environ: dict[str, str],
                                                 reads_in_process: Any) -> None:
    """restore._diff read by pygit2 gives git's own changes, in git's order: type changes (a file becoming a
    link), a file becoming a directory, exec bits, gitlinks, names that sort around a slash, non-UTF-8 names."""
    w = project
    repo = Repo.discover(str(w.path))
    w.write("a.b", "1\n")
    w.write("a/x", "1\n")
    w.write("a-c", "1\n")
    w.write("kind", "file\n")
    w.write("dir", "file\n")
    (w.path / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1 name\n")
    w.git("add", "-A")
    old = Oid(w.git("write-tree").strip())
    (w.path / "kind").unlink()
    os.symlink("README.md", w.path / "kind")
    (w.path / "dir").unlink()
    w.write("dir/inner", "now a directory\n")
    os.chmod(w.path / "src/app.py", 0o755)
    w.write("a/x", "2\n")
    (w.path / "a.b").unlink()
    (w.path / os.fsdecode(b"caf\xe9.txt")).write_text("changed\n")
    w.git("add", "-A")
    w.git("update-index", "--add", "--cacheinfo", f"160000,{w.git('rev-parse', 'HEAD').strip()},vendored")
    new = Oid(w.git("write-tree").strip())
    assert reads_in_process.reader(repo) is not None
    for a, b in ((old, new), (new, old)):
        ours = restore._diff(repo, a, b)
        reads_in_process.in_process(False)
        git = restore._diff(repo, a, b)
        reads_in_process.in_process(True)
        assert ours == git
        assert len(git) >= 8


def test_a_restore_in_the_daemon_reads_objects_itself_and_stays_byte_exact(
        project: Workdir, tmp_path: Path, git_environ: dict[str, str], reads_in_process: Any) -> None:
    """No `cat-file`, `rev-parse` or `diff-tree` for a restore where the daemon reads objects: git runs only its
    ignored listing and the index check; where git converts content, git's checkout-index still writes it."""
    from git_rewind.store import checkpoints

    w = project
    repo = Repo.discover(str(w.path))
    w.write("bin/data", b"\x00\x01binary\n")
    os.symlink("README.md", w.path / "link")
    w.ok("snap", "-m", "target")
    w.ok("snap", "--allow-empty", "-m", "later")  # the target is not the session's tip: its tree is looked up
    target = checkpoints.lookup(repo, "1", checkpoints.load_all(repo), repo.worktree)
    expected = {rel: (w.path / rel).read_bytes() for rel in ("src/app.py", "bin/data", "README.md")}
    w.write("src/app.py", "print('edited')\n")
    (w.path / "bin/data").unlink()
    (w.path / "link").unlink()
    w.write("link", "a file now\n")
    w.write("extra.txt", "new\n")
    done: list[restore.Outcome] = []
    spawned = _traced(tmp_path, lambda: done.append(restore.rewind(repo, target, [], 10 << 20)))
    assert done[0].verified and sorted(done[0].written) == ["bin/data", "link", "src/app.py"]
    assert _restores_own(spawned) == []
    assert {rel: (w.path / rel).read_bytes() for rel in expected} == expected
    assert os.readlink(w.path / "link") == "README.md" and not (w.path / "extra.txt").exists()

    w.git("config", "core.autocrlf", "true")  # now git converts: its checkout-index writes the files
    w.write(".gitattributes", "*.txt text eol=crlf\n")
    w.write("notes.txt", "one\ntwo\n")
    w.ok("snap", "-m", "eol")
    eol = checkpoints.lookup(repo, "4", checkpoints.load_all(repo), repo.worktree)
    w.write("notes.txt", "edited\n")
    spawned = _traced(tmp_path, lambda: done.append(restore.rewind(repo, eol, [], 10 << 20)))
    assert done[-1].verified and [c.split(" ")[0] for c in _restores_own(spawned)] == ["checkout-index"]
    assert (w.path / "notes.txt").read_bytes() == b"one\r\ntwo\r\n"
