"""Two runs side by side: a screen's value over each run's range and the delta in percent.

Laid out like seed 002's tables ("Run ID DBDN DPDN ... DPDN Delta"): one line per column of
the screen (per entity and column where the screen has entities), the first run's value, the
second's, and the second's percentage difference from the first.

A run's value over its range is the screen built on one slot holding every recorded interval
of the range, as one interval that long would have recorded it: counters summed, gauges
averaged weighted by their samples (``db/query.py``), the screen's ratios taken of those sums.
So ``vserv_us`` is ΔVSERV / ΔVNQ over the whole run, as seed 002 computes it, never an average
of per-interval averages.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from esatui import __version__
from esatui.db.navigator import Navigator
from esatui.db.reader import Reader
from esatui.screens import catalog
from esatui.screens.model import Column, ScreenModel, Value
from esatui.screens.render import date_range, exact_value, format_value
from esatui.screens.rowkey import EntityKey, entity_key, key_columns, measured_columns

DELTA_DECIMALS = 1  # seed 002 prints "-93.5%"
SIGNIFICANT = 4  # a value's digits at least, as seed 002 prints them ("0.5178")
MAX_DECIMALS = 6


def range_model(reader: Reader, name: str, query: catalog.Query) -> ScreenModel:
    """Screen ``name`` over the range ``query`` selects, as one slot: every interval of the
    screen's timeline ending in (after, until], and every other kind's intervals overlapping
    them. A model without rows says why (as ``catalog.build_model`` does)."""
    screen = catalog.get(name)
    if screen.fleet:
        raise ValueError(f"{screen.name} shows every node: compare the node screens instead")
    node = reader.node(query.node)
    if node is None:
        return catalog.build_model(reader, name, query)
    navigator = Navigator(reader, catalog.screen_timeline(screen, node, None))
    window = reader.range_window(navigator.timeline, query.after_us, query.until_us)
    if not window.spans:
        return catalog.build_model(reader, name, query)
    (whole,) = window.spans
    slots = reader.slots(window, screen.kinds)
    config = reader.config_at(node, whole.end_us)
    model = catalog.model_of(screen, slots, config, query, node, navigator.extent())
    return replace(model, from_us=whole.start_us, to_us=whole.end_us)


@dataclass(frozen=True)
class Side:
    """One run: its label (a column header), where it was read, and its one-slot model."""

    label: str
    source: str  # the database (file name), for the header
    model: ScreenModel


@dataclass(frozen=True)
class Line:
    """One column (of one entity) in both runs."""

    entity: EntityKey
    column: Column
    a: Value
    b: Value
    key_values: tuple[Value, ...]  # the key columns' values as the rows hold them

    @property
    def delta_pct(self) -> float | None:
        """The delta, where a value shows at the finest decimals a comparison prints: two
        steals of a microsecond or two over half an hour (1e-7 %) are no -50%."""
        if _below_shown(self.a) and _below_shown(self.b):
            return None
        return delta_pct(self.a, self.b)


@dataclass(frozen=True)
class Comparison:
    screen: str
    title: str
    a: Side
    b: Side
    keys: tuple[Column, ...]  # the entity's key columns (none: one row per interval)
    columns: tuple[Column, ...]  # the columns compared
    lines: tuple[Line, ...]


def delta_pct(a: Value, b: Value) -> float | None:
    """``b``'s percentage difference from ``a`` (seed 002's "DPDN Delta"); ``None`` where
    there is none to take (a value missing or text, or ``a`` zero)."""
    if not isinstance(a, int | float) or not isinstance(b, int | float) or a == 0:
        return None
    return (b - a) / abs(a) * 100.0


def _below_shown(value: Value) -> bool:
    """A number that ``MAX_DECIMALS`` show as zero."""
    return isinstance(value, int | float) and round(abs(value), MAX_DECIMALS) == 0


def compared_columns(model: ScreenModel) -> tuple[Column, ...]:
    """The columns a comparison shows: every measurement (not the time, nor the columns
    naming the entity, nor text)."""
    return measured_columns(model.columns)


def compare(a: Side, b: Side) -> Comparison:
    """Every value column of every entity of the two runs, in the first run's order (then the
    entities only the second run has; its columns where it has them: :func:`merged`)."""
    keys = key_columns(a.model.columns) or key_columns(b.model.columns)
    columns = merged(compared_columns(a.model), compared_columns(b.model))
    rows_a = {entity_key(keys, r): r for r in a.model.rows}
    rows_b = {entity_key(keys, r): r for r in b.model.rows}
    lines: list[Line] = []
    for entity in dict.fromkeys([*rows_a, *rows_b]):
        ra, rb = rows_a.get(entity), rows_b.get(entity)
        named = ra if ra is not None else rb
        assert named is not None
        key_values = tuple(named.values.get(c.id) for c in keys)  # 0, not "0", as exported
        for column in columns:
            va = None if ra is None else ra.values.get(column.id)
            vb = None if rb is None else rb.values.get(column.id)
            lines.append(Line(entity, column, exact_value(va), exact_value(vb), key_values))
    return Comparison(a.model.name, a.model.title, a, b, keys, columns, tuple(lines))


def merged(first: Sequence[Column], second: Sequence[Column]) -> tuple[Column, ...]:
    """``first``, with each column only ``second`` has after the one it follows there
    (ESASSUM's CPU types and ESACRYPA's functions are the runs' own: a CP in one run only
    goes before the IFLs, as on the screen)."""
    out = list(first)
    ids = [c.id for c in out]
    at = -1  # the place of the last of ``second``'s columns seen
    for column in second:
        if column.id in ids:
            at = ids.index(column.id)
        else:
            at += 1
            out.insert(at, column)
            ids.insert(at, column.id)
    return tuple(out)


def metric(column: Column) -> str:
    """A column's name in words: its header, after its group's label where it has one
    (``DQ/oper: Virt``; seed 002 names its lines so: "total busy per 1000 VNQs")."""
    name = _header(column)
    return f"{column.groups[-1]}: {name}" if column.groups else name


def _header(column: Column) -> str:
    return " ".join(part for part in column.header if part) or column.id


# --- text --------------------------------------------------------------------------------


def render_text(comparison: Comparison) -> str:
    """The comparison as seed 002 lays out its tables: a line per metric, each run's value
    with the screen's decimals, and the delta in percent."""
    a, b = comparison.a, comparison.b
    value_w = max(12, len(a.label), len(b.label), len(_range(a)), len(_range(b)))
    key_w = [
        max([len(c.header[1] or c.id), *(len(part(line.entity, i)) for line in comparison.lines)])
        for i, c in enumerate(comparison.keys)
    ]
    metric_w = max([6, *(len(metric(line.column)) for line in comparison.lines)])
    id_w = max([6, *(len(line.column.id) for line in comparison.lines)])
    unit_w = max([4, *(len(line.column.unit_text) for line in comparison.lines)])
    deltas = [format_delta(line.delta_pct) for line in comparison.lines]
    delta_w = max([9, *map(len, deltas)])  # a delta of 1,000,000% stays in its column

    def cells(keys: Sequence[str], name: str, cid: str, unit: str, va: str, vb: str, d: str) -> str:
        left = [k.ljust(w) for k, w in zip(keys, key_w, strict=True)]
        parts = [*left, name.ljust(metric_w), cid.ljust(id_w), unit.ljust(unit_w)]
        return " ".join([*parts, va.rjust(value_w), vb.rjust(value_w), d.rjust(delta_w)]).rstrip()

    blank = [""] * len(key_w)
    model = a.model
    out = [
        f"Screen: {comparison.screen} esatui {__version__}  compare",
        f"{comparison.title}: {a.label} against {b.label}",
    ]
    out += [f"{s.label}: {s.source} {s.model.node} {_range(s)}" for s in (a, b)]
    out += [note for note in model.notes if note.startswith("Simulated")][:1]
    out.append(cells(blank, "Run ID", "", "", a.label, b.label, "Delta"))
    keys = [c.header[1] or c.id for c in comparison.keys]
    out.append(cells(keys, "Metric", "Column", "Unit", _range(a), _range(b), ""))
    out.append(
        " ".join("-" * w for w in [*key_w, metric_w, id_w, unit_w, value_w, value_w, delta_w])
    )
    previous: EntityKey | None = None
    for line, delta in zip(comparison.lines, deltas, strict=True):
        shown = [part(line.entity, i) for i in range(len(key_w))]
        if line.entity == previous:
            shown = blank
        previous = line.entity
        out.append(
            cells(
                shown,
                metric(line.column),
                line.column.id,
                line.column.unit_text,
                _value(shown_column(line), line.a, value_w),
                _value(shown_column(line), line.b, value_w),
                delta,
            )
        )
    return "\n".join(out) + "\n"


