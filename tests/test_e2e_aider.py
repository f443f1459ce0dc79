"""End to end with the real Aider (aider-chat 0.86.2 from PyPI) under the real `git rewind watch -- aider …`.

Aider has no hooks. Two runs, one prompt each (`--message`), against the mock model's plain chat
completions (tests/helpers/mockmodel_aider.py: the `whole` edit format, a commit message): the first
creates hello.py, the second edits it; after each edit Aider commits it (its trailer) and runs its
`--test-cmd`, here a shell command that appends to a file Aider never commits (the shell change).
`git rewind watch` checkpoints each run at its start, when the tree settles and at its end, each
checkpoint with agent `aider`, trigger `watch`, the prompt and Aider's commits (watch_context). Then:
an undo of the files says the branch keeps Aider's commits and what to run about them (HEAD and the
branch untouched); a conversation rewind cuts .aider.chat.history.md, and a third run with
`aider --restore-chat-history` sends the mock the first prompt but not the second.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import agentcli, mockmodel_aider
from helpers.agentcli import e2e
from helpers.mockmodel import MockModel, Text
from helpers.workdir import REWIND, Workdir

from git_rewind.agents import aider as aider_agent

pytestmark = e2e

PROMPT_1 = "P1-CREATE: create hello.py"
PROMPT_2 = "P2-EDIT: make hello.py greet louder"
PROMPT_3 = "P3-AGAIN: what did we do so far?"
HELLO_1 = "print('hello')\n"
HELLO_2 = "print('HELLO')\n"
SHELL_FILE = "tests_ran.txt"
FLAGS = ["--model", "openai/mock-model", "--yes-always", "--no-check-update", "--analytics-disable",
         "--no-show-release-notes", "--no-show-model-warnings", "--no-pretty", "--auto-test",
         "--test-cmd", f"printf 'tests ran\\n' >> {SHELL_FILE}"]


@pytest.fixture(scope="module")
def aider() -> Path:
    return agentcli.aider()


def script() -> dict[str, Any]:
    return {PROMPT_1: [mockmodel_aider.whole_file("hello.py", HELLO_1)],
            PROMPT_2: [mockmodel_aider.whole_file("hello.py", HELLO_2, "Louder.")],
            PROMPT_3: [Text("We created hello.py.")]}


def aider_env(work: Workdir) -> dict[str, str]:
    """The scratch HOME, the mock's key, LiteLLM's bundled price map (no fetch), a short settle time."""
    return agentcli.agent_env(work.env, OPENAI_API_KEY="sk-mock-aider", LITELLM_LOCAL_MODEL_COST_MAP="True",
                              GIT_REWIND_WATCH_SETTLE_MS="300")


def watched(work: Workdir, binary: Path, model: MockModel, prompt: str, *more: str) -> subprocess.CompletedProcess[str]:
    """`git rewind watch -- aider … --message PROMPT` in the project, as a person would type it."""
    command = [*REWIND, "watch", "--", str(binary), *FLAGS, "--openai-api-base", f"{model.url}/v1",
               *more, "--message", prompt]
    run = agentcli.run(command, work.path, aider_env(work), timeout=180)
    assert run.returncode == 0, f"watch -- aider failed ({run.returncode}):\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return run


def notes(work: Workdir) -> list[tuple[str, dict[str, Any]]]:
    """(commit, note) of every checkpoint, oldest first."""
    found = []
    for session in agentcli.sessions(work):
        for commit in work.git("log", "--first-parent", "--format=%H", f"refs/rewind/{session}").split():
            found.append((commit, json.loads(work.git("notes", "--ref=rewind", "show", commit))))
    return sorted(found, key=lambda item: item[1]["seq"])


def test_aider_under_watch_two_prompts_undo_and_conversation_rewind(project: Workdir, aider: Path) -> None:
    w = project
    w.write(".gitignore", (w.path / ".gitignore").read_text() + ".aider*\n")  # as Aider asks to (yes-always)
    w.commit_all("ignore Aider's files")
    base = w.git("rev-parse", "HEAD").strip()
    with MockModel(script()) as model:
        first = watched(w, aider, model, PROMPT_1)
        after_one = w.git("rev-parse", "HEAD").strip()
        runs_1 = notes(w)
        watched(w, aider, model, PROMPT_2)
        head = w.git("rev-parse", "HEAD").strip()

        # What Aider did: two commits with its trailer, the shell file written by its test command.
        assert (w.path / "hello.py").read_text() == HELLO_2
        assert (w.path / SHELL_FILE).read_text() == "tests ran\n" * 2
        made = w.git("rev-list", "--reverse", f"{base}..{head}").split()
        assert len(made) == 2 and made[0] == after_one
        for commit in made:
            assert "Co-authored-by: aider (openai/mock-model)" in w.git("log", "-1", "--format=%B", commit)
        assert [r.prompt for r in model.main_requests()] == [PROMPT_1, PROMPT_2]
        assert re.search(r"git rewind watch: [2-9] checkpoints \(#1–#[2-9]\) in session ", first.stderr), first.stderr

        # What watch recorded: agent aider, trigger watch, the prompt, Aider's commits, where the history stood.
        every = notes(w)
        assert len(agentcli.sessions(w)) == 2
        assert all(n["agent"] == "aider" and n["trigger"] == "watch" for _c, n in every), every
        start_1 = runs_1[0][1]
        end_1 = runs_1[-1][1]
        assert start_1["prompt"] is None and start_1["head"] == base
        assert end_1["prompt"] == PROMPT_1 and end_1["head"] == after_one
        assert [c for _c, n in runs_1 for c in n.get("commits", [])] == [made[0]]
        assert [c for _c, n in every for c in n.get("commits", [])] == made
        assert every[-1][1]["prompt"] == PROMPT_2
        history = w.path / aider_agent.HISTORY
        assert end_1["conversation"]["transcript"] == str(history)
        shell_seen = [n for _c, n in every if SHELL_FILE in n.get("origins", {})]
        assert shell_seen and all(n["origins"][SHELL_FILE] == "agent" for n in shell_seen), every

        # Undo the files to before the first prompt: HEAD and the branch stay; the output says what they keep.
        state = w.git("for-each-ref", "refs/heads"), head
        out = w.ok("undo", str(start_1["seq"]), "--yes")
        assert not (w.path / "hello.py").exists() and not (w.path / SHELL_FILE).exists()
        assert (w.git("for-each-ref", "refs/heads"), w.git("rev-parse", "HEAD").strip()) == state
        short = w.git("rev-parse", "--short", base).strip()
        assert f"main keeps the 2 commits made since #{start_1['seq']}" in out, out
        assert len(re.findall(r"^  [0-9a-f]+ feat: change made by the mock model  \[aider\]$", out, re.M)) == 2, out
        assert f"git reset {short}" in out and f"git revert --no-edit {short}.." in out
        w.ok("redo", "--yes")
        assert (w.path / "hello.py").read_text() == HELLO_2

        # The conversation back to the end of the first run; Aider restores it from the cut history.
        full = history.read_bytes()
        out = w.ok("undo", str(end_1["seq"]), "--conversation", "--yes")
        assert "resume with: aider --restore-chat-history" in out, out
        cut = history.read_bytes()
        assert full.startswith(cut) and PROMPT_1.encode() in cut and PROMPT_2.encode() not in cut
        assert (w.path / "hello.py").read_text() == HELLO_2  # the files stay
        watched(w, aider, model, PROMPT_3, "--restore-chat-history")
        again = model.main_requests(PROMPT_3)
        assert len(again) == 1
        said = "\n".join(mockmodel_aider.user_messages(again[0]))
        assert PROMPT_1 in said and PROMPT_2 not in said, said

        # redo puts the history back as it was before the rewind (what run 3 wrote is kept in git).
        w.ok("redo", "--yes")
        assert history.read_bytes() == full
    assert os.path.isdir(w.path / ".git")
