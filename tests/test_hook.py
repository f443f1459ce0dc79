"""`git rewind hook`: agents' hook calls become checkpoints in real repositories, and never fail the agent.

Each test plays an agent session against the real command: payloads on stdin (recorded Claude
Code payloads where there is one, else built from the documented fields), the agent's own
environment variables, then checks what git itself shows: the session's chain under
refs/rewind/<session>, each checkpoint's note (`git notes --ref=rewind show`), the decisions
in .git/rewind/hook.log, and that the user's index, HEAD and branches never moved.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from helpers.samples import CLAUDE_SAMPLES, claude_sample
from helpers.session import BIG, MAIN, PROMPT_ID, Agent, assert_context_or_silence, chain, decisions, protected, show
from helpers.workdir import REWIND, Run, Workdir

# A recorded session ------------------------------------------------------------------------------


def test_replaying_a_recorded_claude_code_session_checkpoints_start_and_prompts(
        agent_project: Workdir, home: Path) -> None:
    """The real payloads of session 4f9e…: start, prompt, Write, Edit, Bash, Stop, then a second prompt."""
    w = agent_project
    user = protected(w)

    def replay(name: str) -> dict[str, Any]:
        payload, hook_env = claude_sample(name, w.path, home)
        run = w.rewind("hook", input=json.dumps(payload), env=hook_env)
        assert (run.returncode, run.stderr) == (0, "")
        return decisions(w)[-1]

    assert replay("SessionStart_startup")["action"] == "checkpoint"
    assert replay("UserPromptSubmit")["action"] == "checkpoint"
    # The agent's Write and Edit of hello.py are small (15 and 7 characters): not worth a checkpoint.
    assert replay("PreToolUse_Write")["reason"] == "small change: 15 characters < 50"
    w.write("hello.py", "print('hello')\n")
    assert replay("PreToolUse_Edit")["reason"] == "small change: 7 characters < 50"
    w.write("hello.py", "print('hello, world')\n")
    w.write("made_by_bash.txt", "x\n")  # `echo x > made_by_bash.txt`: no hook names this file
    assert replay("PostToolUse_Bash")["reason"] == "balanced: nothing after Bash"
    assert replay("Stop")["reason"] == "turn end, if files changed"
    w.write("mine.txt", "mine\n")  # the person, between two turns
    payload, hook_env = claude_sample("UserPromptSubmit", w.path, home)
    payload.update(prompt="now add a test", prompt_id="prompt-2")
    assert w.rewind("hook", input=json.dumps(payload), env=hook_env).returncode == 0

    start, first, end, second = chain(w, MAIN)
    assert [c["seq"] for c in (start, first, end, second)] == [1, 2, 3, 4]
    # The turn end holds what the turn made, every path the agent's, with the turn's prompt and the tool
    # its hook named; the next prompt holds what the person did meanwhile.
    assert (end["trigger"], end["message"]) == ("Stop", "turn end")
    assert end["origins"] == {"hello.py": "agent", "made_by_bash.txt": "agent"}
    assert end["turn"] == {"session": MAIN, "agent": "claude-code", "prompt": "make hello", "seq": 2,
                           "tools": {"hello.py": "Edit"}}
    assert second["origins"] == {"mine.txt": "outside"} and "turn" not in second
    assert first["origins"] == {} and set(start["origins"].values()) <= {"outside"}
    assert (start["agent"], start["trigger"], start["message"]) == ("claude-code", "SessionStart",
                                                                    "session start (startup)")
    assert (first["trigger"], first["prompt"], first["tags"], first["tool"]) == (
        "UserPromptSubmit", "make hello", ["prompt"], None)
    assert first["conversation"] == {"transcript": payload["transcript_path"], "prompt_id": PROMPT_ID,
                                     "tool_use_id": None, "message_uuid": None, "offset": None}
    assert first["conversation"]["transcript"].startswith(str(home / ".claude" / "projects"))
    assert w.tree_of(first["commit"]) == w.tree_of(start["commit"])  # a prompt is recorded even unchanged
    # The next prompt's full checkpoint holds what the Write, the Edit and the Bash command made.
    assert (second["prompt"], second["conversation"]["prompt_id"]) == ("now add a test", "prompt-2")
    assert set(end["paths"]) == {"hello.py", "made_by_bash.txt"}
    assert show(w, end["commit"], "made_by_bash.txt") == "x\n"
    assert show(w, end["commit"], "hello.py") == "print('hello, world')\n"
    assert w.tree_of(second["commit"]) == w.add_all_tree()  # exactly what `git add -A` would record
    assert show(w, second["commit"], ".env") is None  # ignored files are never captured
    assert w.git("log", "--format=%s", f"refs/rewind/{MAIN}").splitlines() == [
        "#4 prompt: now add a test", "#3 turn end", "#2 prompt: make hello", "#1 session start (startup)"]
    assert [d["action"] for d in decisions(w)] == ["checkpoint", "checkpoint", "skip", "skip", "skip", "checkpoint",
                                                   "checkpoint"]
    assert protected(w) == user
    w.fsck()


def test_every_recorded_payload_passes_through_silently(agent_project: Workdir, home: Path) -> None:
    """Whatever event the agent sends (subagents, compaction, permissions, session end), exit 0 and quiet.

    Only a SessionStart after an earlier checkpoint says something: the resume context, as JSON.
    """
    w = agent_project
    names = sorted(p.stem for p in CLAUDE_SAMPLES.glob("*.json") if "hook_stdin" in json.loads(p.read_text()))
    assert len(names) >= 29
    events = set()
    for name in names:
        payload, hook_env = claude_sample(name, w.path, home)
        events.add(payload["hook_event_name"])
        run = w.rewind("hook", input=json.dumps(payload), env=hook_env)
        assert (run.returncode, run.stderr) == (0, ""), name
        assert_context_or_silence(run, payload["hook_event_name"])
    logged = decisions(w)
    assert len(logged) == len(names)
    assert [d for d in logged if d["action"] == "error"] == []
    assert {d["event"] for d in logged} == events
    w.fsck()


# Tiers, end to end -------------------------------------------------------------------------------


def test_balanced_edits_anti_spam_and_prompts_between_them(agent_project: Workdir) -> None:
    w = agent_project
    agent = Agent(w)
    agent.start()
    agent.prompt("add error handling")
    w.write("src/app.py", "print('hello')\n" + BIG)  # the agent's earlier work, not yet checkpointed
    taken = agent.edit("src/app.py", "print('hello')", "try:\n    print('hello')\nexcept OSError:\n    raise\n")
    assert (taken["action"], taken["paths"], taken["reason"]) == ("checkpoint", ["src/app.py"], "before Edit")
    w.write("README.md", "# demo\n" + BIG)
    suppressed = agent.edit("README.md", "# demo", "# demo\n" + BIG)
    assert suppressed["action"] == "skip" and suppressed["reason"].startswith("anti-spam: last edit checkpoint")
    assert agent.prompt("and document it", "prompt-2")["action"] == "checkpoint"  # prompts are never suppressed
    assert agent.edit("README.md", "# demo", BIG)["reason"].startswith("anti-spam")

    notes = chain(w, "sess-1")
    assert [(n["seq"], n["trigger"], n["tool"]) for n in notes] == [
        (1, "SessionStart", None), (2, "UserPromptSubmit", None), (3, "PreToolUse", "Edit"),
        (4, "UserPromptSubmit", None)]
    edit = notes[2]
    assert (edit["paths"], edit["message"], edit["prompt"]) == (["src/app.py"], "before Edit src/app.py",
                                                               "add error handling")
    assert edit["conversation"]["tool_use_id"].startswith("toolu_")
    assert edit["conversation"]["transcript"] == agent.transcript
    # A known-path checkpoint: the named file as it is now, everything else carried from the tip.
    assert show(w, edit["commit"], "src/app.py") == "print('hello')\n" + BIG
    assert show(w, edit["commit"], "README.md") == "# demo\n"
    assert show(w, notes[3]["commit"], "README.md") == "# demo\n" + BIG


def test_three_edits_within_a_minute_are_one_batch(agent_project: Workdir) -> None:
    w = agent_project
    agent = Agent(w, env={"GIT_REWIND_ANTI_SPAM_SECONDS": "0"})
    agent.start()
    actions = []
    for name in ("a", "b", "c", "d"):
        w.write(f"src/{name}.py", BIG)
        actions.append(agent.write(f"src/{name}.py", BIG + "more\n" * 20))
    assert [a["action"] for a in actions] == ["checkpoint", "checkpoint", "skip", "skip"]
    assert actions[2]["reason"].startswith("batch: 3 edits in")
    assert [n["paths"] for n in chain(w, "sess-1")[1:]] == [["src/a.py"], ["src/b.py"]]


def test_critical_small_and_excluded_edits(agent_project: Workdir) -> None:
    w = agent_project
    agent = Agent(w)
    agent.start()
    w.write("package.json", '{"name": "demo"}\n')
    w.write("src/app.py", "print('hi')\n")
    assert agent.edit("src/app.py", "hi", "hey")["reason"] == "small change: 2 characters < 50"
    critical = agent.edit("package.json", '"demo"', '"demo2"')
    assert (critical["action"], critical["reason"]) == ("checkpoint", "critical file package.json")
    assert chain(w, "sess-1")[-1]["paths"] == ["package.json"]
    for rel, pattern in (("dist/bundle.js", "dist/"), ("node_modules/pkg/index.js", "node_modules/"),
                         ("server.log", "*.log")):
        assert agent.write(rel, BIG)["reason"] == f"excluded ({pattern})"
    assert len(chain(w, "sess-1")) == 2


def test_aggressive_checkpoints_after_shell_commands_turn_end_and_tags_risky_prompts(
        agent_project: Workdir) -> None:
    w = agent_project
    agent = Agent(w, env={"GIT_REWIND_TIER": "aggressive"})
    agent.start()
    risky = agent.prompt("Refactor all the handlers")
    assert risky["reason"] == "risky prompt (matches 'refactor all')"
    w.write("generated.txt", "made by a script\n")
    assert agent.after_bash("python gen.py")["action"] == "checkpoint"
    assert agent.after_bash("ls")["action"] == "unchanged"  # nothing changed: no checkpoint
    assert agent.stop()["action"] == "unchanged"
    w.write("src/app.py", "print('changed by a formatter')\n")
    assert agent.stop()["action"] == "checkpoint"
    # 24 changed characters: under aggressive's 25.
    assert agent.edit("src/app.py", "x", "y" * 24)["reason"] == "small change: 24 characters < 25"

    notes = chain(w, "sess-1")
    assert [n["message"] for n in notes] == ["session start (startup)", "prompt: Refactor all the handlers",
                                            "after Bash: python gen.py", "turn end"]
    assert notes[2]["command"] == "python gen.py"  # the command that made the step, whole
    assert notes[1]["tags"] == ["prompt", "risky"]
    assert (notes[2]["trigger"], notes[2]["tool"], notes[2]["paths"]) == ("PostToolUse", "Bash", ["generated.txt"])
    assert notes[2]["prompt"] == "Refactor all the handlers"  # the prompt the command belonged to
    assert (notes[3]["trigger"], notes[3]["paths"]) == ("Stop", ["src/app.py"])


def test_minimal_checkpoints_only_before_a_write(agent_project: Workdir) -> None:
    w = agent_project
    agent = Agent(w, env={"GIT_REWIND_TIER": "minimal"})
    assert agent.start()["action"] == "skip"
    assert agent.prompt("go")["action"] == "skip"
    w.write("src/app.py", BIG)
    assert agent.edit("src/app.py", "line 1", BIG)["action"] == "skip"
    assert agent.write("src/app.py", "x")["action"] == "checkpoint"  # one character: no threshold
    w.write("src/app.py", "x")
    assert agent.write("src/app.py", "y")["action"] == "checkpoint"  # a second later: no anti-spam
    assert agent.after_bash("make")["action"] == "skip" and agent.stop()["action"] == "skip"
    notes = chain(w, "sess-1")
    assert [(n["trigger"], n["tool"], n["named"]) for n in notes] == [("PreToolUse", "Write", ["src/app.py"])] * 2
    # What changed since the work tree's previous checkpoint (the first: since HEAD, the untracked notes.txt too).
    assert [n["paths"] for n in notes] == [["notes.txt", "src/app.py"], ["src/app.py"]]
    assert show(w, notes[0]["commit"], "src/app.py") == BIG
    assert show(w, notes[1]["commit"], "src/app.py") == "x"


def test_droid_session_through_its_own_environment(agent_project: Workdir) -> None:
    w = agent_project
    agent = Agent(w, agent="droid", session="droid-1")
    agent.start()
    assert agent.send("UserPromptSubmit", prompt="patch it", message_id="msg-1", has_images=False)["action"] == \
        "checkpoint"
    w.write("src/app.py", "print('hello')\n" + BIG)
    added = "".join(f"+{line}\n" for line in BIG.splitlines())
    patch = f"*** Begin Patch\n*** Update File: src/app.py\n@@\n-print('hello')\n{added}*** End Patch\n"
    taken = agent.send("PreToolUse", tool_name="ApplyPatch", tool_input={"input": patch})
    assert (taken["action"], taken["agent"], taken["paths"]) == ("checkpoint", "droid", ["src/app.py"])
    create = agent.send("PreToolUse", tool_name="Create", tool_input={"file_path": str(w.path / "new.py"),
                                                                       "content": BIG})
    assert create["reason"].startswith("anti-spam")
    assert agent.send("PostToolUse", tool_name="Execute", tool_input={"command": "make", "summary": "build"},
                      tool_response='{"exitCode": 0}')["reason"] == "balanced: nothing after Execute"
    notes = chain(w, "droid-1")
    assert [(n["agent"], n["trigger"], n["tool"]) for n in notes] == [
        ("droid", "SessionStart", None), ("droid", "UserPromptSubmit", None), ("droid", "PreToolUse", "ApplyPatch")]
    assert notes[1]["conversation"]["prompt_id"] == "msg-1"
    assert notes[2]["prompt"] == "patch it"


def test_the_agent_option_overrides_detection(agent_project: Workdir) -> None:
    w = agent_project
    agent = Agent(w, session="s-opt")
    payload = json.dumps(agent.payload("SessionStart", source="startup"))
    assert agent.call(payload, "--agent", "droid").returncode == 0  # CLAUDECODE=1 is set, but we were told
    assert agent.call(payload, "--agent=droid").returncode == 0
    assert [d["agent"] for d in decisions(w)] == ["droid", "droid"]
    assert chain(w, "s-opt")[0]["agent"] == "droid"


# Parallel hooks --------------------------------------------------------------------------------


def test_parallel_edit_hooks_of_one_session_pass_anti_spam_once(agent_project: Workdir) -> None:
    """Six PreToolUse Edit hooks at once (parallel tool calls): exactly one edit checkpoint."""
    w = agent_project
    agent = Agent(w)
    agent.start()
    user = protected(w)
    payloads = []
    for i in range(6):
        w.write(f"src/mod{i}.py", f"# module {i}\n" + BIG)  # every file changed since the session start
        payloads.append(json.dumps(agent.payload(
            "PreToolUse", tool_name="Edit", tool_use_id=f"toolu_par{i}",
            tool_input={"file_path": str(w.path / f"src/mod{i}.py"), "old_string": f"# module {i}",
                        "new_string": BIG})))
    with ThreadPoolExecutor(len(payloads)) as pool:
        runs = list(pool.map(agent.call, payloads))
    assert [(r.returncode, r.stderr) for r in runs] == [(0, "")] * 6
    edits = [d for d in decisions(w) if d["event"] == "PreToolUse"]
    assert sorted(d["action"] for d in edits) == ["checkpoint"] + ["skip"] * 5
    assert all(d["reason"].startswith("anti-spam") for d in edits if d["action"] == "skip")
    notes = chain(w, "sess-1")
    assert len(notes) == 2 and notes[1]["trigger"] == "PreToolUse"
    winner = next(d for d in edits if d["action"] == "checkpoint")
    assert notes[1]["paths"] == winner["paths"] and notes[1]["seq"] == winner["seq"]
    assert protected(w) == user
    w.fsck()


def test_parallel_prompts_lose_no_checkpoint_and_reuse_no_seq(agent_project: Workdir) -> None:
    """Prompts from two sessions at once, several per session: every one is a checkpoint."""
    w = agent_project
    agents = [Agent(w, session="left"), Agent(w, session="right")]
    calls = [(a, json.dumps(a.payload("UserPromptSubmit", prompt=f"{a.session} {i}", prompt_id=f"{a.session}-{i}")))
             for i in range(3) for a in agents]
    with ThreadPoolExecutor(len(calls)) as pool:
        runs = list(pool.map(lambda call: call[0].call(call[1]), calls))
    assert [(r.returncode, r.stderr) for r in runs] == [(0, "")] * len(calls)
    seqs = []
    for agent in agents:
        notes = chain(w, agent.session)
        assert sorted(n["prompt"] for n in notes) == [f"{agent.session} {i}" for i in range(3)]
        assert [n["seq"] for n in notes] == sorted(n["seq"] for n in notes)  # increasing along the chain
        seqs += [n["seq"] for n in notes]
    assert sorted(seqs) == list(range(1, 7))
    logged = sorted(d["seq"] for d in decisions(w))
    assert logged == list(range(1, 7))
    w.fsck()


# Never failing the agent -----------------------------------------------------------------------


def _one_line(run: Run) -> str:
    assert run.returncode == 0 and run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("git-rewind: hook skipped, "), run.stderr
    return lines[0]


@pytest.mark.parametrize(("stdin", "says"), [
    ("[1, 2]", "not a JSON object"),
    ("null", "not a JSON object"),
    ('"SessionStart"', "not a JSON object"),
])
def test_a_payload_that_is_not_an_object_is_one_line_and_exit_0(agent_project: Workdir, stdin: str,
                                                               says: str) -> None:
    assert says in _one_line(Agent(agent_project).call(stdin))
    assert not (agent_project.path / ".git" / "refs" / "rewind").exists()


@pytest.mark.parametrize("stdin", ["", "{", '{"session_id": "s", "cwd": ', "not json at all", '{"a" 1}'])
def test_malformed_json_is_one_clear_line_and_exit_0(agent_project: Workdir, stdin: str) -> None:
    line = _one_line(Agent(agent_project).call(stdin))
    assert "hook payload is not JSON" in line


def test_malformed_json_is_logged_in_the_repository_the_hook_runs_in(agent_project: Workdir) -> None:
    """Agents run hooks in the project directory: the trace belongs in its .git/rewind/."""
    w = agent_project
    line = _one_line(Agent(w).call("{"))
    log = w.path / ".git" / "rewind" / "hook-errors.log"
    assert str(log) in line
    assert "Traceback" in log.read_text()


def test_missing_or_unusable_session_ids_are_errors_logged_with_their_trace(agent_project: Workdir) -> None:
    w = agent_project
    agent = Agent(w)
    no_session = {k: v for k, v in agent.payload("UserPromptSubmit", prompt="hi").items() if k != "session_id"}
    assert "UserPromptSubmit payload has no session_id" in _one_line(agent.call(json.dumps(no_session)))
    bad = {**agent.payload("Stop"), "session_id": "../../heads/main"}
    assert "invalid session name" in _one_line(agent.call(json.dumps(bad)))

    errors = (w.path / ".git" / "rewind" / "hook-errors.log").read_text()
    assert errors.count("Traceback") == 2 and "agent=claude-code" in errors
    assert [(d["action"], d["reason"]) for d in decisions(w)] == [
        ("error", "UserPromptSubmit payload has no session_id"),
        ("error", "invalid session name: '../../heads/main' (letters, digits, '.', '_', '-')")]
    assert w.git("for-each-ref", "refs/rewind", "refs/heads") == w.git("for-each-ref", "refs/heads")


def test_an_unknown_agent_is_one_line_and_exit_0(agent_project: Workdir) -> None:
    """`hook` is dispatched before click, whose option check would exit 2: the agent still sees 0."""
    agent = Agent(agent_project)
    line = _one_line(agent.call(json.dumps(agent.payload("Stop")), "--agent", "roo-code"))
    assert "unknown agent: roo-code" in line


def test_outside_a_repository_the_hook_logs_once_and_says_nothing(agent_project: Workdir, tmp_path: Path,
                                                                  home: Path) -> None:
    plain = tmp_path / "plain-dir"
    plain.mkdir()
    agent = Agent(agent_project)
    payload = json.dumps({**agent.payload("UserPromptSubmit", prompt="hi"), "cwd": str(plain)})
    for _ in range(2):
        run = agent.call(payload, cwd=plain)
        assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    log = home / ".local" / "state" / "git-rewind" / "hook.log"
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(entries) == 1
    assert (entries[0]["cwd"], entries[0]["action"]) == (str(plain), "skip")
    assert "not a git repository" in entries[0]["reason"]
    assert not (plain / ".git").exists()


@pytest.mark.parametrize(("setup", "where"), [
    ({"GIT_REWIND_TIER": "turbo"}, "GIT_REWIND_TIER"),
    ({"GIT_REWIND_ANTI_SPAM_SECONDS": "soon"}, "GIT_REWIND_ANTI_SPAM_SECONDS"),
    ({"GIT_REWIND_RISKY_PROMPTS": "(unclosed"}, "GIT_REWIND_RISKY_PROMPTS"),
    ("anti_spam_seconds = -3\n", ".git-rewind.toml: anti_spam_seconds"),
    ("tier = [\n", "invalid TOML"),
])
def test_an_invalid_config_value_falls_back_to_defaults_and_is_logged(
        agent_project: Workdir, setup: dict[str, str] | str, where: str) -> None:
    w = agent_project
    if isinstance(setup, str):
        w.write(".git-rewind.toml", setup)
    agent = Agent(w, env=setup if isinstance(setup, dict) else None)
    start = agent.start()
    assert start["action"] == "checkpoint" and where in start["config_error"]
    w.write("src/app.py", "print('hello')\n" + BIG)
    edit = agent.edit("src/app.py", "print('hello')", BIG)
    assert edit["action"] == "checkpoint" and where in edit["config_error"]
    # The defaults: balanced's 30 s anti-spam applies to the next edit.
    suppressed = agent.edit("src/app.py", "line 1", BIG)["reason"]
    assert suppressed.startswith("anti-spam: last edit checkpoint") and suppressed.endswith("(< 30 s)")


@pytest.mark.parametrize("name", ["sessions/sess-1.json", "config-cache.json"])
def test_a_corrupted_state_file_is_started_afresh(agent_project: Workdir, name: str) -> None:
    """The hook's own files under .git/rewind/ (session state, config cache), cut short by a full disk."""
    w = agent_project
    w.write(".git-rewind.toml", 'tier = "aggressive"\n')
    agent = Agent(w)
    agent.start()
    agent.prompt("first")
    state = w.path / ".git" / "rewind" / name
    assert isinstance(json.loads(state.read_text()), dict)
    state.write_text(state.read_text()[:20])
    assert agent.prompt("still works")["action"] == "checkpoint"
    assert isinstance(json.loads(state.read_text()), dict)  # rewritten whole
    assert agent.after_bash("true")["reason"] == "after Bash, if files changed"  # still aggressive


