"""The hook's JSON reader and writer agree with the json module on everything hooks exchange."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_rewind.base import minijson

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_round_trip_matches_the_json_module(value: object) -> None:
    text = minijson.dumps(value)
    assert json.loads(text) == value
    assert minijson.loads(text) == value
    assert minijson.loads(json.dumps(value)) == value
    assert minijson.loads(json.dumps(value, indent=2) + "\n") == value


@pytest.mark.parametrize("bad", ["", "   ", "{", "[1,]", "{} {}", "nan", "{'a': 1}", '{"a": 1,}'])
def test_malformed_documents_are_value_errors(bad: str) -> None:
    with pytest.raises(ValueError):
        minijson.loads(bad)


def test_non_ascii_is_written_as_is_and_control_characters_escaped() -> None:
    assert minijson.dumps({"é": "a\nb\x00"}) == '{"é": "a\\nb\\u0000"}'


@pytest.mark.parametrize("bad", [float("nan"), {1: "x"}, object()])
def test_unencodable_values_are_refused(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        minijson.dumps(bad)



@settings(max_examples=300, deadline=None)
@given(JSON)
def test_dumps_indented_writes_a_note_as_json_does(value: object) -> None:
    """A note's text (json.dumps with ensure_ascii and indent=1), byte for byte: every checkpoint writes one."""
    assert minijson.dumps_indented(value) == json.dumps(value, ensure_ascii=True, indent=1)


@pytest.mark.parametrize("value", [float("nan"), {"a": float("inf")}, {1: 2}, [], {}, {"a": []}, ("x", {"b": None}),
                                   "\udcff\u20ac\U0001f600"])
def test_dumps_indented_leaves_to_json_what_it_does_not_write_itself(value: object) -> None:
    assert minijson.dumps_indented(value) == json.dumps(value, ensure_ascii=True, indent=1)
