"""The fit behind the model's constants, and its leave-one-out (docs/MODEL.md section 6).

``tests/data/sim/fit_grid.json`` is the simulated grid that ``python -m esatui.sim.fit
--save`` wrote: every published run at every point of the timing grid. From it the fit is
arithmetic, so these tests redo it and check that the constants in ``mechanism.DEFAULT``
and the errors ``esatui sim`` quotes (``fit_summary.json``) are what it gives.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from esatui.sim import fit
from esatui.sim.confidence import summary
from esatui.sim.mechanism import DEFAULT
from esatui.sim.published import TABLES

GRID = Path(__file__).parents[1] / "data" / "sim" / "fit_grid.json"


@pytest.fixture(scope="module")
def grid() -> dict[fit.Setting, dict[str, fit.RunPoint]]:
    return fit.load(GRID)


def test_least_squares_recovers_known_costs() -> None:
    true = {"guest_op_us": 4.0, "guest_dqap_us": 0.5, "guest_tick_us": 2.0, "guest_wake_us": 1.5}
    runs = {}
    for i, counts in enumerate([(1.0, 2.0, 1.0, 1.0), (1.0, 3.5, 0.2, 0.9), (1.0, 1.2, 0.5, 0.1)]):
        busy = sum(c * true[n] for n, c in zip(fit.GUEST_COSTS, counts, strict=True)) / 10
        runs[str(i)] = (counts, 0.0, busy)
    runs["3"] = (
        (1.0, 6.0, 3.0, 2.5),
        0.0,
        sum(c * true[n] for n, c in zip(fit.GUEST_COSTS, (1.0, 6.0, 3.0, 2.5), strict=True)) / 10,
    )
    got = fit._least_squares(fit.GUEST_COSTS, runs)
    for name, value in true.items():
        assert got[name] == pytest.approx(value, rel=0.05)


def test_default_is_the_fit_to_all_nine_runs(
    grid: dict[fit.Setting, dict[str, fit.RunPoint]],
) -> None:
    full = fit.fit(grid, TABLES)
    for name, value in full.constants().items():
        if name == "cp_vap_us":
            got = (DEFAULT.cp_vnq_us, DEFAULT.cp_vdq_us, DEFAULT.cp_vdq_empty_us)
            assert all(g == pytest.approx(value, abs=0.01) for g in got), name
        else:
            assert getattr(DEFAULT, name) == pytest.approx(value, abs=0.01), name


def test_every_fold_fits_without_its_run(grid: dict[fit.Setting, dict[str, fit.RunPoint]]) -> None:
    """A fold's choice depends only on the other runs: changing the left-out run's points
    changes nothing."""
    run = "seed002-t3-baseline"
    others = [r for r in TABLES if r != run]
    before = fit.fit(grid, others)
    scrambled = {s: {**by_run, run: by_run["seed002-t1-interrupts"]} for s, by_run in grid.items()}
    assert fit.fit(scrambled, others) == before


def test_quoted_errors_and_the_bar() -> None:
    s = summary()
    assert s["run"]["worst"] <= 0.35  # issue 12: no leave-one-out prediction worse than 35%
    assert 0 < s["run"]["median"] <= s["run"]["p90"] <= s["run"]["worst"]
    assert 0 < s["table"]["median"] <= s["table"]["p90"] <= s["table"]["worst"]


def test_one_fold_end_to_end(grid: dict[fit.Setting, dict[str, fit.RunPoint]]) -> None:
    """Leaving CPDN out and predicting it through the whole model reproduces the published
    figures within the leave-one-out worst."""
    run = "seed002-t3-polling"
    f = fit.fit(grid, [r for r in TABLES if r != run])
    p = fit.predict(run, f)
    assert max(abs(p.error(m)) for m in p.values) <= summary()["run"]["worst"]
