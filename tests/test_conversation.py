"""conversation.py: transcripts read line by line, the two ways a transcript is changed safely, and the one
gate (Place) every transcript read and write goes through."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from git_rewind.agents import conversation
from git_rewind.base.errors import RewindError


def any_object(transcript: conversation.Transcript) -> str | None:
    return conversation.jsonl_problem(transcript, ("a", "b", "n"))


def test_a_transcript_keeps_every_line_and_marks_the_unparsable(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\nnot json\n[1, 2]\n{"b": "\xc3\xa9"}')
    t = conversation.Transcript(str(path), path.read_bytes())
    assert t.lines == [{"a": 1}, None, None, {"b": "é"}]
    assert t.ends == [9, 18, 25, 36] and t.lines_within(18) == 2 and t.lines_within(17) == 1
    assert any_object(t) == "line 2 is not a JSON object"
    place = conversation.Place("test", "test transcript", (str(tmp_path),), any_object)
    with pytest.raises(RewindError, match="not found"):
        place.load(str(tmp_path / "gone.jsonl"))


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
    from git_rewind.base.fsutil import write_atomic

    path = tmp_path / "t.jsonl"
    path.write_text("old\n")
    os.chmod(path, 0o600)
    write_atomic(str(path), b"new\n", new_mode=0o600, sync=True)  # as the agent modules write transcripts
    assert path.read_bytes() == b"new\n" and (path.stat().st_mode & 0o777) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["t.jsonl"]  # no temporary file left


def test_a_transcript_that_is_a_fifo_is_one_error_and_never_blocks(tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    place = conversation.Place("test", "test transcript", (str(tmp_path),), any_object)
    with pytest.raises(RewindError, match="not a regular file"):
        place.load(str(fifo))
    with pytest.raises(RewindError, match="not a regular file"):
        place.write(str(fifo), b'{"a": 1}\n')
    with pytest.raises(RewindError, match="not a regular file; nothing was appended"):
        conversation.append_line(str(fifo), {"type": "last-prompt"}, 0)
    assert fifo.is_fifo()


# The gate: only the agent's own files, in the agent's format, are ever read or written -----------


@pytest.fixture
def place(tmp_path: Path) -> conversation.Place:
    """An agent whose transcripts live in tmp/agent/ and whose lines all have an "a", "b" or "n" key."""
    (tmp_path / "agent" / "proj").mkdir(parents=True)
    return conversation.Place("test", "test transcript", (str(tmp_path / "agent"),), any_object)


def test_the_gate_reads_and_writes_the_agents_own_files(tmp_path: Path, place: conversation.Place) -> None:
    path = tmp_path / "agent" / "proj" / "s.jsonl"
    path.write_text('{"a": 1}\n{"n": 2}')  # a last line still being written is not judged
    t = place.load(str(path))
    assert t.place is place and t.lines == [{"a": 1}, {"n": 2}]
    place.append(t, {"b": 3})
    assert path.read_text() == '{"a": 1}\n{"n": 2}\n{"b":3}\n'
    place.write(str(path.with_name("new.jsonl")), b'{"a": 2}\n')
    assert path.with_name("new.jsonl").read_bytes() == b'{"a": 2}\n'


@pytest.mark.parametrize("case", ["outside", "dotdot", "relative", "link", "linked folder", "fifo", "format",
                                  "empty", "name"])
def test_the_gate_refuses_anything_else_and_changes_nothing(tmp_path: Path, place: conversation.Place,
                                                            case: str) -> None:
    outside = tmp_path / "etc"
    outside.mkdir()
    secret = outside / "passwd"
    shutil.copyfile("/etc/passwd", secret)
    valid = outside / "s.jsonl"  # content the agent would accept, but not where the agent keeps its files
    valid.write_text('{"a": 1}\n')
    proj = tmp_path / "agent" / "proj"
    path = {"outside": secret, "dotdot": proj / ".." / ".." / "etc" / "s.jsonl", "relative": Path("s.jsonl"),
            "link": proj / "s.jsonl", "linked folder": proj / "linked" / "s.jsonl", "fifo": proj / "f.jsonl",
            "format": proj / "passwd.jsonl", "empty": proj / "empty.jsonl", "name": proj / "s.txt"}[case]
    if case == "link":
        path.symlink_to(valid)
    elif case == "linked folder":
        (proj / "linked").symlink_to(outside)
    elif case == "fifo":
        os.mkfifo(path)
    elif case == "format":
        shutil.copyfile(secret, path)
    elif case == "empty":
        path.write_bytes(b"")
    elif case == "name":
        path.write_text('{"a": 1}\n')
    before = _tree(tmp_path)
    with pytest.raises(RewindError) as refused:
        place.load(str(path))
    assert "\n" not in str(refused.value) and str(path) in str(refused.value)
    with pytest.raises(RewindError):
        place.write(str(path), b'{"a": 1}\n')
    assert _tree(tmp_path) == before  # not a byte changed, nothing created


def test_the_gate_writes_only_what_the_agent_would_read(place: conversation.Place, tmp_path: Path) -> None:
    path = tmp_path / "agent" / "proj" / "s.jsonl"
    with pytest.raises(RewindError, match="line 1"):
        place.write(str(path), b"root:x:0:0:root:/root:/bin/sh\n")
    assert not path.exists()
    path.write_text('{"a": 1}\n')
    stranger = conversation.Transcript(str(path), path.read_bytes())  # not read through the gate
    with pytest.raises(RewindError, match="not read as a test transcript"):
        place.append(stranger, {"a": 2})
    assert path.read_text() == '{"a": 1}\n'


def test_agent_modules_reach_transcript_files_only_through_the_gate() -> None:
    """No agent module opens, reads or writes a file of its own: undo.py hands it the agent's Place."""
    import git_rewind.agents as package

    folder = Path(package.__file__).parent
    for name in ("claude_code", "codex", "gemini", "droid", "opencode", "copilot", "qwen", "aider"):
        source = (folder / f"{name}.py").read_text()
        conversation_part = source[source.index("# conversation rewind"):]
        for call in ("write_atomic", "append_line", "read_regular", "shutil.copy", "Transcript.load",
                     "os.replace", "os.rename", "os.unlink", "os.open"):
            assert call not in conversation_part, f"agents/{name}.py calls {call} outside its Place"
        assert not re.search(r"(?<![.\w])open\(", conversation_part), f"agents/{name}.py opens a file"


def _tree(root: Path) -> dict[str, tuple[str, bytes]]:
    """Every path under ROOT: its kind and content (a link: its target); FIFOs are never opened."""
    import stat

    out: dict[str, tuple[str, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            mode = os.lstat(full).st_mode
            if stat.S_ISLNK(mode):
                out[full] = ("link", os.readlink(full).encode())
            elif stat.S_ISREG(mode):
                out[full] = ("file", Path(full).read_bytes())
            else:
                out[full] = ("dir" if stat.S_ISDIR(mode) else "other", b"")
    return out
