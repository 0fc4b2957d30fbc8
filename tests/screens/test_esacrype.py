"""ESACRYPE, Crypto Economics: seed 000's worked example from a recording whose ESACRYPA
matches seed 000 (4 CEX4A, 575 RSA 2048 CRT operations at 18:53), through ``esatui collect``
and ``esatui export``.

Seed 000: "If we need to do those 9.6 handshakes in software [13 ms each], that would cost us
about 130 ms every second, or 13% of a CPU" and, with openssl 1.0.1's 3.1 ms, "the 9.6 CRT
operations save less than 30 ms, or 3% of a CPU". 575 / 60 s = 9.58/s: 12.46% at 13 ms (the
seed rounds 124.6 ms up to "about 130"), 2.97% at 3.1 ms.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from esatui.cli import main
from esatui.commands.common import EXIT_USAGE
from esatui.screens.crypto_costs import CostTableError, default_table, load
from tests.monitor import fixtures as F
from tests.screens import crypto_data as D


@pytest.fixture(scope="module")
def seed000_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("s000e")
    db = tmp / "db.sqlite"
    mon = D.seed000_file(tmp / "file.mon")
    assert main(["collect", "--source", f"monwrite:{mon}", "--db", str(db)]) == 0
    return db


def _export(capsys: pytest.CaptureFixture[str], db: Path, *more: str) -> dict[str, Any]:
    code = main(["export", "ESACRYPE", "--db", str(db), "--format", "json", *more])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def _at_1853(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    rows = [r for r in doc["rows"] if r["time"] == "2016-03-01T18:53:00+00:00"]
    return {r["function"]: r for r in rows}


def test_seed000_thirteen_percent_at_13_ms(
    seed000_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _export(capsys, seed000_db)
    rows = _at_1853(doc)
    crt = rows["RSA 2048 CRT"]
    total = sum(exp.count for exp in F.SEED000_ESACRYPA)
    assert total == 575
    assert round(crt["ops_s"], 1) == 9.6  # "an average of 9.6 per second" (575 / 60 s)
    assert crt["ms_op"] == pytest.approx(2.16, abs=0.005)  # "appear to take 2.16 ms"
    assert crt["sw_ms_op"] == 13.0
    assert crt["sw_cpu_pct"] == pytest.approx(12.46, abs=0.01)  # "13% of a CPU"
    assert round(crt["sw_cpu_pct"]) in (12, 13)
    assert crt["sw_cpus"] == pytest.approx(0.125, abs=0.001)
    assert rows["RSA 2048 ME"]["ops_s"] == 0.0 and rows["RSA 2048 ME"]["sw_cpu_pct"] is None
    assert rows["Total"]["sw_cpu_pct"] == crt["sw_cpu_pct"]
    assert rows["Total"]["ops_s"] == crt["ops_s"]
    # no processors recorded: the share of the LPAR is unknown, not 0
    assert crt["saved_pct"] is None
    assert doc["header"]["cost_table"] == "seed000-openssl-0.9.8-z12ec"
    assert doc["header"]["cost_table_builtin"] is True
    assert doc["notes"][0] == (
        "Software costs: seed000-openssl-0.9.8-z12ec (built-in, not measured here): "
        "seed 000 (Velocity Software), openssl 0.9.8 on a z12 EC"
    )
    assert len(doc["notes"][0]) <= 132  # one line of the default text export


def test_seed000_three_percent_with_openssl_101(
    seed000_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _export(capsys, seed000_db, "--crypto-costs", "seed000-openssl-1.0.1-z12bc")
    crt = _at_1853(doc)["RSA 2048 CRT"]
    assert crt["sw_cpu_pct"] == pytest.approx(2.97, abs=0.01)  # "3% of a CPU"
    assert round(crt["sw_cpu_pct"]) == 3
    assert "openssl 1.0.1" in doc["notes"][0]


def test_a_users_toml_table_is_named_as_theirs(
    seed000_db: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    costs = tmp_path / "ours.toml"
    costs.write_text(
        'name = "z15 openssl 3"\nwhose = "our openssl speed run, PROD1"\ncpu_type = "IFL"\n'
        "[ms_per_op]\nrsa2048_crt = 1.0\nrsa4096_crt = 7.0\n"
    )
    doc = _export(capsys, seed000_db, "--crypto-costs", str(costs))
    crt = _at_1853(doc)["RSA 2048 CRT"]
    assert crt["sw_cpu_pct"] == pytest.approx(575 / 60 * 1.0 / 10)  # 9.58/s x 1.0 ms
    assert doc["notes"][0] == "Software costs: z15 openssl 3 (file): our openssl speed run, PROD1"
    assert doc["header"]["cost_table_builtin"] is False


@pytest.mark.parametrize(
    ("content", "suffix", "message"),
    [
        ("{", ".json", "not valid JSON"),
        ('name = "x"\n', ".toml", "'whose'"),
        ('{"name": "x", "whose": "y", "ms_per_op": {"rsa2048_crt": -1}}', ".json", "positive"),
        ('{"name": "x", "whose": "y", "ms_per_op": {"sha256": 1}}', ".json", "no known function"),
    ],
)
def test_a_bad_table_is_one_line_and_exit_2(
    seed000_db: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    content: str,
    suffix: str,
    message: str,
) -> None:
    bad = tmp_path / f"bad{suffix}"
    bad.write_text(content)
    code = main(["export", "ESACRYPE", "--db", str(seed000_db), "--crypto-costs", str(bad)])
    _out, err = capsys.readouterr()
    assert code == EXIT_USAGE
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_missing_file_names_the_builtin_tables() -> None:
    with pytest.raises(CostTableError, match=r"seed000-openssl-1\.0\.1-z12bc"):
        load("/nonexistent/costs.json")


def test_the_default_is_seed_000s_figure_with_its_source() -> None:
    table = default_table()
    assert table.ms_per_op == {"rsa2048_crt": 13.0}
    assert "z12EC" in table.source


def test_drills_to_esacrypa_and_esacrypa_drills_here(seed000_db: Path) -> None:
    from esatui.db.sqlite_reader import SqliteReader
    from esatui.screens import catalog

    with SqliteReader.open(seed000_db) as reader:
        model = catalog.build_model(reader, "ESACRYPE", catalog.Query())
        assert all(r.drill is not None and r.drill.screen == "ESACRYPA" for r in model.rows)
        crypa = catalog.build_model(reader, "ESACRYPA", catalog.Query())
    drills = {c.id: c.drill for c in crypa.columns if c.drill}
    assert drills["rsa2048_crt_ops_s"] == "ESACRYPE"


def test_the_saving_in_the_lpars_processors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Seed 000's Mode VM LPAR simulated (1 CP + 2 IFLs, RSA 2048 CRT on CEX4A): the saving
    counts in the table's processor type, IFL, of which the LPAR has two."""
    from tests.sim.recorded import sim

    db = tmp_path / "day.sqlite"
    sim(capsys, db, "--scenario", "mode-vm-day", "--start", "2026-01-05T09:00Z", duration="3m")
    doc = _export(capsys, db)
    crt = next(r for r in doc["rows"] if r["function"] == "RSA 2048 CRT")
    assert crt["sw_cpu_pct"] == pytest.approx(crt["ops_s"] * 13.0 / 10, abs=0.1)
    assert crt["saved_pct"] == pytest.approx(crt["sw_cpu_pct"] / 2, abs=0.01)
    assert "CPUs and %LPAR in IFLs, this LPAR has 2" in doc["notes"][-1]


