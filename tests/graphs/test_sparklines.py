"""ESASSUM's header: the busiest columns of the day as hourly sparklines."""

from __future__ import annotations

from pathlib import Path

from esatui.db.sqlite_reader import SqliteReader
from esatui.screens import catalog
from esatui.screens.graph import HOUR_US, HOURS, SPARKLINES, day_sparklines, sparkline
from esatui.screens.model import DEFAULT_THRESHOLDS
from esatui.tui.app import MonitorApp
from esatui.tui.pilot import settle


def test_bars_scale_from_zero_to_the_top() -> None:
    assert sparkline([0.0, 50.0, 100.0, None], 100.0) == "▁▅█ "
    assert sparkline([0.0, 0.0], 0.0) == "▁▁"


def test_the_busiest_percentages_hour_by_hour(sim_db: Path) -> None:
    reader = SqliteReader.open(sim_db)
    try:
        newest = catalog.build_model(reader, "ESASSUM", catalog.Query(limit=1)).rows[0].end_us
        lines = day_sparklines(reader, None, newest, DEFAULT_THRESHOLDS)
        hourly = catalog.build_model(
            reader,
            "ESASSUM",
            catalog.Query(after_us=newest - HOUR_US, until_us=newest, interval_len_us=HOUR_US),
        )
    finally:
        reader.close()
    assert len(lines) == SPARKLINES
    percents = {
        c.id: hourly.rows[0].values[c.id]
        for c in hourly.columns
        if c.unit == "%" and isinstance(hourly.rows[0].values.get(c.id), float)
    }
    busiest = sorted(percents, key=lambda c: -float(percents[c] or 0))[:SPARKLINES]
    assert [line.split()[0] for line in lines] == busiest
    for line in lines:
        name = line.split()[0]
        bars = line[len(line.split(" ")[0]) :].lstrip(" ")
        # half an hour recorded: the last of the day's 24 hourly bars, full height
        assert line.index("█") == line.index(name) + max(map(len, busiest)) + HOURS
        assert bars.startswith("█")
        assert f"{float(percents[name] or 0):.1f}-{float(percents[name] or 0):.1f}%" in line


async def test_esassum_shows_them_in_its_header(sim_db: Path, ui_never_reads: None) -> None:
    app = MonitorApp(sim_db, live=False, screen="ESASSUM")
    async with app.run_test(size=(132, 36)) as pilot:
        await settle(pilot)
        header = "\n".join(app.header.text_lines)
        assert "% (24 h, hourly)" in header
        await pilot.press("colon", *"cpuu", "enter")
        await settle(pilot)
        assert app.model is not None
        assert not any("(24 h, hourly)" in note for note in app.model.notes)


def test_the_current_hour_follows_each_new_interval(sim_db: Path) -> None:
    """Live, a new interval changes the current hour's bar and the day's min-max: the header
    is read again for it, not only when the hour changes."""
    from dataclasses import replace

    app = MonitorApp(sim_db, live=False, screen="ESASSUM")
    reader = SqliteReader.open(sim_db)
    try:
        model = catalog.build_model(reader, "ESASSUM", catalog.Query())
        newest = model.rows[0].end_us
        lines = day_sparklines(reader, None, newest, app.thresholds)
        earlier = [  # a moment of the same hour whose header differed
            end
            for end in sorted({r.end_us for r in model.rows}, reverse=True)
            if end // HOUR_US == newest // HOUR_US
            and day_sparklines(reader, None, end, app.thresholds) != lines
        ]
        assert earlier, "the recording's last hour never changes its sparklines"
        before = replace(model, rows=tuple(r for r in model.rows if r.end_us <= earlier[0]))
        shown = app._with_sparklines(reader, app.state, before)
        assert shown.notes[-len(lines) :] == day_sparklines(
            reader, None, earlier[0], app.thresholds
        )
        shown = app._with_sparklines(reader, app.state, model)  # the next interval came
    finally:
        reader.close()
    assert shown.notes[-len(lines) :] == lines
