"""One event-level window: every operation of a bounded stretch of steady state, as rates.

The window is built from the parameters and a load level, warmed up until the closed loops
and CP's rate estimate have settled, then measured until it holds enough operations (or a
time bound). Its totals divided by its length are the per-second rates the system model
scales to any interval. See docs/MODEL.md ("Speed").
"""

from __future__ import annotations

import dataclasses
import functools
import math
import random
from dataclasses import dataclass

from esatui.sim import adapter_table as table
from esatui.sim.adapter import Card
from esatui.sim.batches import (
    MAX_BATCHES,
    NO_SPREAD,
    BatchRecorder,
    Spread,
    max_marks,
    totals,
)
from esatui.sim.linux import LinuxGuest
from esatui.sim.lpar import guest_cpu_type, logical_processors
from esatui.sim.mechanism import Mechanism
from esatui.sim.params import SimParams
from esatui.sim.tally import Tally
from esatui.sim.world import Load, World
from esatui.sim.zvm import ControlProgram

TARGET_OPS = 24_000
"""Operations a window measures (the relative error of a mean is then well under 1%)."""
MIN_WINDOW_US = 300_000.0
"""At least this long (200 poll timer periods at the z/VM default): at 200,000 operations a
second, 24,000 would last 0.12 s, and the chains of enqueue polls of seed 002's ten-thread
interrupt runs change their throughput by 7% from one such window to the next (2-3% over
0.3 s)."""
MAX_WINDOW_US = 900e6
"""At most this long (low-rate open workloads)."""
MIN_OPS = 4_000
EVENT_BUDGET = 300_000
"""A window with at least ``MIN_OPS`` operations also ends after this many events (slow
operations polled often, e.g. RSA-4096 on a CEX4A, cost many events each)."""
BATCH_TICKS = 10
"""Poll timer periods a batch of the window lasts at least (see :func:`batch_us`)."""


@dataclass(frozen=True, slots=True)
class GuestRates:
    """Per-second rates of one guest (µs per second for times)."""

    emul_us: float
    cp_user_us: float
    vnq: float
    vdq: float
    vdq_empty: float
    vdone: float
    request_count: float
    vcpu_wakes: float
    timer_pops: float
    tasklets: float
    guest_interrupts: float
    vcpu_emul: tuple[tuple[float, float, float, float], ...]
    """Per virtual CPU: user, system, irq, softirq µs per second."""
    vcpu_cp: tuple[float, ...]
    """Per virtual CPU: CP µs per second spent on its behalf."""
    requestq_avg: float
    pendingq_avg: float


@dataclass(frozen=True, slots=True)
class CardRates:
    count: tuple[float, ...]
    time_us: tuple[float, ...]
    busy_us: float


@dataclass(frozen=True, slots=True)
class WindowResult:
    """Rates per second of simulated time, for one configuration and load level."""

    duration_s: float
    ops: int
    vserv: float
    rserv: float
    hserv: float
    nserv: float
    dserv: float
    rnq: float
    rdq: float
    rdq_empty: float
    rdone: float
    rnq_rejected: float
    vnq_rejected: float
    nq_waits: float
    waiting_avg: float
    cp_system_us: float
    spin_us: float
    cp_interrupts: float
    nq_passes: float
    dq_passes: float
    guests: tuple[GuestRates, ...]
    cards: tuple[CardRates, ...]
    vector: tuple[float, ...] = ()
    """Every scaled counter's rate in :class:`~esatui.sim.batches.Layout` order."""
    spread: Spread = NO_SPREAD
    """How the rates varied between the window's batches (the interval variation)."""
    cp_factor: float = 1.0
    """How much longer CP's paths were than on a lone thread (SMT, :func:`smt_factor`)."""
    requestq_wait_us: float = 0.0
    """µs per second requests waited in the guests' requestqs before their NQAP."""
    think_us: float = 0.0
    """µs per second closed-loop threads spent between a reply and their next request."""

    @property
    def vnq(self) -> float:
        return sum(g.vnq for g in self.guests)

    @property
    def vdq(self) -> float:
        return sum(g.vdq for g in self.guests)

    @property
    def vdq_empty(self) -> float:
        return sum(g.vdq_empty for g in self.guests)

    @property
    def vdone(self) -> float:
        return sum(g.vdone for g in self.guests)

    @property
    def guest_emul_us(self) -> float:
        return sum(g.emul_us for g in self.guests)

    @property
    def cp_user_us(self) -> float:
        return sum(g.cp_user_us for g in self.guests)


