"""`undo --agent-only` and `revert`: what the agents did is taken back, what came from outside stays.

Histories are played through the real hook (Claude Code payload shapes): a prompt opens a turn, the
agent's files are written between its pre-edit checkpoints, its Stop closes the turn; the person edits
files between turns. git is the oracle: results are compared with trees git builds (`add -A` of
the expected files) and with `git merge-file` for line merges.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from helpers import terminal
from helpers.session import Agent
from helpers.workdir import REWIND, Workdir, git_env
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

BASE = "".join(f"line {i}\n" for i in range(1, 13))


def lines(text: str, changes: dict[int, str]) -> str:
    out = text.splitlines(keepends=True)
    for number, new in changes.items():
        out[number - 1] = new + "\n"
    return "".join(out)


@pytest.fixture
def w(agent_project: Workdir) -> Workdir:
    agent_project.write("src/app.py", BASE)
    agent_project.write("src/old.py", "old module\n")
    agent_project.write("logo.bin", bytes(range(256)))
    agent_project.commit_all("base")
    return agent_project


def notes(w: Workdir) -> list[dict[str, Any]]:
    return sorted(json.loads(w.ok("list", "--json", "-n", "0", "--safety")), key=lambda n: n["seq"])


def two_turns(w: Workdir) -> tuple[Agent, int, int]:
    """Turn 1 changes app.py line 2, creates new.py, deletes old.py; the person then edits line 10 and adds
    mine.txt; turn 2 changes line 5. Returns (agent, first prompt's seq, second prompt's seq)."""
    a = Agent(w)
    a.start()
    first = a.prompt("make it better")["seq"]
    a.edit("src/app.py", "line 2", "LINE 2 BY THE AGENT " + "x" * 60)
    w.write("src/app.py", lines(BASE, {2: "LINE 2 by the agent"}))
    w.write("src/new.py", "made by the agent\n")
    (w.path / "src/old.py").unlink()
    a.stop()
    w.write("src/app.py", lines(BASE, {2: "LINE 2 by the agent", 10: "line 10, mine"}))
    w.write("mine.txt", "my notes\n")
    second = a.prompt("and more", "prompt-2")["seq"]
    a.edit("src/app.py", "line 5", "LINE 5 BY THE AGENT " + "x" * 60)
    w.write("src/app.py", lines(BASE, {2: "LINE 2 by the agent", 5: "LINE 5 by the agent", 10: "line 10, mine"}))
    a.stop()
    return a, first, second


def test_the_notes_say_which_changes_were_the_agents(w: Workdir) -> None:
    _a, first, second = two_turns(w)
    by_seq = {n["seq"]: n for n in notes(w)}
    turn_end = next(n for n in by_seq.values() if n["seq"] > first and n["trigger"] == "Stop")
    assert turn_end["origins"] == {"src/app.py": "agent", "src/new.py": "agent", "src/old.py": "agent"}
    assert turn_end["turn"]["prompt"] == "make it better" and turn_end["turn"]["seq"] == first
    assert by_seq[second]["origins"] == {"src/app.py": "outside", "mine.txt": "outside"}


def test_agent_only_takes_back_the_agents_changes_and_keeps_the_persons(w: Workdir) -> None:
    _a, first, _second = two_turns(w)
    user = w.user_state()[:3]
    out = w.ok("undo", str(first), "--agent-only", "--yes")
    assert f"took back the agents' changes since #{first}" in out and "(verified)" in out
    assert (w.path / "src/app.py").read_text() == lines(BASE, {10: "line 10, mine"})  # merged line by line
    assert not (w.path / "src/new.py").exists()  # created by the agent: removed
    assert (w.path / "src/old.py").read_text() == "old module\n"  # deleted by the agent: back
    assert (w.path / "mine.txt").read_text() == "my notes\n"
    assert (w.path / "notes.txt").read_text() == "untracked work\n"
    assert (w.path / ".env").read_text() == "SECRET=1\n"  # ignored: never touched
    assert w.user_state()[:3] == user
    assert "merged with later changes: src/app.py" in out
    # redo goes back to exactly the tree the undo replaced.
    before = w.add_all_tree()
    w.ok("redo", "--yes")
    safety = notes(w)[-1]
    assert safety["trigger"] == "pre-redo"
    undone = next(n for n in reversed(notes(w)) if n["trigger"] == "pre-rewind")
    assert w.add_all_tree() == w.tree_of(undone["commit"]) != before


def test_with_no_change_from_outside_agent_only_equals_undo(w: Workdir) -> None:
    a = Agent(w)
    first = a.prompt("go")["seq"]
    w.write("src/app.py", lines(BASE, {1: "agent one", 12: "agent twelve"}))
    w.write("src/extra.py", "x\n")
    a.stop()
    a.prompt("again", "prompt-2")
    w.write("src/app.py", lines(BASE, {1: "agent one again", 12: "agent twelve"}))
    a.stop()
    target = next(n for n in notes(w) if n["seq"] == first)
    w.ok("undo", str(first), "--agent-only", "--yes")
    assert w.add_all_tree() == w.tree_of(target["commit"])


def test_a_line_changed_again_from_outside_is_a_conflict_and_nothing_is_written(w: Workdir) -> None:
    _a, first, _second = two_turns(w)
    w.write("src/app.py", lines(BASE, {2: "LINE 2 by the agent, fixed by me", 5: "LINE 5 by the agent",
                                       10: "line 10, mine"}))
    before = w.state()
    run = w.rewind("undo", str(first), "--agent-only", "--yes")
    assert run.returncode == 3, run
    assert "nothing was written" in run.stderr and "src/app.py line 2" in run.stderr
    assert "\nnext: add --merge to write the clean parts" in run.stderr and "--only PATH" in run.stderr
    assert f"git rewind undo {first} goes back entirely" in run.stderr  # the command line's own retry
    assert w.state() == before
    assert all(n["trigger"] != "pre-rewind" for n in notes(w))  # not even a safety checkpoint: nothing to keep
    # --merge writes the clean parts and git's markers, labelled for people.
    out = w.ok("undo", str(first), "--agent-only", "--merge", "--yes")
    assert "src/app.py line 2" in out
    assert (w.path / "src/app.py").read_text() == (
        "line 1\n<<<<<<< current\nLINE 2 by the agent, fixed by me\n=======\nline 2\n"
        f">>>>>>> #{first}\nline 3\nline 4\nline 5\n" + "".join(f"line {i}\n" for i in range(6, 10))
        + "line 10, mine\nline 11\nline 12\n")
    assert not (w.path / "src/new.py").exists()


def test_the_markers_are_gits_own(w: Workdir, tmp_path: Path) -> None:
    """The merged file equals `git merge-file` of the same three versions (labels aside)."""
    a = Agent(w)
    first = a.prompt("go")["seq"]
    agent_version = lines(BASE, {3: "agent 3", 4: "agent 4"})
    w.write("src/app.py", agent_version)
    a.stop()
    mine = lines(BASE, {3: "mine 3", 4: "agent 4", 11: "mine 11"})
    w.write("src/app.py", mine)
    w.ok("undo", str(first), "--agent-only", "--merge", "--yes")
    for name, text in (("current", mine), ("base", agent_version), (f"#{first}", BASE)):
        (tmp_path / name.strip("#")).write_text(text)
    expected = subprocess.run(["git", "merge-file", "-p", "-L", "current", "-L", "base", "-L", f"#{first}",
                               str(tmp_path / "current"), str(tmp_path / "base"), str(tmp_path / first.__str__())],
                              capture_output=True, text=True, env=w.env).stdout
    assert (w.path / "src/app.py").read_text() == expected


def test_a_binary_file_in_conflict_keeps_its_current_content(w: Workdir) -> None:
    a = Agent(w)
    first = a.prompt("go")["seq"]
    w.write("logo.bin", bytes(range(255, -1, -1)))
    w.write("src/app.py", lines(BASE, {1: "agent"}))
    a.stop()
    w.write("logo.bin", b"\0mine\0" * 10)
    run = w.rewind("undo", str(first), "--agent-only", "--yes")
    assert run.returncode == 3 and "logo.bin (binary: kept as it is now)" in run.stderr
    out = w.ok("undo", str(first), "--agent-only", "--merge", "--yes")
    assert "logo.bin (binary" in out
    assert (w.path / "logo.bin").read_bytes() == b"\0mine\0" * 10
    assert (w.path / "src/app.py").read_text() == BASE


def test_a_file_the_agent_created_and_the_person_edited_is_a_conflict(w: Workdir) -> None:
    a = Agent(w)
    first = a.prompt("go")["seq"]
    w.write("src/made.py", "by the agent\n")
    a.stop()
    w.write("src/made.py", "by the agent\nand me\n")
    run = w.rewind("undo", str(first), "--agent-only", "--yes")
    assert run.returncode == 3 and "src/made.py (deleted on one side" in run.stderr
    w.ok("undo", str(first), "--agent-only", "--merge", "--yes")
    assert (w.path / "src/made.py").read_text() == "by the agent\nand me\n"


def test_a_rename_by_the_agent_is_taken_back(w: Workdir) -> None:
    a = Agent(w)
    first = a.prompt("rename it")["seq"]
    (w.path / "src/old.py").rename(w.path / "src/renamed.py")
    a.stop()
    w.write("README.md", "# demo, edited\n")
    w.ok("undo", str(first), "--agent-only", "--yes")
    assert (w.path / "src/old.py").read_text() == "old module\n" and not (w.path / "src/renamed.py").exists()
    assert (w.path / "README.md").read_text() == "# demo, edited\n"


def test_revert_takes_back_one_turn_and_keeps_the_later_one(w: Workdir) -> None:
    _a, first, second = two_turns(w)
    out = w.ok("revert", str(first), "--yes")
    assert f"between #{first} and #{second}" in out
    assert (w.path / "src/app.py").read_text() == lines(BASE, {5: "LINE 5 by the agent", 10: "line 10, mine"})
    assert not (w.path / "src/new.py").exists() and (w.path / "src/old.py").exists()
    assert (w.path / "mine.txt").exists()
    # The second turn alone, from its prompt: the first turn's changes stay.
    w.ok("redo", "--yes")
    w.ok("revert", str(second), "--yes")
    assert (w.path / "src/app.py").read_text() == lines(BASE, {2: "LINE 2 by the agent", 10: "line 10, mine"})
    assert (w.path / "src/new.py").exists()


def test_agent_only_with_patch_offers_the_merged_trees_hunks(w: Workdir) -> None:
    _a, first, _second = two_turns(w)
    user = w.user_state()[:3]
    code, shown = terminal.run([*REWIND, "undo", str(first), "--agent-only", "--patch"], w.path, w.env,
                               ["y", "n", "y"])  # app.py's one hunk, new.py's deletion, old.py's addition
    assert code == 0, shown
    assert "-LINE 2 by the agent\n+line 2\n" in shown and "-line 10, mine" not in shown  # the merged tree's hunks
    assert (w.path / "src/app.py").read_text() == lines(BASE, {10: "line 10, mine"})  # the person's line stays
    assert (w.path / "src/new.py").exists() and (w.path / "src/old.py").read_text() == "old module\n"
    assert (w.path / "mine.txt").read_text() == "my notes\n"  # never offered
    assert f"took back, hunk by hunk, the agents' changes since #{first}: 2 written, 0 removed" in shown
    safety = notes(w)[-1]
    assert safety["rewind"]["kind"] == "agent-only" and safety["rewind"]["only"] == ["src/app.py", "src/old.py"]
    assert w.user_state()[:3] == user


def test_revert_with_patch_and_paths_after_a_double_dash(w: Workdir) -> None:
    _a, _first, second = two_turns(w)
    code, shown = terminal.run([*REWIND, "revert", str(second), "--patch", "--", "src/app.py"], w.path, w.env,
                               ["y"])
    assert code == 0, shown
    assert (w.path / "src/app.py").read_text() == lines(BASE, {2: "LINE 2 by the agent", 10: "line 10, mine"})
    assert notes(w)[-1]["rewind"]["kind"] == "revert"


def test_revert_between_two_ids(w: Workdir) -> None:
    _a, first, second = two_turns(w)
    last = notes(w)[-1]["seq"]
    w.ok("revert", str(first), str(last), "--yes")
    assert (w.path / "src/app.py").read_text() == lines(BASE, {10: "line 10, mine"})
    run = w.rewind("revert", str(last), str(first), "--yes")
    assert run.returncode == 1 and "is not after" in run.stderr


def test_dry_run_lists_and_changes_nothing(w: Workdir) -> None:
    _a, first, _second = two_turns(w)
    before = w.state()
    count = len(notes(w))
    out = w.ok("undo", str(first), "--agent-only", "--dry-run")
    assert "write   src/app.py" in out and "remove  src/new.py" in out and "write   src/old.py" in out
    assert "merge   src/app.py" in out
    assert w.state() == before and len(notes(w)) == count


def test_only_limits_what_is_taken_back(w: Workdir) -> None:
    _a, first, _second = two_turns(w)
    w.ok("undo", str(first), "--agent-only", "--only", "src/new.py", "--yes")
    assert not (w.path / "src/new.py").exists()
    assert "LINE 2 by the agent" in (w.path / "src/app.py").read_text()
    assert not (w.path / "src/old.py").exists()


def test_under_the_minimal_tier_origins_are_unknown_and_nothing_is_guessed(w: Workdir) -> None:
    w.ok("config", "set", "tier", "minimal")
    a = Agent(w)
    a.prompt("go")
    a.write("src/new.py", "x" * 100)
    w.write("src/new.py", "x" * 100)
    a.stop()
    first = notes(w)[0]["seq"]
    w.write("src/app.py", lines(BASE, {1: "mine"}))
    w.ok("snap", "-m", "mine")
    before = w.state()
    run = w.rewind("undo", str(first), "--agent-only", "--yes")
    assert run.returncode == 1 and "attribution is unknown" in run.stderr and len(run.stderr.splitlines()) == 1
    assert w.state() == before
    run = w.rewind("revert", str(first), str(notes(w)[-1]["seq"]), "--yes")
    assert run.returncode == 1 and "attribution is unknown" in run.stderr


def test_nothing_to_take_back_says_so(w: Workdir) -> None:
    a = Agent(w)
    first = a.prompt("just read")["seq"]
    a.stop()
    w.write("mine.txt", "mine\n")
    before = w.state()
    out = w.ok("undo", str(first), "--agent-only", "--yes")
    assert "nothing to take back" in out and w.state() == before


def test_bad_input_is_one_line_and_changes_nothing(w: Workdir) -> None:
    _a, first, _second = two_turns(w)
    before = w.state()
    for args in (["undo", "999", "--agent-only"], ["revert", "999"], ["revert", "nonsense"],
                 ["undo", str(first), "--agent-only", "--only", "../outside"],
                 ["undo", str(first), "--merge"], ["undo", str(first), "--agent-only", "--conversation"]):
        run = w.rewind(*args, "--yes")
        said = [line for line in run.stderr.splitlines() if line.lower().startswith("error")]
        assert run.returncode in (1, 2) and len(said) == 1, (args, run)  # click's usage errors add a usage line
    assert w.state() == before


def test_two_sessions_whose_turns_overlap(w: Workdir) -> None:
    """A's turn is open while B's turn runs: B's own hooks give their changes to B; any other checkpoint (B's
    prompt, the person's snap) gives a file to the turn that was at work when it was written. Both are
    the agents', so an agent-only undo takes back both and keeps the person's change from before."""
    a, b = Agent(w, session="sess-a"), Agent(w, session="sess-b")
    w.write("mine.txt", "before both\n")
    start = a.prompt("A works")["seq"]
    w.write("src/a.py", "by A\n")
    b.prompt("B works", "prompt-b")
    w.write("src/b.py", "by B\n")
    b.stop()
    a.write("src/a2.py", "by A, later " + "x" * 80)  # A's hook, then its write
    w.write("src/a2.py", "by A, later\n")
    w.ok("snap", "-m", "by hand while A runs")
    a.stop()
    by_seq = notes(w)
    b_prompt = next(n for n in by_seq if n["prompt"] == "B works" and n["trigger"] == "UserPromptSubmit")
    assert b_prompt["origins"] == {"src/a.py": "agent"} and b_prompt["turn"]["session"] == "sess-a"
    b_end = next(n for n in by_seq if n["session"] == "sess-b" and n["trigger"] == "Stop")
    assert b_end["origins"] == {"src/b.py": "agent"} and b_end["turn"]["session"] == "sess-b"
    snap = next(n for n in by_seq if n["message"] == "by hand while A runs")
    assert snap["origins"] == {"src/a2.py": "agent"} and snap["turn"]["session"] == "sess-a"
    w.ok("undo", str(start), "--agent-only", "--yes")
    assert not any((w.path / p).exists() for p in ("src/a.py", "src/b.py", "src/a2.py"))
    assert (w.path / "mine.txt").read_text() == "before both\n"


def test_an_interrupted_turn_keeps_what_the_person_wrote_afterwards(w: Workdir) -> None:
    """No Stop (Claude Code sends none on Esc): at the next prompt, files modified after the turn's last hook
    call are the person's."""
    import os
    import time

    a = Agent(w)
    first = a.prompt("go")["seq"]
    w.write("src/agent.py", "by the agent\n")  # right after the turn's last hook call, then Esc
    later = time.time() + 60  # a minute after it
    os.utime(w.write("mine.txt", "written after the interrupt\n"), (later, later))
    second = a.prompt("go on", "prompt-2")
    note = next(n for n in notes(w) if n["seq"] == second["seq"])
    assert note["origins"] == {"src/agent.py": "agent", "mine.txt": "outside"}
    w.ok("undo", str(first), "--agent-only", "--yes")
    assert not (w.path / "src/agent.py").exists() and (w.path / "mine.txt").exists()


