"""Every simulated scenario writes the records of the z/VM level it claims, and ESAPOLL
advises only what that level has (issue 10): no NSERV, HSERV, DSERV before APAR VM66534's
360-byte D5R9, no SET CRYPTO POLLING before its PTF."""

from __future__ import annotations

from pathlib import Path

import pytest

from esatui.cli import main
from esatui.sim.scenarios import SCENARIOS, identity
from tests.sim.recorded import export_json, sim

# what each scenario claims: (z/VM level, D5R9 length)
CLAIMS = {name: ("7.2.0", 360) for name in SCENARIOS if name.startswith("seed002")}
CLAIMS["mode-vm-day"] = ("6.3.0", 112)
CLAIMS |= {name: ("6.4.0", 112) for name in SCENARIOS if name.startswith("seed003")}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_each_scenario_writes_its_levels_records_and_advises_what_it_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    assert set(CLAIMS) == set(SCENARIOS)
    level, length = CLAIMS[name]
    assert identity(name).zvm_level == level
    db = tmp_path / "s.sqlite"
    sim(capsys, db, "--scenario", name, duration="3m")
    doc = export_json(capsys, db, "ESAPOLL")
    records, advice = doc["notes"][1:3]  # after "Simulated data"
    assert records.startswith(f"Records: z/VM {level}, D5R9 {length} bytes")
    rows = doc["rows"]
    assert rows
    split = [r[c] for r in rows for c in ("nserv_us", "dserv_us", "dserv_pct")]
    if length < 360:
        assert split == [None] * len(split)
        for word in ("NSERV", "HSERV", "DSERV"):
            assert word not in advice
        assert "CP crypto: NQ and DQ polling (pre-PTF, inferred)" in records
    else:
        assert all(v is not None for v in split)
    if SCENARIOS[name].cp_crypto_mode == "baseline":
        assert "SET CRYPTO POLLING OFF cuts" not in advice


def test_a_custom_pre_ptf_run_is_z_vm_7_2_before_the_ptf(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "b.sqlite"
    sim(capsys, db, "--set", "cp_crypto_mode=baseline", duration="3m")
    records = export_json(capsys, db, "ESAPOLL")["notes"][1]
    assert records.startswith("Records: z/VM 7.2.0, D5R9 128 bytes: no NSERV/HSERV/DSERV")


def test_cp_interrupts_need_the_ptf(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["sim", "--scenario", "mode-vm-day", "--set", "cp_crypto_mode=interrupts"]
    code = main([*argv, "--duration", "2m", "--db", str(tmp_path / "x.sqlite")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == [
        "esatui: error: cp_crypto_mode=interrupts needs PTF UM35974 (z/VM 7.2 or later); "
        "scenario mode-vm-day is z/VM 6.3.0"
    ]
