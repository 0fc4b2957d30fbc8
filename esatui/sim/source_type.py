"""``--source sim:SCENARIO``: a simulated z/VM system behind the ordinary sources.

The factory builds a :class:`~esatui.sim.site.SimulatedSite` that starts at the clock's
present and returns its ordinary sources (``host``, ``zcrypt``, ``vmcp``, ``smapi``,
``monitor``), which move the model to their clock's time before each read. With ``esatui
live`` or ``esatui collect`` that clock is the system's: the simulated system runs at
wall-clock speed with monitor intervals of the recorder's interval (``SIM_MONITOR_INTERVAL_S``
when it is not known). The site and its
temporary files go away when the last of its sources is closed. The type registers itself
in the source registry when the app imports this module.
"""

from __future__ import annotations

from esatui.registry import Source, SourceOptions, SourceUsageError, source_type

SIM_MONITOR_INTERVAL_S = 60.0
"""The simulated CP's monitor sample interval when the recorder's is not known (else the
simulated CP samples at the recorder's interval, as a MONITOR SAMPLE setting would)."""


@source_type(
    "sim",
    "a simulated z/VM system, read by the host, zcrypt, vmcp, monitor and smapi sources",
    local=False,
)
def sim_sources(arg: str | None, opts: SourceOptions) -> list[Source]:
    """The ordinary sources of the simulated system ``arg``."""
    from esatui.sim.model import STEP_S
    from esatui.sim.scenarios import identity, scenario
    from esatui.sim.site import SimulatedSite

    if not arg:
        raise SourceUsageError("sim needs a scenario: --source sim:SCENARIO (e.g. sim:mode-vm-day)")
    try:
        params = scenario(arg)
    except KeyError as exc:
        raise SourceUsageError(str(exc.args[0])) from None
    try:
        site = SimulatedSite(
            params,
            label=arg,
            start_us=opts.clock.time_us(),
            identity=identity(arg),
            monitor_interval_s=opts.interval_s or SIM_MONITOR_INTERVAL_S,
            step_s=STEP_S,  # the recorder's interval is not known here: vary every 10 s
            warn=opts.warn,
        )
    except ValueError as exc:
        raise SourceUsageError(str(exc)) from None
    try:
        ctx = opts.context
        return list(
            site.sources(ctx, monitor_layout=opts.monitor_layout, smapi_guests=opts.smapi_guests)
        )
    except ValueError as exc:
        site.close()
        raise SourceUsageError(str(exc)) from None
    except Exception:
        site.close()
        raise
