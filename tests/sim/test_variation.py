"""Every interval of the simulated system differs a little from the next, as measurements
do, without a counter going backwards or a total that no longer adds up."""

from __future__ import annotations

import itertools
import math
import random
import statistics
from array import array
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esatui.sim import adapter_table
from esatui.sim.batches import BatchRecorder, Spread, totals
from esatui.sim.mechanism import DEFAULT
from esatui.sim.model import DEFAULT_START_US, USER_HZ, SimulatedSystem
from esatui.sim.scenarios import scenario
from esatui.sim.snapshot import SystemSnapshot
from esatui.sim.variation import draw
from esatui.sim.window import build_world, warmup_us
from esatui.sim.world import Load

DAY = scenario("mode-vm-day")


def _at(hour: float) -> int:
    return DEFAULT_START_US + round(hour * 3600) * 1_000_000


@dataclass(frozen=True)
class Interval:
    """What an analyst reads off two consecutive snapshots."""

    seconds: float
    ops: int
    vserv: float
    hserv: float
    dserv: float
    nserv: float
    rserv: float
    busy: tuple[float, ...]
    """Per processor: emulation + user + system, % of the interval."""


def _interval(a: SystemSnapshot, b: SystemSnapshot) -> Interval:
    ca, cb = a.crypto, b.crypto
    ops = cb.vnq - ca.vnq
    per = max(ops, 1)
    seconds = (b.time_us - a.time_us) / 1e6
    busy = tuple(
        (q.emul_us + q.user_us + q.syst_us - p.emul_us - p.user_us - p.syst_us)
        / (q.online_us - p.online_us)
        * 100
        for p, q in zip(a.processors, b.processors, strict=True)
    )
    return Interval(
        seconds,
        ops,
        (cb.vserv_us - ca.vserv_us) / per,
        (cb.hserv_us - ca.hserv_us) / per,
        (cb.dserv_us - ca.dserv_us) / per,
        (cb.nserv_us - ca.nserv_us) / per,
        (cb.rserv_us - ca.rserv_us) / per,
        busy,
    )


def _run(system: SimulatedSystem, seconds: float, n: int) -> list[SystemSnapshot]:
    snaps = [system.snapshot()]
    for _ in range(n):
        system.advance(seconds)
        snaps.append(system.snapshot())
    return snaps


def _counters(snap: SystemSnapshot) -> list[int]:
    c = snap.crypto
    out = [c.vserv_us, c.rserv_us, c.hserv_us, c.nserv_us, c.dserv_us, c.vnq, c.rnq, c.vdq]
    out += [c.rdq, c.vdone, c.rdone, c.vnq_rejected, c.rnq_rejected, c.nq_waits]
    for a in snap.adapters:
        out += [a.busy_us] + [f.count for f in a.functions] + [f.time_us for f in a.functions]
    for p in snap.processors:
        out += [p.online_us, p.emul_us, p.user_us, p.syst_us, p.wait_us, p.steal_us]
    for g in snap.guests:
        out += [g.cpu_us, g.emul_us, g.cp_us, g.samp_total, g.samp_cpu, g.samp_delay]
        for t in g.ticks:
            out += [t.user, t.system, t.idle, t.irq, t.softirq, t.steal]
        if g.ap_queue:
            out.append(g.ap_queue.request_count)
    return out


def _check_interval(a: SystemSnapshot, b: SystemSnapshot) -> None:
    """The invariants of one interval."""
    before, after = _counters(a), _counters(b)
    assert all(y >= x >= 0 for x, y in zip(before, after, strict=True)), "a counter went back"
    seconds = (b.time_us - a.time_us) / 1e6
    for p, q in zip(a.processors, b.processors, strict=True):
        parts = [
            q.emul_us - p.emul_us,
            q.user_us - p.user_us,
            q.syst_us - p.syst_us,
            q.wait_us - p.wait_us,
            q.steal_us - p.steal_us,
        ]
        assert min(parts) >= 0
        # busy + idle + steal = 100% of each processor (integer µs rounding aside)
        assert abs(sum(parts) - (q.online_us - p.online_us)) <= 6
    for g, h in zip(a.guests, b.guests, strict=True):
        for s, t in zip(g.ticks, h.ticks, strict=True):
            ticks = sum(
                getattr(t, f) - getattr(s, f)
                for f in ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
            )
            assert abs(ticks - seconds * USER_HZ) <= 9
    iv = _interval(a, b)
    if iv.ops:
        # VSERV = HSERV + DSERV and HSERV = NSERV + RSERV, but the parts accrue at different
        # moments of an operation: one in flight at an end of the interval is in one part
        # and not yet in the other (as in real D5R9 data)
        in_flight = 0.03 + 1.0 / iv.ops
        assert iv.vserv == pytest.approx(iv.hserv + iv.dserv, rel=in_flight)
        assert iv.hserv == pytest.approx(iv.nserv + iv.rserv, rel=in_flight)


