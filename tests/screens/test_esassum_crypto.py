"""ESASSUM's crypto columns come from the monitor's D5R9 counters (seed 000's 10:34 row, 03/06)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from esatui.cli import main
from tests.monitor.fixtures import (
    SEED000_0306_DATE,
    SEED000_0306_ESACRYPT,
    esacrypt_intervals,
    write_monwrite,
)


def test_esassum_crypto_columns_from_a_monwrite_import(
    tmp_path: Path, db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = write_monwrite(
        tmp_path / "seed.monwrite", esacrypt_intervals(SEED000_0306_ESACRYPT, SEED000_0306_DATE)
    )
    assert main(["collect", "--source", f"monwrite:{file}", "--db", str(db_path)]) == 0
    capsys.readouterr()
    assert main(["export", "ESASSUM", "--db", str(db_path), "--format", "json"]) == 0
    rows = {r["time"][11:16]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["10:34"]["crypto_ops_s"] == 336.9
    assert rows["10:34"]["crypto_ms_op"] == 2.97
    assert rows["10:34"]["polls_per_op"] == pytest.approx(834.1 / 336.9, abs=0.01)
    assert rows["10:33"]["crypto_ms_op"] == 2.53
