"""Where the LPAR's CPU time goes: guest work onto processors of its type, CP's own work
onto whichever processor is idle, steal on shared processors.

All rates are µs per second of one logical processor. Work measured by the event-level
window is in IFL-speed µs; on a sub-capacity CP it takes ``1 / cp_speed`` times longer.
CP's own work goes to processors in proportion to their idle capacity (seed 000: "z/VM
system activities run pretty much on any of the available logical CPUs", and the slow CP
leaves most of them to the IFLs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from esatui.sim.lpar import LogicalProcessor

CAPACITY_US = 1e6


@dataclass(frozen=True, slots=True)
class TypeDemand:
    """Guest work for the processors of one type (µs per second, already in time units)."""

    emul_us: float
    user_us: float
    syst_us: float = 0.0
    """CP's own work caused by these guests that runs where they run (their I/O, paging)."""


@dataclass(frozen=True, slots=True)
class ProcessorRates:
    emul_us: float
    user_us: float
    syst_us: float
    wait_us: float
    steal_us: float

    @property
    def busy_us(self) -> float:
        return self.emul_us + self.user_us + self.syst_us


@dataclass(frozen=True, slots=True)
class Placement:
    processors: tuple[ProcessorRates, ...]
    served: dict[str, float]
    """Per processor type: the fraction of the guests' demand that got a processor."""
    utilisation: dict[str, float]
    """Per processor type: busy fraction."""


def _weights(n: int) -> list[float]:
    """A small fixed imbalance between processors of a type, as real dispatching shows."""
    return [1.0 + 0.08 * (((i * 0.618034) % 1.0) - 0.5) for i in range(n)]


def place(
    lps: Sequence[LogicalProcessor],
    *,
    demand: dict[str, TypeDemand],
    cp_system_work_us: float,
    idle_system_fraction: float,
    steal_shared: float,
    dedicated: bool,
    jitter: Sequence[float] = (),
    steal_jitter: Sequence[float] = (),
) -> Placement:
    """Place the guests' ``demand`` and CP's own work onto ``lps``. ``jitter`` (per
    processor, around 1) varies each processor's share of its type's work, ``steal_jitter``
    its steal, for one interval; empty: none."""
    n = len(lps)
    emul = [0.0] * n
    user = [0.0] * n
    own = [0.0] * n
    served: dict[str, float] = {}
    for ptype, d in demand.items():
        idx = [i for i, lp in enumerate(lps) if lp.ptype == ptype]
        if not idx:
            continue
        w = _weights(len(idx))
        if jitter:
            w = [x * jitter[i] for x, i in zip(w, idx, strict=True)]
        total_w = sum(w)
        if total_w <= 0:
            # each factor is clamped at 0, and over a short step (its noise grows as the step
            # shrinks) every processor of a type can draw 0: the work is still done somewhere
            w = _weights(len(idx))
            total_w = sum(w)
        want = d.emul_us + d.user_us + d.syst_us
        cap = CAPACITY_US * len(idx) * (1.0 - idle_system_fraction)
        scale = min(1.0, cap / want) if want > 0 else 1.0
        served[ptype] = scale
        for k, i in enumerate(idx):
            share = w[k] / total_w
            emul[i] = min(d.emul_us * scale * share, CAPACITY_US)
            user[i] = min(d.user_us * scale * share, CAPACITY_US - emul[i])
            own[i] = min(d.syst_us * scale * share, CAPACITY_US - emul[i] - user[i])
    # an imbalanced share can fill a processor: its idle-time CP work then has no room
    idle_sys = [
        min(idle_system_fraction * CAPACITY_US + own[i], CAPACITY_US - emul[i] - user[i])
        for i in range(n)
    ]
    room = [max(CAPACITY_US - emul[i] - user[i] - idle_sys[i], 0.0) for i in range(n)]
    # CP's own work (in IFL-speed µs) goes where there is idle capacity, weighted by speed.
    pull = [room[i] * lps[i].speed for i in range(n)]
    total_pull = sum(pull)
    syst = list(idle_sys)
    if total_pull > 0 and cp_system_work_us > 0:
        for i in range(n):
            work = cp_system_work_us * pull[i] / total_pull
            syst[i] += min(work / lps[i].speed, room[i])
    out: list[ProcessorRates] = []
    for i in range(n):
        busy = emul[i] + user[i] + syst[i]
        ratio = steal_shared * (steal_jitter[i] if steal_jitter else 1.0)
        steal = 0.0 if dedicated else max(min(ratio * busy, CAPACITY_US - busy), 0.0)
        out.append(ProcessorRates(emul[i], user[i], syst[i], CAPACITY_US - busy - steal, steal))
    util: dict[str, float] = {}
    for ptype in {lp.ptype for lp in lps}:
        idx = [i for i, lp in enumerate(lps) if lp.ptype == ptype]
        util[ptype] = sum(out[i].busy_us for i in idx) / (CAPACITY_US * len(idx))
    return Placement(tuple(out), served, util)
