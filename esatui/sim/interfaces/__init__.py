"""The real interfaces as the simulated system shows them: a ``/proc`` and ``/sys`` tree
(``procfs``, ``aptree``), a scripted ``/dev/vmcp`` (``vmcp``) and a SMAPI server on loopback
(``smapi_server``). They produce exactly what the real interfaces would show, so the real
collectors read them unchanged through ``--root``; the tests build their fake systems from
them too (what exists only for tests is in ``tests/fakes``)."""