# Paths: only inside the work tree ------------------------------------------------------------------


def test_files_outside_the_repository_are_ignored(agent_project: Workdir, tmp_path: Path) -> None:
    w = agent_project
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside\n")
    agent = Agent(w)
    agent.start()
    for path in (str(outside / "secret.txt"), "../elsewhere/secret.txt", str(w.path / ".git" / "config"),
                 str(w.path / "src" / ".." / ".." / "elsewhere" / "secret.txt")):
        decision = agent.write(path, BIG)
        assert (decision["action"], decision["paths"], decision["reason"]) == (
            "skip", [], "no file inside the repository"), path
    assert len(chain(w, "sess-1")) == 1
    assert (outside / "secret.txt").read_text() == "outside\n"


def test_a_symlinked_directory_pointing_outside_is_not_followed(agent_project: Workdir, tmp_path: Path) -> None:
    w = agent_project
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOKEN=outside\n")
    agent = Agent(w)
    agent.start()
    (w.path / "vendor").symlink_to(outside, target_is_directory=True)
    (w.path / "link.txt").symlink_to(outside / "secret.txt")
    for rel in ("vendor/secret.txt", "vendor/new.py"):
        assert agent.write(rel, BIG)["reason"] == "no file inside the repository", rel
    # A symlink as the file itself is recorded as the link it is, never as what it points to.
    assert agent.edit("link.txt", "TOKEN=outside", BIG)["action"] == "checkpoint"
    assert agent.prompt("look")["action"] == "checkpoint"
    notes = chain(w, "sess-1")
    assert [n["trigger"] for n in notes] == ["SessionStart", "PreToolUse", "UserPromptSubmit"]
    assert notes[1]["paths"] == ["link.txt"]
    links = [w.git("ls-tree", "--format=%(objectmode) %(path)", n["commit"], "vendor", "link.txt") for n in notes]
    assert links == ["", "120000 link.txt\n", "120000 link.txt\n120000 vendor\n"]
    assert show(w, notes[2]["commit"], "link.txt") == str(outside / "secret.txt")  # the link's target, not content
    for note in notes:
        assert w.git("grep", "-c", "TOKEN", note["commit"], check=False) == ""
    assert (outside / "secret.txt").read_text() == "TOKEN=outside\n"


