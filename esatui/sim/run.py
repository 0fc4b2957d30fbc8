"""``esatui sim``: record a simulated system through the ordinary recorder and sources.

The recorder runs on a :class:`~esatui.sim.clock.SimClock` without pacing, so a simulated
day is written as fast as the model, the artifacts and the collectors go. What is recorded
is what ``esatui collect`` would record on that system: the sources are the ordinary ones
(``host``, ``zcrypt``, ``monitor``, ``smapi``) reading the simulated artifacts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from esatui.collectors.base import SourceContext
from esatui.db.store import Store
from esatui.sampling.recorder import Recorder, RecorderStats
from esatui.sim.clock import SimClock
from esatui.sim.model import DEFAULT_START_US
from esatui.sim.params import ParamError, SimParams, parse_params
from esatui.sim.scenarios import identity as scenario_identity
from esatui.sim.scenarios import scenario as scenario_params
from esatui.sim.site import SimulatedSite
from esatui.sim.snapshot import Identity

DEFAULT_SCENARIO = "mode-vm-day"
SIM_HF_S = 10.0
"""Gauge sampling of ``esatui sim`` (the live default is 2 s; the gauges are the model's
draws around its averages, so sampling them 6 times a minute instead of 30 loses nothing and
keeps a simulated day well under a minute)."""


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
    hf_s: float | None = SIM_HF_S,
    warn: Callable[[str], None] = print,
    monwrite: Path | None = None,
) -> RecorderStats:
    """Record ``duration_s`` of simulated time into ``db_path``; the recorder's statistics."""
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
            hf_s=hf_s if hf_s is not None and hf_s < interval_s else None,
            node=sim.identity.node,
            warn=warn,
            clock=clock,
        )
        return recorder.run(EndingEvent(site.monitor.end), duration_s=duration_s)
    finally:
        store.close()
        site.close()
