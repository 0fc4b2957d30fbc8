"""The graph view (``g``) under Pilot: every screen with entities, overlay, time keys, and
Enter back to the table at the point."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Group
from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from esatui.screens.graph import MAX_LINES, entity_columns, entity_label
from esatui.tui.app import MonitorApp
from esatui.tui.graph import GraphScreen
from esatui.tui.help import HelpScreen
from esatui.tui.pilot import settle
from tests.graphs.conftest import simulate
from tests.graphs.test_series import ENTITY_SCREENS

SnapCompare = Callable[..., bool]


@pytest.fixture(scope="module")
def sim_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simulate(tmp_path_factory.mktemp("tui-graphs") / "sim.sqlite")


async def drawn(pilot: Pilot[int]) -> GraphScreen:
    """The graph view once its reading is done."""
    await settle(pilot)
    for _ in range(3):
        busy = [w for w in pilot.app.workers if w.group == "graph"]
        if busy:
            with contextlib.suppress(WorkerCancelled):
                await pilot.app.workers.wait_for_complete(busy)
        await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, GraphScreen)
    assert screen.graph is not None
    return screen


@pytest.mark.parametrize("name", ENTITY_SCREENS)
async def test_g_draws_a_line_per_entity_and_enter_opens_the_table(sim_db: Path, name: str) -> None:
    app = MonitorApp(sim_db, live=False, screen=name)
    async with app.run_test(size=(132, 36)) as pilot:
        await settle(pilot)
        assert app.model is not None and app.model.rows
        await pilot.press("down")
        row = app.table.selected_row
        assert row is not None
        await pilot.press("g")
        view = await drawn(pilot)
        graph = view.graph
        assert graph is not None
        model = view.model
        entities = {entity_label(entity_columns(model), r) for r in model.rows}
        assert {s.label for s in graph.primary.series} <= entities
        assert len(graph.primary.series) == min(len(entities), MAX_LINES)
        if len(entities) > 1:
            assert graph.emphasis == entity_label(entity_columns(model), row)
        # another entity emphasised, then Enter on a point two back: the table at that
        # interval, on the emphasised entity's row
        await pilot.press("down")
        emphasis = view.graph.emphasis if view.graph is not None else None
        await pilot.press("left", "left", "enter")
        await settle(pilot)
        assert not isinstance(app.screen, GraphScreen)
        point = graph.ends_us[-3] if graph.points >= 3 else graph.ends_us[0]
        assert app.state.anchor_us == point
        assert app.model is not None and app.model.rows[0].end_us == point
        selected = app.table.selected_row
        assert selected is not None and selected.end_us == point
        assert entity_label(entity_columns(app.model), selected) == emphasis


async def test_time_keys_overlay_and_emphasis(sim_db: Path) -> None:
    app = MonitorApp(sim_db, live=False, screen="ESACPUU")
    async with app.run_test(size=(132, 36)) as pilot:
        await settle(pilot)
        await pilot.press("g")
        view = await drawn(pilot)
        assert view.graph is not None
        ends = view.graph.ends_us
        await pilot.press("left_square_bracket")
        view = await drawn(pilot)
        assert view.graph is not None and view.graph.ends_us[-1] == ends[-2]
        await pilot.press("right_square_bracket")
        view = await drawn(pilot)
        assert view.graph is not None and view.graph.ends_us[-1] == ends[-1]
        await pilot.press("plus")  # 1-minute buckets of the 1-minute intervals, then 5
        view = await drawn(pilot)
        await pilot.press("plus")
        view = await drawn(pilot)
        assert view.graph is not None and view.graph.interval_len_s == 300
        assert view.graph.points == 6
        await pilot.press("minus")
        view = await drawn(pilot)
        await pilot.press("minus")
        view = await drawn(pilot)
        assert view.graph is not None and view.graph.interval_len_s is None
        await pilot.press("j", *"00:10", "enter")
        view = await drawn(pilot)
        assert view.graph is not None
        assert view.graph.ends_us[-1] == ends[0] - ends[0] % 3_600_000_000 + 600_000_000
        await pilot.press("o")
        view = await drawn(pilot)
        assert view.graph is not None and view.graph.overlay is not None
        assert view.graph.overlay.column.id == "emul"
        before = view.graph.emphasis
        await pilot.press("down")
        assert view.graph.emphasis != before
        # the table's own keys do nothing to the hidden table while the graph is up
        state = app.state
        await pilot.press("n", "space", "tab", "colon")
        assert app.state == state and isinstance(app.screen, GraphScreen)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        content = app.screen.content
        assert isinstance(content, Group)
        assert str(content.renderables[0]) == "Graph keys"
        await pilot.press("escape")
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, GraphScreen)


async def test_the_status_gives_the_points_value_and_the_overlays(sim_db: Path) -> None:
    """Before: with an overlay on, the status gave the primary column's value alone."""
    app = MonitorApp(sim_db, live=False, screen="ESACPUU")
    async with app.run_test(size=(132, 36)) as pilot:
        await settle(pilot)
        await pilot.press("g")
        await drawn(pilot)
        await pilot.press("o", "down", "left")
        view = await drawn(pilot)
        graph = view.graph
        assert graph is not None and graph.overlay is not None
        series = {s.label: s for s in graph.primary.series}[graph.emphasis or ""]
        overlay = graph.overlay.series[0]
        bar = view.query_one("#graph-status")
        shown = " ".join(bar.render_line(y).text.strip() for y in range(bar.size.height))
        assert (
            f"{graph.emphasis} {graph.primary.column.id} {series.values[-2]:,.1f}  "
            f"{graph.emphasis} emul {overlay.values[-2]:,.1f}"
        ) in shown


