"""A window's counters as one flat vector, and how much they vary from batch to batch.

Every counter the system model scales from a window (D5R9 accumulators and counts, CP's own
time, the adapters' CMB counts and times, each guest's counts and per virtual CPU CPU time)
has a fixed place in one vector (:class:`Layout`). While a window runs,
:class:`BatchRecorder` records the running totals at the ends of equal batches of simulated
time; :meth:`BatchRecorder.spread` turns them into each batch's deviation from the batches'
mean rate (:class:`Spread`). That is the batch-means estimate of how an interval's average
varies: it holds the spread of the per-operation values, the number of operations, and the
correlations between operations (a poll tick serves several) and between counters (one
more operation brings its service times and CPU costs with it). docs/MODEL.md, "Variation".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from esatui.sim.events import Scheduler
from esatui.sim.tally import Tally

CRYPTO = (
    "vserv",
    "rserv",
    "hserv",
    "nserv",
    "dserv",
    "rnq",
    "rdq",
    "rdone",
    "rnq_rejected",
    "vnq_rejected",
    "nq_waits",
    "cp_system_us",
)
"""D5R9 accumulators and counts (and CP's own time), in vector order."""
GUEST = ("request_count", "vnq", "vdq", "vdone")
"""A guest's counts, in vector order; its virtual CPUs follow."""
VCPU = 5
"""Per virtual CPU: user, system, irq, softirq guest time, then CP time on its behalf."""
MAX_BATCHES = 48
"""A window keeps between half this many and this many batches (pairs merge as it grows)."""


@dataclass(frozen=True, slots=True)
class Layout:
    """Where each counter is in the vector, for ``guests`` guests of ``vcpus`` virtual CPUs
    and ``cards`` adapters with ``functions`` CMB functions."""

    guests: int
    vcpus: int
    cards: int
    functions: int

    def card(self, c: int) -> int:
        """Start of adapter ``c``: counts per function, times per function, busy time."""
        return len(CRYPTO) + c * (2 * self.functions + 1)

    def guest(self, g: int) -> int:
        """Start of guest ``g``: :data:`GUEST`, then :data:`VCPU` values per virtual CPU."""
        return self.card(self.cards) + g * (len(GUEST) + self.vcpus * VCPU)

    def vcpu(self, g: int, j: int) -> int:
        return self.guest(g) + len(GUEST) + j * VCPU

    @property
    def size(self) -> int:
        return self.guest(self.guests)


def totals(t: Tally) -> list[float]:
    """The running totals of a window's tally, in :class:`Layout` order."""
    out = [float(getattr(t, name)) for name in CRYPTO]
    for c in t.cards:
        out += c.count
        out += c.time_us
        out.append(c.busy_us)
    for g in t.guests:
        out += (g.request_count, g.vnq, g.vdq, g.vdone)
        for emul, cp in zip(g.vcpu_emul, g.vcpu_cp, strict=True):
            out += emul
            out.append(cp)
    return out


@dataclass(frozen=True, slots=True)
class Spread:
    """Each batch's rates minus the batches' mean rates (per second, :class:`Layout`
    order). The variance of an interval of ``T`` seconds is that of a batch scaled by
    ``batch_s / T`` (averaging independent stretches)."""

    batch_s: float
    rows: tuple[tuple[float, ...], ...]


NO_SPREAD = Spread(1.0, ())


class BatchRecorder:
    """Running totals at the ends of equal batches from ``start_us`` on.

    The batch length doubles (neighbouring pairs merge) whenever :data:`MAX_BATCHES` are
    recorded, so a window of any length ends with between half that and that many.
    Running the scheduler to a batch's end and on from there handles the same events in
    the same order as running it straight through: recording changes nothing."""

    def __init__(self, start_us: float, period_us: float, read: Callable[[], list[float]]) -> None:
        self.start_us = start_us
        self.period_us = period_us
        self._read = read
        self._marks: list[list[float]] = []

    def run(self, sched: Scheduler, until_us: float) -> None:
        """Run ``sched`` to ``until_us``, recording the totals at every batch end on the way."""
        while True:
            end = self.start_us + (len(self._marks) + 1) * self.period_us
            if end > until_us:
                break
            sched.run(end)
            self._marks.append(self._read())
            if len(self._marks) >= MAX_BATCHES:
                self._marks = self._marks[1::2]
                self.period_us *= 2
        sched.run(until_us)

    def spread(self) -> Spread:
        """The complete batches' deviations (the stretch after the last is left out)."""
        if len(self._marks) < 2:
            return NO_SPREAD
        seconds = self.period_us / 1e6
        prev = [0.0] * len(self._marks[0])
        rates: list[list[float]] = []
        for mark in self._marks:
            rates.append([(b - a) / seconds for a, b in zip(prev, mark, strict=True)])
            prev = mark
        n = len(rates)
        mean = [sum(col) / n for col in zip(*rates, strict=True)]
        rows = tuple(tuple(x - m for x, m in zip(r, mean, strict=True)) for r in rates)
        return Spread(seconds, rows)
