"""``esatui demo`` starts the live monitor on the simulated system, and its data moves."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from esatui.cli import main
from esatui.commands.demo import Demo
from esatui.sim.run import resolve
from esatui.tui.app import MonitorApp
from esatui.tui.pilot import settle

SIZE = (140, 40)


async def _until(pilot: Pilot[int], condition: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        await settle(pilot)
    assert condition()


def _newest(app: MonitorApp) -> int | None:
    return app.model.rows[0].end_us if app.model and app.model.rows else None


@pytest.mark.usefixtures("ui_never_reads")
async def test_demo_starts_on_esassum_with_moving_simulated_data(tmp_path: Path) -> None:
    db = tmp_path / "demo.sqlite"
    # two minutes of backlog, then 20 times wall-clock speed: a 10-s interval every 0.5 s
    demo = Demo(resolve("mode-vm-day", [], 0), db_path=db, speed=20, backlog_s=120)
    app = demo.app
    try:
        async with app.run_test(size=SIZE) as pilot:
            await _until(pilot, lambda: len(app.model.rows) >= 12 if app.model else False)
            assert app.model is not None and app.model.name == "ESASSUM"
            assert "Simulated data (esatui sim)." in app.model.notes
            assert app.header.text_lines[0].startswith("Screen: ESASSUM esatui 0.1.0  VMMODEVM")
            assert "LIVE" in str(app.query_one("#status").render())
            first = _newest(app)
            assert first is not None
            await _until(pilot, lambda: (_newest(app) or 0) >= first + 20_000_000)
            for screen in ("ESALNXC", "ESAOVHD"):
                await pilot.press("colon", *screen.lower(), "enter")
                await _until(pilot, functools.partial(_shows, app, screen))
                assert app.model is not None
                assert "Simulated data (esatui sim)." in app.model.notes
    finally:
        demo.close()
    assert db.exists()  # --db keeps the recording
    # at rest, as collect leaves it (before: a 4 MB -wal and the -shm stayed)
    assert not Path(f"{db}-wal").exists() and not Path(f"{db}-shm").exists()


def _shows(app: MonitorApp, name: str) -> bool:
    return bool(app.model and app.model.name == name and app.model.rows)


def test_demo_rejects_bad_settings_before_starting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["demo", "--set", "cards=none"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cards" in err
    assert main(["demo", "--speed", "0"]) == 2
