"""ops/token.py: two-phase restores over MCP, through the SDK's own client and a real `git-rewind mcp` process.

A preview gives a token bound to the rewind and to what it saw; the restore needs it, and refuses, changing no
byte (files, the person's index, refs, notes, the transcript), when anything the token covers moved since.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.agentcli import disk_files
from helpers.mcpclient import Reply, session
from helpers.samples import CLAUDE_SAMPLES
from helpers.session import MAIN, PROMPT_ID, Agent
from helpers.workdir import Workdir

Everything = tuple[dict[str, tuple[str, str]], bytes, str, str]


def everything(w: Workdir) -> Everything:
    """What a refused restore must leave byte for byte: every file (ignored ones too), the person's index,
    every ref (ours and the person's) and what refs/notes/rewind holds."""
    index = (w.path / ".git" / "index").read_bytes()
    refs = w.git("for-each-ref", "--format=%(refname) %(objectname)")
    notes = w.git("notes", "--ref=rewind", "list", check=False)
    return disk_files(w.path), index, refs, notes


def one_line_refusal(reply: Reply, *words: str) -> None:
    assert reply.error, reply.text
    assert "\n" not in reply.text and "nothing changed" in reply.text, reply.text
    for word in words:
        assert word in reply.text, reply.text


def test_a_preview_gives_a_token_and_the_restore_with_it_restores(project: Workdir) -> None:
    w = project
    w.ok("snap", "-m", "before")
    w.write("src/app.py", "print('changed')\n")
    user = w.user_state()
    seen: dict[str, Reply] = {}

    def story(call: Callable[..., Reply]) -> None:
        seen["preview"] = call("checkpoint_rewind_code", checkpoint_id="1", preview=True)
        seen["restore"] = call("checkpoint_rewind_code", checkpoint_id="1", token=seen["preview"].data["token"])

    session(w, story)
    preview, restore = seen["preview"], seen["restore"]
    token = preview.data["token"]
    assert token.startswith("rw1.") and f"token: {token}" in preview.text
    assert "preview=false and this token" in preview.text
    assert not restore.error, restore.text
    assert restore.data["written"] == ["src/app.py"] and restore.data["token"] is None
    assert (w.path / "src/app.py").read_text() == "print('hello')\n"
    assert w.user_state()[:3] == user[:3]
    # The key is the repository's own, made once, readable by the person alone.
    key = w.path / ".git" / "rewind" / "token-key"
    assert len(key.read_bytes()) == 32 and key.stat().st_mode & 0o077 == 0
    # The command line keeps its own confirmation: no token there, the same JSON keys.
    shown = json.loads(w.ok("undo", "1", "--dry-run", "--json"))
    assert shown["token"] is None and set(shown) == set(preview.data)


def test_every_restoring_tool_refuses_without_a_token_and_changes_nothing(agent_project: Workdir) -> None:
    w = agent_project
    agent = Agent(w, session=MAIN)
    transcript = Path(agent.transcript)
    transcript.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CLAUDE_SAMPLES / "transcript_main_print_mode.jsonl", transcript)
    first = agent.prompt("make hello", prompt_id=PROMPT_ID)["seq"]
    w.write("hello.py", "print('hello')\n")
    agent.stop()
    before, words = everything(w), transcript.read_bytes()
    seen: dict[str, Reply] = {}

    def story(call: Callable[..., Reply]) -> None:
        seen["code"] = call("checkpoint_rewind_code", checkpoint_id=str(first))
        seen["agent_only"] = call("checkpoint_rewind_code", checkpoint_id=str(first), agent_only=True)
        seen["full"] = call("checkpoint_rewind_full", checkpoint_id=str(first), token="")
        seen["conversation"] = call("checkpoint_rewind_conversation", checkpoint_id=str(first))
        seen["revert"] = call("checkpoint_revert", checkpoint_id=str(first))
        seen["listed"] = call("checkpoint_list")

    tools = session(w, story)
    for name in ("code", "agent_only", "full", "conversation", "revert"):
        one_line_refusal(seen[name], "no token", "preview=true")
    assert everything(w) == before and transcript.read_bytes() == words
    # The rule is in what the model reads of each restoring tool.
    assert {"checkpoint_rewind_code", "checkpoint_revert"} <= set(tools)