def test_with_multithreading_the_saving_counts_cores(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The same LPAR with SMT-2: the monitor records four IFL threads of two cores. Before,
    the saving was over the four threads (half the figure hypfs' cores gave)."""
    from tests.sim.recorded import sim

    db = tmp_path / "smt.sqlite"
    start = ("--start", "2026-01-05T09:00Z", "--set", "smt=true")
    sim(capsys, db, "--scenario", "mode-vm-day", *start, duration="3m")
    doc = _export(capsys, db)
    crt = next(r for r in doc["rows"] if r["function"] == "RSA 2048 CRT")
    assert crt["saved_pct"] == pytest.approx(crt["sw_cpu_pct"] / 2, abs=0.01)
    notes = doc["notes"]
    assert "CPUs and %LPAR in IFLs, this LPAR has 2" in notes[-2]
    assert notes[-1].startswith("Multithreading: the 2 are cores (4 threads)")
    assert "provisional" in notes[-1]


def test_replay_refuses_a_bad_table_before_the_app_starts(
    seed000_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["replay", "--db", str(seed000_db), "--crypto-costs", "/nonexistent.json"])
    _out, err = capsys.readouterr()
    assert code == EXIT_USAGE and "no such file and no built-in table" in err


def test_without_adapter_records_the_export_says_which_are_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recording with D5R9 but no D5R10 (seed 000's 03/06 ESACRYPT alone): the export's
    one line names the missing records, as ESACRYPA's does, not the cost table."""
    intervals = F.esacrypt_intervals(F.SEED000_0306_ESACRYPT, F.SEED000_0306_DATE)
    mon = F.write_monwrite(tmp_path / "d5r9.mon", intervals)
    db = tmp_path / "db.sqlite"
    assert main(["collect", "--source", f"monwrite:{mon}", "--db", str(db)]) == 0
    capsys.readouterr()
    assert main(["export", "ESACRYPE", "--db", str(db)]) == 1
    err = capsys.readouterr().err
    assert "no ESACRYPE data: No per-AP crypto measurement records (D5R10)" in err, err
