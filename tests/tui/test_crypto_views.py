"""The crypto screens in the monitor: drills between them and ESACRYPA's pages."""

from __future__ import annotations

from pathlib import Path

from esatui.cli import main
from esatui.tui.app import MonitorApp
from esatui.tui.pilot import settle
from tests.monitor import fixtures as F
from tests.screens import crypto_data as D


def _db(tmp_path: Path) -> Path:
    db = tmp_path / "c.sqlite"
    mon = D.seed000_file(tmp_path / "c.mon")
    assert main(["collect", "--source", f"monwrite:{mon}", "--db", str(db)]) == 0
    return db


async def test_esacrypt_drills_to_esacrypa_and_esapoll_back(tmp_path: Path) -> None:
    app = MonitorApp(_db(tmp_path), live=False, screen="ESACRYPT")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert app.model is not None and app.model.name == "ESACRYPT"
        assert app.table.text_lines[0].startswith("18:53:00   4.9")
        await pilot.press("down", "enter")
        await settle(pilot)
        assert app.model.name == "ESACRYPA"
        assert {r.values["ap"] for r in app.model.rows} == {"00", "01", "02", "03"}
        assert {r.end_us for r in app.model.rows} == {F.end_us(F.SEED000_DATE, "18:52")}
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("colon", *"esapoll", "enter")
        await settle(pilot)
        assert app.model.name == "ESAPOLL"
        await pilot.press("enter")
        await settle(pilot)
        assert app.model.name == "ESACRYPT"


async def test_esacrypa_pages_at_80_columns(tmp_path: Path) -> None:
    app = MonitorApp(_db(tmp_path), live=False, screen="ESACRYPA")
    async with app.run_test(size=(80, 30)) as pilot:
        await settle(pilot)
        assert "ESACRYPA 1/3" in app.header.text_lines[0]
        await pilot.press("right")
        await settle(pilot)
        assert "ESACRYPA 2/3" in app.header.text_lines[0]
        assert any("RSA 2048" in line for line in app.header.text_lines)


async def test_long_notes_give_way_to_the_rows_in_a_narrow_window(tmp_path: Path) -> None:
    """ESAPOLL's notes (what drives the latency, the cost, the trade-off) wrap to more lines
    than a 40-column window has: the header keeps the first ones and says how many more
    there are, the table keeps eight rows; 80 columns show every note as before."""
    db = tmp_path / "p.sqlite"
    sim = ["sim", "--scenario", "seed002-t3-polling", "--set", "poll_timeout_us=50"]
    assert main([*sim, "--duration", "12m", "--db", str(db)]) == 0
    app = MonitorApp(db, live=False, screen="ESAPOLL")
    async with app.run_test(size=(40, 24)) as pilot:
        await settle(pilot)
        assert app.model is not None and len(app.model.rows) >= 10
        head = app.header.text_lines
        (said,) = [line for line in head if line.startswith("… ")]
        assert said.endswith("more note lines: widen or export")
        assert all(len(line) <= 40 for line in head)
        assert app.table.size.height >= 8
        assert len([t for t in app.table.text_lines[:8] if t.strip()]) == 8
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        notes = [line for line in app.header.text_lines if "more note" in line or "notes:" in line]
        assert notes == []
