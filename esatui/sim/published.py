"""Seed 002's published measurements (Tables 1-3), for the calibration tests and report.

Only the tests and :mod:`esatui.sim.calibration` read this; the model never does (a test
checks that no model module imports it). Service times in µs per VNQ, busy per 1000 VNQs
in percent of one processor, ETR in VNQs per second.
"""

from __future__ import annotations

METRICS: tuple[str, ...] = (
    "NSERV",
    "RSERV",
    "HSERV",
    "DSERV",
    "VSERV",
    "total",
    "guest",
    "CP",
    "ETR",
)

# scenario -> (run id, values in METRICS order)
TABLES: dict[str, tuple[str, tuple[float, ...]]] = {
    "seed002-t1-baseline": (
        "DBDN",
        (72.643, 116.751, 189.394, 1296.170, 1485.551, 1.1478, 0.5178, 0.6299, 46717.08),
    ),
    "seed002-t1-polling": (
        "DPDN",
        (4.713, 112.622, 117.293, 1256.676, 1373.969, 1.3071, 0.5352, 0.7719, 50319.05),
    ),
    "seed002-t1-interrupts": (
        "DIDN",
        (14.520, 45.552, 60.078, 317.990, 378.067, 1.5029, 0.5641, 0.9388, 172346.20),
    ),
    "seed002-t2-baseline": (
        "DBD2",
        (87.734, 118.234, 205.968, 1279.835, 1485.803, 1.1781, 0.5220, 0.6560, 46704.28),
    ),
    "seed002-t2-polling": (
        "DPD2",
        (3.626, 111.302, 114.853, 1242.840, 1357.692, 1.3327, 0.5331, 0.7995, 50910.57),
    ),
    "seed002-t2-interrupts": (
        "DID2",
        (17.073, 46.006, 63.074, 303.880, 366.953, 1.6712, 0.5833, 1.0880, 174790.20),
    ),
    "seed002-t3-baseline": (
        "CBDN",
        (53.954, 123.162, 177.115, 1316.767, 1493.897, 2.0722, 0.8668, 1.2054, 6666.17),
    ),
    "seed002-t3-polling": (
        "CPDN",
        (2.546, 121.836, 124.497, 1369.687, 1494.210, 1.8162, 0.8169, 0.9993, 6666.17),
    ),
    "seed002-t3-interrupts": (
        "CIDN",
        (2.291, 71.348, 73.755, 1420.626, 1494.416, 1.7502, 0.7982, 0.9520, 6666.17),
    ),
}

TOLERANCE = 0.25
"""The calibration bar: every simulated value within 25% of the published one."""

UNSUCCESSFUL_DQ_PER_INTERVAL = {"default": 200_000, "50us": 6_000_000}
"""Seed 002's closing section: unsuccessful dequeues per monitor interval, single-thread
runs, default versus 50 µs poll time (approximate, as the report says)."""
