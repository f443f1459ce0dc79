"""What `git add` decides from the user's index, decided the same way: CRLF already in the index, modes under
core.fileMode=false and core.symlinks=false, a submodule that is not checked out; by the whole-tree scan, the
daemon and `--path` alike. Each checkpoint is held against `git add -A` in a copy of the user's index.

Every scenario here once stored another tree than git (found by replaying real histories,
tests/test_real_history.py): a CRLF file deleted and brought back was stored LF, and an undo then wrote LF
over it.
"""

from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path

import pytest
from helpers import daemon
from helpers.workdir import Workdir

CRLF = b"one\r\ntwo\r\n"


def _tree(w: Workdir, ref: str = "refs/rewind/manual") -> str:
    return w.tree_of(ref)


def _blob(w: Workdir, path: str, ref: str = "refs/rewind/manual") -> bytes:
    return subprocess.run(["git", "cat-file", "blob", f"{ref}:{path}"], cwd=w.path, env=w.env, capture_output=True,
                          check=True).stdout


def _crlf_in_index(w: Workdir, path: str, content: bytes = CRLF) -> None:
    """PATH committed with CRLF in its blob (as before the repository had attributes), then `* text=auto
    eol=lf`: the state of jq's decNumber files and of many Windows-born projects."""
    w.write(path, content)
    w.git("add", path)
    w.write(".gitattributes", "* text=auto eol=lf\n")
    w.git("add", ".gitattributes")
    w.git("commit", "-q", "-m", "CRLF committed, then attributes")
    assert w.git("ls-files", "--eol", path).startswith("i/crlf")


def test_a_crlf_file_deleted_and_brought_back_keeps_its_crlf(project: Workdir) -> None:
    _crlf_in_index(project, "lib/data.txt")
    project.ok("snap")
    (project.path / "lib/data.txt").unlink()
    project.ok("snap")  # the private index no longer has the path
    project.write("lib/data.txt", CRLF + b"three\r\n")
    project.ok("snap")
    assert _blob(project, "lib/data.txt") == CRLF + b"three\r\n"
    assert _tree(project) == project.add_all_tree()
    project.write("lib/data.txt", b"replaced\n")
    project.ok("undo", "3", "--yes")  # the undo writes CRLF back, as git's checkout does
    assert (project.path / "lib/data.txt").read_bytes() == CRLF + b"three\r\n"


def test_a_crlf_file_written_lf_then_crlf_again_keeps_its_crlf(project: Workdir) -> None:
    """The same text with other line ends hashes to the same blob under the private index's reference, so the
    scan's own changes do not show it: every path that differs from the user's index is looked at (found by the
    full replay of jq: an undo wrote LF, the redo CRLF again)."""
    _crlf_in_index(project, "lib/data.c")
    project.write("lib/data.c", b"one\ntwo\n")
    project.ok("snap")
    assert _blob(project, "lib/data.c") == b"one\ntwo\n"
    project.write("lib/data.c", CRLF)
    project.write("notes.txt", "something else changed\n")
    project.ok("snap")
    assert _blob(project, "lib/data.c") == CRLF
    assert _tree(project) == project.add_all_tree()


def test_a_crlf_file_that_arrives_by_checkout_keeps_its_crlf(project: Workdir) -> None:
    project.ok("snap")  # the private index is seeded here, without the file
    base = project.git("rev-parse", "HEAD").strip()
    _crlf_in_index(project, "vendor/win.c")
    later = project.git("rev-parse", "HEAD").strip()
    project.git("checkout", "-q", base)
    project.ok("snap")
    project.git("checkout", "-q", later)  # what a pull does: the file arrives with the user's index
    project.write("vendor/win.c", CRLF + b"edited\r\n")
    project.ok("snap")
    assert _blob(project, "vendor/win.c") == CRLF + b"edited\r\n"
    assert _tree(project) == project.add_all_tree()


def test_a_file_whose_crlf_the_user_normalised_is_stored_normalised(project: Workdir) -> None:
    """The other way round: the user's index now holds LF (git add --renormalize), the private index still
    CRLF; git add then converts, and so does the checkpoint."""
    _crlf_in_index(project, "notes.md")
    project.write("notes.md", CRLF + b"more\r\n")
    project.ok("snap")
    assert b"\r\n" in _blob(project, "notes.md")
    project.git("add", "--renormalize", "notes.md")
    project.git("commit", "-q", "-m", "normalised")
    project.write("notes.md", CRLF + b"more\r\nand more\r\n")
    project.ok("snap")
    assert _blob(project, "notes.md") == b"one\ntwo\nmore\nand more\n"
    assert _tree(project) == project.add_all_tree()


