"""Handing a session over: `undo ID --full` with ID a checkpoint fetched from another machine writes the
conversation where this machine's agent looks for it, for this clone, and cuts it at the checkpoint.

Alice (the sender) works with Claude Code in her project: the recorded session
(tests/samples/claude-code/transcript_main_print_mode.jsonl) replayed through the real `git rewind hook`,
so her checkpoints are real commits and notes. Bob (the receiver) has a clone at another path with another
HOME. Until the fetch lands, a "fetched" checkpoint is Alice's real one with her note redacted as the
contract says (transcript path null, `shared` added, `source` set) and its objects fetched into Bob's clone;
the transcript is handed over as bytes, as `share.transcript_of` gives them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.agentcli import disk_files
from helpers.samples import CLAUDE_SAMPLES
from helpers.session import MAIN, PROMPT_ID, Agent
from helpers.workdir import Workdir, git_env

from git_rewind import agents
from git_rewind.base.errors import RewindError
from git_rewind.base.note import Note
from git_rewind.base.repo import Repo
from git_rewind.ops import request, undo
from git_rewind.sharing import handoff
from git_rewind.store import checkpoints
from git_rewind.store.checkpoints import Checkpoint

EDIT_CALL = "toolu_mock_601f38abdb2f4e42b38d"  # the recorded Edit's tool_use id
SAMPLE_CWD = "/home/dev/work/proj-main"  # the recorded session's project
NO_LIMITS = {"GIT_REWIND_ANTI_SPAM_SECONDS": "0", "GIT_REWIND_MIN_CHANGE_CHARS": "0"}
SOURCE = "origin/alice-laptop"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class Bob:
    """The receiving clone, its HOME, and Alice's checkpoints as fetched into it."""

    def __init__(self, w: Workdir, home: Path, alice: Workdir, raw: bytes) -> None:
        self.w = w
        self.home = home
        self.alice = alice
        self.raw = raw  # Alice's transcript as pushed
        self.repo = Repo.discover(str(w.path))

    def fetched(self, seq: int, **changes: Any) -> Checkpoint:
        """Alice's checkpoint SEQ as Bob's fetch gives it: her note redacted, CHANGES applied to its JSON."""
        (mine,) = [c for c in checkpoints.load_all(Repo.discover(str(self.alice.path))) if c.seq == seq]
        data = mine.note.to_json()
        data["worktree"] = None
        data["conversation"]["transcript"] = None
        data["shared"] = {"by": "alice-laptop", "user": "Alice", "source": None,
                          "transcript": f"transcripts/{mine.session}.jsonl", "left_out": [], "redactions": 0,
                          "times": {}}
        for key, value in changes.items():
            data[key] = value
        note = Note.from_json(data)
        assert note is not None
        return Checkpoint(mine.commit, note, mine.note_blob, SOURCE)

    def claude_file(self, session: str = MAIN) -> Path:
        folder = re.sub(r"[^a-zA-Z0-9]", "-", os.path.realpath(self.w.path))
        return self.home / ".claude" / "projects" / folder / f"{session}.jsonl"

    def undo(self, target: Checkpoint, mode: str = "full", handed: bytes | None = None,
             fork: bool = False) -> undo.Result:
        return undo.undo(self.repo, target, mode, fork, [], 50 << 20, 2000,  # type: ignore[arg-type]
                         cwd=str(self.w.path), handed=self.raw if handed is None else handed)


@pytest.fixture
def alice(agent_project: Workdir) -> Agent:
    """Alice's session: its transcript in her HOME at her project's path; checkpoints at the prompt (#1) and
    before the Edit (#2)."""
    agent = Agent(agent_project, session=MAIN, env=NO_LIMITS)
    Path(agent.transcript).parent.mkdir(parents=True, exist_ok=True)
    sample = (CLAUDE_SAMPLES / "transcript_main_print_mode.jsonl").read_text()
    Path(agent.transcript).write_text(sample.replace(SAMPLE_CWD, str(agent_project.path)))
    assert agent.prompt("make hello", prompt_id=PROMPT_ID)["action"] == "checkpoint"
    agent_project.write("hello.py", "print('hello')\n")
    decision = agent.send("PreToolUse", tool_name="Edit", tool_use_id=EDIT_CALL, prompt_id=PROMPT_ID,
                          tool_input={"file_path": str(agent_project.path / "hello.py"),
                                      "old_string": "print('hello')", "new_string": "print('hello, world')"})
    assert decision["action"] == "checkpoint"
    agent_project.write("hello.py", "print('hello, world')\n")
    return agent


