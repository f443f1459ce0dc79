"""ignore: a checkpoint's .gitignore files become one excludes file that ignores what they ignore.

git itself is the oracle. The same files and the same rules are asked of `git check-ignore --no-index`
twice: once with the .gitignore files in place, once with them gone and only the excludes file that
`ignore.target_excludes` wrote from the committed tree (as a rewind across a .gitignore change uses
it). Both answers must be the same set of paths.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_rewind.base.note import Oid
from git_rewind.base.repo import Repo
from git_rewind.store import ignore

# The directories every example holds (the rules may name them), each with these files, as the root.
DIRS = ["a", "b", "a/b", "a/a", "b/a/b", "c d"]
NAMES = ["x", "y.log", "z"]


# target_excludes runs git in this process: no user or system config, no user excludes file.
pytestmark = pytest.mark.usefixtures("git_environ")


def _git(root: Path, *args: str, input: str | None = None, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, input=input)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {proc.stderr}")
    return proc.stdout


def _ignored(root: Path, excludes: str, paths: list[str]) -> set[str]:
    """The PATHS git ignores in ROOT with EXCLUDES as core.excludesFile (exit 1: none of them)."""
    proc = subprocess.run(["git", "-c", f"core.excludesFile={excludes}", "check-ignore", "--no-index", "--stdin",
                           "-z"], cwd=root, capture_output=True, text=True, input="\0".join(paths) + "\0")
    assert proc.returncode in (0, 1), proc.stderr
    return set(filter(None, proc.stdout.split("\0")))


def compare(rules: dict[str, list[str]], dirs: list[str] = DIRS) -> None:
    """Assert that RULES ({directory: .gitignore lines}) ignore the same paths in place and translated."""
    files = [f"{d}/{n}" if d else n for d in ["", *dirs] for n in NAMES]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        _git(root, "init", "-q")
        for rel in files:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(rel)
        names = []
        for directory, lines in rules.items():
            name = f"{directory}/.gitignore" if directory else ".gitignore"
            (root / name).write_text("".join(f"{line}\n" for line in lines))
            names.append(name)
        _git(root, "add", "-f", "--", *names)
        tree = Oid(_git(root, "write-tree").strip())
        empty = Path(tmp) / "empty-excludes"
        empty.write_text("")
        in_place = _ignored(root, str(empty), [*files, *dirs])

        for name in names:
            (root / name).unlink()
        repo = Repo.discover(str(root))
        os.makedirs(repo.rewind_dir, exist_ok=True)
        written = ignore.target_excludes(repo, tree, str(Path(tmp) / "target-excludes"))
        assert written is not None
        translated = Path(written).read_text()
        assert _ignored(root, written, [*files, *dirs]) == in_place, f"rules {rules}\ntranslated:\n{translated}"


# Hand-picked rules --------------------------------------------------------------------------------


@pytest.mark.parametrize("rules", [
    {"": ["*.log", "a/b/"]},
    {"a": ["x", "/z", "b/"]},  # unanchored in a subdirectory: at any depth below it; "/z" only at its top
    {"a": ["*"], "a/b": ["!x"]},  # a deeper file re-includes, unless a directory above is excluded
    {"": ["*.log"], "a": ["!y.log"], "a/b": ["y.log"]},  # the deepest file has the last word
    {"": ["x", "!a/x"], "b": ["!x"]},
    {"b/a/b": ["*"], "b": ["a/"]},
    {"": ["**/b/x", "a/**/z"], "a": ["**/y.log"]},
    {"": ["?", "c d/"]},  # a directory with a space
    {"": ["# a comment", "", "   ", "z   ", "\\#x"]},  # comments, blank lines, trailing spaces
    {"a": ["/"], "b": ["!"], "": ["a/"]},  # lines with no pattern left
])
def test_rules_ignore_the_same_paths_in_place_and_translated(rules: dict[str, list[str]]) -> None:
    compare(rules)


def test_nothing_is_written_while_the_disk_holds_the_target_rules(tmp_path: Path) -> None:
    """The current rules are the target's: git needs no excludes file (and gets none)."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "a").mkdir()
    (root / ".gitignore").write_text("*.log\n")
    (root / "a" / ".gitignore").write_text("x\n")
    _git(root, "add", "-f", ".gitignore", "a/.gitignore")
    tree = Oid(_git(root, "write-tree").strip())
    repo = Repo.discover(str(root))
    os.makedirs(repo.rewind_dir, exist_ok=True)
    out = tmp_path / "excludes"
    assert ignore.target_excludes(repo, tree, str(out)) is None and not out.exists()
    (root / "a" / ".gitignore").write_text("y\n")
    assert ignore.target_excludes(repo, tree, str(out)) == str(out)
    empty_tree = Oid(_git(root, "mktree", input="").strip())
    assert ignore.target_excludes(repo, empty_tree, str(tmp_path / "other")) is None  # no rules at all


