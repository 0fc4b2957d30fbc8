"""Driving the app under Textual's Pilot (the tests and the TUI benchmark)."""

from __future__ import annotations

import contextlib

from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from esatui.tui.app import LOAD_GROUP


async def settle(pilot: Pilot[int]) -> None:
    """Let pending screen loads finish; not the live recorder, which runs until the end."""
    for _ in range(3):
        await pilot.pause()
        loads = [w for w in pilot.app.workers if w.group == LOAD_GROUP]
        if loads:  # (an empty list would mean every worker, the recorder included)
            with contextlib.suppress(WorkerCancelled):
                await pilot.app.workers.wait_for_complete(loads)
    await pilot.pause()
