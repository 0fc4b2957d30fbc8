"""Issue 13 items 2 and 4: readings out of range are the entity's problem, never the
interval's; counters of a declared width wrap; counters documented as able to go back a
little (iowait) are not resets."""

from __future__ import annotations

from pathlib import Path

from esatui.collectors.host import CPU
from esatui.collectors.model import Kind, Reading, Sample, counter, gauge
from esatui.collectors.monitor.kinds import CRYPTO, CRYPTO_KEY
from esatui.db.records import Flag, Interval
from esatui.db.sqlite_reader import SqliteReader
from esatui.db.store import Store
from esatui.sampling.builder import IntervalBuilder
from tests.fixtures.reading import sql

U64_MAX = 2**64 - 1
QUEUES = Kind(
    "queue",
    "test",
    (counter("request_count", "count"), gauge("requestq_count", "count")),
)


def _sample(t_s: int, *readings: Reading) -> Sample:
    return Sample("test", t_s * 1_000_000, readings)


def _values(interval: Interval | None, key: str) -> dict[str, object]:
    assert interval is not None
    (row,) = [r for r in interval.rows if r.key == key]
    return dict(row.values)


def _cpu(iowait: int, idle: int, user: int) -> Reading:
    values: dict[str, int | None] = {f.name: 0 for f in CPU.counters}
    values.update(iowait_us=iowait, idle_us=idle, user_us=user)
    return Reading("cpu", "0", values)


def test_iowait_going_back_one_tick_is_not_a_reset() -> None:
    """Before: the decrease made iowait's whole cumulative value the delta (98% wait)."""
    builder = IntervalBuilder("host", [CPU])
    builder.add(_sample(0, _cpu(iowait=5_000_000_000, idle=9_000_000, user=1_000_000)))
    interval = builder.add(
        _sample(60, _cpu(iowait=4_999_990_000, idle=39_000_000, user=31_000_000))
    )
    values = _values(interval, "0")
    assert values["iowait_us"] == 0
    assert values["idle_us"] == 30_000_000 and values["user_us"] == 30_000_000
    assert interval is not None and not interval.flags & Flag.RESET


def test_iowait_follows_a_reset_the_other_counters_show() -> None:
    builder = IntervalBuilder("host", [CPU])
    builder.add(_sample(0, _cpu(iowait=5_000_000, idle=90_000_000, user=10_000_000)))
    interval = builder.add(_sample(60, _cpu(iowait=1_000, idle=2_000_000, user=3_000_000)))
    values = _values(interval, "0")
    assert values["iowait_us"] == 1_000 and values["idle_us"] == 2_000_000
    assert interval is not None and interval.flags & Flag.RESET


def _crypto(virt_nq: int) -> Reading:
    return Reading("crypto", CRYPTO_KEY, {"virt_nq": virt_nq, "real_nq": 10})


def test_a_u64_monitor_counter_that_passes_its_top_wraps() -> None:
    builder = IntervalBuilder("monitor", [CRYPTO])
    builder.add(_sample(0, _crypto(U64_MAX - 4)))
    interval = builder.add(_sample(60, _crypto(5)))
    assert _values(interval, CRYPTO_KEY)["virt_nq"] == 10
    assert interval is not None and not interval.flags & Flag.RESET


def test_a_bad_u64_reading_is_left_out_and_the_next_delta_is_exact() -> None:
    """Before: 2**64-1 in a D5R9 counter dropped the interval, and the next one showed 117
    million NQ a second. Now the value is left out of its interval with a warning, and the
    last good reading stays the base, so the sum over both intervals is exact."""
    said: list[str] = []
    builder = IntervalBuilder("monitor", [CRYPTO], warn=said.append)
    builder.add(_sample(0, _crypto(1000)))
    first = _values(builder.add(_sample(60, _crypto(U64_MAX))), CRYPTO_KEY)
    second = _values(builder.add(_sample(120, _crypto(1100))), CRYPTO_KEY)
    assert "virt_nq" not in first and first["real_nq"] == 0
    assert second["virt_nq"] == 100
    assert len(said) == 1 and "virt_nq" in said[0] and str(U64_MAX) in said[0]


def _queue(key: str, requests: int, queued: int) -> Reading:
    return Reading("queue", key, {"request_count": requests, "requestq_count": queued})


def test_a_sysfs_value_of_2_64_minus_1_loses_only_that_value(db_path: Path) -> None:
    """Before: one requestq_count of 18446744073709551615 lost all six devices for two
    intervals (SQLite INTEGER is signed 64-bit and the whole write failed)."""
    said: list[str] = []
    builder = IntervalBuilder("zcrypt", [QUEUES], warn=said.append)
    keys = [f"0{n}.0011" for n in range(6)]
    builder.add(_sample(0, *(_queue(k, 10, 0) for k in keys)))
    bad = [_queue(k, 20, U64_MAX if k == keys[2] else 1) for k in keys]
    intervals = [builder.add(_sample(60, *bad))]
    intervals.append(builder.add(_sample(120, *(_queue(k, 30, 2) for k in keys))))
    with Store.open(db_path) as store:
        store.register("zcrypt", [QUEUES])
        for interval in intervals:
            assert interval is not None
            assert store.write(
                Interval(
                    interval.source,
                    "n1",
                    interval.start_us,
                    interval.end_us,
                    interval.duration_us,
                    interval.rows,
                )
            )
    assert sql(db_path, "SELECT COUNT(*) FROM k_queue") == [(12,)]
    rows = sql(db_path, "SELECT request_count, requestq_count FROM k_queue")
    assert sorted(rows, key=str)[0] == (10, 1.0)
    assert (10, None) in rows  # the bad gauge alone is missing
    with SqliteReader.open(db_path) as reader:
        assert reader.queries.interval_count() == 2
    assert len(said) == 1 and keys[2] in said[0]


def test_non_finite_gauges_are_left_out() -> None:
    builder = IntervalBuilder("zcrypt", [QUEUES])
    builder.add(_sample(0, Reading("queue", "a", {"request_count": 1, "requestq_count": 1.0})))
    interval = builder.add(
        _sample(60, Reading("queue", "a", {"request_count": 2, "requestq_count": float("nan")}))
    )
    assert "requestq_count" not in _values(interval, "a")
