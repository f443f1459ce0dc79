"""The note model: every key DESIGN lists read into typed fields, unknown keys kept, and a note
read and written back is the same JSON (old notes, notes of later versions, hand-made ones)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from git_rewind.base.note import ConversationRecord, Note, Oid, Position, RewindRecord, mode_of

FULL: dict[str, Any] = {
    "v": 1, "seq": 42, "session": "4f9e", "agent": "claude-code", "trigger": "PreToolUse", "tool": "Edit",
    "paths": ["src/app.py"], "message": "before Edit src/app.py", "prompt": "add error handling",
    "summary": {"done": "x", "files": ["a"]}, "tags": ["t"], "head": "a" * 40, "branch": "main", "worktree": "feat",
    "created": "2026-11-22T10:00:00Z",
    "conversation": {"transcript": "/h/.claude/projects/p/4f9e.jsonl", "prompt_id": "p1", "tool_use_id": "toolu_1",
                     "message_uuid": None, "offset": 120},
    "skipped": [{"path": "big.bin", "reason": "larger than max_file_size"}],
}


def test_a_full_note_reads_into_typed_fields_and_writes_back_unchanged() -> None:
    note = Note.from_json(FULL)
    assert note is not None
    assert (note.seq, note.session, note.agent, note.tool, note.paths) == (42, "4f9e", "claude-code", "Edit",
                                                                          ["src/app.py"])
    assert isinstance(note.head, Oid) and note.head == "a" * 40
    assert note.conversation is not None and note.conversation.tool_use_id == "toolu_1"
    assert note.conversation.offset == 120
    assert note.to_json() == FULL
    assert list(note.to_json()) == list(FULL)  # the order `git notes show` prints
    assert json.loads(note.to_bytes()) == FULL


def test_a_safety_checkpoints_rewind_record_round_trips_with_its_conversation() -> None:
    record = {"to": 3, "to_commit": "b" * 40, "only": ["src"], "mode": "full",
              "conversation": {"agent": "droid", "session": "s", "transcript": "/t.jsonl", "backup": "t.jsonl",
                               "backup_blob": "c" * 40, "leaf_before": None, "leaf": "u1", "cut": 4,
                               "fork": False, "agent_only_field": [1, 2]}}
    data = {**FULL, "trigger": "pre-rewind", "rewind": record, "changes": {"files": 1, "added": 2, "removed": 0,
                                                                           "since": 41}}
    note = Note.from_json(data)
    assert note is not None and note.rewind is not None
    assert (note.rewind.to, note.rewind.mode, note.rewind.only, note.rewind.code) == (3, "full", ["src"], True)
    conv = note.rewind.conversation
    assert isinstance(conv, ConversationRecord) and (conv.agent, conv.cut, conv.leaf) == ("droid", 4, "u1")
    assert conv.extra == {"agent_only_field": [1, 2]}
    assert note.to_json() == data


def test_unknown_keys_of_later_versions_are_kept_where_they_were_found() -> None:
    data = {**FULL, "v": 3, "stack": ["feature"], "reviewers": {"src/app.py": "ana"},
            "conversation": {**FULL["conversation"], "server": "http://127.0.0.1:4096/", "time_ms": 5}}
    note = Note.from_json(data)
    assert note is not None
    assert note.v == 3 and note.extra == {"stack": ["feature"], "reviewers": {"src/app.py": "ana"}}
    assert note.conversation is not None and note.conversation.extra == {"server": "http://127.0.0.1:4096/",
                                                                         "time_ms": 5}
    assert note.to_json() == data


def test_an_old_note_gets_the_defaults_in_one_place() -> None:
    note = Note.from_json({"seq": 1, "session": "manual", "message": "first", "created": "2026-01-01T00:00:00Z"})
    assert note is not None
    assert (note.paths, note.tags, note.skipped, note.conversation, note.rewind, note.agent) == ([], [], [], None,
                                                                                                 None, None)
    assert note.to_json()["skipped"] == [] and "rewind" not in note.to_json()


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b'{"session": "s"}', b'{"seq": "5"}', b'{"seq": true}'])
def test_what_is_not_one_of_our_notes_reads_as_none(raw: bytes) -> None:
    assert Note.from_bytes(raw) is None


def test_modes() -> None:
    assert [mode_of(m) for m in ("code", "conversation", "full")] == ["code", "conversation", "full"]
    with pytest.raises(ValueError, match="one of code, conversation, full"):
        mode_of("all")
    assert RewindRecord(1, None, [], "conversation").code is False


json_leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
json_value = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)


@given(extra=st.dictionaries(st.text(min_size=1, max_size=8).filter(lambda k: k not in Note.KEYS + Note.OPTIONAL),
                             json_value, max_size=4),
       seq=st.integers(min_value=1, max_value=10**9),
       paths=st.lists(st.text(max_size=12), max_size=4),
       offset=st.none() | st.integers(min_value=0))
def test_any_note_with_any_extra_keys_round_trips(extra: dict[str, object], seq: int, paths: list[str],
                                                   offset: int | None) -> None:
    data = {**FULL, "seq": seq, "paths": paths,
            "conversation": {**FULL["conversation"], "offset": offset}, **extra}
    note = Note.from_json(data)
    assert note is not None and note.to_json() == data
    again = Note.from_bytes(note.to_bytes())
    assert again == note


def test_position_compares_by_value() -> None:
    assert Position("/t", offset=3) == Position("/t", offset=3)
    assert Position("/t", offset=3) != Position("/t", offset=4)


def test_named_files_have_their_own_key_and_older_notes_keep_theirs_in_paths() -> None:
    """`paths` counts from the work tree's previous checkpoint; the files a hook named are in `named`. A note
    written before `named` existed held them in `paths`, and what reads them (an agent's transcript search)
    still finds them there."""
    old = Note.from_json({"v": 1, "seq": 3, "session": "s", "trigger": "PreToolUse", "tool": "Edit",
                          "paths": ["src/app.py"], "created": "2026-11-22T10:00:00Z"})
    assert old is not None and old.named is None and old.files_named == ["src/app.py"]
    assert "named" not in old.to_json()  # written back as it was
    new = Note.from_json({"v": 1, "seq": 4, "session": "s", "paths": [], "named": ["src/app.py", "README.md"],
                          "created": "2026-11-22T10:00:00Z"})
    assert new is not None and new.paths == [] and new.files_named == ["src/app.py", "README.md"]
    assert Note.from_bytes(new.to_bytes()) == new and new.to_json()["named"] == ["src/app.py", "README.md"]


def test_safety_and_tagged_are_read_from_the_note() -> None:
    safety = Note.from_json({"seq": 5, "session": "s", "trigger": "pre-redo", "created": ""})
    assert safety is not None and safety.safety and not safety.tagged
    tagged = Note(6, "s", "", tags=["prompt", "release"])
    assert tagged.tagged and not tagged.safety
    assert not Note(7, "s", "", tags=["prompt", "risky", "clear", "compact", "summary"]).tagged  # git-rewind's own