def test_a_file_written_between_preview_and_restore_is_named_and_nothing_changes(project: Workdir) -> None:
    w = project
    w.ok("snap", "-m", "before")
    w.write("src/app.py", "print('agent')\n")
    seen: dict[str, Any] = {}

    def story(call: Callable[..., Reply]) -> None:
        preview = call("checkpoint_rewind_code", checkpoint_id="1", preview=True)
        w.write("src/app.py", "print('the person, meanwhile')\n")  # what the restore would overwrite unseen
        seen["state"] = everything(w)
        seen["one"] = call("checkpoint_rewind_code", checkpoint_id="1", token=preview.data["token"])
        for i in range(7):
            w.write(f"more/f{i}.txt", f"{i}\n")
        seen["many"] = call("checkpoint_rewind_code", checkpoint_id="1", token=preview.data["token"])
        seen["after"] = everything(w)
        again = call("checkpoint_rewind_code", checkpoint_id="1", preview=True)  # a new preview sees it all
        seen["again"] = call("checkpoint_rewind_code", checkpoint_id="1", token=again.data["token"])

    session(w, story)
    one_line_refusal(seen["one"], "the work tree changed since the preview, 1 file: modified src/app.py",
                     "preview=true")
    one_line_refusal(seen["many"], "8 files: added more/f0.txt", "and 3 more")
    assert seen["after"][1:] == seen["state"][1:]  # index, refs and notes: not a byte
    assert seen["after"][0] == {**seen["state"][0], **{p: v for p, v in seen["after"][0].items()
                                                       if p.startswith("more/")}}
    assert not seen["again"].error, seen["again"].text
    assert (w.path / "src/app.py").read_text() == "print('hello')\n" and not (w.path / "more").exists()


def test_head_moving_since_the_preview_is_refused(project: Workdir) -> None:
    w = project
    w.ok("snap", "-m", "before")
    w.write("src/app.py", "print('agent')\n")
    seen: dict[str, Any] = {}

    def story(call: Callable[..., Reply]) -> None:
        preview = call("checkpoint_rewind_code", checkpoint_id="1", preview=True)
        w.git("commit", "-q", "--allow-empty", "-m", "meanwhile")
        seen["state"] = everything(w)
        seen["restore"] = call("checkpoint_rewind_code", checkpoint_id="1", token=preview.data["token"])

    session(w, story)
    one_line_refusal(seen["restore"], "HEAD moved since the preview", "on main to")
    assert "work tree changed" not in seen["restore"].text
    assert everything(w) == seen["state"]


def test_a_token_for_another_target_mode_selection_or_repository_is_refused(
        project: Workdir, tmp_path: Path) -> None:
    w = project
    w.ok("snap", "-m", "one")
    w.write("src/app.py", "print('two')\n")
    w.ok("snap", "-m", "two")
    w.write("src/app.py", "print('three')\n")
    w.write("notes.txt", "more work\n")
    other = Workdir(tmp_path / "other", w.env)  # another repository, as alike as can be
    shutil.copytree(w.path, other.path, symlinks=True)
    shutil.rmtree(other.path / ".git" / "rewind")  # its own store: its own key
    seen: dict[str, Reply] = {}

    def theirs(call: Callable[..., Reply]) -> None:
        seen["theirs"] = call("checkpoint_rewind_code", checkpoint_id="1", preview=True)

    session(other, theirs)
    before = everything(w)

    def story(call: Callable[..., Reply]) -> None:
        token = call("checkpoint_rewind_code", checkpoint_id="1", preview=True).data["token"]
        seen["target"] = call("checkpoint_rewind_code", checkpoint_id="2", token=token)
        seen["selection"] = call("checkpoint_rewind_code", checkpoint_id="1", selective_files=["src"], token=token)
        seen["agent_only"] = call("checkpoint_rewind_code", checkpoint_id="1", agent_only=True, token=token)
        seen["revert"] = call("checkpoint_revert", checkpoint_id="1", token=token)
        seen["repository"] = call("checkpoint_rewind_code", checkpoint_id="1", token=seen["theirs"].data["token"])

    session(w, story)
    one_line_refusal(seen["target"], "the token is for the undo (code) to #1, not for the undo (code) to #2")
    one_line_refusal(seen["selection"], "the token is for the undo (code) to #1 with other options")
    one_line_refusal(seen["agent_only"], "not for an agent-only undo (code) to #1")
    one_line_refusal(seen["revert"], "not for the revert of #1")
    one_line_refusal(seen["repository"], "not one a preview in this repository gave")
    assert everything(w) == before


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_a_forged_or_altered_token_is_refused(project: Workdir) -> None:
    """An agent that edits a token to claim the state it sees now, or writes one with a key of its own, or
    hands back a truncated one, restores nothing."""
    w = project
    w.ok("snap", "-m", "before")
    w.write("src/app.py", "print('agent')\n")
    seen: dict[str, Any] = {}

    def story(call: Callable[..., Reply]) -> None:
        token = call("checkpoint_rewind_code", checkpoint_id="1", preview=True).data["token"]
        w.write("src/app.py", "print('the person, meanwhile')\n")
        seen["state"] = everything(w)
        version, body, mac = token.split(".")
        payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        payload[3] = w.add_all_tree()  # the tree of the files now, as a checkpoint would record it
        claimed = f"{version}.{_b64(json.dumps(payload, separators=(',', ':')).encode())}"
        own_key = _b64(hmac.new(os.urandom(32), claimed.encode(), hashlib.sha256).digest()[:16])
        for name, forged in {"claimed": f"{claimed}.{mac}", "own_key": f"{claimed}.{own_key}",
                             "truncated": token[:-3], "made_up": "rw1.eyJ9.AAAA", "garbage": "yes please"}.items():
            seen[name] = call("checkpoint_rewind_code", checkpoint_id="1", token=forged)

    session(w, story)
    for name in ("claimed", "own_key", "truncated", "made_up", "garbage"):
        one_line_refusal(seen[name], "the token is not one a preview in this repository gave")
    assert everything(w) == seen["state"]


