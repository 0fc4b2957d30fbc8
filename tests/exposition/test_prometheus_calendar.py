"""The Prometheus reader's buckets around a daylight-saving change: a range query has one
step, so a window keeps the side of the change it is read from, and one that holds only the
change's bucket (a day of 23 hours) is declined with an error that says so."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from esatui.db.reader import Timeline
from esatui.exposition.prometheus_reader import PrometheusError, PrometheusReader, _Plan
from tests.core.test_rollups import set_zone

DAY_S = 86_400


def utc_s(day: str, hour: int) -> float:
    return datetime.fromisoformat(day).replace(hour=hour, tzinfo=UTC).timestamp()


class Ranged(PrometheusReader):
    """A reader whose server has one node with 1-minute intervals up to ``last``, and
    answers the timeline's range query with every grid point asked for."""

    def __init__(self, last_s: float) -> None:
        super().__init__("http://prometheus.invalid")
        self.last_s = last_s
        self.asked: list[tuple[float, float]] = []

    def nodes(self) -> list[str]:
        return ["n1"]

    def interval_s(self, node: str) -> float:
        return 60.0

    def _last_data_s(self, node: str) -> float | None:
        return self.last_s

    def _timeline_source(
        self, timeline: Timeline, plan: _Plan, first: float, until: float
    ) -> tuple[str, list[float]] | None:
        self.asked.append((first, until))
        n = round((until - first) / plan.step)
        return "host", [first + i * plan.step for i in range(n + 1)]


TIMELINE = Timeline("n1", ("cpu",), (), DAY_S * 1_000_000)


@pytest.fixture(autouse=True)
def berlin(monkeypatch: pytest.MonkeyPatch) -> None:
    set_zone(monkeypatch, "Europe/Berlin")


def test_the_newest_days_are_those_after_the_change() -> None:
    reader = Ranged(utc_s("2026-04-01", 12))
    window = reader.window(TIMELINE, None, None, limit=5)
    midnights = [utc_s("2026-03-30", 22), utc_s("2026-03-31", 22)]  # CEST
    assert [s.end_us / 1e6 for s in window.spans] == midnights
    assert all(s.end_us - s.start_us == DAY_S * 1_000_000 for s in window.spans)


def test_days_read_forward_stop_before_the_change() -> None:
    reader = Ranged(utc_s("2026-04-01", 12))
    after = int(utc_s("2026-03-27", 12) * 1e6)
    window = reader.window(TIMELINE, after, None, limit=5, newest_first=False)
    midnights = [utc_s("2026-03-27", 23), utc_s("2026-03-28", 23)]  # CET
    assert [s.end_us / 1e6 for s in window.spans] == midnights


def test_the_change_day_alone_is_declined_and_says_why() -> None:
    reader = Ranged(utc_s("2026-04-01", 12))
    until = int(utc_s("2026-03-29", 22) * 1e6)  # the end of the day of 23 hours
    with pytest.raises(PrometheusError, match="daylight-saving change of 2026-03-29"):
        reader.window(TIMELINE, None, until, limit=1)


def test_lengths_that_divide_an_hour_cross_the_change() -> None:
    reader = Ranged(utc_s("2026-03-29", 3))
    hourly = Timeline("n1", ("cpu",), (), 3_600_000_000)
    window = reader.window(hourly, None, None, limit=4)
    ends = [utc_s("2026-03-28", 23), *(utc_s("2026-03-29", h) for h in (0, 1, 2))]
    assert [s.end_us / 1e6 for s in window.spans] == ends
