"""UTC stamps and the two ways an age is shown (list/show, and the text a resumed agent reads)."""

from __future__ import annotations

import re

import pytest

from git_rewind.clock import age, parse_utc, utc_now

THEN = "2026-11-22T10:00:00Z"
T0 = parse_utc(THEN)


def test_stamps_are_utc_and_parse_back() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", utc_now())
    assert T0 == 1795341600.0
    assert parse_utc("yesterday") is None and parse_utc(None) is None


@pytest.mark.parametrize(("seconds", "short", "words"), [
    (0, "0s ago", "just now"), (59, "59s ago", "just now"), (60, "1m ago", "1 min ago"),
    (3599, "59m ago", "59 min ago"), (7200, "2h ago", "2 h ago"), (86400, "1d ago", "1 day ago"),
    (3 * 86400 + 5, "3d ago", "3 days ago"), (-30, "0s ago", "just now"),
])
def test_ages(seconds: int, short: str, words: str) -> None:
    assert T0 is not None
    assert age(THEN, T0 + seconds) == short
    assert age(THEN, T0 + seconds, words=True) == words


def test_an_unreadable_time() -> None:
    assert age("?", 1000.0, words=True) == "at an unknown time"
    assert age("?", 86400.0 * 2) == "2d ago"  # as old as the epoch: sorts and shows as oldest
