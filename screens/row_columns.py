"""Columns made of one recorded row: their interval values for one entity, read from the store.

The distribution view (``d``) needs every recorded interval's value of one column for one
entity over the range on view: a month of 1-minute intervals is 43,200 of them. Building the
screen as recorded over the month makes every row of every entity with every column (seconds).
A screen whose columns are plain functions of one recorded row of its timeline kind declares
them here, as data: the fields each column is made of and the function that makes it, the one
its own build calls, so there is one formula. The reader then hands over that entity's rows
alone (:meth:`~esatui.db.reader.Reader.entity_rows`), and the values are the build's to the
last bit. A screen's total rows (ESALNXC's ``all``, ESACPUU's ``Tot``; ESASSUM's steal, a
mean) declare how its build adds their members up, each at its share of the interval where
the kind says how long an entity was online (:mod:`~esatui.screens.online`), and their
values are made from every entity's rows the same way. Where the reader cannot (another
source of the kind, buckets, Prometheus), or a row is neither, the screen is built as
recorded.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from esatui.screens.catalog import screen_timeline
from esatui.screens.model import Value
from esatui.screens.online import OnlineTime
from esatui.screens.rowkey import EntityKey

if TYPE_CHECKING:
    from esatui.db.reader import Reader, Timeline
    from esatui.screens.catalog import ScreenDef

EMPTY: Mapping[str, str] = {}

IntervalValue = tuple[int, Value]
"""One recorded interval's end (µs) and its value of a column."""


@dataclass(frozen=True)
class KindTotal:
    """A value of the interval that a column of one entity's row divides by, made of every
    entity's row of ``kind`` in it (ESACRYQ's share: all requests through the cards):
    ``made`` takes each row's ``fields`` (a tuple, the rows in entity-id order, as a slot
    holds them; ``None`` where not recorded), and no rows where the interval has none."""

    kind: str
    fields: tuple[str, ...]
    made: Callable[[list[tuple[Value, ...]]], Value]


@dataclass(frozen=True)
class RowColumn:
    """A column as a function of one interval's recorded row: ``value(*attrs, *fields)``,
    the entity's ``attrs`` then the row's ``fields`` in the order given (``None`` where not
    recorded), with the interval's duration (µs) between them when it is ``timed`` (a rate),
    and before them all the interval's value of ``over`` where it has one."""

    fields: tuple[str, ...]
    value: Callable[..., Any]
    timed: bool = False
    attrs: tuple[str, ...] = ()
    # ``value`` makes several columns at once (a tuple): this one is its element ``part``
    part: int | None = None
    over: KindTotal | None = None

    def bound(self, attrs: Mapping[str, str]) -> Callable[..., Any]:
        """``value`` given the entity's attributes: it takes ``([duration_us,] *fields)``,
        a stored row as the reader hands it over (its ``part`` still to be taken)."""
        if not self.attrs:
            return self.value
        return functools.partial(self.value, *(attrs.get(name) for name in self.attrs))

    def of(
        self,
        duration_us: int,
        get: Callable[[str], Value],
        attrs: Mapping[str, str] = EMPTY,
        total: Value = None,
    ) -> Value:
        """The column from a slot's row (``get``: its values by field), its duration, the
        entity's attributes and the slot's value of ``over`` (``total``): what a screen's
        build calls."""
        args: list[Value] = [total] if self.over is not None else []
        if self.timed:
            args.append(duration_us)
        args += [get(name) for name in self.fields]
        made = self.bound(attrs)(*args)
        value: Value = made if self.part is None else made[self.part]
        return value


def as_recorded(value: Value) -> Value:
    """A column that shows its field as recorded."""
    return value


Member = Callable[[str, Mapping[str, str]], bool]
"""Whether a recorded entity (key, attributes) is added into a total row."""


def every_entity(key: str, attrs: Mapping[str, str]) -> bool:
    return True


def never(attrs: Collection[Mapping[str, str]]) -> bool:
    return False


@dataclass(frozen=True)
class TotalRows:
    """Rows that add a column of several entities up in an interval as the build does:
    the values that are not ``None`` of the entities a row adds (``members``), in the
    build's ``order``, from 0.0 (over how many they are where ``mean``); ``None`` when
    there is none."""

    # a shown row's members; None: the row is not one of these totals
    members: Callable[[EntityKey], Member | None]
    order: Callable[[str, Mapping[str, str]], Any]  # by key and attributes
    # whether, given every recorded entity's attributes, the build may leave some out
    # (ESACPUU: those of another LPAR): the screen is built as recorded
    declines: Callable[[Collection[Mapping[str, str]]], bool] = never
    options: frozenset[str] = frozenset()  # view options that change the totals
    mean: bool = False  # the values' mean (ESASSUM's steal of this Linux's CPUs)


def slot_order(key: str, attrs: Mapping[str, str]) -> int:
    """The order a slot holds its entities in (a stable sort keeps it: the entities')."""
    return 0


