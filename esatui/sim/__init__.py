"""The simulated z/VM system: an LPAR, Linux guests, CP's crypto tasks and adapters.

Public API:

* :class:`~esatui.sim.params.SimParams`, :func:`~esatui.sim.params.parse_params`: the
  parameters of SPEC section 7, from ``KEY=VALUE`` strings;
* :func:`~esatui.sim.scenarios.scenario`: the named presets;
* :class:`~esatui.sim.model.SimulatedSystem`: the model on a simulated clock, whose
  :meth:`~esatui.sim.model.SimulatedSystem.snapshot` returns a
  :class:`~esatui.sim.snapshot.SystemSnapshot` of cumulative counters;
* :func:`~esatui.sim.analysis.polling_metrics`: seed 002's metrics from two snapshots;
* :class:`~esatui.sim.site.SimulatedSite`: the model behind its real interfaces
  (:mod:`esatui.sim.interfaces`: a procfs/sysfs tree, ``/dev/vmcp``, a SMAPI server; and
  monitor records) and the ordinary sources that read them; :class:`~esatui.sim.clock.SimClock`,
  the recorder's clock (the one simulated clock, tests and benchmarks included);
* :mod:`esatui.sim.run` (recording a simulation: ``esatui sim``, whose command and
  ``esatui demo``'s are in :mod:`esatui.commands`) and :mod:`esatui.sim.source_type`
  (``--source sim:SCENARIO``, registered in the source registry when the app loads it).

docs/MODEL.md explains the model and its calibration.
"""
