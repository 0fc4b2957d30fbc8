"""What the event-level components share: clock, random stream, constants, tallies."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from esatui.sim.events import Scheduler
from esatui.sim.mechanism import Mechanism
from esatui.sim.params import SimParams
from esatui.sim.tally import Tally

if TYPE_CHECKING:
    from esatui.sim.adapter import Card
    from esatui.sim.linux import LinuxGuest
    from esatui.sim.zvm import ControlProgram


@dataclass(frozen=True, slots=True)
class Load:
    """The load level one window is simulated at (the profile's value, quantised)."""

    rate: float = 0.0
    """Open workload arrivals per second for the LPAR (0: closed loops)."""
    cpu_load: float = 0.0
    """Background load on each Linux virtual CPU."""
    dispatch_stretch: float = 1.0
    """Delay factor of CP dispatching (>= 1) from contention for the logical processors."""
    sibling_busy: float = 0.0
    """With SMT: the fraction of time a thread's sibling is busy (the LPAR's utilisation)."""
    cpu_stretch: float = 1.0
    """Elapsed over CPU time of every burst on the guests' processor type (>= 1): the wait
    for a free processor when the LPAR is busy (settled by ``window.settle_contention``)."""


@dataclass
class World:
    params: SimParams
    mech: Mechanism
    load: Load
    rng: random.Random
    sched: Scheduler = field(default_factory=Scheduler)
    tally: Tally = field(init=False)
    cp: ControlProgram = field(init=False)
    guests: list[LinuxGuest] = field(default_factory=list)
    cards: list[Card] = field(default_factory=list)
    cp_factor: float = 1.0
    """CP path length factor (>= 1 with SMT and a busy sibling thread)."""

    def gamma(self, mean: float) -> float:
        """A dispatch latency with mean ``mean`` (gamma: never negative, rarely far out)."""
        k = self.mech.latency_shape
        return self.rng.gammavariate(k, mean / k) if mean > 0 else 0.0
