"""The interval builder: deltas over measured durations, resets, hot-plug, gauges."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from esatui.collectors.kinds import GUEST
from esatui.collectors.model import Kind, Reading, Sample, SampleFlag, counter, gauge
from esatui.db.records import Flag, Interval
from esatui.sampling.builder import IntervalBuilder

KIND = Kind(
    "thing", "test", (counter("ops", "count"), counter("busy_us", "us"), gauge("queue", "count"))
)


def sample(t: int, *readings: Reading, mono: int | None = None, flags: int = 0) -> Sample:
    return Sample("test", t, tuple(readings), mono_ns=mono, flags=flags)


def thing(key: str, ops: int | None, queue: float | None = None, busy: int | None = 0) -> Reading:
    return Reading("thing", key, {"ops": ops, "busy_us": busy, "queue": queue}, {"type": "A"})


def only(interval: Interval | None, key: str = "a") -> dict[str, object]:
    assert interval is not None
    return {k: v for r in interval.rows if r.key == key for k, v in r.values.items()}


def test_first_sample_opens_the_interval() -> None:
    builder = IntervalBuilder("test", [KIND])
    assert builder.add(sample(1_000_000, thing("a", 5))) is None


def test_deltas_over_the_measured_duration() -> None:
    builder = IntervalBuilder("test", [KIND])
    builder.add(sample(10_000_000, thing("a", 100, busy=1000), mono=5_000_000_000))
    interval = builder.add(sample(70_000_000, thing("a", 160, busy=4000), mono=64_999_000_000))
    assert interval is not None
    assert interval.start_us == 10_000_000 and interval.end_us == 70_000_000
    assert interval.duration_us == 59_999_000  # the monotonic clock, not the wall clock
    assert only(interval)["ops"] == 60
    assert only(interval)["busy_us"] == 3000
    assert interval.flags == 0


def test_wall_clock_duration_when_the_source_carries_its_own_time() -> None:
    builder = IntervalBuilder("test", [KIND])
    builder.add(sample(0, thing("a", 0)))
    interval = builder.add(sample(60_000_000, thing("a", 1)))
    assert interval is not None and interval.duration_us == 60_000_000


def test_a_counter_that_goes_backwards_is_a_reset_never_negative() -> None:
    builder = IntervalBuilder("test", [KIND])
    builder.add(sample(0, thing("a", 1000)))
    interval = builder.add(sample(1_000_000, thing("a", 7)))
    assert interval is not None
    assert only(interval)["ops"] == 7
    assert interval.rows[0].flags & Flag.RESET
    assert interval.flags & Flag.RESET


def test_entities_appear_and_vanish() -> None:
    builder = IntervalBuilder("test", [KIND])
    builder.add(sample(0, thing("a", 1), thing("b", 1)))
    interval = builder.add(sample(1_000_000, thing("a", 2), thing("c", 50)))
    assert interval is not None
    assert [r.key for r in interval.rows] == ["a"]  # b vanished; c has no delta yet
    interval = builder.add(sample(2_000_000, thing("a", 3), thing("c", 55)))
    assert interval is not None
    assert only(interval, "c")["ops"] == 5


def test_a_newcomer_with_gauges_is_flagged_new_and_keeps_its_gauges() -> None:
    builder = IntervalBuilder("test", [KIND])
    builder.add(sample(0, thing("a", 1, 0.0)))
    interval = builder.add(sample(1_000_000, thing("a", 2, 1.0), thing("n", 9, 4.0)))
    assert interval is not None
    row = next(r for r in interval.rows if r.key == "n")
    assert row.flags & Flag.NEW
    assert "ops" not in row.values
    assert row.values["queue"] == 4.0


def test_missing_values_stay_missing() -> None:
    builder = IntervalBuilder("test", [KIND])
    builder.add(sample(0, thing("a", None, busy=None)))
    interval = builder.add(sample(1_000_000, thing("a", 5, busy=None)))
    assert "ops" not in only(interval) and "busy_us" not in only(interval)


def test_high_frequency_gauges_are_averaged_and_maxed() -> None:
    builder = IntervalBuilder("test", [KIND])
    builder.add(sample(0, thing("a", 0, 100.0)))  # belongs to the interval before
    for t, q in ((2, 1.0), (4, 5.0), (6, 0.0)):
        builder.add_gauges(sample(t * 1_000_000, thing("a", None, q)))
    interval = builder.add(sample(8_000_000, thing("a", 10, 2.0)))
    values = only(interval)
    assert values["queue"] == (1 + 5 + 0 + 2) / 4
    assert values["queue_max"] == 5.0
    assert interval is not None and interval.rows[0].hf_n == 4


def test_gap_flags_reach_the_interval() -> None:
    builder = IntervalBuilder("test", [KIND])
    builder.add(sample(0, thing("a", 0)))
    interval = builder.add(sample(1_000_000, thing("a", 1), flags=SampleFlag.GAP))
    assert interval is not None and interval.flags & Flag.GAP


def test_a_clock_that_does_not_advance_gives_no_interval() -> None:
    builder = IntervalBuilder("test", [KIND])
    builder.add(sample(5, thing("a", 0)))
    assert builder.add(sample(5, thing("a", 1))) is None


def test_unknown_kinds_are_ignored() -> None:
    builder = IntervalBuilder("test", [KIND])
    builder.add(sample(0, Reading("other", "x", {"v": 1})))
    interval = builder.add(sample(1, Reading("other", "x", {"v": 2})))
    assert interval is not None and interval.rows == ()


counters = st.lists(st.integers(0, 10**12), min_size=2, max_size=40)


@given(counters)
def test_deltas_are_never_negative(values: list[int]) -> None:
    builder = IntervalBuilder("test", [KIND])
    for t, v in enumerate(values):
        interval = builder.add(sample(t * 1000, thing("a", v)))
        if interval is not None:
            delta = only(interval)["ops"]
            assert isinstance(delta, int) and delta >= 0


@given(
    st.lists(st.integers(0, 10**9), min_size=2, max_size=30).map(sorted),
    st.lists(st.floats(0, 1e6, allow_nan=False), min_size=2, max_size=30),
    st.integers(0, 4),
)
def test_n_intervals_aggregate_exactly_into_one(
    increasing: list[int], queue: list[float], hf_per_interval: int
) -> None:
    """What the store does with N recorded intervals (sum the deltas, weight the gauge
    averages by their sample counts, max the maxima) equals what one long interval over the
    same samples records."""
    n = min(len(increasing), len(queue))
    fine = IntervalBuilder("test", [KIND])
    coarse = IntervalBuilder("test", [KIND])
    deltas, weighted, counts, maxima = 0, 0.0, 0, []
    for i in range(n):
        for h in range(hf_per_interval):
            hf = sample(i * 10_000 + h + 1, thing("a", None, queue[i] / (h + 2)))
            fine.add_gauges(hf)
            coarse.add_gauges(hf)
        full = sample(i * 10_000 + 5000, thing("a", increasing[i], queue[i]))
        interval = fine.add(full)
        if i in (0, n - 1):
            whole = coarse.add(full)
        else:
            coarse.add_gauges(full)  # inside the long interval it is just one more sample
        if interval is None:
            continue
        row = interval.rows[0]
        ops, q, q_max = row.values["ops"], row.values["queue"], row.values["queue_max"]
        assert isinstance(ops, int) and isinstance(q, float) and isinstance(q_max, float)
        deltas += ops
        weighted += q * row.hf_n
        counts += row.hf_n
        maxima.append(q_max)
    assert whole is not None
    row = whole.rows[0]
    assert deltas == row.values["ops"] == increasing[n - 1] - increasing[0]
    assert counts == row.hf_n
    assert row.values["queue_max"] == max(maxima)
    assert weighted / counts == pytest.approx(row.values["queue"], rel=1e-12, abs=1e-9)


def guest(name: str, elapsed_s: float, cpu_s: float, using: int, total: int) -> Reading:
    """A z/VM guest as DIAGNOSE X'2FC' gives it: counters since its logon."""
    values: dict[str, int | float | None] = {
        "elapsed_us": round(elapsed_s * 1e6),
        "cpu_us": round(cpu_s * 1e6),
        "samp_cpu": using,
        "samp_total": total,
        "vcpus": 2,
    }
    return Reading("guest", name, values, {"userid": name})


MINUTE = 60_000_000


def test_a_guest_that_logged_off_and_on_counts_its_new_session_alone() -> None:
    """Logged on an hour (5 s of CPU), then off and on again 20 s before the next sample
    (8 s of CPU since): the interval holds the new session's counters, all of them (not a
    mix of the sessions' per-field differences), flagged a reset."""
    builder = IntervalBuilder("hypfs", [GUEST])
    builder.add(Sample("hypfs", 0, (guest("LINUX01", 3600, 5, 400, 3600),)))
    interval = builder.add(Sample("hypfs", MINUTE, (guest("LINUX01", 20, 8, 3, 20),)))
    assert interval is not None
    (row,) = interval.rows
    values = {k: row.values[k] for k in ("elapsed_us", "cpu_us", "samp_cpu", "samp_total")}
    assert values == {
        "elapsed_us": 20_000_000,
        "cpu_us": 8_000_000,
        "samp_cpu": 3,
        "samp_total": 20,
    }
    assert row.flags & Flag.RESET and interval.flags & Flag.RESET


