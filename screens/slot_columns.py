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
build's values to the last bit (``tests/screens/test_slot_columns.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from esatui.db.navigator import Navigator
from esatui.db.slots import Slot
from esatui.screens.catalog import screen_timeline
from esatui.screens.model import Value
from esatui.screens.row_columns import IntervalValue

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


def every_slot(slot: Slot) -> bool:
    return True


@dataclass(frozen=True)
class SlotColumns:
    """The columns of a screen that their slot alone makes, and which slots the build makes
    a row of (reading the kinds ``row_kinds``)."""

    columns: Mapping[str, SlotColumn]
    has_row: Callable[[Slot], bool] = every_slot
    row_kinds: tuple[str, ...] = ()


def slot_values(
    reader: Reader,
    screen: ScreenDef,
    node: str,
    column_id: str,
    entity: tuple[str, ...],
    after_us: int | None,
    until_us: int | None,
    options: frozenset[str] = frozenset(),
) -> list[IntervalValue] | None:
    """``column_id``'s value in every recorded interval ending in (after_us, until_us],
    oldest first, from slots holding only the kinds it reads; ``None`` where the screen
    does not declare it, a row is an entity's, or one of the screen's own view options is
    on (the monitor carries options from screen to screen: others change nothing here)."""
    made = screen.slot_columns
    column = None if made is None else made.columns.get(column_id)
    if made is None or column is None or entity or options & set(screen.view_options):
        return None
    timeline = screen_timeline(screen, node, None)
    window = Navigator(reader, timeline).window(after_us, until_us, limit=None, snap=False)
    # the timeline's kinds are read with the slots: only those the column and the rows need
    kinds = tuple(dict.fromkeys((*column.kinds, *made.row_kinds)))
    slots = reader.slots(replace(window, timeline=replace(timeline, kinds=kinds)), ())
    at = slots[0].end_us if slots else (until_us or 0)
    config = reader.config_at(node, at)
    value, has_row = column.value, made.has_row
    return [(s.end_us, value(s, config)) for s in reversed(slots) if has_row(s)]