def receiving(sender: Workdir, raw: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Bob:
    """Bob's clone of SENDER's project at another path, his own HOME, the checkpoints' objects fetched into it;
    this process runs as Bob from then on (library calls read HOME)."""
    home = tmp_path / "home-bob"
    home.mkdir()
    env = git_env(home)
    clone = tmp_path / "work" / "bob-clone"
    subprocess.run(["git", "clone", "-q", str(sender.path), str(clone)], env=env, check=True)
    w = Workdir(clone, env)
    w.git("fetch", "-q", str(sender.path), "refs/rewind/*:refs/handoff-test/*")  # the objects, as a fetch brings
    for key in [k for k in os.environ if k not in env]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(clone)
    return Bob(w, home, sender, raw)


@pytest.fixture
def bob(alice: Agent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Bob]:
    yield receiving(alice.w, Path(alice.transcript).read_bytes(), tmp_path, monkeypatch)


def _snapshot(root: Path) -> dict[str, object]:
    """Every file and link under ROOT (git directories' contents aside), for 'nothing was written'."""
    found: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            full = Path(dirpath, name)
            found[str(full)] = os.readlink(full) if full.is_symlink() else full.read_bytes()
    return found


def _refs(w: Workdir) -> str:
    return w.git("for-each-ref")


# Claude Code -----------------------------------------------------------------------------------


def test_full_writes_the_transcript_where_claude_looks_for_this_clone_cut_at_the_checkpoint(
        bob: Bob, capsys: pytest.CaptureFixture[str]) -> None:
    target = bob.fetched(2)  # before the Edit
    alice_file = bob.alice.path  # nothing of Alice's is read or written: her HOME and project stay as they were
    alice_before = _snapshot(Path(alice_file).parent / "home")
    result = bob.undo(target)
    written = bob.claude_file()
    assert written.is_file() and oct(written.stat().st_mode & 0o777) == "0o600"
    every = lines(written)
    assert {line["cwd"] for line in every if "cwd" in line} == {os.path.realpath(bob.w.path)}
    assert all(str(bob.alice.path) not in json.dumps(line.get("cwd")) for line in every)
    call = next(i for i, line in enumerate(every) if line.get("type") == "assistant"
                and any(b.get("id") == EDIT_CALL for b in line["message"]["content"] if isinstance(b, dict)))
    assert every[-1] == {"type": "last-prompt", "lastPrompt": "make hello", "leafUuid": every[call]["parentUuid"],
                         "explicit": True, "rewound": True, "sessionId": MAIN}
    assert (bob.w.path / "hello.py").read_text() == "print('hello')\n"  # the code, as at Alice's #2
    assert result.resume == f"claude --resume {MAIN}"
    assert (f"resume with: claude --resume {MAIN}", False) in request.result_lines(result, str(target.seq), "restored")
    # The transcript's whole content before the cut is in git, as for any conversation undo.
    assert result.outcome is not None and result.outcome.safety is not None
    safety = checkpoints.load_one(bob.repo, result.outcome.safety.commit)
    assert safety is not None and undo.backup_of(bob.repo, safety) == b"".join(
        written.read_bytes().splitlines(keepends=True)[:-1])
    # The fetched note is Alice's: never written into Bob's refs/notes/rewind (not even the resolved message).
    assert bob.w.git("notes", "--ref=rewind", "list", target.commit, check=False) == ""
    assert _snapshot(Path(alice_file).parent / "home") == alice_before
    # redo brings the handed-over conversation back to where Alice's session stood.
    redone = undo.redo(bob.repo, 50 << 20, 2000)
    assert redone.resume == f"claude --resume {MAIN}"
    assert lines(written)[-1]["leafUuid"] == json.loads(bob.raw.splitlines()[-1])["leafUuid"]
    assert not (bob.w.path / "hello.py").exists()  # as it was in Bob's clone before the undo


def test_a_prompt_checkpoint_prints_the_prompt_and_the_conversation_alone_leaves_the_files(bob: Bob) -> None:
    files = disk_files(bob.w.path)
    result = bob.undo(bob.fetched(1), mode="conversation")
    assert result.plan is not None and result.plan.prompt == "make hello"
    assert disk_files(bob.w.path) == files
    assert lines(bob.claude_file())[-1]["type"] == "last-prompt"


def test_code_on_a_fetched_checkpoint_writes_no_transcript_and_offers_no_resume(bob: Bob) -> None:
    result = bob.undo(bob.fetched(2), mode="code", handed=b"")
    assert result.resume is None and result.applied is None
    assert not (bob.home / ".claude").exists()
    assert (bob.w.path / "hello.py").read_text() == "print('hello')\n"


def test_pushed_without_its_conversation_full_says_so_in_one_line_and_changes_nothing(
        bob: Bob, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handoff, "transcript_of", lambda repo, checkpoint: None)  # what the fetched copy holds
    before, refs = _snapshot(bob.w.path.parent.parent), _refs(bob.w)
    with pytest.raises(RewindError) as caught:
        undo.undo(bob.repo, bob.fetched(2), "full", False, [], 50 << 20, 2000, cwd=str(bob.w.path))
    message = str(caught.value)
    assert "pushed without its conversation" in message and "alice-laptop" in message and "\n" not in message
    assert _snapshot(bob.w.path.parent.parent) == before and _refs(bob.w) == refs


def test_a_transcript_of_the_session_already_here_is_never_replaced_the_handover_forks(bob: Bob) -> None:
    """Handing the session back to the machine it came from: Bob's own transcript of it stays byte for byte, and
    the handed-over conversation becomes a new session beside it."""
    mine = bob.claude_file()
    mine.parent.mkdir(parents=True)
    own = bob.raw.replace(str(bob.alice.path).encode(), os.path.realpath(bob.w.path).encode())
    own = own.replace(b"make hello", b"make hello in my own words")  # said differently here
    mine.write_bytes(own)
    result = bob.undo(bob.fetched(2))
    assert mine.read_bytes() == own
    (forked,) = [p for p in mine.parent.glob("*.jsonl") if p != mine]
    assert result.resume == f"claude --resume {forked.stem}" and forked.stem != MAIN
    assert {line["sessionId"] for line in lines(forked) if "sessionId" in line} == {forked.stem}
    assert lines(forked)[-1]["type"] == "last-prompt"


def test_handing_the_same_checkpoint_over_twice_uses_the_file_already_written(bob: Bob) -> None:
    bob.undo(bob.fetched(2))
    written = bob.claude_file()
    first = written.read_bytes()
    result = bob.undo(bob.fetched(1), mode="conversation")  # the same session, another checkpoint
    assert [p.name for p in written.parent.iterdir()] == [written.name]
    assert written.read_bytes().startswith(first) and result.resume == f"claude --resume {MAIN}"


def test_a_local_transcript_the_handover_extends_is_extended_nothing_of_it_lost(bob: Bob) -> None:
    head = bob.raw.replace(str(bob.alice.path).encode(), os.path.realpath(bob.w.path).encode())
    head = b"".join(head.splitlines(keepends=True)[:8])  # the session as it was when Bob had it
    mine = bob.claude_file()
    mine.parent.mkdir(parents=True)
    mine.write_bytes(head)
    bob.undo(bob.fetched(2))
    assert mine.read_bytes().startswith(head) and len(mine.read_bytes()) > len(bob.raw)
    assert [p.name for p in mine.parent.iterdir()] == [mine.name]


def test_the_preview_says_where_it_would_go_and_writes_nothing(bob: Bob) -> None:
    before = _snapshot(bob.home)
    target = bob.fetched(2)
    line = handoff.describe(target, handoff.prepare(bob.repo, target, bob.raw))
    assert line == (f"conversation: handed over from {SOURCE}: would be written to {bob.claude_file()}, "
                    "then cut at the checkpoint")
    assert _snapshot(bob.home) == before and not (bob.home / ".claude").exists()


# A fetched note or transcript is data from another machine -----------------------------------


@pytest.mark.parametrize("path", ["../../etc/x", "/etc/passwd", "~/.bashrc", "transcripts/../../../etc/x"])
def test_a_fetched_transcript_path_is_never_used(bob: Bob, tmp_path: Path, path: str) -> None:
    """Whatever path the note or its `shared` part names, the file goes where Claude Code keeps it for the clone."""
    target = bob.fetched(2, shared={"by": "alice-laptop", "transcript": path})
    assert target.note.conversation is not None
    target.note.conversation.transcript = path
    before = _snapshot(tmp_path)
    bob.undo(target)
    after = _snapshot(tmp_path)
    new = sorted(set(after) - set(before))
    assert all(p.startswith(str(bob.home / ".claude" / "projects")) or p.startswith(str(bob.w.path))
               for p in new), new
    changed = [p for p in before if after.get(p) != before[p]]
    assert all(p.startswith(str(bob.w.path)) for p in changed), changed  # only the work tree's own files
    assert bob.claude_file().is_file()


@pytest.mark.parametrize("session", ["../../../../etc/x", "a/b", "/etc/passwd", "..", ".hidden", ""])
def test_a_session_id_that_is_not_a_name_is_one_error_and_nothing_is_written(bob: Bob, tmp_path: Path,
                                                                              session: str) -> None:
    before, refs = _snapshot(tmp_path), _refs(bob.w)
    with pytest.raises(RewindError) as caught:
        bob.undo(bob.fetched(2, session=session))
    assert "\n" not in str(caught.value)
    assert _snapshot(tmp_path) == before and _refs(bob.w) == refs


@pytest.mark.parametrize("case", ["another session", "not claude's", "a link at the target",
                                  "the project folder a link"])
def test_a_bad_transcript_or_a_planted_link_is_one_error_and_nothing_outside_changes(
        bob: Bob, tmp_path: Path, case: str) -> None:
    secret = tmp_path / "outside" / "secret.jsonl"
    secret.parent.mkdir()
    secret.write_bytes(b'{"type":"user"}\n')
    raw = bob.raw
    if case == "another session":
        raw = raw.replace(MAIN.encode(), b"11111111-2222-3333-4444-555555555555")
    elif case == "not claude's":
        raw = Path("/etc/passwd").read_bytes()
    elif case == "a link at the target":
        bob.claude_file().parent.mkdir(parents=True)
        bob.claude_file().symlink_to(secret)
    else:
        bob.claude_file().parent.parent.mkdir(parents=True)
        bob.claude_file().parent.symlink_to(secret.parent)
    before, refs = _snapshot(tmp_path), _refs(bob.w)
    with pytest.raises(RewindError) as caught:
        bob.undo(bob.fetched(2), handed=raw)
    assert "\n" not in str(caught.value)
    assert _snapshot(tmp_path) == before and _refs(bob.w) == refs


def test_a_position_not_in_the_pushed_transcript_removes_the_file_it_wrote(bob: Bob) -> None:
    raw = b"".join(line for line in bob.raw.splitlines(keepends=True) if EDIT_CALL.encode() not in line)
    before = _snapshot(bob.home)
    with pytest.raises(RewindError, match="is not in"):
        bob.undo(bob.fetched(2), handed=raw)
    assert _snapshot(bob.home) == before


# The other agents whose sessions are files ----------------------------------------------------


def _adopt(agent: str, raw: bytes, session: str, root: Path, home: Path,
           environ: dict[str, str] | None = None) -> Any:
    return agents.get(agent).adopt_transcript(raw, session, str(root), str(home), environ or {})


def test_droid_session_goes_to_its_project_key_with_cwd_rewritten(tmp_path: Path) -> None:
    root, home = tmp_path / "clone", tmp_path / "home"
    root.mkdir()
    rows = [{"type": "session_start", "id": "d-1", "title": "t", "version": 2, "cwd": "/home/alice/proj"},
            {"type": "message", "id": "m-1", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}}]
    raw = "".join(json.dumps(r) + "\n" for r in rows).encode()
    adopted = _adopt("droid", raw, "d-1", root, home)
    key = "-" + os.path.realpath(root).strip("/").replace("/", "-")
    assert adopted.path == str(home / ".factory" / "sessions" / key / "d-1.jsonl") and adopted.how == "written"
    written = lines(Path(adopted.path))
    assert written[0]["cwd"] == os.path.realpath(root) and written[1] == rows[1]
    mine = Path(adopted.path).read_bytes()
    Path(adopted.path).write_bytes(mine.replace(b"hi", b"hello"))  # the session went another way here
    forked = _adopt("droid", raw, "d-1", root, home)
    assert forked.how == "forked" and lines(Path(forked.path))[0]["id"] == forked.session != "d-1"
    assert Path(adopted.path).read_bytes() == mine.replace(b"hi", b"hello")


