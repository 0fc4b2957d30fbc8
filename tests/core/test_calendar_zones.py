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
