"""The Prometheus reader's window for a drilled view (``snap``): the spans that overlap one
interval of another timeline by half at least, or the buckets its end falls in, as the
database's own windows; PromQL durations of any bucket length; and the counters of the
bucket that holds a daylight-saving change, of its real length."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from esatui.db.reader import Timeline
from esatui.exposition.exporter import MEASURED_METRIC
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


class Counting(Ranged):
    """A server whose host CPU 0 counts one second of user time a second (scraped at the
    interval's end: the counter at t is t - 59 s) and reports each interval measured whole:
    a span's ``user_us`` and its measured duration are both its real length."""

    def _get(self, path: str, params: Mapping[str, str]) -> object:
        query = params["query"]
        if not ("esatui_cpu_seconds_total" in query or MEASURED_METRIC in query):
            return super()._get(path, params)
        start, end, step = (float(params[p]) for p in ("start", "end", "step"))
        self.asked.append((query, start, end, step))
        points: list[list[object]] = []
        t = start
        while t <= end + 1e-9 and t <= self.last_s:
            points.append([t, str(t - 59)])
            t = start + len(points) * step
        labels = {"source": "host"}
        if "cpu_seconds" in query:
            labels = {"cpu": "0", "mode": "user"}
        return {"resultType": "matrix", "result": [{"metric": labels, "values": points}]}


@pytest.mark.parametrize(
    ("zone", "change", "length_s"),
    [
        ("Europe/Berlin", "2026-03-29T01", DAY_S),
        ("Europe/Berlin", "2026-10-25T01", DAY_S),
        ("Europe/Berlin", "2026-03-29T01", 3 * 3600),
        ("Australia/Lord_Howe", "2026-04-04T15", 3600),
    ],
)
def test_a_change_buckets_counters_are_of_its_real_length(
    monkeypatch: pytest.MonkeyPatch, zone: str, change: str, length_s: int
) -> None:
    """The bucket holding a change (23 or 25 hours, 2 or 4, Lord Howe's 30 or 90 minutes)
    adds up its own length of counter and of measured time, as every other bucket does."""
    set_zone(monkeypatch, zone)
    day, hour = change.split("T")
    at = utc_s(day, int(hour))
    reader = Counting(at + 2 * DAY_S)
    timeline = Timeline("n1", ("cpu",), (), length_s * 1_000_000)
    window = reader.window(timeline, int((at - DAY_S) * 1e6), int((at + DAY_S) * 1e6))
    lengths = set()
    for slot in reader.slots(window, ("cpu",)):
        length = slot.end_us - slot.start_us
        lengths.add(length)
        cpus = slot.get("cpu")
        assert cpus is not None
        assert cpus.rows["0"].values.get("user_us") == length
        assert slot.duration_us == length
    assert len(lengths) > 1  # the change's bucket is among them
