"""Counters the simulated mechanisms accumulate during one event-level window.

Everything is a running total (µs or events) since the last :meth:`Tally.reset`; the
window turns them into per-second rates. Gauges (queue lengths) are kept as time integrals.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# /proc/stat categories the guest's own CPU time falls into.
USER, SYSTEM, IRQ, SOFTIRQ = 0, 1, 2, 3


@dataclass(slots=True)
class GuestTally:
    vcpus: int
    emul_us: float = 0.0
    cp_user_us: float = 0.0
    vnq: int = 0
    vdq: int = 0
    vdq_empty: int = 0
    vdone: int = 0
    request_count: int = 0
    vcpu_wakes: int = 0
    timer_pops: int = 0
    tasklets: int = 0
    guest_interrupts: int = 0
    # per virtual CPU: guest time by /proc/stat category, CP time on its behalf, busy time
    vcpu_emul: list[list[float]] = field(default_factory=list)
    vcpu_cp: list[float] = field(default_factory=list)
    requestq_area: float = 0.0
    pendingq_area: float = 0.0

    def __post_init__(self) -> None:
        if not self.vcpu_emul:
            self.vcpu_emul = [[0.0, 0.0, 0.0, 0.0] for _ in range(self.vcpus)]
            self.vcpu_cp = [0.0] * self.vcpus

    def charge(self, vcpu: int, category: int, guest_us: float, cp_us: float) -> None:
        self.emul_us += guest_us
        self.cp_user_us += cp_us
        self.vcpu_emul[vcpu][category] += guest_us
        self.vcpu_cp[vcpu] += cp_us


@dataclass(slots=True)
class CardTally:
    functions: int
    count: list[int] = field(default_factory=list)
    time_us: list[float] = field(default_factory=list)
    busy_us: float = 0.0

    def __post_init__(self) -> None:
        if not self.count:
            self.count = [0] * self.functions
            self.time_us = [0.0] * self.functions


@dataclass(slots=True)
class Tally:
    guests: list[GuestTally]
    cards: list[CardTally]
    start_us: float = 0.0
    # D5R9 service time accumulators (µs)
    vserv: float = 0.0
    rserv: float = 0.0
    hserv: float = 0.0
    nserv: float = 0.0
    dserv: float = 0.0
    rnq: int = 0
    rdq: int = 0
    rdq_empty: int = 0
    rdone: int = 0
    rnq_rejected: int = 0
    vnq_rejected: int = 0
    nq_waits: int = 0
    waiting_area: float = 0.0
    cp_system_us: float = 0.0
    spin_us: float = 0.0
    cp_interrupts: int = 0
    nq_passes: int = 0
    dq_passes: int = 0
    # the rest of a closed-loop thread's cycle (Little's law checks, docs/MODEL.md)
    requestq_wait_us: float = 0.0
    """Time requests waited in a guest's requestq before their NQAP (summed)."""
    think_us: float = 0.0
    """Time from a closed-loop thread taking its reply to its next request (summed)."""

    @classmethod
    def empty(cls, vcpus: list[int], cards: int, functions: int) -> Tally:
        return cls([GuestTally(n) for n in vcpus], [CardTally(functions) for _ in range(cards)])

    def reset(self, now: float) -> Tally:
        """A fresh tally of the same shape starting at ``now``."""
        fresh = Tally.empty(
            [g.vcpus for g in self.guests], len(self.cards), self.cards[0].functions
        )
        fresh.start_us = now
        return fresh

    @property
    def vnq(self) -> int:
        return sum(g.vnq for g in self.guests)
