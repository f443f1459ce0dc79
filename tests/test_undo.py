"""`git rewind undo --conversation/--full/--fork` and `redo` on transcripts, with every failure changing nothing;
the redo stack (repeated redos walk back through the undos).

The Claude Code transcript is a real one (tests/samples/claude-code/transcript_main_print_mode.jsonl, the
session of the recorded hook payloads: prompt "make hello", then Write, Edit, Bash); the hooks are replayed
through the real `git rewind hook`. Droid's session file is built in its verified shape (other-agents.md §5).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import terminal
from helpers.agentcli import disk_files
from helpers.samples import CLAUDE_SAMPLES
from helpers.session import MAIN, NO_LIMITS, PROMPT_ID, Agent, transcript_path, two_turns
from helpers.workdir import REWIND, Workdir

EDIT_CALL = "toolu_mock_601f38abdb2f4e42b38d"  # the recorded Edit's tool_use id
PROMPT_UUID = "66cf5f8e"  # prefix of the recorded prompt line's uuid


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def notes(w: Workdir) -> list[dict[str, Any]]:
    out = []
    for row in w.git("notes", "--ref=rewind", "list").splitlines():
        out.append(json.loads(w.git("notes", "--ref=rewind", "show", row.split()[1])))
    return sorted(out, key=lambda n: n["seq"])


@pytest.fixture
def claude(agent_project: Workdir) -> Agent:
    """The recorded session's transcript in place; checkpoints at its prompt and before its Edit."""
    agent = Agent(agent_project, session=MAIN, env=NO_LIMITS)
    Path(agent.transcript).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CLAUDE_SAMPLES / "transcript_main_print_mode.jsonl", agent.transcript)
    assert agent.prompt("make hello", prompt_id=PROMPT_ID)["action"] == "checkpoint"
    agent_project.write("hello.py", "print('hello')\n")
    decision = agent.send("PreToolUse", tool_name="Edit", tool_use_id=EDIT_CALL, prompt_id=PROMPT_ID,
                          tool_input={"file_path": str(agent_project.path / "hello.py"),
                                      "old_string": "print('hello')", "new_string": "print('hello, world')"})
    assert decision["action"] == "checkpoint"
    agent_project.write("hello.py", "print('hello, world')\n")
    return agent


def test_a_prompt_checkpoint_cuts_just_before_the_prompt_by_appending_one_line(claude: Agent) -> None:
    w, transcript = claude.w, Path(claude.transcript)
    w.git("checkout", "-q", "-b", "elsewhere")  # another branch, and an ignored file changed since:
    w.write(".env", "SECRET=2\n")  # warnings about files coming back, which a conversation rewind has none of
    before, tree = transcript.read_bytes(), disk_files(w.path)
    run = w.rewind("undo", "1", "--conversation", "--yes")
    assert run.returncode == 0, run.stderr
    assert "warning" not in run.stderr
    assert f"resume with: claude --resume {MAIN}" in run.stdout
    assert "the prompt it cut, to send again or edit:\n  make hello" in run.stdout
    after = transcript.read_bytes()
    assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 1  # one line appended
    last = lines(transcript)[-1]
    prompt = next(line for line in lines(transcript) if line.get("uuid", "").startswith(PROMPT_UUID))
    assert last == {"type": "last-prompt", "lastPrompt": "", "leafUuid": prompt["parentUuid"], "explicit": True,
                    "rewound": True, "sessionId": MAIN}
    assert disk_files(w.path) == tree  # --conversation leaves the files alone
    safety = notes(w)[-1]
    assert safety["trigger"] == "pre-rewind" and safety["rewind"]["mode"] == "conversation"
    assert w.git("show", f"refs/rewind/{MAIN}^2:{transcript.name}").encode() == before
    assert w.git("cat-file", "blob", safety["rewind"]["conversation"]["backup_blob"]).encode() == before
    assert notes(w)[0]["conversation"]["message_uuid"] == prompt["uuid"]  # resolved, and recorded


def test_an_edit_checkpoint_cuts_before_the_assistant_message_that_called_the_edit(claude: Agent) -> None:
    w, transcript = claude.w, Path(claude.transcript)
    run = w.rewind("undo", "2", "--full", "--yes")
    assert run.returncode == 0, run.stderr
    assert w.path.joinpath("hello.py").read_text() == "print('hello')\n"  # the code too
    every = lines(transcript)
    call = next(line for line in every if EDIT_CALL in json.dumps(line.get("message", {}).get("content", "")))
    assert call["type"] == "assistant"
    assert every[-1]["leafUuid"] == call["parentUuid"]


def test_full_with_patch_asks_first_then_takes_hunks_then_cuts_the_conversation(claude: Agent) -> None:
    w, transcript = claude.w, Path(claude.transcript)
    before = transcript.read_bytes()
    # The session's turn is still open (no Stop): asked about first, then the conversation.
    code, shown = terminal.run([*REWIND, "undo", "2", "--full", "--patch"], w.path, w.env, ["y", "n"])
    assert code == 1 and "is in the middle of a turn" in shown
    assert "Rewind the conversation to #2?" in shown and "nothing changed" in shown
    assert transcript.read_bytes() == before and len(notes(w)) == 2
    code, shown = terminal.run([*REWIND, "undo", "2", "--full", "--patch"], w.path, w.env, ["y", "y", "y"])
    assert code == 0, shown
    assert "Apply this hunk to worktree" in shown and "patched toward #2: 1 written" in shown
    assert w.path.joinpath("hello.py").read_text() == "print('hello')\n"
    every = lines(transcript)
    call = next(line for line in every if EDIT_CALL in json.dumps(line.get("message", {}).get("content", "")))
    assert every[-1]["leafUuid"] == call["parentUuid"]
    record = notes(w)[-1]["rewind"]
    assert record["mode"] == "full" and record["only"] == ["hello.py"] and record["conversation"]
    run = w.rewind("redo", "--yes")  # both come back
    assert run.returncode == 0, run.stderr
    assert w.path.joinpath("hello.py").read_text() == "print('hello, world')\n"


