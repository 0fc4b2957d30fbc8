"""``esatui sim``: record a simulated system through the ordinary recorder and sources.

The recorder runs on a :class:`~esatui.sim.clock.SimClock` without pacing, so a simulated
day is written as fast as the model, the artifacts and the collectors go. What is recorded
is what ``esatui collect`` would record on that system: the sources are the ordinary ones
(``host``, ``zcrypt``, ``vmcp``, ``monitor``, ``smapi``) reading the simulated artifacts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from esatui.collectors.base import SourceContext
from esatui.db.store import Store
from esatui.sampling.recorder import Recorder, RecorderStats
from esatui.sim.clock import SimClock
from esatui.sim.confidence import describe
from esatui.sim.model import DEFAULT_START_US
from esatui.sim.params import ParamError, SimParams, parse_params
from esatui.sim.scenarios import identity as scenario_identity
from esatui.sim.scenarios import scenario as scenario_params
from esatui.sim.site import SimulatedSite
from esatui.sim.snapshot import Identity
from esatui.timeparse import iso

DEFAULT_SCENARIO = "mode-vm-day"
SIM_HF_S = 10.0
"""Gauge sampling of ``esatui sim``: every 10 s, or 6 times an interval when that is longer
(the live default is 2 s; the gauges are the model's draws around its averages, so fewer
samples lose nothing and keep a simulated day well under a minute)."""


class EndingEvent(threading.Event):
    """The recorder's stop event: setting it also ends the simulated monitor's data, so the
    ``monitor`` source finishes at once (the recorder sets it when the duration is over)."""

    def __init__(self, on_set: Callable[[], None]) -> None:
        super().__init__()
        self._on_set = on_set

    def set(self) -> None:
        super().set()
        self._on_set()


class SimUsageError(ValueError):
    """A scenario or parameter that cannot be used (one line, exit status 2)."""


@dataclass(frozen=True)
class Simulation:
    """What to simulate: the parameters, where they came from, and the machine's names."""

    params: SimParams
    label: str
    identity: Identity
    seed: int = 0


def resolve(scenario: str | None, settings: Sequence[str], seed: int = 0) -> Simulation:
    """The parameters of ``--scenario`` (default: the SPEC's defaults) with ``--set`` on top."""
    try:
        base = scenario_params(scenario) if scenario else SimParams()
    except KeyError as exc:
        raise SimUsageError(str(exc.args[0])) from None
    try:
        params = parse_params(settings, base)
    except ParamError as exc:
        raise SimUsageError(str(exc)) from None
    label = scenario or "custom"
    if settings:
        label += " " + " ".join(s.strip() for s in settings)
    if seed:
        label += f" seed={seed}"
    ident = scenario_identity(scenario) if scenario else scenario_identity("")
    return Simulation(params, label, ident, seed)


def record(
    sim: Simulation,
    db_path: Path,
    *,
    duration_s: float,
    interval_s: float = 60.0,
    start_us: int = DEFAULT_START_US,
    hf_s: float | None = None,
    warn: Callable[[str], None] = print,
    monwrite: Path | None = None,
) -> RecorderStats:
    """Record ``duration_s`` of simulated time into ``db_path``; the recorder's statistics.

    ``hf_s`` is the gauge sampling period (default: :data:`SIM_HF_S`, at least a sixth of
    the interval); none when it is not shorter than the interval."""
    hf = hf_s if hf_s is not None else max(SIM_HF_S, interval_s / 6)
    clock = SimClock(start_us)
    site = SimulatedSite(
        sim.params,
        label=sim.label,
        start_us=start_us,
        seed=sim.seed,
        identity=sim.identity,
        monitor_interval_s=interval_s,
        monwrite=monwrite,
        warn=warn,
    )
    clock.on_advance = site.sync
    store = Store.open(db_path)
    try:
        sources = site.sources(SourceContext(site.root, warn, clock))
        recorder = Recorder(
            store,
            sources,
            interval_s=interval_s,
            hf_s=hf if hf < interval_s else None,
            node=sim.identity.node,
            warn=warn,
            clock=clock,
        )
        return recorder.run(EndingEvent(site.monitor.end), duration_s=duration_s)
    finally:
        store.close()
        site.close()


def run_command(
    scenario: str | None,
    settings: Sequence[str],
    *,
    db_path: Path,
    duration_s: float,
    interval_s: float = 60.0,
    start_us: int | None = None,
    seed: int = 0,
    warn: Callable[[str], None] = print,
) -> str:
    """``esatui sim``: record, and say in one line what was recorded where, and in a
    second how the configuration relates to the calibration and how large the model's
    error is there (:mod:`esatui.sim.confidence`)."""
    sim = resolve(scenario, settings, seed)
    start = DEFAULT_START_US if start_us is None else start_us
    began = time.perf_counter()
    stats = record(
        sim, db_path, duration_s=duration_s, interval_s=interval_s, start_us=start, warn=warn
    )
    took = time.perf_counter() - began
    if stats.stopped_sources:
        raise RuntimeError(f"simulated sources stopped: {', '.join(stats.stopped_sources)}")
    end = start + round(duration_s * 1e6)
    line = (
        f"{stats.intervals} intervals of {sim.label} ({iso(start)} to {iso(end)}) recorded in "
        f"{db_path} in {took:.1f} s; sources: {', '.join(stats.sources_written)}"
    )
    if stats.duplicates:
        line += f" ({stats.duplicates} intervals were already recorded)"
    return f"{line}\n{describe(sim.params)}"