def test_a_project_reached_through_a_symlinked_path_still_takes_edit_checkpoints(
        agent_project: Workdir, tmp_path: Path) -> None:
    """The agent's cwd and file paths use the path the user opened, e.g. ~/work → /data/work."""
    w = agent_project
    alias = tmp_path / "alias"
    alias.symlink_to(w.path, target_is_directory=True)
    agent = Agent(w)
    agent.start()
    w.write("src/app.py", "print('hello')\n" + BIG)
    payload = {**agent.payload("PreToolUse", tool_name="Edit", tool_use_id="toolu_alias",
                               tool_input={"file_path": str(alias / "src" / "app.py"),
                                           "old_string": "print('hello')", "new_string": BIG}),
               "cwd": str(alias)}
    assert agent.call(json.dumps(payload), cwd=alias).returncode == 0
    decision = decisions(w)[-1]
    assert (decision["action"], decision["paths"]) == ("checkpoint", ["src/app.py"])


# Which repository --------------------------------------------------------------------------------


def test_the_repository_is_the_one_holding_the_payloads_cwd(agent_project: Workdir, tmp_path: Path) -> None:
    w = agent_project
    other = Workdir(tmp_path / "other", w.env)
    other.path.mkdir()
    other.git("init", "-q", "-b", "main")
    agent = Agent(w)
    payload = json.dumps({**agent.payload("SessionStart", source="startup"), "cwd": str(w.path / "src")})
    assert agent.call(payload, cwd=other.path).returncode == 0  # the hook's own cwd is another repository
    assert w.git("for-each-ref", "--format=%(refname)", "refs/rewind") == "refs/rewind/sess-1\n"
    assert other.git("for-each-ref", "refs/rewind") == ""
    # With no usable cwd in the payload, the directory the agent ran the hook in decides.
    gone = json.dumps({**agent.payload("SessionStart", source="startup"), "cwd": str(tmp_path / "gone")})
    assert agent.call(gone, cwd=other.path).returncode == 0
    assert other.git("for-each-ref", "--format=%(refname)", "refs/rewind") == "refs/rewind/sess-1\n"


