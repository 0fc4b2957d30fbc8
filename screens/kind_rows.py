"""Rows made of every entity's row of one kind in their interval: their columns' interval
values for the distribution view, read from that kind's rows alone.

ESACRYPE's row of a function adds that function up over every card's D5R10 block of the
interval, and ESAPAGE's row every processor's D3R2 row: no recorded entity's row
(``screens/row_columns.py``), nor made of its slot's kinds (``screens/slot_columns.py``)
without reading every entity's rows. Built as recorded over a month, the screen makes every
row from every field (seconds). A screen whose rows are made so declares, per row, the
kind, the fields of it the row reads and the function that makes the row's columns from
the interval's rows, the one its build calls. The reader then hands over every entity's
rows of the kind with those fields alone
(:meth:`~esatui.db.reader.Reader.kind_entity_rows`), grouped by interval as a slot holds
them, and the values are the build's to the last bit (``tests/screens/test_kind_rows.py``).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from esatui.screens.catalog import screen_timeline
from esatui.screens.model import Value
from esatui.screens.row_columns import IntervalValue, key_twice
from esatui.screens.rowkey import EntityKey

if TYPE_CHECKING:
    from esatui.db.reader import Reader
    from esatui.screens.catalog import Query, ScreenDef

KindEntityRow = tuple[str, Mapping[str, str], tuple[Value, ...]]
"""An entity's row of the kind in an interval: its key, attributes and the fields read."""


@dataclass(frozen=True)
class KindRow:
    """A screen row made of every entity's row of ``kind`` in its interval: ``make(duration_us,
    rows)`` is the row's columns by id, ``rows`` the interval's (:data:`KindEntityRow`, the
    ``fields`` in the order given, ``None`` where not recorded) in entity-id order as a slot
    holds them; ``None`` where the build shows no such row in the interval."""

    kind: str
    fields: tuple[str, ...]
    make: Callable[[int, Sequence[KindEntityRow]], Mapping[str, Value] | None]


KindRows = Callable[[EntityKey, str, "Query"], KindRow | None]
"""The row a screen row's entity and column are made of, given the view's query (its
options, ESACRYPE's cost table); ``None`` where that column of that row is not one (the
screen is then built as recorded)."""


def kind_row_values(
    reader: Reader,
    screen: ScreenDef,
    node: str,
    column_id: str,
    entity: EntityKey,
    after_us: int | None,
    until_us: int | None,
    query: Query,
) -> list[IntervalValue] | None:
    """``column_id``'s value of ``entity`` in every recorded interval ending in (after_us,
    until_us] that the build shows its row in, oldest first, from the kind's rows alone;
    ``None`` where the screen does not declare the row, or the reader declines (see
    :meth:`~esatui.db.reader.Reader.kind_entity_rows`)."""
    if screen.kind_rows is None:
        return None
    made = screen.kind_rows(entity, column_id, query)
    if made is None:
        return None
    timeline = screen_timeline(screen, node, None)
    found = reader.kind_entity_rows(
        timeline, made.kind, made.fields, after_us, until_us, duration=True
    )
    if found is None:
        return None
    entities = found.entities
    twice = key_twice(entities, entities)
    make = made.make
    out: list[IntervalValue] = []
    for end, group in itertools.groupby(found.rows, key=operator.itemgetter(0)):
        every = list(group)
        if twice(every):
            return None
        rows = [(*entities[row[1]], row[3:]) for row in every]
        shown = make(every[0][2], rows)
        if shown is not None:
            out.append((end, shown[column_id]))
    return out