# a property: random turns and edits between them ------------------------------------------------

FILES = ["f0.txt", "d/f1.txt", "f2.txt"]
TOKENS = st.sampled_from(["alpha", "beta", "gamma", "delta"])
AGENT_TURN = st.tuples(
    st.lists(st.tuples(st.sampled_from(FILES), st.integers(1, 4), TOKENS), max_size=4),  # lines 1-4 of base files
    st.booleans(),  # creates a file of its own
)
PERSON = st.tuples(
    st.lists(st.tuples(st.sampled_from(FILES), st.integers(9, 12), TOKENS), max_size=3),  # lines 9-12
    st.booleans(),  # creates a file of their own
)
Edits = list[tuple[str, int, str]]  # (file, line, token) of AGENT_TURN and PERSON


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(rounds=st.lists(st.tuples(AGENT_TURN, PERSON), min_size=1, max_size=3), crlf=st.booleans())
def test_agent_only_leaves_exactly_the_persons_changes(rounds: list[tuple[tuple[Edits, bool], tuple[Edits, bool]]],
                                                       crlf: bool) -> None:
    """Agents change lines 1-4 and make files; the person changes lines 9-12 and makes files, between turns.
    An agent-only undo to the first prompt leaves the base files with exactly the person's lines, the
    person's files, none of the agents' files: the tree `git add -A` of that expectation gives."""
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        home = tmp / "home"
        home.mkdir()
        env = git_env(home)
        path = tmp / "repo"
        subprocess.run(["git", "init", "-q", "-b", "main", str(path)], env=env, check=True)
        w = Workdir(path, env)
        if crlf:
            w.git("config", "core.autocrlf", "true")
        files = {f: [f"{f} line {i}" for i in range(1, 13)] for f in FILES}
        eol = "\r\n" if crlf else "\n"

        def put(rel: str, content: list[str]) -> None:
            w.write(rel, "".join(line + eol for line in content))

        for f, content in files.items():
            put(f, content)
        w.commit_all("base")
        expected = {f: list(c) for f, c in files.items()}
        person_files: dict[str, str] = {}
        a = Agent(w)
        first = None
        for n, ((agent_edits, agent_makes), (person_edits, person_makes)) in enumerate(rounds):
            seq = a.prompt(f"turn {n}", f"prompt-{n}")["seq"]
            first = seq if first is None else first
            for f, line, token in agent_edits:
                files[f][line - 1] = f"{token} by the agent {n}"
                put(f, files[f])
            if agent_makes:
                w.write(f"agent{n}.txt", "agent\n")
            a.stop()
            for f, line, token in person_edits:
                files[f][line - 1] = expected[f][line - 1] = f"{token} by me {n}"
                put(f, files[f])
            if person_makes:
                person_files[f"mine{n}.txt"] = f"mine {n}\n"
                w.write(f"mine{n}.txt", f"mine {n}\n")
        w.ok("undo", str(first), "--agent-only", "--yes")
        got = w.add_all_tree()
        for f, content in expected.items():
            put(f, content)
        for n in range(len(rounds)):
            (path / f"agent{n}.txt").unlink(missing_ok=True)
        for rel, text in person_files.items():
            w.write(rel, text)
        assert got == w.add_all_tree()