def test_fork_writes_the_kept_chain_as_a_new_session_and_leaves_the_original(claude: Agent) -> None:
    w, transcript = claude.w, Path(claude.transcript)
    before = transcript.read_bytes()
    run = w.rewind("undo", "2", "--conversation", "--fork", "--yes")
    assert run.returncode == 0, run.stderr
    assert transcript.read_bytes() == before
    (forked,) = [p for p in transcript.parent.glob("*.jsonl") if p != transcript]
    assert f"resume with: claude --resume {forked.stem}" in run.stdout
    kept = lines(forked)
    assert all(line["sessionId"] == forked.stem for line in kept)
    assert EDIT_CALL not in forked.read_text() and "toolu_mock_d768fdbc680d4babb9ca" in forked.read_text()
    uuids = {line["uuid"] for line in kept if "uuid" in line}
    assert all(line["parentUuid"] in uuids for line in kept if line.get("parentUuid"))  # one unbroken chain
    assert kept[-1]["type"] == "last-prompt" and kept[-1]["leafUuid"] in uuids


def test_redo_points_the_session_back_at_the_leaf_it_had(claude: Agent) -> None:
    w, transcript = claude.w, Path(claude.transcript)
    old_leaf = lines(transcript)[-1]["leafUuid"]  # the recorded session's own last-prompt
    assert w.rewind("undo", "1", "--full", "--yes").returncode == 0
    assert w.path.joinpath("hello.py").exists() is False
    run = w.rewind("redo", "--yes")
    assert run.returncode == 0, run.stderr
    assert lines(transcript)[-1]["leafUuid"] == old_leaf
    assert w.path.joinpath("hello.py").read_text() == "print('hello, world')\n"


def _unchanged_after_failure(w: Workdir, transcript: Path, args: list[str], message: str) -> None:
    before, tree, count = (transcript.read_bytes() if transcript.exists() else None), disk_files(w.path), len(notes(w))
    run = w.rewind("undo", *args, "--yes")
    assert run.returncode == 1 and message in run.stderr and run.stderr.count("\n") == 1, run.stderr
    assert (transcript.read_bytes() if transcript.exists() else None) == before
    assert disk_files(w.path) == tree and len(notes(w)) == count  # no byte changed, no checkpoint taken


def test_a_missing_transcript_is_one_error_and_nothing_changes(claude: Agent) -> None:
    transcript = Path(claude.transcript)
    transcript.rename(transcript.with_suffix(".moved"))
    _unchanged_after_failure(claude.w, transcript, ["1", "--full"], "transcript not found")
    # The code alone still rewinds.
    assert claude.w.rewind("undo", "1", "--code", "--yes").returncode == 0
    assert not claude.w.path.joinpath("hello.py").exists()


def test_a_message_no_longer_in_the_transcript_is_one_error(claude: Agent) -> None:
    transcript = Path(claude.transcript)
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines(transcript)
                                  if not line.get("uuid", "").startswith(PROMPT_UUID)))
    _unchanged_after_failure(claude.w, transcript, ["1", "--full"], "is not in")


def test_a_transcript_compacted_since_is_one_error(claude: Agent) -> None:
    transcript = Path(claude.transcript)
    with transcript.open("a") as fh:
        fh.write(json.dumps({"parentUuid": None, "type": "system", "subtype": "compact_boundary",
                             "uuid": "b0b0b0b0-0000-0000-0000-000000000000", "sessionId": MAIN}) + "\n")
    _unchanged_after_failure(claude.w, transcript, ["2", "--conversation"], "compacted")


def test_a_checkpoint_without_a_conversation_and_fork_without_one(claude: Agent) -> None:
    w = claude.w
    assert w.rewind("snap", "-m", "by hand").returncode == 0
    _unchanged_after_failure(w, Path(claude.transcript), ["@", "--conversation"], "no conversation")
    run = w.rewind("undo", "1", "--fork", "--yes")
    assert run.returncode == 2 and "--fork" in run.stderr


def test_the_backup_survives_git_gc_and_git_rewind_gc(claude: Agent) -> None:
    w, transcript = claude.w, Path(claude.transcript)
    before = transcript.read_bytes()
    assert w.rewind("undo", "1", "--conversation", "--yes").returncode == 0
    assert w.rewind("gc", "--keep", "2").returncode == 0  # drops #1, rewrites the chain
    w.git("gc", "--prune=now", "-q")
    assert w.git("show", f"refs/rewind/{MAIN}^2:{transcript.name}").encode() == before
    w.fsck()


# Droid ------------------------------------------------------------------------------------------


