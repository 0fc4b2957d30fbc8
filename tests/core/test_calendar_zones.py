"""``db/calendar.py`` keeps each zone's changes and the spans it found quiet: a zone set after
another (``TZ`` and ``time.tzset``, as the tests and a user's shell do) reads its own, never
what was kept for the other."""

from __future__ import annotations

import pytest

from esatui.db import calendar
from tests.core.test_daylight_saving import HOUR, LORD_HOWE_AUTUMN, LORD_HOWE_SPRING, MINUTE
from tests.core.test_rollups import set_zone
from tests.fixtures.local_calendar import Buckets

DAY = 24 * HOUR
AROUND = range(-3 * HOUR, 3 * HOUR, 7 * MINUTE)


def wrong_ends(zone: str) -> list[int]:
    """The ends around Lord Howe's two changes whose hour bucket is not the reference's."""
    wrong = []
    for change in (LORD_HOWE_AUTUMN, LORD_HOWE_SPRING):
        reference = Buckets(zone, HOUR, [change - DAY, change + DAY])
        wrong += [
            change + d
            for d in AROUND
            if calendar.bucket_end(change + d, HOUR) != reference.end(change + d)
        ]
    return wrong


@pytest.mark.parametrize("before", ["Europe/Berlin", "UTC", "Asia/Kolkata"])
def test_a_zone_set_after_another_reads_its_own_changes(
    monkeypatch: pytest.MonkeyPatch, before: str
) -> None:
    set_zone(monkeypatch, before)
    assert wrong_ends(before) == []  # the caches filled there: quiet, whole hours
    set_zone(monkeypatch, "Australia/Lord_Howe")
    assert wrong_ends("Australia/Lord_Howe") == []
    set_zone(monkeypatch, before)
    assert wrong_ends(before) == []


@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"])
@pytest.mark.parametrize("weeks", [1, 2])
def test_weeks_run_monday_to_monday(monkeypatch: pytest.MonkeyPatch, zone: str, weeks: int) -> None:
    """A bucket of whole weeks ends at a Monday's local midnight (ISO 8601's weeks), across
    the daylight-saving changes of 2026 too. Before: the epoch's multiples of a week, which
    end on Thursdays (1970-01-01 was one)."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    set_zone(monkeypatch, zone)
    length = weeks * 7 * DAY
    tz = ZoneInfo(zone)
    start = 1_767_225_600_000_000  # 2026-01-01T00:00Z, a Thursday
    ends = {calendar.bucket_end(start + h * HOUR, length) for h in range(0, 366 * 24, 5)}
    for end in ends:
        local = datetime.fromtimestamp(end / 1e6, tz)
        assert (local.weekday(), local.hour, local.minute) == (0, 0, 0), local
        begin = calendar.bucket_start(end, length)
        assert datetime.fromtimestamp(begin / 1e6, tz).weekday() == 0
        assert abs(end - begin - length) <= HOUR  # a week of 167 or 169 hours at a change
    reference = Buckets(zone, length, sorted(ends))
    assert all(reference.end(end) == end for end in ends)
