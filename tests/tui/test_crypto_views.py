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
