"""Schema of the store, its version, and the migrations between versions.

The framework tables are fixed by the schema version. Each kind of entity gets a table of its
own, ``k_<kind>``, generated from the kind's declaration: one INTEGER column per counter
(deltas), one REAL column per gauge average and one per gauge maximum. A kind table is created
the first time its kind is written and gains a column when its kind gains a field (fields are
only ever added), so new sources need no schema version; the version changes only when
existing tables change shape.

Each kind table has an hourly rollup, ``h_<kind>``, created and widened with it: one row per
node, source, UTC hour (by interval end) and entity, with the number of rows, their flags
OR-ed, the flags of their intervals OR-ed, the summed ``hf_n``, the newest interval end, the
summed counter deltas and, per gauge, the sum of average x ``hf_n`` (``<gauge>_wsum``), the
``hf_n`` it weighs (``<gauge>_wn``) and the maximum. ``interval_hour`` is the same for the
intervals themselves (count, summed duration, OR-ed flags), and ``absent_hour`` for the
intervals of a source that carried none of one of its kinds' rows (count and summed duration
per kind, a row only where there are any): a kind's time in an hour is its source's less
those. ``q_<kind>``, ``interval_quarter`` and ``absent_quarter`` are the same per quarter of
an hour (the buckets of 15 minutes in every zone). Over the hours, per local day of the
writer's zone, ``d_<kind>``, ``interval_day`` and ``absent_day`` add a day's hours up (the
gauges' weighted sums excepted: readers add those hour by hour).
``db/rollup.py`` keeps them.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING

from esatui.collectors.role import Role
from esatui.db.records import max_column

if TYPE_CHECKING:
    from esatui.collectors.model import Kind

SCHEMA_VERSION = 1
HOUR_US = 3_600_000_000
READY_KEY = "rollups"
# meta[READY_KEY] once the rollups serve readers, naming how they are kept: every interval
# rolled up as it is written (esatui before 2026-11-27), or every hour of a source up to
# its mark, the hour it is writing in once it is over (db/rollup.py). Both serve readers.
# A writer names its own way when it opens a database: an esatui of the first way then
# finds a way it does not know and rolls the database up afresh, where it would otherwise
# add intervals to an hour whose earlier intervals are not in its rollup.
# The third way adds quarters of an hour beside the hours and the writer's local days over
# them (``q_<kind>``, ``d_<kind>``): readers use those only under this name, which an older
# esatui does not know (it rolls the hours up afresh and names its own way, so quarters and
# days it never kept are not read; the next writer rolls everything up again).
# The fourth keeps beside them, per kind, the intervals of its source that carried none of
# its rows (``absent_<tier>``), so a kind's rates in a bucket are over its own measured time;
# a reader of the third reads its quarters and days and takes every kind's time as its
# source's (as esatui did before 2026-11-27).
ROLLED_AS_WRITTEN = "hourly"
ROLLED_HOURLY = "hourly-when-over"
ROLLED_TIERED = "quarterly-hourly-daily-when-over"
READY_VALUE = "quarterly-hourly-daily-absent-when-over"
READY_VALUES = frozenset({ROLLED_AS_WRITTEN, ROLLED_HOURLY, ROLLED_TIERED, READY_VALUE})
TIERED_VALUES = frozenset({ROLLED_TIERED, READY_VALUE})
QUARTER_US = 900_000_000


def quarter_end(time_us: int) -> int:
    """The end of the quarter of a UTC hour ``time_us`` belongs to (as :func:`hour_end`)."""
    return -(-time_us // QUARTER_US) * QUARTER_US


def hour_end(time_us: int) -> int:
    """The end of the UTC hour ``time_us`` belongs to, (H - 1 h, H] -> H: the hour of an
    interval's rollup and the rule buckets are read by."""
    return -(-time_us // HOUR_US) * HOUR_US


TIERS = ("h", "q", "d")
"""The rollups' tiers, each a table prefix: hours, quarters of an hour, the writer's days."""
TIER_END = {"h": "hour_end_us", "q": "quarter_end_us", "d": "day_end_us"}
TIER_INTERVALS = {"h": "interval_hour", "q": "interval_quarter", "d": "interval_day"}


def interval_rollup_ddl(tier: str) -> str:
    """The rollup of ``interval`` of a tier: per node, source and hour (quarter, day), the
    intervals, their summed duration, flags OR-ed, the newest end; a day its start too."""
    end = TIER_END[tier]
    start = "    day_start_us INTEGER NOT NULL,\n" if tier == "d" else ""
    return (
        f"CREATE TABLE IF NOT EXISTS {TIER_INTERVALS[tier]} (\n"
        "    node_id INTEGER NOT NULL,\n"
        "    source TEXT NOT NULL,\n"
        f"    {end} INTEGER NOT NULL,\n"
        f"{start}"
        "    n INTEGER NOT NULL,\n"
        "    duration_us INTEGER NOT NULL,\n"
        "    flags INTEGER NOT NULL,\n"
        "    last_end_us INTEGER NOT NULL,\n"
        f"    PRIMARY KEY (node_id, source, {end})\n"
        ") WITHOUT ROWID"
    )


TIER_ABSENT = {"h": "absent_hour", "q": "absent_quarter", "d": "absent_day"}


def absent_rollup_ddl(tier: str) -> str:
    """Per node, source, hour (quarter, day) and kind of that source, the intervals that
    carried none of the kind's rows and their summed duration: a row only where there are
    any (a source that writes each of its kinds every interval adds none)."""
    end = TIER_END[tier]
    return (
        f"CREATE TABLE IF NOT EXISTS {TIER_ABSENT[tier]} (\n"
        "    node_id INTEGER NOT NULL,\n"
        "    source TEXT NOT NULL,\n"
        f"    {end} INTEGER NOT NULL,\n"
        "    kind TEXT NOT NULL,\n"
        "    n INTEGER NOT NULL,\n"
        "    duration_us INTEGER NOT NULL,\n"
        f"    PRIMARY KEY (node_id, source, {end}, kind)\n"
        ") WITHOUT ROWID"
    )


INTERVAL_ROLLUPS = tuple(interval_rollup_ddl(tier) for tier in TIERS) + tuple(
    absent_rollup_ddl(tier) for tier in TIERS
)

FRAMEWORK = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS node (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS interval (
    id INTEGER PRIMARY KEY,
    node_id INTEGER NOT NULL REFERENCES node(id),
    source TEXT NOT NULL,
    start_us INTEGER NOT NULL,
    end_us INTEGER NOT NULL,
    duration_us INTEGER NOT NULL,
    flags INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX IF NOT EXISTS interval_by_source ON interval (node_id, source, end_us);
CREATE INDEX IF NOT EXISTS interval_by_end ON interval (end_us);
CREATE TABLE IF NOT EXISTS entity (
    id INTEGER PRIMARY KEY,
    node_id INTEGER NOT NULL REFERENCES node(id),
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    attrs TEXT NOT NULL,
    UNIQUE (node_id, kind, key, attrs)
);
CREATE TABLE IF NOT EXISTS kind (
    name TEXT PRIMARY KEY,
    doc TEXT NOT NULL,
    fields TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS kind_source (
    kind TEXT NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (kind, source)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS config (
    node_id INTEGER NOT NULL REFERENCES node(id),
    source TEXT NOT NULL,
    time_us INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (node_id, source, time_us)
) WITHOUT ROWID;
""" + ";".join(INTERVAL_ROLLUPS)
_CREATED = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+)")
FRAMEWORK_TABLES: tuple[str, ...] = tuple(
    t
    for t in _CREATED.findall(FRAMEWORK)
    if t not in TIER_INTERVALS.values() and t not in TIER_ABSENT.values()
)
"""The tables every esatui database has (the rollups' come with their backfill)."""

_IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]*$")


def table_name(kind: str) -> str:
    if not _IDENTIFIER.match(kind):
        raise ValueError(f"kind name {kind!r} is not a plain identifier")
    return f"k_{kind}"


def rollup_table(kind: str, tier: str = "h") -> str:
    if not _IDENTIFIER.match(kind):
        raise ValueError(f"kind name {kind!r} is not a plain identifier")
    assert tier in TIERS
    return f"{tier}_{kind}"


# the columns every rollup row has before its values
ROLLUP_META = (
    "node_id",
    "source",
    "hour_end_us",
    "entity_id",
    "rows_n",
    "flags",
    "iflags",
    "hf_n",
    "last_end_us",
)


def wsum_column(gauge: str) -> str:
    """The rollup column holding the sum of a gauge's averages weighted by ``hf_n``."""
    return f"{gauge}_wsum"


def wn_column(gauge: str) -> str:
    """The rollup column holding the ``hf_n`` a gauge's weighted sum weighs."""
    return f"{gauge}_wn"


def rollup_columns(roles: Iterable[tuple[str, Role]]) -> list[tuple[str, str]]:
    """(column, SQL type) of a rollup table's values, from (field, role) in declaration
    order: a counter's sum; a gauge's weighted sum, weight and maximum."""
    columns: list[tuple[str, str]] = []
    for name, role in roles:
        if not _IDENTIFIER.match(name):
            raise ValueError(f"field name {name!r} is not an identifier")
        if role is Role.COUNTER:
            columns.append((name, "INTEGER"))
        elif role is Role.GAUGE:
            columns += [
                (wsum_column(name), "REAL"),
                (wn_column(name), "INTEGER"),
                (max_column(name), "REAL"),
            ]
    names = [c for c, _ in columns]
    clash = (set(names) & set(ROLLUP_META)) | {c for c in names if names.count(c) > 1}
    if clash:
        raise ValueError(f"rollup columns {sorted(clash)} collide")
    return columns


def kind_roles(kind: Kind) -> list[tuple[str, Role]]:
    return [(f.name, f.role) for f in kind.fields]


def rollup_ddl(kind: str, roles: Iterable[tuple[str, Role]], tier: str = "h") -> str:
    """The kind's rollup table of a tier (``h_<kind>``, ``q_<kind>``, ``d_<kind>``: the same
    columns, keyed by the end of the hour, quarter or day)."""
    cols = "".join(f",\n    {name} {sqltype}" for name, sqltype in rollup_columns(roles))
    end = TIER_END[tier]
    return (
        f"CREATE TABLE IF NOT EXISTS {rollup_table(kind, tier)} (\n"
        "    node_id INTEGER NOT NULL,\n"
        "    source TEXT NOT NULL,\n"
        f"    {end} INTEGER NOT NULL,\n"
        "    entity_id INTEGER NOT NULL,\n"
        "    rows_n INTEGER NOT NULL,\n"
        "    flags INTEGER NOT NULL,\n"
        "    iflags INTEGER NOT NULL,\n"
        "    hf_n INTEGER NOT NULL,\n"
        f"    last_end_us INTEGER NOT NULL{cols},\n"
        f"    PRIMARY KEY (node_id, source, {end}, entity_id)\n"
        ") WITHOUT ROWID"
    )


def kind_columns(kind: Kind) -> list[tuple[str, str]]:
    """(column, SQL type) for every value a kind's row carries, in declaration order."""
    columns: list[tuple[str, str]] = []
    for f in kind.fields:
        if not _IDENTIFIER.match(f.name):
            raise ValueError(f"field name {f.name!r} of kind {kind.name} is not an identifier")
        if f.role is Role.COUNTER:
            columns.append((f.name, "INTEGER"))
        else:
            columns += [(f.name, "REAL"), (max_column(f.name), "REAL")]
    return columns


def kind_ddl(kind: Kind) -> str:
    cols = "".join(f",\n    {name} {sqltype}" for name, sqltype in kind_columns(kind))
    return (
        f"CREATE TABLE IF NOT EXISTS {table_name(kind.name)} (\n"
        "    interval_id INTEGER NOT NULL,\n"
        "    entity_id INTEGER NOT NULL,\n"
        "    flags INTEGER NOT NULL DEFAULT 0,\n"
        f"    hf_n INTEGER NOT NULL DEFAULT 0{cols},\n"
        "    PRIMARY KEY (interval_id, entity_id)\n"
        ") WITHOUT ROWID"
    )


def added_columns(
    table: str, columns: Iterable[tuple[str, str]], have: Collection[str]
) -> list[str]:
    """The statements that give ``table`` the ``columns`` (name, SQL type) it lacks: a kind
    only ever gains fields."""
    return [f"ALTER TABLE {table} ADD COLUMN {n} {t}" for n, t in columns if n not in have]


Migration = Callable[[sqlite3.Connection], None]

# MIGRATIONS[n] turns a version-n database into version n+1. Version 1 is the first release;
# the next change of an existing table's shape adds MIGRATIONS[1] and bumps SCHEMA_VERSION.
MIGRATIONS: dict[int, Migration] = {}
