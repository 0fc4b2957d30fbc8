"""A minimal discrete-event scheduler: a heap of (time µs, sequence, handler, argument).

The sequence number makes the order of simultaneous events the order they were scheduled,
so a run is deterministic for a given seed.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

Handler = Callable[[float, Any], None]


class Scheduler:
    __slots__ = ("_heap", "_seq", "handled", "now")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Handler, Any]] = []
        self._seq = 0
        self.now = 0.0
        self.handled = 0

    def at(self, time_us: float, handler: Handler, arg: Any = None) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (time_us, self._seq, handler, arg))

    def run(self, until_us: float) -> None:
        """Handle every event due before ``until_us``; the clock ends at ``until_us``."""
        heap = self._heap
        pop = heapq.heappop
        n = 0
        while heap and heap[0][0] < until_us:
            t, _, handler, arg = pop(heap)
            self.now = t
            handler(t, arg)
            n += 1
        self.handled += n
        self.now = until_us
