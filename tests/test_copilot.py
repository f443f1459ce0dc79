"""GitHub Copilot CLI: its camelCase payloads, its own hooks file, and the conversation rewind of events.jsonl.

The payloads and the session's events.jsonl are recorded from the real Copilot CLI 1.0.102 against the mock
model (tests/samples/copilot/: "TASK2" with create and bash in a new session, then resumed with "TASK3" where
only the user-level hooks ran). A session is replayed here through the real `git rewind hook`: before each
payload events.jsonl holds what Copilot had written by that payload's time, and each tool's change is made
on disk as Copilot made it (create after its preToolUse, the shell before its postToolUse).
"""

from __future__ import annotations

import calendar
import json
import os
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.workdir import Workdir

from git_rewind import agents
from git_rewind.agents import copilot, install
from git_rewind.agents import event as ev

SAMPLES = Path(__file__).parent / "samples" / "copilot"
SESSION = "f3551e92-5974-4d44-8f9f-bc76519f90b5"
NO_LIMITS = {"GIT_REWIND_ANTI_SPAM_SECONDS": "0", "GIT_REWIND_MIN_CHANGE_CHARS": "0"}
WORKSPACE = f"id: {SESSION}\ncwd: @PROJECT@\ngit_root: @PROJECT@\nbranch: main\nname: 'TASK2'\nfork_count: 0\n"


def recorded(home: Path, root: Path) -> list[tuple[str, dict[str, Any]]]:
    """(event as the hooks file named it, payload) of every recorded hook call, paths moved into HOME and ROOT."""
    text = (SAMPLES / "payloads.jsonl").read_text().replace("@HOME@", str(home)).replace("@PROJECT@", str(root))
    return [(line["event"], line["payload"]) for line in map(json.loads, text.splitlines())]


def events(home: Path, root: Path) -> list[bytes]:
    text = (SAMPLES / "events.jsonl").read_text().replace("@HOME@", str(home)).replace("@PROJECT@", str(root))
    return text.encode().splitlines(keepends=True)


def iso(ms: int) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


class Session:
    """The recorded Copilot session, replayed into a project through `git rewind hook --agent copilot`."""

    def __init__(self, w: Workdir, home: Path) -> None:
        self.w = w
        self.folder = home / ".copilot" / "session-state" / SESSION
        self.folder.mkdir(parents=True)
        self.transcript = self.folder / "events.jsonl"
        (self.folder / "workspace.yaml").write_text(WORKSPACE.replace("@PROJECT@", str(w.path)))
        self.calls = [(name, p) for name, p in recorded(home, w.path) if name in copilot.HOOKS]
        self.lines = events(home, w.path)
        self.env = {"COPILOT_CLI": "1", "COPILOT_PROJECT_DIR": str(w.path), **NO_LIMITS}

    def hook(self, payload: dict[str, Any]) -> str:
        run = self.w.rewind("hook", "--agent", "copilot", input=json.dumps(payload), env=self.env)
        assert (run.returncode, run.stderr) == (0, ""), run
        return run.stdout

    def written_by(self, ms: int) -> bytes:
        return b"".join(line for line in self.lines if json.loads(line)["timestamp"] <= iso(ms))

    def play(self, before_each: Any = None) -> list[str]:
        outputs = []
        for name, payload in self.calls:
            self.transcript.write_bytes(self.written_by(payload["timestamp"]))
            if name == "postToolUse" and payload["toolName"] == "bash":
                subprocess.run(["sh", "-c", payload["toolArgs"]["command"]], cwd=self.w.path, check=True)
            if before_each is not None:
                before_each(name, payload)
            outputs.append(self.hook(payload))
            if name == "preToolUse" and payload["toolName"] == "create":
                Path(payload["toolArgs"]["path"]).write_text(payload["toolArgs"]["file_text"])
        self.transcript.write_bytes(b"".join(self.lines))
        return outputs

    def checkpoints(self) -> list[dict[str, Any]]:
        out = [json.loads(self.w.git("notes", "--ref=rewind", "show", commit))
               for commit in self.w.git("log", "--first-parent", "--format=%H", f"refs/rewind/{SESSION}").split()]
        return sorted(out, key=lambda n: n["seq"])

    def by_trigger(self, trigger: str) -> dict[str, Any]:
        return next(n for n in self.checkpoints() if n["trigger"] == trigger)


