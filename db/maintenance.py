"""Retention (by age, then by size) and vacuum, on a database opened for writing.

Retention deletes whole intervals, oldest first, in chunks so a viewer is never blocked
long; the hourly rollups of the hours it empties go with them, and the hour it cuts into is
rolled up again from what is left of it (``Store.delete_oldest``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from esatui.db.database import file_bytes
from esatui.db.store import Store

_CHUNK = 2000  # intervals deleted per transaction


@dataclass(frozen=True)
class PruneResult:
    intervals_deleted: int
    bytes_before: int
    bytes_after: int


def prune(
    store: Store,
    keep_s: float | None = None,
    max_bytes: int | None = None,
    now: float | None = None,
) -> PruneResult:
    """Delete intervals older than ``keep_s``, then the oldest until the data fits in
    ``max_bytes``; the freed pages go back to the file system."""
    before = file_bytes(store.path)
    deleted = 0
    if keep_s is not None:
        cutoff = int(((time.time() if now is None else now) - keep_s) * 1_000_000)
        while n := store.delete_oldest(cutoff, _CHUNK):
            deleted += n
    if max_bytes is not None:
        while store.data_bytes() > max_bytes:
            total = store.interval_count()
            if not total:
                break
            # delete in proportion to the excess, at least one chunk's worth of progress
            excess = 1 - max_bytes / store.data_bytes()
            n = store.delete_oldest(None, max(1, min(_CHUNK, int(total * excess) + 1)))
            if not n:
                break
            deleted += n
    if deleted:
        store.release_free_pages()
    return PruneResult(deleted, before, file_bytes(store.path))


def vacuum(store: Store) -> PruneResult:
    before = file_bytes(store.path)
    store.vacuum()
    return PruneResult(0, before, file_bytes(store.path))
