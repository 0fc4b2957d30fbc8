"""ESASSUM's header: the busiest columns of the day as hourly sparklines."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

import pytest

from esatui.db.reader import Reader
from esatui.db.sqlite_reader import SqliteReader
from esatui.screens import catalog
from esatui.screens.graph import HOUR_US, HOURS, SPARKLINES, day_sparklines, sparkline
from esatui.screens.model import DEFAULT_THRESHOLDS, Threshold
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
        told = re.search(r" ([0-9.]+)-([0-9.]+)% \(24 h, hourly\)$", line)
        assert told is not None, line
        low, high = told.groups()
        value = float(percents[name] or 0)
        rounding = 0.5 * 10 ** -len(high.partition(".")[2])  # the places it is told in
        assert abs(float(low) - value) <= rounding and abs(float(high) - value) <= rounding


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


async def test_the_day_at_a_glance_ends_at_the_time_looked_at(
    sim_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At every interval length the 24 hours up to the time jumped to, read once. Before,
    they ended at the newest row's end, which for a longer interval lies past that time (a
    15-minute bucket's, a day's at midnight), and were read again at every + and -."""
    from esatui.screens import graph

    ends: list[int] = []

    def counted(
        reader: Reader, node: str | None, until_us: int, thresholds: Mapping[str, Threshold]
    ) -> tuple[str, ...]:
        ends.append(until_us)
        return day_sparklines(reader, node, until_us, thresholds)

    monkeypatch.setattr(graph, "day_sparklines", counted)
    app = MonitorApp(sim_db, live=False, screen="ESASSUM")
    async with app.run_test(size=(132, 36)) as pilot:
        await settle(pilot)
        assert app.model is not None
        moment = app.model.rows[10].end_us  # ten minutes before the newest
        assert moment % 60_000_000 == 0  # a whole minute: what the prompt can say
        text = datetime.fromtimestamp(moment / 1e6).strftime("%Y-%m-%d %H:%M")
        ends.clear()  # the newest's, at start-up
        await pilot.press("j", *text, "enter")
        await settle(pilot)
        assert ends == [moment]
        shown = [n for n in app.model.notes if "(24 h, hourly)" in n]
        assert shown
        for _ in range(5):  # 1 min, 5 min, 15 min, 1 h, 1 day
            await pilot.press("plus")
            await settle(pilot)
            assert app.model.rows[0].end_us >= moment
            assert [n for n in app.model.notes if "(24 h, hourly)" in n] == shown
        assert app.state.interval_len_us == 24 * HOUR_US
        assert app.model.rows[0].end_us > moment  # the day's row ends at midnight
        await pilot.press("minus")
        await settle(pilot)
    assert ends == [moment]  # read once, at the jump


def test_a_range_is_told_in_as_many_places_as_tell_its_ends_apart() -> None:
    """Before: esatui's own CPU, 0.013 to 0.021%, read '0.0-0.0%' beside bars that varied."""
    from esatui.screens.graph import _range_text

    assert _range_text(0.0134, 0.0214, 1) == ("0.013", "0.021")
    assert _range_text(0.3, 0.5, 1) == ("0.30", "0.50")
    assert _range_text(10.61, 10.64, 1) == ("10.6", "10.6")  # the bars tell the rest
    assert _range_text(3.0, 97.25, 2) == ("3.00", "97.25")
    assert _range_text(0.0, 0.0, 1) == ("0.0", "0.0")
