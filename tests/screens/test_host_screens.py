"""ESASSUM, ESALNXC and ESAOVHD on a deterministic recording."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from esatui.db.sqlite_reader import SqliteReader
from esatui.formats import render
from esatui.screens import catalog, esalnxc
from esatui.screens.model import Level, RowKind
from tests.fixtures.recording import START_US, cpu_ticks, host_recording
from tests.screens.golden import check

MINUTE = 60_000_000


@pytest.fixture
def store(db_path: Path) -> Iterator[SqliteReader]:
    host_recording(db_path, n_intervals=5)
    with SqliteReader.open(db_path) as reader:
        yield reader


def test_esalnxc_percentages_are_exact_and_add_up(store: SqliteReader) -> None:
    model = catalog.build_model(store, "ESALNXC", catalog.Query())
    data = [r for r in model.rows if r.kind is RowKind.DATA]
    assert len(data) == 5 * 4
    for row in data:
        v = row.values
        interval = (row.end_us - START_US) // MINUTE
        ticks = cpu_ticks(interval, int(str(v["id"])), 60)
        whole = sum(ticks.values())
        assert v["user"] == pytest.approx(ticks["user"] * 100 / whole)
        assert v["steal"] == pytest.approx(ticks["steal"] * 100 / whole)
        busy = [v[c] for c in ("user", "nice", "syst", "irq", "sirq")]
        assert v["total"] == pytest.approx(sum(float(b) for b in busy if b is not None))
        parts = [v[c] for c in ("total", "iowait", "idle", "steal")]
        assert sum(float(p) for p in parts if p is not None) == pytest.approx(100.0)
    totals = [r for r in model.rows if r.kind is RowKind.TOTAL]
    assert len(totals) == 5
    first = [r for r in data if r.end_us == totals[0].end_us]
    assert totals[0].values["total"] == pytest.approx(
        sum(float(r.values["total"] or 0) for r in first)
    )
    assert model.machine == "8561" and model.system == "L32 z/VM 7.2.0" and model.node == "LNXT01"


def test_steal_is_highlighted_above_the_thresholds(store: SqliteReader) -> None:
    model = catalog.build_model(store, "ESALNXC", catalog.Query())
    for row in model.rows:
        steal = row.values["steal"]
        if row.kind is RowKind.DATA and isinstance(steal, float):
            expected = Level.CRIT if steal >= 25 else Level.WARN if steal >= 10 else Level.NONE
            assert row.levels["steal"] == expected


def test_esassum_counts_types_and_drills(store: SqliteReader) -> None:
    model = catalog.build_model(store, "ESASSUM", catalog.Query())
    ids = [c.id for c in model.columns]
    assert ids[:3] == ["time", "cpus_ifl", "busy_ifl"]
    row = model.rows[0]
    assert row.values["cpus_ifl"] == 4
    assert row.values.get("crypto_ops_s") is None  # no monitor recorded: shown as "."
    assert model.column("zcrypt_req_s").drill == "ESACRYQ"
    assert row.drill is not None and row.drill.screen == "ESALNXC"
    assert "CPU types from CP QUERY VIRTUAL CPUS (vmcp)." in model.notes


def test_esaovhd(store: SqliteReader) -> None:
    model = catalog.build_model(store, "ESAOVHD", catalog.Query())
    assert [c.id for c in model.columns][-1] == "host_ms"
    row = model.rows[0]
    assert row.values["cpu_ms"] == pytest.approx((5 * 1234 + 200 - 4 * 1234 - 100) / 1000)
    assert row.values["samples"] == 31
    assert row.values["host_ms"] == pytest.approx(0.6)


@pytest.mark.parametrize("screen", ["ESASSUM", "ESALNXC", "ESAOVHD"])
@pytest.mark.parametrize("fmt", ["text", "csv", "json", "jsonl"])
def test_golden_exports(store: SqliteReader, screen: str, fmt: str) -> None:
    model = catalog.build_model(store, screen, catalog.Query())
    check(f"{screen}.{fmt}", render(model, fmt))  # type: ignore[arg-type]


def test_every_format_carries_the_same_numbers(store: SqliteReader) -> None:
    model = catalog.build_model(store, "ESALNXC", catalog.Query())
    doc = json.loads(render(model, "json"))
    lines = render(model, "jsonl").splitlines()
    assert [json.loads(line) for line in lines] == doc["rows"]
    csv_rows = render(model, "csv").splitlines()[1:]
    text = render(model, "text")
    for record, csv_line in zip(doc["rows"], csv_rows, strict=True):
        assert csv_line.split(",")[3] == f"{record['total']:.1f}"
        assert f"{record['total']:.1f}" in text


def test_an_interval_length_aggregates(store: SqliteReader) -> None:
    query = catalog.Query(interval_len_us=5 * MINUTE)
    model = catalog.build_model(store, "ESALNXC", query)
    assert {r.end_us for r in model.rows} == {START_US + 5 * MINUTE}
    assert model.interval_len_s == 300


def test_drilled_entity(store: SqliteReader) -> None:
    model = catalog.build_model(store, "ESALNXC", catalog.Query(entity="2"))
    assert {r.values["id"] for r in model.rows} == {2}


def test_a_screen_without_its_source_says_so(db_path: Path) -> None:
    host_recording(db_path, n_intervals=2)
    with SqliteReader.open(db_path) as reader:
        model = catalog.build_model(reader, "ESALNXC", catalog.Query(until_us=START_US - 1))
        assert not model.rows
        # what the database holds, and what was asked for
        assert (
            model.notes[0] == "ESALNXC: recorded 11/21 14:00-14:02; nothing up to 11/21 13:59:59."
        )


@given(
    st.dictionaries(
        st.sampled_from(list(esalnxc.PARTS.values())),
        st.one_of(st.none(), st.integers(0, 2**40), st.floats(0, 1e12)),
    )
)
def test_esassum_steal_is_esalnxc_steal(values: dict[str, int | float | None]) -> None:
    """ESASSUM's per-CPU steal (``cpu_steal_pct``) is ESALNXC's steal column, bit for bit."""
    want = esalnxc.cpu_percentages(values)["steal"]
    got = esalnxc.cpu_steal_pct(values)
    assert (got is None and want is None) or (
        got is not None and want is not None and got.hex() == want.hex()
    )


@given(
    st.dictionaries(
        st.sampled_from(list(esalnxc.PARTS.values())),
        st.one_of(st.none(), st.integers(0, 2**40), st.floats(0, 1e12)),
    )
)
def test_busy_is_the_busy_parts_added_in_order(values: dict[str, int | float | None]) -> None:
    """ESALNXC's ``total`` and ESASSUM's per-CPU busy (``cpu_busy_pct``) are the shares of
    user, nice, system, irq and softirq added left to right, as ``sum`` adds them, bit for
    bit (the reference spelt out here)."""
    parts = [values.get(field) for field in esalnxc.PARTS.values()]
    whole = sum(p for p in parts if p)
    busy = [values.get(esalnxc.PARTS[name]) for name in ("user", "nice", "syst", "irq", "sirq")]
    want = None
    if whole > 0:
        want = float(sum(v * (100.0 / whole) if v is not None else 0.0 for v in busy))
    for got in (esalnxc.cpu_percentages(values)["total"], esalnxc.cpu_busy_pct(values)):
        assert (got is None and want is None) or (
            got is not None and want is not None and got.hex() == want.hex()
        )