@dataclass(frozen=True)
class TotalColumn:
    """A column of a row that is no entity's, adding some of the kind's entities up, which
    its id names (ESASSUM's ``busy_<type>``: that type's CPUs): their values that are not
    ``None``, in the build's ``order`` (by key and attributes), from 0.0; ``None`` where
    none is known, or none is in the interval. ``unless``: kinds whose records near the
    range change the column, whose slots are then read instead (ESASSUM: the hypervisor's
    processors, whose view takes over; vmcp's, which prove the CPUs' types)."""

    column: RowColumn
    members: Member
    unless: tuple[str, ...] = ()
    order: Callable[[str, Mapping[str, str]], Any] = slot_order


def no_total_column(column_id: str) -> TotalColumn | None:
    return None


@dataclass(frozen=True)
class RowFilter:
    """Which of an entity's recorded rows the screen shows: ``shows(*fields)``, the row's
    ``fields`` in the order given (ESALOCK's lock, in the intervals it spun)."""

    fields: tuple[str, ...]
    shows: Callable[..., bool]


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
    totals: TotalRows | None = None
    # the kind of a recorded entity's rows by its key, where a screen's rows are of several
    # of its timeline's kinds (ESACRYQ: a card's or an APQN's); None: always ``kind``
    kind_of: Callable[[str], str] | None = None
    # the columns whose ids name the entities they add up, by id
    total_column: Callable[[str], TotalColumn | None] = no_total_column
    # the recorded rows an entity's row shows; None: every one (totals are then built)
    shown: RowFilter | None = None
    # how long an entity was online in an interval: totals weigh their members by it
    online: OnlineTime | None = None


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
    options: frozenset[str] = frozenset(),
) -> list[IntervalValue] | None:
    """``column_id``'s value in every recorded interval of ``entity`` ending in (after_us,
    until_us], oldest first, from the entity's rows alone (a total row: its members'), the
    view's ``options`` on; ``None`` when the screen must be built as recorded instead (see
    the module's doc)."""
    made = screen.row_columns
    if made is None:
        return None
    column = made.columns.get(column_id)
    timeline = screen_timeline(screen, node, None)
    if column is None:
        total = made.total_column(column_id)
        if total is None or entity:
            return None
        return _total_values(
            reader,
            made,
            TotalRows(lambda shown: total.members, total.order),
            total.members,
            timeline,
            total.column,
            after_us,
            until_us,
            unless=total.unless,
            every_interval=True,
        )
    totals = made.totals
    members = None if totals is None else totals.members(entity)
    if totals is not None and members is not None:
        if options & totals.options:
            return None
        return _total_values(reader, made, totals, members, timeline, column, after_us, until_us)
    return _own_values(reader, made, entity, timeline, column, after_us, until_us)


def _own_values(
    reader: Reader,
    made: RowColumns,
    entity: EntityKey,
    timeline: Timeline,
    column: RowColumn,
    after_us: int | None,
    until_us: int | None,
) -> list[IntervalValue] | None:
    """A row that is one recorded entity: its ``column`` from the entity's own rows."""
    key = made.entity(entity)
    if key is None:
        return None
    shown = made.shown
    extra = () if shown is None else tuple(f for f in shown.fields if f not in column.fields)
    found = reader.entity_rows(
        timeline,
        made.kind if made.kind_of is None else made.kind_of(key),
        key,
        (*column.fields, *extra),
        after_us,
        until_us,
        duration=column.timed,
        keyed_by=made.keyed_by,
    )
    if found is None or (made.admits is not None and not made.admits(key, found.attrs, entity)):
        return None
    rows = found.rows
    if shown is not None:
        rows = _shown_rows(rows, shown, found.fields, column.timed, len(column.fields))
    value = column.bound(found.attrs)
    part = column.part
    if column.over is not None:
        totals = _kind_totals(reader, timeline, column.over, after_us, until_us)
        if totals is None:
            return None
        none = column.over.made([])  # an interval without rows of the kind
        over = [(row[0], value(totals.get(row[0], none), *row[1:])) for row in rows]
        return over if part is None else [(end, v[part]) for end, v in over]
    if part is None:
        return [(row[0], value(*row[1:])) for row in rows]
    return [(row[0], value(*row[1:])[part]) for row in rows]


def _shown_rows(
    rows: Sequence[tuple[Any, ...]],
    shown: RowFilter,
    fields: tuple[str, ...],
    timed: bool,
    kept: int,
) -> list[tuple[Any, ...]]:
    """The rows the screen shows, as read (``(end, [duration,] *fields)``), with their
    first ``kept`` fields (the column's)."""
    at = 2 if timed else 1  # where the fields begin
    places = [at + fields.index(name) for name in shown.fields]
    test = shown.shows
    return [row[: at + kept] for row in rows if test(*(row[i] for i in places))]


def key_twice(
    entities: Mapping[int, tuple[str, Mapping[str, str]]], present: Collection[int]
) -> Callable[[Sequence[tuple[Any, ...]]], bool]:
    """Whether an interval's rows (the entity id second) hold a key twice, which its slot
    would merge into one: only where a key of the ``present`` entities names two of them
    (its attributes changed)."""
    keys = [entities[eid][0] for eid in present]
    if len(set(keys)) == len(keys):
        return _never_twice
    return lambda rows: len({entities[row[1]][0] for row in rows}) != len(rows)


