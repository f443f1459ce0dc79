"""repo: which paths a command may name inside the work tree, and which session names become refs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from helpers.workdir import Workdir
from hypothesis import given, settings
from hypothesis import strategies as st

from git_rewind.base.errors import RewindError
from git_rewind.base.repo import Repo, check_session


@pytest.fixture
def tree(project: Workdir, git_environ: dict[str, str]) -> Repo:
    """The `project` repository as git-rewind sees it, with a link to a directory and one leaving the tree."""
    os.symlink("src", project.path / "linked")
    os.symlink(str(project.path.parent), project.path / "outside")
    return Repo.discover(str(project.path))


# Repo.relpath ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path, base, rel", [
    ("src/app.py", "", "src/app.py"),
    ("app.py", "src", "src/app.py"),
    ("../README.md", "src", "README.md"),
    ("./src//app.py", "", "src/app.py"),
    ("src/new/dir/", "", "src/new/dir"),  # need not exist
    (".", "", ""),  # the whole tree
    ("..", "src", ""),
    ("linked", "", "linked"),  # the link itself is in the tree
    (".gitignore", "", ".gitignore"),
    (".github/x", "", ".github/x"),  # only .git itself is refused
])
def test_paths_inside_the_work_tree_become_slash_separated_relative_paths(
        tree: Repo, path: str, base: str, rel: str) -> None:
    assert tree.relpath(path, os.path.join(tree.root, base)) == rel


def test_an_absolute_path_is_taken_as_it_is(tree: Repo) -> None:
    assert tree.relpath(os.path.join(tree.root, "src", "app.py"), "/") == "src/app.py"


@pytest.mark.parametrize("path, message", [
    ("../elsewhere", "path outside the working tree"),
    ("/", "path outside the working tree"),
    (".git/config", "path outside the working tree"),
    (".git", "path outside the working tree"),
    ("src/../.git/HEAD", "path outside the working tree"),
    ("linked/app.py", "path is behind a symbolic link"),
    ("outside/elsewhere", "path is behind a symbolic link"),
    ("linked/deeper/new.py", "path is behind a symbolic link"),
])
def test_paths_outside_the_tree_in_git_or_behind_a_link_are_refused(tree: Repo, path: str, message: str) -> None:
    with pytest.raises(RewindError, match=message):
        tree.relpath(path, tree.root)


def test_a_path_through_an_alias_of_the_root_is_re_anchored(tree: Repo, tmp_path: Path) -> None:
    """~/work -> /data/work: the same tree under another name is inside; a link below the root is not."""
    alias = tmp_path / "alias"
    os.symlink(tree.root, alias)
    assert tree.relpath(str(alias / "src" / "app.py"), "/") == "src/app.py"
    assert tree.relpath("app.py", str(alias / "src")) == "src/app.py"
    assert tree.relpath(str(alias), "/") == ""
    with pytest.raises(RewindError, match="behind a symbolic link"):
        tree.relpath(str(alias / "linked" / "app.py"), "/")
    with pytest.raises(RewindError, match="outside the working tree"):
        tree.relpath(str(alias / ".git" / "config"), "/")


# Repo.pathspec_base ------------------------------------------------------------------------------


def test_pathspecs_are_read_from_the_directory_a_person_is_in_when_it_is_in_the_tree(
        tree: Repo, tmp_path: Path) -> None:
    assert tree.pathspec_base(os.path.join(tree.root, "src")) == os.path.join(tree.root, "src")
    assert tree.pathspec_base(tree.root) == tree.root
    alias = tmp_path / "alias"
    os.symlink(tree.root, alias)  # the same directory under another name: git's prefix is the same
    assert tree.pathspec_base(str(alias / "src")) == os.path.join(tree.root, "src")
    for elsewhere in (str(tmp_path), "/", None):  # outside the tree (GIT_WORK_TREE set): from its root
        assert tree.pathspec_base(elsewhere) == tree.root


# check_session -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sess-1", "4f9eba75-a32a-4359-9724-af1840817a93", "a.b_c", "A", "x" * 128,
                                  "manual", "ses_2f1a.json"])
def test_session_names_that_are_one_ref_component_are_accepted(name: str) -> None:
    assert check_session(name) == name


@pytest.mark.parametrize("name", ["", ".hidden", "-flag", "a/b", "a..b", "x.lock", "x" * 129, "a b", "a:b", "a~1",
                                  "a^", "a?", "a*", "a[b", "a\\b", "a@{1}", "é", "a\nb"])
def test_session_names_that_are_not_are_refused(name: str) -> None:
    with pytest.raises(RewindError, match="invalid session name"):
        check_session(name)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.text(alphabet="ab.-_/@{}~^:?*[\\ é", max_size=12))
def test_every_accepted_session_name_is_a_ref_name_git_accepts(name: str) -> None:
    """git is the oracle: what check_session lets through, `git check-ref-format` accepts under refs/rewind/."""
    try:
        check_session(name)
    except RewindError:
        return
    proc = subprocess.run(["git", "check-ref-format", f"refs/rewind/{name}"], capture_output=True)
    assert proc.returncode == 0, name
