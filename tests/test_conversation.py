"""conversation.py: transcripts read line by line, and the two ways a transcript is changed safely."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from git_rewind import conversation
from git_rewind.errors import RewindError


def test_a_transcript_keeps_every_line_and_marks_the_unparsable(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\nnot json\n[1, 2]\n{"b": "\xc3\xa9"}')
    t = conversation.Transcript.load(str(path))
    assert t.lines == [{"a": 1}, None, None, {"b": "é"}]
    assert t.ends == [9, 18, 25, 36] and t.lines_within(18) == 2 and t.lines_within(17) == 1
    with pytest.raises(RewindError, match="not found"):
        conversation.Transcript.load(str(tmp_path / "gone.jsonl"))


def test_append_keeps_what_the_agent_added_meanwhile_and_refuses_a_rewritten_file(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"n": 1}\n')
    read_size = path.stat().st_size
    with path.open("a") as fh:  # the agent writes on after we read (no newline yet)
        fh.write('{"n": 2}')
    conversation.append_line(str(path), {"type": "last-prompt"}, read_size)
    assert [json.loads(line) for line in path.read_text().splitlines()] == [
        {"n": 1}, {"n": 2}, {"type": "last-prompt"}]
    before = path.read_bytes()
    with pytest.raises(RewindError, match="rewritten"):
        conversation.append_line(str(path), {"type": "x"}, len(before) + 100)
    assert path.read_bytes() == before


def test_a_transcript_write_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path) -> None:
    from git_rewind.fsutil import write_atomic

    path = tmp_path / "t.jsonl"
    path.write_text("old\n")
    os.chmod(path, 0o600)
    write_atomic(str(path), b"new\n", new_mode=0o600, sync=True)  # as the agent modules write transcripts
    assert path.read_bytes() == b"new\n" and (path.stat().st_mode & 0o777) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["t.jsonl"]  # no temporary file left


def test_a_transcript_that_is_a_fifo_is_one_error_and_never_blocks(tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(RewindError, match="not a regular file"):
        conversation.Transcript.load(str(fifo))
    with pytest.raises(RewindError, match="not a regular file; nothing was appended"):
        conversation.append_line(str(fifo), {"type": "last-prompt"}, 0)
