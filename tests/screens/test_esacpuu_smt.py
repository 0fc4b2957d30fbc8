"""ESACPUU with multithreading (issue 15): threads grouped by their core, and a type's
subtotal of 16 threads keeps its decimal (before: ``1336``; no core column)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from esatui.cli import main
from esatui.collectors.kinds import LCPU
from esatui.collectors.model import Reading, Sample
from esatui.collectors.sysinfo import parse_sysinfo
from esatui.db.store import Store
from esatui.screens.esacpuu import thread_bits
from tests.conftest import DATA
from tests.fixtures.recording import CONFIG, START_US, host_recording, write
from tests.sim.recorded import sim

MINUTE = 60_000_000
THREADS = 16  # 8 IFL cores of 2 threads: CPU addresses core << 1 | thread


def smt_samples() -> list[Sample]:
    """Each thread 83.55% idle: a type's idle adds up to 1336.8."""
    samples = []
    for i in range(3):
        readings = tuple(
            Reading(
                "lcpu",
                str(address),
                {
                    "elapsed_us": i * MINUTE,
                    "emul_us": i * 10 * 600_000,
                    "user_us": i * 2 * 600_000,
                    "syst_us": i * 3 * 600_000,
                    "idle_us": i * 8355 * 6_000,
                    "steal_us": i * 145 * 6_000,
                },
                {"type": "IFL", "lpar": "L32", "type_source": "monitor"},
            )
            # the monitor writes them in address order of neither core nor thread
            for address in sorted(range(THREADS), key=lambda a: (a & 1, a))
        )
        samples.append(Sample("monitor", START_US + i * MINUTE, readings, config={}))
    return samples


@pytest.fixture
def smt_recording(db_path: Path) -> Path:
    config = {**CONFIG, "lpar.cpus_g_mtid": "1"}  # /proc/sysinfo: LPAR CPUs G-MTID 1
    host_recording(db_path, n_intervals=3, config=config)
    with Store.open(db_path) as store:
        write(store, "monitor", (LCPU,), smt_samples())
    return db_path


def test_threads_stay_with_their_core_and_the_subtotal_keeps_its_decimal(
    smt_recording: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(smt_recording)
    assert main(["export", "ESACPUU", "--db", db, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in doc["columns"]][:4] == ["time", "type", "core", "id"]
    newest = [r for r in doc["rows"] if r["time"] == doc["rows"][0]["time"]]
    threads = [r for r in newest if r["row"] == "data"]
    assert [r["core"] for r in threads] == [a >> 1 for a in range(THREADS)]
    assert [int(r["id"]) for r in threads] == list(range(THREADS))
    (tot,) = [r for r in newest if r["row"] == "subtotal"]
    assert tot["idle"] == pytest.approx(THREADS * 83.55)
    assert main(["export", "ESACPUU", "--db", db]) == 0
    text = capsys.readouterr().out
    assert "1336.8" in text


@pytest.mark.parametrize(
    ("capture", "bits"),
    [
        # z13 LPAR offered two threads (G-MTID 1, S-MTID 1) that ran one (PS-MTID 0):
        # lscpu of the same dump says one thread per core, each address its own core
        ("sysinfo-lpar-z13-2964-drawer-util-linux.txt", 0),
        ("sysinfo-kvm-in-zvm64-nested-z13-2964-util-linux.txt", 0),  # G 0, S 1, PS 0
        ("sysinfo-lpar-z13-2964-smt-libvirt-sanitized.txt", 1),  # PS-MTID 1: SMT on
        ("sysinfo-zvm72-guest-z15-8561-ansible.txt", 1),  # a z/VM guest sees its LPAR's
        ("sysinfo-lpar-z196-2817-util-linux.txt", 0),  # no MT lines at all
    ],
)
def test_the_thread_id_takes_the_bits_of_the_mtid_in_effect(capture: str, bits: int) -> None:
    """The thread ID's bits from the captures' /proc/sysinfo, as IBM's qclib reads it:
    PS-MTID (the program's) bounds G-MTID and S-MTID (the machine's offer)."""
    info = parse_sysinfo((DATA / "host" / capture).read_text())
    config = info.config()
    assert thread_bits(config) == info.thread_id_bits == bits  # the screen's, the monitor's
    assert thread_bits({**config, "hypfs.threads_per_core": "2"}) == 1  # DIAGNOSE X'204'


def test_a_simulated_smt_partitions_mgmt_is_its_cores(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The simulated CP writes D0R16 per core with SMT, as a real one does; the monitor
    source, reading /proc/sysinfo's PS-MTID 1, puts a core's LPAR management time on its
    first thread: the second threads show none, and every core's is there once."""
    db = tmp_path / "smt.sqlite"
    sim(capsys, db, "--set", "smt=true", "--set", "lpar_cpus=2CP+4IFL", duration="3m")
    assert main(["export", "ESACPUU", "--db", str(db), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    threads = [r for r in rows if r["row"] == "data"]
    assert threads
    for row in threads:
        first = int(row["id"]) % 2 == 0
        assert (row["mgmt"] is not None) == first, row
    assert {r["core"] for r in threads if r["mgmt"] is not None} == {0, 1, 2, 3, 4, 5}


def test_a_simulated_smt_partition_of_cps_alone_has_its_cores_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """SMT on but only CPs (one thread a core, addresses still core << 1): D0R16 per core,
    no processor beyond the two, and CP Tot their sum."""
    db = tmp_path / "cps.sqlite"
    sim(capsys, db, "--set", "smt=true", "--set", "lpar_cpus=2CP", duration="3m")
    assert main(["export", "ESACPUU", "--db", str(db), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    newest = [r for r in rows if r["time"] == rows[0]["time"]]
    cpus = [r for r in newest if r["row"] == "data"]
    assert [int(r["id"]) for r in cpus] == [0, 2]
    assert all(r["mgmt"] is not None for r in cpus)
    (tot,) = [r for r in newest if r["row"] == "subtotal"]
    assert tot["total"] == pytest.approx(sum(r["total"] for r in cpus))