def test_a_linked_worktree_checkpoints_into_the_shared_store(agent_project: Workdir, tmp_path: Path) -> None:
    w = agent_project
    linked = tmp_path / "linked"
    w.git("worktree", "add", "-q", str(linked), "-b", "feature")
    user = protected(w)
    wt = Workdir(linked, w.env)
    (linked / "feature.txt").write_text("feature work\n")
    agent = Agent(wt, session="wt-sess")
    agent.env.update(CLAUDE_PROJECT_DIR=str(linked))
    run = agent.call(json.dumps(agent.payload("UserPromptSubmit", prompt="in the linked tree")), cwd=linked)
    assert (run.returncode, run.stderr) == (0, "")
    note = chain(w, "wt-sess")[0]
    assert (note["branch"], show(w, note["commit"], "feature.txt")) == ("feature", "feature work\n")
    gitdir = Path(wt.git("rev-parse", "--absolute-git-dir").strip())
    assert decisions(w, gitdir / "rewind" / "hook.log")[0]["seq"] == 1
    assert protected(w) == user
    w.fsck()


# What the user sees ----------------------------------------------------------------------------


def test_status_shows_the_tier_its_source_and_the_last_decisions(agent_project: Workdir) -> None:
    w = agent_project
    agent = Agent(w, env={"GIT_REWIND_TIER": "aggressive"})
    agent.start()
    w.write("src/app.py", "print('hello')\n" + BIG)
    agent.edit("src/app.py", "print('hello')", BIG)
    agent.edit("src/app.py", "line 1", BIG)

    out = w.ok("status", env={"GIT_REWIND_TIER": "aggressive"})
    assert "tier: aggressive  (environment)" in out
    assert "anti_spam_seconds: 15  (tier aggressive)" in out
    lines = out.splitlines()
    start = lines.index("recent hook decisions:")
    shown = lines[start + 1:]
    assert len(shown) == 3
    assert shown[0].endswith("SessionStart: checkpoint #1 (session start (startup))")
    assert shown[1].endswith("PreToolUse Edit src/app.py: checkpoint #2 (before Edit)")
    assert "PreToolUse Edit src/app.py: skip (anti-spam: last edit checkpoint" in shown[2]
    assert w.ok("status").splitlines()[0] == "tier: balanced  (default)"

    data = json.loads(w.ok("status", "--json", "-n", "2"))
    assert data["settings"]["tier"] == {"value": "balanced", "source": "default"}
    assert [d["action"] for d in data["decisions"]] == ["checkpoint", "skip"]
    assert data["repository"] == str(w.path)


