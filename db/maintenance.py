"""Retention (by age, then by size) and vacuum, on a database opened for writing.

Retention deletes whole intervals, oldest first, in chunks so a viewer is never blocked
long; the hourly rollups of the hours it empties go with them, and the hour it cuts into is
rolled up again from what is left of it (``Store.delete_oldest``). A size bound is a bound
on what is on disk: the database file and its write-ahead log. The data is cut to the
bound less the room the log may take (:func:`wal_allowance`, which a recorder keeps the log
to with ``Store.bound_wal``), then every freed page goes back to the file system and the
log is checkpointed and truncated.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from esatui.db.database import file_bytes
from esatui.db.store import Store

_CHUNK = 2000  # intervals deleted per transaction
_WAL_MAX = 4 * 1024 * 1024  # SQLite's own automatic checkpoint point (1000 pages of 4 KiB)
_WAL_MIN = 8 * 1024


def wal_allowance(max_bytes: int) -> int:
    """The write-ahead log a recorder bounded to ``max_bytes`` keeps (``Store.bound_wal``):
    an eighth of the bound, at least two pages, at most SQLite's default 4 MiB."""
    return max(_WAL_MIN, min(_WAL_MAX, max_bytes // 8))


@dataclass(frozen=True)
class SizePlan:
    """How a recorder keeps its files within ``--max-size``: the log is checkpointed at
    ``wal`` bytes (it may hold one commit more before the checkpoint), retention starts when
    the database file passes ``trigger`` and cuts the data down to ``target``."""

    wal: int
    trigger: int
    target: int
    bound: int  # the --max-size it is made of

    @classmethod
    def of(cls, max_bytes: int) -> SizePlan:
        wal = wal_allowance(max_bytes)
        return cls(wal, max(0, max_bytes - 2 * wal), max(0, max_bytes - 3 * wal), max_bytes)


@dataclass(frozen=True)
class PruneResult:
    intervals_deleted: int
    bytes_before: int
    bytes_after: int
    # the size bound could not be met: what is left is the newest intervals (as many as
    # there are sources) and the tables themselves
    over_bound: bool = False


def prune(
    store: Store,
    keep_s: float | None = None,
    max_bytes: int | None = None,
    now: float | None = None,
    *,
    wal_bytes: int = 0,
) -> PruneResult:
    """Delete intervals older than ``keep_s``, then the oldest until the data fits in
    ``max_bytes`` less ``wal_bytes`` (the log a recorder keeps); the freed pages go back to
    the file system and the log is emptied, so the files end within ``max_bytes``: unless
    the tables with the newest interval of each source take more (``over_bound``)."""
    before = file_bytes(store.path)
    budget = None if max_bytes is None else max(0, max_bytes - wal_bytes)
    deleted = 0
    if keep_s is not None:
        cutoff = int(((time.time() if now is None else now) - keep_s) * 1_000_000)
        while n := store.delete_oldest(cutoff, _CHUNK):
            deleted += n
    over_bound = False
    if budget is not None:
        # a bound below what the tables take with a source's newest interval each cannot be
        # met by deleting those: they stay (deleting them would lose the whole recording)
        kept = store.source_count()
        while store.data_bytes() > budget:
            deletable = store.interval_count() - kept
            if deletable <= 0:
                over_bound = True
                break
            # delete in proportion to the excess, at least one interval's worth of progress
            excess = 1 - budget / store.data_bytes()
            count = min(_CHUNK, deletable, int((deletable + kept) * excess) + 1)
            n = store.delete_oldest(None, max(1, count))
            if not n:
                break
            deleted += n
    if deleted or (max_bytes is not None and file_bytes(store.path) > max_bytes):
        store.release_free_pages()
    return PruneResult(deleted, before, file_bytes(store.path), over_bound)


def vacuum(store: Store) -> PruneResult:
    before = file_bytes(store.path)
    store.vacuum()
    return PruneResult(0, before, file_bytes(store.path))