def test_a_step_across_a_deleted_checkpoint_is_unknown_and_kept(w: Workdir, git_environ: dict[str, str]) -> None:
    """Origins hold for the step from the checkpoint they were computed against: with the turn end deleted,
    the next prompt's origins cover only part of the change, so that step is kept and named, not guessed."""
    from git_rewind.base.repo import Repo
    from git_rewind.ops import gc

    _a, first, second = two_turns(w)
    turn_end = next(n for n in notes(w) if first < n["seq"] < second)
    gc.delete(Repo.discover(str(w.path)), str(turn_end["seq"]))
    run = w.rewind("undo", str(first), "--agent-only", "--yes")
    assert run.returncode == 0, run
    assert f"attribution is unknown for #{second}" in run.stderr
    # Turn 2's change is taken back; the unknown step (turn 1 and the person's edits) is kept whole.
    assert (w.path / "src/app.py").read_text() == lines(BASE, {2: "LINE 2 by the agent", 10: "line 10, mine"})
    assert (w.path / "src/new.py").exists()


def test_after_an_interrupted_turn_an_undo_keeps_what_the_person_wrote(w: Workdir) -> None:
    """No Stop, no new prompt: the undo's own view of the working tree gives the person's later edit to them."""
    import os
    import time

    a = Agent(w)
    first = a.prompt("go")["seq"]
    a.write("src/agent.py", "by the agent " + "x" * 80)
    w.write("src/agent.py", "by the agent\n")
    later = time.time() + 30
    os.utime(w.write("src/app.py", lines(BASE, {12: "mine, after the interrupt"})), (later, later))
    out = w.ok("undo", str(first), "--agent-only", "--yes")
    assert "took back" in out
    assert not (w.path / "src/agent.py").exists()
    assert (w.path / "src/app.py").read_text() == lines(BASE, {12: "mine, after the interrupt"})
