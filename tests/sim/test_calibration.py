"""Seed 002 Tables 1-3: the model's values, computed from its counters the way an analyst
does, are within 25% of every published value (a test per run)."""

from __future__ import annotations

import pytest

from esatui.sim.calibration import compare
from esatui.sim.published import METRICS, TABLES, TOLERANCE


@pytest.mark.parametrize("name", list(TABLES))
def test_run_within_tolerance(name: str) -> None:
    c = compare(name)
    off = {
        m: f"published {c.published[m]:g}, simulated {c.simulated[m]:.4g} ({c.error(m):+.0%})"
        for m in METRICS
        if abs(c.error(m)) > TOLERANCE
    }
    assert not off, f"{c.run_id} ({name}) outside ±{TOLERANCE:.0%}: {off}"