def _never_twice(rows: Sequence[tuple[Any, ...]]) -> bool:
    return False


def _kind_totals(
    reader: Reader,
    timeline: Timeline,
    over: KindTotal,
    after_us: int | None,
    until_us: int | None,
) -> dict[int, Value] | None:
    """``over``'s value in each interval ending in (after_us, until_us] with rows of its
    kind, by the interval's end; ``None`` where the reader declines, or a key is in an
    interval twice (its slot would merge the two)."""
    found = reader.kind_entity_rows(timeline, over.kind, over.fields, after_us, until_us)
    if found is None:
        return None
    twice = key_twice(found.entities, found.entities)
    made = over.made
    totals: dict[int, Value] = {}
    for end, group in itertools.groupby(found.rows, key=operator.itemgetter(0)):
        rows = list(group)
        if twice(rows):
            return None
        totals[end] = made([row[2:] for row in rows])
    return totals


Shares = Callable[[Sequence[tuple[Any, ...]]], dict[int, float] | None]
"""Each member's share of an interval by entity id, from every row of the interval
(``(end, id, duration, *fields)``); ``None``: each counts in full."""


def _in_full(rows: Sequence[tuple[Any, ...]]) -> dict[int, float] | None:
    return None


def _weigh(online: OnlineTime | None, fields: tuple[str, ...]) -> Shares | None:
    """The members' shares of each interval (:mod:`~esatui.screens.online`), from rows of
    ``fields`` after the interval's duration; ``None`` where they do not hold ``online``'s."""
    if online is None:
        return _in_full
    if not set(online.fields) <= set(fields):
        return None
    shares = online.shares
    places = [3 + fields.index(name) for name in online.fields]
    # a row's fields of the time, as a tuple
    take: Callable[[tuple[Any, ...]], tuple[Any, ...]] = (
        operator.itemgetter(slice(3, None))  # every field (ESALNXC's)
        if online.fields == fields
        else operator.itemgetter(slice(places[0], places[0] + 1))
        if len(places) == 1
        else operator.itemgetter(*places)
    )

    def weigh(rows: Sequence[tuple[Any, ...]]) -> dict[int, float] | None:
        try:  # a field not recorded (None) is rare: the slower sum leaves it out
            times = list(map(sum, map(take, rows)))
        except TypeError:
            times = [sum(filter(None, take(row))) for row in rows]
        made = shares(times, rows[0][2])
        return None if made is None else {row[1]: w for row, w in zip(rows, made, strict=True)}

    return weigh


def _total_values(
    reader: Reader,
    made: RowColumns,
    totals: TotalRows,
    members: Member,
    timeline: Timeline,
    column: RowColumn,
    after_us: int | None,
    until_us: int | None,
    *,
    unless: tuple[str, ...] = (),
    every_interval: bool = False,
) -> list[IntervalValue] | None:
    """A total row's ``column`` in every interval, added up as its build does from its
    members' own rows, each at its share of the interval (``made.online``); ``None`` in an
    interval without members where ``every_interval`` (the row is the interval's). ``None``
    where the reader declines (``unless``: kinds recorded near the range), the build may
    leave entities recorded in the range out, or the column takes attributes."""
    if column.attrs or made.shown is not None:
        return None
    weigh = _weigh(made.online, column.fields)
    if weigh is None:
        return None  # the column's fields do not say how long its members were online
    timed = column.timed or made.online is not None  # the interval's duration read
    found = reader.kind_entity_rows(
        timeline,
        made.kind,
        column.fields,
        after_us,
        until_us,
        duration=timed,
        keyed_by=unless,
    )
    if found is None:
        return None
    at = 3 if timed and not column.timed else 2  # where the column's arguments begin
    entities = found.entities
    # every member in the build's order (the rows come by entity id within an interval)
    by_place = sorted(
        (eid for eid, (key, attrs) in entities.items() if members(key, attrs)),
        key=lambda eid: (totals.order(*entities[eid]), eid),
    )
    rank = {eid: n for n, eid in enumerate(by_place)}
    resort = by_place != sorted(by_place)
    twice = key_twice(entities, entities)
    present: set[int] = set()  # the entities recorded in the range
    value, part, mean = column.value, column.part, totals.mean
    out: list[IntervalValue] = []
    for end, group in itertools.groupby(found.rows, key=operator.itemgetter(0)):
        every = list(group)
        if twice(every):
            return None
        present.update(row[1] for row in every)
        adding = [row for row in every if row[1] in rank]
        if not adding:
            if every_interval:
                out.append((end, None))
            continue  # the build shows no such row
        if resort:
            adding.sort(key=lambda row: rank[row[1]])
        shares = weigh(every)
        added: float | None = None
        known = 0.0
        for row in adding:
            v = value(*row[at:])
            if part is not None:
                v = v[part]
            if v is not None:
                share = 1.0 if shares is None else shares[row[1]]
                added = (0.0 if added is None else added) + v * share
                known += share
        out.append((end, added / known if mean and added is not None else added))
    if totals.declines([entities[eid][1] for eid in present]):
        return None
    return out
