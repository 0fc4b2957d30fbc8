"""CP's scheduler lock under contention: spinning that grows with the logical processors and
the dispatch rate (seed 001: a crypto workload that did not scale from 8 to 16 processors).

Every trip through CP's dispatcher takes the scheduler lock (SRMSLOCK); in the model a trip
is a guest's crypto operation (its NQ intercept leaves SIE and CP dispatches the guest
again; the guests' other work is not modelled at this grain). With ``D`` trips a second on
``N`` processor cores (SMT threads share their core's cache, so a core is where the lock word's
line lives; seed 002's SMT-2 runs show CP's cost per operation barely changed):

- the lock is held ``h = hold_us × (1 + BOUNCE × (N − 1))`` µs per trip: the lock word's
  cache line moves between more cores' caches the more there are;
- it is busy ``U = D × h / 10⁶`` of the time, and a request finds it held by one of the other
  processors with probability ``b = U × (N − 1) / N``: ``D × b`` spins a second;
- a spin lasts ``h × (1 + QUEUE × (N − 1) × b / (1 − b))`` µs: the holder's own time, then
  the line of spinners ahead, each slowed by the others hammering the line.

``BOUNCE`` (0.14) and ``QUEUE`` (2) are fitted with ``hold_us`` = 0.72 µs (``HOLD_US_430``) to
seed 001's shape on z/VM 4.3.0: at 50,000 operations a second (seed 002's rate) on 8
processors 3,100 spins a second of 2.8 µs, 0.86% of one processor (seed 001's 8-way: 4,969/s
of 2.037 µs, 1.012%); at the 16-way's 1.96 times the rate on 16 processors 20,000 of 19.6 µs,
39% (seed 001: 13,174/s of 24.989 µs, 32.92%). z/VM 4.4.0's scheduler lock improvement took
that 16-way to 5.186% at 1.73 times its throughput (seed 001's Table 4): ``HOLD_US`` (0.211 µs)
gives 5.17% there, and is the default, since every level the simulator plays
(z/VM 6.3 and later) has the improvement. The spinning is CP's own time (``syst``), taken
from the processors' wait, spread over them evenly; the model has no other lock, so D0R23's
other entries get fixed small shares of it.
"""

from __future__ import annotations

from dataclasses import dataclass

HOLD_US_430 = 0.72  # z/VM 4.3.0's scheduler lock: seed 001's 8-way and 16-way
HOLD_US = 0.211  # z/VM 4.4.0 and later: seed 001's 16-way after the improvement (5.186%)
BOUNCE = 0.14
QUEUE = 2.0
MAX_BUSY = 0.95  # past this the lock is a queue, not a spin: the model stops there
MIN_LEVEL = (5, 3)  # D0R23 as zpmd reads it (z/VM 5.3); D0R2 carries spins before that

# D0R23's entries in the model: (lock, share of the spins, share of those that are share
# requests). The scheduler lock is the one that spins (seed 001); the rest is background.
LOCK_SHARES: tuple[tuple[str, float, float], ...] = (
    ("SRMSLOCK", 0.90, 0.10),
    ("HCPTRQLK", 0.07, 0.0),
    ("RSAAVLLK", 0.03, 0.0),
)


@dataclass(frozen=True, slots=True)
class SpinRates:
    """The LPAR's spinning per second: spins, and µs of processor time spent in them."""

    spins: float = 0.0
    spin_us: float = 0.0


def spin_rates(dispatches_per_s: float, processors: int, hold_us: float = HOLD_US) -> SpinRates:
    """The scheduler lock's spinning at ``dispatches_per_s`` on ``processors``."""
    if processors < 2 or dispatches_per_s <= 0 or hold_us <= 0:
        return SpinRates()
    hold = hold_us * (1.0 + BOUNCE * (processors - 1))
    busy = min(dispatches_per_s * hold / 1e6 * (processors - 1) / processors, MAX_BUSY)
    spins = dispatches_per_s * busy
    per_spin = hold * (1.0 + QUEUE * (processors - 1) * busy / (1.0 - busy))
    return SpinRates(spins, spins * per_spin)


@dataclass(frozen=True, slots=True)
class LockTotals:
    """Cumulative spins and spin µs of one lock, exclusive and shared (D0R23's entry)."""

    name: str
    excl_spins: int
    excl_us: int
    shared_spins: int
    shared_us: int


def lock_totals(spins: float, spin_us: float) -> tuple[LockTotals, ...]:
    """The LPAR's cumulative spinning split over D0R23's entries (``LOCK_SHARES``)."""
    out = []
    for name, share, shared in LOCK_SHARES:
        n, us = spins * share, spin_us * share
        out.append(
            LockTotals(
                name,
                int(n * (1 - shared)),
                int(us * (1 - shared)),
                int(n * shared),
                int(us * shared),
            )
        )
    return tuple(out)
