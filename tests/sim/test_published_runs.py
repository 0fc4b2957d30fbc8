"""Issue 6, Done when: for each of the nine published runs of seed 002 Tables 1-3,
``esatui sim --scenario seed002-tN-MODE`` and ``esatui export ESAPOLL/ESACRYPT --format json``
give values within 25% of the published ones.

The values travel the whole way: the model's counters are written as monitor records, read
by the ordinary ``monitor`` source, recorded as intervals and rendered by the screens:
ESAPOLL's own columns give the service times, the rate and the busy per 1000 VNQ (issue 11),
ESACPUU's processors check the busy split, and the recorded-kinds test checks the same numbers
one step earlier (the rows ESAPOLL reads).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from esatui.sim.published import METRICS, TABLES, TOLERANCE
from tests.sim.recorded import Metrics, export_json, from_exports, from_recorded, sim

_DBS: dict[str, Path] = {}


def _db(name: str, capsys: pytest.CaptureFixture[str], tmp: Path) -> Path:
    """One two-minute run per scenario, shared by the tests of this module."""
    if name not in _DBS or not _DBS[name].exists():
        db = tmp / f"{name}.sqlite"
        sim(capsys, db, "--scenario", name, duration="2m")
        _DBS[name] = db
    return _DBS[name]


def _check(name: str, got: Metrics) -> None:
    run_id, published = TABLES[name]
    off = {}
    for metric, pub in zip(METRICS, published, strict=True):
        err = got.values[metric] / pub - 1.0
        if abs(err) > TOLERANCE:
            off[metric] = f"published {pub:g}, esatui {got.values[metric]:.4g} ({err:+.0%})"
    assert not off, f"{run_id} ({name}, from {got.origin}) outside ±{TOLERANCE:.0%}: {off}"


@pytest.mark.parametrize("name", list(TABLES))
def test_exports_match_the_published_run(
    name: str, capsys: pytest.CaptureFixture[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    db = _db(name, capsys, tmp_path_factory.mktemp("runs"))
    _check(name, from_exports(capsys, db))
    crypt = export_json(capsys, db, "ESACRYPT")["rows"][0]
    etr = from_exports(capsys, db).values["ETR"]
    assert crypt["nq_virt"] == pytest.approx(etr, rel=0.01)
    assert crypt["ms_op_virt"] * 1000 == pytest.approx(
        TABLES[name][1][METRICS.index("VSERV")], rel=TOLERANCE
    )


@pytest.mark.parametrize("name", list(TABLES))
def test_recorded_intervals_match_the_published_run(
    name: str, capsys: pytest.CaptureFixture[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    db = _db(name, capsys, tmp_path_factory.mktemp("runs"))
    _check(name, from_recorded(db))
