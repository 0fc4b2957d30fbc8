"""The screen model: what a screen shows, independent of how it is shown.

A model is built from recorded intervals by a pure function (see ``catalog``); the Textual
view, the text report, CSV and JSON all render the same model, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, IntEnum

Value = int | float | str | None


class Level(IntEnum):
    """How much a value needs attention."""

    NONE = 0
    WARN = 1
    CRIT = 2


MARKERS = {Level.NONE: " ", Level.WARN: "*", Level.CRIT: "!"}


@dataclass(frozen=True, slots=True)
class Threshold:
    warn: float
    crit: float

    def level(self, value: Value, decimals: int | None = None) -> Level:
        """The level of ``value`` as shown with ``decimals``: a 2.00 is never marked on one
        row and not on the next."""
        if not isinstance(value, int | float):
            return Level.NONE
        if decimals is not None:
            value = round(value, decimals)
        if value >= self.crit:
            return Level.CRIT
        if value >= self.warn:
            return Level.WARN
        return Level.NONE


DEFAULT_THRESHOLDS: Mapping[str, Threshold] = {
    "steal": Threshold(10.0, 25.0),
    "dserv_pct": Threshold(50.0, 80.0),
    "dq_per_op": Threshold(2.0, 5.0),
}


@dataclass(frozen=True, slots=True)
class Column:
    id: str
    header: tuple[str, str]  # two header lines, top and bottom
    width: int
    decimals: int | None = None  # None: a text column
    unit: str = ""
    groups: tuple[str, ...] = ()  # group labels, outermost first
    key: bool = False  # shown on every horizontal page (time, type, id)
    repeat: bool = True  # False: blank when equal to the row above in the same interval
    threshold: str | None = None  # name in the thresholds map; the column gets a marker slot
    drill: str | None = None  # screen to drill into from this column (ESASSUM)
    provisional: bool = False  # computed from fields whose layout is not publicly verified
    doc: str = ""

    @property
    def is_text(self) -> bool:
        return self.decimals is None

    @property
    def cell_width(self) -> int:
        return self.width + (1 if self.threshold else 0)


class RowKind(Enum):
    DATA = "data"
    SUBTOTAL = "subtotal"
    TOTAL = "total"


@dataclass(frozen=True, slots=True)
class Drill:
    """Where Enter leads from a row: a screen for one interval, maybe one entity."""

    screen: str
    start_us: int
    end_us: int
    entity: str | None = None


@dataclass(frozen=True, slots=True)
class Row:
    start_us: int
    end_us: int  # the interval's end: the time a row is shown at
    values: Mapping[str, Value]
    levels: Mapping[str, Level] = field(default_factory=dict)
    kind: RowKind = RowKind.DATA
    first: bool = True  # first row of its interval
    drill: Drill | None = None
    flags: int = 0


@dataclass(frozen=True, slots=True)
class ScreenModel:
    name: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    node: str = ""
    machine: str = ""  # machine type, e.g. 2964
    system: str = ""  # LPAR name or serial
    from_us: int | None = None
    to_us: int | None = None
    interval_len_s: float | None = None
    notes: tuple[str, ...] = ()
    flags_legend: bool = False  # rows show their flags (a marker after the row, a JSON key)
    header: Mapping[str, Value] = field(default_factory=dict)  # named values the header shows

    def column(self, column_id: str) -> Column:
        for c in self.columns:
            if c.id == column_id:
                return c
        raise KeyError(column_id)
