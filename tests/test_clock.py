"""UTC stamps and the two ways an age is shown (list/show, and the text a resumed agent reads)."""

from __future__ import annotations

import re

import pytest

from git_rewind.base.clock import age, parse_utc, utc_now

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


def test_a_stamp_parses_by_arithmetic_as_strptime_parses_it() -> None:
    """parse_utc reads utc_now's stamps without strptime (its import costs a restore ~4 ms): same seconds."""
    import calendar
    import random
    import time

    from git_rewind.base.clock import STAMP, _parse_stamp

    rng = random.Random(7)
    stamps = ["1970-01-01T00:00:00Z", "2000-02-29T23:59:59Z", "2100-03-01T00:00:00Z", "2026-11-22T23:59:60Z"]
    stamps += [time.strftime(STAMP, time.gmtime(rng.randrange(0, 8 * 10**9))) for _ in range(2000)]
    for stamp in stamps:
        assert _parse_stamp(stamp) == float(calendar.timegm(time.strptime(stamp, STAMP))), stamp
    for odd in ("2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22 10:00:00Z"):
        assert _parse_stamp(odd) is None and parse_utc(odd) is None, odd
    assert _parse_stamp("2026-1-22T10:00:00Z") is None and parse_utc("2026-1-22T10:00:00Z") == 1769076000.0
