"""``esatui sim`` over a daylight-saving change, exported by day and by 3 hours as an analyst
would: the change day is one row (of 23 or 25 hours), the 3-hour bucket holding the change
one of 2 or 4 hours, whole where the recording covers it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from esatui.cli import main
from tests.core.test_rollups import set_zone
from tests.sim.recorded import sim

SMT = ("--set", "smt=true", "--set", "lpar_cpus=2CP+4IFL")


def bucket_times(
    capsys: pytest.CaptureFixture[str], db: Path, length: str
) -> list[tuple[str, bool, float]]:
    """(time, partial, covered_s) of each bucket of ESACPUU's export at ``length``."""
    code = main(
        ["export", "ESACPUU", "--db", str(db), "--interval-len", length, "--format", "json"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = json.loads(out)["rows"]
    return sorted({(r["time"], r["partial"], r["covered_s"]) for r in rows})


def test_four_hours_over_the_spring_change(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """From 00:00 CET: 4 hours of SMT 2CP+4IFL over 2026-03-29 01:00 UTC, in Berlin."""
    set_zone(monkeypatch, "Europe/Berlin")
    db = tmp_path / "spring.sqlite"
    sim(capsys, db, *SMT, "--start", "2026-03-28T23:00Z", duration="4h")
    assert bucket_times(capsys, db, "1d") == [("2026-03-30T00:00:00+02:00", True, 14400.0)]
    assert bucket_times(capsys, db, "3h") == [
        ("2026-03-29T03:00:00+02:00", False, 7200.0),  # 00:00 CET to 03:00 CEST: 2 hours
        ("2026-03-29T06:00:00+02:00", True, 7200.0),
    ]


def test_four_hours_over_the_autumn_change(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """From 00:00 CEST: 4 hours over 2026-10-25 01:00 UTC, in Berlin."""
    set_zone(monkeypatch, "Europe/Berlin")
    db = tmp_path / "autumn.sqlite"
    sim(capsys, db, *SMT, "--start", "2026-10-24T22:00Z", duration="4h")
    assert bucket_times(capsys, db, "1d") == [("2026-10-26T00:00:00+01:00", True, 14400.0)]
    # 00:00 CEST to 03:00 CET: one bucket of 4 hours, all recorded
    assert bucket_times(capsys, db, "3h") == [("2026-10-25T03:00:00+01:00", False, 14400.0)]
    hours = bucket_times(capsys, db, "1h")  # the repeated hour: two 1-hour buckets
    assert [t for t, _, _ in hours] == sorted(
        [
            "2026-10-25T01:00:00+02:00",
            "2026-10-25T02:00:00+02:00",
            "2026-10-25T02:00:00+01:00",
            "2026-10-25T03:00:00+01:00",
        ]
    )
