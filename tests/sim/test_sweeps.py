"""Sweeps a physicist would accept: one parameter at a time over its whole range, every
output monotone where physics says it must be, Little's law, no utilisation above 100%.

The sweeps are those of docs/MODEL.md (``esatui.sim.sweep.SWEEPS``, drawn by ``python -m
esatui.sim.sweep --plots docs/model``). Where the physics is a sawtooth rather than a
slope (a single thread's throughput against the poll timeout: it completes one operation
every whole number of ticks, docs/ZCRYPT.md section 5), the test allows the documented step.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import pytest

from esatui.sim.sweep import SWEEP_BY_NAME, SWEEPS, Point, run

_cache: dict[str, list[Point]] = {}


def points(name: str) -> list[Point]:
    if name not in _cache:
        _cache[name] = run(SWEEP_BY_NAME[name])
    return _cache[name]


def rising(values: Sequence[float], slack: float = 0.0) -> bool:
    """Non-decreasing, each step allowed to fall back by ``slack`` (a fraction)."""
    return all(b >= a * (1.0 - slack) for a, b in itertools.pairwise(values))


def column(pts: Sequence[Point], get: Callable[[Point], float]) -> list[float]:
    return [get(p) for p in pts]


@pytest.mark.parametrize("name", [s.name for s in SWEEPS])
def test_littles_law_and_utilisation(name: str) -> None:
    for p in points(name):
        # every closed-loop thread is always somewhere in its cycle: N = X x cycle
        assert p.threads == pytest.approx(p.etr * p.cycle_us / 1e6, rel=0.02), p
        # requests outstanding in the AP queues: L = lambda x VSERV
        assert p.pending_avg == pytest.approx(p.etr * p.vserv_us / 1e6, rel=0.02), p
        assert 0.0 < p.card_util <= 1.0, p
        assert 0.0 < p.vcpu_util <= 1.0 + 1e-9, p
        assert 0.0 < p.lpar_util <= 1.0, p
        assert min(p.nserv_us, p.rserv_us, p.dserv_us) >= 0.0, p
        # the parts of VSERV add up (NSERV + RSERV + DSERV, up to operations in flight)
        assert p.nserv_us + p.rserv_us + p.dserv_us == pytest.approx(p.vserv_us, rel=0.01), p


@pytest.mark.parametrize("name", ["poll", "poll-threads"])
def test_poll_timeout(name: str) -> None:
    pts = points(name)  # poll timeout rising
    timeouts = [float(p.value) for p in pts]
    # the shorter the timeout, the more guest dequeues find nothing, and the more CPU the
    # guests and CP spend (per second: per operation it can fall where faster replies
    # let CP's DQ loop find more per pass or enqueue polls serve several threads)
    assert rising(column(pts, lambda p: p.unsuccessful_dq_s)[::-1])
    assert rising(column(pts, lambda p: p.guest_cpu)[::-1], slack=0.02)
    assert rising(column(pts, lambda p: p.cp_cpu)[::-1], slack=0.02)
    # ... and, while the processors have room, the sooner replies are taken: VSERV and
    # DSERV grow with the timeout, apart from the tick quantisation's steps (a reply waits
    # at most one tick more); once the polling itself fills the processors, everything
    # waits for them and faster polling loses
    roomy = [p for p in pts if p.lpar_util < 0.6]
    for a, b in itertools.pairwise(roomy):
        assert b.vserv_us >= a.vserv_us - float(a.value), (a, b)
        assert b.dserv_us >= a.dserv_us - float(a.value), (a, b)
    assert rising(column(roomy, lambda p: p.vserv_us), slack=0.10)
    # throughput falls as the timeout grows, within a tick's step
    assert rising(column(roomy, lambda p: p.etr)[::-1], slack=0.15)
    busy = [p for p in pts if p.lpar_util >= 0.6]
    assert all(p.etr <= max(q.etr for q in roomy) for p in busy)
    for p, tau in zip(pts, timeouts, strict=True):
        # a reply never waits much more than one tick for the guest to take it
        assert p.dserv_us < tau + 60.0, p


def test_single_thread_timer_regime() -> None:
    """One thread per guest: in step with its timer (docs/ZCRYPT.md section 5)."""
    for p in points("poll"):
        tau = float(p.value)
        if tau >= 1000:
            # one operation per tick and guest, and one unsuccessful DQ per operation
            assert p.etr == pytest.approx(10 / (tau * 1e-6), rel=0.02)
            assert p.unsuccessful_dq_s == pytest.approx(p.etr, rel=0.02)
            assert p.dserv_us > tau - p.nserv_us - p.rserv_us - 15.0
        elif tau <= 50:
            # every tick of every guest polls: one unsuccessful DQ per tick (seed 002's
            # 6,000,000 per 30-s interval at 50 µs) unless the ticks outrun the guest
            ticks = 10 / (tau * 1e-6)
            assert p.unsuccessful_dq_s <= ticks * 1.02
            if tau >= 50:
                assert p.unsuccessful_dq_s == pytest.approx(ticks, rel=0.05)


def test_threads() -> None:
    pts = points("threads")
    # more threads never lower throughput (up to the queue's depth a thread's cycle can
    # even shorten: other threads' enqueues poll for its reply) ...
    assert rising(column(pts, lambda p: p.etr), slack=0.02)
    # ... and beyond the queue's seven outstanding requests more threads only wait longer
    seven = [p for p in pts if int(p.value) >= 8]
    assert all(p.pending_avg <= 7 * 10 * 1.001 for p in pts)
    assert rising(column(seven, lambda p: p.cycle_us))


def test_adapters() -> None:
    pts = points("cards")
    assert rising(column(pts, lambda p: p.etr), slack=0.03)
    assert rising(column(pts, lambda p: p.rserv_us)[::-1], slack=0.03)
    assert rising(column(pts, lambda p: p.card_util)[::-1], slack=0.02)


@pytest.mark.parametrize("name", ["keys", "keys-threads"])
def test_key_size(name: str) -> None:
    pts = points(name)
    assert rising(column(pts, lambda p: p.rserv_us))
    assert pts[-1].rserv_us > 3 * pts[0].rserv_us
    assert rising(column(pts, lambda p: p.card_util))
    assert rising(column(pts, lambda p: p.etr)[::-1], slack=0.02)


def test_smt() -> None:
    off, on = points("smt")
    # seed 002 Tables 1 and 2: CP's paths take longer on a busy SMT-2 core, the guests'
    # work does not
    assert on.cp_busy_per_kvnq > off.cp_busy_per_kvnq
    assert on.guest_busy_per_kvnq == pytest.approx(off.guest_busy_per_kvnq, rel=0.05)
    assert on.lpar_util < off.lpar_util  # twice the logical processors
