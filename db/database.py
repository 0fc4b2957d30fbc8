"""Opening a database file: the version check, a new database's framework, migrations.

Both the writer (``db/store.py``) and the reader (``db/reading.py``) open through
:func:`connect`; each keeps the connection to itself.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Mapping
from pathlib import Path

from esatui import __version__
from esatui.db.reading import Queries
from esatui.db.schema import (
    FRAMEWORK,
    MIGRATIONS,
    READY_KEY,
    READY_VALUE,
    SCHEMA_VERSION,
    Migration,
)


class StoreError(Exception):
    """A database that cannot be used, in one line."""


class Transaction:
    """``with Transaction(conn):`` one immediate transaction, rolled back on an exception."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")


def connect(
    path: Path,
    *,
    readonly: bool,
    create: bool = True,
    migrations: Mapping[int, Migration] = MIGRATIONS,
    version: int = SCHEMA_VERSION,
) -> sqlite3.Connection:
    """A connection to an esatui database of ``version`` (migrated in place when older and
    not ``readonly``); :class:`StoreError` in one line when it cannot be used."""
    if not path.exists():
        if readonly or not create:
            raise StoreError(f"no database at {path}")
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(path, timeout=10.0, check_same_thread=False, isolation_level=None)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path} is not a usable esatui database ({exc})") from None
    try:
        _prepare(conn, path, readonly, migrations, version)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreError(f"{path} is not a usable esatui database ({exc})") from None
    except StoreError:
        conn.close()
        raise
    return conn


def _prepare(
    conn: sqlite3.Connection,
    path: Path,
    readonly: bool,
    migrations: Mapping[int, Migration],
    version: int,
) -> None:
    conn.execute("PRAGMA busy_timeout = 10000")
    queries = Queries(conn)
    found = queries.schema_version()
    fresh = found == 0 and queries.empty()
    if fresh:
        if readonly:
            raise StoreError(f"{path} is empty, not an esatui database")
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("PRAGMA journal_mode = WAL")
        with Transaction(conn):
            _create_framework(conn, version)
        found = version
    elif found == 0:
        raise StoreError(f"{path} is an SQLite database but not an esatui one")
    if found > version:
        raise StoreError(
            f"{path} has schema version {found}, newer than this esatui reads "
            f"({version}): upgrade esatui"
        )
    if found < version:
        if readonly:
            raise StoreError(
                f"{path} has schema version {found}; open it once for writing "
                f"to migrate it to {version}"
            )
        _migrate(conn, path, found, version, migrations)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    if readonly:
        conn.execute("PRAGMA query_only = 1")


def _create_framework(conn: sqlite3.Connection, version: int) -> None:
    for statement in FRAMEWORK.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.executemany(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
        [
            ("created_by", f"esatui {__version__}"),
            ("schema_version", str(version)),
            (READY_KEY, READY_VALUE),
        ],
    )
    conn.execute(f"PRAGMA user_version = {int(version)}")


def _migrate(
    conn: sqlite3.Connection,
    path: Path,
    found: int,
    version: int,
    migrations: Mapping[int, Migration],
) -> None:
    backup = path.with_name(f"{path.name}.schema{found}.bak")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy2(path, backup)
    with Transaction(conn):
        for v in range(found, version):
            step = migrations.get(v)
            if step is None:
                raise StoreError(f"no migration from schema version {v} to {v + 1}")
            step(conn)
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
            (str(version),),
        )
        conn.execute(f"PRAGMA user_version = {int(version)}")


def file_bytes(path: Path) -> int:
    """The size of a database: its file and its write-ahead log."""
    total = 0
    for suffix in ("", "-wal"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            total += part.stat().st_size
    return total
