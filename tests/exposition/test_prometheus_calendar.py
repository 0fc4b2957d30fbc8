"""The Prometheus reader's buckets around a daylight-saving change: the window's ends are
the local calendar's, and the bucket that holds a change (a day of 23 or 25 hours) is read
by a range query of its own whose step is its real length."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

import pytest

from esatui.db.navigator import Navigator
from esatui.db.reader import Timeline
from esatui.exposition.prometheus_reader import PrometheusReader
from tests.core.test_rollups import set_zone

DAY_S = 86_400
HOUR_S = 3_600


def utc_s(day: str, hour: int) -> float:
    return datetime.fromisoformat(day).replace(hour=hour, tzinfo=UTC).timestamp()


class Ranged(PrometheusReader):
    """A reader whose server has one node with 1-minute intervals up to ``last`` and
    answers a range query as Prometheus does: a point at every start + k * step up to the
    range's end (never past it), where there is data; every query asked is kept."""

    def __init__(self, last_s: float) -> None:
        super().__init__("http://prometheus.invalid")
        self.last_s = last_s
        self.asked: list[tuple[str, float, float, float]] = []

    def nodes(self) -> list[str]:
        return ["n1"]

    def interval_s(self, node: str) -> float:
        return 60.0

    def _last_data_s(self, node: str) -> float | None:
        return self.last_s

    def _get(self, path: str, params: Mapping[str, str]) -> object:
        assert path == "/api/v1/query_range"
        start, end, step = (float(params[p]) for p in ("start", "end", "step"))
        self.asked.append((params["query"], start, end, step))
        if not params["query"].startswith("count by (source)"):
            return {"resultType": "matrix", "result": []}
        points = []
        t = start
        while t <= end and t <= self.last_s:
            points.append([t, "1"])
            t = start + len(points) * step
        return {
            "resultType": "matrix",
            "result": [{"metric": {"source": "host"}, "values": points}],
        }


TIMELINE = Timeline("n1", ("cpu",), (), DAY_S * 1_000_000)


@pytest.fixture(autouse=True)
def berlin(monkeypatch: pytest.MonkeyPatch) -> None:
    set_zone(monkeypatch, "Europe/Berlin")


def ends(
    reader: Ranged,
    timeline: Timeline,
    *,
    after: int | None = None,
    until: int | None = None,
    limit: int,
    newest_first: bool = True,
) -> list[tuple[float, float]]:
    """The window's span ends and lengths (s)."""
    window = reader.window(timeline, after, until, limit=limit, newest_first=newest_first)
    return [(s.end_us / 1e6, (s.end_us - s.start_us) / 1e6) for s in window.spans]


def days(first: str, count: int, hour: int) -> list[tuple[float, float]]:
    return [(utc_s(first, hour) + i * DAY_S, DAY_S) for i in range(count)]


def test_the_last_day_before_the_spring_change_is_the_newest_until_it_ends() -> None:
    # data up to 12:00 on the change's day: the newest complete day is 03-28 (CET)
    reader = Ranged(utc_s("2026-03-29", 12))
    assert ends(reader, TIMELINE, limit=5) == days("2026-03-24", 5, 23)


def test_the_newest_day_holding_the_change_is_read_at_23_hours() -> None:
    reader = Ranged(utc_s("2026-03-30", 8))
    spring = [(utc_s("2026-03-29", 22), 23 * HOUR_S)]
    assert ends(reader, TIMELINE, limit=5) == days("2026-03-25", 4, 23) + spring
    # the change's day is a range query of its own, one step of 23 hours
    steps = sorted({step for _, _, _, step in reader.asked})
    assert steps == [23 * HOUR_S, DAY_S]


def test_days_after_the_change_and_the_change_day_itself() -> None:
    reader = Ranged(utc_s("2026-04-01", 12))
    spring = [(utc_s("2026-03-29", 22), 23 * HOUR_S)]
    assert ends(reader, TIMELINE, limit=3) == spring + days("2026-03-30", 2, 22)
    until = utc_s("2026-03-29", 22)
    assert ends(reader, TIMELINE, until=int(until * 1e6), limit=1) == spring


def test_days_read_forward_over_the_change() -> None:
    reader = Ranged(utc_s("2026-04-01", 12))
    after = int(utc_s("2026-03-27", 12) * 1e6)
    found = ends(reader, TIMELINE, after=after, limit=4, newest_first=False)
    spring = [(utc_s("2026-03-29", 22), 23 * HOUR_S)]
    assert found == days("2026-03-27", 2, 23) + spring + days("2026-03-30", 1, 22)


def test_the_autumn_change_day_is_25_hours() -> None:
    reader = Ranged(utc_s("2026-10-27", 12))
    autumn = [(utc_s("2026-10-25", 23), 25 * HOUR_S)]
    assert ends(reader, TIMELINE, limit=3) == days("2026-10-24", 1, 22) + autumn + [
        (utc_s("2026-10-26", 23), DAY_S)
    ]


def test_paging_back_over_a_change() -> None:
    reader = Ranged(utc_s("2026-04-02", 12))
    navigator = Navigator(reader, TIMELINE)
    span = navigator.newest()
    seen: list[tuple[float, float]] = []
    while span is not None and len(seen) < 8:
        seen.append((span.end_us / 1e6, (span.end_us - span.start_us) / 1e6))
        span = navigator.before(span.start_us)
    spring = [(utc_s("2026-03-29", 22), 23 * HOUR_S)]
    assert seen[::-1] == days("2026-03-25", 4, 23) + spring + days("2026-03-30", 3, 22)


def test_the_change_days_slots_are_read_over_23_hours() -> None:
    reader = Ranged(utc_s("2026-03-30", 8))
    window = reader.window(TIMELINE, None, None, limit=2)
    reader.asked.clear()
    reader.slots(window, ["cpu"])
    change_day = [(q, s, e) for q, s, e, step in reader.asked if step == 23 * HOUR_S]
    assert change_day and all("[82800s]" in q or "[" not in q for q, _, _ in change_day)
    end = utc_s("2026-03-29", 22)
    assert all(s >= end - 23 * HOUR_S and e <= end + 60 for _, s, e in change_day)


def test_lengths_that_divide_an_hour_cross_the_change() -> None:
    reader = Ranged(utc_s("2026-03-29", 3))
    hourly = Timeline("n1", ("cpu",), (), 3_600_000_000)
    window = reader.window(hourly, None, None, limit=4)
    ends = [utc_s("2026-03-28", 23), *(utc_s("2026-03-29", h) for h in (0, 1, 2))]
    assert [s.end_us / 1e6 for s in window.spans] == ends


def test_an_hour_over_lord_howes_half_hour_change(monkeypatch: pytest.MonkeyPatch) -> None:
    """The 30-minute change of 2026-10-03 15:30 UTC (02:00 +10:30 becomes 02:30 +11): the
    hour 01:00-02:00 ends at the change, 02:00-03:00 is the half hour left of it."""
    set_zone(monkeypatch, "Australia/Lord_Howe")
    reader = Ranged(utc_s("2026-10-03", 18))
    hourly = Timeline("n1", ("cpu",), (), 3_600_000_000)
    change = utc_s("2026-10-03", 15) + 1_800
    assert ends(reader, hourly, limit=5) == [
        (change - 2 * HOUR_S, HOUR_S),
        (change - HOUR_S, HOUR_S),
        (change, HOUR_S),
        (change + 1_800, 1_800),
        (change + 1_800 + HOUR_S, HOUR_S),
    ]