@pytest.fixture(scope="module")
def afternoon() -> list[Interval]:
    """Ten minutes of 10-s intervals of mode-vm-day at 14:00 (a flat stretch of the day)."""
    system = SimulatedSystem(DAY, seed=1, start_us=_at(14))
    snaps = _run(system, 10, 60)
    for a, b in itertools.pairwise(snaps):
        _check_interval(a, b)
    return [_interval(a, b) for a, b in itertools.pairwise(snaps)]


def test_consecutive_intervals_differ(afternoon: list[Interval]) -> None:
    for a, b in itertools.pairwise(afternoon):
        assert a.vserv != b.vserv and a.hserv != b.hserv and a.dserv != b.dserv
        assert all(x != y for x, y in zip(a.busy, b.busy, strict=True))


def test_differences_are_small_and_plausible(afternoon: list[Interval]) -> None:
    # Operations per 10 s: SSL handshakes arrive at random, so the count varies about as
    # much as a Poisson count does (index of dispersion near 1; the level's drift adds).
    counts = [iv.ops for iv in afternoon]
    dispersion = statistics.variance(counts) / statistics.mean(counts)
    assert 0.5 < dispersion < 2.5
    # Service times per operation: averages of ~50 operations move by a few percent.
    vserv = [iv.vserv for iv in afternoon]
    spread = statistics.stdev(vserv) / statistics.mean(vserv)
    assert 0.01 < spread < 0.25
    assert max(abs(b - a) / a for a, b in itertools.pairwise(vserv)) < 0.6
    # Processors: busy moves by a little, never jumps.
    for k in range(len(afternoon[0].busy)):
        busy = [iv.busy[k] for iv in afternoon]
        assert max(abs(b - a) for a, b in itertools.pairwise(busy)) < 10.0
        assert statistics.stdev(busy) > 0.05


def test_few_operations_still_average_real_ones() -> None:
    """At night (about 12 operations in 10 s) an interval's per-operation values are
    averages of simulated operations: RSERV never below the card's own time for one
    operation, one successful guest DQ per operation (up to one in flight at each end)."""
    system = SimulatedSystem(DAY, seed=1, start_us=_at(2))
    snaps = _run(system, 10, 90)
    card_min = adapter_table.service_us(DAY.card_type, "CRT", DAY.key_bits)
    card_min *= 1.0 - DEFAULT.card_variation
    seen = 0
    for a, b in itertools.pairwise(snaps):
        iv = _interval(a, b)
        if iv.ops < 2:
            continue
        seen += 1
        assert iv.rserv >= card_min * (iv.ops - 1) / iv.ops
        assert iv.vserv >= iv.rserv * (iv.ops - 1) / iv.ops
        done = b.crypto.vdone - a.crypto.vdone
        assert abs(done - iv.ops) <= 2
    assert seen > 80


def test_levels_move_continuously() -> None:
    system = SimulatedSystem(DAY, seed=1, start_us=_at(6))
    levels = [system.levels_at(t).interactive for t in range(0, 2 * 3600, 10)]
    steps = [abs(b - a) for a, b in itertools.pairwise(levels)]
    assert max(steps) < 0.01  # no jump from one window to the next
    assert all(s > 0 for s in steps)
    assert levels[-1] > 3 * levels[0]  # the afternoon ramp is still there


def test_steady_runs_average_out() -> None:
    """Seed 002's steady runs: consecutive minutes differ, by far less than 1%. (A single
    thread in step with its guest's 1.5 ms timer completes exactly one operation per tick,
    so the count of operations may repeat to the last one; the times never do.)"""
    system = SimulatedSystem(scenario("seed002-t3-polling"), seed=0)
    system.advance(60)
    snaps = _run(system, 60, 3)
    ivs = [_interval(a, b) for a, b in itertools.pairwise(snaps)]
    for a, b in itertools.pairwise(ivs):
        assert a.vserv != b.vserv and a.rserv != b.rserv
        assert b.ops == pytest.approx(a.ops, rel=0.005)
        assert b.vserv == pytest.approx(a.vserv, rel=0.005)
        assert sum(b.busy) == pytest.approx(sum(a.busy), rel=0.005)
        assert b.busy == pytest.approx(a.busy, rel=0.05)  # the split between IFLs varies


@settings(max_examples=6, deadline=None)
@given(
    seed=st.sampled_from([1, 2]),
    hour=st.floats(min_value=0.0, max_value=23.9),
    step=st.sampled_from([10.0, 60.0]),
    pieces=st.integers(min_value=1, max_value=4),
)
def test_invariants_hold_interval_by_interval(
    seed: int, hour: float, step: float, pieces: int
) -> None:
    system = SimulatedSystem(DAY, seed=seed, start_us=_at(hour), step_s=step)
    prev = system.snapshot()
    for _ in range(6):
        for _ in range(pieces):  # however the clock is moved
            system.advance(step / pieces)
        snap = system.snapshot()
        _check_interval(prev, snap)
        prev = snap