def droid_session(w: Workdir, session: str) -> Path:
    """A Droid session file: session_start, a reminder, prompt 1 with a Create, prompt 2 with an answer."""
    path = Path(transcript_path(w, "droid", session))
    path.parent.mkdir(parents=True, exist_ok=True)
    file_path = str(w.path / "plan.md")

    def message(mid: str, parent: str | None, role: str, content: list[dict[str, Any]]) -> dict[str, Any]:
        return {"type": "message", "id": mid, "parentId": parent, "message": {"role": role, "content": content}}

    rows = [
        {"type": "session_start", "id": session, "title": "t", "version": 2, "cwd": str(w.path)},
        message("context-1", None, "user", [{"type": "text", "text": "<system-reminder>tools</system-reminder>"}]),
        message("m-p1", "context-1", "user", [{"type": "text", "text": "write the plan"}]),
        message("m-a1", "m-p1", "assistant", [{"type": "tool_use", "id": "call_1", "name": "Create",
                                               "input": {"file_path": file_path, "content": "x" * 80}}]),
        message("m-r1", "m-a1", "user", [{"type": "tool_result", "tool_use_id": "call_1", "content": "ok"}]),
        message("m-a2", "m-r1", "assistant", [{"type": "text", "text": "written"}]),
        {"type": "agent_turn_outcome", "turnId": "t1", "reason": "completed"},
        message("m-p2", "m-a2", "user", [{"type": "text", "text": "polish it"}]),
        message("m-a3", "m-p2", "assistant", [{"type": "text", "text": "polished"}]),
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    path.with_name(f"{session}.settings.json").write_text('{"model": "custom:Mock-0"}\n')
    return path


def test_droid_prompt_rewind_cuts_the_file_and_fork_and_redo(agent_project: Workdir) -> None:
    w = agent_project
    agent = Agent(w, agent="droid", session="d-1", env=NO_LIMITS)
    agent.transcript = str(droid_session(w, "d-1"))
    transcript = Path(agent.transcript)
    whole = transcript.read_bytes()
    assert agent.prompt("polish it", prompt_id="m-p2")["action"] == "checkpoint"
    assert agent.prompt("write the plan", prompt_id="m-p1")["action"] == "checkpoint"

    run = w.rewind("undo", "2", "--conversation", "--fork", "--yes")  # prompt 1, as a new session
    assert run.returncode == 0, run.stderr
    (forked,) = [p for p in transcript.parent.glob("*.jsonl") if p != transcript]
    assert f"droid --resume {forked.stem}" in run.stdout and transcript.read_bytes() == whole
    # Only session_start: the reminder sent with the prompt goes with it.
    assert [line.get("id") for line in lines(forked)] == [forked.stem]
    assert forked.with_name(f"{forked.stem}.settings.json").read_text() == '{"model": "custom:Mock-0"}\n'
    forked.unlink()
    forked.with_name(f"{forked.stem}.settings.json").unlink()

    run = w.rewind("undo", "1", "--conversation", "--yes")  # prompt 2, in place
    assert run.returncode == 0, run.stderr
    assert "droid --resume d-1" in run.stdout and "polish it" in run.stdout
    kept = [line["id"] for line in lines(transcript) if line["type"] == "message"]
    assert kept[-1] == "m-a2" and whole.startswith(transcript.read_bytes())
    assert w.git("show", f"refs/rewind/d-1^2:{transcript.name}").encode() == whole

    with transcript.open("a") as fh:  # the user went on after the rewind
        fh.write(json.dumps({"type": "message", "id": "m-p9", "parentId": "m-a2",
                             "message": {"role": "user", "content": [{"type": "text", "text": "new idea"}]}}) + "\n")
    run = w.rewind("redo", "--yes")
    assert run.returncode == 0, run.stderr
    assert transcript.read_bytes() == whole
    (branch,) = [p for p in transcript.parent.glob("*.jsonl") if p != transcript]
    assert b"new idea" in branch.read_bytes() and branch.stem in run.stdout


def _message_line(mid: str, parent: str, text: str) -> str:
    return json.dumps({"type": "message", "id": mid, "parentId": parent,
                       "message": {"role": "user", "content": [{"type": "text", "text": text}]}}) + "\n"


def test_droid_undo_to_where_the_conversation_already_stands_says_so_and_changes_nothing(
        agent_project: Workdir) -> None:
    """The same conversation undo again (or the next one after an undo killed once its cut was written): the
    prompt is no longer in the file, and the file is what that undo left, so there is nothing to cut. Anything
    else (a line written since, another checkpoint) is refused as before."""
    w = agent_project
    agent = Agent(w, agent="droid", session="d-4", env=NO_LIMITS)
    agent.transcript = str(droid_session(w, "d-4"))
    transcript = Path(agent.transcript)
    whole = transcript.read_bytes()
    assert agent.prompt("polish it", prompt_id="m-p2")["seq"] == 1
    assert agent.prompt("write the plan", prompt_id="m-p1")["seq"] == 2
    w.ok("undo", "1", "--conversation", "--yes")
    cut = transcript.read_bytes()
    assert whole.startswith(cut) and b"m-p2" not in cut
    refs = w.git("for-each-ref", "refs/rewind", "refs/notes")

    for args in (["--dry-run"], ["--yes"]):
        run = w.rewind("undo", "1", "--conversation", *args)
        assert run.returncode == 0, run.stderr
        assert "already cut there by the undo of safety checkpoint #3, nothing to cut" in run.stdout
        assert "already matches" not in run.stdout and "safety checkpoint #4" not in run.stdout
        assert transcript.read_bytes() == cut and w.git("for-each-ref", "refs/rewind", "refs/notes") == refs
    w.write("plan.md", "edited by hand\n")  # code and conversation: the files go back, the cut stands
    run = w.rewind("undo", "1", "--full", "--yes")
    assert run.returncode == 0, run.stderr
    assert "safety checkpoint #4" in run.stdout
    assert "already cut there by the undo of safety checkpoint #3" in run.stdout
    assert transcript.read_bytes() == cut and not (w.path / "plan.md").exists()

    with transcript.open("a") as fh:  # the session went on after the cut: #1's place is gone from it
        fh.write(_message_line("m-p9", "m-a2", "new idea"))
    went_on = transcript.read_bytes()
    refused = w.rewind("undo", "1", "--conversation", "--yes")
    assert refused.returncode == 1 and "the prompt of #1 is not in" in refused.stderr
    assert transcript.read_bytes() == went_on

    run = w.rewind("redo", "--yes")  # the redo of the undo that cut it (the full one wrote no transcript)
    assert run.returncode == 0, run.stderr
    assert (w.path / "plan.md").read_text() == "edited by hand\n"
    run = w.rewind("redo", "--yes")
    assert run.returncode == 0, run.stderr
    assert transcript.read_bytes() == whole
    for leftover in transcript.parent.glob("*.jsonl"):  # the redo kept "new idea" as a session of its own
        if leftover != transcript:
            leftover.unlink()

    w.ok("undo", "2", "--conversation", "--yes")  # cut before #2's prompt, which is before #1's
    refused = w.rewind("undo", "1", "--conversation", "--yes")  # the newest cut went to #2, not #1
    assert refused.returncode == 1 and "the prompt of #1 is not in" in refused.stderr


def test_a_planted_record_never_makes_an_undo_think_the_conversation_is_already_cut(agent_project: Workdir,
                                                                                     tmp_path: Path) -> None:
    """The newest undo's record is data too: one whose cut is past the backup's end, or whose transcript names a
    file outside Droid's folder, leaves the refusal as it was, and nothing is read from that file."""
    w = agent_project
    agent = Agent(w, agent="droid", session="d-5", env=NO_LIMITS)
    agent.transcript = str(droid_session(w, "d-5"))
    transcript = Path(agent.transcript)
    assert agent.prompt("polish it", prompt_id="m-p2")["seq"] == 1
    w.ok("undo", "1", "--conversation", "--yes")  # safety checkpoint #2 records the cut
    cut = transcript.read_bytes()
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_bytes(cut)
    for change in ({"cut": 10 ** 9}, {"transcript": str(outside)}):
        commit = _commit_of(w, 2)
        note = json.loads(w.git("notes", "--ref=rewind", "show", commit))
        note["rewind"]["conversation"].update(change)
        w.git("notes", "--ref=rewind", "add", "-f", "-m", json.dumps(note), commit)
        refused = w.rewind("undo", "1", "--conversation", "--yes")
        assert refused.returncode == 1 and "the prompt of #1 is not in" in refused.stderr, change
        assert transcript.read_bytes() == cut and outside.read_bytes() == cut


def test_droid_file_that_is_not_a_session_is_one_error(agent_project: Workdir) -> None:
    w = agent_project
    agent = Agent(w, agent="droid", session="d-2", env=NO_LIMITS)
    path = droid_session(w, "d-2")
    agent.transcript = str(path)
    assert agent.prompt("write the plan", prompt_id="m-p1")["action"] == "checkpoint"
    path.write_text('{"type": "message"}\n')
    _unchanged_after_failure(w, path, ["1", "--conversation"], "session_start")


# A note naming a file that is not the agent's transcript ----------------------------------------
#
# A note is data anyone who can write to the repository can change (or a hostile hook payload could
# have named any path). Found in an attack: a conversation rewind appended a line to a copy of
# /etc/passwd and copied the whole file into git. Only a transcript the agent module recognises, at
# the agent's own location, after its format is checked, is ever read or written.


def _commit_of(w: Workdir, seq: int) -> str:
    return next(row.split()[1] for row in w.git("notes", "--ref=rewind", "list").splitlines()
                if json.loads(w.git("notes", "--ref=rewind", "show", row.split()[1]))["seq"] == seq)


def _plant(w: Workdir, seq: int, path: str, where: tuple[str, ...] = ("conversation",)) -> None:
    """Point checkpoint SEQ's note at PATH, as anyone who can write refs/notes/rewind could."""
    commit = _commit_of(w, seq)
    note = json.loads(w.git("notes", "--ref=rewind", "show", commit))
    inner = note
    for key in where:
        inner = inner[key]
    inner["transcript"] = path
    if where == ("conversation",):  # a session-start checkpoint: any file has a start to cut at
        note["trigger"] = "SessionStart"
        inner.update(prompt_id=None, tool_use_id=None, message_uuid=None, offset=0)
    w.git("notes", "--ref=rewind", "add", "-f", "-m", json.dumps(note), commit)


def _hostile(claude: Agent, tmp_path: Path, case: str) -> Path:
    """The file a planted note names, by CASE; a copy of /etc/passwd is what it must never touch."""
    secret = tmp_path / "etc" / "passwd"
    secret.parent.mkdir(exist_ok=True)
    shutil.copyfile("/etc/passwd", secret)
    folder = Path(claude.transcript).parent
    if case == "outside":
        return secret
    if case == "outside, in the agent's format":  # a real transcript, copied where Claude Code keeps none
        copy = tmp_path / "etc" / "copy.jsonl"
        shutil.copyfile(claude.transcript, copy)
        return copy
    if case == "link in the agent's folder":
        link = folder / "link.jsonl"
        link.symlink_to(secret)
        return link
    if case == "linked folder":
        (folder / "etc").symlink_to(secret.parent)
        return folder / "etc" / "passwd"
    if case == "fifo":
        fifo = folder / "fifo.jsonl"
        os.mkfifo(fifo)
        return fifo
    assert case == "wrong format"
    wrong = folder / "wrong.jsonl"
    shutil.copyfile(secret, wrong)
    return wrong


def _everything(w: Workdir, tmp_path: Path) -> tuple[object, ...]:
    """Every byte that must not change: all files under the test's folder (FIFOs not opened), and every ref."""
    files: dict[str, str | bytes] = {}
    for dirpath, dirnames, filenames in os.walk(tmp_path):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            full = Path(dirpath, name)
            if full.is_symlink():
                files[str(full)] = os.readlink(full)
            elif full.is_file():
                files[str(full)] = full.read_bytes()
            else:
                files[str(full)] = "special"
    return files, w.git("for-each-ref"), w.user_state()


HOSTILE = ["outside", "outside, in the agent's format", "link in the agent's folder", "linked folder", "fifo",
           "wrong format"]


@pytest.mark.parametrize("case", HOSTILE)
def test_undo_refuses_a_note_naming_anything_but_the_agents_transcript(claude: Agent, tmp_path: Path,
                                                                        case: str) -> None:
    w = claude.w
    path = _hostile(claude, tmp_path, case)
    _plant(w, 1, str(path))
    before = _everything(w, tmp_path)
    for args in (["1", "--full"], ["1", "--conversation"], ["1", "--conversation", "--fork"]):
        run = w.rewind("undo", *args, "--yes")
        assert run.returncode == 1 and run.stderr.count("\n") == 1 and str(path) in run.stderr, run.stderr
        assert _everything(w, tmp_path) == before  # no byte changed, no ref moved, no checkpoint
    if path.is_file() and not path.is_symlink():
        blob = w.git("hash-object", str(path)).strip()
        assert subprocess.run(["git", "cat-file", "-e", blob], cwd=w.path, env=w.env).returncode != 0  # not in git


@pytest.mark.parametrize("case", HOSTILE)
def test_redo_refuses_a_record_naming_anything_but_the_agents_transcript(claude: Agent, tmp_path: Path,
                                                                          case: str) -> None:
    w = claude.w
    assert w.rewind("undo", "1", "--full", "--yes").returncode == 0
    safety = notes(w)[-1]["seq"]
    path = _hostile(claude, tmp_path, case)
    _plant(w, safety, str(path), ("rewind", "conversation"))
    before = _everything(w, tmp_path)
    run = w.rewind("redo", "--yes")
    assert run.returncode == 1 and run.stderr.count("\n") == 1 and str(path) in run.stderr, run.stderr
    assert _everything(w, tmp_path) == before


def test_a_transcript_under_claude_config_dir_is_claudes(agent_project: Workdir, tmp_path: Path) -> None:
    """CLAUDE_CONFIG_DIR moves Claude Code's files, transcripts included: they are its own there too."""
    w = agent_project
    config = tmp_path / "claude-config"
    agent = Agent(w, session=MAIN, env={**NO_LIMITS, "CLAUDE_CONFIG_DIR": str(config)})
    agent.transcript = str(config / "projects" / "p" / f"{MAIN}.jsonl")
    Path(agent.transcript).parent.mkdir(parents=True)
    shutil.copyfile(CLAUDE_SAMPLES / "transcript_main_print_mode.jsonl", agent.transcript)
    assert agent.prompt("make hello", prompt_id=PROMPT_ID)["action"] == "checkpoint"
    assert notes(w)[0]["conversation"]["transcript"] == agent.transcript
    refused = w.rewind("undo", "1", "--conversation", "--yes")  # a shell where the variable is not set
    assert refused.returncode == 1 and "not under" in refused.stderr
    run = w.rewind("undo", "1", "--conversation", "--yes", env={"CLAUDE_CONFIG_DIR": str(config)})
    assert run.returncode == 0, run.stderr
    assert lines(Path(agent.transcript))[-1]["type"] == "last-prompt"


def test_droid_undo_and_redo_refuse_a_session_file_outside_droids_folder(agent_project: Workdir,
                                                                           tmp_path: Path) -> None:
    """The same gate for every agent: a valid Droid session copied elsewhere is not Droid's to cut or restore."""
    w = agent_project
    agent = Agent(w, agent="droid", session="d-3", env=NO_LIMITS)
    agent.transcript = str(droid_session(w, "d-3"))
    assert agent.prompt("polish it", prompt_id="m-p2")["action"] == "checkpoint"
    copy = tmp_path / "elsewhere" / "d-3.jsonl"
    copy.parent.mkdir()
    shutil.copyfile(agent.transcript, copy)
    _plant(w, 1, str(copy))
    before = _everything(w, tmp_path)
    for args in (["1", "--conversation"], ["1", "--full", "--fork"]):
        run = w.rewind("undo", *args, "--yes")
        assert run.returncode == 1 and "is not under" in run.stderr and run.stderr.count("\n") == 1, run.stderr
        assert _everything(w, tmp_path) == before
    _plant(w, 1, agent.transcript)
    assert w.rewind("undo", "1", "--conversation", "--yes").returncode == 0  # the real one is cut
    _plant(w, notes(w)[-1]["seq"], str(copy), ("rewind", "conversation"))
    before = _everything(w, tmp_path)
    run = w.rewind("redo", "--yes")
    assert run.returncode == 1 and "is not under" in run.stderr, run.stderr
    assert _everything(w, tmp_path) == before  # the copy too: redo would have written the backup over it


def test_agent_only_with_full_takes_back_the_agents_files_and_rewinds_the_conversation(claude: Agent) -> None:
    """--agent-only --full: the agent's edits go, the person's file stays, the conversation is cut at the prompt."""
    w, transcript = claude.w, Path(claude.transcript)
    claude.stop()
    w.write("mine.txt", "the person's, after the turn\n")
    before = transcript.read_bytes()
    run = w.rewind("undo", "1", "--agent-only", "--full", "--yes")
    assert run.returncode == 0, run.stderr
    assert not w.path.joinpath("hello.py").exists()  # created in the agent's turn
    assert w.path.joinpath("mine.txt").read_text() == "the person's, after the turn\n"
    assert transcript.read_bytes().startswith(before) and lines(transcript)[-1]["type"] == "last-prompt"
    assert "the prompt it cut, to send again or edit:\n  make hello" in run.stdout
    safety = notes(w)[-1]
    assert safety["rewind"]["mode"] == "full" and safety["rewind"]["kind"] == "agent-only"


# The redo stack -------------------------------------------------------------------------------------------


def _redos(w: Workdir) -> int:
    count = json.loads(w.ok("status", "--json"))["redos"]
    assert isinstance(count, int)
    return count


def _safety(w: Workdir) -> dict[str, Any]:
    """The newest checkpoint's note, with its commit (the safety checkpoint a rewind just took)."""
    newest = notes(w)[-1]
    return {**newest, "commit": w.git("rev-parse", f"refs/rewind/{newest['session']}").strip()}


def _three_states(w: Workdir) -> None:
    """Checkpoints #1..#3 of three states of src/app.py and notes.txt, then work on top that no checkpoint holds."""
    for n in (1, 2, 3):
        w.write("src/app.py", f"print('version {n}')\n")
        w.write("notes.txt", f"notes {n}\n")
        w.write(f"added-{n}.txt", f"{n}\n")
        w.ok("snap", "-m", f"state {n}")
    w.write("src/app.py", "print('work since')\n")
    (w.path / "notes.txt").unlink()


def test_three_undos_then_three_redos_walk_back_exactly(project: Workdir) -> None:
    w = project
    _three_states(w)
    replaced = []  # each undo's safety checkpoint: the tree it replaced
    for target in ("3", "2", "1"):
        w.ok("undo", target, "--yes")
        replaced.append(_safety(w))
        assert w.add_all_tree() == w.tree_of(json.loads(w.ok("show", target, "--json"))["commit"])
    assert [s["trigger"] for s in replaced] == ["pre-rewind"] * 3
    assert (w.path / "src/app.py").read_text() == "print('version 1')\n"
    assert _redos(w) == 3
    for expected_left, safety in zip((2, 1, 0), reversed(replaced), strict=True):
        run = w.rewind("redo", "--yes")
        assert run.returncode == 0, run.stderr
        assert w.add_all_tree() == w.tree_of(safety["commit"])  # byte-exact: the very tree that undo replaced
        redo = _safety(w)
        assert redo["trigger"] == "pre-redo" and redo["rewind"]["to"] == safety["seq"]
        assert f"(git rewind undo {redo['seq']} goes back)" in run.stdout
        assert _redos(w) == expected_left
        assert (f"{expected_left} more redo" in run.stdout) == bool(expected_left)
    assert (w.path / "src/app.py").read_text() == "print('work since')\n" and not (w.path / "notes.txt").exists()
    run = w.rewind("redo", "--yes")
    assert run.returncode == 1 and run.stderr.startswith("error: nothing to redo") and run.stderr.count("\n") == 1
    w.fsck()


def test_a_redo_after_new_hook_checkpoints_still_works(agent_project: Workdir) -> None:
    w = agent_project
    _three_states(w)
    w.ok("undo", "2", "--yes")
    replaced = _safety(w)
    agent = Agent(w, session="later", env=NO_LIMITS)  # an agent goes on working after the undo
    agent.start()
    assert agent.prompt("more work")["action"] == "checkpoint"
    agent.write("later.txt", "agent's file\n")
    w.write("later.txt", "agent's file\n")
    assert agent.stop()["action"] == "checkpoint"
    assert notes(w)[-1]["seq"] > replaced["seq"] + 1 and _redos(w) == 1  # hook checkpoints do not clear it
    assert w.rewind("redo", "--yes").returncode == 0
    assert w.add_all_tree() == w.tree_of(replaced["commit"])
    assert _safety(w)["rewind"]["to"] == replaced["seq"]
    assert w.git("show", f"{_safety(w)['commit']}:later.txt") == "agent's file\n"  # kept in the redo's checkpoint


def test_a_redo_can_be_undone_and_that_undo_redone(project: Workdir) -> None:
    w = project
    _three_states(w)
    w.ok("undo", "1", "--yes")
    after_undo = w.add_all_tree()
    w.ok("redo", "--yes")
    redo = _safety(w)
    after_redo = w.add_all_tree()
    assert _redos(w) == 0 and after_redo != after_undo
    w.ok("undo", str(redo["seq"]), "--yes")  # undo the redo: back to what it replaced
    assert w.add_all_tree() == after_undo == w.tree_of(redo["commit"])
    assert _redos(w) == 1
    w.ok("redo", "--yes")
    assert w.add_all_tree() == after_redo


def test_a_new_undo_after_redos_goes_on_top_of_what_is_left(project: Workdir) -> None:
    """Three undos, two redos (one left), a new undo: redo reverses the new undo, then the one left."""
    w = project
    _three_states(w)
    replaced = []
    for target in ("3", "2", "1"):
        w.ok("undo", target, "--yes")
        replaced.append(_safety(w))
    w.ok("redo", "--yes")
    w.ok("redo", "--yes")
    assert _redos(w) == 1
    w.write("src/app.py", "print('edited after the redos')\n")
    w.ok("undo", "1", "--yes")
    newest = _safety(w)
    assert _redos(w) == 2
    w.ok("redo", "--yes")
    assert w.add_all_tree() == w.tree_of(newest["commit"])
    assert (w.path / "src/app.py").read_text() == "print('edited after the redos')\n"
    w.ok("redo", "--yes")
    assert w.add_all_tree() == w.tree_of(replaced[0]["commit"])  # the tree before the first undo
    assert _redos(w) == 0


def test_a_redo_with_nothing_to_write_still_moves_down_the_stack(project: Workdir) -> None:
    w = project
    _three_states(w)
    w.ok("undo", "3", "--yes")
    first = _safety(w)
    w.ok("undo", "2", "--yes")
    second = _safety(w)
    w.write("src/app.py", "print('version 3')\n")  # by hand, the person puts back what the second undo replaced
    w.write("notes.txt", "notes 3\n")
    w.write("added-3.txt", "3\n")
    assert w.add_all_tree() == w.tree_of(second["commit"])
    run = w.rewind("redo", "--yes")
    assert run.returncode == 0 and f"already matches #{second['seq']}" in run.stdout, run.stdout
    assert _redos(w) == 1  # popped all the same: the next redo goes on to the first undo
    w.ok("redo", "--yes")
    assert w.add_all_tree() == w.tree_of(first["commit"])


def test_gc_keeps_every_checkpoint_on_the_redo_stack(project: Workdir) -> None:
    w = project
    _three_states(w)
    replaced = []
    for target in ("3", "2", "1"):
        w.ok("undo", target, "--yes")
        replaced.append(_safety(w))
    w.ok("redo", "--yes")  # pops the third; two stay
    out = w.ok("gc", "--older-than", "0")
    kept = [n["seq"] for n in notes(w)]
    assert kept == [replaced[0]["seq"], replaced[1]["seq"]], (out, kept)
    assert _redos(w) == 2
    w.ok("redo", "--yes")
    assert w.add_all_tree() == w.tree_of(replaced[1]["commit"])
    w.ok("redo", "--yes")
    assert w.add_all_tree() == w.tree_of(replaced[0]["commit"])
    w.fsck()


def test_status_counts_the_redos_in_text_and_json(project: Workdir) -> None:
    w = project
    assert "redos available: 0\n" in w.ok("status") and _redos(w) == 0
    _three_states(w)
    w.ok("undo", "2", "--yes")
    w.ok("undo", "1", "--yes")
    assert "redos available: 2 (git rewind redo)\n" in w.ok("status") and _redos(w) == 2


def test_each_work_tree_has_its_own_redo_stack(project: Workdir, tmp_path: Path) -> None:
    main = project
    _three_states(main)
    linked = Workdir(tmp_path / "feat", main.env)
    main.git("worktree", "add", "-q", "-b", "feature", str(linked.path))
    linked.write("feature.txt", "one\n")
    linked.ok("snap", "-m", "feat one")
    linked.write("feature.txt", "two\n")
    linked.ok("undo", "@", "--yes")
    linked_safety = _safety(linked)
    main.ok("undo", "2", "--yes")
    main.ok("undo", "1", "--yes")
    assert (_redos(main), _redos(linked)) == (2, 1)
    linked.ok("redo", "--yes")
    assert (linked.path / "feature.txt").read_text() == "two\n"
    assert linked.add_all_tree() == linked.tree_of(linked_safety["commit"])
    assert (_redos(main), _redos(linked)) == (2, 0)
    assert (main.path / "src/app.py").read_text() == "print('version 1')\n"  # the main work tree untouched
    assert linked.rewind("redo", "--yes").stderr.startswith("error: nothing to redo")


def test_redo_walks_back_the_conversation_of_each_undo(claude: Agent) -> None:
    """Two --full undos, two redos: each brings back the files and the leaf the session had before that undo."""
    w, transcript = claude.w, Path(claude.transcript)
    leaf0, code0 = lines(transcript)[-1]["leafUuid"], w.path.joinpath("hello.py").read_text()
    assert w.rewind("undo", "2", "--full", "--yes").returncode == 0
    leaf2, code2 = lines(transcript)[-1]["leafUuid"], w.path.joinpath("hello.py").read_text()
    assert w.rewind("undo", "1", "--full", "--yes").returncode == 0
    assert lines(transcript)[-1]["leafUuid"] not in (leaf0, leaf2) and not w.path.joinpath("hello.py").exists()
    assert _redos(w) == 2
    run = w.rewind("redo", "--yes")
    assert run.returncode == 0, run.stderr
    assert lines(transcript)[-1]["leafUuid"] == leaf2 and w.path.joinpath("hello.py").read_text() == code2
    run = w.rewind("redo", "--yes")
    assert run.returncode == 0, run.stderr
    assert lines(transcript)[-1]["leafUuid"] == leaf0 and w.path.joinpath("hello.py").read_text() == code0
    assert _redos(w) == 0


# a bare undo: the newest agent turn, then one turn further back (issue 26) ----------------------------------


def test_a_bare_undo_undoes_the_newest_turn_and_again_one_turn_further_back(agent_project: Workdir) -> None:
    """Before: a bare undo restored the turn's end checkpoint, so its only effect was to throw away the person's
    own later edit. Now it restores the newest turn's prompt checkpoint, names it, lists the person's edit (kept
    in the safety checkpoint) with --agent-only, which keeps it; again: one turn further back; redo walks
    forward again."""
    w = agent_project
    _agent, first, second = two_turns(w)
    w.write("mine.txt", "my own\n")

    dry = w.ok("undo", "--dry-run").splitlines()
    assert dry[0].startswith(f"undo to #{second}, the start of the newest agent turn (prompt, ")
    assert dry[0].endswith("claude-code session sess-1): prompt: turn two")
    assert "write   src/app.py" in dry and "remove  mine.txt" in dry
    assert "  mine.txt" in dry and f"git rewind undo {second} --agent-only" in dry[-1]
    data = json.loads(w.ok("undo", "--dry-run", "--json"))
    assert data["checkpoint"] == second and data["changed_outside"] == ["mine.txt"]
    assert data["target_checkpoint"]["why"] == "the start of the newest agent turn"

    assert w.ok("undo", "--yes").splitlines()[0] == dry[0]
    assert (w.path / "src/app.py").read_text() == "v1\n" and not (w.path / "mine.txt").exists()
    again = w.ok("undo", "--yes").splitlines()
    assert again[0].startswith(f"undo to #{first}, one turn further back than #{second}, where the last undo went")
    assert (w.path / "src/app.py").read_text() == "v0\n"
    before = w.state()
    bottom = w.rewind("undo", "--yes")
    assert bottom.returncode == 1 and bottom.stderr.startswith(f"error: nothing further back: #{first}")
    assert len(bottom.stderr.splitlines()) == 1 and w.state() == before

    w.ok("redo", "--yes")
    assert (w.path / "src/app.py").read_text() == "v1\n"
    assert w.ok("undo", "--dry-run").startswith(f"undo to #{first}, one turn further back than #{second}")
    w.ok("redo", "--yes")
    assert (w.path / "src/app.py").read_text() == "v2\n" and (w.path / "mine.txt").read_text() == "my own\n"
    # What the preview suggested: only the agents' changes taken back, the person's edit kept.
    kept = w.ok("undo", "--agent-only", "--yes")
    assert kept.startswith(f"taking back the agents' changes since #{second}, the start of the newest agent turn")
    assert (w.path / "src/app.py").read_text() == "v1\n" and (w.path / "mine.txt").read_text() == "my own\n"


def test_a_bare_undo_passes_over_a_turn_that_changed_nothing_but_not_one_still_running(
        agent_project: Workdir) -> None:
    w = agent_project
    a, _first, second = two_turns(w)
    asked = a.prompt("just a question", prompt_id="p3")["seq"]
    a.stop()  # no file changed: no turn-end checkpoint
    w.write("mine.txt", "my own\n")
    dry = w.ok("undo", "--dry-run").splitlines()
    assert dry[0].startswith(f"undo to #{second}, the start of the newest agent turn (prompt, ")
    assert asked > second  # the question's turn, passed over
    running = a.prompt("edit again", prompt_id="p4")["seq"]
    a.edit("src/app.py", "v2", "v3")  # its checkpoint holds the tree before the edit: the same as the prompt's
    w.write("src/app.py", "v3\n")
    dry = w.ok("undo", "--dry-run").splitlines()
    assert dry[0].startswith(f"undo to #{running}, the start of the newest agent turn (still running) (prompt, ")


def test_a_bare_undo_goes_back_to_the_start_of_each_watch_run(project: Workdir) -> None:
    """A program with no hooks run under `git rewind watch`: each run is a turn, from its start checkpoint."""
    w = project
    for text in ("v1", "v2"):
        run = subprocess.run([*REWIND, "watch", "--", "sh", "-c", f"sleep 2; echo {text} > src/app.py"],
                             cwd=w.path, env=w.env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                             timeout=120)
        assert run.returncode == 0, run.stderr
    every = json.loads(w.ok("list", "--json", "-n", "0"))[::-1]
    starts = [c["seq"] for c in every if c["message"].startswith("watch start")]
    assert len(starts) == 2 and (w.path / "src/app.py").read_text() == "v2\n"
    w.write("mine.txt", "my own\n")
    dry = w.ok("undo", "--dry-run").splitlines()
    assert dry[0].startswith(f"undo to #{starts[1]}, the start of the newest agent turn (watch start, ")
    assert "  mine.txt" in dry
    w.ok("undo", "--yes")
    assert (w.path / "src/app.py").read_text() == "v1\n"
    again = w.ok("undo", "--yes").splitlines()[0]
    assert again.startswith(f"undo to #{starts[0]}, one turn further back than #{starts[1]}")
    assert (w.path / "src/app.py").read_text() == "print('hello')\n"
