"""One SVG snapshot per screen (pytest-textual-snapshot; update with --snapshot-update)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from esatui.tui.app import MonitorApp
from esatui.tui.pilot import settle
from tests.fixtures.hypervisor import guests_recording

SnapCompare = Callable[..., bool]


@pytest.fixture
def recording(db_path: Path) -> Path:
    return guests_recording(db_path)


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
