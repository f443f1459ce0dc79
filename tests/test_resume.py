"""Picking up after /clear, compaction or a restart: structured summaries, the SessionStart context,
and the checkpoints taken before /clear and compaction.

A user saves a summary (`git rewind snap --summary -`, what /checkpoint runs), the agent's
session ends or is cleared, and the next session starts: the real `git rewind hook` is fed
the agent's payloads and must print the resume context (one JSON object, nothing else) or
nothing at all. Numbers are checked against git's own `git diff --numstat`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.samples import claude_sample
from helpers.session import BIG, Agent, chain, decisions
from helpers.workdir import Workdir

from git_rewind.base import summary

# Summaries as people and agents write them -----------------------------------------------------

SECTIONED = """Done: wrote the summary parser
and its tests

## Current state
- parser works
- hook not wired yet

**Next steps:**
1. wire the hook
2. docs

Files:
- `git_rewind/summary.py` — the parser
- tests/test_resume.py (new)
"""


def test_sections_become_a_structured_summary() -> None:
    parsed = summary.structured(SECTIONED)
    assert parsed == {
        "done": "wrote the summary parser\nand its tests",
        "state": "- parser works\n- hook not wired yet",
        "next": "1. wire the hook\n2. docs",
        "files": ["git_rewind/summary.py", "tests/test_resume.py"],
        "text": SECTIONED.strip(),
    }


@pytest.mark.parametrize(("text", "expected"), [
    ("What was done: x\nCurrent state: y\nNext steps: z\nFiles: a.py, b/c.py",
     {"done": "x", "state": "y", "next": "z", "files": ["a.py", "b/c.py"]}),
    ("DONE: x\nnext: y", {"done": "x", "state": None, "next": "y", "files": []}),
    ("# Done\nx\n# Status\ny", {"done": "x", "state": "y", "next": None, "files": []}),
    ("Intro line kept only in text.\nState: half-way", {"done": None, "state": "half-way", "next": None,
                                                        "files": []}),
])
def test_section_spellings(text: str, expected: dict[str, Any]) -> None:
    assert summary.structured(text) == {**expected, "text": text.strip()}


@pytest.mark.parametrize("text", [
    "refactored the parser, next I will add tests",
    "Done with the parser but the state of the docs is poor",  # words, not headings
    "## Notes\nnothing in known sections",
])
def test_text_without_sections_stays_plain_text(text: str) -> None:
    assert summary.structured(f"  {text}\n") == text


def test_a_json_object_is_kept_as_given() -> None:
    assert summary.structured('{"done": "x", "custom": [1]}') == {"done": "x", "custom": [1]}
    assert summary.structured("[1, 2]") == "[1, 2]"


def test_snap_stores_the_structure_and_show_prints_it_readably(project: Workdir) -> None:
    project.ok("snap", "-m", "before /clear", "--summary", "-", input=SECTIONED)
    note = json.loads(project.ok("show", "@", "--json"))
    assert note["summary"]["files"] == ["git_rewind/summary.py", "tests/test_resume.py"]
    shown = project.ok("show", "@")
    assert "summary:\n  Done:\n    wrote the summary parser\n    and its tests\n" in shown
    assert "  Files: git_rewind/summary.py, tests/test_resume.py\n" in shown
    project.ok("snap", "--allow-empty", "--summary", "just words")
    assert "summary:\n  just words\n" in project.ok("show", "@")


# The context at session start --------------------------------------------------------------------


def start(agent: Agent, source: str = "startup",
          env: dict[str, str] | None = None) -> tuple[str | None, dict[str, Any]]:
    """A SessionStart through the real hook: (the additionalContext or None, the logged decision)."""
    run = agent.call(json.dumps(agent.payload("SessionStart", source=source)), env=env)
    assert (run.returncode, run.stderr) == (0, "")
    logged = decisions(agent.w)[-1]
    if not run.stdout:
        return None, logged
    out = json.loads(run.stdout)  # stdout is exactly one JSON object, nothing else
    assert run.stdout == json.dumps(out) + "\n"
    assert out == {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                          "additionalContext": out["hookSpecificOutput"]["additionalContext"]}}
    return out["hookSpecificOutput"]["additionalContext"], logged


def test_a_first_session_in_a_repository_is_told_nothing(agent_project: Workdir) -> None:
    context, logged = start(Agent(agent_project))
    assert context is None
    assert (logged["action"], logged["context"]) == ("checkpoint", "none: no earlier checkpoint")


def test_after_clear_the_new_session_hears_of_the_checkpoint_its_summary_and_what_changed(
        agent_project: Workdir) -> None:
    w = agent_project
    first = Agent(w, session="before")
    start(first)
    w.ok("snap", "-m", "wrote the parser", "--summary", "-", input=SECTIONED)
    saved = json.loads(w.ok("show", "@", "--json"))["seq"]
    w.write("src/app.py", "print('changed after the summary')\n")
    w.write("new.txt", "new\n")
    (w.path / "README.md").unlink()

    context, logged = start(Agent(w, session="after"), source="clear")
    assert context is not None
    lines = context.splitlines()
    assert lines[0] == f"Resumed from checkpoint #{saved}: parser works; hook not wired yet (saved just now)."
    assert "  Done:" in lines and "    wrote the summary parser" in lines
    assert "  Files: git_rewind/summary.py, tests/test_resume.py" in lines
    changed = lines[lines.index(f"Files changed since #{saved} (3):") + 1:][:3]
    assert changed == ["  deleted README.md", "  added new.txt", "  modified src/app.py"]
    assert f"`git rewind undo {saved}` restores the code as it was at #{saved}; `git rewind list`" in context
    assert "--full" not in context  # a checkpoint taken by hand has no conversation to rewind
    assert logged["context"] == {"from": saved, "changed": 3, "summary": saved}
    assert logged["seq"] == saved + 1  # the new session's own checkpoint is not the one it resumes from


def test_the_latest_summary_is_shown_even_when_newer_checkpoints_have_none(agent_project: Workdir) -> None:
    """/checkpoint, then /clear: the SessionEnd checkpoint is the newest, the summary is one older."""
    w = agent_project
    agent = Agent(w)
    start(agent)
    w.ok("snap", "--allow-empty", "--summary", "Next: write the docs")
    agent.send("SessionEnd", reason="clear")
    context, _ = start(Agent(w, session="cleared"), source="clear")
    assert context is not None
    assert context.startswith("Resumed from checkpoint #3: before /clear: Files changed: 0, lines added: 0, "
                              "lines removed: 0 (since #1) (saved just now).\n")
    assert "Latest summary, saved with checkpoint #2 (just now):\n  Next: write the docs\n" in context
    assert "Files changed since #3: none." in context
    assert "`git rewind undo 3 --full` restores the code and the conversation" in context  # the agent's own


def test_a_resumed_session_with_nothing_new_resumes_from_its_own_last_checkpoint(agent_project: Workdir) -> None:
    w = agent_project
    agent = Agent(w)
    start(agent)
    context, logged = start(agent, source="resume")
    assert logged["action"] == "unchanged" and logged["seq"] == 1
    assert context is not None and context.startswith("Resumed from checkpoint #1: session start (startup)")
    assert "Files changed since #1: none." in context


def test_the_file_list_is_capped(agent_project: Workdir) -> None:
    w = agent_project
    start(Agent(w))
    for i in range(25):
        w.write(f"gen/f{i:02}.txt", f"{i}\n")
    context, _ = start(Agent(w, session="two"))
    assert context is not None
    listed = [line for line in context.splitlines() if line.startswith("  added gen/")]
    assert len(listed) == 20 and "  and 5 more" in context.splitlines()
    assert "Files changed since #1 (25):" in context


def test_without_a_checkpoint_at_start_the_tree_is_scanned(agent_project: Workdir) -> None:
    """The minimal tier takes none at SessionStart: what changed is read from a fresh scan."""
    w = agent_project
    w.ok("snap", "-m", "by hand")
    w.write("src/app.py", "print('edited')\n")
    context, logged = start(Agent(w, env={"GIT_REWIND_TIER": "minimal"}))
    assert logged["action"] == "skip"
    assert context is not None and "  modified src/app.py" in context.splitlines()
    assert context.startswith("Resumed from checkpoint #1: by hand (saved just now).")


@pytest.mark.parametrize("how", ["environment", "project file"])
def test_auto_resume_on_start_off_means_silence(agent_project: Workdir, how: str) -> None:
    w = agent_project
    w.ok("snap", "-m", "earlier")
    env = {}
    if how == "environment":
        env = {"GIT_REWIND_AUTO_RESUME_ON_START": "no"}
    else:
        w.ok("config", "set", "auto_resume_on_start", "false")
    context, logged = start(Agent(w), env=env)
    assert context is None
    # The new session's own first checkpoint, though the tree is as the snap (another session's) holds it.
    assert (logged["action"], logged["context"]) == ("checkpoint", "off: auto_resume_on_start = false")


def test_a_context_that_cannot_be_built_is_left_out_and_the_agent_starts(agent_project: Workdir) -> None:
    w = agent_project
    w.ok("snap", "-m", "earlier")
    blob = w.git("hash-object", "-w", "README.md").strip()
    w.git("update-ref", "refs/notes/rewind", blob)  # notes that git cannot list
    agent = Agent(w, env={"GIT_REWIND_TIER": "minimal"})  # no checkpoint: only the context reads the notes
    run = agent.call(json.dumps(agent.payload("SessionStart", source="startup")))
    assert run.returncode == 0 and run.stdout == ""
    assert run.stderr.startswith("git-rewind: no resume context, ") and len(run.stderr.splitlines()) == 1
    logged = decisions(w)[-1]
    assert logged["context"] == "error" and "git notes failed" in logged["context_error"]
    assert "Traceback" in (w.path / ".git" / "rewind" / "hook-errors.log").read_text()


def test_a_summary_of_unknown_shape_falls_back_to_the_message(agent_project: Workdir) -> None:
    w = agent_project
    w.ok("snap", "-m", "tagged by a tool", "--summary", '{"ticket": "ENG-1"}')
    context, _ = start(Agent(w))
    assert context is not None and context.startswith("Resumed from checkpoint #1: tagged by a tool (saved")
    assert '  {"ticket": "ENG-1"}' in context.splitlines()


def test_droid_gets_the_same_context(agent_project: Workdir) -> None:
    w = agent_project
    w.ok("snap", "-m", "earlier")
    context, logged = start(Agent(w, agent="droid", session="droid-1"))
    assert logged["agent"] == "droid"
    assert context is not None and context.startswith("Resumed from checkpoint #1: earlier")


# Before /clear and compaction ---------------------------------------------------------------------


def numstat(w: Workdir, old: str, new: str) -> tuple[int, int, int]:
    """(files, lines added, lines removed) as `git diff --numstat` counts them ('-' for binary: 0 lines)."""
    rows = [line.split("\t") for line in w.git("diff", "--numstat", old, new).splitlines()]
    return (len(rows), sum(int(r[0]) for r in rows if r[0] != "-"),
            sum(int(r[1]) for r in rows if r[1] != "-"))


def test_clear_checkpoints_the_tree_with_what_changed_since_the_last_checkpoint(agent_project: Workdir) -> None:
    w = agent_project
    agent = Agent(w)
    start(agent)
    w.write("src/app.py", "print('hello')\n" + BIG)
    w.write("bin/data.bin", b"\x00\x01\x02binary\x00" * 10)
    (w.path / "README.md").unlink()
    taken = agent.send("SessionEnd", reason="clear")
    assert (taken["action"], taken["reason"]) == ("checkpoint", "before /clear")

    before, after = chain(w, "sess-1")
    files, added, removed = numstat(w, before["commit"], after["commit"])
    assert (files, added, removed) == (3, 10, 1)  # the binary file counts as changed, with no lines
    assert after["message"] == (f"before /clear: Files changed: {files}, lines added: {added}, "
                                f"lines removed: {removed} (since #1)")
    assert w.git("log", "-1", "--format=%s", after["commit"]).strip() == f"#2 {after['message']}"
    assert (after["trigger"], after["tags"]) == ("SessionEnd", ["clear"])
    assert after["changes"] == {"files": 3, "added": 10, "removed": 1, "since": 1}
    assert taken["changes"] == after["changes"]
    assert w.tree_of(after["commit"]) == w.add_all_tree()  # the whole tree, as git add -A sees it

    # Nothing changed: compaction still checkpoints, to anchor the conversation it is about to summarise.
    compacted = agent.send("PreCompact", trigger="auto", custom_instructions=None)
    assert (compacted["action"], compacted["reason"]) == ("checkpoint", "before compaction (auto)")
    last = chain(w, "sess-1")[-1]
    assert last["message"] == "before compaction (auto): Files changed: 0, lines added: 0, lines removed: 0 (since #2)"
    assert last["tags"] == ["compact"] and w.tree_of(last["commit"]) == w.tree_of(after["commit"])


def test_the_recorded_precompact_payload_checkpoints(agent_project: Workdir, home: Path) -> None:
    w = agent_project
    payload, hook_env = claude_sample("PreCompact", w.path, home)
    run = w.rewind("hook", input=json.dumps(payload), env=hook_env)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    (note,) = chain(w, payload["session_id"])
    # A first checkpoint of the session: counted against HEAD.
    files, added, removed = numstat(w, "HEAD", note["commit"])
    assert note["message"] == (f"before compaction (manual): Files changed: {files}, lines added: {added}, "
                               f"lines removed: {removed} (since HEAD)")
    assert files == 1  # notes.txt; .env, debug.log and node_modules/ are ignored
    assert note["conversation"]["prompt_id"] == payload["prompt_id"]


def test_session_ends_other_than_clear_take_nothing(agent_project: Workdir) -> None:
    agent = Agent(agent_project)
    start(agent)
    for reason in ("other", "prompt_input_exit", "logout"):
        skipped = agent.send("SessionEnd", reason=reason)
        assert (skipped["action"], skipped["reason"]) == (
            "skip", f"session end ({reason}): only /clear is checkpointed")
    assert len(chain(agent_project, "sess-1")) == 1


@pytest.mark.parametrize(("settings", "reason"), [
    ({"GIT_REWIND_AUTO_CHECKPOINT_ON_CLEAR": "0"}, "before /clear: auto_checkpoint_on_clear is off"),
    ({"GIT_REWIND_TIER": "minimal"}, "minimal tier: only before a file is created (SessionEnd)"),
])
def test_no_checkpoint_before_clear_when_turned_off_or_minimal(agent_project: Workdir, settings: dict[str, str],
                                                               reason: str) -> None:
    agent = Agent(agent_project, env=settings)
    skipped = agent.send("SessionEnd", reason="clear")
    assert (skipped["action"], skipped["reason"]) == ("skip", reason)
    assert chain(agent_project, "sess-1") == []


def test_verify_before_clear_off_keeps_the_message_short(agent_project: Workdir) -> None:
    agent = Agent(agent_project, env={"GIT_REWIND_VERIFY_BEFORE_CLEAR": "False"})
    agent.send("SessionEnd", reason="clear")
    agent.send("PreCompact", trigger="manual")
    notes = chain(agent_project, "sess-1")
    assert [n["message"] for n in notes] == ["before /clear", "before compaction (manual)"]
    assert notes[1]["tags"] == ["compact"] and "changes" not in notes[1]


# The settings ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "expected"), [("true", "true"), ("YES", "true"), ("1", "true"),
                                                 ("false", "false"), ("no", "false"), ("0", "false")])
def test_boolean_keys_from_the_environment(project: Workdir, value: str, expected: str) -> None:
    for key in ("auto_resume_on_start", "auto_checkpoint_on_clear", "verify_before_clear"):
        out = project.ok("config", "get", key, env={f"GIT_REWIND_{key.upper()}": value})
        assert out == f"{expected}\n"


def test_boolean_keys_defaults_files_and_errors(project: Workdir) -> None:
    w = project
    listed = w.ok("config", "list")
    for key in ("auto_resume_on_start", "auto_checkpoint_on_clear", "verify_before_clear"):
        assert f"{key} = true  # default" in listed
    assert w.ok("config", "set", "verify_before_clear", "no") == \
        f"verify_before_clear = false in {w.path / '.git-rewind.toml'}\n"
    assert (w.path / ".git-rewind.toml").read_text() == "verify_before_clear = false\n"

    bad = w.rewind("config", "set", "auto_resume_on_start", "maybe")
    assert bad.returncode != 0 and "auto_resume_on_start: not a boolean: 'maybe'" in bad.stderr
    env = w.rewind("config", "get", "tier", env={"GIT_REWIND_AUTO_CHECKPOINT_ON_CLEAR": "sometimes"})
    assert env.returncode != 0 and "GIT_REWIND_AUTO_CHECKPOINT_ON_CLEAR: not a boolean: 'sometimes'" in env.stderr
    (w.path / ".git-rewind.toml").write_text('verify_before_clear = "often"\n')
    run = w.rewind("config", "list")
    assert run.returncode != 0
    assert f"{w.path / '.git-rewind.toml'}: verify_before_clear: not a boolean" in run.stderr


def test_hooks_run_on_the_defaults_when_a_boolean_is_invalid_and_status_says_so(agent_project: Workdir) -> None:
    w = agent_project
    (w.path / ".git-rewind.toml").write_text("auto_checkpoint_on_clear = 3\n")
    taken = Agent(w).send("SessionEnd", reason="clear")
    assert taken["action"] == "checkpoint"  # the default: on
    assert "auto_checkpoint_on_clear: not a boolean: 3" in taken["config_error"]
    status = w.ok("status")
    assert "config error:" in status and "auto_checkpoint_on_clear: true  (default)" in status
    (w.path / ".git-rewind.toml").write_text("auto_checkpoint_on_clear = false\n")
    shown = w.ok("status")
    assert f"auto_checkpoint_on_clear: false  ({w.path / '.git-rewind.toml'})" in shown
    assert "recent hook decisions:" in shown and "SessionEnd: checkpoint #1 (before /clear)" in shown
