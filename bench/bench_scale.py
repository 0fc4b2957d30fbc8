"""The recorder at scale: CPU per minute of ``esatui collect --source host --source zcrypt``
at the default ``--hf`` (2 s) for 8, 64 and 256 CPUs x 4, 256 and 1024 APQNs (issue 16: 64
CPUs + 256 APQNs under 40 ms a minute, and the cost growing linearly).

Each case is the real recorder (``Recorder``: worker threads, interval builder, store,
ESAOVHD) over fixture trees (``bench.fixtures.host_tree``, ``esatui.sim.interfaces.aptree``)
on a simulated clock, so a minute takes what its work takes: one full sample and 29 gauge
passes. The CPU of a minute is this process's CPU clock (every thread) between two
consecutive recorder intervals, the first two minutes of each run left out (the first
sample reads every static file). A run measures an hour of minutes, so it holds one pass
that rolls up the hour before (``db/rollup.py``: once an hour, not every minute), and a
case's figure is the mean minute of the hour. Runs are interleaved: every case once a
round.
Run alone: ``python -m bench scale``.
"""

from __future__ import annotations

import tempfile
import threading
import time
from itertools import pairwise
from pathlib import Path
from statistics import fmean, median

from bench.core import Options, Result, fmt
from bench.fixtures import LPAR_64, host_tree
from bench.profiling import dominant
from esatui.collectors.base import PolledSource, SourceContext
from esatui.collectors.host import HostSource
from esatui.collectors.zcrypt import ZcryptSource
from esatui.db.records import Interval
from esatui.db.store import Store
from esatui.sampling.recorder import SELF_SOURCE, Recorder
from esatui.sim.clock import SimClock
from esatui.sim.interfaces import aptree

NAME = "scale"
TITLE = "Recorder at scale: CPU per minute, 8/64/256 CPUs x 4/256/1024 APQNs, --hf 2"
BAR_MS = 40.0
CPUS = (8, 64, 256)
APQNS = ((2, 2), (16, 16), (32, 32))  # cards x domains: 4, 256 and 1024 APQNs
MINUTES = 62  # a run: the first two left out, then an hour (one rollup of an hour in it)
HF_S = 2.0


class Case:
    def __init__(self, root: Path, cpus: int, cards: int, domains: int) -> None:
        self.cpus, self.apqns = cpus, cards * domains
        self.root = root
        host_tree(root, cpus, LPAR_64)
        tree = aptree.build(root, cards=cards, domains=domains)
        for card, domain in tree.apqns:
            tree.set_depths(card, domain, domain % 3, card % 5)
        self.store = Store.open(root / "scale.sqlite")
        self.clock = SimClock(time.time_ns() // 1000)

    @property
    def label(self) -> str:
        return f"{self.cpus} CPUs, {self.apqns} APQNs"

    def minutes(self, count: int = MINUTES) -> list[float]:
        """CPU ms of each minute of a run but the first two."""
        marks: list[float] = []

        def mark(interval: Interval) -> None:
            if interval.source == SELF_SOURCE:
                marks.append(time.process_time())

        ctx = SourceContext(root=self.root, clock=self.clock)
        sources: list[PolledSource] = [HostSource(ctx), ZcryptSource(ctx)]
        recorder = Recorder(
            self.store, sources, interval_s=60, hf_s=HF_S, clock=self.clock, on_interval=mark
        )
        recorder.run(threading.Event(), count=count)
        return [(b - a) * 1000 for a, b in pairwise(marks[1:])]

    def close(self) -> None:
        self.store.close()


def run(opts: Options) -> Result:
    result = Result(NAME, TITLE)
    rounds = opts.runs(3, 1)
    cpus = CPUS if not opts.quick else CPUS[:2]
    with tempfile.TemporaryDirectory(prefix="esatui-bench-scale-") as d:
        cases = [
            Case(Path(d) / f"c{n}x{cards}", n, cards, domains)
            for n in cpus
            for cards, domains in APQNS
        ]
        per_minute: dict[str, list[float]] = {c.label: [] for c in cases}
        minutes: dict[str, list[float]] = {c.label: [] for c in cases}
        for _ in range(rounds):
            for case in cases:
                hour = case.minutes()
                per_minute[case.label].append(fmean(hour))
                minutes[case.label] += hour
        for case in cases:
            result.add(
                f"CPU per minute, {case.label} (the mean of an hour)",
                per_minute[case.label],
                "ms CPU",
            )
        at = next(c for c in cases if c.cpus == 64 and c.apqns == 256)
        measured = result.measures[cases.index(at)]
        result.add(f"a minute, {at.label}", minutes[at.label], "ms CPU", "each minute measured")
        result.target(
            "recorder at scale: 64 CPUs + 256 APQNs, --hf 2 (fixture trees)",
            f"< {BAR_MS:g} ms CPU a minute",
            f"{fmt(measured.median, 'ms')} median of {measured.n} hours' mean minute (their "
            f"minutes {fmt(median(minutes[at.label]), 'ms')} median, "
            f"{fmt(max(minutes[at.label]), 'ms')} the worst: each hour's rollup)",
            measured.median < BAR_MS,
        )
        result.notes.append(_table(cases, per_minute))
        profiled = dominant(lambda: at.minutes(3), 1)
        result.notes.append(f"What dominates a minute at 64 CPUs + 256 APQNs: {profiled}.")
        for case in cases:
            case.close()
    return result


def _table(cases: list[Case], per_minute: dict[str, list[float]]) -> str:
    """The medians of the hours' mean minutes, and the cost per CPU and per APQN of a
    straight line through the corners: linear if it predicts the far corner."""
    cost = {(c.cpus, c.apqns): median(per_minute[c.label]) for c in cases}
    cpus = sorted({n for n, _ in cost})
    apqns = sorted({a for _, a in cost})
    cells = "; ".join(f"{n} CPUs x {a} APQNs {cost[n, a]:.1f}" for n, a in cost)
    lo_c, hi_c, lo_a, hi_a = cpus[0], cpus[-1], apqns[0], apqns[-1]
    per_cpu = (cost[hi_c, lo_a] - cost[lo_c, lo_a]) / (hi_c - lo_c)
    per_apqn = (cost[lo_c, hi_a] - cost[lo_c, lo_a]) / (hi_a - lo_a)
    far = cost[lo_c, lo_a] + per_cpu * (hi_c - lo_c) + per_apqn * (hi_a - lo_a)
    return (
        f"CPU per minute, the mean of an hour, median of the runs (ms): {cells}. "
        "A straight line through the corners: "
        f"{per_cpu * 1000:.0f} µs a minute per CPU and {per_apqn * 1000:.0f} µs per APQN, "
        f"which predicts {far:.1f} ms for {hi_c} CPUs x {hi_a} APQNs: measured "
        f"{cost[hi_c, hi_a]:.1f} ms."
    )