async def test_a_screen_without_entities_draws_one_line_with_its_thresholds(
    sim_db: Path,
) -> None:
    app = MonitorApp(sim_db, live=False, screen="ESASSUM")
    async with app.run_test(size=(132, 36)) as pilot:
        await settle(pilot)
        await pilot.press(*["tab"] * 5)  # cpus_cp, busy_cp, cpus_ifl, busy_ifl, steal_pct
        await pilot.press("g")
        view = await drawn(pilot)
        assert view.graph is not None
        assert view.graph.primary.column.id == "steal_pct"
        assert [s.label for s in view.graph.primary.series] == [""]
        assert view.graph.primary.threshold == app.thresholds["steal"]


@pytest.mark.parametrize("name", ENTITY_SCREENS)
def test_graph_snapshot(snap_compare: SnapCompare, sim_db: Path, name: str) -> None:
    """A graph of each screen with entities: the first numeric column, the third row's
    entity emphasised."""

    async def run_before(pilot: Pilot[int]) -> None:
        await settle(pilot)
        await pilot.press("down", "down", "g")
        await drawn(pilot)

    app = MonitorApp(sim_db, live=False, screen=name)
    assert snap_compare(app, terminal_size=(132, 36), run_before=run_before)


def test_graph_overlay_snapshot(snap_compare: SnapCompare, sim_db: Path) -> None:
    async def run_before(pilot: Pilot[int]) -> None:
        await settle(pilot)
        await pilot.press("tab", "tab", "tab", "g")
        await drawn(pilot)
        await pilot.press("o", "o")
        await drawn(pilot)

    app = MonitorApp(sim_db, live=False, screen="ESAPOLL")
    assert snap_compare(app, terminal_size=(132, 36), run_before=run_before)


async def test_a_live_graph_follows_the_newest_interval(tmp_path: Path) -> None:
    import threading
    import time

    from esatui.db.store import Store
    from tests.fixtures.recording import START_US
    from tests.tui.test_keys import MINUTE, live_recorder

    db = tmp_path / "live.sqlite"
    Store.open(db).close()
    go = threading.Semaphore(0)
    app = MonitorApp(db, live=True, screen="ESALNXC", recorder=live_recorder(db, go))
    async with app.run_test(size=(132, 36)) as pilot:

        async def until(condition: Callable[[], bool]) -> None:
            deadline = time.monotonic() + 20
            while not condition() and time.monotonic() < deadline:
                await settle(pilot)
            assert condition()

        go.release(3)
        await until(lambda: bool(app.model and app.model.rows))
        await until(lambda: app.model is not None and len({r.end_us for r in app.model.rows}) == 3)
        await pilot.press("g")
        view = await drawn(pilot)
        assert view.graph is not None and view.graph.points == 3
        go.release(2)
        await until(lambda: view.graph is not None and view.graph.points == 5)
        assert view.graph is not None and view.graph.ends_us[-1] == START_US + 5 * MINUTE


