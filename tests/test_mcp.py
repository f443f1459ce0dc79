"""`git rewind mcp`: every tool, called by the MCP SDK's own client over stdio, checked in the repository.

Each test starts the real server process (`git-rewind mcp --repo …`) and talks to it as an agent
would; what the tools say is checked against what git shows afterwards.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.agentcli import disk_files, tree_files
from helpers.mcpclient import CLIENT, Reply, session
from helpers.samples import CLAUDE_SAMPLES
from helpers.session import MAIN, PROMPT_ID, Agent, two_turns
from helpers.workdir import Workdir


def notes(w: Workdir) -> list[dict[str, Any]]:
    rows = [row.split()[1] for row in w.git("notes", "--ref=rewind", "list").splitlines()]
    return sorted((json.loads(w.git("notes", "--ref=rewind", "show", c)) | {"commit": c} for c in rows),
                  key=lambda n: n["seq"])


TOOLS = {"checkpoint_create", "store_checkpoint", "checkpoint_list", "checkpoint_show", "get_latest_checkpoint",
         "checkpoint_diff", "checkpoint_rewind_code", "checkpoint_revert", "checkpoint_rewind_conversation",
         "checkpoint_rewind_full", "checkpoint_delete", "checkpoint_stats", "checkpoint_config",
         "checkpoint_blame"}


def test_every_tool_on_a_real_repository(project: Workdir) -> None:
    w = project
    user = w.user_state()
    app = w.path / "src" / "app.py"
    seen: dict[str, Reply] = {}
    cli_preview: dict[str, Any] = {}  # what `undo --dry-run --json` says, between the preview and the rewind

    def story(call: Callable[..., Reply]) -> None:
        seen["create"] = call("checkpoint_create", description="before the refactor", files=["src/app.py"],
                              tags=["manual"])
        app.write_text("print('refactored')\n")
        (w.path / "new.txt").write_text("new\n")
        seen["summary"] = call("store_checkpoint", content="Done: refactored app.py\nState: tests pass\n"
                                                           "Next: docs\nFiles:\n- src/app.py\n")
        seen["list"] = call("checkpoint_list", limit=1)
        seen["list_tagged"] = call("checkpoint_list", tags=["manual"])
        seen["show"] = call("checkpoint_show", checkpoint_id="1")
        seen["latest"] = call("get_latest_checkpoint")
        seen["diff_summary"] = call("checkpoint_diff", checkpoint_id="1", format="summary")
        seen["diff"] = call("checkpoint_diff", checkpoint_id="1")
        seen["preview"] = call("checkpoint_rewind_code", checkpoint_id="1", preview=True)
        assert app.read_text() == "print('refactored')\n"  # a preview changes nothing
        cli_preview.update(json.loads(w.ok("undo", "1", "--dry-run", "--json")))
        selective = call("checkpoint_rewind_code", checkpoint_id="1", selective_files=["src/app.py"], preview=True)
        seen["selective"] = call("checkpoint_rewind_code", checkpoint_id="1", selective_files=["src/app.py"],
                                 token=selective.data["token"])
        assert app.read_text() == "print('hello')\n" and (w.path / "new.txt").exists()  # that file alone
        again = call("checkpoint_rewind_code", checkpoint_id="1", preview=True)
        seen["rewind"] = call("checkpoint_rewind_code", checkpoint_id="1", token=again.data["token"])
        seen["delete"] = call("checkpoint_delete", checkpoint_id="2")
        seen["stats"] = call("checkpoint_stats")
        seen["config_set"] = call("checkpoint_config", tier="aggressive", verify_before_clear=False)
        seen["config_get"] = call("checkpoint_config")

    assert set(session(w, story)) == TOOLS

    created = seen["create"]
    assert not created.error and created.data["seq"] == 1 and created.text.startswith("checkpoint #1 ")
    first = notes(w)[0]
    assert (first["session"], first["message"], first["named"], first["tags"]) == (
        f"mcp-{CLIENT}", "before the refactor", ["src/app.py"], ["manual"])
    assert first["paths"] == ["notes.txt"]  # what changed since HEAD: the files named are in `named`
    summary = seen["summary"].data["summary"]
    assert (summary["done"], summary["state"], summary["next"], summary["files"]) == (
        "refactored app.py", "tests pass", "docs", ["src/app.py"])
    assert [c["seq"] for c in seen["list"].data["checkpoints"]] == [2]
    assert [c["seq"] for c in seen["list_tagged"].data["checkpoints"]] == [1]
    assert "before the refactor" in seen["show"].text and seen["show"].data["seq"] == 1
    assert seen["latest"].data["seq"] == 2 and "refactored app.py" in seen["latest"].text
    files = {f["path"]: f["status"] for f in seen["diff_summary"].data["files"]}
    assert files == {"src/app.py": "M", "new.txt": "A"}
    assert "+print('refactored')" in seen["diff"].text and "-print('hello')" in seen["diff"].text
    assert seen["preview"].data["write"] == ["src/app.py"] and seen["preview"].data["remove"] == ["new.txt"]
    # One JSON for every face; MCP's preview adds the token its restore needs (two phases, test_token.py).
    token = seen["preview"].data["token"]
    assert seen["preview"].data == {**cli_preview, "token": token, "text": seen["preview"].text}
    assert seen["preview"].text.startswith(cli_preview["text"] + f"\ntoken: {token}\n")
    assert seen["selective"].data["written"] == ["src/app.py"] and seen["selective"].data["removed"] == []
    assert seen["selective"].data["verified"] and "1 written, 0 removed (verified)" in seen["selective"].text
    rewound = seen["rewind"]
    assert rewound.data["removed"] == ["new.txt"] and rewound.data["safety_checkpoint"] is not None
    assert "safety checkpoint #" in rewound.text
    assert seen["delete"].data == {"deleted": 2}
    assert 2 not in [n["seq"] for n in notes(w)]
    stats = seen["stats"].data
    assert stats["checkpoints"] == len(notes(w)) and stats["storage_bytes"] > 0
    assert stats["oldest"]["seq"] == 1 and stats["newest"]["seq"] == max(n["seq"] for n in notes(w))
    settings = seen["config_get"].data["settings"]
    assert settings["tier"] == {"value": "aggressive", "source": str(w.path / ".git-rewind.toml")}
    assert settings["verify_before_clear"]["value"] is False
    assert "tier = " in (w.path / ".git-rewind.toml").read_text()

    # The working tree is checkpoint #1's again; the user's index, HEAD and branches never moved.
    assert {p: v for p, v in disk_files(w.path).items() if not p.startswith(("node_modules/", ".env", "debug.log",
                                                                            ".git-rewind.toml"))} \
        == tree_files(w, notes(w)[0]["commit"])
    assert w.user_state()[:3] == user[:3]
    w.fsck()


def test_errors_are_one_sentence_and_change_nothing(project: Workdir, tmp_path: Path) -> None:
    w = project
    w.ok("snap", "-m", "by hand")
    before, count = disk_files(w.path), len(notes(w))
    seen: dict[str, Reply] = {}

    def story(call: Callable[..., Reply]) -> None:
        seen["unknown"] = call("checkpoint_show", checkpoint_id="99")
        seen["no_conversation"] = call("checkpoint_rewind_conversation", checkpoint_id="1")
        seen["full"] = call("checkpoint_rewind_full", checkpoint_id="@")
        seen["delete"] = call("checkpoint_delete", checkpoint_id="nope")
        seen["tier"] = call("checkpoint_config", tier="reckless")
        seen["format"] = call("checkpoint_diff", checkpoint_id="1", format="colourful")

    session(w, story)
    # What to do next, as a tool to call
    assert seen["unknown"].error
    assert seen["unknown"].text == "unknown checkpoint: 99; checkpoint_list gives the ids there are"
    for key in ("no_conversation", "full"):
        assert seen[key].error and "no conversation" in seen[key].text and "\n" not in seen[key].text
        # The engine says what would work; MCP words it as a tool to call, never as a command-line flag.
        assert seen[key].text.endswith("; call checkpoint_rewind_code to rewind the files alone"), seen[key].text
        assert "--" not in seen[key].text
    assert seen["delete"].error and "unknown checkpoint" in seen["delete"].text
    assert seen["tier"].error and "tier" in seen["tier"].text and not (w.path / ".git-rewind.toml").exists()
    assert seen["format"].error
    assert disk_files(w.path) == before and len(notes(w)) == count

    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    seen.clear()
    session(w, lambda call: seen.update(listed=call("checkpoint_list")), repo=outside)
    assert seen["listed"].error and "not a git repository" in seen["listed"].text.lower()


def test_the_session_comes_from_the_environment_and_the_store_is_the_hooks(project: Workdir) -> None:
    w = project
    seen: dict[str, Reply] = {}
    session(w, lambda call: seen.update(made=call("checkpoint_create", description="mine")),
            env={"GIT_REWIND_SESSION": "shared-session"})
    assert notes(w)[-1]["session"] == "shared-session"
    assert w.git("log", "--format=%s", "refs/rewind/shared-session").strip() == f"#{seen['made'].data['seq']} mine"
    w.ok("snap", "--session", "shared-session", "--allow-empty", "-m", "from the command line")
    assert [n["seq"] for n in notes(w)] == [1, 2]  # one sequence for both faces


def test_rewinding_the_conversation_of_a_hook_checkpoint(agent_project: Workdir) -> None:
    """The same engine as `git rewind undo --full`: safety checkpoint, transcript backup, resume command."""
    w = agent_project
    agent = Agent(w, session=MAIN, env={"GIT_REWIND_ANTI_SPAM_SECONDS": "0"})
    transcript = Path(agent.transcript)
    transcript.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CLAUDE_SAMPLES / "transcript_main_print_mode.jsonl", transcript)
    assert agent.prompt("make hello", prompt_id=PROMPT_ID)["action"] == "checkpoint"
    w.write("hello.py", "print('hello')\n")
    before = transcript.read_bytes()
    seen: dict[str, Reply] = {}
    session(w, lambda call: seen.update(full=call("checkpoint_rewind_full", checkpoint_id="1", token=call(
        "checkpoint_rewind_full", checkpoint_id="1", preview=True).data["token"])))
    full = seen["full"]
    assert not full.error, full.text
    assert full.data["resume"] == f"claude --resume {MAIN}" and full.data["prompt"] == "make hello"
    assert full.data["removed"] == ["hello.py"] and not (w.path / "hello.py").exists()
    assert f"resume with: claude --resume {MAIN}" in full.text
    assert transcript.read_bytes().startswith(before) and json.loads(transcript.read_text().splitlines()[-1])[
        "type"] == "last-prompt"
    assert w.git("show", f"refs/rewind/{MAIN}^2:{transcript.name}").encode() == before


def test_agent_only_and_revert_take_back_the_agents_changes_and_report_conflicts(agent_project: Workdir) -> None:
    """An agent's turn, the person's edit after it: agent_only keeps the edit; a conflict is an error naming
    the file and lines and writes nothing; checkpoint_revert takes back one turn."""
    from helpers.session import Agent

    w = agent_project
    w.write("src/app.py", "one\ntwo\nthree\nfour\nfive\n")
    w.commit_all("base")
    a = Agent(w)
    first = a.prompt("change two")["seq"]
    w.write("src/app.py", "one\nTWO\nthree\nfour\nfive\n")
    w.write("src/made.py", "agent\n")
    a.stop()
    w.write("src/app.py", "one\nTWO\nthree\nfour\nfive, mine\n")
    seen: dict[str, Reply] = {}

    def story(call: Callable[..., Reply]) -> None:
        seen["preview"] = call("checkpoint_rewind_code", checkpoint_id=str(first), preview=True, agent_only=True)
        seen["revert_preview"] = call("checkpoint_revert", checkpoint_id=str(first), preview=True)
        seen["undo"] = call("checkpoint_rewind_code", checkpoint_id=str(first), agent_only=True,
                            token=seen["preview"].data["token"])

    session(w, story)
    assert seen["preview"].data["write"] == ["src/app.py"] and seen["preview"].data["remove"] == ["src/made.py"]
    assert seen["preview"].data["merged"] == ["src/app.py"]
    assert seen["revert_preview"].data["remove"] == ["src/made.py"]
    assert not seen["undo"].error, seen["undo"].text
    assert (w.path / "src/app.py").read_text() == "one\ntwo\nthree\nfour\nfive, mine\n"
    assert not (w.path / "src/made.py").exists()

    w.ok("redo", "--yes")
    w.write("src/app.py", "one\nTWO, fixed\nthree\nfour\nfive, mine\n")
    before = disk_files(w.path)
    session(w, lambda call: seen.update(conflict=call("checkpoint_revert", checkpoint_id=str(first), preview=True)))
    assert seen["conflict"].error and "src/app.py line 2" in seen["conflict"].text
    # What would work, in the tool's own words: its merge and selective_files arguments, no CLI flag.
    assert "next: call again with merge=true" in seen["conflict"].text and "--" not in seen["conflict"].text
    assert disk_files(w.path) == before


def test_blame_gives_what_the_command_gives(project: Workdir) -> None:
    w = project
    w.ok("snap", "-m", "first")
    w.write("src/app.py", "print('hello')\nprint('mine')\n")
    w.ok("snap", "-m", "second")
    w.write("src/app.py", "print('hello')\nprint('mine')\nprint('later')\n")
    seen: dict[str, Reply] = {}

    def story(call: Callable[..., Reply]) -> None:
        seen["blame"] = call("checkpoint_blame", path="src/app.py")
        seen["directory"] = call("checkpoint_blame", path="src")

    session(w, story, env={"GIT_REWIND_SESSION": "mcp-blame"})
    reply = seen["blame"]
    assert not reply.error, reply.text
    assert reply.data["lines"] == json.loads(w.ok("blame", "--json", "src/app.py"))
    assert [line["origin"] for line in reply.data["lines"]] == ["base", "outside", "outside"]
    assert reply.data["path"] == "src/app.py" and reply.data["warning"] is None
    assert reply.text.splitlines() == w.ok("blame", "src/app.py").splitlines()
    assert seen["directory"].error and seen["directory"].text == "src is a directory: blame reads one file"


def test_a_rewind_names_its_checkpoint_and_without_an_id_undoes_the_newest_turn(agent_project: Workdir) -> None:
    """The answer's first line and its structured content name the checkpoint (issue 26); checkpoint_id omitted
    is a bare `git rewind undo`: the newest turn's prompt checkpoint, then one turn further back."""
    w = agent_project
    _agent, first, second = two_turns(w)
    w.write("mine.txt", "my own\n")
    seen: dict[str, Reply] = {}

    def story(call: Callable[..., Reply]) -> None:
        seen["named"] = call("checkpoint_rewind_code", checkpoint_id=str(first), preview=True)
        seen["preview"] = call("checkpoint_rewind_code", preview=True)
        seen["undo"] = call("checkpoint_rewind_code", token=seen["preview"].data["token"])
        seen["again"] = call("checkpoint_rewind_code", token=call("checkpoint_rewind_code", preview=True).data["token"])

    session(w, story)
    named = seen["named"].text.splitlines()[0]
    assert named.startswith(f"undo to #{first} (prompt, ") and named.endswith("session sess-1): prompt: turn one")
    assert seen["named"].data["target_checkpoint"]["message"] == "prompt: turn one"
    preview = seen["preview"]
    assert not preview.error, preview.text
    assert preview.text.splitlines()[0].startswith(f"undo to #{second}, the start of the newest agent turn")
    assert preview.data["checkpoint"] == second and preview.data["changed_outside"] == ["mine.txt"]
    assert f"git rewind undo {second} --agent-only" in preview.text
    assert seen["undo"].data["checkpoint"] == second and seen["again"].data["checkpoint"] == first
    assert (w.path / "src/app.py").read_text() == "v0\n"


def test_the_mcp_list_leaves_the_safety_checkpoints_out_unless_asked(project: Workdir) -> None:
    w = project
    for text in ("one", "two"):
        w.write("notes.txt", text + "\n")
        w.ok("snap", "-m", text)
    w.ok("undo", "1", "--yes")
    seen: dict[str, Any] = {}

    def story(call: Any) -> None:
        seen["plain"] = call("checkpoint_list")
        seen["safety"] = call("checkpoint_list", safety=True)

    session(w, story)
    assert [c["seq"] for c in seen["plain"].data["checkpoints"]] == [2, 1]
    assert seen["plain"].data["safety_hidden"] == 1 and "1 safety checkpoint hidden" in seen["plain"].text
    assert [c["seq"] for c in seen["safety"].data["checkpoints"]] == [3, 2, 1]
    assert seen["safety"].data["safety_hidden"] == 0
