"""Aider: what `git rewind watch` learns from its chat history and its commits, the conversation rewind that
cuts that history, and what an undo says about the commits the branch keeps, all on real repositories with
real git commits carrying Aider's own marks (shared/agents/kilo-aider.md part B).

The watch side is played here through the library as watch.py plays it (watch_context, then a checkpoint
with its prompt, conversation and commits); tests/test_e2e_aider.py runs the real Aider under the real
`git rewind watch`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.workdir import Workdir

from git_rewind import agents
from git_rewind.agents import aider
from git_rewind.agents.conversation import Transcript
from git_rewind.base.note import Oid
from git_rewind.base.repo import Repo
from git_rewind.store import store

SAMPLE = Path(__file__).resolve().parent / "samples" / "aider" / "chat.history.md"
SESSION = "watch-aider-1"
TRAILER = "Co-authored-by: aider (openai/mock-model) <aider@aider.chat>"


def run_header(when: str = "2026-11-26 08:00:00") -> str:
    return f"\n# aider chat started at {when}\n\n> aider --model openai/mock-model  \n> Aider v0.86.2  \n"


def turn(prompt: str, reply: str = "Here is the file.", commit: str | None = None) -> str:
    """One exchange as Aider appends it: the prompt (each line `#### `), the reply, its own output."""
    lines = "  \n#### ".join(prompt.splitlines())
    said = f"\n#### {lines}  \n\n{reply}\n\n> Tokens: 770 sent, 16 received.  \n> Applied edit to hello.py  \n"
    return said + (f"> Commit {commit} feat: change made by the mock model  \n" if commit else "")


def append(w: Workdir, text: str, name: str = aider.HISTORY) -> None:
    with open(w.path / name, "a", encoding="utf-8") as fh:
        fh.write(text)


def aider_commit(w: Workdir, path: str, content: str, dirty: bool = False) -> str:
    """A commit as Aider makes it: its edits with its trailer; a dirty commit with '(aider)' as committer."""
    w.write(path, content)
    w.git("add", path)
    if dirty:
        name = w.env["GIT_COMMITTER_NAME"]
        w.env["GIT_COMMITTER_NAME"] = f"{name} (aider)"  # what Aider sets for the commit it makes of them
        try:
            w.git("commit", "-q", "-m", "feat: commit the user's edits")
        finally:
            w.env["GIT_COMMITTER_NAME"] = name
    else:
        w.git("commit", "-q", "-m", "feat: change made by the mock model", "-m", TRAILER)
    return w.git("rev-parse", "HEAD").strip()


def checkpoint(w: Workdir, memo: dict[str, Any]) -> int:
    """What watch.py does before each checkpoint of aider: ask the agent, then save prompt, conversation and
    commits (the note's `commits`) with trigger `watch`. Its seq."""
    context = agents.for_program("/usr/local/bin/aider").watch_context(str(w.path), memo)  # type: ignore[union-attr]
    repo = Repo.discover(str(w.path))
    result = store.save(repo, store.Request(session=SESSION, agent="aider", trigger="watch",
                                            message="watch: files settled", prompt=context.get("prompt"),
                                            conversation=context.get("conversation"), allow_empty=True))
    if context.get("commits"):
        store.update_note(repo, result.commit, lambda note: note.extra.update(commits=context["commits"]))
    return result.seq


@pytest.fixture
def aider_repo(project: Workdir, git_environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Workdir:
    """The project as Aider leaves it: `.aider*` added to .gitignore (not committed), the commands run here."""
    with open(project.path / ".gitignore", "a") as fh:
        fh.write(".aider*\n")
    monkeypatch.chdir(project.path)
    return project


# the chat history, read ---------------------------------------------------------------------------


def test_the_real_history_gives_its_prompts_commits_and_boundaries() -> None:
    data = SAMPLE.read_bytes()
    assert aider.prompts(data) == ["Create a new file. FILE=hello.py", "Make the greeting friendlier. FILE=app.py",
                                   "Create another file. FILE=third.py", "Create notes. FILE=notes.txt"]
    assert aider.commit_lines(data) == ["7e012a5", "43bd860", "98fd295", "d58002f"]
    second_run = data.index(b"\n# aider chat started at 2026-11-25 14:16:20")
    first_prompt = data.index(b"\n#### Create a new file")
    # A conversation that stood mid-turn keeps that turn: the cut is where the next prompt or run begins,
    # with the blank line Aider writes before it.
    assert aider.boundary(data, first_prompt + 50) == second_run
    assert aider.boundary(data, 40) == first_prompt  # before the first prompt: its run's header is kept
    assert aider.boundary(data, 0) == 0 and aider.boundary(data, len(data)) == len(data)
    assert aider.boundary(data, first_prompt + 3) == second_run  # mid-line: that line belongs to what was said
    kept = data[:aider.boundary(data, first_prompt + 50)]
    assert aider.prompts(kept) == ["Create a new file. FILE=hello.py"]
    assert agents.get("aider").transcript_problem(Transcript("/p/.aider.chat.history.md", kept)) is None


def test_a_prompt_of_several_lines_is_one_prompt_and_its_markdown_breaks_go() -> None:
    text = turn("first line\nsecond line") + turn("next one")
    assert aider.prompts(text.encode()) == ["first line\nsecond line", "next one"]


def test_aider_s_marks_on_commits() -> None:
    assert aider.made_by_aider("tester", "tester", f"feat: x\n\n{TRAILER}\n")
    assert aider.made_by_aider("tester (aider)", "tester", "feat: the user's edits")
    assert aider.made_by_aider("tester", "tester", "aider: feat: x")
    assert not aider.made_by_aider("tester", "tester", "fix: by hand\n\nCo-authored-by: ada <a@example.com>")
    assert agents.get("aider").made_commit("tester (aider)", "t", "m") and not agents.get("droid").made_commit(
        "tester (aider)", "t", "m")


# watch_context ------------------------------------------------------------------------------------


def test_watch_context_names_the_prompts_and_aider_s_commits_since_the_last_call(aider_repo: Workdir) -> None:
    w = aider_repo
    append(w, run_header("2026-11-25 10:00:00") + turn("an old prompt from before the watch"))
    memo: dict[str, Any] = {}
    first = aider.AGENT.watch_context(str(w.path), memo)
    assert "prompt" not in first and "commits" not in first  # what was said before the watch began is not its
    size = (w.path / aider.HISTORY).stat().st_size
    assert first["conversation"].transcript == str(w.path / aider.HISTORY) and first["conversation"].offset == size

    append(w, run_header() + turn("P1 create hello.py"))
    made = aider_commit(w, "hello.py", "print('hello')\n")
    append(w, f"> Commit {made[:7]} feat: change made by the mock model  \n")
    second = aider.AGENT.watch_context(str(w.path), memo)
    assert second["prompt"] == "P1 create hello.py" and second["commits"] == [made]
    assert second["conversation"].offset == (w.path / aider.HISTORY).stat().st_size

    # Nothing new said: the turn's prompt still stands; a commit of the person's own is not Aider's.
    w.write("own.txt", "mine\n")
    w.commit_all("by hand")
    third = aider.AGENT.watch_context(str(w.path), memo)
    assert third["prompt"] == "P1 create hello.py" and "commits" not in third

    # A dirty commit (the user's pending edits, committed by Aider) and an edit commit; two prompts since.
    append(w, turn("P2 first") + turn("P3 second"))
    dirty = aider_commit(w, "app.py", "x = 1\n", dirty=True)
    edit = aider_commit(w, "app.py", "x = 2\n")
    fourth = aider.AGENT.watch_context(str(w.path), memo)
    assert fourth["prompt"] == "P2 first\n\nP3 second" and fourth["commits"] == [dirty, edit]


def test_a_commit_named_only_in_the_history_is_aider_s(aider_repo: Workdir) -> None:
    w = aider_repo
    memo: dict[str, Any] = {}
    aider.AGENT.watch_context(str(w.path), memo)
    w.write("plain.txt", "x\n")
    w.commit_all("no trailer: --no-attribute-co-authored-by")
    plain = w.git("rev-parse", "HEAD").strip()
    append(w, run_header() + turn("P1", commit=plain[:7]))
    assert aider.AGENT.watch_context(str(w.path), memo)["commits"] == [plain]


def test_the_history_file_the_command_names_is_read(aider_repo: Workdir) -> None:
    w = aider_repo
    memo: dict[str, Any] = {"argv": ["aider", "--chat-history-file", "chat.md", "--message", "x"]}
    aider.AGENT.watch_context(str(w.path), memo)
    append(w, run_header() + turn("P1 in another file"), name="chat.md")
    context = aider.AGENT.watch_context(str(w.path), memo)
    assert context["prompt"] == "P1 in another file"
    assert "conversation" not in context  # only .aider.chat.history.md is a conversation git-rewind may cut
    memo = {"argv": ["aider", "--chat-history-file=sub/.aider.chat.history.md"]}
    assert aider.history_path(str(w.path), memo["argv"]) == str(w.path / "sub" / aider.HISTORY)


def test_watch_context_never_fails_nor_blocks_on_bad_history_files(aider_repo: Workdir) -> None:
    w = aider_repo
    history = w.path / aider.HISTORY
    memo: dict[str, Any] = {}
    assert set(aider.AGENT.watch_context(str(w.path), memo)) == {"conversation"}  # missing: nothing said yet
    # Binary garbage: no prompt, no failure.
    history.write_bytes(b"\0\xff\xfe#### \0\n" * 100)
    assert "prompt" not in aider.AGENT.watch_context(str(w.path), memo)
    # Huge growth: only its last READ_LIMIT bytes are read, and the prompt at its end is found.
    with open(history, "ab") as fh:
        fh.write(b"x" * 200 + b"\n")
        fh.write((b"filler line of a long answer\n") * (3 * aider.READ_LIMIT // 29))
        fh.write(turn("P-LAST after a huge answer").encode())
    assert aider.AGENT.watch_context(str(w.path), memo)["prompt"] == "P-LAST after a huge answer"
    # A FIFO, a directory, a link: nothing read, no hang.
    make: Callable[[], None]
    for make in (lambda: os.mkfifo(history), lambda: history.mkdir(),
                 lambda: history.symlink_to(SAMPLE)):
        if history.is_dir() and not history.is_symlink():
            history.rmdir()
        elif history.exists() or history.is_symlink():
            history.unlink()
        make()
        found: list[dict[str, Any]] = []
        thread = threading.Thread(target=lambda into=found: into.append(aider.AGENT.watch_context(str(w.path), {})))
        thread.start()
        thread.join(10)
        assert not thread.is_alive() and "prompt" not in found[0], history
    # Outside a repository: no prompt, no commits, no exception.
    assert not {"prompt", "commits"} & set(aider.AGENT.watch_context(str(w.path / "nowhere"), {}))


# the conversation rewind --------------------------------------------------------------------------


def two_turns(w: Workdir) -> tuple[int, int, int, bytes]:
    """A watched Aider session: start (#1), prompt 1 and its commit (#2), prompt 2 and its commit (#3). The
    seqs and the history as it ends."""
    memo: dict[str, Any] = {}
    start = checkpoint(w, memo)
    append(w, run_header() + turn("P1 create hello.py"))
    aider_commit(w, "hello.py", "print('hello')\n")
    one = checkpoint(w, memo)
    append(w, run_header("2026-11-26 08:01:00") + turn("P2 greet louder"))
    aider_commit(w, "hello.py", "print('HELLO')\n")
    two = checkpoint(w, memo)
    return start, one, two, (w.path / aider.HISTORY).read_bytes()


def test_the_conversation_rewind_cuts_the_history_keeps_it_in_git_and_redo_puts_it_back(aider_repo: Workdir) -> None:
    w = aider_repo
    _start, one, two, full = two_turns(w)
    note = w.git("notes", "--ref=rewind", "show", f"refs/rewind/{SESSION}~1")
    assert '"prompt": "P1 create hello.py"' in note or '"prompt":"P1 create hello.py"' in note
    preview = w.ok("undo", str(one), "--conversation", "--dry-run")
    assert 'conversation: cut after the turn of "P1 create hello.py" (1 later prompt cut), in ' in preview
    assert (w.path / aider.HISTORY).read_bytes() == full  # a dry run changes nothing
    head = w.git("rev-parse", "HEAD")
    out = w.ok("undo", str(one), "--conversation", "--yes")
    cut = (w.path / aider.HISTORY).read_bytes()
    assert aider.prompts(cut) == ["P1 create hello.py"] and full.startswith(cut)
    assert cut == full[:full.index(b"\n# aider chat started at 2026-11-26 08:01:00")]
    assert "resume with: aider --restore-chat-history" in out and "Aider's chat history cut" in out
    assert w.git("rev-parse", "HEAD") == head and (w.path / "hello.py").read_text() == "print('HELLO')\n"
    safety = re.search(r"safety checkpoint #(\d+) ([0-9a-f]+)", out)
    assert safety is not None
    assert w.git("show", f"{safety.group(2)}^2:{aider.HISTORY}").encode() == full  # the whole history, in git
    w.ok("redo", "--yes")
    assert (w.path / aider.HISTORY).read_bytes() == full


def test_a_full_undo_rewinds_the_files_and_the_history_together(aider_repo: Workdir) -> None:
    w = aider_repo
    start, _one, _two, full = two_turns(w)
    out = w.ok("undo", str(start), "--full", "--yes")
    assert not (w.path / "hello.py").exists()
    history = (w.path / aider.HISTORY).read_bytes()
    assert history == b"" and "nothing of it is kept" in out  # the watch began before anything was said
    w.ok("redo", "--yes")
    assert (w.path / aider.HISTORY).read_bytes() == full and (w.path / "hello.py").read_text() == "print('HELLO')\n"


def test_a_history_git_tracks_comes_back_with_the_files_and_a_full_undo_still_cuts_it(
        project: Workdir, git_environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    w = project  # no `.aider*` in .gitignore: the person said no when Aider asked
    monkeypatch.chdir(w.path)
    _start, one, _two, full = two_turns(w)
    out = w.ok("undo", str(one), "--full", "--yes")
    cut = (w.path / aider.HISTORY).read_bytes()
    assert aider.prompts(cut) == ["P1 create hello.py"] and full.startswith(cut) and "history cut" in out
    assert (w.path / "hello.py").read_text() == "print('hello')\n"
    w.ok("redo", "--yes")
    assert (w.path / aider.HISTORY).read_bytes() == full and (w.path / "hello.py").read_text() == "print('HELLO')\n"


def test_a_rewind_refuses_what_is_not_this_work_tree_s_aider_history(aider_repo: Workdir, tmp_path: Path) -> None:
    w = aider_repo
    _start, one, _two, full = two_turns(w)
    run = w.rewind("undo", str(one), "--conversation", "--fork", "--yes")
    assert run.returncode != 0 and "--fork is not available" in run.stderr
    repo = Repo.discover(str(w.path))

    def note_path(path: str) -> None:
        def edit(note: Any) -> None:
            note.conversation.transcript = path
        commit = Oid(w.git("rev-parse", f"refs/rewind/{SESSION}~1").strip())
        store.update_note(repo, commit, edit)

    elsewhere = tmp_path / "other" / aider.HISTORY
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(full)
    for path, why in ((str(elsewhere), "not under"), (str(w.path / "README.md"), "not a *"),
                      (str(w.path / "sub" / "x.aider.chat.history.md"), "not named")):
        if "sub" in path:
            w.write("sub/x.aider.chat.history.md", full)
        note_path(path)
        run = w.rewind("undo", str(one), "--conversation", "--yes")
        assert run.returncode != 0 and why in run.stderr, (path, run.stderr)
    assert elsewhere.read_bytes() == full and (w.path / aider.HISTORY).read_bytes() == full
    # Not Aider's format, binary, a FIFO: refused, nothing changed.
    note_path(str(w.path / aider.HISTORY))
    for content, why in ((b"# Notes\n#### not aider\n", "does not start with"), (b"\n# aider chat started at x\0",
                                                                                "NUL")):
        (w.path / aider.HISTORY).write_bytes(content)
        run = w.rewind("undo", str(one), "--conversation", "--yes")
        assert run.returncode != 0 and why in run.stderr and (w.path / aider.HISTORY).read_bytes() == content
    (w.path / aider.HISTORY).unlink()
    os.mkfifo(w.path / aider.HISTORY)
    run = w.rewind("undo", str(one), "--conversation", "--yes")
    assert run.returncode != 0 and "not a regular file" in run.stderr
    (w.path / aider.HISTORY).unlink()
    (w.path / aider.HISTORY).write_bytes(full[:40])  # shorter than when the checkpoint was taken
    run = w.rewind("undo", str(one), "--conversation", "--yes")
    assert run.returncode != 0 and "shorter than when" in run.stderr


# the commits the branch keeps ---------------------------------------------------------------------


def test_an_undo_says_which_commits_the_branch_keeps_and_the_git_commands_that_would_drop_them(
        aider_repo: Workdir) -> None:
    w = aider_repo
    old = w.git("rev-parse", "HEAD").strip()
    status = w.git("status", "--porcelain")
    start, _one, _two, _full = two_turns(w)
    aider_commit(w, "README.md", "# demo, reworded by Aider\n")  # a tracked file changed, not only new ones
    w.write("mine.txt", "by hand\n")
    w.commit_all("by hand")  # one of the person's own, between Aider's
    new = w.git("rev-parse", "HEAD").strip()
    state = w.user_state()
    short_old, short_new = w.git("rev-parse", "--short", old).strip(), w.git("rev-parse", "--short", new).strip()

    preview = w.ok("undo", str(start), "--dry-run")
    assert f"main keeps the 4 commits made since #{start} (HEAD stays at {short_new}):" in preview
    assert f"to take them off main as well, after the undo: git reset {short_old}" in preview
    assert f"instead of this undo, commits that revert them: git revert --no-edit {short_old}..{short_new}" in preview
    lines = preview.splitlines()
    listed = [line for line in lines if line.startswith("  ")]
    assert listed[0].endswith("by hand") and all(line.endswith("[aider]") for line in listed[1:]), listed

    out = w.ok("undo", str(start), "--yes")
    assert f"to take them off main as well (the files stay as restored): git reset {short_old}" in out
    assert f"git rewind redo && git revert --no-edit {short_old}..{short_new}" in out
    index, head, refs, _status = w.user_state()
    assert (index, head, refs) == state[:3]  # HEAD, the branch and the index untouched: only said, never run
    assert not (w.path / "hello.py").exists()

    # What it says works in the state the undo leaves; `git reset --keep` refuses that state (a file the undo
    # changed back is a local change to it), and `git revert` stops on it after reverting the newer commits.
    assert "not uptodate" in subprocess.run(["git", "reset", "--keep", old], cwd=w.path, env=w.env,
                                            capture_output=True, text=True).stderr
    assert w.git("rev-parse", "HEAD").strip() == new
    w.git("reset", "-q", short_old)
    assert w.git("rev-parse", "HEAD").strip() == old
    assert w.git("status", "--porcelain") == status  # as when the checkpoint was taken


def test_the_revert_it_suggests_works_after_a_redo(aider_repo: Workdir) -> None:
    w = aider_repo
    old = w.git("rev-parse", "HEAD").strip()
    start, _one, _two, _full = two_turns(w)
    new = w.git("rev-parse", "HEAD").strip()
    out = w.ok("undo", str(start), "--yes")
    hint = next(line for line in out.splitlines() if "git revert" in line)
    w.ok("redo", "--yes")
    w.git("revert", "--no-edit", f"{old}..{new}")
    assert "revert" in hint and not (w.path / "hello.py").exists()
    assert w.git("rev-list", "--count", f"{new}..HEAD").strip() == "2"


def test_a_commit_a_note_records_is_marked_with_its_agent(aider_repo: Workdir) -> None:
    w = aider_repo
    memo: dict[str, Any] = {}
    start = checkpoint(w, memo)
    append(w, run_header() + turn("P1", commit=None))
    w.write("plain.txt", "x\n")
    w.commit_all("feat: no trailer")  # Aider with --no-attribute-co-authored-by
    plain = w.git("rev-parse", "HEAD").strip()
    append(w, f"> Commit {plain[:7]} feat: no trailer  \n")
    checkpoint(w, memo)
    out = w.ok("undo", str(start), "--yes")
    assert re.search(r"^  [0-9a-f]+ feat: no trailer  \[aider\]$", out, re.MULTILINE), out


def test_no_word_about_commits_when_head_did_not_move_or_went_back(aider_repo: Workdir) -> None:
    w = aider_repo
    first = checkpoint(w, {})
    w.write("x.txt", "x\n")
    assert "keeps" not in w.ok("undo", str(first), "--yes")
    w.write("y.txt", "y\n")
    w.commit_all("one")
    later = checkpoint(w, {})
    w.git("reset", "-q", "HEAD~1")  # HEAD went back: nothing was made on top of the checkpoint's HEAD
    assert "keeps" not in w.ok("undo", str(later), "--yes")


# install, uninstall, status -----------------------------------------------------------------------


def test_install_and_uninstall_say_to_run_aider_under_watch_and_write_nothing(aider_repo: Workdir,
                                                                             home: Path) -> None:
    w = aider_repo
    before = (w.state(), sorted(p.name for p in home.iterdir()))
    for args in (("install", "--agent", "aider"), ("install", "--agent", "aider", "--scope", "project"),
                 ("uninstall", "--agent", "aider")):
        run = w.rewind(*args)
        assert run.returncode == 1 and run.stdout == "", run
        assert run.stderr.strip().splitlines() == [f"error: {aider.NO_HOOKS}"]
    assert "git rewind watch -- aider" in aider.NO_HOOKS
    out = w.ok("uninstall", "--everything")
    assert "aider" not in out
    status = w.ok("status").splitlines()
    assert "aider has no hooks to install: run it as git rewind watch -- aider …" in status
    # Not under "hooks installed": nothing of aider's was installed.
    assert status[status.index("hooks installed: none (git rewind install --agent …)") + 1].startswith("aider has")
    assert json.loads(w.ok("status", "--json"))["watched"] == ["aider"]
    assert (w.state(), sorted(p.name for p in home.iterdir())) == before


def test_the_real_watch_gives_the_command_line_so_a_history_file_named_there_is_read(aider_repo: Workdir,
                                                                                    tmp_path: Path) -> None:
    """`git rewind watch -- aider --chat-history-file chat.md …`: a stand-in program named aider (a shell script
    writing what Aider would) is enough to see what watch passes (memo["argv"])."""
    w = aider_repo
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "aider"
    program.write_text("#!/bin/sh\nsleep 1\n"  # Aider takes seconds to start: the watch's start comes first
                       "printf '\\n# aider chat started at now\\n\\n#### P-NAMED in chat.md  \\n\\nok\\n' >> \"$2\"\n"
                       "printf 'made\\n' > made.txt\n")
    program.chmod(0o755)
    run = w.rewind("watch", "--", str(program), "--chat-history-file", "chat.md",
                   env={"GIT_REWIND_WATCH_SETTLE_MS": "200"})
    assert run.returncode == 0, run.stderr
    found = [json.loads(w.git("notes", "--ref=rewind", "show", c))
             for c in w.git("log", "--format=%H", "--glob=refs/rewind/*").split()]
    last = max(found, key=lambda note: note["seq"])
    assert last["agent"] == "aider" and last["trigger"] == "watch" and last["prompt"] == "P-NAMED in chat.md", found
    assert last["conversation"] is None  # only .aider.chat.history.md is a conversation a rewind may cut