def test_hook_help_is_the_commands_help(agent_project: Workdir) -> None:
    out = agent_project.ok("hook", "--help")
    assert "stdin" in out and "--agent" in out


def test_a_fifo_named_by_a_payload_never_blocks_the_hook(agent_project: Workdir, tmp_path: Path) -> None:
    """A Write or Edit naming a FIFO, in the work tree or outside it: the hook answers at once, opens
    nothing but regular files and captures no FIFO (issue 12, item 8). A hang fails on the timeout."""
    w = agent_project
    inside = w.path / "pipe"
    outside = tmp_path / "outside-pipe"
    os.mkfifo(inside)
    os.mkfifo(outside)
    agent = Agent(w, env={"GIT_REWIND_ANTI_SPAM_SECONDS": "0", "GIT_REWIND_MIN_CHANGE_CHARS": "0"})
    agent.prompt("go")
    before = len(decisions(w))
    for path in (inside, outside):
        for tool, tool_input in (("Write", {"file_path": str(path), "content": "x" * 80}),
                                 ("Edit", {"file_path": str(path), "old_string": "a", "new_string": "b" * 80})):
            payload = json.dumps(agent.payload("PreToolUse", tool_name=tool, tool_input=tool_input,
                                               tool_use_id=f"toolu_fifo_{tool}"))
            run = subprocess.run([*REWIND, "hook"], input=payload, text=True, capture_output=True, cwd=w.path,
                                 env={**w.env, **agent.env}, timeout=30)
            assert (run.returncode, run.stderr) == (0, ""), run.stderr
    assert stat.S_ISFIFO(os.lstat(inside).st_mode) and stat.S_ISFIFO(os.lstat(outside).st_mode)
    files = w.git("ls-tree", "-r", "--name-only", "refs/rewind/sess-1").split()
    assert "pipe" not in files and "src/app.py" in files
    logged = decisions(w)[before:]
    assert len(logged) == 4 and all(d["action"] != "error" for d in logged), logged
    assert [d["paths"] for d in logged] == [["pipe"], ["pipe"], [], []]  # outside the work tree: not followed


