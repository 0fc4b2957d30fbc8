"""Retention (by age and by size), vacuum, and the facts ``esatui db info`` prints.

Retention deletes whole intervals; the hourly rollups of the hours it empties go with them,
and the hour it cuts into is rolled up again from what is left of it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from esatui.db import rollup
from esatui.db.schema import kind_tables
from esatui.db.store import Store

_CHUNK = 2000  # intervals deleted per transaction, so a viewer is never blocked long


@dataclass(frozen=True)
class PruneResult:
    intervals_deleted: int
    bytes_before: int
    bytes_after: int


def data_bytes(store: Store) -> int:
    """Bytes the database uses (pages in use; free pages are not counted)."""
    conn = store.connection
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    return int((pages - free) * size)


def file_bytes(store: Store) -> int:
    total = 0
    for suffix in ("", "-wal"):
        path = store.path.with_name(store.path.name + suffix)
        if path.exists():
            total += path.stat().st_size
    return total


def _delete_oldest(store: Store, until_us: int | None, count: int) -> int:
    """Delete up to ``count`` oldest intervals (ending before ``until_us``) and their rows."""
    conn = store.connection
    tables = list(kind_tables(conn))
    with store.transaction():
        if until_us is None:
            ids = [
                r[0]
                for r in conn.execute("SELECT id FROM interval ORDER BY end_us LIMIT ?", (count,))
            ]
        else:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM interval WHERE end_us < ? ORDER BY end_us LIMIT ?",
                    (until_us, count),
                )
            ]
        if not ids:
            return 0
        marks = ",".join("?" * len(ids))
        # oldest first, so each source loses every interval up to its newest one deleted
        cut = conn.execute(
            f"SELECT node_id, source, MAX(end_us) FROM interval WHERE id IN ({marks})"
            " GROUP BY node_id, source",
            ids,
        ).fetchall()
        for table in tables:
            conn.execute(f"DELETE FROM {table} WHERE interval_id IN ({marks})", ids)
        conn.execute(f"DELETE FROM interval WHERE id IN ({marks})", ids)
        for node_id, source, last_us in cut:
            store.trim_rollups(node_id, source, last_us)
    return len(ids)


def prune(
    store: Store,
    keep_s: float | None = None,
    max_bytes: int | None = None,
    now: float | None = None,
) -> PruneResult:
    """Delete intervals older than ``keep_s``, then the oldest until the data fits in
    ``max_bytes``; the freed pages go back to the file system."""
    before = file_bytes(store)
    deleted = 0
    if keep_s is not None:
        cutoff = int(((time.time() if now is None else now) - keep_s) * 1_000_000)
        while n := _delete_oldest(store, cutoff, _CHUNK):
            deleted += n
    if max_bytes is not None:
        while data_bytes(store) > max_bytes:
            total = store.connection.execute("SELECT COUNT(*) FROM interval").fetchone()[0]
            if not total:
                break
            # delete in proportion to the excess, at least one chunk's worth of progress
            excess = 1 - max_bytes / data_bytes(store)
            n = _delete_oldest(store, None, max(1, min(_CHUNK, int(total * excess) + 1)))
            if not n:
                break
            deleted += n
    if deleted:
        store.connection.execute("PRAGMA incremental_vacuum")
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return PruneResult(deleted, before, file_bytes(store))


def vacuum(store: Store) -> PruneResult:
    before = file_bytes(store)
    store.connection.execute("VACUUM")
    store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return PruneResult(0, before, file_bytes(store))


@dataclass(frozen=True)
class SourceInfo:
    node: str
    source: str
    intervals: int
    first_us: int
    last_us: int


def rollup_rows(store: Store) -> dict[str, int]:
    """Hourly rollup rows per kind (``meta`` says ``rollups hourly`` once all are there)."""
    return rollup.rollup_rows(store.connection)


def info(store: Store) -> tuple[dict[str, str], list[SourceInfo], dict[str, int]]:
    """Meta facts, intervals per node and source, and rows per kind."""
    conn = store.connection
    meta = dict(conn.execute("SELECT key, value FROM meta ORDER BY key"))
    meta["schema_version"] = str(conn.execute("PRAGMA user_version").fetchone()[0])
    meta["file_bytes"] = str(file_bytes(store))
    meta["data_bytes"] = str(data_bytes(store))
    sources = [
        SourceInfo(*r)
        for r in conn.execute(
            "SELECT n.name, i.source, COUNT(*), MIN(i.start_us), MAX(i.end_us)"
            " FROM interval i JOIN node n ON n.id = i.node_id"
            " GROUP BY n.name, i.source ORDER BY n.name, i.source"
        )
    ]
    rows = {
        table[2:]: int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
        for table in kind_tables(conn)
    }
    return meta, sources, rows
