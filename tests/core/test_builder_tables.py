"""Gauge tables (a gauges-only sample's way) give the very intervals readings give: same
averages to the last bit, same maxima, same counts, whatever the passes hold (fractions,
ties of 1 and 1.0, values missing, out of range, NaN, entities coming and going)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from esatui.collectors.model import (
    GaugeTable,
    Kind,
    Number,
    Reading,
    Sample,
    counter,
    gauge,
    table_readings,
)
from esatui.db.records import Interval
from esatui.sampling.builder import INT64_MAX, IntervalBuilder

KIND = Kind(
    "dev",
    "test",
    (counter("ops", "count"), gauge("depth", "count"), gauge("load", "pct"), gauge("x", "n")),
)
NAMES = ("load", "depth", "other")  # a table's own column order, with a column not a gauge

values = st.one_of(
    st.integers(0, 50),
    st.floats(0, 50, allow_nan=False).map(lambda v: round(v, 3)),
    st.sampled_from([1, 1.0, None, INT64_MAX + 1, math.nan, math.inf, -1.5]),
)
Row = tuple[Number | None, ...]
passes = st.lists(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.tuples(values, values, values)),
        min_size=0,
        max_size=3,
        unique_by=lambda kv: kv[0],
    ),
    min_size=1,
    max_size=6,
)


def full(t: int, ops: int) -> Sample:
    readings = tuple(Reading("dev", k, {"ops": ops, "depth": 2}) for k in ("a", "b", "c"))
    return Sample("test", t, readings, mono_ns=t * 1000)


def table_sample(t: int, rows: list[tuple[str, Row]]) -> Sample:
    keys = tuple(k for k, _ in rows)
    table = GaugeTable("dev", NAMES, keys, tuple(r for _, r in rows))
    return Sample("test", t, (), mono_ns=t * 1000, gauges=(table,))


def as_readings(sample: Sample) -> Sample:
    readings = tuple(r for table in sample.gauges for r in table_readings(table))
    return Sample("test", sample.time_us, readings, mono_ns=sample.mono_ns)


def run(samples: list[Sample], warnings: list[str], *, tables: bool) -> list[Interval | None]:
    """Full samples into ``add``, gauge passes (as tables, or as readings) into
    ``add_gauges``."""
    builder = IntervalBuilder("test", [KIND], warn=warnings.append)
    out: list[Interval | None] = []
    for s in samples:
        if not s.gauges:
            out.append(builder.add(s))
        else:
            builder.add_gauges(s if tables else as_readings(s))
    return out


def rows_of(intervals: list[Interval | None]) -> list[object]:
    # repr: NaN-free, and tells 1 from 1.0 and every bit of a float
    return [None if i is None else [repr(r) for r in i.rows] for i in intervals]


@settings(max_examples=300, deadline=None)
@given(passes, passes)
def test_tables_give_the_intervals_readings_give(
    first: list[list[tuple[str, Row]]], second: list[list[tuple[str, Row]]]
) -> None:
    samples = [full(0, 0)]
    t = 0
    for ops, batch in ((10, first), (25, second)):
        for rows in batch:
            t += 2_000_000
            samples.append(table_sample(t, rows))
        t += 2_000_000
        samples.append(full(t, ops))
    tabled: list[str] = []
    plain: list[str] = []
    got = run(samples, tabled, tables=True)
    want = run(samples, plain, tables=False)
    assert rows_of(got) == rows_of(want)
    assert tabled == plain


def test_same_entities_every_pass_take_the_column_way_exactly() -> None:
    rows: list[tuple[str, Row]] = [("a", (0.1, 1, None)), ("b", (0.2, 1.0, None))]
    later: list[tuple[str, Row]] = [("a", (0.7, 1.0, None)), ("b", (0.3, 1, None))]
    samples = [full(0, 0), table_sample(2, rows), table_sample(4, later), full(6, 5)]
    got = run(samples, [], tables=True)
    want = run(samples, [], tables=False)
    assert rows_of(got) == rows_of(want)
    assert len(got) == 2
    interval = got[-1]
    assert interval is not None
    a = next(r for r in interval.rows if r.key == "a")
    assert a.hf_n == 3  # two table passes and the closing sample
    assert a.values["load"] == (0.0 + 0.1 + 0.7) / 3


def test_a_full_sample_s_tables_are_rows_too() -> None:
    """A gauge table may come in a full sample as well: its entities are in the interval,
    as they are when the same values come as readings."""
    with_tables, with_readings = IntervalBuilder("test", (KIND,)), IntervalBuilder("test", (KIND,))
    got = want = None
    for t in (0, 60_000_000):
        a = full(t, 5 * t).readings[0]
        table = table_sample(t, [("b", (10, 2, None))]).gauges[0]
        got = with_tables.add(Sample("test", t, (a,), mono_ns=t * 1000, gauges=(table,)))
        readings = (a, *table_readings(table))
        want = with_readings.add(Sample("test", t, readings, mono_ns=t * 1000))
    assert got is not None and want is not None
    assert [(r.kind, r.key) for r in got.rows] == [("dev", "a"), ("dev", "b")]
    assert got.rows == want.rows