def test_a_payload_naming_a_file_that_is_no_transcript_of_the_agent_records_none(agent_project: Workdir,
                                                                                 tmp_path: Path) -> None:
    """A hostile payload cannot plant /etc/passwd in a note: only a path where the agent keeps its
    transcripts is recorded (the rewind checks again, and the file's format, before touching it)."""
    w = agent_project
    agent = Agent(w, env={"GIT_REWIND_ANTI_SPAM_SECONDS": "0"})
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:root:/root:/bin/sh\n")
    for planted in (str(secret), "/etc/passwd", "relative.jsonl", str(Path(agent.transcript).parent / ".." / ".." /
                                                                      ".." / "passwd.jsonl")):
        agent.transcript = planted
        assert agent.prompt(f"prompt naming {planted}", prompt_id=planted)["action"] == "checkpoint"
        assert chain(w, "sess-1")[-1]["conversation"]["transcript"] is None
    agent.transcript = str(Path(w.env["HOME"]) / ".claude" / "projects" / "p" / "sess-1.jsonl")
    assert agent.prompt("the real one", prompt_id="real")["action"] == "checkpoint"
    assert chain(w, "sess-1")[-1]["conversation"]["transcript"] == agent.transcript


# Every shell command undoable: balanced + the daemon ---------------------------------------------------
#
# Each agent that reports a shell command's completion, in its own recorded (or documented) payload with
# the command swapped for the test's: with the daemon running, a command that changed a file gets its own
# checkpoint named by its command line; one that changed nothing is skipped on the daemon's word, with the
# reason in hook.log; without the daemon, nothing after it, as before.

