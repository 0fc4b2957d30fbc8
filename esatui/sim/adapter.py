"""Crypto Express adapters: engines serving requests from the real AP queues.

A card has a few parallel engines and a FIFO in front of them; each operation occupies one
engine for its service time (by card type, method and key size). The card's measurement
block (CMB) counts operations and engine time per function, for every LPAR using it.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from esatui.sim import adapter_table as table

if TYPE_CHECKING:
    from esatui.sim.requests import Request
    from esatui.sim.world import World


class RealQueue:
    """One APQN of the shared pool as CP uses it."""

    __slots__ = ("card", "domain", "irq_pending", "outstanding", "replies")

    def __init__(self, card: Card, domain: int) -> None:
        self.card = card
        self.domain = domain
        self.outstanding = 0  # enqueued and not yet dequeued by CP
        self.replies: deque[Request] = deque()  # done by the card, waiting for CP's DQ
        self.irq_pending = False  # an adapter interrupt was raised and not yet served


class _Foreign:
    """An operation of another LPAR: occupies an engine, counted by the CMB only."""

    __slots__ = ("function", "service")

    def __init__(self, function: int, service: float) -> None:
        self.function = function
        self.service = service


class Card:
    __slots__ = ("_var", "busy", "card_type", "engines", "fifo", "index", "queues", "w")

    def __init__(self, world: World, index: int, card_type: str, domains: int) -> None:
        self.w = world
        self.index = index
        self.card_type = card_type
        self.engines = table.engines(card_type)
        self.busy = 0
        self.fifo: deque[Request | _Foreign] = deque()
        self.queues = [RealQueue(self, d) for d in range(domains)]
        self._var = world.mech.card_variation

    def service_time(self, base_us: float) -> float:
        v = self._var
        return base_us * (1.0 - v + 2.0 * v * self.w.rng.random())

    def submit(self, now: float, job: Request | _Foreign) -> None:
        if self.busy < self.engines:
            self._start(now, job)
        else:
            self.fifo.append(job)

    def submit_foreign(self, now: float, function: int, base_us: float) -> None:
        self.submit(now, _Foreign(function, self.service_time(base_us)))

    def _start(self, now: float, job: Request | _Foreign) -> None:
        self.busy += 1
        self.w.sched.at(now + job.service, self._done, job)

    def _done(self, now: float, job: Request | _Foreign) -> None:
        self.busy -= 1
        ct = self.w.tally.cards[self.index]
        ct.count[job.function] += 1
        ct.time_us[job.function] += job.service
        ct.busy_us += job.service
        if self.fifo:
            self._start(now, self.fifo.popleft())
        if isinstance(job, _Foreign):
            return
        job.t_card = now
        queue = job.queue
        assert queue is not None
        queue.replies.append(job)
        self.w.cp.reply_arrived(now, queue)
