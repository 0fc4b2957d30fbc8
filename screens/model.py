"""The screen model: what a screen shows, independent of how it is shown.

A model is built from recorded intervals by a pure function (see ``catalog``); the Textual
view, the text report, CSV and JSON all render the same model, so they cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, IntEnum

from esatui.db.reader import Extent

Value = int | float | str | None


def finite_number(value: object) -> float | None:
    """A value that is a finite number, as a float (text, ``None``, a bool, inf and nan are
    not): what a graph draws and a statistic takes."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


NUMBER = (int, float)  # isinstance with a tuple: quicker than with int | float


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
    # whether its gate (THRESHOLD_GATES) holds it back: not where a user set it alone
    gated: bool = True

    def level(self, value: Value, decimals: int | None = None) -> Level:
        """The level of ``value`` as shown with ``decimals``: a 2.00 is never marked on one
        row and not on the next."""
        if not isinstance(value, NUMBER):
            return Level.NONE
        if decimals is not None:
            value = round(value, decimals)
        if value >= self.crit:
            return Level.CRIT
        if value >= self.warn:
            return Level.WARN
        return Level.NONE

    def help(self, name: str) -> str:
        """One line for the help: the levels, what they mark, and why."""
        doc = THRESHOLD_DOCS.get(name)
        if doc is None:
            return f"{name} (* at {self.warn:,g}, ! at {self.crit:,g})"
        unit = f" {doc.unit}" if doc.unit else ""
        levels = f"* at {self.warn:,g}{unit}, ! at {self.crit:,g}{unit}"
        return f"{name} ({levels}): {doc.marks}. Why: {doc.why}."


@dataclass(frozen=True, slots=True)
class ThresholdDoc:
    """What a threshold marks, in which unit, and why its default is where it is."""

    unit: str
    marks: str
    why: str


# The defaults leave the seeds' normal intervals unmarked and mark what costs: polling is
# judged by unsuccessful dequeues that are many both per second and per operation, never by
# the DQ/operation ratio alone, which explodes at low load while costing nothing (seed 000's
# 10:36 row of 03/06: 437 polls per operation at 0.6 operations a second), nor by the rate
# alone, which a busy system reaches at the kernel's own two dequeues per operation (seed
# 002's Tables 1-2). A test runs every seed row through them.
DEFAULT_THRESHOLDS: Mapping[str, Threshold] = {
    "steal": Threshold(10.0, 25.0),
    "dserv_pct": Threshold(50.0, 80.0),
    "dserv_us": Threshold(2000.0, 5000.0),
    "unsucc_dq_s": Threshold(10_000.0, 50_000.0),
    "dq_per_op": Threshold(3.0, 5.0),
    "busy_per_kvnq": Threshold(3.0, 6.0),
    "spin_pct": Threshold(10.0, 25.0),
}

THRESHOLD_DOCS: Mapping[str, ThresholdDoc] = {
    "steal": ThresholdDoc(
        "%",
        "time a CPU wanted to run and the hypervisor ran something else",
        "SPEC defaults: 10% is felt in response times, 25% means the CPU is badly "
        "overcommitted; seed 000's busiest ESACPUU row steals 5.3%",
    ),
    "dserv_pct": ThresholdDoc(
        "%",
        "DSERV as % of VSERV, when DSERV itself reaches dserv_us",
        "50%: the guests' wait for the reply is as long as everything else together; 80%: "
        "it is the service time",
    ),
    "dserv_us": ThresholdDoc(
        "µs",
        "DSERV per operation: gates dserv_pct, so only a wait that matters is marked",
        "a guest polling every 1,500 µs (the kernel's z/VM default) waits up to that for "
        "each reply: seed 002's default runs, DSERV 1,240-1,420 µs, are that timer at work, "
        "not a problem. 2,000 µs is more than the default timer explains: the guest was not "
        "there to take its replies (not dispatched, short of CPU); 5,000 µs is the time of a "
        "whole RSA 2048 operation in software (seed 000: 3 to 13 ms)",
    ),
    "unsucc_dq_s": ThresholdDoc(
        "/s",
        "guest dequeues that found no reply, per second: the CPU polling costs, for the "
        "guests and for CP, which intercepts each one; only when the guests' dequeues "
        "per operation also reach dq_per_op",
        "seed 002: about 200,000 per 30-s monitor interval (6,667 a second, one per "
        "operation) at the default poll time, about 6,000,000 (200,000 a second) at 50 µs; "
        "10,000/s is a guest polling far more often than its replies arrive, unless it "
        "does that many operations: the kernel's own enqueue is followed by a dequeue that "
        "finds nothing, so a system doing 50,000 operations a second reaches 50,000 without "
        "polling more than it needs (seed 002's Tables 1-2, 46,700 to 174,800 a second)",
    ),
    "dq_per_op": ThresholdDoc(
        "DQ/op",
        "dequeues per operation, only when the dequeues beyond one per operation also "
        "reach unsucc_dq_s per second",
        "two per operation is the kernel's floor (the dequeue after its enqueue finds "
        "nothing, the next takes the reply; seed 002's single-thread runs at the default "
        "poll time: 2.0), so 3 is a poll that found nothing beyond it in every operation; "
        "that and 5 mean much only at a rate where they cost: seed 000's normal 3.6 at 5 "
        "operations a second (13 unsuccessful DQs a second) and its 437 at 0.6 a second "
        "(03/06 10:36) cost nothing and are not marked",
    ),
    "busy_per_kvnq": ThresholdDoc(
        "% per 1000 VNQ/s",
        "the CPU a crypto operation costs (ESAPOLL's total busy per 1000 VNQ; 1.0 = 10 µs "
        "an operation), only when the guests' unsuccessful dequeues also reach unsucc_dq_s",
        "seed 002's Tables 1-3 cost 1.15 to 2.07 (11 to 21 µs an operation) under every "
        "setting they try; 3 is half again the costliest of them (a 50 µs poll timeout "
        "costs about that), 6 three times it. Without polling that costs, a high figure is "
        "the rest of the LPAR's work spread over a few operations (an upper bound, the "
        "screen says), not what crypto costs",
    ),
    "spin_pct": ThresholdDoc(
        "% of one processor",
        "CP's processors spinning on formal spin locks (ESALOCK): busy, doing nothing",
        "seed 001: about 1% (4,969 spins/s of 2.04 µs) on a healthy 8-way and 5.2% after "
        "z/VM 4.4.0's scheduler lock fix are normal; 32.92% (13,174/s of 25 µs) on the "
        "16-way was the scheduler lock serializing CP, CP time per transaction up 333%. "
        "10% is a processor in ten lost to spinning; 25% is that run's kind of trouble",
    ),
}

