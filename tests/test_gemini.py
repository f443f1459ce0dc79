"""Gemini CLI: its payloads, the hook's JSON-only stdout, and the conversation rewind of its session files.

The session file and the hook payloads are recorded from the real Gemini CLI 0.61.0 against the mock
model (tests/samples/gemini/: prompt "P1-X do it" with write_file, replace and run_shell_command,
then the session resumed with "P2-Y more" and one replace). A session is replayed here through the
real `git rewind hook`: before each payload the session file holds what Gemini had written by that
payload's time, and the tools' changes are made on disk after their BeforeTool hook.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.agentcli import disk_files
from helpers.workdir import Workdir

from git_rewind import agents
from git_rewind.agents import event as ev
from git_rewind.agents import gemini

SAMPLES = Path(__file__).parent / "samples" / "gemini"
SESSION = "bd3f5fb5-ba44-4e41-b301-e6bf39dfe85d"
NO_LIMITS = {"GIT_REWIND_ANTI_SPAM_SECONDS": "0", "GIT_REWIND_MIN_CHANGE_CHARS": "0"}


def recorded(home: Path, root: Path, transcript: Path) -> list[dict[str, Any]]:
    text = (SAMPLES / "payloads.jsonl").read_text()
    text = text.replace("@TRANSCRIPT@", str(transcript)).replace("@HOME@", str(home)).replace("@PROJECT@", str(root))
    return [json.loads(line) for line in text.splitlines()]


def session_lines(home: Path, root: Path) -> list[tuple[str, bytes]]:
    """(time written, line) of the recorded session file, its paths moved into HOME and ROOT.

    A message's time is its timestamp, but a record that adds toolCalls to a message is written when the
    tool has run: it takes the next line's time.
    """
    text = (SAMPLES / "session.jsonl").read_text().replace("@HOME@", str(home)).replace("@PROJECT@", str(root))
    raw = text.encode().splitlines(keepends=True)
    parsed = [json.loads(line) for line in raw]
    times: list[str] = []
    last = ""
    for line in parsed:
        last = str(line.get("timestamp") or (line.get("$set") or {}).get("lastUpdated") or line.get("startTime")
                   or last)
        times.append(last)
    for i, line in enumerate(parsed):
        if line.get("toolCalls") and i + 1 < len(parsed):
            times[i] = times[i + 1]
    return list(zip(times, raw, strict=True))


class Session:
    """The recorded Gemini session, replayed into a project through `git rewind hook`."""

    def __init__(self, w: Workdir, home: Path) -> None:
        self.w = w
        self.transcript = home / ".gemini" / "tmp" / "repo" / "chats" / "session-2026-11-23T18-30-bd3f5fb5.jsonl"
        self.transcript.parent.mkdir(parents=True, exist_ok=True)
        self.payloads = recorded(home, w.path, self.transcript)
        self.lines = session_lines(home, w.path)
        self.env = {"GEMINI_PROJECT_DIR": str(w.path), "GEMINI_SESSION_ID": SESSION, "GEMINI_CWD": str(w.path),
                    "CLAUDE_PROJECT_DIR": str(w.path), **NO_LIMITS}
        self.outputs: list[str] = []

    def hook(self, payload: dict[str, Any]) -> dict[str, Any]:
        """One hook call as Gemini makes it (no --agent: its environment says who it is)."""
        run = self.w.rewind("hook", input=json.dumps(payload), env=self.env)
        assert (run.returncode, run.stderr) == (0, "")
        self.outputs.append(run.stdout)
        out: dict[str, Any] = json.loads(run.stdout)
        return out

    def play(self) -> None:
        for payload in self.payloads:
            written = b"".join(line for time, line in self.lines if time <= payload["timestamp"])
            self.transcript.write_bytes(written)
            if payload["hook_event_name"] == "AfterTool":  # the shell ran before its hook (none before it)
                subprocess.run(["sh", "-c", payload["tool_input"]["command"]], cwd=self.w.path, check=True)
            self.hook(payload)
            if payload["hook_event_name"] == "BeforeTool":
                self._run_tool(payload["tool_name"], payload["tool_input"])
        self.transcript.write_bytes(b"".join(line for _, line in self.lines))

    def _run_tool(self, tool: str, args: dict[str, Any]) -> None:
        path = Path(args["file_path"])
        if tool == "write_file":
            path.write_text(args["content"])
        elif tool == "replace":
            path.write_text(path.read_text().replace(args["old_string"], args["new_string"]))

    def checkpoints(self) -> list[dict[str, Any]]:
        out = []
        for commit in self.w.git("log", "--first-parent", "--format=%H", f"refs/rewind/{SESSION}").split():
            out.append(json.loads(self.w.git("notes", "--ref=rewind", "show", commit)))
        return sorted(out, key=lambda n: n["seq"])

    def by_trigger(self, trigger: str, prompt: str | None = None) -> dict[str, Any]:
        return next(n for n in self.checkpoints()
                    if n["trigger"] == trigger and (prompt is None or n["prompt"] == prompt))


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def replayed(path: Path) -> list[dict[str, Any]]:
    """The messages Gemini would load from PATH, in order."""
    from git_rewind.agents.conversation import Transcript

    return list(gemini._Replay(Transcript(str(path), path.read_bytes())).messages.values())


@pytest.fixture
def session(agent_project: Workdir, home: Path) -> Session:
    played = Session(agent_project, home)
    played.play()
    return played


# payloads → events -------------------------------------------------------------------------------


def test_recorded_payloads_become_events(tmp_path: Path) -> None:
    payloads = recorded(tmp_path / "home", tmp_path / "repo", tmp_path / "t.jsonl")
    kinds = [(p["hook_event_name"], gemini.parse(p).kind, gemini.parse(p).tool_kind) for p in payloads]
    assert ("SessionStart", ev.SESSION_START, None) in kinds and ("AfterAgent", ev.STOP, None) in kinds
    assert ("SessionEnd", ev.SESSION_END, None) in kinds
    assert ("BeforeTool", ev.PRE_TOOL, ev.WRITE) in kinds and ("BeforeTool", ev.PRE_TOOL, ev.EDIT) in kinds
    assert ("AfterTool", ev.POST_TOOL, ev.SHELL) in kinds
    # PreCompress "auto" came before every model call, with nothing compressed: not a compaction.
    assert {k for name, k, _ in kinds if name == "PreCompress"} == {ev.OTHER}
    prompt = gemini.parse(next(p for p in payloads if p["hook_event_name"] == "BeforeAgent"))
    assert (prompt.prompt, prompt.session, prompt.transcript) == ("P1-X do it", SESSION, str(tmp_path / "t.jsonl"))
    edit = gemini.parse(next(p for p in payloads if p.get("tool_name") == "replace"))
    assert edit.paths == [str(tmp_path / "repo" / "plan.md")] and edit.change_chars == len("goodbye")
    write = gemini.parse(next(p for p in payloads if p.get("tool_name") == "write_file"))
    assert write.change_chars == len("hello world\nline two\n")  # a new file: all of it
    end = gemini.parse(next(p for p in payloads if p["hook_event_name"] == "SessionEnd"))
    assert end.source == "exit"
    manual = gemini.parse({"hook_event_name": "PreCompress", "trigger": "manual", "session_id": "s"})
    assert (manual.kind, manual.source) == (ev.PRE_COMPACT, "manual")
    glued = gemini.parse({"hook_event_name": "BeforeAgent", "session_id": "s",
                          "prompt": "<hook_context>Resumed from checkpoint #3</hook_context>\n\nfix it"})
    assert glued.prompt == "fix it"


def test_gemini_is_told_apart_by_its_environment_before_claude_codes_alias(tmp_path: Path) -> None:
    payload = recorded(tmp_path, tmp_path, tmp_path / "t.jsonl")[0]
    assert agents.detect(payload, {"GEMINI_PROJECT_DIR": "/p", "CLAUDE_PROJECT_DIR": "/p"}) == "gemini"
    assert agents.detect(payload, {"GEMINI_SESSION_ID": SESSION}) == "gemini"
    assert agents.detect(payload, {"FACTORY_PROJECT_DIR": "/p", "CLAUDE_PROJECT_DIR": "/p"}) == "droid"
    assert agents.detect({"hook_event_name": "PreToolUse", "tool_name": "Edit"}, {}) == "claude-code"
    assert agents.detect({"hook_event_name": "BeforeTool", "tool_name": "replace"}, {}) == "gemini"
    assert gemini.resume_command(SESSION) == f"gemini --resume {SESSION}"


# the hook's stdout ---------------------------------------------------------------------------------


def test_every_hook_call_prints_one_json_object_and_the_resume_context_goes_with_the_first_prompt(
        session: Session) -> None:
    w = session.w
    prompts = [i for i, p in enumerate(session.payloads) if p["hook_event_name"] == "BeforeAgent"]
    resumed = prompts[1]  # the first prompt after `gemini --resume`
    assert all(out == "{}\n" for i, out in enumerate(session.outputs) if i != resumed), session.outputs
    out = json.loads(session.outputs[resumed])
    assert session.outputs[resumed].count("\n") == 1 and list(out) == ["hookSpecificOutput"]
    assert out["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    turn_end = session.by_trigger("AfterAgent")  # the newest checkpoint before the resume: the turn's end
    assert out["hookSpecificOutput"]["additionalContext"].startswith(f"Resumed from checkpoint #{turn_end['seq']}: ")
    log = [json.loads(line) for line in (w.path / ".git" / "rewind" / "hook.log").read_text().splitlines()]
    starts = [e for e in log if e["event"] == "SessionStart"]
    assert starts[0]["context"] == "none: no earlier checkpoint" and starts[1]["context"]["from"] == turn_end["seq"]
    assert [e.get("context") for e in log if e["event"] == "BeforeAgent"] == [None, "delivered with the prompt"]
    assert session.hook(session.payloads[resumed]) == {}  # once: it went with the session's first prompt


def test_a_failing_or_stray_hook_still_prints_json_and_exits_0(session: Session, tmp_path: Path) -> None:
    w = session.w
    run = w.rewind("hook", "--agent", "gemini", input="not json", env=session.env)
    assert (run.returncode, run.stdout) == (0, "{}\n")
    assert run.stderr.startswith("git-rewind: hook skipped, hook payload is not JSON")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    run = w.rewind("hook", "--agent", "gemini", input=json.dumps({**session.payloads[0], "cwd": str(outside)}),
                   cwd=outside, env=session.env)
    assert (run.returncode, run.stdout, run.stderr) == (0, "{}\n", "")
    run = w.rewind("hook", "--agent", "droid", input=json.dumps(session.payloads[1]), env=session.env)
    assert (run.returncode, run.stdout) == (0, "")  # only Gemini asks for JSON on stdout


# conversation rewind -----------------------------------------------------------------------------


def test_the_session_took_checkpoints_at_start_prompts_and_edits(session: Session) -> None:
    found = session.checkpoints()
    assert [(n["trigger"], n["tool"]) for n in found] == [
        ("SessionStart", None), ("BeforeAgent", None), ("BeforeTool", "replace"), ("AfterAgent", None),
        ("BeforeAgent", None), ("AfterAgent", None)]  # the resumed session's start: unchanged since the turn end
    # What write_file made is the agent's at the next checkpoint; each turn end holds the rest of its turn.
    assert found[2]["origins"] == {"plan.md": "agent"}
    assert found[3]["origins"] == {"plan.md": "agent", "shell.txt": "agent"}
    assert found[3]["turn"]["prompt"] == "P1-X do it" and found[5]["turn"]["prompt"] == "P2-Y more"
    assert found[4]["origins"] == {}
    log = [json.loads(line) for line in (session.w.path / ".git" / "rewind" / "hook.log").read_text().splitlines()]
    assert [(e["tool"], e["action"]) for e in log if e["event"] == "BeforeTool"] == [
        ("write_file", "unchanged"), ("replace", "checkpoint"), ("replace", "skip")]
    assert "batch" in [e for e in log if e["event"] == "BeforeTool"][-1]["reason"]  # the third edit in a row
    assert all(n["agent"] == "gemini" and n["conversation"]["transcript"] == str(session.transcript) for n in found)
    assert [n["prompt"] for n in found if n["trigger"] == "BeforeAgent"] == ["P1-X do it", "P2-Y more"]


def test_a_prompt_checkpoint_appends_one_rewind_record_naming_the_prompt(session: Session) -> None:
    w, transcript = session.w, session.transcript
    before, files = transcript.read_bytes(), disk_files(w.path)
    target = session.by_trigger("BeforeAgent", "P2-Y more")
    run = w.rewind("undo", str(target["seq"]), "--conversation", "--yes")
    assert run.returncode == 0, run.stderr
    assert f"resume with: gemini --resume {SESSION}" in run.stdout
    assert "the prompt it cut, to send again or edit:\n  P2-Y more" in run.stdout
    after = transcript.read_bytes()
    assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 1
    prompt = next(line for line in lines(transcript) if line.get("type") == "user"
                  and line["content"] == [{"text": "P2-Y more"}])
    assert lines(transcript)[-1] == {"$rewindTo": prompt["id"]}
    kept = replayed(transcript)
    assert [m["content"] for m in kept if m["type"] == "user" and "text" in m["content"][0]][-1] == [
        {"text": "P1-X do it"}]
    assert gemini._text(kept[-1]) == "done one"
    assert disk_files(w.path) == files  # --conversation leaves the files alone
    safety = session.checkpoints()[-1]
    assert safety["trigger"] == "pre-rewind"
    assert w.git("show", f"refs/rewind/{SESSION}^2:{transcript.name}").encode() == before
    assert session.by_trigger("BeforeAgent", "P2-Y more")["conversation"]["message_uuid"] == prompt["id"]


def test_a_session_file_under_another_minute_is_found_by_the_session_id(session: Session) -> None:
    """The hooks' transcript_path names the minute a run started; the messages may be in a file of another
    minute (seen live when a run crossed one). Gemini finds a session by id, and so does the rewind."""
    w, recorded = session.w, session.transcript
    moved = recorded.with_name(recorded.name.replace("session-", "session-1999-"))
    recorded.rename(moved)
    decoy = recorded.with_name(recorded.name.replace("session-", "session-1998-"))
    decoy.write_text(json.dumps({"sessionId": "another-session"}) + "\n")  # same 8 characters, other session
    target = session.by_trigger("BeforeAgent", "P2-Y more")
    run = w.rewind("undo", str(target["seq"]), "--conversation", "--yes")
    assert run.returncode == 0, run.stderr
    assert lines(moved)[-1].keys() == {"$rewindTo"} and not recorded.exists()
    assert decoy.read_text() == json.dumps({"sessionId": "another-session"}) + "\n"


def test_a_tool_checkpoint_cuts_before_the_model_turn_that_called_the_tool(session: Session) -> None:
    w, transcript = session.w, session.transcript
    target = session.by_trigger("BeforeTool")  # the first replace, in P1's turn
    run = w.rewind("undo", str(target["seq"]), "--full", "--yes")
    assert run.returncode == 0, run.stderr
    assert (w.path / "plan.md").read_text() == "hello world\nline two\n" and not (w.path / "shell.txt").exists()
    call = next(line for line in lines(transcript) if any(c["name"] == "replace" and c["args"]["old_string"]
                                                          == "hello world" for c in line.get("toolCalls") or []))
    assert lines(transcript)[-1] == {"$rewindTo": call["id"]}
    kept = replayed(transcript)
    # Messages rebuilt on resume hold their calls as functionCall parts.
    assert [p["functionCall"]["name"] for m in kept if isinstance(m["content"], list) for p in m["content"]
            if "functionCall" in p] == ["write_file"]


def test_fork_writes_the_kept_messages_as_a_new_session_and_leaves_the_file(session: Session) -> None:
    w, transcript = session.w, session.transcript
    before = transcript.read_bytes()
    target = session.by_trigger("BeforeAgent", "P2-Y more")
    run = w.rewind("undo", str(target["seq"]), "--conversation", "--fork", "--yes")
    assert run.returncode == 0, run.stderr
    assert transcript.read_bytes() == before
    (forked,) = [p for p in transcript.parent.glob("session-*.jsonl") if p != transcript]
    head = lines(forked)[0]
    assert head["sessionId"] != SESSION and forked.name.endswith(f"-{head['sessionId'][:8]}.jsonl")
    assert f"resume with: gemini --resume {head['sessionId']}" in run.stdout
    assert head["projectHash"] == lines(transcript)[0]["projectHash"]
    original = replayed(transcript)
    cut = next(i for i, m in enumerate(original) if m.get("content") == [{"text": "P2-Y more"}])
    assert replayed(forked) == original[:cut]


def test_a_cut_that_keeps_nothing_says_to_start_a_new_session(session: Session) -> None:
    w = session.w
    target = session.by_trigger("BeforeAgent", "P1-X do it")
    run = w.rewind("undo", str(target["seq"]), "--conversation", "--fork", "--yes")
    assert run.returncode == 0 and "start a new session" in run.stdout, run.stdout
    assert list(session.transcript.parent.glob("session-*.jsonl")) == [session.transcript]
    run = w.rewind("undo", str(target["seq"]), "--conversation", "--yes")
    assert run.returncode == 0, run.stderr
    assert "nothing of it is kept" in run.stdout and run.stdout.endswith("resume with: gemini\n"), run.stdout
    assert all(m["type"] == "user" and m["content"][0]["text"].startswith("<session_context>")
               for m in replayed(session.transcript))


def test_redo_puts_the_file_back_and_keeps_what_was_said_since_as_a_session(session: Session) -> None:
    w, transcript = session.w, session.transcript
    whole, files = transcript.read_bytes(), disk_files(w.path)
    target = session.by_trigger("BeforeAgent", "P2-Y more")
    assert w.rewind("undo", str(target["seq"]), "--full", "--yes").returncode == 0
    assert w.rewind("redo", "--yes").returncode == 0
    assert transcript.read_bytes() == whole and disk_files(w.path) == files
    assert list(transcript.parent.glob("session-*.jsonl")) == [transcript]  # nothing was said in between

    assert w.rewind("undo", str(target["seq"]), "--full", "--yes").returncode == 0
    said = {"id": "later-1", "timestamp": "2026-11-23T19:00:00.000Z", "type": "user",
            "content": [{"text": "P3 after the rewind"}]}
    with transcript.open("a") as fh:  # the resumed session goes on
        fh.write(json.dumps(said) + "\n")
    run = w.rewind("redo", "--yes")
    assert run.returncode == 0, run.stderr
    assert transcript.read_bytes() == whole
    (branch,) = [p for p in transcript.parent.glob("session-*.jsonl") if p != transcript]
    kept = replayed(branch)
    assert kept[-1] == said and "P2-Y more" not in json.dumps(kept)
    assert f"gemini --resume {lines(branch)[0]['sessionId']}" in run.stdout


@pytest.mark.parametrize("damage", ["missing", "prompt-gone", "not-gemini"])
def test_a_conversation_rewind_that_cannot_be_done_changes_nothing(session: Session, damage: str) -> None:
    w, transcript = session.w, session.transcript
    if damage == "missing":
        transcript.unlink()
    elif damage == "prompt-gone":
        transcript.write_text(transcript.read_text().replace("P2-Y more", "something else"))
    else:
        transcript.write_text('{"type": "session_start"}\n')
    before = (transcript.read_bytes() if transcript.exists() else None, disk_files(w.path),
              w.git("for-each-ref", "refs/rewind", "refs/notes"))
    target = session.by_trigger("BeforeAgent", "P2-Y more")
    run = w.rewind("undo", str(target["seq"]), "--full", "--yes")
    assert run.returncode != 0 and run.stderr.startswith("error: "), run.stderr
    assert (transcript.read_bytes() if transcript.exists() else None, disk_files(w.path),
            w.git("for-each-ref", "refs/rewind", "refs/notes")) == before


# install -----------------------------------------------------------------------------------------


def test_install_merges_into_the_users_gemini_settings_and_uninstall_puts_its_bytes_back(
        project: Workdir, home: Path) -> None:
    w = project
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    theirs: dict[str, Any] = {"security": {"auth": {"selectedType": "gemini-api-key"}}, "hooks": {"BeforeTool": [
        {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "audit.sh", "timeout": 5000}]}]}}
    original = json.dumps(theirs, indent=4) + "\n"
    settings.write_text(original)
    out = w.ok("install", "--agent", "gemini", "--scope", "user")
    assert f"installed gemini hooks (user) in {settings}" in out
    data = json.loads(settings.read_text())
    assert data["security"] == theirs["security"]
    before_tool = data["hooks"]["BeforeTool"]
    assert before_tool[0] == theirs["hooks"]["BeforeTool"][0]  # theirs first, untouched
    assert before_tool[1]["matcher"] == "write_file|replace"
    (ours,) = before_tool[1]["hooks"]
    assert ours["timeout"] == 30000 and ours["name"] == "git-rewind"  # milliseconds
    assert ours["command"].endswith(" hook --agent gemini")
    assert list(data["hooks"]) == ["BeforeTool", "SessionStart", "BeforeAgent", "AfterTool", "AfterAgent",
                                   "SessionEnd", "PreCompress"]
    assert data["hooks"]["AfterTool"][0]["matcher"] == "run_shell_command"
    installed = settings.read_bytes()
    w.ok("install", "--agent", "gemini", "--scope", "user")
    assert settings.read_bytes() == installed  # a second install changes nothing
    assert json.loads(w.ok("status", "--json"))["installed"] == [
        {"agent": "gemini", "scope": "user", "file": str(settings)}]
    w.ok("uninstall", "--agent", "gemini", "--scope", "user")
    assert settings.read_text() == original
