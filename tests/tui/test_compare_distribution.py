"""The monitor's comparison (``m`` twice per range) and distribution (``d``) views (issue
17): each opens as a screen computed in a worker, and Esc returns to the table."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from esatui.screens.render import date_range, hms
from esatui.tui.app import MonitorApp
from esatui.tui.pilot import settle
from esatui.tui.textview import TextView
from tests.fixtures.recording import START_US, host_recording
from tests.tui.test_keys import lengthen_to

SIZE = (140, 40)


async def views_done(pilot: Pilot[int]) -> None:
    await settle(pilot)
    views = [w for w in pilot.app.workers if w.group == "view"]
    if views:
        await pilot.app.workers.wait_for_complete(views)
    await pilot.pause()
    await pilot.pause()


def shown_view(app: MonitorApp) -> TextView:
    screen = app.screen
    assert isinstance(screen, TextView), (type(screen), app._message)
    return screen


async def table_keys_do_nothing(pilot: Pilot[int], view: TextView) -> None:
    """Under a view, the table's keys (g, d, m, +, -, Tab, a screen's name) are not the
    hidden table's: the view stays, nothing opens over it, the table's state is as it was."""
    app = pilot.app
    assert isinstance(app, MonitorApp)
    state, marks, depth = app.state, app._marks, len(app.screen_stack)
    await pilot.press("g", "d", "m", "plus", "minus", "tab", "m", "s", "colon")
    await views_done(pilot)
    assert app.screen is view and len(app.screen_stack) == depth
    assert app.state == state and app._marks == marks


async def test_escape_drops_a_half_marked_comparison(db_path: Path) -> None:
    """Review: a started mark could not be undone (Esc left the view and kept the marks)."""
    host_recording(db_path, n_intervals=20, cpus=(0, 1))
    app = MonitorApp(db_path, live=False, screen="ESASSUM")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "enter")  # a view to go back from
        await settle(pilot)
        assert app.model is not None and app.model.name == "ESALNXC"
        await pilot.press("m", "down", "m", "m")
        await pilot.press("escape")
        await settle(pilot)
        assert app.model.name == "ESALNXC" and app._message == "range marks cleared"
        await pilot.press("m")
        assert "first range from" in app._message  # marking begins again
        await pilot.press("escape", "escape")
        await settle(pilot)
        assert app.model.name == "ESASSUM"  # with no marks, Esc goes back


async def test_marking_two_ranges_shows_their_comparison(db_path: Path) -> None:
    host_recording(db_path, n_intervals=20, cpus=(0, 1))
    app = MonitorApp(db_path, live=False, screen="ESALNXC")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.model is not None
        marked: list[tuple[int, int]] = []

        async def mark(*moves: str) -> None:
            await pilot.press(*moves)
            row = app.table.selected_row
            assert row is not None
            marked.append((row.start_us, row.end_us))
            await pilot.press("m")

        # the first range: the newest interval's first row (m), then 3 rows down (m): marked
        # newer first, the range still covers the newer row whole
        await mark()
        assert "m again at its end" in app._message
        await mark("down", "down", "down")
        assert marked[1][1] < marked[0][1]  # an older interval
        first = (min(s for s, _ in marked[:2]), max(e for _, e in marked[:2]))
        assert first == (marked[1][0], marked[0][1])
        assert f"first range {date_range(*first)}:" in app._message
        await mark("down", "down", "down")
        await mark("down", "down", "down")
        second = (min(s for s, _ in marked[2:]), max(e for _, e in marked[2:]))
        await views_done(pilot)
        view = shown_view(app)
        assert view.kind == "compare"
        text = "\n".join(view.text_lines)
        assert date_range(*first) in text and date_range(*second) in text
        await table_keys_do_nothing(pilot, view)
        assert text.startswith("Screen: ESALNXC")
        assert "Run ID" in text and "Delta" in text
        assert any(" steal " in ln and ln.rstrip().endswith("%") for ln in view.text_lines)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, TextView)
        assert "reading" not in app._message  # the view's gone, and the worker's done
        assert app.model is not None and app.model.name == "ESALNXC"


async def test_d_shows_the_distribution_of_the_column_under_the_cursor(db_path: Path) -> None:
    host_recording(db_path, n_intervals=60, cpus=(0, 1))
    app = MonitorApp(db_path, live=False, screen="ESALNXC")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("d")
        assert "Tab to a column" in app._message
        await pilot.press("tab", "d")
        assert "+ first" in app._message  # as recorded: nothing aggregated yet
        await pilot.press("plus")
        await settle(pilot)
        assert app.state.interval_len_us is not None
        for _ in range(8):  # from Total (the first Tab) on to Steal
            await pilot.press("tab")
        await pilot.press("d")
        await views_done(pilot)
        view = shown_view(app)
        assert view.kind == "distribution"
        head = view.text_lines[0]
        assert head.startswith("Distribution: ESALNXC steal") and "IFL 0" in head
        assert "statistics of interval values" in view.text_lines[1]
        assert any(ln.startswith("Histogram of") for ln in view.text_lines)
        await table_keys_do_nothing(pilot, view)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, TextView)


async def test_d_on_esacrypa_util_works_as_g_does(tmp_path: Path) -> None:
    """Util% sits among ESACRYPA's keys but is a measurement: Tab stops on it, and d shows
    its distribution for the card under the cursor (its six intervals in the 15 minutes)."""
    from esatui.cli import main
    from tests.screens import crypto_data as D

    db = tmp_path / "g.sqlite"
    mon = D.growing_esacrypa_file(tmp_path / "g.mon")
    assert main(["collect", "--source", f"monwrite:{mon}", "--db", str(db)]) == 0
    app = MonitorApp(db, live=False, screen="ESACRYPA")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for _ in range(3):  # as recorded, then 5 and 15 minutes
            await pilot.press("plus")
            await settle(pilot)
        assert app.state.interval_len_us == 15 * 60_000_000
        await pilot.press("tab")
        column = app.table.column_cursor
        assert column is not None and app._columns[column].id == "util_pct"
        await pilot.press("d")
        await views_done(pilot)
        view = shown_view(app)
        assert view.text_lines[0].startswith("Distribution: ESACRYPA util_pct")
        assert " 00 10 " in view.text_lines[0]
        (bucket,) = [ln for ln in view.text_lines if ln.startswith("19:00:00")]
        assert bucket.split()[2] == "6"  # N: the six recorded intervals
        await pilot.press("q")  # quits from the view too (before: back to the table)
        await pilot.pause()
        assert not app.is_running


async def test_d_and_m_on_a_screen_without_intervals_say_so(db_path: Path) -> None:
    """ESAPAGE has no interval in a Linux's recording: d and m say why nothing opens, as g
    does."""
    host_recording(db_path, n_intervals=5, cpus=(0, 1))
    app = MonitorApp(db_path, live=False, screen="ESAPAGE")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.model is not None and not app.model.rows
        for key, said in (("d", "no interval to read"), ("m", "no interval to mark")):
            await pilot.press(key)
            await views_done(pilot)
            assert app._message == f"ESAPAGE: {said}"
            assert not isinstance(app.screen, TextView)


async def test_d_on_a_partial_last_bucket_reads_only_its_intervals_in_range(
    db_path: Path,
) -> None:
    """A replay whose --to ends inside a bucket: the table's newest bucket holds the
    intervals up to --to alone, and so do its distribution and a range marked on it."""
    host_recording(db_path, n_intervals=20, cpus=(0,))
    until = START_US + 13 * 60_000_000  # 3 minutes into the third 5-minute bucket
    app = MonitorApp(db_path, live=False, screen="ESALNXC", until_us=until)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await lengthen_to(pilot, app, 5 * 60_000_000)
        assert app.model is not None
        newest = app.model.rows[0]
        assert newest.end_us == until or newest.partial
        for _ in range(8):
            await pilot.press("tab")
        await pilot.press("d")
        await views_done(pilot)
        view = shown_view(app)
        bucket_end = hms(START_US + 15 * 60_000_000)
        newest_line = next(ln for ln in view.text_lines if ln.startswith(bucket_end))
        assert newest_line.split()[2] == "3", newest_line  # N: 00:11, 00:12 and 00:13
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("m")  # a range marked from that bucket ends at --to as well
        assert app._marks.first == (START_US + 10 * 60_000_000, until)
