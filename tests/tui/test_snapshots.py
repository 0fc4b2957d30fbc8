"""One SVG snapshot per screen (pytest-textual-snapshot; update with --snapshot-update)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from esatui.collectors.kinds import GUEST, LCPU
from esatui.collectors.model import Reading, Sample
from esatui.db.store import Store
from esatui.tui.app import MonitorApp
from esatui.tui.pilot import settle
from tests.fixtures.recording import START_US, host_recording, write

SnapCompare = Callable[..., bool]
MINUTE = 60_000_000


def hypervisor_samples() -> tuple[list[Sample], list[Sample]]:
    cpus, guests = [], []
    for i in range(6):
        t = START_US + i * MINUTE
        cpus.append(
            Sample(
                "monitor",
                t,
                tuple(
                    Reading(
                        "lcpu",
                        str(n),
                        {
                            "elapsed_us": i * MINUTE,
                            "emul_us": i * (10 + 20 * n) * 600_000,
                            "user_us": i * 2 * 600_000,
                            "syst_us": i * (3 + n) * 600_000,
                            "idle_us": i * (80 - 20 * n) * 600_000,
                            "steal_us": i * (5 - n) * 600_000,
                        },
                        {"type": t_, "lpar": "L32", "type_source": "monitor"},
                    )
                    for n, t_ in enumerate(("CP", "IFL", "IFL"))
                ),
                config={"lpar_name": "L32"},
            )
        )
        guests.append(
            Sample(
                "hypfs",
                t,
                tuple(
                    Reading(
                        "guest",
                        name,
                        {
                            "cpu_us": i * share * 600_000,
                            "samp_cpu": i * share,
                            "samp_delay": i,
                            "samp_page": 0,
                            "samp_idle": i * (100 - share),
                            "samp_total": i * 101,
                            "vcpus": 2,
                            "mem_used_kib": 1 << 20,
                            "mem_max_kib": 4 << 20,
                        },
                        {"userid": name},
                    )
                    for name, share in (("LNXT01", 35), ("ZVSE1", 60), ("TCPIP", 1))
                ),
            )
        )
    return cpus, guests


@pytest.fixture
def recording(db_path: Path) -> Path:
    host_recording(db_path, n_intervals=5)
    cpus, guests = hypervisor_samples()
    with Store.open(db_path) as store:
        write(store, "monitor", (LCPU,), cpus)
        write(store, "hypfs", (GUEST,), guests)
    return db_path


@pytest.mark.parametrize("screen", ["ESASSUM", "ESALNXC", "ESACPUU", "ESAUSR2", "ESAOVHD"])
def test_screen_snapshot(snap_compare: SnapCompare, recording: Path, screen: str) -> None:
    app = MonitorApp(recording, live=False, screen=screen)
    assert snap_compare(app, terminal_size=(132, 36), run_before=settle)


def imported(tmp_path: Path, build: Callable[[Path], Path]) -> Path:
    from esatui.cli import main

    db = tmp_path / "crypto.sqlite"
    assert (
        main(["collect", "--source", f"monwrite:{build(tmp_path / 'f.mon')}", "--db", str(db)]) == 0
    )
    return db


@pytest.mark.parametrize(
    ("screen", "seed"), [("ESACRYPT", "000"), ("ESACRYPA", "000"), ("ESAPOLL", "002")]
)
def test_crypto_screen_snapshot(
    snap_compare: SnapCompare, tmp_path: Path, screen: str, seed: str
) -> None:
    from tests.screens import crypto_data as D

    db = imported(tmp_path, D.seed000_file if seed == "000" else D.seed002_file)
    if seed == "002":
        D.add_guest_poll(db, D.SEED002_START_US, [250, 250, 250])
    app = MonitorApp(db, live=False, screen=screen)
    assert snap_compare(app, terminal_size=(132, 36), run_before=settle)


def test_esacryq_snapshot(snap_compare: SnapCompare, tmp_path: Path) -> None:
    from tests.fixtures.cryq_recording import record

    record(tmp_path / "q.sqlite", tmp_path / "root")
    app = MonitorApp(tmp_path / "q.sqlite", live=False, screen="ESACRYQ")
    assert snap_compare(app, terminal_size=(132, 36), run_before=settle)
