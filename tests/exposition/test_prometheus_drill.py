"""The Prometheus reader's window for a drilled view (``snap``): the spans that overlap one
interval of another timeline by half at least, or the buckets its end falls in, as the
database's own windows; and PromQL durations of any bucket length."""

from __future__ import annotations

import pytest

from esatui.db.reader import Timeline
from esatui.exposition.prometheus_reader import _duration
from tests.core.test_rollups import set_zone
from tests.exposition.test_prometheus_calendar import DAY_S, TIMELINE, Ranged, utc_s

MINUTES = Timeline("n1", ("cpu",), (), None)


@pytest.fixture(autouse=True)
def berlin(monkeypatch: pytest.MonkeyPatch) -> None:
    set_zone(monkeypatch, "Europe/Berlin")


def drilled(reader: Ranged, timeline: Timeline, after_s: float, until_s: float) -> list[float]:
    """The span ends (s) of the window a drill into (after, until] asks for."""
    window = reader.window(timeline, int(after_s * 1e6), int(until_s * 1e6), limit=None, snap=True)
    return [s.end_us / 1e6 for s in window.spans]


def test_a_drill_into_one_interval_is_that_interval() -> None:
    reader = Ranged(utc_s("2026-03-27", 12))
    end = utc_s("2026-03-27", 10)
    assert drilled(reader, MINUTES, end - 60, end) == [end]
    # an interval of another clock, 20 s later: the minute it overlaps most
    assert drilled(reader, MINUTES, end - 40, end + 20) == [end]
    # an hour: its sixty minutes, not the one before
    hour = drilled(reader, MINUTES, end - 3600, end)
    assert hour[0] == end - 3540 and hour[-1] == end and len(hour) == 60


def test_a_drill_at_one_day_is_the_day_its_interval_ends_in() -> None:
    reader = Ranged(utc_s("2026-03-31", 12))
    morning = utc_s("2026-03-27", 10)  # 11:00 CET
    assert drilled(reader, TIMELINE, morning - 300, morning) == [utc_s("2026-03-27", 23)]
    # the change's day of 23 hours, from one of its intervals
    noon = utc_s("2026-03-29", 10)
    assert drilled(reader, TIMELINE, noon - 300, noon) == [utc_s("2026-03-29", 22)]


def test_durations_of_any_length_are_promql() -> None:
    assert _duration(14 * DAY_S) == "1209600s"
    assert _duration(82_800) == "82800s"
    assert _duration(0.5) == "500ms"