def test_droid_end_to_end_cut_at_the_prompt(agent_project: Workdir, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from test_undo import droid_session

    agent = Agent(agent_project, agent="droid", session="d-1", env=NO_LIMITS)
    agent.transcript = str(droid_session(agent_project, "d-1"))
    assert agent.prompt("polish it", prompt_id="m-p2")["action"] == "checkpoint"
    bob = receiving(agent_project, Path(agent.transcript).read_bytes(), tmp_path, monkeypatch)
    result = bob.undo(bob.fetched(1), mode="conversation")
    key = "-" + os.path.realpath(bob.w.path).strip("/").replace("/", "-")
    written = bob.home / ".factory" / "sessions" / key / "d-1.jsonl"
    kept = [line["id"] for line in lines(written) if line["type"] == "message"]
    assert kept[-1] == "m-a2" and result.resume == "droid --resume d-1"
    assert lines(written)[0]["cwd"] == os.path.realpath(bob.w.path)


def test_gemini_end_to_end_cut_at_the_prompt(agent_project: Workdir, home: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The recorded Gemini session replayed through the hook on Alice's side; on Bob's, the prompt of its second
    run is found in the handed-over file and cut off with Gemini's own `$rewindTo`."""
    from test_gemini import SESSION, Session, replayed

    alice = Session(agent_project, home)
    alice.play()
    bob = receiving(agent_project, alice.transcript.read_bytes(), tmp_path, monkeypatch)
    seq = alice.by_trigger("BeforeAgent", "P2-Y more")["seq"]
    result = bob.undo(bob.fetched(seq), mode="conversation")
    (written,) = (bob.home / ".gemini" / "tmp").glob("*/chats/*.jsonl")
    assert written.name == alice.transcript.name and written.parent.parent.name == "bob-clone"
    assert result.resume == f"gemini --resume {SESSION}"
    assert result.plan is not None and result.plan.prompt == "P2-Y more"
    prompt = next(line for line in lines(written) if line.get("type") == "user"
                  and line["content"] == [{"text": "P2-Y more"}])
    assert lines(written)[-1] == {"$rewindTo": prompt["id"]}
    assert "P2-Y more" not in json.dumps(replayed(written))


def test_gemini_session_goes_to_the_slug_gemini_finds_for_the_clone(tmp_path: Path) -> None:
    root, home = tmp_path / "work" / "My Clone", tmp_path / "home"
    root.mkdir(parents=True)
    raw = (Path(__file__).parent / "samples" / "gemini" / "session.jsonl").read_bytes()
    session = "bd3f5fb5-ba44-4e41-b301-e6bf39dfe85d"
    other = home / ".gemini" / "tmp" / "my-clone"  # another project already holds the plain slug
    other.mkdir(parents=True)
    (other / ".project_root").write_text("/somewhere/else/my-clone")
    adopted = _adopt("gemini", raw, session, root, home)
    chats = home / ".gemini" / "tmp" / "my-clone-1" / "chats"
    assert adopted.path == str(chats / "session-2026-11-23T18-30-bd3f5fb5.jsonl")
    assert (chats.parent / ".project_root").read_text() == str(root)  # how Gemini finds an unregistered root
    digest = hashlib.sha256(str(root).encode()).hexdigest()
    assert {line["projectHash"] for line in lines(Path(adopted.path)) if "projectHash" in line} == {digest}
    # The workspace directories below the sender's root (the one its projectHash names) move below the clone's.
    head = json.loads(raw.splitlines()[0])
    sender = "/home/alice/proj"
    head.update(projectHash=hashlib.sha256(sender.encode()).hexdigest(), directories=[sender, f"{sender}/lib", "/opt"])
    other_session = head["sessionId"] = "cd3f5fb5-ba44-4e41-b301-e6bf39dfe85d"
    moved = _adopt("gemini", json.dumps(head).encode() + b"\n", other_session, root, home)
    assert lines(Path(moved.path))[0]["directories"] == [str(root), f"{root}/lib", "/opt"]
    # A registered root keeps its slug.
    (home / ".gemini" / "projects.json").write_text(json.dumps({"projects": {str(root): "mine"}}))
    shutil.rmtree(chats.parent)
    again = _adopt("gemini", raw, session, root, home)
    assert again.path.startswith(str(home / ".gemini" / "tmp" / "mine" / "chats" / "session-"))


def test_codex_rollout_goes_under_its_dated_folder_with_cwd_rewritten(tmp_path: Path) -> None:
    root, home = tmp_path / "clone", tmp_path / "home"
    root.mkdir()
    session = "01a20160-53be-7000-8000-000000000001"
    rows = [{"timestamp": "2026-11-22T03:50:19.120Z", "type": "session_meta",
             "payload": {"id": session, "session_id": session, "timestamp": "2026-11-22T03:50:19.100Z",
                         "cwd": "/home/alice/proj", "originator": "codex_exec"}},
            {"timestamp": "2026-11-22T03:50:19.200Z", "type": "turn_context",
             "payload": {"cwd": "/home/alice/proj/sub", "model": "m"}},
            {"timestamp": "2026-11-22T03:50:19.300Z", "type": "response_item",
             "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}}]
    raw = "".join(json.dumps(r) + "\n" for r in rows).encode()
    adopted = _adopt("codex", raw, session, root, home, {"CODEX_HOME": str(tmp_path / "codex")})
    assert adopted.path == str(tmp_path / "codex" / "sessions" / "2026" / "11" / "22"
                               / f"rollout-2026-11-22T03-50-19-{session}.jsonl")
    written = lines(Path(adopted.path))
    assert written[0]["payload"]["cwd"] == os.path.realpath(root)
    assert written[1]["payload"]["cwd"] == os.path.join(os.path.realpath(root), "sub")
    assert written[2] == rows[2]


@pytest.mark.parametrize(("agent", "why"), [("opencode", "OpenCode keeps its sessions in its own database"),
                                            ("cursor", "not available for cursor")])
def test_agents_whose_sessions_are_not_files_refuse_in_one_line(bob: Bob, tmp_path: Path, agent: str,
                                                                why: str) -> None:
    before = _snapshot(tmp_path)
    with pytest.raises(RewindError, match=why) as caught:
        bob.undo(bob.fetched(2, agent=agent))
    assert "\n" not in str(caught.value) and _snapshot(tmp_path) == before


def test_claude_names_a_long_project_folder_as_claude_code_does() -> None:
    from git_rewind.agents.claude_code import _js_hash, project_folder

    assert (_js_hash("hello"), _js_hash("abc")) == (99162322, 96354)  # Java's String.hashCode
    assert project_folder("/home/dev/work/proj-main") == "-home-dev-work-proj-main"
    long = "/" + "x" * 250
    name = project_folder(long)
    assert name.startswith("-" + "x" * 199 + "-") and len(name) > 200 and name == project_folder(long)
    assert project_folder("/tmp/caf\u00e9") == "-tmp-caf-"


# The command ---------------------------------------------------------------------------------------


def _command(*argv: str) -> int:
    """`git rewind ARGV` in this process (as Bob): its exit status."""
    from git_rewind import main

    try:
        main.main(list(argv))
    except SystemExit as exited:
        return exited.code if isinstance(exited.code, int) else 0 if exited.code is None else 1
    return 0


def test_the_command_previews_then_hands_over_and_prints_the_resume_command(
        bob: Bob, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`git rewind undo <remote>/<machine>/<seq> --full`: --dry-run says where the file would go and writes
    nothing; --yes writes it, cuts it and prints how to resume. (The id is resolved by the fetch's lookup: here
    the lookup is given the fetched checkpoint.)"""
    target = bob.fetched(2)
    monkeypatch.setattr(checkpoints, "lookup", lambda *args, **kwargs: target)
    monkeypatch.setattr(handoff, "transcript_of", lambda repo, checkpoint: bob.raw)
    status = _command("undo", target.ident, "--full", "--dry-run")
    out = capsys.readouterr()
    assert status == 0, out.err
    assert f"conversation: handed over from {SOURCE}: would be written to {bob.claude_file()}" in out.out
    assert not (bob.home / ".claude").exists()
    status = _command("undo", target.ident, "--full", "--yes")
    out = capsys.readouterr()
    assert status == 0, out.err
    assert f"resume with: claude --resume {MAIN}" in out.out and "conversation cut just before the Edit call" in out.out
    assert lines(bob.claude_file())[-1]["type"] == "last-prompt"


def test_the_command_on_a_checkpoint_pushed_without_its_conversation_is_one_line(
        bob: Bob, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    target = bob.fetched(2)
    monkeypatch.setattr(checkpoints, "lookup", lambda *args, **kwargs: target)
    monkeypatch.setattr(handoff, "transcript_of", lambda repo, checkpoint: None)
    files = disk_files(bob.w.path)
    status = _command("undo", target.ident, "--full", "--yes")
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1 and "pushed without its conversation" in err
    assert disk_files(bob.w.path) == files and not (bob.home / ".claude").exists()


# Through a real remote ----------------------------------------------------------------------------


def test_push_fetch_and_undo_full_hand_the_session_over_through_a_bare_repository(
        alice: Agent, tmp_path: Path, env: dict[str, str]) -> None:
    """Alice pushes with her conversation; Bob, in his own clone with his own HOME, fetches and runs
    `git rewind undo <id> --full`: the code comes back and Claude Code finds the session in his clone."""
    bare = tmp_path / "shared.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], env=env, check=True)
    alice.w.git("push", "-q", str(bare), "main")
    alice.w.ok("push", str(bare), "--with-conversation")
    home = tmp_path / "home-bob"
    home.mkdir()
    bob_env = {**git_env(home), "GIT_AUTHOR_NAME": "Bob", "GIT_COMMITTER_NAME": "Bob"}
    clone = tmp_path / "work" / "bob-clone"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], env=bob_env, check=True)
    w = Workdir(clone, bob_env)
    w.ok("fetch", "origin")
    found = {item["seq"]: item["id"] for item in json.loads(w.ok("list", "--remote", "origin", "--json"))}
    before = _snapshot(tmp_path / "home")
    run = w.rewind("undo", found[2], "--full", "--yes")
    assert run.returncode == 0, run.stderr
    assert f"resume with: claude --resume {MAIN}" in run.stdout
    written = home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", os.path.realpath(clone)) / f"{MAIN}.jsonl"
    every = lines(written)
    assert {line["cwd"] for line in every if "cwd" in line} == {os.path.realpath(clone)}
    assert every[-1]["type"] == "last-prompt" and (clone / "hello.py").read_text() == "print('hello')\n"
    assert _snapshot(tmp_path / "home") == before  # Alice's HOME: not a byte changed
    assert w.git("notes", "--ref=rewind", "list").count("\n") == 1  # Bob's own store: his safety checkpoint only
    again = w.rewind("undo", found[1], "--conversation", "--yes")  # the prompt: the same file, found again
    assert again.returncode == 0, again.stderr
    assert "the prompt it cut, to send again or edit:\n  make hello" in again.stdout
    assert [p.name for p in written.parent.iterdir()] == [written.name]


def test_the_mcp_tool_hands_over_a_fetched_checkpoint_too(bob: Bob, monkeypatch: pytest.MonkeyPatch) -> None:
    from git_rewind.faces import mcp

    target = bob.fetched(1)
    monkeypatch.setattr(checkpoints, "lookup", lambda *args, **kwargs: target)
    monkeypatch.setattr(handoff, "transcript_of", lambda repo, checkpoint: bob.raw)
    tools = mcp.Tools(str(bob.w.path), None)
    _text, preview = tools.rewind(target.ident, "full", preview=True)
    assert preview["dry_run"] and not (bob.home / ".claude").exists()
    text, data = tools.rewind(target.ident, "full", token=preview["token"])
    assert data["resume"] == f"claude --resume {MAIN}" and data["prompt"] == "make hello", text
    assert lines(bob.claude_file())[-1]["type"] == "last-prompt"


def test_the_web_page_previews_then_hands_over_a_fetched_checkpoint(bob: Bob, monkeypatch: pytest.MonkeyPatch) -> None:
    from git_rewind.faces.web import actions

    target = bob.fetched(2)
    monkeypatch.setattr(handoff, "transcript_of", lambda repo, checkpoint: bob.raw)
    preview = actions.act(bob.repo, [], target, "undo", {"mode": "full", "dry_run": True})
    assert preview["conversation"].startswith(f"conversation: handed over from {SOURCE}: would be written to")
    assert not (bob.home / ".claude").exists()
    done = actions.act(bob.repo, [], target, "undo", {"mode": "full", "force": True})
    assert f"resume with: claude --resume {MAIN}" in done["text"]
    assert lines(bob.claude_file())[-1]["type"] == "last-prompt"


def test_codex_end_to_end_the_rollout_handed_over_then_cut_into_a_new_session(
        project: Workdir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_codex import SESSION, TURN_2, hook, payload, rollout_lines

    alice_codex = tmp_path / "alice-codex"
    project.env["CODEX_HOME"] = str(alice_codex)
    rollout = alice_codex / "sessions" / "2026" / "11" / "23" / f"rollout-2026-11-23T18-00-00-{SESSION}.jsonl"
    rollout.parent.mkdir(parents=True)
    rows = rollout_lines()
    rows[0]["payload"]["cwd"] = str(project.path)
    rollout.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in rows))
    prompt = hook(project, payload("UserPromptSubmit", project.path, rollout, turn_id=TURN_2, prompt="PROMPT TWO"))
    assert prompt["action"] == "checkpoint"
    bob = receiving(project, rollout.read_bytes(), tmp_path, monkeypatch)
    bob_codex = tmp_path / "bob-codex"
    monkeypatch.setenv("CODEX_HOME", str(bob_codex))
    result = bob.undo(bob.fetched(prompt["seq"]), mode="conversation")
    handed = bob_codex / "sessions" / "2026" / "11" / "23" / rollout.name
    assert lines(handed)[0]["payload"]["cwd"] == os.path.realpath(bob.w.path)
    assert result.applied is not None and result.applied.session is not None
    new = result.applied.session
    assert result.resume == f"codex resume {new}" and new != SESSION
    (cut,) = bob_codex.glob(f"sessions/*/*/*/rollout-*-{new}.jsonl")
    assert len(lines(cut)) == 13 and lines(cut)[0]["payload"]["id"] == new  # just before the second turn
    assert not list(alice_codex.glob(f"sessions/*/*/*/rollout-*-{new}.jsonl"))  # nothing on Alice's side


def test_a_turn_end_found_by_offset_lands_on_the_same_line_though_redaction_changed_lengths(
        agent_project: Workdir, tmp_path: Path, env: dict[str, str]) -> None:
    """A checkpoint with no message id (a turn end) is located by the transcript's size when its hook ran, in
    bytes of the sender's file; the pushed file is redacted (a secret in an earlier line becomes a shorter
    marker), so the push also records how many lines the file held, and the handover cuts there."""
    secret = "AKIAIOSFODNN7EXAMPLE"
    agent = Agent(agent_project, session=MAIN, env=NO_LIMITS)
    Path(agent.transcript).parent.mkdir(parents=True, exist_ok=True)
    sample = (CLAUDE_SAMPLES / "transcript_main_print_mode.jsonl").read_text()
    sample = sample.replace(SAMPLE_CWD, str(agent_project.path))
    lines_in = sample.splitlines()[:-1]  # up to the assistant's answer: the turn's last message
    data = json.loads(lines_in[0])
    data["secretNote"] = f"the deploy key is {secret} ok"  # a line whose length the scanner changes
    Path(agent.transcript).write_text("\n".join([json.dumps(data), *lines_in[1:]]) + "\n")
    agent_project.write("hello.py", "print('hello')\n" * 30)
    assert agent.stop()["action"] == "checkpoint"
    whole = len(lines_in)
    answer = json.loads(lines_in[-1])["uuid"]
    went_on = {**json.loads(lines_in[-1]), "uuid": "9e0c5a55-0000-4000-8000-000000000001", "parentUuid": answer}
    with open(agent.transcript, "a") as fh:  # the session goes on after the turn end
        fh.write(json.dumps(went_on) + "\n")
    bare = tmp_path / "shared.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], env=env, check=True)
    agent_project.git("push", "-q", str(bare), "main")
    agent_project.ok("push", str(bare), "--with-conversation")
    home = tmp_path / "home-bob"
    home.mkdir()
    clone = tmp_path / "work" / "bob-clone"
    bob_env = git_env(home)
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], env=bob_env, check=True)
    w = Workdir(clone, bob_env)
    w.ok("fetch", "origin")
    (turn_end,) = [item for item in json.loads(w.ok("list", "--remote", "origin", "--json"))
                   if item["trigger"] == "Stop"]
    assert turn_end["conversation"]["lines"] == whole
    run = w.rewind("undo", turn_end["id"], "--conversation", "--yes")
    assert run.returncode == 0, run.stderr
    written = home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", os.path.realpath(clone)) / f"{MAIN}.jsonl"
    kept = [json.loads(line) for line in written.read_text().splitlines()]
    assert secret not in written.read_text()
    # Claude Code rewinds by a last-prompt line naming the leaf: the turn's last message, not the one the session
    # went on with, nor the one before (where the pushed file's bytes would have put it: the marker is longer).
    assert kept[-1]["type"] == "last-prompt" and kept[-1]["leafUuid"] == answer
