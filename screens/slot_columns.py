"""Columns of a screen with one row per slot, each a function of its slot: read from the
kinds the column needs alone (issue 17's distribution over a month).

A row that combines kinds (ESASSUM's summary of CPUs, crypto, paging and esatui's own cost;
ESAPOLL's CPU per operation: the processors' times over the crypto row's operations) is not
one recorded row (``screens/row_columns.py``): the distribution view builds the screen as
recorded over the range, every kind read and every column made for each of 43,200 intervals
(seconds). A screen whose rows have no key columns declares here, as data, the columns that
are a function of their slot and the configuration alone, the kinds each reads and which
slots have a row; the build calls the same functions. The view then reads the range's slots
holding those kinds only and calls the column's function for each slot that has a row: the
build's values to the last bit (``tests/screens/test_slot_columns.py``). A column whose value
in a slot depends on the range's other slots (ESASSUM's CPU types: the hypervisor's view
wherever one slot has it) is made by a function of all the range's slots instead. A screen
whose slot has one row of its own beside its entities' (ESALOCK's total, beside its locks)
declares that row's such columns the same way, with the row's key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from esatui.db.navigator import Navigator
from esatui.db.slots import Slot
from esatui.screens import stream
from esatui.screens.catalog import screen_timeline
from esatui.screens.model import Value
from esatui.screens.row_columns import IntervalValue
from esatui.screens.rowkey import EntityKey

if TYPE_CHECKING:
    from esatui.db.reader import Reader
    from esatui.screens.catalog import ScreenDef

SlotValue = Callable[[Slot, Mapping[str, str]], Value]
"""A column's value in a slot, given the node's configuration."""


@dataclass(frozen=True)
class SlotColumn:
    """A column as ``value(slot, config)``, reading only ``kinds`` of the slot (the
    timeline's kinds among them where it reads those)."""

    kinds: tuple[str, ...]
    value: SlotValue


@dataclass(frozen=True)
class RangeColumn:
    """A column as ``values(slots, config)``, one value per slot of the range, given them
    oldest first and once (read a chunk at a time), reading only ``kinds``."""

    kinds: tuple[str, ...]
    values: Callable[[Iterable[Slot], Mapping[str, str]], list[Value]]


def every_slot(slot: Slot) -> bool:
    return True


def no_range_column(column_id: str) -> RangeColumn | None:
    return None


@dataclass(frozen=True)
class SlotColumns:
    """The columns of a screen that their slot alone makes, and which slots the build makes
    a row of (reading the kinds ``row_kinds``)."""

    columns: Mapping[str, SlotColumn]
    has_row: Callable[[Slot], bool] = every_slot
    row_kinds: tuple[str, ...] = ()
    # the columns made over the range (their ids may depend on it: ESASSUM's busy_ifl), by id
    of_range: Callable[[str], RangeColumn | None] = no_range_column
    # the row they are of: () the screen's one row a slot; else the key of the one row a
    # slot has among others (ESALOCK's total, beside its locks)
    row: EntityKey = ()


def slot_values(
    reader: Reader,
    screen: ScreenDef,
    node: str,
    column_id: str,
    entity: EntityKey,
    after_us: int | None,
    until_us: int | None,
    options: frozenset[str] = frozenset(),
    *,
    chunk: int = stream.CHUNK,
) -> list[IntervalValue] | None:
    """``column_id``'s value in every recorded interval ending in (after_us, until_us],
    oldest first, from slots holding only the kinds it reads (``chunk`` slots at a time,
    but for a column of the whole range); ``None`` where the screen does not declare it,
    the row is not the one the slot columns are of, or one of the screen's own view
    options is on (the monitor carries options from screen to screen: others change
    nothing here)."""
    made = screen.slot_columns
    if made is None or entity != made.row or options & set(screen.view_options):
        return None
    column: SlotColumn | RangeColumn | None = made.columns.get(column_id) or made.of_range(
        column_id
    )
    if column is None:
        return None
    timeline = screen_timeline(screen, node, None)
    window = Navigator(reader, timeline).window(after_us, until_us, limit=None, snap=False)
    # the timeline's kinds are read with the slots: only those the column and the rows need
    kinds = tuple(dict.fromkeys((*column.kinds, *made.row_kinds)))
    window = replace(window, timeline=replace(timeline, kinds=kinds))
    at = window.spans[-1].end_us if window.spans else (until_us or 0)
    config = reader.config_at(node, at)
    has_row = made.has_row
    chunks = stream.slot_chunks(reader, window, (), chunk)  # memory holds a chunk
    if isinstance(column, RangeColumn):
        shown: list[tuple[int, bool]] = []  # each slot's end, and whether it has the row

        def each_slot() -> Iterator[Slot]:
            for slots in chunks:
                for s in slots:
                    shown.append((s.end_us, has_row(s)))
                    yield s

        values = column.values(each_slot(), config)
        return [(end, v) for (end, row), v in zip(shown, values, strict=True) if row]
    value = column.value
    out: list[IntervalValue] = []
    for slots in chunks:
        out += [(s.end_us, value(s, config)) for s in slots if has_row(s)]
    return out
