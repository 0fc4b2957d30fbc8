"""The long tail behind an aggregated interval: the distribution of the recorded interval
values inside each bucket (seed 000: "I don't like averages").

A bucket of ``--interval-len`` (or ``+`` in the monitor) shows what one interval that long
would have recorded: its counters summed, its ratios taken of the sums. That is a mean, and
a mean hides a tail. Here the same screen is built as recorded over the same range, each
recorded interval's value of a column is put into the bucket its end falls in (the rule the
buckets themselves use, ``db/buckets.py``), and per bucket and entity come the mean, the
median, the 95th and 99th percentiles and the maximum of those values: statistics **of
interval values**, never of single operations, which no source records. Percentiles are
nearest-rank (the smallest recorded value with at least p% of the values at or below it), so
each is a value some interval actually recorded. High-frequency gauges also carry their
maximum per interval (ESACRYQ's ``pending_max`` beside ``pending_avg``): their
maximum over the bucket is shown beside the interval averages.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from esatui.db.calendar import bucket_end, bucket_runs
from esatui.db.reader import Reader
from esatui.screens import catalog, stream
from esatui.screens.kind_rows import kind_row_values
from esatui.screens.model import Column, Row, ScreenModel, Value, finite_number
from esatui.screens.render import date_range, exact_value, format_duration, format_value, hms
from esatui.screens.row_columns import IntervalValue, interval_values
from esatui.screens.rowkey import (
    EntityKey,
    entity_key,
    entity_text,
    key_columns,
    measured_columns,
)
from esatui.screens.slot_columns import slot_values

STATS = ("mean", "p50", "p95", "p99", "max")
"""The statistics ``export --stats`` and the distribution view offer, in this order."""

PERCENTILES = {"p50": 50.0, "p95": 95.0, "p99": 99.0}
LOG_SPAN = 100.0  # values spanning two decades or more are binned on a log scale
LOG_STEPS = (1.0, 2.0, 5.0)  # bin edges within a decade on a log scale


class StatsError(ValueError):
    """A ``--stats`` list with a name that is not a statistic."""


def parse_stats(text: str) -> tuple[str, ...]:
    """``mean,p50,p95,p99,max`` (any of them, in any order) as the statistics' names, in
    :data:`STATS` order (the columns' order)."""
    names = {part.strip().lower() for part in text.split(",") if part.strip()}
    unknown = sorted(names - set(STATS))
    if unknown or not names:
        raise StatsError(f"unknown statistic {unknown[0]!r}" if unknown else "no statistic named")
    return tuple(s for s in STATS if s in names)


def percentile(ordered: Sequence[float], p: float) -> float:
    """The nearest-rank ``p``-th percentile of ``ordered`` (sorted, not empty): the
    smallest value with at least ``p``% of the values at or below it."""
    rank = max(1, math.ceil(p / 100.0 * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True, slots=True)
class Stats:
    """The distribution of ``n`` recorded interval values."""

    n: int
    mean: float
    p50: float
    p95: float
    p99: float
    max: float

    def get(self, name: str) -> float:
        value: float = getattr(self, name)
        return value

    @classmethod
    def of(cls, values: Iterable[float]) -> Stats | None:
        ordered = sorted(values)
        if not ordered:
            return None
        return cls(
            n=len(ordered),
            mean=math.fsum(ordered) / len(ordered),
            p50=percentile(ordered, PERCENTILES["p50"]),
            p95=percentile(ordered, PERCENTILES["p95"]),
            p99=percentile(ordered, PERCENTILES["p99"]),
            max=ordered[-1],
        )


# --- reading -----------------------------------------------------------------------------


def recorded_range(query: catalog.Query, bucketed: ScreenModel) -> tuple[int | None, int | None]:
    """(after, until]: the range the bucketed model covers, within what the query asked."""
    after = bucketed.from_us
    until = bucketed.to_us
    if query.after_us is not None:
        after = query.after_us if after is None else max(after, query.after_us)
    if query.until_us is not None:
        until = query.until_us if until is None else min(until, query.until_us)
    return after, until


def recorded_model(
    reader: Reader, name: str, query: catalog.Query, bucketed: ScreenModel
) -> ScreenModel:
    """The screen as recorded over the range the bucketed model covers (and the query asked
    for): every recorded interval inside its buckets, one row each."""
    return catalog.build_model(reader, name, _as_recorded(query, bucketed))


def _as_recorded(query: catalog.Query, bucketed: ScreenModel) -> catalog.Query:
    """The query of every recorded interval inside the bucketed model's range."""
    after, until = recorded_range(query, bucketed)
    return replace(
        query, interval_len_us=None, after_us=after, until_us=until, limit=None, snap=False
    )


def recorded_values(
    reader: Reader,
    bucketed: ScreenModel,
    query: catalog.Query,
    column_id: str,
    entity: EntityKey,
) -> list[IntervalValue]:
    """``column_id`` of ``entity`` in each recorded interval inside the bucketed model's
    range, oldest first: from the entity's own rows where the screen declares the column
    (``screens/row_columns.py``), from slots of the kinds it reads where the screen declares
    it so (``screens/slot_columns.py``), from the rows of the kind a row is made of where it
    declares that (``screens/kind_rows.py``), else from the screen built as recorded."""
    screen = catalog.get(bucketed.name)
    node = reader.node(query.node)
    if node is not None and not screen.fleet:
        after, until = recorded_range(query, bucketed)
        found = interval_values(
            reader, screen, node, column_id, entity, after, until, query.options
        )
        if found is None:
            found = slot_values(
                reader, screen, node, column_id, entity, after, until, query.options
            )
        if found is None:
            found = kind_row_values(reader, screen, node, column_id, entity, after, until, query)
        if found is not None:
            return found
        chunked = _chunked_values(reader, screen, query, bucketed, column_id, entity)
        if chunked is not None:
            return chunked
    recorded = recorded_model(reader, bucketed.name, query, bucketed)
    return entity_values(recorded, column_id, entity)


def _chunked_values(
    reader: Reader,
    screen: catalog.ScreenDef,
    query: catalog.Query,
    bucketed: ScreenModel,
    column_id: str,
    entity: EntityKey,
    chunk: int = stream.CHUNK,
) -> list[IntervalValue] | None:
    """:func:`entity_values` of the screen as recorded, built a chunk at a time where it
    streams (memory holds a chunk's rows); ``None`` where it does not, or its chunks'
    builds disagree on what they say of the range."""
    if not screen.streams:
        return None
    as_recorded = _as_recorded(query, bucketed)
    found = stream.plan(reader, screen, as_recorded)
    if found is None:
        return None
    parts = stream.Parts(oldest_first=True)
    out: list[IntervalValue] = []
    for _slots, built in stream.chunks(
        reader, screen, as_recorded, found, oldest_first=True, size=chunk
    ):
        if not parts.add(built):
            return None
        out += _entity_values(built.columns, built.rows, column_id, entity)
    return sorted(out, key=lambda v: v[0])


Cell = tuple[int, EntityKey]  # a bucket's end and an entity


def interval_rows(recorded: ScreenModel, length_us: int) -> dict[Cell, list[Row]]:
    """The recorded rows by the bucket their interval's end falls in, and entity."""
    keys = key_columns(recorded.columns)
    grouped: dict[Cell, list[Row]] = {}
    ends: dict[int, int] = {}
    for row in recorded.rows:
        b = ends.get(row.end_us)
        if b is None:
            b = ends[row.end_us] = bucket_end(row.end_us, length_us)
        grouped.setdefault((b, entity_key(keys, row)), []).append(row)
    return grouped


def finite_numbers(values: Iterable[Value]) -> list[float]:
    """The finite numbers among ``values``, by :func:`finite_number`'s rule (a finite
    float, ``x - x == 0``, is taken as it is without the call)."""
    out: list[float] = []
    for v in values:
        if type(v) is float and v - v == 0.0:
            out.append(v)
        elif (number := finite_number(v)) is not None:
            out.append(number)
    return out


def values_of(rows: Iterable[Row], column_id: str) -> list[float]:
    return [v for r in rows if (v := finite_number(r.values.get(column_id))) is not None]


def hf_max_column(model: ScreenModel, column: Column) -> Column | None:
    """The column holding the high-frequency samples' maximum of a gauge column, if the
    screen has one: ``X_max`` for ``X_avg`` or ``X`` (ESACRYQ's ``pending_max``)."""
    ids = {c.id: c for c in model.columns}
    stem = column.id.removesuffix("_avg")
    found = ids.get(f"{stem}_max")
    return found if found is not None and found.id != column.id else None


# --- export --stats ----------------------------------------------------------------------


def stat_column(column: Column, stat: str) -> Column:
    """``<col>_p95``: the statistic's column after the column it describes."""
    what = "mean" if stat == "mean" else ("maximum" if stat == "max" else f"{stat[1:]}th pct")
    return Column(
        f"{column.id}_{stat}",
        (
            column.header[1] or column.id,
            stat.capitalize() if stat in ("mean", "max") else stat.upper(),
        ),
        column.width,
        column.decimals,
        column.unit,
        column.groups,
        doc=f"{what} of the recorded interval values of {column.id} inside the interval shown",
        provisional=column.provisional,
    )


CellStats = dict[str, Value]
"""One bucket's and entity's statistics, by ``<col>_<stat>``."""


def with_stats(
    bucketed: ScreenModel, recorded: ScreenModel, length_us: int, stats: Sequence[str]
) -> ScreenModel:
    """The bucketed model with, after each value column, one column per statistic of the
    recorded interval values inside each row's bucket (``None`` where it holds none)."""
    described = measured_columns(bucketed.columns)
    cells = {
        cell: _cell_stats({c.id: values_of(rows, c.id) for c in described}, stats)
        for cell, rows in interval_rows(recorded, length_us).items()
    }
    return _with_cell_stats(bucketed, cells, length_us, stats)


def recorded_stats(
    reader: Reader,
    bucketed: ScreenModel,
    query: catalog.Query,
    stats: Sequence[str],
    chunk: int = stream.CHUNK,
) -> ScreenModel:
    """:func:`with_stats` of the screen as recorded over the bucketed model's range, read a
    chunk of recorded intervals at a time where the screen streams (memory holds one
    chunk's rows and the values of the buckets it reaches into, whatever the range), else
    built whole (:func:`recorded_model`)."""
    length_us = query.interval_len_us
    assert length_us is not None
    cells = _streamed_cell_stats(reader, bucketed, query, length_us, stats, chunk)
    if cells is None:
        recorded = recorded_model(reader, bucketed.name, query, bucketed)
        return with_stats(bucketed, recorded, length_us, stats)
    return _with_cell_stats(bucketed, cells, length_us, stats)


def _streamed_cell_stats(
    reader: Reader,
    bucketed: ScreenModel,
    query: catalog.Query,
    length_us: int,
    stats: Sequence[str],
    chunk: int,
) -> dict[Cell, CellStats] | None:
    """Each bucket's and entity's statistics from the chunks of the screen as recorded,
    oldest first, a bucket's once the chunks have passed it; ``None`` where the screen does
    not stream, or its chunks' builds disagree on what they say of the range."""
    screen = catalog.get(bucketed.name)
    if not screen.streams or screen.fleet:
        return None
    as_recorded = _as_recorded(query, bucketed)
    found = stream.plan(reader, screen, as_recorded)
    if found is None:
        return None
    described = measured_columns(bucketed.columns)
    parts = stream.Parts(oldest_first=True)
    open_cells: dict[Cell, dict[str, list[float]]] = {}  # buckets the chunks still reach
    done: dict[Cell, CellStats] = {}
    ends: dict[int, int] = {}  # an interval's end -> its bucket's
    for _slots, built in stream.chunks(
        reader, screen, as_recorded, found, oldest_first=True, size=chunk
    ):
        if not parts.add(built):
            return None
        keys = key_columns(built.columns)
        newest = None
        for row in built.rows:
            b = ends.get(row.end_us)
            if b is None:
                b = ends[row.end_us] = bucket_end(row.end_us, length_us)
            newest = b if newest is None else max(newest, b)
            cell = open_cells.setdefault((b, entity_key(keys, row)), {c.id: [] for c in described})
            for cid, values in cell.items():
                if (v := finite_number(row.values.get(cid))) is not None:
                    values.append(v)
        # a later chunk's intervals end later: no bucket before this chunk's newest grows
        for key in [k for k in open_cells if newest is not None and k[0] < newest]:
            done[key] = _cell_stats(open_cells.pop(key), stats)
        ends.clear()
    for key, of_cell in open_cells.items():
        done[key] = _cell_stats(of_cell, stats)
    return done


def _cell_stats(values: dict[str, list[float]], stats: Sequence[str]) -> CellStats:
    """The statistics of each column's values (``None`` where it has none)."""
    out: CellStats = {}
    for cid, of_column in values.items():
        summary = Stats.of(of_column)
        for s in stats:
            out[f"{cid}_{s}"] = None if summary is None else summary.get(s)
    return out


def _with_cell_stats(
    bucketed: ScreenModel, cells: dict[Cell, CellStats], length_us: int, stats: Sequence[str]
) -> ScreenModel:
    keys = key_columns(bucketed.columns)
    described = measured_columns(bucketed.columns)
    columns: list[Column] = []
    for column in bucketed.columns:
        columns.append(column)
        if column in described:
            columns += [stat_column(column, s) for s in stats]
    none = dict.fromkeys((f"{c.id}_{s}" for c in described for s in stats), None)
    rows = [
        replace(row, values={**row.values, **cells.get((row.end_us, entity_key(keys, row)), none)})
        for row in bucketed.rows
    ]
    note = (
        f"Statistics ({', '.join(stats)}) are of the recorded interval values inside each "
        f"{format_duration(length_us / 1e6)} interval, each counted once whatever its length "
        "(the value shown weights them by time), not of single operations."
    )
    return replace(
        bucketed, columns=tuple(columns), rows=tuple(rows), notes=(*bucketed.notes, note)
    )


# --- the distribution view ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bin:
    low: float
    high: float
    count: int


@dataclass(frozen=True)
class Histogram:
    bins: tuple[Bin, ...]
    log: bool  # log-scale bins: the values span two decades or more
    below: int = 0  # on a log scale: values at or below zero (no bin holds them)


def histogram(values: Sequence[float], linear_bins: int = 10) -> Histogram:
    """The values binned: on a log scale (1-2-5 edges a decade) where the positive ones span
    two decades or more (seed 000's latency charts), else ``linear_bins`` equal bins."""
    if not values:
        return Histogram((), False)
    positive = [v for v in values if v > 0]
    if positive and max(positive) / min(positive) >= LOG_SPAN:
        low = math.floor(math.log10(min(positive)))
        high = math.ceil(math.log10(max(positive)))
        edges = [s * 10.0**d for d in range(low, high) for s in LOG_STEPS] + [10.0**high]
        edges = [e for e in edges if e <= max(positive) or e == edges[-1]]
        while len(edges) > 2 and edges[1] <= min(positive):
            edges.pop(0)
        return Histogram(_count(positive, edges), True, len(values) - len(positive))
    lo, hi = min(values), max(values)
    if lo == hi:
        return Histogram((Bin(lo, hi, len(values)),), False)
    step = (hi - lo) / linear_bins
    edges = [lo + i * step for i in range(linear_bins)] + [hi]
    return Histogram(_count(values, edges), False)


def _count(values: Sequence[float], edges: Sequence[float]) -> tuple[Bin, ...]:
    """Counts in [edge, next edge), the last bin closed (values below the first edge in
    the first bin): from the values in order, a bisection per edge."""
    ordered = sorted(values)
    bins = len(edges) - 1
    # at_least[i]: how many values are in bin i or later (at or above edges[i], i >= 1)
    at_least = [len(ordered)]
    at_least += [len(ordered) - bisect.bisect_left(ordered, e) for e in edges[1:bins]]
    at_least.append(0)
    return tuple(Bin(edges[i], edges[i + 1], at_least[i] - at_least[i + 1]) for i in range(bins))


@dataclass(frozen=True, slots=True)
class BucketStats:
    """One bucket of the view: what the screen shows for it, and the distribution of the
    recorded interval values inside it."""

    start_us: int
    end_us: int
    shown: Value  # the bucket's own value (one interval that long)
    stats: Stats | None
    hf_max: float | None  # the high-frequency samples' maximum over the bucket (gauges)


@dataclass(frozen=True)
class Distribution:
    screen: str
    title: str
    node: str
    column: Column
    entity: EntityKey
    length_us: int
    recorded_us: int | None  # the recorded intervals' length, if known
    buckets: tuple[BucketStats, ...]  # newest first, as the screen lists them
    overall: Stats | None  # every interval value of the range
    histogram: Histogram
    hf_column: Column | None


def entity_values(recorded: ScreenModel, column_id: str, entity: EntityKey) -> list[IntervalValue]:
    """``column_id`` of ``entity`` in every recorded interval of the screen as recorded,
    oldest first."""
    found = _entity_values(recorded.columns, recorded.rows, column_id, entity)
    return sorted(found, key=lambda v: v[0])


def _entity_values(
    columns: Sequence[Column], rows: Iterable[Row], column_id: str, entity: EntityKey
) -> list[IntervalValue]:
    keys = key_columns(columns)
    return [(r.end_us, r.values.get(column_id)) for r in rows if entity_key(keys, r) == entity]


def distribution(
    bucketed: ScreenModel,
    recorded: Sequence[IntervalValue],
    length_us: int,
    column_id: str,
    entity: EntityKey,
    recorded_us: int | None = None,
) -> Distribution:
    """The distribution of one column of one entity: per bucket of ``bucketed`` and over
    the whole range (a histogram), of its ``recorded`` interval values, oldest first (from
    the screen as recorded, :func:`entity_values`, or the store, ``screens/row_columns.py``),
    recorded ``recorded_us`` long (if known)."""
    column = bucketed.column(column_id)
    keys = key_columns(bucketed.columns)
    hf = hf_max_column(bucketed, column)
    inside: dict[int, list[float]] = {}
    shown = [value for _, value in recorded]
    for bucket, first, stop in bucket_runs([end for end, _ in recorded], length_us):
        inside.setdefault(bucket, []).extend(finite_numbers(shown[first:stop]))
    buckets: list[BucketStats] = []
    every: list[float] = []
    for row in bucketed.rows:
        if entity_key(keys, row) != entity:
            continue
        values = inside.get(row.end_us, [])
        every += values
        hf_max = None if hf is None else finite_number(row.values.get(hf.id))
        buckets.append(
            BucketStats(
                row.start_us, row.end_us, row.values.get(column_id), Stats.of(values), hf_max
            )
        )
    return Distribution(
        bucketed.name,
        bucketed.title,
        bucketed.node,
        column,
        entity,
        length_us,
        recorded_us,
        tuple(buckets),
        Stats.of(every),
        histogram(every),
        hf,
    )


BAR = "█"


def render_lines(dist: Distribution, width: int = 100) -> list[str]:
    """The distribution view as text: a line per bucket, then the histogram."""
    c = dist.column
    w = max(c.width, 8)
    shown = replace(c, width=w)

    def fmt(value: Value) -> str:
        return format_value(shown, exact_value(value))

    length = format_duration(dist.length_us / 1e6)
    recorded = "" if dist.recorded_us is None else f" {format_duration(dist.recorded_us / 1e6)}"
    # the column as a graph's legend and the help name it, then its heading
    unit = f" [{c.unit_text}]" if c.unit else ""
    heading = " ".join(p for p in c.header if p)
    who = entity_text(dist.entity)
    lines = [
        f"Distribution: {dist.screen} {c.id}{unit}"
        + (f" ({heading})" if heading else "")
        + (f"  {who}" if who else "")
        + f"  {dist.node}",
        f"Each {length} interval: the{recorded} intervals recorded inside it; statistics of "
        "interval values, not of single operations",
    ]
    names = ["Time", "Shown", "N", "Mean", "P50", "P95", "P99", "Max"]
    if dist.hf_column is not None:
        names.append("HF max")
    lines.append(" ".join(["Time".ljust(8), *(n.rjust(w if n != "N" else 5) for n in names[1:])]))
    lines.append(" ".join(["-" * 8, *("-" * (w if n != "N" else 5) for n in names[1:])]))
    for b in dist.buckets:
        s = b.stats
        cells = [hms(b.end_us), fmt(b.shown), str(0 if s is None else s.n).rjust(5)]
        cells += [fmt(None if s is None else s.get(name)) for name in STATS]
        if dist.hf_column is not None:
            cells.append(fmt(b.hf_max))
        lines.append(" ".join(cells))
    lines += ["", *histogram_lines(dist, width)]
    return lines


def histogram_lines(dist: Distribution, width: int = 100) -> list[str]:
    h = dist.histogram
    if not h.bins:
        return ["No recorded interval values in this range."]
    total = sum(b.count for b in h.bins) + h.below
    first = dist.buckets[-1].start_us if dist.buckets else None
    last = dist.buckets[0].end_us if dist.buckets else None
    scale = "log scale: the values span decades" if h.log else "linear scale"
    lines = [f"Histogram of {total} interval values, {date_range(first, last)} ({scale})"]
    c = dist.column
    label_w = max(len(_edge(b.low, c, h.log)) for b in h.bins) if h.bins else 1
    label_w = max(label_w, *(len(_edge(b.high, c, h.log)) for b in h.bins))
    room = max(10, width - 2 * label_w - 14)
    top = max(b.count for b in h.bins) or 1
    if h.below:
        lines.append(f"{'<= 0'.rjust(2 * label_w + 3)} {str(h.below).rjust(7)} ")
    for b in h.bins:
        bar = BAR * math.ceil(b.count / top * room) if b.count else ""
        span = f"{_edge(b.low, c, h.log).rjust(label_w)} - {_edge(b.high, c, h.log).rjust(label_w)}"
        lines.append(f"{span} {str(b.count).rjust(7)} {bar}")
    return lines


def _edge(value: float, column: Column, log: bool) -> str:
    """A bin's edge: on a log scale as 1-2-5 numbers (``0.002``, ``5,000``), on a linear
    one with a decimal more than the column shows (bins are narrower than its values)."""
    if log:
        return f"{value:,.0f}" if value >= 1 else f"{value:.3g}"
    return f"{value:,.{(column.decimals or 0) + 1}f}"
