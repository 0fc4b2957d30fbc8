"""A window's counters as one flat vector, and how they vary along the window.

Every counter the system model scales from a window (D5R9 accumulators and counts, CP's own
time, the adapters' CMB counts and times, each guest's counts and per virtual CPU CPU time)
has a fixed place in one vector (:class:`Layout`). While a window runs,
:class:`BatchRecorder` records the running totals at equal marks of simulated time. From
them :class:`Spread` gives (1) any stretch of the window: the counters of an actual
``k``-mark stretch of the simulated system, and (2) the deviations of 24-47 equal batches
from their mean: the batch-means estimate of how an average over a longer time varies.
Both hold the spread of the per-operation values, the number of operations, and the
correlations between operations (a poll tick serves several) and between counters (one
more operation brings its service times and CPU costs with it). docs/MODEL.md, section 15.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain, pairwise

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
"""Batches of the batch-means estimate: between half this many and this many."""
MARK_FLOATS = 65_536
"""Totals a window keeps at its marks (numbers, all counters): 512 KB a window."""
MIN_MARKS = 48
MAX_MARKS = 1024


def max_marks(size: int) -> int:
    """Marks a window of ``size`` counters keeps at most (an even number): as many as
    :data:`MARK_FLOATS` allows, within :data:`MIN_MARKS` and :data:`MAX_MARKS`."""
    return min(max(MARK_FLOATS // max(size, 1), MIN_MARKS), MAX_MARKS) // 2 * 2


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


@dataclass(frozen=True, slots=True, eq=False)
class Spread:
    """How a window's rates vary along it (per second, :class:`Layout` order).

    ``marks`` are the running totals at every ``mark_s`` from the start of the measured
    window (the first mark is the start: zeros), flattened, ``size`` numbers a mark.
    ``rows`` are batches of ``batch_s`` minus the batches' mean rates: the variance of an
    interval of ``T`` seconds is that of a batch scaled by ``batch_s / T`` (averaging
    independent stretches)."""

    batch_s: float
    rows: tuple[tuple[float, ...], ...]
    mark_s: float = 0.0
    size: int = 0
    marks: array[float] = field(default_factory=lambda: array("d"))

    @property
    def mark_count(self) -> int:
        return len(self.marks) // self.size if self.size else 0

    def stretch(self, start: int, k: int) -> list[float]:
        """The rates over the ``k`` marks from mark ``start``: an actual stretch."""
        n = self.size
        a = self.marks[start * n : (start + 1) * n]
        b = self.marks[(start + k) * n : (start + k + 1) * n]
        seconds = k * self.mark_s
        return [(y - x) / seconds for x, y in zip(a, b, strict=True)]


NO_SPREAD = Spread(1.0, ())


class BatchRecorder:
    """Running totals at equal marks from ``start_us`` on.

    The mark interval doubles (every other mark is dropped) whenever ``max_marks`` are
    recorded, so a window of any length ends with between half that and that many.
    Running the scheduler to a mark and on from there handles the same events in the
    same order as running it straight through: recording changes nothing."""

    def __init__(
        self,
        start_us: float,
        period_us: float,
        read: Callable[[], list[float]],
        max_marks: int = MAX_MARKS,
    ) -> None:
        self.start_us = start_us
        self.period_us = period_us
        self._read = read
        self._max = max(2, max_marks // 2 * 2)
        self._marks: list[list[float]] = []

    def run(self, sched: Scheduler, until_us: float) -> None:
        """Run ``sched`` to ``until_us``, recording the totals at every mark on the way."""
        while True:
            end = self.start_us + (len(self._marks) + 1) * self.period_us
            if end > until_us:
                break
            sched.run(end)
            self._marks.append(self._read())
            if len(self._marks) >= self._max:
                self._marks = self._marks[1::2]
                self.period_us *= 2
        sched.run(until_us)

    def spread(self) -> Spread:
        """The marks, and the deviations of the complete batches made of them (what runs
        after the last mark is left out)."""
        if len(self._marks) < 2:
            return NO_SPREAD
        size = len(self._marks[0])
        marks = [[0.0] * size, *self._marks]
        mark_s = self.period_us / 1e6
        every = 1
        while (len(marks) - 1) // every >= MAX_BATCHES:
            every *= 2
        ends = marks[::every]
        seconds = mark_s * every
        rates = [[(b - a) / seconds for a, b in zip(x, y, strict=True)] for x, y in pairwise(ends)]
        n = len(rates)
        mean = [sum(col) / n for col in zip(*rates, strict=True)]
        rows = tuple(tuple(x - m for x, m in zip(r, mean, strict=True)) for r in rates)
        flat = array("d", chain.from_iterable(marks))
        return Spread(seconds, rows, mark_s, size, flat)