def outside_edit(w: Workdir) -> Any:
    """A draft by the person of each file the model is about to create, written while it thinks: each create's
    preToolUse checkpoint then has something to keep."""
    def before(name: str, payload: dict[str, Any]) -> None:
        if name == "preToolUse" and payload["toolName"] == "create":
            Path(payload["toolArgs"]["path"]).write_text("the person's own draft of the file\n")
    return before


@pytest.fixture
def session(agent_project: Workdir, home: Path) -> Session:
    played = Session(agent_project, home)
    played.play(outside_edit(agent_project))
    return played


def decisions(w: Workdir) -> list[tuple[Any, ...]]:
    path = w.path / ".git" / "rewind" / "hook.log"
    return [(e.get("event"), e.get("tool"), e.get("action")) for e in map(json.loads, path.read_text().splitlines())]


# payloads → events -------------------------------------------------------------------------------


def test_every_recorded_payload_is_told_its_event_and_becomes_an_event(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    calls = recorded(tmp_path / "home", tmp_path / "repo")
    assert {name for name, _ in calls} >= set(copilot.HOOKS)
    for name, payload in calls:
        assert copilot.event_name(payload) == name, payload  # camelCase payloads carry no event name
        event = copilot.parse(payload)
        assert (event.name, event.session, event.cwd) == (name, SESSION, str(tmp_path / "repo"))
        assert event.kind == {**copilot._KINDS}.get(name, ev.OTHER)
        assert event.time == payload["timestamp"] / 1000
        position = event.conversation()
        assert position is not None and position.extra["hook_ms"] == payload["timestamp"]
    parsed = {name: copilot.parse(p) for name, p in calls if "toolName" not in p}
    assert parsed["userPromptSubmitted"].prompt == "TASK2: create a file and run a shell command"
    assert parsed["sessionStart"].source in ("new", "resume") and parsed["sessionEnd"].source == "complete"
    # Only agentStop names events.jsonl; every other event is given the path Copilot keeps it at.
    transcript = str(tmp_path / "home" / ".copilot" / "session-state" / SESSION / "events.jsonl")
    assert parsed["agentStop"].transcript == transcript
    tools = [copilot.parse(p) for name, p in calls if name in ("preToolUse", "postToolUse")]
    create = next(e for e in tools if e.tool == "create")
    assert (create.kind, create.tool_kind, create.paths) == (ev.PRE_TOOL, ev.WRITE,
                                                              [str(tmp_path / "repo" / "task2_written.txt")])
    assert create.change_chars == len("written by mock tool call for TASK2\n")
    assert create.transcript == transcript and create.tool_use_id is None  # Copilot names no tool call
    shell = next(e for e in tools if e.kind == ev.POST_TOOL and e.tool == "bash")
    assert (shell.tool_kind, shell.paths) == (ev.SHELL, [])


def test_an_edit_a_patch_and_tools_never_seen_before(tmp_path: Path) -> None:
    edit = copilot.parse({"sessionId": "s", "timestamp": 1, "cwd": str(tmp_path), "toolName": "edit",
                          "toolArgs": {"path": "a.py", "old_str": "x = 1", "new_str": "x = 100"}})
    assert (edit.tool_kind, edit.paths, edit.change_chars) == (ev.EDIT, ["a.py"], 2)
    patch = copilot.parse({"sessionId": "s", "cwd": str(tmp_path), "toolName": "apply_patch",
                           "toolArgs": {"input": "*** Begin Patch\n*** Add File: b.py\n+y\n*** End Patch\n"}})
    assert (patch.tool_kind, patch.paths) == (ev.WRITE, ["b.py"])
    for tool in ("view", "grep", "frobnicate_the_repo"):
        unknown = copilot.parse({"sessionId": "s", "cwd": str(tmp_path), "toolName": tool, "toolArgs": {"path": "a"}})
        assert (unknown.kind, unknown.tool, unknown.tool_kind, unknown.paths) == (ev.PRE_TOOL, tool, None, [])


@pytest.mark.parametrize("payload", [
    {"sessionId": 7, "timestamp": "soon", "cwd": ["x"], "toolName": "create", "toolArgs": "not an object"},
    {"sessionId": None, "toolName": 3, "toolArgs": {"path": 5, "file_text": None}},
    {"sessionId": "s", "timestamp": True, "prompt": {"text": "hi"}},
    {"sessionId": "../../etc", "transcriptPath": 42, "stopReason": "end_turn"},
    {},
])
def test_fields_of_the_wrong_type_or_missing_never_raise(payload: dict[str, Any]) -> None:
    event = copilot.parse(payload)
    assert event.paths == [] and event.prompt is None and event.time is None
    assert event.transcript is None or event.transcript.endswith(f"/{event.session}/events.jsonl")
    assert event.session == (payload.get("sessionId") if isinstance(payload.get("sessionId"), str) else "")


def test_bad_payloads_through_the_hook_exit_0_with_one_line_and_change_nothing(agent_project: Workdir) -> None:
    w = agent_project
    for raw in ('{"toolName": "create", "toolArgs": {"path": "x"}}', "[1, 2]", "not json",
                '{"sessionId": "a/../../b", "prompt": "hi"}'):
        run = w.rewind("hook", "--agent", "copilot", input=raw)
        assert run.returncode == 0 and run.stdout == ""
        assert len(run.stderr.splitlines()) == 1 and run.stderr.startswith("git-rewind: hook skipped"), run.stderr
    assert w.git("for-each-ref", "refs/rewind/") == ""


def test_copilot_is_told_apart_by_its_environment_and_its_payloads() -> None:
    assert agents.detect({"sessionId": "s", "prompt": "p"}, {"COPILOT_CLI": "1", "CLAUDE_PROJECT_DIR": "/p"}) \
        == "copilot"
    assert agents.detect({"sessionId": "s", "toolName": "bash", "toolArgs": {}}, {}) == "copilot"
    assert agents.detect({"sessionID": "s", "event": "x"}, {}) == "opencode"


# the replayed session ----------------------------------------------------------------------------


def test_the_session_checkpoints_at_start_prompt_edit_and_turn_end_and_skips_other_tools(session: Session) -> None:
    assert decisions(session.w) == [
        ("userPromptSubmitted", None, "checkpoint"),  # Copilot runs it at once with sessionStart: here first
        ("sessionStart", None, "unchanged"),
        ("preToolUse", "create", "checkpoint"),  # the person's draft of the file is kept before create
        ("postToolUse", "create", "skip"),
        ("preToolUse", "bash", "skip"),  # no matcher: the policy skips it
        ("postToolUse", "bash", "skip"),  # balanced tier: nothing after a shell command
        ("agentStop", None, "checkpoint"),
        ("sessionEnd", None, "skip"),
        ("sessionStart", None, "unchanged"),  # resumed (user-level hooks only)
        ("preToolUse", "create", "checkpoint"),
        ("preToolUse", "bash", "skip"),
        ("sessionEnd", None, "skip"),
    ]
    notes = session.checkpoints()
    assert [n["seq"] for n in notes] == list(range(1, len(notes) + 1))
    for note in notes:
        assert note["agent"] == "copilot" and note["session"] == SESSION
        assert note["conversation"]["transcript"] == str(session.transcript)
        assert isinstance(note["conversation"]["hook_ms"], int)
        assert note["conversation"]["tool_use_id"] is None
    edit = session.by_trigger("preToolUse")
    assert (edit["tool"], edit["paths"], edit["prompt"]) == ("create", ["task2_written.txt"],
                                                            "TASK2: create a file and run a shell command")
    stop = session.by_trigger("agentStop")
    assert stop["origins"] == {"task2_written.txt": "agent", "from_shell.txt": "agent"}, stop
    assert stop["turn"]["seq"] == session.by_trigger("userPromptSubmitted")["seq"]


def test_undo_agent_only_takes_back_the_turns_and_keeps_the_persons_change(session: Session) -> None:
    """The prompt opens a turn and agentStop closes it: what the turns changed is the agent's, what the person
    changed after it is not, and `undo --agent-only` takes back only the former."""
    w = session.w
    w.write("notes.txt", "the person's own change, after the session\n")
    prompt = session.by_trigger("userPromptSubmitted")
    w.ok("undo", str(prompt["seq"]), "--agent-only", "--yes")
    assert not (w.path / "from_shell.txt").exists() and not (w.path / "task2_written.txt").exists()
    assert (w.path / "notes.txt").read_text() == "the person's own change, after the session\n"


def test_a_prompt_checkpoint_cuts_events_jsonl_just_before_its_hook_call_and_redo_puts_it_back(
        session: Session) -> None:
    w = session.w
    before = session.transcript.read_bytes()
    prompt = session.by_trigger("userPromptSubmitted")
    out = w.ok("undo", str(prompt["seq"]), "--conversation", "--yes")
    assert "conversation cut just before the prompt" in out and f"copilot --resume={SESSION}" in out
    assert "TASK2: create a file and run a shell command" in out  # the prompt to send again
    kept = session.transcript.read_bytes()
    assert kept == b"".join(session.lines[:3])  # session.start, permissions, sessionStart's hook.start
    assert json.loads(session.lines[3])["data"]["hookType"] == "userPromptSubmitted"
    w.ok("redo", "--yes")
    assert session.transcript.read_bytes() == before


def test_a_tool_checkpoint_cuts_before_the_model_turn_that_called_the_tool(session: Session) -> None:
    w = session.w
    edit = session.by_trigger("preToolUse")
    assert "conversation cut just before the create call" in w.ok("undo", str(edit["seq"]), "--full", "--yes")
    kept = [json.loads(line) for line in session.transcript.read_bytes().splitlines()]
    assert kept[-1]["type"] == "system.message" and len(kept) == 10  # the prompt kept, turn 0 gone
    assert (w.path / "task2_written.txt").read_text() == "the person's own draft of the file\n"
    assert not (w.path / "from_shell.txt").exists()


def test_a_tool_checkpoint_is_found_when_its_hook_start_is_stamped_later_and_the_call_not_yet_written(
        agent_project: Workdir, home: Path) -> None:
    """Copilot reads its clock once for a hook's payload and once for the hook.start it logs, and may run the
    hook before the call's lines reach events.jsonl: the checkpoint's call is still found (CI saw both at once)."""
    played = Session(agent_project, home)

    def later(line: bytes) -> bytes:
        event = json.loads(line)
        if event["type"] != "hook.start" or event["data"]["hookType"] != "preToolUse":
            return line
        ms = calendar.timegm(time.strptime(event["timestamp"][:19], "%Y-%m-%dT%H:%M:%S")) * 1000
        event["timestamp"] = iso(ms + int(event["timestamp"][20:23]) + 1)
        return (json.dumps(event, separators=(",", ":")) + "\n").encode()

    played.lines = [later(line) for line in played.lines]
    draft = outside_edit(agent_project)

    def unflushed(name: str, payload: dict[str, Any]) -> None:
        draft(name, payload)
        if name == "preToolUse":  # events.jsonl as it stood before the model's call was written
            played.transcript.write_bytes(played.written_by(payload["timestamp"] - 5))

    played.play(unflushed)
    first, second = [n for n in played.checkpoints() if n["trigger"] == "preToolUse"][:2]
    w = played.w
    assert "conversation cut just before the create call" in w.ok("undo", str(first["seq"]), "--conversation",
                                                                    "--yes")
    kept = [json.loads(line) for line in played.transcript.read_bytes().splitlines()]
    assert kept[-1]["type"] == "system.message" and len(kept) == 10  # the prompt kept, turn 0 gone
    w.ok("redo", "--yes")
    w.ok("undo", str(second["seq"]), "--conversation", "--yes")
    kept = [json.loads(line) for line in played.transcript.read_bytes().splitlines()]
    assert kept[-2]["type"] == "user.message" and kept[-2]["data"]["content"].startswith("TASK3")


def test_the_second_tool_checkpoint_is_found_in_the_resumed_part(session: Session) -> None:
    w = session.w
    second = [n for n in session.checkpoints() if n["trigger"] == "preToolUse"][1]
    w.ok("undo", str(second["seq"]), "--conversation", "--yes")
    kept = [json.loads(line) for line in session.transcript.read_bytes().splitlines()]
    assert [k["type"] for k in kept[-2:]] == ["user.message", "hook.end"]  # TASK3 kept, its turn 0 gone
    assert kept[-2]["data"]["content"].startswith("TASK3")


def test_a_turn_end_checkpoint_cuts_just_before_its_hook_call(session: Session) -> None:
    stop = session.by_trigger("agentStop")
    session.w.ok("undo", str(stop["seq"]), "--conversation", "--yes")
    kept = [json.loads(line) for line in session.transcript.read_bytes().splitlines()]
    assert kept[-1]["type"] == "assistant.turn_end" and len(kept) == 38


def test_fork_writes_a_new_session_folder_and_leaves_the_original(session: Session, home: Path) -> None:
    w = session.w
    before = session.transcript.read_bytes()
    edit = session.by_trigger("preToolUse")
    out = w.ok("undo", str(edit["seq"]), "--conversation", "--fork", "--yes")
    assert session.transcript.read_bytes() == before
    new = out.split("new session ", 1)[1].split()[0]
    folder = home / ".copilot" / "session-state" / new
    forked = [json.loads(line) for line in (folder / "events.jsonl").read_bytes().splitlines()]
    assert forked[0]["type"] == "session.start" and forked[0]["data"]["sessionId"] == new
    assert len(forked) == 10 and (folder / "events.jsonl").read_bytes().splitlines()[1:] == \
        before.splitlines()[1:10]
    assert (folder / "workspace.yaml").read_text().splitlines()[0] == f"id: {new}"
    assert f"copilot --resume={new}" in out
    assert oct((folder / "events.jsonl").stat().st_mode & 0o777) == "0o600"


def test_redo_after_the_session_went_on_keeps_what_was_said_since_as_a_new_session(session: Session,
                                                                                   home: Path) -> None:
    w = session.w
    before = session.transcript.read_bytes()
    w.ok("undo", str(session.by_trigger("agentStop")["seq"]), "--conversation", "--yes")
    extra = b'{"type":"user.message","data":{"content":"TASK9"},"id":"x9","timestamp":"2026-11-25T15:00:00.000Z"}\n'
    with session.transcript.open("ab") as fh:
        fh.write(extra)
    out = w.ok("redo", "--yes")
    assert session.transcript.read_bytes() == before
    branch = out.split("kept as session ", 1)[1].split()[0]
    assert (home / ".copilot" / "session-state" / branch / "events.jsonl").read_bytes().endswith(extra)


def test_the_same_prompt_undo_again_finds_the_events_already_cut_there(session: Session) -> None:
    """Copilot's events.jsonl is cut in place: the prompt is gone after the first undo, and the second one sees
    the file is what that undo left (undo._cut_there through copilot's lines_kept), so it cuts nothing."""
    w = session.w
    prompt = str(session.by_trigger("userPromptSubmitted")["seq"])
    w.ok("undo", prompt, "--conversation", "--yes")
    cut = session.transcript.read_bytes()
    again = w.rewind("undo", prompt, "--conversation", "--yes")
    assert again.returncode == 0, again.stderr
    assert "already cut there by the undo of safety checkpoint" in again.stdout
    assert session.transcript.read_bytes() == cut


def test_a_conversation_rewind_that_cannot_be_done_changes_nothing(session: Session) -> None:
    w = session.w
    prompt = session.by_trigger("userPromptSubmitted")
    session.transcript.write_bytes(b'{"not": "copilot"}\n')
    run = w.rewind("undo", str(prompt["seq"]), "--full", "--yes")
    assert run.returncode != 0 and "is not a Copilot session file" in run.stderr
    assert session.transcript.read_bytes() == b'{"not": "copilot"}\n'
    assert (w.path / "from_shell.txt").exists()  # the code was not rewound either


def test_a_compacted_conversation_is_refused(session: Session) -> None:
    with session.transcript.open("ab") as fh:
        fh.write(b'{"type":"session.compaction_complete","data":{"success":true},"id":"c1","parentId":null}\n')
    run = session.w.rewind("undo", str(session.by_trigger("agentStop")["seq"]), "--conversation", "--yes")
    assert run.returncode != 0 and "compacted" in run.stderr


# context and concurrency -------------------------------------------------------------------------


def test_context_is_a_top_level_additional_context_that_copilot_reads(session: Session) -> None:
    assert agents.get("copilot").context_reply("sessionStart", "x") == {"additionalContext": "x"}
    outputs = dict(zip((name for name, _ in session.calls), session.play(), strict=False))
    # The same session again: its start is told where the last run stood; tool hooks print nothing.
    assert json.loads(outputs["sessionStart"])["additionalContext"].startswith("Resumed from checkpoint #")
    assert outputs["preToolUse"] == outputs["postToolUse"] == outputs["agentStop"] == ""


def test_a_prompt_hook_that_ran_before_its_session_start_is_not_the_earlier_work(agent_project: Workdir,
                                                                                   home: Path) -> None:
    """Copilot runs sessionStart and userPromptSubmitted at once: when the prompt's checkpoint is taken first,
    the start still says there is no earlier work, and the chain stays in seq order."""
    w = agent_project
    played = Session(w, home)
    start, prompt = (next(p for name, p in played.calls if name == wanted)
                     for wanted in ("sessionStart", "userPromptSubmitted"))
    assert start["timestamp"] < prompt["timestamp"]
    assert played.hook(prompt) == ""
    assert played.hook(start) == ""  # no earlier checkpoint: no context at all
    log = [json.loads(line) for line in (w.path / ".git" / "rewind" / "hook.log").read_text().splitlines()]
    assert [(e["event"], e["action"]) for e in log] == [("userPromptSubmitted", "checkpoint"),
                                                          ("sessionStart", "unchanged")]
    assert log[1]["context"] == "none: no earlier checkpoint"


def test_concurrent_start_and_prompt_hooks_keep_seqs_and_the_chain(agent_project: Workdir, home: Path) -> None:
    from helpers.workdir import REWIND

    w = agent_project
    played = Session(w, home)
    start, prompt = (next(p for name, p in played.calls if name == wanted)
                     for wanted in ("sessionStart", "userPromptSubmitted"))
    for round_ in range(3):
        w.write("notes.txt", f"changed before round {round_}\n")
        env = {**w.env, **played.env}
        procs = [subprocess.Popen([*REWIND, "hook", "--agent", "copilot"], cwd=w.path, env=env, text=True,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for _ in (start, prompt)]
        outs = [p.communicate(json.dumps(payload), timeout=60) for p, payload in zip(procs, (start, prompt),
                                                                                       strict=True)]
        assert [p.returncode for p in procs] == [0, 0] and all(err == "" for _, err in outs), outs
    notes = played.checkpoints()
    seqs = [n["seq"] for n in notes]
    assert seqs == sorted(set(seqs))
    commits = w.git("log", "--first-parent", "--format=%H %P", f"refs/rewind/{SESSION}").splitlines()
    for newer, older in zip(commits, commits[1:], strict=False):
        assert newer.split()[1] == older.split()[0]  # each the previous one's child
    assert sum(n["trigger"] == "userPromptSubmitted" for n in notes) == 3


# install / uninstall -----------------------------------------------------------------------------

THEIRS: dict[str, Any] = {"version": 1, "description": "the team's audit hooks",
                          "hooks": {"preToolUse": [{"type": "command", "bash": "./audit.sh", "timeoutSec": 5}],
                                    "errorOccurred": [{"type": "command", "bash": "notify-send failed"}]}}


def test_the_file_under_hooks_is_what_a_project_install_writes(project: Workdir) -> None:
    readable = json.loads((Path(__file__).parent.parent / "hooks" / "copilot" / "git-rewind.json").read_text())
    assert readable == install.template("copilot")
    assert list(readable["hooks"]) == list(copilot.HOOKS) and readable["version"] == 1
    for event_name, handlers in readable["hooks"].items():
        (handler,) = handlers
        assert handler == {"type": "command", "bash": agents.get("copilot").command(event_name, None),
                           "timeoutSec": 30}
    project.ok("install", "--agent", "copilot", "--scope", "project")
    assert json.loads((project.path / ".github" / "hooks" / "git-rewind.json").read_text()) == readable


def test_install_keeps_the_other_entries_backs_up_and_uninstall_puts_the_bytes_back(project: Workdir) -> None:
    w = project
    path = w.path / ".github" / "hooks" / "git-rewind.json"
    path.parent.mkdir(parents=True)
    original = json.dumps(THEIRS, indent=4) + "\n"
    path.write_text(original)
    out = w.ok("install", "--agent", "copilot", "--scope", "project")
    assert "backed up" in out
    data = json.loads(path.read_text())
    assert data["description"] == THEIRS["description"]
    assert data["hooks"]["preToolUse"][0] == THEIRS["hooks"]["preToolUse"][0]
    assert data["hooks"]["errorOccurred"] == THEIRS["hooks"]["errorOccurred"]
    assert [install.is_own(h) for h in data["hooks"]["preToolUse"]] == [False, True]
    once = path.read_bytes()
    w.ok("install", "--agent", "copilot", "--scope", "project")
    assert path.read_bytes() == once  # idempotent
    assert "  copilot      project" in w.ok("status")
    w.ok("uninstall", "--agent", "copilot", "--scope", "project")
    assert path.read_text() == original


def test_uninstall_after_the_user_changed_the_file_removes_only_ours(project: Workdir) -> None:
    w = project
    w.ok("install", "--agent", "copilot", "--scope", "project")
    path = w.path / ".github" / "hooks" / "git-rewind.json"
    data = json.loads(path.read_text())
    data["hooks"]["agentStop"].append({"type": "command", "bash": "./after.sh"})
    path.write_text(json.dumps(data))
    w.ok("uninstall", "--agent", "copilot", "--scope", "project")
    assert json.loads(path.read_text()) == {"version": 1, "hooks": {"agentStop": [{"type": "command",
                                                                                   "bash": "./after.sh"}]}}


def test_a_fresh_project_install_and_uninstall_leave_no_folder_behind(project: Workdir) -> None:
    w = project
    w.ok("install", "--agent", "copilot", "--scope", "project")
    w.ok("uninstall", "--agent", "copilot", "--scope", "project")
    assert not (w.path / ".github").exists()


def test_user_scope_goes_to_copilot_home_when_it_is_set(project: Workdir, home: Path, tmp_path: Path) -> None:
    w = project
    copilot_home = tmp_path / "copilot-home"
    env = {"COPILOT_HOME": str(copilot_home)}
    out = w.ok("install", "--agent", "copilot", "--scope", "user", env=env)
    path = copilot_home / "hooks" / "git-rewind.json"
    assert f"in {path}" in out and not (home / ".copilot").exists()
    command = json.loads(path.read_text())["hooks"]["preToolUse"][0]["bash"]
    assert os.path.isabs(shlex.split(command)[0]) and command.endswith(" hook --agent copilot || true")
    assert f"  copilot      user     {path}" in w.ok("status", env=env)
    w.ok("uninstall", "--agent", "copilot", "--scope", "user", env=env)
    assert not path.exists() and copilot_home.exists()  # Copilot's own home stays
    out = w.ok("install", "--agent", "copilot", "--scope", "user")
    assert f"in {home / '.copilot' / 'hooks' / 'git-rewind.json'}" in out
    assert agents.get("copilot").transcripts(str(home), env).folders[0] == str(copilot_home / "session-state")


def test_every_installed_command_exits_0_even_where_git_rewind_is_gone(project: Workdir, home: Path,
                                                                       tmp_path: Path) -> None:
    """A non-zero preToolUse denies Copilot's tool: neither form of our entry may ever exit otherwise."""
    w = project
    gone = tmp_path / "removed" / "git-rewind"
    install.install("copilot", "user", str(w.path), str(home), program=[str(gone)])
    install.install("copilot", "project", str(w.path), str(home))
    payload = json.dumps({"sessionId": "s1", "timestamp": 1, "cwd": str(w.path), "toolName": "create",
                          "toolArgs": {"path": str(w.path / "x.txt"), "file_text": "x" * 80}})
    for path in (home / ".copilot" / "hooks" / "git-rewind.json", w.path / ".github" / "hooks" / "git-rewind.json"):
        for handlers in json.loads(path.read_text())["hooks"].values():
            proc = subprocess.run(["bash", "-c", handlers[0]["bash"]], cwd=w.path, input=payload, text=True,
                                  capture_output=True, env={"PATH": "/usr/bin:/bin", "HOME": str(home)}, timeout=60)
            assert proc.returncode == 0 and proc.stdout == "", (path, proc)
    assert w.git("for-each-ref", "refs/rewind/") == ""


def test_handover_puts_the_session_where_copilot_finds_it_with_this_projects_paths(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "clone"
    root.mkdir()
    raw = b"".join(events(Path("/sender/home"), Path("/sender/project")))
    adopted = agents.get("copilot").adopt_transcript(raw, SESSION, str(root), str(home), {})
    path = home / ".copilot" / "session-state" / SESSION / "events.jsonl"
    assert (adopted.path, adopted.how) == (str(path), "written")
    first = json.loads(path.read_bytes().splitlines()[0])
    assert first["data"]["context"]["cwd"] == str(root.resolve()) and first["data"]["sessionId"] == SESSION
    again = agents.get("copilot").adopt_transcript(raw, SESSION, str(root), str(home), {})
    assert again.how == "kept"
    path.write_bytes(b'{"type":"session.start","data":{"sessionId":"%s"},"id":"other"}\n' % SESSION.encode())
    forked = agents.get("copilot").adopt_transcript(raw, SESSION, str(root), str(home), {})
    assert forked.how == "forked" and forked.session != SESSION
    assert json.loads(Path(forked.path).read_bytes().splitlines()[0])["data"]["sessionId"] == forked.session


def test_mcp_install_writes_what_copilot_mcp_add_writes_and_uninstall_removes_it(project: Workdir,
                                                                                   home: Path) -> None:
    w = project
    w.ok("install", "--agent", "copilot", "--scope", "user", "--mcp")
    path = home / ".copilot" / "mcp-config.json"
    entry = json.loads(path.read_text())["mcpServers"]["git-rewind"]
    assert list(entry) == ["tools", "type", "command", "args"]  # `copilot mcp add git-rewind -- … mcp`, 1.0.102
    assert (entry["tools"], entry["type"], entry["args"][-1]) == (["*"], "local", "mcp")
    assert os.path.isabs(entry["command"])
    w.ok("install", "--agent", "copilot", "--scope", "project", "--mcp")
    shared = json.loads((w.path / ".github" / "mcp.json").read_text())["mcpServers"]["git-rewind"]
    assert (shared["command"], shared["args"]) == ("git-rewind", ["mcp"])
    for scope in ("user", "project"):
        w.ok("uninstall", "--agent", "copilot", "--scope", scope, "--mcp")
    assert not path.exists() and not (w.path / ".github" / "mcp.json").exists()
