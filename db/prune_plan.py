"""What ``esatui db prune --dry-run`` says: the intervals retention would delete, and
nothing deleted.

By age it counts the intervals that end before the cutoff (what ``maintenance.prune``
deletes first). By size it runs ``maintenance.prune`` itself on a temporary copy of the
database (SQLite's backup: consistent while a recorder writes), so the count is what a prune
would delete now, however the pages in use shrink; the copy needs as much free space as the
database's pages in use.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from esatui.db import maintenance
from esatui.db.sqlite_reader import SqliteReader
from esatui.db.store import Store


@dataclass(frozen=True)
class PrunePlan:
    intervals: int  # what a prune would delete, oldest first
    by_age: int  # of which older than --keep
    total: int  # intervals in the database
    first_us: int | None  # the ends of the oldest and the newest of them
    last_us: int | None
    over_bound: bool = False  # --max-size is not met even so (maintenance.prune)


def plan(
    reader: SqliteReader, keep_s: float | None, max_bytes: int | None, now_s: float | None = None
) -> PrunePlan:
    now = time.time() if now_s is None else now_s
    queries = reader.queries
    total = queries.interval_count()
    by_age = 0
    if keep_s is not None:
        by_age = queries.ends_before(int((now - keep_s) * 1_000_000))
    n = by_age
    over_bound = False
    if max_bytes is not None:
        with tempfile.TemporaryDirectory(prefix="esatui-prune-") as tmp:
            copy = Path(tmp) / "copy.sqlite"
            reader.copy_to(copy)
            with Store.open(copy, create=False) as store:
                result = maintenance.prune(store, keep_s, max_bytes, now=now)
                n, over_bound = result.intervals_deleted, result.over_bound
    first = queries.nth_oldest_end(1) if n else None
    last = queries.nth_oldest_end(n) if n else None
    return PrunePlan(n, by_age, total, first, last, over_bound)
