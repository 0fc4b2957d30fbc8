"""The series a graph draws are the cells the table shows, one line per entity."""

from __future__ import annotations

from pathlib import Path

import pytest

from esatui.db.sqlite_reader import SqliteReader
from esatui.screens import catalog
from esatui.screens.graph import (
    GRAPH_LENGTHS,
    MAX_LINES,
    entity_columns,
    entity_label,
    graph_length,
    graph_of,
    load_graph,
    numeric_columns,
)
from esatui.screens.model import Column, Row, RowKind, ScreenModel, Threshold
from esatui.screens.plot import plot_svg, plot_text

ENTITY_SCREENS = [
    s.name for s in catalog.screens().values() if any(c.key and c.id != "time" for c in s.columns)
]


def test_the_screens_with_entities_are_known() -> None:
    assert {"ESACPUU", "ESALNXC", "ESACRYPA", "ESACRYQ", "ESAUSR2", "ESALOCK", "ESANODE"} <= set(
        ENTITY_SCREENS
    )


@pytest.mark.parametrize("screen", ENTITY_SCREENS)
def test_a_line_per_entity_with_the_tables_values(sim_db: Path, screen: str) -> None:
    reader = SqliteReader.open(sim_db)
    try:
        model = catalog.build_model(reader, screen, catalog.Query(limit=12))
    finally:
        reader.close()
    assert model.rows, screen
    column = numeric_columns(model)[0]
    graph = graph_of(model, column.id)
    keys = entity_columns(model)
    entities = {entity_label(keys, r) for r in model.rows}
    drawn = {s.label for s in graph.primary.series}
    assert len(drawn) == min(len(entities), MAX_LINES)
    assert drawn <= entities
    assert graph.primary.omitted == len(entities) - len(drawn)
    # every point is the cell of its row, oldest first
    for row in model.rows:
        label = entity_label(keys, row)
        if label not in drawn:
            continue
        series = next(s for s in graph.primary.series if s.label == label)
        value = row.values.get(column.id)
        expected = float(value) if isinstance(value, int | float) else None
        assert series.values[graph.ends_us.index(row.end_us)] == expected
    assert list(graph.ends_us) == sorted({r.end_us for r in model.rows})


def _model(rows: list[Row]) -> ScreenModel:
    columns = (
        Column("time", ("", "Time"), 8, key=True),
        Column("userid", ("", "UserID"), 8, key=True),
        Column("cpu_pct", ("CPU", "%"), 6, 1, unit="%", threshold="steal"),
        Column("other", ("", "Other"), 6, 1),
    )
    return ScreenModel("ESAUSR2", "User CPU Analysis", columns, tuple(rows), node="n1")


def test_the_overlay_and_the_emphasis_follow_the_cursors_entity() -> None:
    rows = [
        Row(t * 60, (t + 1) * 60, {"userid": name, "cpu_pct": t * k, "other": -t})
        for t in range(3)
        for name, k in (("A", 1.0), ("B", 2.0))
    ]
    graph = graph_of(_model(rows), "cpu_pct", "other", "B", {"steal": Threshold(10, 25)})
    assert graph.emphasis == "B"
    assert [s.label for s in graph.primary.series] == ["A", "B"]
    assert graph.primary.series[1].values == (0.0, 2.0, 4.0)
    assert graph.overlay is not None
    assert [(s.label, s.values) for s in graph.overlay.series] == [("B", (-0.0, -1.0, -2.0))]
    assert graph.primary.threshold == Threshold(10, 25)
    with pytest.raises(KeyError, match="no numeric column 'userid'"):
        graph_of(_model(rows), "userid")


def test_the_busiest_lines_are_drawn_and_the_emphasised_one_always() -> None:
    names = [f"G{i:02d}" for i in range(MAX_LINES + 5)]
    rows = [
        Row(0, 60, {"userid": name, "cpu_pct": float(i), "other": 0.0})
        for i, name in enumerate(names)
    ]
    graph = graph_of(_model(rows), "cpu_pct", emphasis="G00")
    drawn = [s.label for s in graph.primary.series]
    assert "G00" in drawn and len(drawn) == MAX_LINES
    assert set(drawn) - {"G00"} == set(names[-(MAX_LINES - 1) :])
    assert graph.primary.omitted == 5


def test_collected_names_are_never_markup() -> None:
    rows = [Row(0, 60, {"userid": "[red]X[/]", "cpu_pct": 1.0, "other": 0.0})]
    rows += [Row(60, 120, {"userid": "[red]X[/]", "cpu_pct": 3.0, "other": 0.0})]
    rows += [Row(60, 120, {"userid": "Y", "cpu_pct": 2.0, "other": 0.0})]
    graph = graph_of(_model(rows), "cpu_pct")
    assert "[red]X[/]" in plot_text(graph, 80, 16)
    assert "[red]X[/]" in plot_svg(graph, 80, 16).replace("&#160;", " ")


def test_a_subtotal_without_keys_is_named_by_its_kind() -> None:
    row = Row(0, 60, {"userid": None, "cpu_pct": 1.0}, kind=RowKind.TOTAL)
    assert entity_label(entity_columns(_model([row])), row) == "total"


def test_a_long_range_is_read_in_longer_intervals(sim_db: Path) -> None:
    reader = SqliteReader.open(sim_db)
    try:
        screen = catalog.get("ESACPUU")
        # 30 one-minute intervals: as recorded when they fit, else 2 and 5 minutes
        assert graph_length(reader, screen, None, None, None, None, 40) is None
        assert graph_length(reader, screen, None, None, None, None, 15) == GRAPH_LENGTHS[1]
        assert graph_length(reader, screen, None, None, None, None, 6) == GRAPH_LENGTHS[2]
        graph, model = load_graph(reader, "ESACPUU", catalog.Query(), "total", max_points=6)
    finally:
        reader.close()
    assert graph.interval_len_s == 300
    assert graph.points <= 6
    assert model.interval_len_s == 300


def test_a_measurement_kept_on_every_page_is_drawn_not_an_entity(sim_db: Path) -> None:
    """ESACRYPA's Util% is a key column (on every horizontal page) but a value: each card
    is one line over the intervals, and Util% can be drawn."""
    reader = SqliteReader.open(sim_db)
    try:
        model = catalog.build_model(reader, "ESACRYPA", catalog.Query(limit=5))
    finally:
        reader.close()
    assert [c.id for c in entity_columns(model)] == ["ap", "type"]
    graph = graph_of(model, "util_pct")
    cards = {str(r.values["ap"]) for r in model.rows}
    assert len(graph.primary.series) == min(len(cards), MAX_LINES)
    assert all(sum(v is not None for v in s.values) == 5 for s in graph.primary.series)