def test_with_the_daemon_a_file_whose_index_blob_has_crlf_keeps_it(project: Workdir,
                                                                   daemons: list[Workdir]) -> None:
    _crlf_in_index(project, "src/dos.txt")
    daemons.append(project)
    project.ok("daemon", "start")
    project.ok("snap")
    project.write("src/dos.txt", CRLF + b"edited\r\n")
    (project.path / "lib").mkdir()
    project.write("lib/new.txt", b"new\r\nfile\r\n")  # no index entry: git normalises it
    project.ok("snap")
    assert daemon.answered(project)["changes"] >= 2  # the daemon's paths built both checkpoints
    assert _blob(project, "src/dos.txt") == CRLF + b"edited\r\n"
    assert _blob(project, "lib/new.txt") == b"new\nfile\n"
    assert _tree(project) == project.add_all_tree()


def test_with_the_daemon_a_checkout_under_it_changes_the_reference_too(project: Workdir,
                                                                       daemons: list[Workdir]) -> None:
    """The user's index moved (a commit that normalised a file) while the file on disk did not change: the
    daemon names no path, and the checkpoint still decides as the user's index now does."""
    _crlf_in_index(project, "a.txt")
    project.write("a.txt", CRLF + b"x\r\n")
    daemons.append(project)
    project.ok("daemon", "start")
    project.ok("snap")
    assert b"\r\n" in _blob(project, "a.txt")
    project.git("add", "--renormalize", "a.txt")  # the user's index now holds it LF: git add converts it
    project.write("b.txt", "anything\n")  # the daemon has something to name, not a.txt
    project.ok("snap")
    assert _tree(project) == project.add_all_tree()


def test_snap_path_with_attributes_reads_only_the_named_files(project: Workdir) -> None:
    project.write(".gitattributes", "*.txt text eol=crlf\n")
    project.commit_all("attributes")
    project.ok("snap")
    project.write("notes.txt", "mine\n")
    project.write("src/app.py", "print('agent')\n")
    project.ok("snap", "--path", "src/app.py")
    assert project.git("show", "refs/rewind/manual:src/app.py") == "print('agent')\n"
    assert project.git("show", "refs/rewind/manual:notes.txt") == "untracked work\n"  # not read: not named
    project.ok("snap", "--path", "notes.txt")
    assert _tree(project) == project.add_all_tree()


def test_snap_path_decides_crlf_as_the_users_index(project: Workdir) -> None:
    _crlf_in_index(project, "win.txt")
    project.ok("snap")
    project.write("win.txt", CRLF + b"more\r\n")
    project.write("new.txt", b"fresh\r\nfile\r\n")
    project.ok("snap", "--path", "win.txt", "--path", "new.txt")
    assert _blob(project, "win.txt") == CRLF + b"more\r\n"
    assert _blob(project, "new.txt") == b"fresh\nfile\n"
    assert _tree(project) == project.add_all_tree()


def test_a_hook_before_an_edit_in_a_repository_with_attributes_reads_only_that_file(agent_project: Workdir) -> None:
    from helpers.session import Agent

    agent_project.write(".gitattributes", "* text=auto\n")
    agent_project.commit_all("attributes")
    agent = Agent(agent_project, env={"GIT_REWIND_TIER": "minimal"})
    agent.prompt("go")
    agent.write("src/app.py", "x")  # a first checkpoint of the session: a whole scan
    agent_project.write("notes.txt", "changed by the person\n")
    agent_project.write("src/app.py", "print('edited')\n")
    decision = agent.write("src/app.py", "y")
    assert decision["action"] == "checkpoint"
    ref = "refs/rewind/sess-1"
    assert agent_project.git("show", f"{ref}:src/app.py") == "print('edited')\n"
    assert agent_project.git("show", f"{ref}:notes.txt") == "untracked work\n"


def test_core_safecrlf_true_does_not_stop_a_checkpoint(project: Workdir) -> None:
    project.write(".gitattributes", "* text=auto\n")
    project.commit_all("attributes")
    project.git("config", "core.safecrlf", "true")
    project.write("mixed.txt", b"a\r\nb\n")  # git add itself would refuse: "CRLF would be replaced by LF"
    project.ok("snap")
    project.ok("snap", "--path", "mixed.txt", "--allow-empty", "-m", "named")
    assert _blob(project, "mixed.txt") == b"a\nb\n"