SAMPLES = CLAUDE_SAMPLES.parent


def _jsonl(path: Path, home: Path, root: Path) -> list[dict[str, Any]]:
    text = path.read_text().replace("@HOME@", str(home)).replace("@PROJECT@", str(root))
    text = text.replace("@TRANSCRIPT@", str(home / "transcript.json"))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _post_shell(agent: str, session: str, command: str, root: Path, home: Path) -> tuple[dict[str, Any], str]:
    """AGENT's payload after a shell command ran COMMAND in ROOT, and the tool name its checkpoint records."""
    if agent == "claude-code":
        payload, _env = claude_sample("PostToolUse_Bash", root, home)
        payload["tool_input"]["command"] = command
        return {**payload, "session_id": session}, "Bash"
    if agent == "gemini":
        payload = next(p for p in _jsonl(SAMPLES / "gemini" / "payloads.jsonl", home, root)
                       if p["hook_event_name"] == "AfterTool")
        payload["tool_input"]["command"] = command
        return {**payload, "session_id": session}, "run_shell_command"
    if agent == "qwen":
        recorded = _jsonl(SAMPLES / "qwen" / "hooks-run1-new.jsonl", Path("/home/dev/work/home-qwen"), root)
        payload = next(p for p in (r.get("stdin_json", r) for r in recorded)
                       if p.get("hook_event_name") == "PostToolUse" and p.get("tool_name") == "run_shell_command")
        payload["tool_input"]["command"] = command
        return {**payload, "session_id": session, "cwd": str(root), "transcript_path": None}, "run_shell_command"
    if agent == "copilot":
        payload = next(r["payload"] for r in _jsonl(SAMPLES / "copilot" / "payloads.jsonl", home, root)
                       if r["event"] == "postToolUse" and r["payload"].get("toolName") == "bash")
        payload["toolArgs"]["command"] = command
        return {**payload, "sessionId": session}, "bash"
    if agent == "cursor":  # shared/agents/other-agents.md: afterShellExecution {command, cwd, output, duration}
        return {"hook_event_name": "afterShellExecution", "conversation_id": session, "generation_id": "gen-1",
                "workspace_roots": [str(root)], "command": command, "output": "", "duration": 3}, "Shell"
    if agent in ("opencode", "kilo"):  # our plugin's tool.execute.after (resources/opencode/git-rewind.ts)
        return {"event": "tool.execute.after", "sessionID": session, "callID": "call_1", "tool": "bash",
                "args": {"command": command, "description": "run it"}, "directory": str(root),
                "worktree": str(root)}, "bash"
    tool = {"droid": "Execute", "codex": "Bash"}[agent]  # Claude-style: other-agents.md §5, codex-hook-schemas
    return {"session_id": session, "cwd": str(root), "hook_event_name": "PostToolUse", "tool_name": tool,
            "tool_input": {"command": command}, "tool_use_id": "call_1", "turn_id": "turn-1"}, tool


