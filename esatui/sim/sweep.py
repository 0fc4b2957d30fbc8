"""Physical sweeps of the simulated system: one parameter at a time, every output at once.

Each :class:`Sweep` varies one parameter of a seed 002 scenario (the guests' poll timeout,
threads per guest, adapters, key size, SMT) and measures a steady window at every value
(:func:`run`). ``tests/sim/test_sweeps.py`` checks what physics demands of the results
(monotone where it must be, Little's law, no utilisation above 100%); ``python -m
esatui.sim.plots docs/model`` draws them and prints their tables for docs/MODEL.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from esatui.sim import adapter_table as table
from esatui.sim.lpar import logical_processors
from esatui.sim.mechanism import DEFAULT, Mechanism
from esatui.sim.params import SimParams
from esatui.sim.scenarios import scenario
from esatui.sim.window import WindowResult, simulate_steady
from esatui.sim.world import Load

SWEEP_OPS = 12_000
"""Operations per window of a sweep point (half a calibration window: the sweeps compare
neighbouring points, whose difference is far larger than the windows' noise)."""
SWEEP_MIN_US = 60_000.0
"""And at least this long (40 ticks of the z/VM default poll timer)."""
SWEEP_SEED = 7


@dataclass(frozen=True, slots=True)
class Sweep:
    name: str
    title: str
    base: str
    """The scenario the parameter is varied in."""
    param: str
    values: tuple[float | int | bool, ...]
    changes: tuple[tuple[str, object], ...] = ()
    """Fixed changes to the scenario besides the swept parameter."""

    def params(self, value: float | int | bool) -> SimParams:
        return scenario(self.base).replace(**dict(self.changes), **{self.param: value})


SWEEPS: tuple[Sweep, ...] = (
    Sweep(
        "poll",
        "Guest poll timeout, one thread per guest (seed 002 Table 3, CP polling)",
        "seed002-t3-polling",
        "poll_timeout_us",
        (10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 1500.0, 2000.0, 5000.0),
    ),
    Sweep(
        "poll-threads",
        "Guest poll timeout, ten threads per guest (seed 002 Table 1, CP polling)",
        "seed002-t1-polling",
        "poll_timeout_us",
        (10.0, 50.0, 200.0, 1000.0, 1500.0, 5000.0),
    ),
    Sweep(
        "threads",
        "Threads per guest (seed 002 Table 1, CP polling)",
        "seed002-t1-polling",
        "threads",
        (1, 2, 4, 8, 16, 32),
    ),
    Sweep(
        "cards",
        "Adapters in the pool, RSA-2048, ten threads (seed 002 Table 1, CP interrupts)",
        "seed002-t1-interrupts",
        "cards",
        (1, 2, 4, 8),
        (("key_bits", 2048),),
    ),
    Sweep(
        "keys",
        "Key size, one thread per guest (seed 002 Table 3, CP interrupts)",
        "seed002-t3-interrupts",
        "key_bits",
        (1024, 2048, 4096),
    ),
    Sweep(
        "keys-threads",
        "Key size, ten threads per guest (seed 002 Table 1, CP interrupts)",
        "seed002-t1-interrupts",
        "key_bits",
        (1024, 2048, 4096),
    ),
    Sweep(
        "smt",
        "SMT-2 off and on, ten threads per guest (seed 002 Tables 1 and 2, CP interrupts)",
        "seed002-t1-interrupts",
        "smt",
        (False, True),
    ),
)
SWEEP_BY_NAME = {s.name: s for s in SWEEPS}


@dataclass(frozen=True, slots=True)
class Point:
    """What one window of a sweep measured (per second unless said otherwise)."""

    value: float | int | bool
    etr: float
    vserv_us: float
    nserv_us: float
    rserv_us: float
    dserv_us: float
    unsuccessful_dq_s: float
    guest_busy_per_kvnq: float
    cp_busy_per_kvnq: float
    guest_cpu: float
    """CPU-seconds per second of the guests (emulation)."""
    cp_cpu: float
    """CPU-seconds per second of CP (on the guests' behalf and its own)."""
    threads: int
    """Closed-loop threads in the LPAR."""
    cycle_us: float
    """Mean time of one thread's cycle per operation: waiting in the requestq, VSERV, and
    from the reply to its next request, each summed over the operations."""
    pending_avg: float
    """Time-average of the requests outstanding in the guests' AP queues."""
    card_util: float
    """Busiest adapter: engine time over engines × time."""
    vcpu_util: float
    """Busiest virtual CPU: guest plus CP time on its behalf over time."""
    lpar_util: float
    """The LPAR's processors: all CPU time over their capacity."""


def measure(params: SimParams, value: float | int | bool, mech: Mechanism = DEFAULT) -> Point:
    w = simulate_steady(params, mech, Load(), SWEEP_SEED, target_ops=SWEEP_OPS, min_us=SWEEP_MIN_US)
    return point(params, value, w)


def point(params: SimParams, value: float | int | bool, w: WindowResult) -> Point:
    x = w.vnq
    engines = table.engines(params.card_type)
    cpu = w.guest_emul_us + w.cp_user_us + w.cp_system_us
    processors = len(logical_processors(params))
    vcpu = max(
        (e[0] + e[1] + e[2] + e[3] + c) / 1e6
        for g in w.guests
        for e, c in zip(g.vcpu_emul, g.vcpu_cp, strict=True)
    )
    return Point(
        value=value,
        etr=x,
        vserv_us=w.vserv / x,
        nserv_us=w.nserv / x,
        rserv_us=w.rserv / x,
        dserv_us=w.dserv / x,
        unsuccessful_dq_s=w.vdq - w.vdone,
        guest_busy_per_kvnq=w.guest_emul_us / 1e4 / (x / 1000),
        cp_busy_per_kvnq=(w.cp_user_us + w.cp_system_us) / 1e4 / (x / 1000),
        guest_cpu=w.guest_emul_us / 1e6,
        cp_cpu=(w.cp_user_us + w.cp_system_us) / 1e6,
        threads=params.guests * params.threads if params.closed_loop else 0,
        cycle_us=(w.requestq_wait_us + w.vserv + w.think_us) / x,
        pending_avg=sum(g.pendingq_avg for g in w.guests),
        card_util=max(c.busy_us / (engines * 1e6) for c in w.cards),
        vcpu_util=vcpu,
        lpar_util=cpu / (processors * 1e6),
    )


def run(sweep: Sweep, mech: Mechanism = DEFAULT) -> list[Point]:
    return [measure(sweep.params(v), v, mech) for v in sweep.values]


_COLUMNS = (
    ("ETR", "etr", "{:,.0f}"),
    ("VSERV", "vserv_us", "{:.1f}"),
    ("NSERV", "nserv_us", "{:.1f}"),
    ("RSERV", "rserv_us", "{:.1f}"),
    ("DSERV", "dserv_us", "{:.1f}"),
    ("unsucc. DQ/s", "unsuccessful_dq_s", "{:,.0f}"),
    ("guest busy/kVNQ", "guest_busy_per_kvnq", "{:.3f}"),
    ("CP busy/kVNQ", "cp_busy_per_kvnq", "{:.3f}"),
    ("adapter util", "card_util", "{:.1%}"),
    ("LPAR util", "lpar_util", "{:.1%}"),
)


def markdown(sweep: Sweep, points: Sequence[Point]) -> str:
    head = f"| `{sweep.param}` | " + " | ".join(c[0] for c in _COLUMNS) + " |"
    lines = [head, "|---" * (len(_COLUMNS) + 1) + "|"]
    for p in points:
        cells = [fmt.format(getattr(p, attr)) for _, attr, fmt in _COLUMNS]
        lines.append(f"| {p.value} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
