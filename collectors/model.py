"""The vocabulary every source speaks: kinds of entities, their fields, and samples.

A *kind* (``cpu``, ``apqn``, ``crypto`` ...) declares what one entity of that kind carries:
cumulative counters (integers in a stated unit), gauges (sampled values) and text attributes.
A *sample* is what a source read at one moment: a reading per entity, with counters still
cumulative. Sources never compute rates; the interval builder turns two samples into deltas
over the exact measured duration, the same way for every source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from esatui.collectors.role import Role

__all__ = [  # Role is the vocabulary's too (collectors/role.py: the store reads it alone)
    "Availability",
    "Field",
    "GaugeTable",
    "Kind",
    "Number",
    "Reading",
    "Role",
    "Sample",
    "SampleFlag",
    "counter",
    "gauge",
    "table_readings",
    "unsigned",
]

Number = int | float


@dataclass(frozen=True, slots=True)
class Field:
    """One numeric field of a kind."""

    name: str
    role: Role
    unit: str  # "us", "count", "bytes", "KiB", "pct" ...
    doc: str = ""
    provisional: bool = False  # offset or meaning not publicly documented
    # counters: whether a decrease means a reset (False: the source documents that the
    # value may go back a little, as /proc/stat's iowait does), and the width in bits of an
    # unsigned counter that wraps (a monitor record's u64), if it does
    monotonic: bool = True
    wrap_bits: int | None = None


@dataclass(frozen=True, slots=True)
class Kind:
    """A kind of entity and the fields each of its entities carries."""

    name: str
    doc: str
    fields: tuple[Field, ...]
    attrs: tuple[str, ...] = ()
    # a counter that is the entity's age, its time (µs) since its counters began (a guest's
    # time logged on): an entity younger than an interval began within it, and the values of
    # its counters are all the interval's (a guest that logged on, or off and on again)
    age: str | None = None

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no field {name!r}")

    @property
    def counters(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if f.role is Role.COUNTER)

    @property
    def gauges(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if f.role is Role.GAUGE)


def counter(
    name: str,
    unit: str,
    doc: str = "",
    *,
    provisional: bool = False,
    monotonic: bool = True,
    wrap_bits: int | None = None,
) -> Field:
    return Field(name, Role.COUNTER, unit, doc, provisional, monotonic, wrap_bits)


def gauge(name: str, unit: str, doc: str = "", *, provisional: bool = False) -> Field:
    return Field(name, Role.GAUGE, unit, doc, provisional)


def unsigned(bits: int, fields: tuple[Field, ...]) -> tuple[Field, ...]:
    """``fields`` with every counter marked as an unsigned ``bits``-bit value that wraps."""
    return tuple(
        Field(f.name, f.role, f.unit, f.doc, f.provisional, f.monotonic, bits)
        if f.role is Role.COUNTER
        else f
        for f in fields
    )


@dataclass(frozen=True, slots=True)
class Reading:
    """What one entity showed in one sample.

    ``values`` maps field names to cumulative counter values (int) or gauge values; a field
    the source could not read is absent or ``None`` (never 0). ``attrs`` are text facts about
    the entity (its CPU type and which source decided it, a card's type ...).
    """

    kind: str
    key: str
    values: Mapping[str, Number | None]
    attrs: Mapping[str, str] = field(default_factory=dict)


class SampleFlag(int, Enum):
    """Flags a source can raise on a sample; they end up on the interval."""

    GAP = 1  # data was lost before this sample (monitor EOVERFLOW, missed records)


@dataclass(frozen=True, slots=True)
class GaugeTable:
    """The gauges of many entities of one kind read in one pass, as a table: row ``i`` holds
    the values of ``keys[i]`` in the order of ``names`` (``None``: not read). A source's
    gauges-only sample (every ``--hf`` tick) gives its entities this way, so that neither it
    nor the interval builder makes an object per entity per tick; :func:`table_readings`
    turns it back into readings for whoever wants them."""

    kind: str
    names: tuple[str, ...]
    keys: tuple[str, ...]
    rows: tuple[tuple[Number | None, ...], ...]


def table_readings(table: GaugeTable) -> list[Reading]:
    """One reading per row of ``table`` (no attributes: a gauges-only sample has none)."""
    return [
        Reading(table.kind, key, dict(zip(table.names, row, strict=True)))
        for key, row in zip(table.keys, table.rows, strict=True)
    ]


@dataclass(frozen=True, slots=True)
class Sample:
    """Everything one source read at one moment.

    ``time_us`` is the wall-clock time (UTC, microseconds since the epoch) the values refer
    to. ``mono_ns`` is a monotonic clock reading for live sources: when two samples both have
    one, the interval's duration is measured with it (immune to clock steps); sources that
    carry their own timestamps (monitor records) leave it ``None``.
    ``config`` holds facts about the system (machine type, LPAR and VM names ...) that the
    store keeps when they change. ``reads`` counts the files or records read, for ESAOVHD.
    ``gauges`` carries more entities' gauges as tables (a gauges-only sample's way): an
    entity is either a reading or a table's row of a sample, never both.
    Trouble is not part of a sample: a source says it as it happens (``base.Warnings``).
    """

    source: str
    time_us: int
    readings: tuple[Reading, ...]
    mono_ns: int | None = None
    config: Mapping[str, str] | None = None
    reads: int = 0
    flags: int = 0
    gauges: tuple[GaugeTable, ...] = ()  # more entities' gauges, as tables

    def all_readings(self) -> list[Reading]:
        """The readings, with the gauge tables' rows as readings after them."""
        found = list(self.readings)
        for table in self.gauges:
            found += table_readings(table)
        return found


@dataclass(frozen=True, slots=True)
class Availability:
    """Whether a source can run here, and why (shown by ``esatui sources``)."""

    available: bool
    reason: str
