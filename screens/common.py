"""Small pieces every screen uses: the time column, percent columns, a row of an interval,
rates, percentages, entity ordering."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from esatui.db.records import Value
from esatui.db.slots import Slot
from esatui.screens.model import NUMBER, Column, Drill, Level, Row, RowKind
from esatui.screens.model import Value as Shown

TIME = Column(
    "time",
    ("", "Time"),
    8,
    key=True,
    doc="end of the interval (local time); ~ marks one the recording covers only in part",
)


# Which source decided a CPU's type, in the words a note on the screen uses.
TYPE_SOURCES = {
    "arch": "the architecture's generic label (no source here proves CP or IFL)",
    "vmcp:QUERY VIRTUAL CPUS": "CP QUERY VIRTUAL CPUS (vmcp)",
    "vmcp:INDICATE USER": "CP INDICATE USER (vmcp)",
    "vmcp:INDICATE LOAD": "CP INDICATE LOAD (vmcp)",
    "hypfs:diag_204": "the hypervisor file system (diag 204)",
    "hypfs:tree": "the hypervisor file system (s390_hypfs)",
    "monitor": "z/VM monitor records (D1R5, D0R2)",
    "smapi": "SMAPI System_Performance_Information_Query",
    "smapi:System_Performance_Info_Query": "SMAPI System_Performance_Info_Query",
}

TYPE_ORDER = ("CP", "IFL", "ZIIP", "ZAAP", "ICF")

HYPFS_SOURCE = "hypfs:"  # how the type sources of hypfs's processors begin
HYPFS_STEAL_NOTE = (
    "No steal from the hypervisor file system: DIAGNOSE X'204' counts a processor's idle "
    "wait as time not dispatched, so it cannot tell steal from idle."
)


# Wide enough for a subtotal of 80 processors (z/VM's most) with its decimal: 8000.0.
PERCENT_WIDTH = 6


def percent_column(
    cid: str, header: tuple[str, str], group: str, doc: str, threshold: str | None = None
) -> Column:
    """A one-decimal percent column under ``group``, as ESAMON's CPU screens show, wide
    enough that a subtotal keeps its decimal."""
    return Column(cid, header, PERCENT_WIDTH, 1, "%", (group,), threshold=threshold, doc=doc)


PercentColumn = Callable[..., Column]


def percent_columns(group: str) -> PercentColumn:
    """``make(cid, top, bottom, doc, threshold=None)``: percent columns under ``group``."""

    def make(cid: str, top: str, bottom: str, doc: str, threshold: str | None = None) -> Column:
        return percent_column(cid, (top, bottom), group, doc, threshold)

    return make


def interval_row(
    slot: Slot,
    values: Mapping[str, Shown],
    levels: Mapping[str, Level] | None = None,
    *,
    drill: str | Drill | None = None,
    entity: str | None = None,
    first: bool = True,
    flags: int = 0,
    kind: RowKind = RowKind.DATA,
) -> Row:
    """A row of ``slot``'s interval; Enter on it drills into screen ``drill`` for that
    interval (and ``entity``), or where ``drill`` leads (one Drill an interval's rows share:
    an export makes hundreds of thousands of rows)."""
    if isinstance(drill, str):
        drill = Drill(drill, slot.start_us, slot.end_us, entity)
    return Row(
        slot.start_us,
        slot.end_us,
        values,
        {} if levels is None else levels,
        kind,
        first,
        drill,
        flags,
        slot.partial,
        slot.duration_us,
    )


def pct(part: Value, whole: float | None) -> float | None:
    if not isinstance(part, int | float) or not whole:
        return None
    return part * 100.0 / whole


def cpu_pct(duration_us: int, cpu_us: Value) -> float | None:
    """CPU time (µs) as a percent of one CPU over an interval of ``duration_us`` (a row
    column's way round: the duration first)."""
    return pct(number(cpu_us), duration_us)


def per_second(delta: Value, duration_us: int) -> float | None:
    if not isinstance(delta, int | float) or duration_us <= 0:
        return None
    return delta * 1_000_000 / duration_us


def ratio(a: Value, b: Value) -> float | None:
    if not isinstance(a, int | float) or not isinstance(b, int | float) or not b:
        return None
    return a / b


def number(value: object) -> float | None:
    """A numeric value as float; anything else (text, None) as None."""
    return float(value) if isinstance(value, NUMBER) else None


def total(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


_NATURAL = re.compile(r"(\d+)")


_EXACT = 2**53  # below it, the doubles hold every whole number


def whole_numbers(values: Iterable[object]) -> bool:
    """Whether each value is ``None`` or a whole number from 0 below 2**53: sums of such
    numbers that stay below 2**53 are exact, whatever the grouping of their terms."""
    return all(
        v is None or (isinstance(v, int | float) and 0 <= v < _EXACT and float(v).is_integer())
        for v in values
    )


def natural_key(key: str) -> tuple[object, ...]:
    """``cpu2`` before ``cpu10``; ``0a.0011`` ordered by card then domain."""
    return tuple(int(p) if p.isdigit() else p for p in _NATURAL.split(key))


def type_key(cpu_type: str) -> tuple[int, str]:
    upper = cpu_type.upper()
    return (TYPE_ORDER.index(upper) if upper in TYPE_ORDER else len(TYPE_ORDER), upper)


def type_notes(sources: Iterable[str]) -> tuple[str, ...]:
    """The notes on where the rows' processors came from: their CPU types' sources, and
    what hypfs cannot say."""
    found = sorted(set(sources))
    if not found:
        return ()
    described = "; ".join(TYPE_SOURCES.get(s, s) for s in found)
    hypfs = (HYPFS_STEAL_NOTE,) if any(s.startswith(HYPFS_SOURCE) for s in found) else ()
    return (f"CPU types from {described}.", *hypfs)
