"""ESACRYPA with per-domain blocks: each APQN a row of its own under its card, named as
ESACRYQ names it, from D5R10 records packed byte by byte from the published structs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from esatui.cli import main
from esatui.collectors.monitor import encode as E
from esatui.db.sqlite_reader import SqliteReader
from esatui.screens import catalog
from tests.monitor import fixtures as F
from tests.monitor import published as P

START = F.utc_us(2024, 6, 3, 9, 0)
MINUTE = 60_000_000
SCALE = 2.0**-20  # exact in binary32, so the seconds below are exact too


def _blocks(i: int) -> list[P.Cmb]:
    """Card 0a (CEX7 accelerator) with domains 0011 and 0012, card 0b (CEX8 CCA): interval
    ``i``'s cumulative counts; RSA 2048 CRT grows 120 (domain 11) + 30 (domain 12) a minute;
    0b's "All" 60 operations (6 s) a minute, 5 of them (2 s) RSA key generation."""

    def accel(n: int) -> tuple[tuple[int, int], ...]:
        return tuple((n * 2**18, n) if j == 3 else (0, 0) for j in range(6))  # 0.25 s each

    return [
        P.Cmb(ct=13, ax=0x0A, s=SCALE, pairs=accel(150 * i), mt=8),
        P.Cmb(ct=13, ax=0x0A, s=SCALE, pairs=accel(120 * i), mt=8, fmt=1, dx=0x11),
        P.Cmb(ct=13, ax=0x0A, s=SCALE, pairs=accel(30 * i), mt=8, fmt=1, dx=0x12),
        P.Cmb(
            ct=14, ax=0x0B, s=SCALE, pairs=((6 * i * 2**20, 60 * i), (2 * i * 2**20, 5 * i)), mt=9
        ),
    ]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("apqn")
    intervals = [
        E.IntervalRecords(START + i * MINUTE, P.d5r10_set(START + i * MINUTE, _blocks(i), 2))
        for i in range(3)
    ]
    path = F.write_monwrite(tmp / "apqn.mon", intervals)
    out = tmp / "db.sqlite"
    assert main(["collect", "--source", f"monwrite:{path}", "--db", str(out)]) == 0
    return out


def test_apqns_are_rows_under_their_card(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["export", "ESACRYPA", "--db", str(db), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    newest = [r for r in rows if r["time"] == rows[0]["time"]]
    assert [r["ap"] for r in newest] == ["0a", "0a.0011", "0a.0012", "0b"]
    by_ap = {r["ap"]: r for r in newest}
    assert by_ap["0a"]["rsa2048_crt_count"] == 150 and by_ap["0a"]["rsa2048_crt_ms_op"] == 250.0
    assert by_ap["0a.0011"]["rsa2048_crt_count"] == 120
    assert by_ap["0a.0011"]["rsa2048_crt_ops_s"] == 2.0
    assert by_ap["0a.0011"]["util_pct"] == 50.0  # 120 × 0.25 s in 60 s
    assert by_ap["0a.0012"]["util_pct"] == 12.5
    assert by_ap["0a"]["util_pct"] == 62.5
    assert by_ap["0b"]["cca_all_count"] == 60 and by_ap["0b"]["cca_all_ms_op"] == 100.0
    assert by_ap["0b"]["type"] == 14
    # "All" holds the key generation (zcryptstats' is_totals): 6 s busy, not 6 + 2
    assert by_ap["0b"]["cca_rsa_keygen_count"] == 5 and by_ap["0b"]["cca_rsa_keygen_time_s"] == 2
    assert by_ap["0b"]["util_pct"] == 10.0

    assert main(["export", "ESACRYPE", "--db", str(db), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    functions = {r["function"]: r for r in rows if r["time"] == rows[0]["time"]}
    assert functions["CCA coprocessor RSA key generation"]["ops_s"] == 5 / 60
    assert functions["Total"]["ops_s"] == 150 / 60 + 60 / 60  # the key generation once, in All

    assert main(["export", "ESACRYPA", "--db", str(db)]) == 0
    text = capsys.readouterr().out
    first_page = text.split("Screen: ESACRYPA 2/")[0].splitlines()
    rows = [ln for ln in first_page if ln[9:16].strip() in ("0a", "0a.0011", "0a.0012", "0b")]
    assert [ln[9:16].strip() for ln in rows[:4]] == ["0a", "0a.0011", "0a.0012", "0b"]


def test_an_apqn_row_drills_to_its_card_on_esacryq(db: Path) -> None:
    with SqliteReader.open(db) as reader:
        model = catalog.build_model(reader, "ESACRYPA", catalog.Query(limit=1))
        drills = {r.values["ap"]: r.drill.entity for r in model.rows if r.drill}
        assert drills == {"0a": "0a", "0a.0011": "0a", "0a.0012": "0a", "0b": "0b"}
        card = catalog.build_model(reader, "ESACRYPA", catalog.Query(limit=1, entity="0a"))
        assert [r.values["ap"] for r in card.rows] == ["0a", "0a.0011", "0a.0012"]