def test_a_conversation_rewind_whose_transcript_grew_since_its_preview_goes_one_rewritten_is_refused(
        agent_project: Workdir) -> None:
    """The calling agent's transcript grows between its preview and its restore (the preview call itself is
    written there): the rewind goes on, and the transcript as it grew is kept whole in git first. A transcript
    changed otherwise (the same size, other words) is refused with nothing written."""
    w = agent_project
    agent = Agent(w, session=MAIN, env={"GIT_REWIND_ANTI_SPAM_SECONDS": "0"})
    transcript = Path(agent.transcript)
    transcript.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CLAUDE_SAMPLES / "transcript_main_print_mode.jsonl", transcript)
    first = agent.prompt("make hello", prompt_id=PROMPT_ID)["seq"]
    w.write("hello.py", "print('hello')\n")
    seen: dict[str, Any] = {}
    line = json.loads(transcript.read_text().splitlines()[-1])

    def story(call: Callable[..., Reply]) -> None:
        token = call("checkpoint_rewind_conversation", checkpoint_id=str(first), preview=True).data["token"]
        seen["previewed"] = transcript.read_bytes()
        with transcript.open("a") as fh:  # the agent went on talking
            fh.write(json.dumps({**line, "uuid": "later-talk"}) + "\n")
        seen["grown"] = transcript.read_bytes()
        seen["grew"] = call("checkpoint_rewind_conversation", checkpoint_id=str(first), token=token)
        seen["cut"] = transcript.read_bytes()
        token = call("checkpoint_rewind_conversation", checkpoint_id=str(first), preview=True).data["token"]
        data = transcript.read_bytes()
        assert b"later-talk" in data
        transcript.write_bytes(data.replace(b"later-talk", b"LATER-talk"))  # the same size, other words
        before = (everything(w), transcript.read_bytes())
        seen["changed"] = call("checkpoint_rewind_conversation", checkpoint_id=str(first), token=token)
        seen["changed-unchanged"] = (everything(w), transcript.read_bytes()) == before
        transcript.write_bytes(data)
        token = call("checkpoint_rewind_full", checkpoint_id=str(first), preview=True).data["token"]
        with transcript.open("a") as fh:
            fh.write(json.dumps({**line, "uuid": "later-again"}) + "\n")
        seen["done"] = call("checkpoint_rewind_full", checkpoint_id=str(first), token=token)

    session(w, story)
    grew = seen["grew"]
    assert not grew.error, grew.text
    assert seen["cut"] != seen["grown"]  # rewound (Claude Code's way: a record naming the leaf, appended)
    backups = [c for c in json.loads(w.ok("list", "--json", "-n", "0", "--safety")) if c.get("rewind")]
    assert any(w.git("cat-file", "blob", c["rewind"]["conversation"]["backup_blob"]).encode() == seen["grown"]
               for c in backups), "the grown transcript is not kept whole in git"
    one_line_refusal(seen["changed"], "the conversation's transcript changed since the preview")
    assert seen["changed-unchanged"]
    done = seen["done"]
    assert not done.error, done.text
    assert done.data["removed"] == ["hello.py"] and done.data["resume"] == f"claude --resume {MAIN}"



