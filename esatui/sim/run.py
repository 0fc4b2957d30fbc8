"""Recording a simulated system through the ordinary recorder and sources (``esatui sim``).

The recorder runs on a :class:`~esatui.sim.clock.SimClock` without pacing, so a simulated
day is written as fast as the model, the artifacts and the collectors go. What is recorded
is what ``esatui collect`` would record on that system: the sources are the ordinary ones
(``host``, ``zcrypt``, ``vmcp``, ``monitor``, ``smapi``) reading the simulated artifacts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from esatui.collectors.base import SourceContext
from esatui.sampling.recorder import RecorderStats
from esatui.sampling.session import Recording
from esatui.sim.clock import SimClock
from esatui.sim.model import DEFAULT_START_US
from esatui.sim.params import ParamError, SimParams, parse_params
from esatui.sim.scenarios import identity as scenario_identity
from esatui.sim.scenarios import scenario as scenario_params
from esatui.sim.site import SimulatedSite
from esatui.sim.snapshot import Identity

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

    def site(
        self,
        start_us: int,
        interval_s: float,
        *,
        warn: Callable[[str], None],
        monwrite: Path | None = None,
    ) -> SimulatedSite:
        """The simulated system from ``start_us``, its monitor on ``interval_s``."""
        return SimulatedSite(
            self.params,
            label=self.label,
            start_us=start_us,
            seed=self.seed,
            identity=self.identity,
            monitor_interval_s=interval_s,
            monwrite=monwrite,
            warn=warn,
        )


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
    try:
        ident = scenario_identity(scenario or "", params)
    except ValueError as exc:
        raise SimUsageError(str(exc)) from None
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
    on_start: Callable[[threading.Event], object] | None = None,
) -> RecorderStats:
    """Record ``duration_s`` of simulated time into ``db_path``; the recorder's statistics.
    ``on_start`` is handed the recorder's stop event before it records (a command's signal
    handlers set it, ending the run at the interval under way).

    ``hf_s`` is the gauge sampling period (default: :data:`SIM_HF_S`, at least a sixth of
    the interval); none when it is not shorter than the interval."""
    hf = hf_s if hf_s is not None else max(SIM_HF_S, interval_s / 6)
    clock = SimClock(start_us)
    site = sim.site(start_us, interval_s, warn=warn, monwrite=monwrite)
    clock.on_advance = site.sync
    try:
        recording = Recording(
            db_path,
            site.sources(SourceContext(site.root, warn, clock)),
            interval_s=interval_s,
            hf_s=hf if hf < interval_s else None,
            node=sim.identity.node,
            clock=clock,
        )
        stop = EndingEvent(site.monitor.end)
        if on_start is not None:
            on_start(stop)
        return recording.run(stop, warn=warn, duration_s=duration_s)
    finally:
        site.close()
