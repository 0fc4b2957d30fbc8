"""``--source sim:SCENARIO``: a simulated z/VM system behind the ordinary sources.

The factory builds a :class:`~esatui.sim.site.SimulatedSite` that starts at the clock's
present and returns its ordinary sources (``host``, ``zcrypt``, ``vmcp``, ``smapi``,
``monitor``),
which move the model to their clock's time before each read. With ``esatui live`` or
``esatui collect`` that clock is the system's: the simulated system runs at wall-clock
speed with monitor intervals of ``SIM_MONITOR_INTERVAL_S``. The site and its temporary
files go away when the last of its sources is closed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from esatui.collectors.base import PolledSource, StreamSource
from esatui.sim.model import STEP_S
from esatui.sim.scenarios import identity, scenario
from esatui.sim.site import SimulatedSite

if TYPE_CHECKING:
    from esatui.sources import SourceOptions

SIM_MONITOR_INTERVAL_S = 60.0
"""The simulated CP's monitor sample interval when the recorder's is not known."""


def sim_sources(
    name: str, opts: SourceOptions, *, monitor_interval_s: float = SIM_MONITOR_INTERVAL_S
) -> list[PolledSource | StreamSource]:
    """The ordinary sources of the simulated system ``name``; ``ValueError`` (one line)
    for an unknown scenario."""
    try:
        params = scenario(name)
    except KeyError as exc:
        raise ValueError(str(exc.args[0])) from None
    site = SimulatedSite(
        params,
        label=name,
        start_us=opts.clock.time_us(),
        identity=identity(name),
        monitor_interval_s=monitor_interval_s,
        step_s=STEP_S,  # the recorder's interval is not known here: vary every 10 s
        warn=opts.warn,
    )
    try:
        return site.sources(
            opts.context, monitor_layout=opts.monitor_layout, smapi_guests=opts.smapi_guests
        )
    except Exception:
        site.close()
        raise
