"""A bucket's gauges from Prometheus: the average and maximum of the scrapes of its own
intervals. A scrape shows an interval until the next one is added, so the scrapes just
after a bucket's start still show the previous bucket's last interval: not the bucket's."""

from __future__ import annotations

import re
from collections.abc import Mapping

import pytest

from esatui.db.reader import Timeline
from tests.core.test_rollups import set_zone
from tests.exposition.test_prometheus_calendar import Ranged, utc_s

INTERVAL_S = 60.0
START_S = utc_s("2026-03-10", 0)
BUCKET_US = 600_000_000
PUBLISHED_S = 0.05  # an interval is in the exposition this long after its end
PHASE_S = 29.5  # scrapes every half interval, at :29.5 and :59.5


def collect_ms(end_s: float) -> float:
    """The interval ending at ``end_s``: 100 ms on the hour (a 10-minute bucket's last
    interval), else 1 ms."""
    return 100.0 if end_s % 3600 == 0 else 1.0


def shown(scrape_s: float) -> float:
    """What a scrape at ``scrape_s`` reads: the newest interval in the exposition then."""
    end = (scrape_s - PUBLISHED_S) // INTERVAL_S * INTERVAL_S
    return collect_ms(end) / 1000  # seconds, as exposed


class Scraped(Ranged):
    """esatui's own collect time, scraped twice an interval; ``*_over_time`` answered
    from those scrapes as Prometheus does (the samples in (t - range, t])."""

    def __init__(self) -> None:
        super().__init__(START_S + 4 * 3600)

    def _get(self, path: str, params: Mapping[str, str]) -> object:
        query = params["query"]
        if query.startswith("count by (source)"):
            return super()._get(path, params)
        over = re.search(
            r"(avg|max)_over_time\(esatui_self_collect_seconds\{.*\}\[(\d+)(ms|s)\]", query
        )
        if over is None:
            return {"resultType": "matrix", "result": []}
        how, range_s = over.group(1), int(over.group(2)) / (1000 if over.group(3) == "ms" else 1)
        start, end, step = (float(params[p]) for p in ("start", "end", "step"))
        points, k = [], 0
        while (t := start + k * step) <= end:
            scrapes = [
                shown(s)
                for n in range(int((t - range_s) // 30), int(t // 30) + 1)
                if t - range_s < (s := n * 30 + PHASE_S) <= t
            ]
            value = max(scrapes) if how == "max" else sum(scrapes) / len(scrapes)
            points.append([t, str(value)])
            k += 1
        return {"resultType": "matrix", "result": [{"metric": {}, "values": points}]}


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    set_zone(monkeypatch, "UTC")


def test_a_bucket_s_gauges_are_of_its_own_intervals() -> None:
    reader = Scraped()
    timeline = Timeline("n1", ("esatui",), (), BUCKET_US)
    window = reader.window(timeline, int(START_S * 1e6), int((START_S + 3600) * 1e6))
    slots = {s.end_us / 1e6: s for s in reader.slots(window, ("esatui",))}
    assert len(slots) == 6
    for end_s, slot in slots.items():
        own = [collect_ms(end_s - n * INTERVAL_S) for n in range(10)]
        rows = slot.get("esatui")
        assert rows is not None
        (row,) = rows.rows.values()
        # scrape-weighted (README "Many systems"): each interval twice, but the last, once
        # before the bucket is read just under an interval after its end
        scraped = 2 * sum(own) - own[0]
        assert row.values["collect_ms"] == pytest.approx(scraped / (2 * len(own) - 1)), end_s
        assert row.values["collect_ms_max"] == pytest.approx(max(own)), end_s
