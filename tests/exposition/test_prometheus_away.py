"""An entity away from its source's intervals (a CPU set offline, a guest logged off) and
back, read from Prometheus: the exporter keeps its totals while it is away and goes on from
them, so its first interval back is the increase since its last value, as the database
holds that interval's row. A gap that is scrapes missed (the source measured nothing then
either) still gives no value."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from esatui.db.reader import Timeline
from esatui.exposition.exporter import MEASURED_METRIC
from tests.core.test_rollups import set_zone
from tests.exposition.test_prometheus_calendar import Ranged, utc_s

MINUTE_S = 60.0
START_S = utc_s("2026-06-01", 10)
MINUTES = Timeline("n1", ("cpu",), (), None)
AWAY = range(3, 6)  # CPU 1 has no row in the intervals ending START + 3..5 minutes
USER_S = {n: 10.0 + n for n in range(12)}  # CPU 1's user seconds in the interval ending n
LATE = 60.0 - 1.0  # a span's counters are read one interval less a tenth after its end


def cpu1_total(n: int) -> float:
    """CPU 1's exposed user total after the interval ending START + n minutes: its own
    intervals' seconds, standing still while it is away."""
    return sum(USER_S[k] for k in range(1, n + 1) if k not in AWAY)


class Away(Ranged):
    """CPU 1's user counter, absent from the scrapes while it is away; the host source's
    measured time present at every scrape but those of ``missed`` (minutes)."""

    def __init__(self, missed: frozenset[int] = frozenset()) -> None:
        super().__init__(START_S + 11 * MINUTE_S + LATE)
        self.missed = missed

    def _get(self, path: str, params: Mapping[str, str]) -> object:
        query = params["query"]
        if query.startswith("count by (source)") or not (
            "esatui_cpu_seconds_total" in query or MEASURED_METRIC in query
        ):
            return super()._get(path, params)  # the node's other CPUs are there throughout
        start, end, step = (float(params[p]) for p in ("start", "end", "step"))
        measured = MEASURED_METRIC in query
        points: list[list[object]] = []
        t = start
        while t <= end + 1e-9:
            n = round((t - LATE - START_S) / MINUTE_S)
            if "last_over_time" in query:  # its last value among the bucket's own scrapes
                there = [k for k in range(n - round(step / MINUTE_S) + 1, n + 1) if k not in AWAY]
                if there and there[-1] >= 0:
                    points.append([t, str(cpu1_total(there[-1]))])
            elif 0 <= n <= 11 and n not in self.missed and (measured or n not in AWAY):
                points.append([t, str(n * MINUTE_S if measured else cpu1_total(n))])
            t += step
        labels = {"source": "host"} if measured else {"cpu": "1", "mode": "user"}
        return {"resultType": "matrix", "result": [{"metric": labels, "values": points}]}


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    set_zone(monkeypatch, "UTC")


def cpu1_user_s(reader: Away, timeline: Timeline = MINUTES) -> dict[int, float | None]:
    """CPU 1's user seconds in each interval or bucket read, by its end's minute (None: no
    row)."""
    after = START_S - 3 * MINUTE_S  # a bucket before the first that holds CPU 1's intervals
    window = reader.window(timeline, int(after * 1e6), int((START_S + 11 * MINUTE_S) * 1e6))
    out: dict[int, float | None] = {}
    for slot in reader.slots(window, ("cpu",)):
        n = round((slot.end_us / 1e6 - START_S) / MINUTE_S)
        cpus = slot.get("cpu")
        row = None if cpus is None else cpus.rows.get("1")
        value = None if row is None else row.values.get("user_us")
        out[n] = None if value is None else float(value) / 1e6
    return out


def test_the_first_interval_back_is_the_increase_since_the_entity_left() -> None:
    """Before: the interval ending at minute 6 had no row (no value one span before it)."""
    read = cpu1_user_s(Away())
    assert read[6] == pytest.approx(USER_S[6])
    assert all(read.get(n) is None for n in AWAY)
    assert all(read[n] == pytest.approx(USER_S[n]) for n in (2, 7, 11))


def test_a_gap_of_missed_scrapes_gives_no_value() -> None:
    """Minute 4's scrape missed: the source's measured time has a gap too, so the gap in
    CPU 1's series is not known to be its absence alone."""
    read = cpu1_user_s(Away(missed=frozenset({4})))
    assert read.get(6) is None
    assert read[7] == pytest.approx(USER_S[7])


def test_a_bucket_it_left_in_keeps_its_intervals_there() -> None:
    """3-minute buckets: CPU 1 had the first two intervals of (0, 3] and left in its third;
    of (3, 6] it had the last alone. Before: neither bucket had a row, and read as a gap
    across, (3, 6] would have counted (0, 3]'s two intervals."""
    read = cpu1_user_s(Away(), Timeline("n1", ("cpu",), (), 180_000_000))
    assert read[3] == pytest.approx(USER_S[1] + USER_S[2])
    assert read[6] == pytest.approx(USER_S[6])
    assert read[9] == pytest.approx(USER_S[7] + USER_S[8] + USER_S[9])
