"""The guard the monitor tests run under catches a key handler that reads the database."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import pytest

from esatui.db.sqlite_reader import SqliteReader
from esatui.tui.app import MonitorApp
from esatui.tui.pilot import settle
from tests.fixtures.recording import host_recording
from tests.fixtures.ui_guard import GuardedReader, UIThreadTouch, guard_readers


def test_a_guarded_reader_works_off_the_ui_thread_only(db_path: Path) -> None:
    host_recording(db_path, n_intervals=2)
    misuses: list[str] = []
    reader = GuardedReader(SqliteReader.open(db_path), misuses)
    found: list[list[str]] = []
    worker = threading.Thread(target=lambda: found.append(reader.nodes()))
    worker.start()
    worker.join()
    assert found == [["LNXT01"]] and not misuses
    with pytest.raises(UIThreadTouch):
        reader.nodes()
    assert misuses == ["nodes"]


class LeakyApp(MonitorApp):
    """What the monitor did before: a key handler that asks the database where to go."""

    def action_step(self, direction: int) -> None:
        assert self._reader is not None
        self._reader.nodes()


async def test_a_key_handler_reading_the_database_is_caught(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host_recording(db_path, n_intervals=5)
    misuses = guard_readers(monkeypatch)
    app = LeakyApp(db_path, live=False)
    with contextlib.suppress(UIThreadTouch):
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            assert app.model is not None and app.model.rows  # loaded in a worker: allowed
            await pilot.press("right_square_bracket")
            await settle(pilot)
    assert misuses == ["nodes"]