def test_core_filemode_false_keeps_the_mode_the_users_index_has(project: Workdir) -> None:
    project.git("config", "core.fileMode", "false")
    project.ok("snap")
    (project.path / "bin/run.sh").unlink()
    project.ok("snap")  # the private index forgets the path's mode
    project.write("bin/run.sh", "#!/bin/sh\necho edited\n", mode=0o644)  # exec bit lost, as on a FAT mount
    project.write("tool.sh", "#!/bin/sh\n", mode=0o755)  # new: git takes no exec bit from the disk
    project.ok("snap")
    listed = project.git("ls-tree", "-r", "refs/rewind/manual").splitlines()
    modes = {line.split()[3]: line.split()[0] for line in listed}
    assert modes["bin/run.sh"] == "100755" and modes["tool.sh"] == "100644"
    assert _tree(project) == project.add_all_tree()
    project.write("bin/run.sh", "#!/bin/sh\necho again\n", mode=0o644)
    project.ok("snap", "--path", "bin/run.sh", "--path", "tool.sh")
    assert _tree(project) == project.add_all_tree()


def test_core_symlinks_false_keeps_a_link_checked_out_as_a_file(project: Workdir) -> None:
    os.symlink("src/app.py", project.path / "link")
    project.commit_all("a link")
    project.git("config", "core.symlinks", "false")
    (project.path / "link").unlink()
    project.git("checkout", "--", "link")  # written as a plain file holding the target
    assert not (project.path / "link").is_symlink()
    project.ok("snap")
    (project.path / "link").unlink()
    project.ok("snap")
    project.write("link", "src/other.py")
    project.ok("snap")
    assert project.git("ls-tree", "refs/rewind/manual", "link").split()[0] == "120000"
    assert _tree(project) == project.add_all_tree()


def _with_submodule(project: Workdir, tmp_path: Path) -> tuple[str, str, str]:
    """A commit that adds a submodule (not checked out here) after HEAD, and one that moves it on; (HEAD, the
    first, the second), HEAD checked out."""
    lib = Workdir(tmp_path / "lib", project.env)
    lib.path.mkdir()
    lib.git("init", "-q")
    lib.write("lib.c", "int lib;\n")
    lib.commit_all("lib")
    base = project.git("rev-parse", "HEAD").strip()
    project.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib.path), "vendor/lib")
    project.git("commit", "-q", "-m", "a submodule")
    added = project.git("rev-parse", "HEAD").strip()
    lib.write("lib.c", "int lib2;\n")
    lib.commit_all("lib, later")
    moved = lib.git("rev-parse", "HEAD").strip()
    project.git("update-index", "--cacheinfo", f"160000,{moved},vendor/lib")
    project.git("commit", "-q", "-m", "the submodule moved on")
    bumped = project.git("rev-parse", "HEAD").strip()
    project.git("submodule", "deinit", "-q", "-f", "vendor/lib")
    project.git("checkout", "-q", base)
    return base, added, bumped


@pytest.mark.parametrize("with_daemon", [False, True], ids=["scan", "daemon"])
def test_a_submodule_that_arrives_or_moves_not_checked_out_keeps_the_users_record(
        project: Workdir, tmp_path: Path, daemons: list[Workdir], with_daemon: bool) -> None:
    _base, added, bumped = _with_submodule(project, tmp_path)
    if with_daemon:
        daemons.append(project)
        project.ok("daemon", "start")
    project.ok("snap")
    for commit in (added, bumped):  # an empty directory, and the user's index records the commit
        project.git("checkout", "-q", commit)
        project.write("src/app.py", f"print('after {commit}')\n")
        project.ok("snap")
        recorded = project.git("ls-tree", "refs/rewind/manual", "vendor/lib").split()[:3]
        assert recorded == ["160000", "commit", project.git("rev-parse", f"{commit}:vendor/lib").strip()]
        assert _tree(project) == project.add_all_tree()
    (project.path / "vendor/lib").rmdir()  # its directory made again (a tool cleaning up), a file put in it
    (project.path / "vendor/lib").mkdir()
    project.write("README.md", "# again\n")
    project.ok("snap")
    assert _tree(project) == project.add_all_tree()
    project.write("vendor/lib/stray.c", "not the submodule's\n")  # git records the submodule, not its files
    project.ok("snap", "--allow-empty", "-m", "a file in it")
    assert project.git("ls-tree", "refs/rewind/manual", "vendor/lib").split()[0] == "160000"
    assert _tree(project) == project.add_all_tree()


def test_snap_path_after_an_undo_carries_the_restored_files_not_the_safety_checkpoint(project: Workdir) -> None:
    project.ok("snap", "-m", "one")
    project.write("src/app.py", "print('two')\n")
    project.write("notes.txt", "two\n")
    project.ok("snap", "-m", "two")
    project.ok("undo", "1", "--yes")  # the newest checkpoint (the safety one) holds "two"; the files hold "one"
    project.write("README.md", "# edited after the undo\n")
    project.ok("snap", "--path", "README.md")
    assert project.git("show", "refs/rewind/manual:src/app.py") == "print('hello')\n"
    assert _tree(project) == project.add_all_tree()


