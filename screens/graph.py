"""A column of a screen over time: the series a graph draws, taken from the screen model.

A graph is made of the same model the table shows (``catalog.build_model``), so a point is
exactly the value of the cell at that interval: one series per entity (each CPU, card,
guest, lock: the row's key columns, type and id), subtotal or total, oldest first. Nothing
here draws (``screens/plot.py`` does) or imports Textual.

A range holding more intervals than a graph has points (a month of 1-minute data is 43,200)
is read in longer intervals (:func:`graph_length`): the shortest of :data:`GRAPH_LENGTHS`
that gives at most ``max_points``, so a point is the average of the intervals in it, as
``--interval-len`` makes it, and whole hours come from the hourly rollups.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from esatui.db.navigator import Navigator
from esatui.db.reader import Reader
from esatui.screens import catalog
from esatui.screens.model import Column, Row, RowKind, ScreenModel, Threshold, finite_number
from esatui.screens.rowkey import key_columns, measured_columns

MINUTE_US = 60_000_000
HOUR_US = 60 * MINUTE_US
# the lengths a long range is read in: minutes up to an hour, then whole hours (the rollups)
GRAPH_LENGTHS: tuple[int, ...] = tuple(n * MINUTE_US for n in (1, 2, 5, 10, 15, 30)) + tuple(
    n * HOUR_US for n in (1, 2, 3, 6, 12, 24, 48, 168)
)

MAX_LINES = 10
"""Lines one column draws: the busiest entities (by their highest point) and the one
emphasised; the title says how many more the screen has."""


@dataclass(frozen=True)
class Series:
    """One line: an entity's (or a subtotal's, a total's) values, one per point (``None``
    where the interval has no value for it)."""

    label: str
    values: tuple[float | None, ...]
    kind: RowKind = RowKind.DATA

    @property
    def peak(self) -> float:
        return max((v for v in self.values if v is not None), default=-math.inf)


@dataclass(frozen=True)
class Plotted:
    """A column's series, and the threshold its highlights are judged by (if any)."""

    column: Column
    series: tuple[Series, ...]
    threshold: Threshold | None = None
    omitted: int = 0  # series of the screen not drawn (beyond MAX_LINES)


@dataclass(frozen=True)
class Graph:
    """What a graph shows: points (the intervals, oldest first), one column, maybe a second
    one on its own axis (the emphasised entity's line only), and the entity emphasised."""

    screen: str
    title: str
    node: str
    starts_us: tuple[int, ...]
    ends_us: tuple[int, ...]
    primary: Plotted
    overlay: Plotted | None = None
    emphasis: str | None = None
    interval_len_s: float | None = None  # None: as recorded

    @property
    def points(self) -> int:
        return len(self.ends_us)


def numeric_columns(model: ScreenModel) -> tuple[Column, ...]:
    """The columns a graph can draw: every one with numbers but the time and the keys that
    name entities."""
    return measured_columns(model.columns)


def entity_columns(model: ScreenModel) -> tuple[Column, ...]:
    """The key columns that tell a row's entity (type and id, card, guest ...)."""
    return key_columns(model.columns)


def entity_label(keys: Sequence[Column], row: Row) -> str:
    """A row's entity in words (``IFL 2``, ``0a.0011``, ``LINUX01``); ``""`` when the
    screen has one row per interval. The text as collected: never markup."""
    parts = []
    for column in keys:
        value = row.values.get(column.id)
        if value is None or value == "":
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        parts.append(str(value))
    text = " ".join(parts)
    if row.kind is not RowKind.DATA and not text:
        return str(row.kind.value)
    return text


def column_of(model: ScreenModel, column_id: str) -> Column:
    """The numeric column ``column_id`` names (case does not matter); a ``KeyError`` says
    which ones there are."""
    for column in numeric_columns(model):
        if column.id.lower() == column_id.lower():
            return column
    names = ", ".join(c.id for c in numeric_columns(model))
    raise KeyError(f"{model.name} has no numeric column {column_id!r} (columns: {names})")


def graph_of(
    model: ScreenModel,
    column_id: str,
    overlay_id: str | None = None,
    emphasis: str | None = None,
    thresholds: Mapping[str, Threshold] | None = None,
) -> Graph:
    """The graph of ``column_id`` (and ``overlay_id``) over the model's rows."""
    column = column_of(model, column_id)
    second = None if overlay_id is None else column_of(model, overlay_id)
    keys = entity_columns(model)
    ends = sorted({r.end_us for r in model.rows})
    index = {end: i for i, end in enumerate(ends)}
    starts = [0] * len(ends)
    labels: dict[str, RowKind] = {}
    cells: dict[tuple[str, str], list[float | None]] = {}
    wanted = [column] if second is None else [column, second]
    for row in model.rows:
        i = index[row.end_us]
        starts[i] = row.start_us
        label = entity_label(keys, row)  # "": the screen's one row per interval
        labels.setdefault(label, row.kind)
        for c in wanted:
            values = cells.setdefault((c.id, label), [None] * len(ends))
            values[i] = finite_number(row.values.get(c.id))
    limits = thresholds or {}

    def plotted(c: Column, only: str | None) -> Plotted:
        series = [
            Series(label, tuple(cells.get((c.id, label), ())), kind)
            for label, kind in labels.items()
            if only is None or label == only
        ]
        drawn = _busiest(series, emphasis)
        threshold = limits.get(c.threshold) if c.threshold else None
        return Plotted(c, tuple(drawn), threshold, len(series) - len(drawn))

    if emphasis not in labels:
        emphasis = None if len(labels) > 1 else next(iter(labels), None)
    overlay = None
    if second is not None:
        only = emphasis or next(
            (label for label, kind in labels.items() if kind is not RowKind.DATA),
            next(iter(labels), None),
        )
        overlay = plotted(second, only)
    return Graph(
        screen=model.name,
        title=model.title,
        node=model.node,
        starts_us=tuple(starts),
        ends_us=tuple(ends),
        primary=plotted(column, None),
        overlay=overlay,
        emphasis=emphasis,
        interval_len_s=model.interval_len_s,
    )