def smt_factor(params: SimParams, mech: Mechanism, sibling_busy: float) -> float:
    """How much longer CP's paths take on an SMT-2 thread whose sibling is busy that often."""
    if not params.smt:
        return 1.0
    return 1.0 + (1.0 / mech.smt_thread_speed - 1.0) * min(max(sibling_busy, 0.0), 1.0)


def build_world(params: SimParams, mech: Mechanism, load: Load, seed: int) -> World:
    world = World(params, mech, load, random.Random(seed))
    world.cp_factor = smt_factor(params, mech, load.sibling_busy)
    functions = len(table.FUNCTIONS)
    world.tally = Tally.empty([params.vcpus] * params.guests, params.cards, functions)
    world.cards = [Card(world, i, params.card_type, params.domains) for i in range(params.cards)]
    # APQNs in pool order: every domain of card 0, then card 1 ...
    queues = [q for card in world.cards for q in card.queues]
    world.cp = ControlProgram(world, queues)
    world.guests = [LinuxGuest(world, i) for i in range(params.guests)]
    for g in world.guests:
        g.bind()
    if params.closed_loop:
        for g in world.guests:
            g.start_closed_loop(params.threads, params.op)
    else:
        _OpenArrivals(world, load.rate).start()
    if params.foreign_rate > 0:
        _ForeignLoad(world, params.foreign_rate).start()
    return world


class _OpenArrivals:
    """Poisson arrivals of operations, each on a random guest."""

    def __init__(self, world: World, rate: float) -> None:
        self.w = world
        self.mean_gap = 1e6 / rate if rate > 0 else 0.0

    def start(self) -> None:
        if self.mean_gap:
            self.w.sched.at(self.w.rng.expovariate(1.0) * self.mean_gap, self._arrive)

    def _arrive(self, now: float, _: object = None) -> None:
        w = self.w
        op = w.params.op
        crt = op == "rsa_sign" or (op == "rsa_sign_verify" and w.rng.random() < 0.5)
        w.guests[w.rng.randrange(len(w.guests))].arrival(now, crt)
        w.sched.at(now + w.rng.expovariate(1.0) * self.mean_gap, self._arrive)


class _ForeignLoad:
    """Other LPARs' operations on the shared cards (same mix as this LPAR's)."""

    def __init__(self, world: World, rate: float) -> None:
        self.w = world
        self.mean_gap = 1e6 / rate
        p = world.params
        self.crt = (
            table.function_index("CRT", p.key_bits),
            table.service_us(p.card_type, "CRT", p.key_bits),
        )
        self.me = (
            table.function_index("ME", p.key_bits),
            table.service_us(p.card_type, "ME", p.key_bits),
        )

    def start(self) -> None:
        self.w.sched.at(self.w.rng.expovariate(1.0) * self.mean_gap, self._arrive)

    def _arrive(self, now: float, _: object = None) -> None:
        w = self.w
        op = w.params.op
        crt = op == "rsa_sign" or (op == "rsa_sign_verify" and w.rng.random() < 0.5)
        fn, base = self.crt if crt else self.me
        w.cards[w.rng.randrange(len(w.cards))].submit_foreign(now, fn, base)
        w.sched.at(now + w.rng.expovariate(1.0) * self.mean_gap, self._arrive)


def _reset(world: World, now: float) -> None:
    for g in world.guests:
        g.flush(now)
    world.cp.flush(now)
    world.tally = world.tally.reset(now)
    for g in world.guests:
        g.bind()


def batch_us(params: SimParams) -> float:
    """The first batch length: at least ``BATCH_TICKS`` poll timer periods, so that where
    a batch cuts the timer grid matters little (batches double as the window grows)."""
    tick = 0.0 if params.poll_timeout_us == "irq" else float(params.poll_timeout_us)
    return max(MIN_WINDOW_US / MAX_BATCHES, BATCH_TICKS * tick)


def warmup_us(params: SimParams, load: Load, mech: Mechanism) -> float:
    tick = 0.0 if params.poll_timeout_us == "irq" else float(params.poll_timeout_us)
    warm = max(20 * tick, 30_000.0, 10 * mech.cp_nq_poll_min_us)
    if not params.closed_loop and load.rate > 0:
        warm = max(warm, min(20.0 / load.rate * 1e6, 60e6))
    return warm