def test_a_revert_needs_its_token_and_refuses_after_a_change(agent_project: Workdir) -> None:
    w = agent_project
    w.write("src/app.py", "one\ntwo\nthree\n")
    w.commit_all("base")
    a = Agent(w)
    first = a.prompt("change two")["seq"]
    w.write("src/app.py", "one\nTWO\nthree\n")
    w.write("src/made.py", "agent\n")
    a.stop()
    seen: dict[str, Any] = {}

    def story(call: Callable[..., Reply]) -> None:
        token = call("checkpoint_revert", checkpoint_id=str(first), preview=True).data["token"]
        w.write("src/other.py", "the person's\n")
        seen["state"] = everything(w)
        seen["moved"] = call("checkpoint_revert", checkpoint_id=str(first), token=token)
        seen["after"] = everything(w)
        token = call("checkpoint_revert", checkpoint_id=str(first), preview=True).data["token"]
        seen["code"] = call("checkpoint_rewind_code", checkpoint_id=str(first), token=token)
        seen["done"] = call("checkpoint_revert", checkpoint_id=str(first), token=token)

    session(w, story)
    one_line_refusal(seen["moved"], "1 file: added src/other.py")
    assert seen["after"] == seen["state"]
    one_line_refusal(seen["code"], "the token is for the revert of #")
    assert not seen["done"].error, seen["done"].text
    assert (w.path / "src/app.py").read_text() == "one\ntwo\nthree\n" and not (w.path / "src/made.py").exists()
    assert (w.path / "src/other.py").read_text() == "the person's\n"


def test_a_target_deleted_or_rewritten_since_the_preview_is_refused(project: Workdir) -> None:
    """What the token names is the checkpoint's commit: deleting an older checkpoint rewrites the chain (the
    target's commit changes) and deleting the target removes it; both are refused, nothing changed."""
    w = project
    for text in ("one", "two", "three"):
        w.write("notes.txt", text + "\n")
        w.ok("snap", "-m", text)
    w.write("notes.txt", "now\n")
    seen: dict[str, Any] = {}

    def story(call: Callable[..., Reply]) -> None:
        tokens = {seq: call("checkpoint_rewind_code", checkpoint_id=seq, preview=True).data["token"]
                  for seq in ("2", "3")}
        assert not call("checkpoint_delete", checkpoint_id="1").error
        seen["state"] = everything(w)
        seen["rewritten"] = call("checkpoint_rewind_code", checkpoint_id="2", token=tokens["2"])
        assert not call("checkpoint_delete", checkpoint_id="3").error
        seen["state3"] = everything(w)
        seen["deleted"] = call("checkpoint_rewind_code", checkpoint_id="3", token=tokens["3"])

    session(w, story)
    one_line_refusal(seen["rewritten"], "the token is for the undo (code) to #2 as the preview saw it",
                     "rewritten since")
    one_line_refusal(seen["deleted"], "the undo (code) to #3 was previewed, and that checkpoint is gone since",
                     "checkpoint_list")
    assert everything(w) == seen["state3"] and seen["state"][0] == seen["state3"][0]


def test_a_preview_whose_state_git_pruned_is_refused_plainly(project: Workdir) -> None:
    w = project
    w.ok("snap", "-m", "before")
    w.write("fresh.txt", "only in the preview's tree\n")
    seen: dict[str, Any] = {}

    def story(call: Callable[..., Reply]) -> None:
        token = call("checkpoint_rewind_code", checkpoint_id="1", preview=True).data["token"]
        body = token.split(".")[1]
        tree = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))[3]
        w.write("fresh.txt", "changed\n")
        w.git("prune", "--expire=now")  # what `git gc` does to unreferenced objects two weeks on
        assert subprocess.run(["git", "cat-file", "-e", tree], cwd=w.path, env=w.env).returncode != 0
        seen["state"] = everything(w)
        seen["restore"] = call("checkpoint_rewind_code", checkpoint_id="1", token=token)

    session(w, story)
    one_line_refusal(seen["restore"], "the work tree changed since the preview, which is too old to say how")
    assert everything(w) == seen["state"]


def test_the_model_reads_the_two_phase_rule_in_each_restoring_tool(project: Workdir) -> None:
    import anyio

    from git_rewind.faces.mcp import INSTRUCTIONS, Tools, build

    listed = {tool.name: tool for tool in anyio.run(build(Tools(str(project.path), None)).list_tools)}
    for name in ("checkpoint_rewind_code", "checkpoint_rewind_full", "checkpoint_rewind_conversation",
                 "checkpoint_revert"):
        tool = listed[name]
        assert "first preview=true" in tool.description and "preview=false and token" in tool.description, name
        assert "the token the preview of this same call gave" in tool.input_schema["properties"]["token"][
            "description"]
    assert "token" not in listed["checkpoint_create"].input_schema["properties"]
    assert "then the same call with preview=false and that token" in INSTRUCTIONS
