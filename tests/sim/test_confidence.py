"""How far a configuration lies from what the model was fitted to (``esatui sim``'s
calibration line)."""

from __future__ import annotations

import pytest

from esatui.sim.confidence import assess, describe
from esatui.sim.locks import HOLD_US, HOLD_US_430
from esatui.sim.scenarios import SCENARIOS

PUBLISHED_RUN = SCENARIOS["seed002-t1-polling"]


def test_a_published_run_is_inside() -> None:
    assert assess(PUBLISHED_RUN).standing == "inside"
    assert describe(PUBLISHED_RUN).startswith("Calibration: inside seed 002's published runs")


@pytest.mark.parametrize(
    ("hold_us", "standing"),
    [(HOLD_US, "inside"), (0.0, "near"), (HOLD_US_430, "near"), (HOLD_US_430 * 1.5, "outside")],
)
def test_the_scheduler_locks_hold_is_weighed_against_seed_001s(
    hold_us: float, standing: str
) -> None:
    """Before, any hold up to 100 µs read inside: at 50 µs the lock spun 92% of the LPAR
    while the operations went on at the published rate."""
    found = assess(PUBLISHED_RUN.replace(lock_hold_us=hold_us))
    assert found.standing == standing
    if standing == "outside":
        assert found.reasons == (
            f"lock_hold_us {HOLD_US_430 * 1.5:g} (seed 001: 0.211 since z/VM 4.4.0, 0.72 "
            "before; a busier lock spins more but never slows the operations)",
        )
