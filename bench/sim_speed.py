"""How fast the simulated system runs (``python -m bench sim`` or ``python -m bench.sim_speed``).

The bar (issue 6): a simulated day of one-minute intervals of ``mode-vm-day`` well under a
minute. Reports wall and CPU seconds for that day from a cold start (every event-level
window computed: the process-wide window cache is emptied before each run), for one seed 002
window each, and the event engine's speed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from bench.core import Options, Result, fmt
from bench.report import text_report
from esatui.sim.mechanism import DEFAULT
from esatui.sim.model import SimulatedSystem
from esatui.sim.scenarios import SCENARIOS, identity, scenario
from esatui.sim.window import build_world, steady_window, warmup_us
from esatui.sim.world import Load

NAME = "sim"
TITLE = "Simulated system speed: a day of mode-vm-day, seed 002 windows, event engine"
DAY_BAR_S = 60.0


def _timed(fn: Callable[[], object], runs: int) -> tuple[list[float], list[float], object]:
    walls, cpus = [], []
    extra: object = None
    for _ in range(runs):
        steady_window.cache_clear()  # a cold start every run
        w0, c0 = time.perf_counter(), time.process_time()
        extra = fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return walls, cpus, extra


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


def _window(name: str) -> None:
    SimulatedSystem(scenario(name)).advance(60)


def engine() -> tuple[int, int]:
    p = scenario("seed002-t1-interrupts")
    world = build_world(p, DEFAULT, Load(), 1)
    world.sched.run(warmup_us(p, Load(), DEFAULT) + 200_000)
    return world.sched.handled, world.tally.vnq


def run(opts: Options) -> Result:
    result = Result(NAME, TITLE)
    walls, cpus, windows = _timed(day, opts.runs(3, 1))
    result.add("mode-vm-day, 1 day of 60 s intervals: wall", walls, "s", str(windows))
    cpu = result.add("mode-vm-day, 1 day of 60 s intervals: CPU", cpus, "s CPU")
    _, cpus10, _ = _timed(partial(day, 10.0), opts.runs(3, 1))
    result.add("the same day stepped every 10 s (demo, --source sim:): CPU", cpus10, "s CPU")
    seed_runs = opts.runs(3, 1)
    for name in SCENARIOS:
        if name.startswith("seed002"):
            _, window_cpus, _ = _timed(partial(_window, name), seed_runs)
            result.add(f"one window of {name}", window_cpus, "s CPU")
    engine_cpus: list[float] = []
    events = 0
    for _ in range(opts.runs(3, 1)):
        c0 = time.process_time()
        events, _ops = engine()
        engine_cpus.append(time.process_time() - c0)
    result.add("event engine", [events / c for c in engine_cpus], "events/s CPU")
    result.target(
        "a simulated day of mode-vm-day (1,440 one-minute intervals), cold start",
        f"well under {DAY_BAR_S:g} s (issue 6)",
        f"{fmt(cpu.median, 's')} CPU median",
        cpu.median < DAY_BAR_S,
    )
    return result


def main() -> None:
    print("\n".join(text_report(run(Options()))))


if __name__ == "__main__":
    main()
