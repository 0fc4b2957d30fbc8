"""Python's cyclic garbage collector as esatui's long-running commands set it.

A full collection walks every object the collector tracks: in the monitor, start-up's
modules, classes and Textual's own make a collection that lands in the middle of a key cost
25 to 31 ms (three in a ten-key run on the year-long recording); set aside with
:func:`gc.freeze`, 10 to 12 ms. What the command makes afterwards is collected as before.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def start_up_set_aside() -> Iterator[None]:
    """Every object made so far set aside from the collector's passes while the block runs
    (a caller's own freeze is its to undo)."""
    freezing = gc.get_freeze_count() == 0
    if freezing:
        gc.freeze()
    try:
        yield
    finally:
        if freezing:
            gc.unfreeze()


@contextlib.contextmanager
def collecting_rarely() -> Iterator[None]:
    """The collector seldom, and start-up set aside: an export makes a few small objects per
    row (a month of ESACPUU, millions), none of them in a cycle, and every pass of the
    collector walks them to find nothing: 5 to 10% of an export's CPU at the default
    thresholds. Reference counting still frees each row as it is written; the collector
    still runs, every 100,000 new objects instead of every 700."""
    thresholds = gc.get_threshold()
    gc.set_threshold(100_000, *thresholds[1:])
    try:
        with start_up_set_aside():
            yield
    finally:
        gc.set_threshold(*thresholds)