async def test_at_80_columns_the_graphs_status_shows_a_message_whole(sim_db: Path) -> None:
    """Before: the graph's status was one line, its point, value and keys before the
    message: at 80 columns what a key said was cut off (the table's status wraps)."""
    app = MonitorApp(sim_db, live=False, screen="ESACPUU")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("g")
        await drawn(pilot)
        await pilot.press("j", *"yesterday at noon", "enter")  # not a time: says so
        view = await drawn(pilot)
        bar = view.query_one("#graph-status")
        drawn_text = " ".join(bar.render_line(y).text.strip() for y in range(bar.size.height))
        assert view._message and view._message in " ".join(drawn_text.split())
        assert "? help" in drawn_text


async def test_paging_a_graph_before_its_oldest_point_says_so(tmp_path: Path) -> None:
    """Outside check: at 15 minutes PgUp before the oldest point cut the first bucket to a
    one-point graph (then each PgDn moved by the points shown: 1, 2, 4 ...) and, at the
    oldest, read nothing and said the column was not there."""
    from tests.fixtures.recording import host_recording

    db = host_recording(tmp_path / "h.sqlite", n_intervals=60, cpus=(0,))
    app = MonitorApp(db, live=False, screen="ESALNXC")
    async with app.run_test(size=(132, 36)) as pilot:
        await settle(pilot)
        for _ in range(3):  # 1m, 5m, 15m
            await pilot.press("plus")
            await settle(pilot)
        await pilot.press("tab", "g")
        view = await drawn(pilot)
        assert view.graph is not None and view.graph.points == 4
        ends = view.graph.ends_us
        await pilot.press("pageup")
        view = await drawn(pilot)
        assert view._message == "oldest interval"
        assert view.graph is not None and view.graph.ends_us == ends
        for _ in range(3):
            await pilot.press("left_square_bracket")
            view = await drawn(pilot)
        assert view.graph is not None and view.graph.ends_us == ends[:1]
        await pilot.press("left_square_bracket")
        view = await drawn(pilot)
        assert view._message == "oldest interval"
        assert view.graph is not None and view.graph.ends_us == ends[:1]


async def test_a_resize_refits_the_graph_to_its_width(tmp_path: Path) -> None:
    """Before: a narrower terminal squeezed the intervals read for the wider one into the
    plot (a wider one left columns empty) until the next key; the point under the cursor
    stays where it was."""
    from tests.fixtures.recording import host_recording

    db = host_recording(tmp_path / "h.sqlite", n_intervals=200, cpus=(0,))
    app = MonitorApp(db, live=False, screen="ESALNXC")
    async with app.run_test(size=(132, 36)) as pilot:
        await settle(pilot)
        await pilot.press("g")
        view = await drawn(pilot)
        assert view.graph is not None and view.graph.points == view.points == 132 - 16
        newest = view.graph.ends_us[-1]
        await pilot.press("left", "left", "left")
        point = view.graph.ends_us[-4]
        await pilot.resize_terminal(80, 24)
        view = await drawn(pilot)
        assert view.graph is not None and view.graph.points == 80 - 16
        assert view.graph.ends_us[-1] == newest
        cursor = view._cursor()
        assert cursor is not None and view.graph.ends_us[cursor] == point


async def test_a_resize_during_a_reading_keeps_the_move_and_refits_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review: a resize while a time key's reading was under way read the old place again
    and dropped the move; one before the first reading was never refitted. The readings
    here wait at a gate until the resize is in."""
    import threading

    from tests.fixtures.recording import host_recording

    db = host_recording(tmp_path / "h.sqlite", n_intervals=200, cpus=(0,))
    app = MonitorApp(db, live=False, screen="ESALNXC")
    gate = threading.Event()
    real = app.graph_read

    def gated(*args: Any) -> Any:
        gate.wait(10)
        return real(*args)

    monkeypatch.setattr(app, "graph_read", gated)
    async with app.run_test(size=(132, 36)) as pilot:
        await settle(pilot)
        await pilot.press("g")  # its first reading waits ...
        await pilot.resize_terminal(100, 30)  # ... while the terminal shrinks
        await pilot.pause()
        gate.set()
        view = await drawn(pilot)
        assert view.graph is not None and view.graph.points == 100 - 16
        newest = view.graph.ends_us[-1]
        gate.clear()
        view.action_step(-1)  # "[": its reading waits ...
        await pilot.resize_terminal(80, 24)  # ... while the terminal shrinks again
        await pilot.pause()
        gate.set()
        view = await drawn(pilot)
        assert view.graph is not None and view.graph.ends_us[-1] == newest - 60_000_000
        assert view.graph.points == 80 - 16