def simulate(
    params: SimParams,
    mech: Mechanism,
    load: Load,
    seed: int,
    *,
    target_ops: int = TARGET_OPS,
    max_us: float = MAX_WINDOW_US,
    min_us: float = MIN_WINDOW_US,
) -> WindowResult:
    """Simulate a steady-state window at ``load`` and return its per-second rates."""
    world = build_world(params, mech, load, seed)
    warm = warmup_us(params, load, mech)
    world.sched.run(warm)
    _reset(world, warm)
    warm_events = world.sched.handled
    batches = BatchRecorder(
        warm, batch_us(params), lambda: totals(world.tally), max_marks(len(totals(world.tally)))
    )
    end = warm
    # Grow the window in steps sized from the rate seen so far.
    step = min_us
    while True:
        end += step
        batches.run(world.sched, end)
        ops = world.tally.vnq
        elapsed = end - warm
        if (ops >= target_ops and elapsed >= min_us) or elapsed >= max_us:
            break
        if ops >= min(MIN_OPS, target_ops) and world.sched.handled - warm_events >= EVENT_BUDGET:
            break
        rate = ops / elapsed if ops else 0.0
        needed = (target_ops - ops) / rate if rate > 0 else step * 4
        events_per_us = max(world.sched.handled - warm_events, 1) / elapsed
        step = min(
            max(needed * 1.05, 1000.0),
            max_us - elapsed,
            step * 16,
            max(EVENT_BUDGET / 4 / events_per_us, 1000.0),
        )
    for g in world.guests:
        g.flush(end)
    world.cp.flush(end)
    return _rates(world.tally, end - warm, batches.spread(), world.cp_factor)


def _rates(t: Tally, elapsed_us: float, spread: Spread, cp_factor: float) -> WindowResult:
    s = elapsed_us / 1e6
    guests = tuple(
        GuestRates(
            emul_us=g.emul_us / s,
            cp_user_us=g.cp_user_us / s,
            vnq=g.vnq / s,
            vdq=g.vdq / s,
            vdq_empty=g.vdq_empty / s,
            vdone=g.vdone / s,
            request_count=g.request_count / s,
            vcpu_wakes=g.vcpu_wakes / s,
            timer_pops=g.timer_pops / s,
            tasklets=g.tasklets / s,
            guest_interrupts=g.guest_interrupts / s,
            vcpu_emul=tuple((c[0] / s, c[1] / s, c[2] / s, c[3] / s) for c in g.vcpu_emul),
            vcpu_cp=tuple(c / s for c in g.vcpu_cp),
            requestq_avg=g.requestq_area / elapsed_us,
            pendingq_avg=g.pendingq_area / elapsed_us,
        )
        for g in t.guests
    )
    cards = tuple(
        CardRates(
            count=tuple(c / s for c in ct.count),
            time_us=tuple(x / s for x in ct.time_us),
            busy_us=ct.busy_us / s,
        )
        for ct in t.cards
    )
    return WindowResult(
        duration_s=s,
        ops=t.vnq,
        vserv=t.vserv / s,
        rserv=t.rserv / s,
        hserv=t.hserv / s,
        nserv=t.nserv / s,
        dserv=t.dserv / s,
        rnq=t.rnq / s,
        rdq=t.rdq / s,
        rdq_empty=t.rdq_empty / s,
        rdone=t.rdone / s,
        rnq_rejected=t.rnq_rejected / s,
        vnq_rejected=t.vnq_rejected / s,
        nq_waits=t.nq_waits / s,
        waiting_avg=t.waiting_area / elapsed_us,
        cp_system_us=t.cp_system_us / s,
        spin_us=t.spin_us / s,
        cp_interrupts=t.cp_interrupts / s,
        nq_passes=t.nq_passes / s,
        dq_passes=t.dq_passes / s,
        guests=guests,
        cards=cards,
        vector=tuple(x / s for x in totals(t)),
        spread=spread,
        cp_factor=cp_factor,
        requestq_wait_us=t.requestq_wait_us / s,
        think_us=t.think_us / s,
    )


def background_busy_us(params: SimParams, load: Load) -> float:
    """µs per second the Linux guests' background load keeps their processor type busy."""
    return load.cpu_load * params.vcpus * params.guests * 1e6