SHELL_AGENTS = ["claude-code", "droid", "codex", "gemini", "qwen", "copilot", "cursor", "opencode", "kilo"]


@pytest.mark.parametrize("agent", SHELL_AGENTS)
def test_with_the_daemon_each_shell_command_that_changed_files_is_its_own_checkpoint(
        agent_project: Workdir, home: Path, daemons: list[Workdir], agent: str) -> None:
    w = agent_project
    user = protected(w)
    session = "ses_shell1"
    w.write("a.txt", "one\n")
    w.write("b.txt", "two\n")

    def after(command: str) -> dict[str, Any]:
        subprocess.run(["sh", "-c", command], cwd=w.path, check=True)
        payload, _tool = _post_shell(agent, session, command, w.path, home)
        run = w.rewind("hook", "--agent", agent, input=json.dumps(payload))
        assert run.returncode == 0 and run.stderr == "", run.stderr
        return decisions(w)[-1]

    daemons.append(w)
    w.ok("daemon", "start")
    w.ok("snap", "--session", session, "-m", "the session's start")  # its first checkpoint: what is compared with
    tool = _post_shell(agent, session, "true", w.path, home)[1]

    first = after("sed -i 's/one/ONE/' a.txt")
    assert (first["action"], first["reason"], first["seq"]) == ("checkpoint", f"after {tool}, if files changed", 2)
    quiet = after("cat a.txt b.txt >/dev/null; ls")
    assert (quiet["action"], quiet["reason"]) == ("skip", f"after {tool}: nothing changed (daemon: no file changed "
                                                          "since #2)")
    second = after("sed -i 's/two/TWO/' b.txt")
    assert (second["action"], second["seq"]) == ("checkpoint", 3)
    notes = chain(w, session)
    assert [(n["seq"], n["tool"], n["paths"], n["message"]) for n in notes[1:]] == [
        (2, tool, ["a.txt"], "after " + tool + ": sed -i 's/one/ONE/' a.txt"),
        (3, tool, ["b.txt"], "after " + tool + ": sed -i 's/two/TWO/' b.txt")]
    assert notes[2]["command"] == "sed -i 's/two/TWO/' b.txt"
    assert show(w, notes[1]["commit"], "a.txt") == "ONE\n" and show(w, notes[1]["commit"], "b.txt") == "two\n"
    assert w.tree_of(notes[2]["commit"]) == w.add_all_tree()

    # Without the daemon: nothing after a shell command in the balanced tier, as before it existed.
    w.ok("daemon", "stop")
    before = len(chain(w, session))
    alone = after("sed -i 's/TWO/2/' b.txt")
    assert (alone["action"], alone["reason"]) == ("skip", f"balanced: nothing after {tool}")
    assert len(chain(w, session)) == before
    assert protected(w) == user
    w.fsck()


def test_the_daemon_says_changed_whenever_a_checkpoint_could_hold_something_new(
        agent_project: Workdir, daemons: list[Workdir]) -> None:
    """No skip on a half truth: another session's newer tree, the person's index changed (git's CRLF rule reads
    it), a nested repository, or no checkpoint of the session yet each make the hook look (aggressive: a scan)."""
    w = agent_project
    agent = Agent(w, env={"GIT_REWIND_TIER": "aggressive"})
    daemons.append(w)
    w.ok("daemon", "start")
    assert agent.after_bash("true")["daemon_said"] == "the session has no checkpoint in this work tree yet"
    agent.prompt("go")
    assert agent.after_bash("true")["action"] == "skip"
    w.write("other.txt", "another session's\n")
    w.ok("snap", "--session", "other", "-m", "another session")  # the daemon's base moves on with it
    said = agent.after_bash("true")
    assert said["daemon_said"].startswith("the session's last checkpoint #2 holds another tree"), said
    assert said["action"] == "checkpoint"  # it holds other.txt: the session's tip is the daemon's base again
    assert agent.after_bash("true")["action"] == "skip"
    w.git("add", "notes.txt")  # the person stages a file: git's decisions may read the index otherwise
    said = agent.after_bash("true")
    assert (said["action"], said["daemon_said"]) == ("unchanged", "the person's index or git's settings changed since")
    assert agent.after_bash("true")["action"] == "skip"  # that scan checked the tree under the new index
    sub = w.path / "vendor" / "lib"
    sub.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=sub, check=True, env=w.env)
    (sub / "x").write_text("x\n")
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "add", "x"], cwd=sub, check=True, env=w.env)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], cwd=sub, check=True,
                   env=w.env)
    agent.after_bash("true")
    said = agent.after_bash("true")
    assert said["daemon_said"] == "nested repositories, which the daemon does not look inside"