def test_gitignore_files_lists_every_gitignore_of_a_tree_and_reads_its_cache(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "a" / "b").mkdir(parents=True)
    _git(root, "init", "-q")
    for name in (".gitignore", "a/b/.gitignore", "a/not.gitignore"):
        (root / name).write_text("x\n")
    _git(root, "add", "-f", ".")
    tree = Oid(_git(root, "write-tree").strip())
    repo = Repo.discover(str(root))
    blob = _git(root, "hash-object", ".gitignore").strip()
    files = ignore.gitignore_files(repo, tree)
    assert files == [(".gitignore", blob), ("a/b/.gitignore", blob)]
    assert (Path(repo.rewind_dir) / "gitignores" / tree).exists()
    assert ignore.gitignore_files(repo, tree) == files  # the second read is the cache's


def test_the_target_file_holds_only_the_targets_rules(tmp_path: Path) -> None:
    """The scan evaluates it alone, beside the current rules (the user's core.excludesFile among them,
    in force as ever): it carries nothing of the user's own file."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    user = tmp_path / "user-ignore"
    user.write_text("secret.txt\n")
    _git(root, "config", "core.excludesFile", str(user))
    (root / ".gitignore").write_text("x\n")
    _git(root, "add", "-f", ".gitignore")
    tree = Oid(_git(root, "write-tree").strip())
    (root / ".gitignore").unlink()
    repo = Repo.discover(str(root))
    os.makedirs(repo.rewind_dir, exist_ok=True)
    written = ignore.target_excludes(repo, tree, str(tmp_path / "excludes"))
    assert written is not None
    assert Path(written).read_text().splitlines() == ["x"]




@pytest.mark.parametrize("directory, sibling", [("a*", "ab"), ("[q]", "q"), ("w?", "wx")])
def test_a_directory_name_with_glob_characters_is_literal(directory: str, sibling: str) -> None:
    """a*/.gitignore's rules reach a*/ only, not ab/ (issue 12, item 14)."""
    compare({directory: ["x"]}, dirs=[directory, sibling])


# Random rules ---------------------------------------------------------------------------------------

_SEGMENTS = st.sampled_from(["a", "b", "x", "z", "y.log", "*", "*.log", "?", "**", "[ab]", "c d"])
_PATTERNS = st.builds(
    lambda negate, lead, segments, trail: ("!" if negate else "") + ("/" if lead else "") + "/".join(segments)
    + ("/" if trail else ""),
    st.booleans(), st.booleans(), st.lists(_SEGMENTS, min_size=1, max_size=3), st.booleans())
_RULES = st.dictionaries(st.sampled_from(["", "a", "b", "a/b"]), st.lists(_PATTERNS, min_size=1, max_size=4),
                         min_size=1, max_size=3)


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(_RULES)
def test_random_rules_ignore_the_same_paths_in_place_and_translated(rules: dict[str, list[str]]) -> None:
    compare(rules)
