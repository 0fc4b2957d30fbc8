"""Writers of fake system trees (``/proc``, ``/sys``, devices) for tests and the simulator.

They produce exactly what the real interfaces would show, so the real collectors read them
unchanged through ``--root``.
"""
