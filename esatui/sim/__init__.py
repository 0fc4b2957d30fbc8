"""The simulated z/VM system: an LPAR, Linux guests, CP's crypto tasks and adapters.

Public API:

* :class:`~esatui.sim.params.SimParams`, :func:`~esatui.sim.params.parse_params`: the
  parameters of SPEC section 7, from ``KEY=VALUE`` strings;
* :func:`~esatui.sim.scenarios.scenario`: the named presets;
* :class:`~esatui.sim.model.SimulatedSystem`: the model on a simulated clock, whose
  :meth:`~esatui.sim.model.SimulatedSystem.snapshot` returns a
  :class:`~esatui.sim.snapshot.SystemSnapshot` of cumulative counters;
* :func:`~esatui.sim.analysis.polling_metrics`: seed 002's metrics from two snapshots;
* :class:`~esatui.sim.site.SimulatedSite`: the model behind its real interfaces (a
  procfs/sysfs tree, ``/dev/vmcp``, monitor records, a SMAPI server) and the ordinary
  sources that read them; :class:`~esatui.sim.clock.SimClock`, the recorder's clock;
* :mod:`esatui.sim.run` (``esatui sim``), :mod:`esatui.sim.demo` (``esatui demo``) and
  :mod:`esatui.sim.sources` (``--source sim:SCENARIO``).

docs/MODEL.md explains the model and its calibration.
"""
