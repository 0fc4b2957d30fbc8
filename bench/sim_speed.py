"""How fast the simulated system runs (``python -m bench.sim_speed``).

The bar (issue 6): a simulated day of one-minute intervals of ``mode-vm-day`` well under a
minute. Reports wall and CPU seconds for that day from a cold start (every event-level
window computed), for one seed 002 window each, and the event engine's speed.
"""

from __future__ import annotations

import time

from esatui.sim.mechanism import DEFAULT
from esatui.sim.model import SimulatedSystem
from esatui.sim.scenarios import SCENARIOS, identity, scenario
from esatui.sim.window import build_world, warmup_us
from esatui.sim.world import Load


def _timed(label: str, fn: object) -> None:
    assert callable(fn)
    w0, c0 = time.perf_counter(), time.process_time()
    extra = fn()
    w1, c1 = time.perf_counter(), time.process_time()
    print(f"{label:34s} wall {w1 - w0:6.2f} s  cpu {c1 - c0:6.2f} s  {extra or ''}")


def day(step_s: float = 60.0) -> str:
    """A day of 60-s intervals; ``esatui sim --interval 60`` steps the model every 60 s (one
    draw of every rate per interval), the demo and ``--source sim:`` every 10 s."""
    system = SimulatedSystem(
        scenario("mode-vm-day"), seed=1, identity=identity("mode-vm-day"), step_s=step_s
    )
    for _ in range(1440):
        system.advance(60)
        system.snapshot()
    return f"{system.windows_simulated} windows"


def engine() -> str:
    p = scenario("seed002-t1-interrupts")
    world = build_world(p, DEFAULT, Load(), 1)
    world.sched.run(warmup_us(p, Load(), DEFAULT) + 200_000)
    return f"{world.sched.handled} events, {world.tally.vnq} ops"


def main() -> None:
    _timed("mode-vm-day, 1 day of 60 s intervals", day)
    _timed("the same day, 10 s steps (warm)", lambda: day(10.0))
    for name in SCENARIOS:
        if name.startswith("seed002"):
            _timed(name, lambda name=name: SimulatedSystem(scenario(name)).advance(60))
    _timed("engine: t1-interrupts 0.23 s simulated", engine)


if __name__ == "__main__":
    main()
