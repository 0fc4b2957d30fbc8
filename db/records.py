"""Interval records: what the store keeps, one row per interval per entity.

Counters are deltas over the interval (integers in the kind's unit), gauges are the average
and maximum of the high-frequency samples taken in the interval, with their number, so any
run of intervals aggregates exactly into a longer one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntFlag

Value = int | float | None


class Flag(IntFlag):
    """Flags on an interval or on one entity's row."""

    GAP = 1  # data was lost before the end of this interval (monitor overflow ...)
    RESET = 2  # a counter went backwards: its delta is the value after the reset
    NEW = 4  # the entity appeared in this interval: no counter deltas yet


def max_column(gauge: str) -> str:
    """The column holding a gauge's interval maximum (its average is under its own name)."""
    return f"{gauge}_max"


@dataclass(frozen=True, slots=True)
class EntityRow:
    """One entity in one interval.

    ``values`` maps counter names to deltas, gauge names to averages and
    ``max_column(gauge)`` to maxima; ``hf_n`` is how many gauge samples were averaged.
    """

    kind: str
    key: str
    attrs: Mapping[str, str]
    values: Mapping[str, Value]
    flags: int = 0
    hf_n: int = 0


@dataclass(frozen=True, slots=True)
class Interval:
    source: str
    node: str
    start_us: int
    end_us: int
    duration_us: int  # measured (monotonic clock for live sources)
    rows: tuple[EntityRow, ...]
    flags: int = 0
    config: Mapping[str, str] | None = None