def test_a_guest_that_logged_on_within_the_interval_counts_from_its_logon() -> None:
    """New to the source and 20 s old: its counters are all the interval's (a boot's CPU
    burst is not lost); a guest logged on long before, new to the source, has no delta yet;
    one logged on throughout, the usual delta."""
    builder = IntervalBuilder("hypfs", [GUEST])
    builder.add(Sample("hypfs", 0, (guest("OLD", 100, 1, 10, 100),)))
    readings = (
        guest("OLD", 160, 4, 16, 160),
        guest("NEW", 20, 8, 3, 20),
        guest("SEEN", 9e3, 9, 9, 9),
    )
    interval = builder.add(Sample("hypfs", MINUTE, readings))
    assert interval is not None
    rows = {r.key: r for r in interval.rows}
    assert rows["NEW"].values["cpu_us"] == 8_000_000 and rows["NEW"].flags == Flag.RESET
    assert "cpu_us" not in rows["SEEN"].values and rows["SEEN"].flags == Flag.NEW
    assert rows["OLD"].values["cpu_us"] == 3_000_000 and rows["OLD"].flags == 0


def test_a_guest_logged_on_just_before_the_interval_is_not_new_again() -> None:
    """Logged on 2 s before the previous sample: 62 s old at this one, more than the
    interval less a tenth (the clocks' jitter): the usual delta."""
    builder = IntervalBuilder("hypfs", [GUEST])
    builder.add(Sample("hypfs", 0, (guest("G", 2, 1, 1, 2),)))
    interval = builder.add(Sample("hypfs", MINUTE, (guest("G", 62, 3, 5, 62),)))
    assert interval is not None
    (row,) = interval.rows
    assert row.values["cpu_us"] == 2_000_000 and row.flags == 0
