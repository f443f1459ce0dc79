"""base/gitobjects.py and the fast-import commit helper: each reader against what git's own CLI prints for the
same objects, on paths and messages nobody would choose."""

from __future__ import annotations

import os
import subprocess

from helpers.workdir import Workdir

from git_rewind.base import gitobjects
from git_rewind.base import repo as repomod
from git_rewind.base.gitcmd import COMMITTER, FastImport
from git_rewind.base.repo import Repo

ODD = ["plain.txt", "with space.txt", "new\nline.txt", "tab\there.txt", "quote\"d.txt", "ünï.txt", "back\\slash"]


def _odd_tree(w: Workdir) -> tuple[str, str]:
    """Two commits: ODD's files added, then one changed, one removed, one made executable, one a link."""
    for name in ODD:
        (w.path / name).write_bytes(name.encode() + b"\n")
    with open(os.path.join(os.fsencode(w.path), b"not-utf8-\xff.txt"), "wb") as fh:  # a name that is no UTF-8
        fh.write(b"x")
    w.commit_all("one")
    first = w.git("rev-parse", "HEAD").strip()
    (w.path / "plain.txt").write_text("changed\n")
    (w.path / "with space.txt").unlink()
    os.chmod(w.path / "ünï.txt", 0o755)
    (w.path / "tab\there.txt").unlink()
    os.symlink("plain.txt", w.path / "tab\there.txt")
    w.commit_all("two")
    return first, w.git("rev-parse", "HEAD").strip()


def test_raw_diff_reads_what_diff_tree_prints(repo: Workdir, git_environ: dict[str, str]) -> None:
    first, second = _odd_tree(repo)
    r = Repo.discover(str(repo.path))
    out = r.git(["diff-tree", "-r", "-z", "--no-renames", first, second])
    entries = gitobjects.raw_diff(out)
    names = subprocess.run(["git", "diff-tree", "-r", "-z", "--no-renames", "--name-status", first, second],
                           cwd=repo.path, capture_output=True, check=True).stdout.split(b"\0")
    expected = [(names[i].decode(), os.fsdecode(names[i + 1])) for i in range(0, len(names) - 1, 2)]
    assert [(e.status, e.path) for e in entries] == expected
    for e in entries:
        side = second if e.status != "D" else first
        listed = repo.git("ls-tree", side, "--", e.path).split()
        mode, oid = (int(listed[0], 8), listed[2]) if listed else (0, "")
        assert (e.new_mode, e.new_oid) == ((mode, oid) if e.status != "D" else (0, "0" * len(oid)))


def test_raw_diff_by_commit_keeps_each_commits_changes_apart(repo: Workdir, git_environ: dict[str, str]) -> None:
    first, second = _odd_tree(repo)
    r = Repo.discover(str(repo.path))
    out = r.git(["diff-tree", "-r", "-z", "--no-renames", "--root", "--stdin"], input=f"{first}\n{second}\n".encode())
    found = gitobjects.raw_diff_by_commit(out)
    assert list(found) == [first, second]
    assert {e.path for e in found[first]} == set(repo.git("ls-tree", "-r", "-z", "--name-only", first)
                                                 .split("\0")) - {""}
    assert [e.path for e in found[second]] == [e.path for e in gitobjects.raw_diff(
        r.git(["diff-tree", "-r", "-z", "--no-renames", first, second]))]


def test_read_commits_is_cat_file(repo: Workdir, git_environ: dict[str, str]) -> None:
    first, second = _odd_tree(repo)
    merge_tree = repo.git("rev-parse", f"{second}^{{tree}}").strip()
    message = "a merge\n\nwith a body\nand: trailers\n"
    merge = repo.git("commit-tree", merge_tree, "-p", second, "-p", first, "-m", message).strip()
    r = Repo.discover(str(repo.path))
    commits = gitobjects.read_commits(r, [merge, first])
    got = commits[merge]
    assert (got.tree, got.parents) == (merge_tree, [second, first])
    assert got.message == repo.git("cat-file", "commit", merge).partition("\n\n")[2].encode()
    assert got.time == int(repo.git("log", "-1", "--format=%ct", merge))
    assert got.author.decode() == repo.git("log", "-1", "--format=%an <%ae> %at %ad", "--date=format:%z", merge).strip()
    assert commits[first].parents == []


def test_refs_under_matches_whole_name_components_and_is_ours_knows_every_namespace(
        repo: Workdir, git_environ: dict[str, str]) -> None:
    first, _second = _odd_tree(repo)
    names = ["refs/rewind/s1", "refs/rewind-scan", "refs/rewind-attachments/pending", "refs/notes/rewind",
             "refs/notes/rewind-share/me", "refs/notes/rewind-remote/origin/them", "refs/heads/rewind"]
    for name in names:
        repo.git("update-ref", name, first)
    r = Repo.discover(str(repo.path))
    assert gitobjects.refs_under(r, "refs/rewind") == {"refs/rewind/s1": first}
    assert gitobjects.refs_under(r, "refs/notes/rewind") == {"refs/notes/rewind": first}
    assert gitobjects.refs_under(r) == {}  # no pattern: nothing, never every ref
    ours = gitobjects.refs_under(r, *repomod.NAMESPACES)
    assert sorted(ours) == sorted(n for n in names if n != "refs/heads/rewind")
    assert all(repomod.is_ours(n) for n in ours) and not repomod.is_ours("refs/heads/rewind")


def test_one_commit_helper_writes_parents_in_order_with_one_committer(repo: Workdir,
                                                                    git_environ: dict[str, str]) -> None:
    first, second = _odd_tree(repo)
    tree = repo.git("rev-parse", f"{second}^{{tree}}").strip()
    with FastImport(str(repo.path)) as fi:
        fi.commit("refs/rewind-scan", b"a message\n", 1700000000, mark=1, parents=[second, first])
        fi.write(f'M 040000 {tree} ""\n\n'.encode())
        made = fi.get_mark(1)
        fi.reset("refs/rewind-scan")
    assert repo.git("log", "-1", "--format=%P%n%cn <%ce> %ct%n%T%n%B", made).split("\n")[:5] == [
        f"{second} {first}", f"{COMMITTER.decode()} 1700000000", tree, "a message", ""]
    assert repo.git("for-each-ref", "refs/rewind-scan") == ""  # the scratch ref was never left
