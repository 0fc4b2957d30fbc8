"""Polled sources that misbehave, for the fault-injection suite (tests/reliability/).

Each is a plain :class:`~esatui.collectors.base.PolledSource`: a counting one that always
answers, one that hangs until released, one that is slow every other call, and one that
returns absurd values. Their samples are stamped with the clock they are given.
"""

from __future__ import annotations

import threading
import time

from esatui.collectors.base import SYSTEM_CLOCK, Clock
from esatui.collectors.model import Availability, Kind, Reading, Sample, counter, gauge

THING = Kind("thing", "a test entity", (counter("ops", "count"), gauge("depth", "count")))


class CountingSource:
    """Answers at once: ``entities`` things whose ``ops`` grow by 10 a sample."""

    kinds: tuple[Kind, ...] = (THING,)

    def __init__(self, name: str, clock: Clock = SYSTEM_CLOCK, entities: int = 3) -> None:
        self.name = name
        self.clock = clock
        self.entities = entities
        self.calls = 0
        self.closed = False

    def probe(self) -> Availability:
        return Availability(True, "a test source")

    def _values(self) -> dict[str, int | float | None]:
        return {"ops": 10 * self.calls, "depth": 1.0}

    def sample(self) -> Sample:
        self.calls += 1
        values = self._values()
        readings = tuple(Reading("thing", str(k), values) for k in range(self.entities))
        return Sample(self.name, self.clock.time_us(), readings, mono_ns=self.clock.mono_ns())

    def sample_gauges(self) -> Sample | None:
        return None

    def close(self) -> None:
        self.closed = True


class HangingSource(CountingSource):
    """Answers its first ``answers`` calls, then hangs (as a SMAPI server that never
    answers, or a sysfs read stuck in the kernel) until :meth:`release`."""

    def __init__(self, name: str, clock: Clock = SYSTEM_CLOCK, answers: int = 0) -> None:
        super().__init__(name, clock)
        self.answers = answers
        self.hung = threading.Event()
        self._released = threading.Event()

    def sample(self) -> Sample:
        if self.calls >= self.answers:
            self.hung.set()
            self._released.wait()
        return super().sample()

    def release(self) -> None:
        self._released.set()


class SlowSource(CountingSource):
    """Takes ``delay_s`` (real time) on every other call."""

    def __init__(self, name: str, clock: Clock = SYSTEM_CLOCK, delay_s: float = 1.0) -> None:
        super().__init__(name, clock)
        self.delay_s = delay_s

    def sample(self) -> Sample:
        if self.calls % 2:
            time.sleep(self.delay_s)
        return super().sample()


ABSURD = (2**64 - 1, -5, 2**63, float("nan"), float("inf"), 10**30)


class AbsurdSource(CountingSource):
    """Every other sample, each entity reads an absurd value (cycling through
    :data:`ABSURD`), in its counter or its gauge; the other samples are sane."""

    def _values(self) -> dict[str, int | float | None]:
        if self.calls % 2:
            return super()._values()
        bad = ABSURD[self.calls // 2 % len(ABSURD)]
        if isinstance(bad, float):
            return {"ops": 10 * self.calls, "depth": bad}
        return {"ops": bad, "depth": float(bad)}