# Thresholds that only count when another one does too (the lower level of the two), but
# where a user sets one and not its gate (``Threshold.gated``).
THRESHOLD_GATES: Mapping[str, str] = {
    "dserv_pct": "dserv_us",
    "dq_per_op": "unsucc_dq_s",
    "unsucc_dq_s": "dq_per_op",  # the two gate each other: many, and many an operation
    "busy_per_kvnq": "unsucc_dq_s",
}


def gated_level(
    thresholds: Mapping[str, Threshold],
    name: str,
    value: Value,
    decimals: int | None,
    gate_value: Value,
) -> Level:
    """The level of ``value`` against threshold ``name``, no higher than its gate's level
    for ``gate_value`` (a gate without a value marks nothing: a highlight never rests on a
    figure the recording does not have)."""
    threshold = thresholds[name]
    level = threshold.level(value, decimals)
    gate = THRESHOLD_GATES.get(name)
    if gate is None or level is Level.NONE or not threshold.gated:
        return level
    return min(level, thresholds[gate].level(gate_value))


@dataclass(frozen=True, slots=True)
class Column:
    id: str
    header: tuple[str, str]  # two header lines, top and bottom
    width: int
    decimals: int | None = None  # None: a text column
    unit: str = ""  # as data (JSON, CSV) give it: ASCII ("us"); see unit_text
    groups: tuple[str, ...] = ()  # group labels, outermost first
    key: bool = False  # shown on every horizontal page (time, type, id)
    repeat: bool = True  # False: blank when equal to the row above in the same interval
    threshold: str | None = None  # name in the thresholds map; the column gets a marker slot
    drill: str | None = None  # screen to drill into from this column (ESASSUM)
    provisional: bool = False  # computed from fields whose layout is not publicly verified
    doc: str = ""
    marks_partial: bool = False  # a slot after the value for the partial mark (the time)

    @property
    def is_text(self) -> bool:
        return self.decimals is None

    @property
    def cell_width(self) -> int:
        return self.width + (1 if self.threshold or self.marks_partial else 0)

    @property
    def unit_text(self) -> str:
        """The unit as text for a reader (µs, as the screens' headers do)."""
        return "µs" if self.unit == "us" else self.unit


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
    node: str | None = None  # another node's screen (ESANODE), else the one shown


@dataclass(slots=True)
class Row:
    """One line of a screen. Treated as immutable (``dataclasses.replace`` makes another),
    though not frozen: an export makes one per processor per interval, and a frozen
    dataclass's ``__init__`` (an ``object.__setattr__`` per field) costs three times a plain
    one's."""

    start_us: int
    end_us: int  # the interval's end: the time a row is shown at
    values: Mapping[str, Value]
    levels: Mapping[str, Level] = field(default_factory=dict)
    kind: RowKind = RowKind.DATA
    first: bool = True  # first row of its interval
    drill: Drill | None = None
    flags: int = 0
    partial: bool = False  # the recording covers its interval only in part (see Slot)
    covered_us: int | None = None  # the recorded time the row's interval holds


PARTIAL_MARK = "~"


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
    # what the screen's timeline holds in the database (None: nothing recorded for it)
    extent: Extent | None = None
    recorded: bool = False  # the database holds intervals of this node (of any screen)

    def column(self, column_id: str) -> Column:
        for c in self.columns:
            if c.id == column_id:
                return c
        raise KeyError(column_id)


def threshold_help(
    columns: tuple[Column, ...], thresholds: Mapping[str, Threshold] = DEFAULT_THRESHOLDS
) -> list[str]:
    """One line per threshold the ``columns`` are marked by (and the thresholds gating them),
    with its levels, what it marks and why: for the help and ``esatui screens``."""
    names: list[str] = []
    for c in columns:
        for name in (c.threshold, THRESHOLD_GATES.get(c.threshold or "")):
            if name and name not in names and name in thresholds:
                names.append(name)
    return [thresholds[name].help(name) for name in names]
