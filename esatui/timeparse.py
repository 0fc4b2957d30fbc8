"""Durations, sizes and times as users type them on the command line and in the TUI."""

from __future__ import annotations

import re
import time
from datetime import datetime

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h|d|w)?\s*$", re.IGNORECASE)
_UNIT_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib|t|tb|tib)?\s*$", re.I)
_SIZE_UNIT = {"b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_RELATIVE = re.compile(r"^\s*(?:-\s*(\S+)|(\S+(?:\s*\S+)?)\s+ago)\s*$", re.IGNORECASE)


MAX_DURATION_S = 36_525 * 86_400
"""A century: the longest duration (a retention, a relative time) esatui takes."""
FIRST_TIME_US = 0  # 1970-01-01 UTC: no recording is older
LAST_TIME_US = 253_402_300_799_000_000  # 9999-12-31 23:59:59 UTC: the last ISO 8601 year


class ParseError(ValueError):
    """A value the user typed that esatui cannot read; the message says what was expected."""


def parse_duration(text: str, at_most_s: float = MAX_DURATION_S) -> float:
    """``60``, ``1.5``, ``0.2``, ``60s``, ``15m``, ``1h``, ``7d`` -> seconds (> 0, at most
    ``at_most_s``: a century). Units in either case, but ``M``: a month is no fixed length."""
    m = _DURATION.match(text)
    if not m:
        if _DURATION.match(text.strip().removeprefix("-")):
            raise ParseError(f"{text!r}: a duration must be more than zero")  # -5m
        raise ParseError(f"{text!r} is not a duration (try 60, 1.5, 15m, 1h or 7d)")
    if m.group(2) == "M":
        raise ParseError(f"{text!r}: m is minutes, and a month has no fixed length (try 30d)")
    seconds = float(m.group(1)) * _UNIT_S[(m.group(2) or "s").lower()]
    if seconds <= 0:
        raise ParseError(f"{text!r}: a duration must be more than zero")
    if seconds > at_most_s:
        raise ParseError(f"{text!r}: a duration must be at most {_longest(at_most_s)}")
    return seconds


def _longest(seconds: float) -> str:
    days = f"{seconds / 86_400:g}d"
    return f"{days} (a century)" if seconds == MAX_DURATION_S else days


def parse_size(text: str) -> int:
    """``2GB``, ``500M``, ``1.5g``, ``4096`` -> bytes (binary multiples)."""
    m = _SIZE.match(text)
    if not m:
        raise ParseError(f"{text!r} is not a size (try 500MB or 2GB)")
    unit = (m.group(2) or "b").lower()[0]
    return int(float(m.group(1)) * _SIZE_UNIT[unit])


def parse_time(text: str, now: float | None = None, day: float | None = None) -> int:
    """A point in time -> microseconds since the epoch.

    Accepts ISO 8601 (``2026-11-21T14:30``, with or without an offset), ``YYYY-MM-DD HH:MM``,
    ``HH:MM`` (on the local date of ``day``, else of ``now``: today), and relative times
    (``3h ago``, ``-90m``, before ``now``).
    """
    now = time.time() if now is None else now
    day = now if day is None else day
    stripped = text.strip()
    rel = _RELATIVE.match(stripped)
    if rel:
        amount = (rel.group(1) or rel.group(2) or "").replace(" ", "")
        try:
            ago = parse_duration(amount)
        except ParseError as exc:
            if _DURATION.match(amount):
                raise ParseError(f"{text!r}: {exc}") from None  # a duration, too long
        else:
            return _in_range(text, int((now - ago) * 1_000_000))
    if re.fullmatch(r"\d{1,2}:\d{2}(:\d{2})?", stripped):
        today = datetime.fromtimestamp(day).date().isoformat()
        stripped = f"{today}T{stripped}"
    try:
        moment = datetime.fromisoformat(stripped)
        readings = _local_readings(moment) if moment.tzinfo is None else [moment]
    except (ValueError, OverflowError, OSError):  # year 1 has no local time, nor a timestamp
        raise ParseError(
            f"{text!r} is not a time (try 14:30, 2026-11-21 14:30, 2026-11-21T14:30 or 3h ago)"
        ) from None
    if len(readings) != 1:
        raise ParseError(_not_one_time(text, stripped, readings))
    return _in_range(text, int(readings[0].timestamp() * 1_000_000))


def _local_readings(moment: datetime) -> list[datetime]:
    """The instants at which the local clock (``TZ``) reads the naive ``moment``: one, none
    (skipped when the clocks go forward) or two (repeated when they go back). ``astimezone``
    alone would take the first of two silently and, for a skipped time, an instant an
    hour early (02:30 on Berlin's spring day read 01:30)."""
    found: list[datetime] = []
    placed = 0
    for fold in (0, 1):
        try:
            at = moment.replace(fold=fold).astimezone()
        except (ValueError, OverflowError):  # the last hours of year 9999: probing passes it
            continue
        placed += 1
        if at.replace(tzinfo=None) == moment and at not in found:
            found.append(at)
    if not placed:
        raise ValueError(f"{moment} has no local time here")
    return found


def _not_one_time(text: str, stripped: str, readings: list[datetime]) -> str:
    """Why a local time names no instant or two, and what to type instead: the time with an
    offset (a skipped one with the offset before the change: the instant it would have been)."""
    if readings:
        first, second = (f"{stripped}{_offset(r)}" for r in readings)
        return (
            f"{text!r} is two times: the clocks went back over it (daylight saving); "
            f"give its offset: {first} (the first) or {second} (the second)"
        )
    before = datetime.fromisoformat(stripped).replace(fold=0).astimezone()
    return (
        f"{text!r} is no local time: the clocks went forward over it (daylight saving); "
        f"give an offset ({stripped}{_offset(before)}) or a time outside the change"
    )


def _offset(moment: datetime) -> str:
    """``moment``'s UTC offset as ISO 8601 writes it (``+05:30``, ``-04:00``)."""
    return moment.isoformat()[-6:]


def _in_range(text: str, time_us: int) -> int:
    if not FIRST_TIME_US <= time_us <= LAST_TIME_US:
        raise ParseError(f"{text!r}: a time must be between 1970 and 9999")
    return time_us


def iso(time_us: int) -> str:
    """ISO 8601 in local time with its offset, to the second (microseconds when present)."""
    moment = datetime.fromtimestamp(time_us / 1_000_000).astimezone()
    if moment.microsecond:
        return moment.isoformat(timespec="microseconds")
    return moment.isoformat(timespec="seconds")


def day_start(time_us: int) -> int:
    moment = datetime.fromtimestamp(time_us / 1_000_000).astimezone()
    midnight = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return int(midnight.timestamp() * 1_000_000)
