"""A local time the clocks skip or repeat (daylight saving) names no instant or two: ``--from``,
``--to``, ``sim --start`` and the monitor's jumps refuse it and say what to type instead,
never taking an instant an hour off or one of the two silently."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from esatui.timeparse import ParseError, parse_time
from tests.core.test_rollups import set_zone


def utc_us(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1_000_000)


@pytest.mark.parametrize(
    ("zone", "skipped", "offset"),
    [
        ("Europe/Berlin", "2026-03-29T02:30", "+01:00"),
        ("America/New_York", "2026-03-08T02:30", "-05:00"),
        ("Australia/Lord_Howe", "2026-10-04T02:15", "+10:30"),  # 30 minutes skipped
    ],
)
def test_a_skipped_local_time_is_refused(
    monkeypatch: pytest.MonkeyPatch, zone: str, skipped: str, offset: str
) -> None:
    """Before: Berlin's 02:30 on its spring day read 01:30+01:00, an hour before any
    reading of it."""
    set_zone(monkeypatch, zone)
    with pytest.raises(ParseError, match="went forward") as caught:
        parse_time(skipped)
    assert f"{skipped}{offset}" in str(caught.value)


@pytest.mark.parametrize(
    ("zone", "repeated", "first", "second"),
    [
        ("Europe/Berlin", "2026-10-25T02:30", "+02:00", "+01:00"),
        ("America/New_York", "2026-11-01T01:30", "-04:00", "-05:00"),
        ("Australia/Lord_Howe", "2026-04-05T01:45", "+11:00", "+10:30"),
    ],
)
def test_a_repeated_local_time_is_refused_with_both_offsets(
    monkeypatch: pytest.MonkeyPatch, zone: str, repeated: str, first: str, second: str
) -> None:
    """Before: the first of the two, silently."""
    set_zone(monkeypatch, zone)
    with pytest.raises(ParseError, match="went back") as caught:
        parse_time(repeated)
    assert f"{repeated}{first} (the first)" in str(caught.value)
    assert f"{repeated}{second} (the second)" in str(caught.value)
    # either one, given with its offset, is read as given: the second after the first
    for offset in (first, second):
        given = datetime.fromisoformat(f"{repeated}{offset}")
        assert parse_time(f"{repeated}{offset}") == int(given.timestamp() * 1_000_000)
    assert parse_time(f"{repeated}{second}") > parse_time(f"{repeated}{first}")


def test_an_hour_and_minute_on_the_change_day_is_checked_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    set_zone(monkeypatch, "Europe/Berlin")
    autumn_day = datetime.fromisoformat("2026-10-25T12:00+01:00").timestamp()
    with pytest.raises(ParseError, match=r"2026-10-25T02:30\+02:00 \(the first\)"):
        parse_time("02:30", now=autumn_day)


@pytest.mark.parametrize(
    ("zone", "text", "utc"),
    [
        ("Europe/Berlin", "2026-10-25T01:59", "2026-10-24T23:59"),  # just before
        ("Europe/Berlin", "2026-10-25T03:00", "2026-10-25T02:00"),  # just after
        ("Europe/Berlin", "2026-03-29T03:00", "2026-03-29T01:00"),  # the change's own
        ("Asia/Kolkata", "2026-11-01T01:30", "2026-10-31T20:00"),  # no change there
        ("UTC", "2026-11-01T01:30", "2026-11-01T01:30"),
    ],
)
def test_times_near_a_change_read_as_before(
    monkeypatch: pytest.MonkeyPatch, zone: str, text: str, utc: str
) -> None:
    set_zone(monkeypatch, zone)
    assert parse_time(text) == utc_us(utc)


@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin", "America/New_York"])
def test_the_last_hour_of_year_9999_is_one_line(monkeypatch: pytest.MonkeyPatch, zone: str) -> None:
    """Looking for a second reading of a local time probes an hour on, past year 9999:
    that is no second reading (UTC: the time itself), and where no reading can be made at
    all (Python's datetime ends with year 9999) the time is not one, as before; never
    argparse's 'invalid moment value' (the error raised while saying why)."""
    set_zone(monkeypatch, zone)
    text = "9999-12-31T23:00"
    if zone == "UTC":
        assert parse_time(text) == int(datetime(9999, 12, 31, 23, tzinfo=UTC).timestamp() * 1e6)
    else:
        with pytest.raises(ParseError, match="is not a time"):
            parse_time(text)
