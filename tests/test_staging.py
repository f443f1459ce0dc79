"""A restore never writes the index, and never leaves it contradicting the restore unsaid: the preview and
the result name the paths the index stages otherwise, and the exact command that unstages them.

Played as a person would: real repositories, the real `git rewind`, the printed command run in a real
shell; git's own `diff --cached` is the oracle of what the next commit would record.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers.session import Agent
from helpers.workdir import Workdir


def staged_paths(w: Workdir) -> set[str]:
    """What the next commit would record: git's own word."""
    return set(w.git("diff", "--cached", "--name-only", "-z").split("\0")) - {""}


def command_of(text: str) -> str:
    """The unstage command a preview or a result printed."""
    (line,) = [line for line in text.splitlines() if "to unstage" in line]
    return line.split(": ", 1)[1]


def run_in_shell(w: Workdir, command: str, cwd: Path | None = None) -> None:
    subprocess.run(command, shell=True, cwd=cwd or w.path, env=w.env, check=True)


@pytest.fixture
def docs(agent_project: Workdir) -> Workdir:
    agent_project.write("docs/guide.md", "the guide\n")
    agent_project.write("docs/api/ref.md", "the reference\n")
    agent_project.write("src/lib.py", "lib\n")
    agent_project.commit_all("docs")
    return agent_project


@pytest.mark.parametrize("how", ["agent-only", "revert"])
def test_taking_back_an_agents_git_rm_names_the_staged_deletions_and_the_command(docs: Workdir, how: str) -> None:
    """The issue's case: an agent ran `git rm -r docs`; taking its turn back brings the files back, but the
    index still stages their deletion, so the next commit would delete them again."""
    a = Agent(docs)
    a.start()
    first = a.prompt("tidy up")["seq"]
    docs.git("rm", "-q", "-r", "docs")
    a.after_bash("git rm -r docs")
    a.stop()
    args = ["undo", str(first), "--agent-only"] if how == "agent-only" else ["revert", str(first)]
    index = docs.user_state()[0]
    preview = docs.ok(*args, "--dry-run")
    assert "the index stages something else for 2 paths" in preview
    assert "staged deletion  docs/api/ref.md" in preview and "staged deletion  docs/guide.md" in preview
    assert command_of(preview) == "git restore --staged docs"
    result = docs.ok(*args, "--yes")
    assert "the index still stages something else for 2 paths" in result
    assert command_of(result) == "git restore --staged docs"
    assert docs.user_state()[0] == index  # told, never written
    assert (docs.path / "docs/guide.md").read_text() == "the guide\n"
    assert staged_paths(docs) == {"docs/guide.md", "docs/api/ref.md"}
    run_in_shell(docs, command_of(result))
    assert staged_paths(docs) == set()  # the next commit deletes nothing


