"""Python's cyclic garbage collector as esatui's long-running commands set it.

A full collection walks every object the collector tracks: in the monitor, start-up's
modules, classes and Textual's own make a collection that lands in the middle of a key cost
25 to 31 ms (three in a ten-key run on the year-long recording); set aside with
:func:`gc.freeze`, 10 to 12 ms. What the command makes afterwards is collected as before.
A view read over a whole range makes hundreds of thousands of objects: the collector is
paused meanwhile (:func:`reading_in_bulk`).
"""

from __future__ import annotations

import contextlib
import gc
import threading
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


class _Pause:
    """The collector paused while any reader holds it: re-entrant and across threads (the
    monitor's view workers), it runs again when the last one is done, if it ran before."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._was_enabled = False

    def hold(self) -> None:
        with self._lock:
            if self._holders == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._holders += 1

    def release(self) -> None:
        with self._lock:
            self._holders -= 1
            if self._holders == 0 and self._was_enabled:
                gc.enable()


_PAUSE = _Pause()


@contextlib.contextmanager
def reading_in_bulk() -> Iterator[None]:
    """No cyclic collection while a range is read and computed over (``d`` over a month:
    hundreds of thousands of objects, none of them in a cycle, that every pass of the
    collector walks again while they live). Reference counting frees them as before; a
    cycle made meanwhile, by any thread, is collected once the collector runs again. Also
    a decorator."""
    _PAUSE.hold()
    try:
        yield
    finally:
        _PAUSE.release()