def _busiest(series: list[Series], emphasis: str | None) -> list[Series]:
    """At most MAX_LINES series, the emphasised one always, then the highest peaks, in the
    screen's order."""
    if len(series) <= MAX_LINES:
        return series
    ranked = sorted(series, key=lambda s: (s.label != emphasis, -s.peak))[:MAX_LINES]
    keep = {s.label for s in ranked}
    return [s for s in series if s.label in keep]


def graph_length(
    reader: Reader,
    screen: catalog.ScreenDef,
    node: str | None,
    after_us: int | None,
    until_us: int | None,
    length_us: int | None,
    max_points: int,
) -> int | None:
    """The interval length to read (after_us, until_us] in: ``length_us`` when that gives at
    most ``max_points`` intervals, else the shortest of GRAPH_LENGTHS that does."""
    navigator = Navigator(reader, catalog.screen_timeline(screen, node, None))
    extent = navigator.extent()
    recorded = navigator.recorded_length_us()
    if extent is None or recorded is None:
        return length_us
    start = extent.start_us if after_us is None else max(after_us, extent.start_us)
    end = extent.end_us if until_us is None else min(until_us, extent.end_us)
    step = max(length_us or recorded, recorded)
    if (end - start) / step <= max_points:
        return length_us
    for candidate in GRAPH_LENGTHS:
        if candidate >= step and (end - start) / candidate <= max_points:
            return candidate
    return GRAPH_LENGTHS[-1]


def load_graph(
    reader: Reader,
    screen_name: str,
    query: catalog.Query,
    column_id: str,
    overlay_id: str | None = None,
    emphasis: str | None = None,
    max_points: int | None = None,
) -> tuple[Graph, ScreenModel]:
    """The graph of a screen's column over the range ``query`` selects (with
    ``max_points``, read in intervals long enough that there are no more points than
    that), and the model it was drawn from."""
    screen = catalog.get(screen_name)
    if max_points is not None and query.limit is None and not screen.fleet:
        length = graph_length(
            reader,
            screen,
            reader.node(query.node),
            query.after_us,
            query.until_us,
            query.interval_len_us,
            max_points,
        )
        query = replace(query, interval_len_us=length)
    model = catalog.build_model(reader, screen.name, query)
    graph = graph_of(model, column_id, overlay_id, emphasis, query.thresholds)
    return graph, model


# --- ESASSUM's header: the day at a glance ------------------------------------------------

SPARK_BARS = "▁▂▃▄▅▆▇█"
HOURS = 24
DAY_US = HOURS * HOUR_US
SPARKLINES = 3
"""ESASSUM's busiest columns shown as sparklines in its header."""


def sparkline(values: Sequence[float | None], top: float) -> str:
    """One bar per value, from 0 to ``top`` (a blank where there is no value)."""
    if top <= 0:
        top = 1.0
    last = len(SPARK_BARS) - 1
    return "".join(
        " " if v is None else SPARK_BARS[max(0, min(last, round(v / top * last)))] for v in values
    )


def day_sparklines(
    reader: Reader, node: str | None, until_us: int, thresholds: Mapping[str, Threshold]
) -> tuple[str, ...]:
    """ESASSUM's busiest percentage columns (by their mean) over the 24 hours up to
    ``until_us``, an hourly bar each (read from the hourly rollups): one note line each."""
    query = catalog.Query(
        node=node,
        after_us=until_us - DAY_US,
        until_us=until_us,
        interval_len_us=HOUR_US,
        thresholds=thresholds,
    )
    model = catalog.build_model(reader, "ESASSUM", query)
    rows = sorted(model.rows, key=lambda r: r.end_us)
    ranked: list[tuple[float, Column, list[float | None]]] = []
    for column in numeric_columns(model):
        if column.unit != "%":
            continue
        values: list[float | None] = [None] * HOURS
        for r in rows:  # hour by hour, the newest last; an hour without data blank
            slot = HOURS - 1 - (rows[-1].end_us - r.end_us) // HOUR_US
            if 0 <= slot < HOURS:
                values[slot] = finite_number(r.values.get(column.id))
        known = [v for v in values if v is not None]
        if known and max(known) > 0:
            ranked.append((sum(known) / len(known), column, values))
    ranked.sort(key=lambda item: -item[0])
    width = max((len(c.id) for _, c, _ in ranked[:SPARKLINES]), default=0)
    lines = []
    for _, column, values in ranked[:SPARKLINES]:
        known = [v for v in values if v is not None]
        top = max(known)
        low, high = _range_text(min(known), top, column.decimals)
        lines.append(f"{column.id:<{width}} {sparkline(values, top)} {low}-{high}% (24 h, hourly)")
    return tuple(lines)


def _range_text(low: float, high: float, decimals: int | None) -> tuple[str, str]:
    """A sparkline's lowest and highest values in the column's decimals, or in as many as
    give the highest two significant digits (esatui's own CPU, 0.013 to 0.021%, read
    '0.0-0.0%' at one decimal)."""
    places = 1 if decimals is None else decimals
    if high > 0:
        places = max(places, 1 - math.floor(math.log10(high)))
    return f"{low:.{places}f}", f"{high:.{places}f}"
