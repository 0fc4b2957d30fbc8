"""Columns made of one recorded row: their interval values for one entity, read from the store.

The distribution view (``d``) needs every recorded interval's value of one column for one
entity over the range on view: a month of 1-minute intervals is 43,200 of them. Building the
screen as recorded over the month makes every row of every entity with every column (seconds).
A screen whose columns are plain functions of one recorded row of its timeline kind declares
them here, as data: the fields each column is made of and the function that makes it, the one
its own build calls, so there is one formula. The reader then hands over that entity's rows
alone (:meth:`~esatui.db.reader.Reader.entity_rows`), and the values are the build's to the
last bit. Where the reader cannot (another source of the kind, buckets, Prometheus), or a row
is not one recorded entity (a subtotal, the ``all`` row), the screen is built as recorded.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from esatui.screens.catalog import screen_timeline
from esatui.screens.model import Value
from esatui.screens.rowkey import EntityKey

if TYPE_CHECKING:
    from esatui.db.reader import Reader
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
    until_us], oldest first, from the entity's rows alone; ``None`` when the screen must be
    built as recorded instead (see the module's doc)."""
    made = screen.row_columns
    column = None if made is None else made.columns.get(column_id)
    key = None if made is None else made.entity(entity)
    if made is None or column is None or key is None:
        return None
    timeline = screen_timeline(screen, node, None)
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