def test_a_draw_has_the_batches_covariance_and_keeps_their_identities() -> None:
    rng = random.Random(4)
    rows = []
    for _ in range(30):
        b, c = rng.gauss(0, 2), rng.gauss(0, 1)
        rows.append((b + c, b, c, rng.gauss(0, 3)))
    mean_rows = [sum(col) / len(rows) for col in zip(*rows, strict=True)]
    rows = [tuple(x - m for x, m in zip(r, mean_rows, strict=True)) for r in rows]
    spread = Spread(batch_s=0.5, rows=tuple(rows))
    mean = (30.0, 20.0, 10.0, 40.0)  # component 0 = 1 + 2 in the mean and every batch
    draws = [draw([(1.0, mean, spread)], rng, 2.0, rng.random()) for _ in range(4000)]
    for d in draws:
        assert d[0] == pytest.approx(d[1] + d[2])
        assert min(d) >= 0
    for k in range(4):
        want = sum(r[k] ** 2 for r in rows) / (len(rows) - 1) * 0.5 / 2.0
        got = statistics.variance([d[k] for d in draws])
        assert got == pytest.approx(want, rel=0.12)
    # between two windows the variances are interpolated too
    other = Spread(batch_s=0.5, rows=tuple(tuple(2 * x for x in r) for r in rows))
    mixed = [draw([(0.5, mean, spread), (0.5, mean, other)], rng, 2.0, 0.5) for _ in range(4000)]
    want = sum(r[3] ** 2 for r in rows) / (len(rows) - 1) * 0.25 * (0.5 + 0.5 * 4)
    assert statistics.variance([d[3] for d in mixed]) == pytest.approx(want, rel=0.12)
    assert statistics.mean([d[3] for d in mixed]) == pytest.approx(40.0, abs=0.1)


def test_a_short_step_is_an_actual_stretch_of_the_window() -> None:
    # totals at 1-s marks of a window of 40 s: component 1 counts operations, component 0
    # accrues 2 ms of service time for each, component 2 never moves
    rng = random.Random(5)
    marks = [[0.0, 0.0, 0.0]]
    for _ in range(40):
        ops = rng.randrange(0, 6)
        marks.append([marks[-1][0] + 2000.0 * ops, marks[-1][1] + ops, 0.0])
    flat = array("d", [x for m in marks for x in m])
    spread = Spread(batch_s=10.0, rows=(), mark_s=1.0, size=3, marks=flat)
    window = tuple(x / 40 for x in marks[-1])
    for position in (0.0, 0.3, 0.99):
        rates = draw([(1.0, window, spread)], rng, 5.0, position)
        start = int(position * 36)
        want = [(b - a) / 5 for a, b in zip(marks[start], marks[start + 5], strict=True)]
        assert rates == pytest.approx(want)
        assert rates[0] == pytest.approx(2000.0 * rates[1])  # 2 ms an operation, exactly
    # at a level between two windows the stretch is scaled to the interpolated means,
    # whichever of the two (here: one with every count doubled) it comes from
    busier = tuple(2 * x for x in window)
    doubled = Spread(10.0, (), 1.0, 3, array("d", [2 * x for x in flat]))
    want = [1.5 * (b - a) / 5 for a, b in zip(marks[0], marks[5], strict=True)]
    for _ in range(4):
        rates = draw([(0.5, window, spread), (0.5, busier, doubled)], rng, 5.0, 0.0)
        assert rates == pytest.approx(want)
    # a step longer than a quarter of the window averages more than it holds: Gaussian
    assert draw([(1.0, window, spread)], rng, 20.0, 0.0) == list(window)  # no batch rows


def test_recording_batches_changes_nothing() -> None:
    p = scenario("seed002-t3-polling")
    until = warmup_us(p, Load(), DEFAULT) + 60_000.0
    plain = build_world(p, DEFAULT, Load(), 9)
    plain.sched.run(until)
    recorded = build_world(p, DEFAULT, Load(), 9)
    batches = BatchRecorder(0.0, 1_500.0, lambda: totals(recorded.tally))
    batches.run(recorded.sched, until / 2)
    batches.run(recorded.sched, until)
    assert totals(recorded.tally) == totals(plain.tally)
    spread = batches.spread()
    assert 24 <= len(spread.rows) < 48
    assert all(math.isfinite(x) for r in spread.rows for x in r)
    assert spread.mark_count > len(spread.rows)
    whole = spread.stretch(0, spread.mark_count - 1)
    assert sum(whole) > 0
