"""The simulated clock: the recorder and the sources read time from it, and its ``wait``
moves time on instead of sleeping. It is the one simulated clock: ``esatui sim`` and ``esatui
demo`` run on it, and so do the tests and benchmarks that record a fake system.

``esatui sim`` runs the ordinary recorder on a :class:`SimClock` without pacing: a day of
intervals is recorded as fast as the model and the collectors go. ``esatui demo`` paces it:
simulated time before ``live_from_us`` (the backlog) runs at full speed, after it at
``speed`` times wall-clock speed. After each move, ``on_advance`` (the simulated site's
``sync``) brings the model and its artifacts up to the new time, so the sources then read
files, a device and a server that already show that moment.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

# How long a paced wait sleeps at most before it looks at its stop event again.
_POLL_S = 0.25


class SimClock:
    """A :class:`~esatui.collectors.base.Clock` on simulated time (µs since the epoch)."""

    def __init__(
        self,
        start_us: int,
        *,
        speed: float | None = None,
        live_from_us: int | None = None,
        on_advance: Callable[[int], None] | None = None,
    ) -> None:
        if speed is not None and speed <= 0:
            raise ValueError(f"speed must be above 0, not {speed}")
        self._start_us = start_us
        self._now_us = start_us
        self._speed = speed
        self._live_from_us = start_us if live_from_us is None else live_from_us
        self._real0 = time.monotonic()
        self.on_advance = on_advance

    def time_us(self) -> int:
        return self._now_us

    def mono_ns(self) -> int:
        return (self._now_us - self._start_us) * 1000

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        if stop.is_set():
            return True
        target = self._now_us + self._step_us(seconds)
        if self._speed is not None and self._pace(stop, target):
            return True
        if stop.is_set():
            return True
        self._now_us = target
        if self.on_advance is not None:
            self.on_advance(target)
        return stop.is_set()

    def _step_us(self, seconds: float) -> int:
        """How far a wait of ``seconds`` moves time (a test's clock may wake late)."""
        return max(0, round(seconds * 1e6))

    def _pace(self, stop: threading.Event, target_us: int) -> bool:
        """Sleep until wall-clock time has caught up with ``target_us``; True if stopped."""
        assert self._speed is not None
        ahead_us = max(0, target_us - self._live_from_us)
        deadline = self._real0 + ahead_us / 1e6 / self._speed
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if stop.wait(min(left, _POLL_S)):
                return True
