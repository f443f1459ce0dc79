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
    fast = _parse_stamp(text) if isinstance(text, str) else None
    if fast is not None:
        return fast
    import calendar  # with strptime: ~4 ms of imports, for stamps not written as utc_now writes them

    try:
        return float(calendar.timegm(time.strptime(str(text), STAMP)))
    except ValueError:
        return None


def _parse_stamp(text: str) -> float | None:
    """A stamp exactly as utc_now writes it (`2026-11-22T10:00:00Z`), by arithmetic; None for anything else."""
    if len(text) != 20 or text[4] != "-" or text[7] != "-" or text[10] != "T" or text[13] != ":" \
            or text[16] != ":" or text[19] != "Z":
        return None
    day_start = _DAYS.get(text[:10])
    if day_start is not None:  # a day seen before: only the time of day is left to read
        clock = (text[11:13], text[14:16], text[17:19])
        if clock[0].isdigit() and clock[1].isdigit() and clock[2].isdigit() and text[11:19].isascii():
            hour, minute, second = int(clock[0]), int(clock[1]), int(clock[2])
            if hour <= 23 and minute <= 59 and second <= 61:
                return day_start + float(hour * 3600 + minute * 60 + second)
        return None
    fields = (text[0:4], text[5:7], text[8:10], text[11:13], text[14:16], text[17:19])
    if not all(f.isascii() and f.isdigit() for f in fields):
        return None
    year, month, day, hour, minute, second = (int(f) for f in fields)
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days_in_month = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    if not (1 <= month <= 12 and 1 <= day <= days_in_month[month - 1] and hour <= 23 and minute <= 59
            and second <= 61):
        return None
    # Days since 1970-01-01 of a proleptic Gregorian date (the civil-from-days inverse, H. Hinnant).
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    if len(_DAYS) < 4096:
        _DAYS[text[:10]] = float(days * 86400)
    return float(days * 86400 + hour * 3600 + minute * 60 + second)


_DAYS: dict[str, float] = {}  # `2026-11-22` → its first second: a list of 50,000 checkpoints spans a few days


def age(stamp: object, now: float | None = None, words: bool = False) -> str:
    """How long ago STAMP was.

    Short (`list`, `show`): '42s ago', '5m ago', '3h ago', '12d ago'. WORDS (the text an agent
    reads at session start): 'just now', '5 min ago', '2 h ago', '1 day ago', '3 days ago'.
    """
    return ago(parse_utc(stamp), now, words)


def ago(then: float | None, now: float | None = None, words: bool = False) -> str:
    """`age` of a time already read (seconds since the epoch; None: unreadable)."""
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