def format_delta(delta: float | None) -> str:
    """``-93.5%``, ``13.9%``, ``0.0%`` as seed 002 prints them; ``.`` where there is none."""
    if delta is None:
        return "."
    shown = round(delta, DELTA_DECIMALS) + 0.0  # no "-0.0%"
    return f"{shown:.{DELTA_DECIMALS}f}%"


def shown_column(line: Line) -> Column:
    """The line's column with the decimals that show the larger of its two values to at
    least ``SIGNIFICANT`` digits, as seed 002 prints them ("0.5178", "1296.170"): a delta
    beside values rounded to the screen's one decimal (0.2 and 0.1 for -13.3%) reads as
    wrong."""
    column = line.column
    if column.decimals is None:
        return column
    sizes = [abs(v) for v in (line.a, line.b) if isinstance(v, float) and math.isfinite(v)]
    if not sizes or round(max(sizes), MAX_DECIMALS) == 0:
        return column  # "0.0" as the screen shows it, not "0.000000"
    digits = math.floor(math.log10(max(sizes))) + 1  # before the point (0.05: -1)
    decimals = max(column.decimals, min(MAX_DECIMALS, SIGNIFICANT - digits))
    return column if decimals == column.decimals else replace(column, decimals=decimals)


def _value(column: Column, value: Value, width: int) -> str:
    return format_value(replace(column, width=width), exact_value(value))


def part(entity: EntityKey, i: int) -> str:
    return entity[i] if i < len(entity) else ""


def _range(side: Side) -> str:
    return date_range(side.model.from_us, side.model.to_us)