def type_utilisation(params: SimParams, load: Load, result: WindowResult) -> float:
    """CPU time on the Linux guests' processor type over its capacity (not capped: a
    window that assumed free processors can ask for more than there are)."""
    ptype = guest_cpu_type(params)
    n = sum(1 for lp in logical_processors(params) if lp.ptype == ptype)
    busy = result.guest_emul_us + result.cp_user_us + result.cp_system_us
    return (busy + background_busy_us(params, load)) / (n * 1e6)


def sibling_busy(params: SimParams, load: Load, result: WindowResult) -> float:
    """Utilisation of the Linux guests' processor type: the chance a sibling thread is busy."""
    return min(type_utilisation(params, load, result), 1.0)


CONTENTION_FROM = 0.5
"""Utilisation above which the wait for a free processor is simulated (below it the
Erlang-C wait is under 1% of a burst for 8 processors and is left out)."""
MAX_RHO = 0.995


def erlang_c_stretch(processors: int, utilisation: float) -> float:
    """Elapsed over CPU time of a burst on ``processors`` busy ``utilisation`` of the time:
    1 + the mean wait for a processor in units of a burst (M/M/n, Erlang C)."""
    n = max(processors, 1)
    rho = min(max(utilisation, 0.0), MAX_RHO)
    a = n * rho
    term = 1.0
    total = 1.0
    for k in range(1, n):
        term *= a / k
        total += term
    last = term * a / n / (1.0 - rho)
    c = last / (total + last)
    return 1.0 + c / (n * (1.0 - rho))


def settle_contention(
    params: SimParams,
    mech: Mechanism,
    load: Load,
    seed: int,
    first: WindowResult,
    target_ops: int,
    min_us: float = MIN_WINDOW_US,
) -> WindowResult:
    """The window at the processor contention its own load causes.

    A window simulates each virtual CPU and CP as if a processor were always free; when the
    result keeps the guests' processor type busy, every burst also waits for one. The
    stretch of elapsed over CPU time is where the load the stretched window produces gives
    back the same stretch (bisection: more stretch, less throughput, less load).
    """
    ptype = guest_cpu_type(params)
    n = sum(1 for lp in logical_processors(params) if lp.ptype == ptype)
    own = type_utilisation(params, load, first) - background_busy_us(params, load) / (n * 1e6)
    if own <= CONTENTION_FROM:
        # the background load's own wait is in ``Load.dispatch_stretch`` and the threads'
        # stretched bursts; only crypto work that fills the processors itself is settled
        return first
    u = type_utilisation(params, load, first)
    lo, hi = 1.0, erlang_c_stretch(n, u)
    best = first
    for _ in range(6):
        mid = math.sqrt(lo * hi)
        stretched = dataclasses.replace(load, cpu_stretch=mid)
        best = simulate(params, mech, stretched, seed, target_ops=target_ops, min_us=min_us)
        if erlang_c_stretch(n, type_utilisation(params, stretched, best)) > mid:
            lo = mid
        else:
            hi = mid
    return best


@functools.lru_cache(maxsize=128)
def steady_window(params: SimParams, mech: Mechanism, load: Load, seed: int) -> WindowResult:
    """:func:`simulate_steady`, shared by every model in the process (inputs are frozen)."""
    return simulate_steady(params, mech, load, seed)


def simulate_steady(
    params: SimParams,
    mech: Mechanism,
    load: Load,
    seed: int,
    *,
    target_ops: int = TARGET_OPS,
    min_us: float = MIN_WINDOW_US,
) -> WindowResult:
    """:func:`simulate`, with SMT's slowdown of CP and the wait for a free processor
    consistent with the load they produce.

    The busier the LPAR, the more often an SMT thread's sibling is busy and the longer CP's
    paths take; a second window at the utilisation the first one measured settles it. When
    the LPAR is busy enough for bursts to wait for a processor, :func:`settle_contention`.
    """
    if not params.smt:
        result = simulate(params, mech, load, seed, target_ops=target_ops, min_us=min_us)
        return settle_contention(params, mech, load, seed, result, target_ops, min_us)
    first = dataclasses.replace(load, sibling_busy=background_busy_us(params, load) / 1e6)
    result = simulate(params, mech, first, seed, target_ops=target_ops, min_us=min_us)
    settled = dataclasses.replace(load, sibling_busy=sibling_busy(params, first, result))
    second = simulate(params, mech, settled, seed, target_ops=target_ops, min_us=min_us)
    return settle_contention(params, mech, settled, seed, second, target_ops, min_us)
