"""Schema of the store, its version, and the migrations between versions.

The framework tables are fixed by the schema version. Each kind of entity gets a table of its
own, ``k_<kind>``, generated from the kind's declaration: one INTEGER column per counter
(deltas), one REAL column per gauge average and one per gauge maximum. A kind table is created
the first time its kind is written and gains a column when its kind gains a field (fields are
only ever added), so new sources need no schema version; the version changes only when
existing tables change shape.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable

from esatui.collectors.model import Kind, Role
from esatui.db.records import max_column

SCHEMA_VERSION = 1

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
"""

_IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]*$")


def table_name(kind: str) -> str:
    if not _IDENTIFIER.match(kind):
        raise ValueError(f"kind name {kind!r} is not a plain identifier")
    return f"k_{kind}"


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


def existing_columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def ensure_kind(conn: sqlite3.Connection, kind: Kind) -> None:
    """Create the kind's table, or add the columns of fields it gained."""
    table = table_name(kind.name)
    conn.execute(kind_ddl(kind))
    have = set(existing_columns(conn, table))
    for name, sqltype in kind_columns(kind):
        if name not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {sqltype}")


def kind_tables(conn: sqlite3.Connection) -> Iterable[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'k\\_%' ESCAPE '\\'"
    )
    return [r[0] for r in rows]


Migration = Callable[[sqlite3.Connection], None]

# MIGRATIONS[n] turns a version-n database into version n+1. Version 1 is the first release;
# the next change of an existing table's shape adds MIGRATIONS[1] and bumps SCHEMA_VERSION.
MIGRATIONS: dict[int, Migration] = {}
