"""Time as git-rewind records and shows it: UTC stamps in notes and logs, and ages.

Only `time` and `calendar` (no datetime): hooks stamp every log line.
"""

from __future__ import annotations

import time

STAMP = "%Y-%m-%dT%H:%M:%SZ"


def utc_now() -> str:
    """Now, as notes and logs record it: `2026-11-22T10:00:00Z`."""
    return time.strftime(STAMP, time.gmtime())


def parse_utc(text: object) -> float | None:
    """Seconds since the epoch of a recorded stamp, or None for anything else."""
    import calendar

    try:
        return float(calendar.timegm(time.strptime(str(text), STAMP)))
    except ValueError:
        return None


def age(stamp: object, now: float | None = None, words: bool = False) -> str:
    """How long ago STAMP was.

    Short (`list`, `show`): '42s ago', '5m ago', '3h ago', '12d ago'. WORDS (the text an agent
    reads at session start): 'just now', '5 min ago', '2 h ago', '1 day ago', '3 days ago'.
    """
    then = parse_utc(stamp)
    if then is None:
        if words:
            return "at an unknown time"
        then = 0.0  # as old as can be: a note without a readable time sorts and shows as oldest
    seconds = max(0, int((time.time() if now is None else now) - then))
    if words:
        for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
            if seconds >= size:
                count = seconds // size
                return f"{count} {'day' if unit == 'days' and count == 1 else unit} ago"
        return "just now"
    for short, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{short} ago"
    return f"{seconds}s ago"
