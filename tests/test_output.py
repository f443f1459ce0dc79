"""How checkpoints read on a terminal: the list's table, directly on checkpoints of a real store."""

from __future__ import annotations

import time

import pytest
from helpers.workdir import Workdir

from git_rewind.base.repo import Repo
from git_rewind.faces import output
from git_rewind.store import checkpoints


def _items(w: Workdir) -> list[checkpoints.Checkpoint]:
    return list(reversed(checkpoints.load_all(Repo.discover(str(w.path)))))


@pytest.fixture
def store(project: Workdir, git_environ: dict[str, str]) -> Workdir:
    project.ok("snap", "-m", "plain ascii message, long enough", "--tag", "risky")
    project.write("src/日本.py", "print('two')\n")
    project.ok("snap", "-m", "日本語のメッセージです、長いです", "--agent", "gemini", "--session", "s2",
               "--trigger", "PreToolUse", "--tool", "write_file", "--path", "src/日本.py")
    return project


def _columns(line: str) -> int:
    return output._cells(line)


def test_columns_line_up_in_terminal_cells_with_wide_characters(store: Workdir) -> None:
    lines = output.table(_items(store), now=None)
    header, *rows = lines
    assert header.split() == ["seq", "age", "session", "agent", "trigger/tool", "paths", "tags", "message"]
    # the message column begins at the same terminal column on every row, wide characters counted twice
    starts = {_columns(row[: row.index(message)]) for row, message in
              zip(rows, ("日本語のメッセージです、長いです", "plain ascii message, long enough"), strict=True)}
    assert starts == {_columns(header[: header.index("message")])}
    assert "src/日本.py" in rows[0] and "gemini" in rows[0] and "risky" in rows[1]
    tags = {_columns(row[: row.index(tag)]) for row, tag in zip(rows, ("-  ", "risky"), strict=True)}
    assert tags == {_columns(header[: header.index("tags")])}


def test_the_message_is_cut_to_the_width_with_an_ellipsis(store: Workdir) -> None:
    now = time.time()  # one moment for every table: an age must not tick from "0s ago" to "1s ago" between them
    full = output.table(_items(store), now=now)
    start = _columns(full[0][: full[0].index("message")])
    cut = output.table(_items(store), now=now, width=start + 25)
    assert cut[1].endswith("日本語のメッセージです、…") and _columns(cut[1]) == start + 25
    assert cut[2] == full[2][: len(full[2]) - len("plain ascii message, long enough")] + "plain ascii message, lon…"
    assert cut[0] == full[0]
    # however narrow the terminal, a message keeps MESSAGE_ROOM columns (the line wraps instead)
    narrow = output.table(_items(store), now=now, width=10)
    assert _columns(narrow[2]) - start == output.MESSAGE_ROOM and narrow[2].endswith("…")


def test_the_line_for_other_readers_has_the_same_fields_unaligned(store: Workdir) -> None:
    newest, oldest = _items(store)
    assert output.line(oldest).split("  ")[2:] == ["manual", "-", "manual", "notes.txt", "risky",
                                                   "plain ascii message, long enough"]
    assert output.line(newest, worktree=True).split("  ")[2] == "main-worktree"