def test_a_plain_undo_names_staged_additions_and_changes_and_its_command_unstages_exactly_those(
        docs: Workdir) -> None:
    docs.ok("snap", "-m", "before")
    docs.write("src/new.py", "new\n")
    docs.write("src/lib.py", "lib, changed\n")
    docs.write("docs/guide.md", "the guide, staged and kept\n")
    docs.git("add", "src/new.py", "src/lib.py", "docs/guide.md")
    docs.ok("snap", "-m", "after")
    out = docs.rewind("undo", "1", "--only", "src", "--dry-run", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["index"] == {"paths": [{"path": "src/lib.py", "staged": "change"},
                                       {"path": "src/new.py", "staged": "addition"}],
                             "command": "git restore --staged src"}
    result = json.loads(docs.ok("undo", "1", "--only", "src", "--yes", "--json"))
    assert result["index"] == data["index"]
    assert not (docs.path / "src/new.py").exists()
    run_in_shell(docs, result["index"]["command"])
    assert staged_paths(docs) == {"docs/guide.md"}  # what the undo did not touch stays staged


def test_a_directory_stands_for_its_paths_only_when_nothing_else_below_it_is_staged(docs: Workdir) -> None:
    docs.ok("snap", "-m", "before")
    docs.git("rm", "-q", "-r", "docs")
    docs.ok("snap", "-m", "after")
    out = docs.ok("undo", "1", "--only", "docs/guide.md", "--yes")
    assert "staged deletion  docs/guide.md" in out and "docs/api" not in out
    assert command_of(out) == "git restore --staged docs/guide.md"
    run_in_shell(docs, command_of(out))
    assert staged_paths(docs) == {"docs/api/ref.md"}


def test_nothing_is_said_when_the_index_agrees_with_head_or_with_the_restore(docs: Workdir) -> None:
    docs.write("src/lib.py", "lib, staged\n")
    docs.git("add", "src/lib.py")
    docs.ok("snap", "-m", "staged")  # #1: the file as staged
    docs.write("src/lib.py", "lib, then changed\n")
    docs.git("rm", "-q", "--cached", "docs/guide.md")
    docs.git("add", "docs/guide.md")  # staged away and back: the index is HEAD's again
    docs.write("docs/guide.md", "edited, unstaged\n")
    data = json.loads(docs.ok("undo", "1", "--dry-run", "--json"))
    assert sorted(data["write"]) == ["docs/guide.md", "src/lib.py"] and data["index"] is None
    out = docs.ok("undo", "1", "--yes")
    assert "index" not in out
    assert staged_paths(docs) == {"src/lib.py"}


def test_a_redo_names_what_the_index_stages_against_it(docs: Workdir) -> None:
    docs.ok("snap", "-m", "before")
    docs.write("src/lib.py", "the agent's lib\n")
    docs.ok("snap", "-m", "after")
    assert "index" not in docs.ok("undo", "1", "--yes")
    docs.git("rm", "-q", "--cached", "src/lib.py")  # staged meanwhile
    preview = docs.ok("redo", "--dry-run")
    assert "staged deletion  src/lib.py" in preview and "this redo changes" in preview
    out = docs.ok("redo", "--yes")
    assert "this redo changed" in out and command_of(out) == "git restore --staged src/lib.py"


def test_the_command_is_relative_to_where_the_person_is(docs: Workdir) -> None:
    docs.ok("snap", "-m", "before")
    docs.git("rm", "-q", "-r", "docs")
    docs.ok("snap", "-m", "after")
    (docs.path / "src").mkdir(exist_ok=True)
    out = docs.ok("undo", "1", "--yes", cwd=docs.path / "src")
    assert command_of(out) == "git restore --staged ../docs"
    run_in_shell(docs, command_of(out), cwd=docs.path / "src")
    assert staged_paths(docs) == set()


def test_names_a_shell_or_git_would_misread_are_quoted_and_literal(docs: Workdir) -> None:
    names = ["a b.txt", "star*.txt", "-dash.txt", "it's.txt"]
    for name in names:
        docs.write(name, "one\n")
    docs.write("starry.txt", "another\n")  # what star*.txt would match as a pattern
    docs.commit_all("names")
    docs.ok("snap", "-m", "before")
    docs.git("rm", "-q", "--", *names, "starry.txt")  # (star*.txt as a pattern: both)
    docs.ok("snap", "-m", "after")
    out = docs.ok("undo", "1", "--only", ":(literal)star*.txt", "--only", "a b.txt", "--only", ":(literal)-dash.txt",
                  "--only", "it's.txt", "--yes")
    command = command_of(out)
    assert command.startswith("git --literal-pathspecs restore --staged -- ")
    assert "starry" not in out
    run_in_shell(docs, command)
    assert staged_paths(docs) == {"starry.txt"}  # not restored: its staged deletion is the person's


def test_before_the_first_commit_the_command_takes_the_entries_out_of_the_index(repo: Workdir) -> None:
    repo.write("a.txt", "a\n")
    repo.ok("snap", "-m", "before")
    repo.write("new.txt", "new\n")
    repo.git("add", "new.txt")
    repo.ok("snap", "-m", "after")
    out = repo.ok("undo", "1", "--yes")
    assert "staged addition  new.txt" in out and command_of(out) == "git reset -q -- new.txt"
    run_in_shell(repo, command_of(out))
    assert repo.git("ls-files") == ""


def test_more_staged_paths_than_one_command_line_names(docs: Workdir) -> None:
    docs.ok("snap", "-m", "before")
    for i in range(1005):  # many paths: one hash of them all, through one index of our own
        docs.write(f"gen/{i // 100}/f{i}.py", f"{i}\n")
    docs.git("add", "gen")
    docs.ok("snap", "-m", "generated")
    out = docs.ok("undo", "1", "--yes")
    assert "the index still stages something else for 1005 paths" in out and "… and 995 more" in out
    assert command_of(out) == "git restore --staged gen"
    run_in_shell(docs, command_of(out))
    assert staged_paths(docs) == set()


def test_mcp_and_the_page_return_the_same_index_field(docs: Workdir, git_environ: dict[str, str]) -> None:
    from git_rewind.base.repo import Repo
    from git_rewind.faces import mcp
    from git_rewind.faces.web import actions
    from git_rewind.store import checkpoints

    docs.ok("snap", "-m", "before")
    docs.git("rm", "-q", "-r", "docs")
    docs.ok("snap", "-m", "after")
    repo = Repo.discover(str(docs.path))
    every = checkpoints.load_all(repo)
    page = actions.act(repo, every, every[0], "restore-file", {"path": "docs/guide.md", "dry_run": True})
    assert page["index"] == {"paths": [{"path": "docs/guide.md", "staged": "deletion"}],
                             "command": "git restore --staged docs/guide.md"}
    tools = mcp.Tools(str(docs.path), None)
    text, data = tools.rewind("1", "code", token=tools.rewind("1", "code", preview=True)[1]["token"])
    assert data["index"]["command"] == "git restore --staged docs" and "git restore --staged docs" in text
    assert staged_paths(docs) == {"docs/guide.md", "docs/api/ref.md"}  # told, never written


def test_shortest_takes_the_topmost_directory_standing_for_two_or_more() -> None:
    staged = {"docs/a.md", "docs/b/c.md", "docs/b/d.md", "src/x.py", "src/y.py", "keep/k.py", "docs"}
    assert staged_shortest(["docs/b/c.md", "docs/b/d.md", "src/x.py", "src/y.py"], staged - {"docs"}) == \
        ["docs/b", "src"]
    assert staged_shortest(["docs/a.md", "docs/b/c.md", "docs/b/d.md"], staged - {"docs"}) == ["docs"]
    assert staged_shortest(["docs/a.md"], staged - {"docs"}) == ["docs/a.md"]
    # a staged file named like a directory (a type change) blocks it too
    assert staged_shortest(["docs/a.md", "docs/b/c.md"], {"docs", "docs/a.md", "docs/b/c.md"}) == \
        ["docs/a.md", "docs/b/c.md"]


def staged_shortest(paths: list[str], staged: set[str]) -> list[str]:
    from git_rewind.ops import staging

    return staging.shortest(paths, staged | set(paths))


def test_the_check_after_a_restore_leaves_the_index_file_as_it_was_even_with_stat_data_out_of_date(
        docs: Workdir) -> None:
    """`git diff` refreshes the index and writes it back when a file's stat data changed but not its content
    (--no-optional-locks does not stop it, git 2.39), as a restore's writes leave a file the index stages as
    it is: the check after a restore compares otherwise, so the index it promises never to write is not."""
    docs.write("src/lib.py", "lib, staged\n")
    docs.write("docs/guide.md", "the guide, staged\n")
    docs.git("add", "src/lib.py", "docs/guide.md")
    docs.ok("snap", "-m", "as staged")
    docs.write("src/lib.py", "lib, later\n")
    docs.write("docs/guide.md", "the guide, later\n")
    docs.ok("snap", "-m", "later")
    index = (docs.path / ".git/index").read_bytes()
    result = docs.ok("undo", "1", "--yes")
    assert (docs.path / "src/lib.py").read_text() == "lib, staged\n"
    assert "to unstage" not in result  # the index stages what the files now hold: nothing contradicts
    assert (docs.path / ".git/index").read_bytes() == index
    docs.write("src/lib.py", "lib, mine\n")
    docs.ok("snap", "-m", "mine")
    docs.ok("undo", "3", "--yes")
    assert (docs.path / ".git/index").read_bytes() == index