# the eol decision table, against git's own -----------------------------------------------------

_VALUES = {"text": ["set", "unset", "auto", "input", None], "eol": ["lf", "crlf", None],
           "crlf": ["set", "unset", "input", None]}


def _line(name: str, value: str | None) -> str:
    if value is None:
        return ""
    return {"set": name, "unset": f"-{name}"}.get(value, f"{name}={value}")


def test_which_attributes_make_the_index_decide_is_gits_own_answer(repo: Workdir) -> None:
    """conversion._auto against git: a file with CRLF whose index blob has CRLF keeps it exactly where git's
    eol action is an auto one; for every combination of text, eol, crlf and core.autocrlf."""
    from git_rewind.store.conversion import _auto

    combos = list(itertools.product(_VALUES["text"], _VALUES["eol"], _VALUES["crlf"]))
    lines = []
    for n, (text, eol, crlf) in enumerate(combos):
        attrs = " ".join(a for a in (_line("text", text), _line("eol", eol), _line("crlf", crlf)) if a)
        lines.append(f"f{n}.txt {attrs}\n" if attrs else "")
        repo.write(f"f{n}.txt", CRLF)
    blob = repo.git("hash-object", "-w", "--no-filters", f"f{0}.txt").strip()
    for n in range(len(combos)):
        repo.git("update-index", "--add", "--cacheinfo", f"100644,{blob},f{n}.txt")
    repo.write(".gitattributes", "".join(lines))
    for autocrlf in ("false", "true", "input"):
        repo.git("config", "core.autocrlf", autocrlf)
        for n, (text, eol, crlf) in enumerate(combos):
            values = {k: v for k, v in (("text", text), ("eol", eol), ("crlf", crlf))}
            shown = {k: "unspecified" if v is None else v for k, v in values.items()}  # set, unset: as they are
            # git keeps the CRLF of an index blob with CRLF only under an auto action; a text action converts
            kept = repo.git("hash-object", "--path", f"f{n}.txt", f"f{n}.txt").strip() == blob
            reads_index = _keeps_with_index(repo, f"f{n}.txt", blob)
            assert _auto(shown, autocrlf) == (reads_index and not kept), (values, autocrlf)


def _keeps_with_index(repo: Workdir, path: str, blob: str) -> bool:
    """git add, with the user's index (whose blob has CRLF), stores the file's CRLF as it is."""
    scratch = repo.path / ".git" / "probe-index"
    subprocess.run(["cp", "-p", str(repo.path / ".git" / "index"), str(scratch)], check=True)
    env = {**repo.env, "GIT_INDEX_FILE": str(scratch)}
    repo.write(path, CRLF)  # a new mtime: git reads it again
    subprocess.run(["git", "update-index", "--", path], cwd=repo.path, env=env, check=True)
    out = subprocess.run(["git", "ls-files", "-s", "--", path], cwd=repo.path, env=env, capture_output=True,
                         text=True, check=True).stdout
    scratch.unlink()
    return out.split()[1] == blob


def test_blame_of_a_file_whose_index_blob_has_crlf_finds_its_checkpoints(project: Workdir) -> None:
    """blame hashes the file as it is now the way a checkpoint stores it: CRLF kept, so the lines of an
    unchanged file come from the checkpoints, not from "changed since the newest"."""
    _crlf_in_index(project, "win.txt")
    project.write("win.txt", CRLF + b"three\r\n")
    project.ok("snap")
    import json

    lines = json.loads(project.ok("blame", "--json", "win.txt"))
    assert [line["text"] for line in lines] == ["one", "two", "three"]
    assert [line["origin"] for line in lines] == ["base", "base", "outside"]
    assert lines[2]["seq"] == 1


def test_a_tree_checked_again_under_the_same_key_leaves_the_reference_file_untouched(project: Workdir,
                                                                                       daemons: list[Workdir]) -> None:
    daemons.append(project)
    project.ok("daemon", "start")
    project.ok("snap")
    project.write("src/app.py", "print('edited')\n")
    project.ok("snap")
    reference = project.path / ".git" / "rewind" / "reference"
    first = reference.stat()
    text = reference.read_bytes()
    project.ok("snap")  # nothing changed: the same tree, checked under the same key
    assert daemon.answered(project)["changes"] >= 2
    assert reference.read_bytes() == text and reference.stat().st_ino == first.st_ino  # not replaced
    project.write("src/app.py", "print('again')\n")
    project.ok("snap")
    assert reference.stat().st_ino != first.st_ino and reference.read_bytes().split(b"\n")[1:] \
        == text.split(b"\n")[:-1][:3] + [b""]  # the new tree first, then the ones checked before
