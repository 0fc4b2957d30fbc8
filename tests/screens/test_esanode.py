"""ESANODE over a SQLite database holding two simulated z/VM systems merged with
``esatui db merge``: one row per node per interval, sorted worst first by the chosen
column, the worst highlighted, Enter into that node's ESASSUM; and the merge keeps every
node's screens as its own recording shows them."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from esatui.cli import main
from esatui.db.sqlite_reader import SqliteReader
from esatui.screens import catalog
from esatui.screens.model import Level, ScreenModel

START = "2026-11-20 10:00"
SCENARIOS = {"VMMODEVM": "mode-vm-day", "SIMVM": "seed002-t3-polling"}


def run(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return out.getvalue()


@pytest.fixture(scope="module")
def fleet_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    tmp = tmp_path_factory.mktemp("esanode")
    singles = {}
    for node, scenario in SCENARIOS.items():
        db = tmp / f"{scenario}.sqlite"
        run("sim", "--scenario", scenario, "--duration", "10m", "--start", START, "--db", str(db))
        singles[node] = db
    merged = tmp / "merged.sqlite"
    said = run("db", "merge", "--db", str(merged), *map(str, singles.values()))
    assert " intervals merged into " in said and "nodes: SIMVM, VMMODEVM" in said
    return merged, singles


def test_merge_keeps_every_node_s_screens(fleet_db: tuple[Path, dict[str, Path]]) -> None:
    merged, singles = fleet_db
    for node, single in singles.items():
        for screen in ("ESASSUM", "ESACPUU", "ESACRYPT", "ESAPOLL", "ESACRYQ", "ESAOVHD"):
            alone = run("export", screen, "--db", str(single))
            together = run("export", screen, "--db", str(merged), "--node", node)
            assert together == alone, (node, screen)


def test_merging_again_records_nothing_twice(fleet_db: tuple[Path, dict[str, Path]]) -> None:
    merged, singles = fleet_db
    said = run("db", "merge", "--db", str(merged), str(next(iter(singles.values()))))
    assert said.startswith("0 intervals merged")


def model(db: Path, *options: str) -> ScreenModel:
    with SqliteReader.open(db) as reader:
        query = catalog.Query(options=frozenset(options))
        return catalog.build_model(reader, "ESANODE", query)


def test_one_row_per_node_per_interval(fleet_db: tuple[Path, dict[str, Path]]) -> None:
    merged, _ = fleet_db
    shown = model(merged)
    ends = sorted({r.end_us for r in shown.rows})
    assert len(ends) == 10
    for end in ends:
        assert sorted(str(r.values["node"]) for r in shown.rows if r.end_us == end) == sorted(
            SCENARIOS
        )
    assert shown.node == "2 nodes"


def test_every_figure_is_the_node_s_own_esassum(fleet_db: tuple[Path, dict[str, Path]]) -> None:
    """Every column ESANODE shares with ESASSUM (encrypted paging's and spinning's CPU too)
    holds that node's ESASSUM value of the same interval."""
    merged, _ = fleet_db
    shown = model(merged)
    shared = {c.id for c in shown.columns} & {c.id for c in catalog.get("ESASSUM").columns}
    shared -= {"time"}
    assert {"spin_pct", "paging_enc_pct", "steal_pct", "crypto_ops_s"} <= shared
    with SqliteReader.open(merged) as reader:
        for node in SCENARIOS:
            own = catalog.build_model(reader, "ESASSUM", catalog.Query(node=node))
            by_end = {r.end_us: r.values for r in own.rows if r.first}
            for row in (r for r in shown.rows if r.values["node"] == node):
                for cid in shared:
                    assert row.values.get(cid) == by_end[row.end_us].get(cid), (node, cid)
    spinning = [r.values["spin_pct"] for r in shown.rows if r.values["node"] == "SIMVM"]
    assert all(isinstance(v, float) and v > 0 for v in spinning)


def test_sorted_worst_first_and_the_worst_highlighted(
    fleet_db: tuple[Path, dict[str, Path]],
) -> None:
    merged, _ = fleet_db
    for column in ("crypto_ops_s", "busy", "monitor_cpu_pct"):
        shown = model(merged, f"sort:{column}")
        for end in {r.end_us for r in shown.rows}:
            rows = [r for r in shown.rows if r.end_us == end]
            values = [r.values[column] for r in rows]
            assert values == sorted(values, key=lambda v: -float(v or 0)), column
            assert rows[0].first and not rows[1].first
            assert rows[0].levels.get(column) is Level.WARN
            assert rows[1].levels.get(column, Level.NONE) is Level.NONE


def test_enter_drills_into_that_node_s_esassum(fleet_db: tuple[Path, dict[str, Path]]) -> None:
    merged, _ = fleet_db
    row = model(merged).rows[1]
    assert row.drill is not None and row.drill.screen == "ESASSUM"
    assert row.drill.node == row.values["node"]


async def test_the_monitor_sorts_and_drills(fleet_db: tuple[Path, dict[str, Path]]) -> None:
    from esatui.tui.app import MonitorApp
    from esatui.tui.pilot import settle

    merged, _ = fleet_db
    app = MonitorApp(merged, live=False, screen="ESANODE")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert app.model is not None and app.model.name == "ESANODE"
        await pilot.press("s")
        await settle(pilot)
        assert "sort:busy" in app.state.options
        await pilot.press("down", "enter")
        await settle(pilot)
        assert app.model.name == "ESASSUM"
        assert app.model.node == app.state.node and app.state.node in SCENARIOS
        await pilot.press("escape")
        await settle(pilot)
        assert app.model.name == "ESANODE"


def test_a_range_with_nothing_says_what_the_nodes_hold(
    fleet_db: tuple[Path, dict[str, Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    """As the node screens do: every node's range together, and the range asked for."""
    merged, _ = fleet_db
    code = main(["export", "ESANODE", "--db", str(merged), "--from", "2030-01-01T00:00Z"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith(
        "esatui: error: ESANODE: recorded 11/20/2026 10:00-10:10; nothing after 01/01/2030"
    )
    with SqliteReader.open(merged) as reader:
        later = catalog.Query(after_us=1_900_000_000_000_000)
        empty = catalog.build_model(reader, "ESANODE", later)
        assert empty.notes[0].startswith(
            "ESANODE: recorded 11/20/2026 10:00-10:10; nothing after 03/17/2030"
        )
