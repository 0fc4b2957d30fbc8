"""Columns made of one recorded row: their interval values for one entity, read from the store.

The distribution view (``d``) needs every recorded interval's value of one column for one
entity over the range on view: a month of 1-minute intervals is 43,200 of them. Building the
screen as recorded over the month makes every row of every entity with every column (seconds).
A screen whose columns are plain functions of one recorded row of its timeline kind declares
them here, as data: the fields each column is made of and the function that makes it, the one
its own build calls, so there is one formula. The reader then hands over that entity's rows
alone (:meth:`~esatui.db.reader.Reader.entity_rows`), and the values are the build's to the
last bit. A screen's total row (ESALNXC's ``all``) declares how its build adds the entities up,
and its values are made from every entity's rows the same way. Where the reader cannot
(another source of the kind, buckets, Prometheus), or a row is neither (ESACPUU's subtotals),
the screen is built as recorded.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from esatui.screens.catalog import screen_timeline
from esatui.screens.model import Value
from esatui.screens.rowkey import EntityKey

if TYPE_CHECKING:
    from esatui.db.reader import Reader, Timeline
    from esatui.screens.catalog import ScreenDef

EMPTY: Mapping[str, str] = {}

IntervalValue = tuple[int, Value]
"""One recorded interval's end (µs) and its value of a column."""


@dataclass(frozen=True)
class RowColumn:
    """A column as a function of one interval's recorded row: ``value(*attrs, *fields)``,
    the entity's ``attrs`` then the row's ``fields`` in the order given (``None`` where not
    recorded), with the interval's duration (µs) between them when it is ``timed`` (a rate)."""

    fields: tuple[str, ...]
    value: Callable[..., Any]
    timed: bool = False
    attrs: tuple[str, ...] = ()
    # ``value`` makes several columns at once (a tuple): this one is its element ``part``
    part: int | None = None

    def bound(self, attrs: Mapping[str, str]) -> Callable[..., Any]:
        """``value`` given the entity's attributes: it takes ``([duration_us,] *fields)``,
        a stored row as the reader hands it over (its ``part`` still to be taken)."""
        if not self.attrs:
            return self.value
        return functools.partial(self.value, *(attrs.get(name) for name in self.attrs))

    def of(
        self, duration_us: int, get: Callable[[str], Value], attrs: Mapping[str, str] = EMPTY
    ) -> Value:
        """The column from a slot's row (``get``: its values by field), its duration and
        the entity's attributes: what a screen's build calls."""
        args: list[Value] = [duration_us] if self.timed else []
        args += [get(name) for name in self.fields]
        made = self.bound(attrs)(*args)
        value: Value = made if self.part is None else made[self.part]
        return value


def as_recorded(value: Value) -> Value:
    """A column that shows its field as recorded."""
    return value


@dataclass(frozen=True)
class TotalRow:
    """A row that adds a column of every entity in an interval up as its build does: the
    values that are not ``None``, in the build's ``order`` (of the keys), from 0.0; ``None``
    when there is none."""

    shown: EntityKey  # its key columns' values (ESALNXC's ("", "all", "total"))
    order: Callable[[str], Any]


@dataclass(frozen=True)
class RowColumns:
    """The columns of a screen that one recorded row of its timeline ``kind`` makes."""

    kind: str
    columns: Mapping[str, RowColumn]
    # the recorded entity (the kind's key) a screen row's entity is; None when it is not one
    entity: Callable[[EntityKey], str | None]
    # whether the recorded entity (key, attributes) shows as the one asked for, where the
    # screen's key columns come from them alone (ESACRYPA's type); None: it does
    admits: Callable[[str, Mapping[str, str], EntityKey], bool] | None = None
    # other kinds a row's key columns may come from (ESALNXC's type, proven by vcpu): where
    # they were recorded the screen is built as recorded
    keyed_by: tuple[str, ...] = ()
    total: TotalRow | None = None


def one_entity(key: str) -> Callable[[EntityKey], str | None]:
    """The entity of a screen with one row per interval (no key columns): ``key``."""

    def entity(shown: EntityKey) -> str | None:
        return key if not shown else None

    return entity


def interval_values(
    reader: Reader,
    screen: ScreenDef,
    node: str,
    column_id: str,
    entity: EntityKey,
    after_us: int | None,
    until_us: int | None,
) -> list[IntervalValue] | None:
    """``column_id``'s value in every recorded interval of ``entity`` ending in (after_us,
    until_us], oldest first, from the entity's rows alone (a total row: every entity's);
    ``None`` when the screen must be built as recorded instead (see the module's doc)."""
    made = screen.row_columns
    column = None if made is None else made.columns.get(column_id)
    if made is None or column is None:
        return None
    timeline = screen_timeline(screen, node, None)
    if made.total is not None and entity == made.total.shown:
        return _total_values(reader, made, made.total, timeline, column, after_us, until_us)
    key = made.entity(entity)
    if key is None:
        return None
    found = reader.entity_rows(
        timeline,
        made.kind,
        key,
        column.fields,
        after_us,
        until_us,
        duration=column.timed,
        keyed_by=made.keyed_by,
    )
    if found is None or (made.admits is not None and not made.admits(key, found.attrs, entity)):
        return None
    value = column.bound(found.attrs)
    if column.part is not None:
        part = column.part
        return [(row[0], value(*row[1:])[part]) for row in found.rows]
    return [(row[0], value(*row[1:])) for row in found.rows]


def _total_values(
    reader: Reader,
    made: RowColumns,
    total: TotalRow,
    timeline: Timeline,
    column: RowColumn,
    after_us: int | None,
    until_us: int | None,
) -> list[IntervalValue] | None:
    """The total row's ``column`` in every interval, added up as its build does from every
    entity's own rows; ``None`` where the reader declines or the column takes attributes."""
    if column.attrs:
        return None
    found = reader.kind_entity_rows(
        timeline, made.kind, column.fields, after_us, until_us, duration=column.timed
    )
    if found is None:
        return None
    keys = found.keys
    by_place = sorted(keys, key=lambda eid: (total.order(keys[eid]), eid))
    rank = {eid: n for n, eid in enumerate(by_place)}
    resort = by_place != sorted(keys)  # the rows come by entity id within an interval
    shared = len(set(keys.values())) != len(keys)  # a key whose attributes changed
    at = 2 if column.timed else 1  # the entity id's place in a row: after end [, duration]
    value, part = column.value, column.part
    out: list[IntervalValue] = []
    for end, group in itertools.groupby(found.rows, key=operator.itemgetter(0)):
        rows = list(group)
        if resort:
            rows.sort(key=lambda row: rank[row[at]])
        if shared and len({keys[row[at]] for row in rows}) != len(rows):
            return None  # a key twice in an interval: its slot would hold one of them
        added: float | None = None
        for row in rows:
            v = value(*row[1:at], *row[at + 1 :])
            if part is not None:
                v = v[part]
            if v is not None:
                added = (0.0 if added is None else added) + v
        out.append((end, added))
    return out
