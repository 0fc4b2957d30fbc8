"""The long tail (issue 17): ``export --stats`` and the distribution view are exact against
an independent computation over the raw rows, and show what an hourly mean hides."""

from __future__ import annotations

import itertools
import json
import math
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esatui.cli import main
from esatui.collectors.host import CPU
from esatui.collectors.kinds import LCPU
from esatui.db.sqlite_reader import SqliteReader
from esatui.db.store import Store
from esatui.screens import catalog
from esatui.screens.distribution import (
    Stats,
    distribution,
    entity_values,
    histogram,
    percentile,
    recorded_model,
    recorded_stats,
    recorded_values,
    render_lines,
    with_stats,
)
from esatui.screens.rowkey import entity_key, key_columns
from tests.fixtures.hypervisor import hypervisor_samples
from tests.fixtures.reading import sql
from tests.fixtures.recording import START_US, host_samples, write

PARTS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
Ticks = dict[str, int]


def record(path: Path, intervals: Sequence[Sequence[Ticks]], start_us: int, step_s: int) -> None:
    """Host samples whose per-interval ticks per CPU are ``intervals[i][cpu]``, written
    through the real interval builder and store."""
    cpus = range(len(intervals[0]))
    samples = host_samples(
        len(intervals), cpus, step_s, start_us, ticks=lambda i, c, _s: intervals[i - 1][c]
    )
    with Store.open(path) as store:
        write(store, "host", (CPU,), samples)


def raw_steal(path: Path) -> dict[tuple[str, int], float]:
    """Each recorded interval's steal as a percent of the CPU's ticks, by (CPU, interval
    end), straight from the database file."""
    rows = sql(
        path,
        "SELECT e.key, i.end_us, k.user_us, k.nice_us, k.system_us, k.idle_us, k.iowait_us,"
        " k.irq_us, k.softirq_us, k.steal_us FROM k_cpu k JOIN interval i ON i.id ="
        " k.interval_id JOIN entity e ON e.id = k.entity_id",
    )
    return {(key, end): steal * 100 / (sum(parts) + steal) for key, end, *parts, steal in rows}


def nearest_rank(values: list[float], p: int) -> float:
    """The test's own nearest rank: integer arithmetic, no floats in the rank."""
    ordered = sorted(values)
    return ordered[(p * len(ordered) + 99) // 100 - 1]


def expected(
    steal: dict[tuple[str, int], float], length_us: int
) -> dict[tuple[str, int], dict[str, float]]:
    """Per (CPU, bucket end) the statistics of the interval values ending in it (UTC)."""
    by_bucket: dict[tuple[str, int], list[float]] = {}
    for (cpu, end), value in steal.items():
        bucket = -(-end // length_us) * length_us
        by_bucket.setdefault((cpu, bucket), []).append(value)
    return {
        key: {
            "mean": sum(v) / len(v),
            "p50": nearest_rank(v, 50),
            "p95": nearest_rank(v, 95),
            "p99": nearest_rank(v, 99),
            "max": max(v),
            "n": len(v),
        }
        for key, v in by_bucket.items()
    }


part = st.integers(min_value=0, max_value=3000)
cpu_ticks = st.fixed_dictionaries(dict.fromkeys(PARTS, part)).map(
    lambda t: {**t, "idle": t["idle"] + 1}
)


@settings(max_examples=30)
@given(
    intervals=st.lists(st.lists(cpu_ticks, min_size=2, max_size=2), min_size=1, max_size=40),
    offset_s=st.sampled_from([0, 17, 3599]),
    length_s=st.sampled_from([300, 900, 3600]),
)
def test_stats_and_distribution_are_exact_against_the_raw_rows(
    intervals: list[list[Ticks]], offset_s: int, length_s: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "h.sqlite"
        record(db, intervals, START_US + offset_s * 1_000_000, 60)
        want = expected(raw_steal(db), length_s * 1_000_000)
        argv = ["export", "ESALNXC", "--db", str(db), "--interval-len", str(length_s)]
        out = _run([*argv, "--stats", "mean,p50,p95,p99,max", "--format", "json"])
        rows = [r for r in json.loads(out)["rows"] if r["row"] == "data"]
        assert {(r["id"], _us(r["time"])) for r in rows} == {(int(cpu), end) for cpu, end in want}
        for r in rows:
            stats = want[(str(r["id"]), _us(r["time"]))]
            for name in ("mean", "p50", "p95", "p99", "max"):
                assert r[f"steal_{name}"] == pytest.approx(stats[name], rel=1e-12, abs=1e-12)

        # the distribution view's model: the same numbers, and every value in its histogram
        # (the view reads CPU 0's own rows: the same values as the screen built as recorded)
        cpu0 = ("IFL", "0")
        with SqliteReader.open(db) as reader:
            query = catalog.Query(interval_len_us=length_s * 1_000_000)
            bucketed = catalog.build_model(reader, "ESALNXC", query)
            recorded = recorded_model(reader, "ESALNXC", query, bucketed)
            values = recorded_values(reader, bucketed, query, "steal", cpu0)
        assert values == entity_values(recorded, "steal", cpu0)
        dist = distribution(bucketed, values, length_s * 1_000_000, "steal", cpu0)
        for b in dist.buckets:
            stats = want[("0", b.end_us)]
            assert b.stats is not None and b.stats.n == stats["n"]
            for name in ("mean", "p50", "p95", "p99", "max"):
                assert b.stats.get(name) == pytest.approx(stats[name], rel=1e-12, abs=1e-12)
        assert sum(x.count for x in dist.histogram.bins) + dist.histogram.below == len(intervals)


def _run(argv: list[str]) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


def _us(iso_time: str) -> int:
    from datetime import datetime

    return round(datetime.fromisoformat(iso_time).timestamp() * 1_000_000)


def test_an_hourly_mean_hides_the_tail_that_p99_and_max_show(tmp_path: Path) -> None:
    """Seed 000's point: an hour of 1-minute intervals, one of which stole 90% of the CPU.
    The hour's mean (2.5%) is under the steal threshold; p99 and max show the 90%."""
    quiet = {"user": 3000, "nice": 0, "system": 0, "idle": 2940, "iowait": 0, "irq": 0}
    calm = {**quiet, "softirq": 0, "steal": 60}  # 1% steal
    storm = {**quiet, "user": 300, "idle": 300, "softirq": 0, "steal": 5400}  # 90%
    intervals = [[storm if i == 41 else calm] for i in range(60)]
    db = tmp_path / "tail.sqlite"
    record(db, intervals, START_US, 60)
    argv = ["export", "ESALNXC", "--db", str(db), "--interval-len", "1h", "--format", "json"]
    (row, _all) = json.loads(_run([*argv, "--stats", "mean,p95,p99,max"]))["rows"]
    assert row["steal"] == pytest.approx((59 * 1 + 90) / 60)  # the hour as one interval
    assert row["steal_mark"] is None  # the mean: nothing to see
    assert row["steal_p95"] == pytest.approx(1.0)
    assert row["steal_p99"] == pytest.approx(90.0)
    assert row["steal_max"] == pytest.approx(90.0)
    text = _run([*argv[:-2], "--stats", "p99,max", "--format", "text"])
    assert "of the recorded interval values" in text and "not of single operations" in text

    with SqliteReader.open(db) as reader:
        query = catalog.Query(interval_len_us=3_600_000_000)
        bucketed = catalog.build_model(reader, "ESALNXC", query)
        recorded = recorded_model(reader, "ESALNXC", query, bucketed)
    cpu0 = ("IFL", "0")
    dist = distribution(
        bucketed, entity_values(recorded, "steal", cpu0), 3_600_000_000, "steal", cpu0, 60_000_000
    )
    lines = render_lines(dist)
    assert lines[0].startswith("Distribution: ESALNXC steal [%] (Steal)  IFL 0")
    assert lines[1] == (
        "Each 1h interval: the 1m intervals recorded inside it; statistics of interval values, "
        "not of single operations"
    )
    share = replace(dist, column=catalog.get("ESACRYQ").columns[-1])
    assert render_lines(share)[0].startswith("Distribution: ESALNXC share_pct [%] (Share %)  IFL 0")
    (bucket,) = [ln for ln in lines if ln.startswith("15:00:00")]
    assert bucket.split()[1:] == ["2.5", "60", "2.5", "1.0", "1.0", "90.0", "90.0"]
    assert not dist.histogram.log  # 1 to 90: under two decades


def test_nearest_rank_percentiles_and_log_histogram() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.0
    assert percentile([5.0], 99) == 5.0
    values = [10.0] * 95 + [1000.0] * 5
    stats = Stats.of(values)
    assert stats is not None and (stats.p95, stats.p99, stats.max) == (10.0, 1000.0, 1000.0)
    h = histogram([0.0, 100.0, 150.0, 120.0, 90_000.0])
    assert h.log and h.below == 1
    assert sum(b.count for b in h.bins) == 4
    assert h.bins[0].low <= 100.0 and h.bins[-1].high >= 90_000.0
    edges = [b.low for b in h.bins]
    assert all(
        math.isclose(b, a * r) for a, b, r in zip(edges, edges[1:], [2, 2.5, 2] * 9, strict=False)
    )
    linear = histogram([1.0, 2.0, 3.0])
    assert not linear.log and sum(b.count for b in linear.bins) == 3


@pytest.mark.parametrize(
    ("screen", "column", "hf_max"),
    [("ESACRYQ", "pending_avg", "pending_max")],
)
def test_the_high_frequency_maximum_stands_beside_its_gauge(
    screen: str, column: str, hf_max: str
) -> None:
    from esatui.screens.distribution import hf_max_column
    from esatui.screens.model import ScreenModel

    definition = catalog.get(screen)
    model = ScreenModel(definition.name, definition.title, definition.columns, ())
    found = hf_max_column(model, model.column(column))
    assert found is not None and found.id == hf_max
    assert hf_max_column(model, model.column(hf_max)) is None


def test_esacrypa_stats_and_distribution_follow_each_card(tmp_path: Path) -> None:
    """ESACRYPA's Util% sits among its keys and changes every interval: a card is still
    its AP and type, so each 15-minute row gets the statistics of its own six intervals
    (Util% too), and the distribution view of Util% finds them."""
    from tests.screens import crypto_data as D

    db = tmp_path / "g.sqlite"
    mon = D.growing_esacrypa_file(tmp_path / "g.mon")
    _run(["collect", "--source", f"monwrite:{mon}", "--db", str(db)])
    base = ["export", "ESACRYPA", "--db", str(db), "--format", "json"]
    recorded: dict[str, list[dict[str, float]]] = {}
    for row in json.loads(_run(base))["rows"]:
        recorded.setdefault(row["ap"], []).append(row)
    bucketed = json.loads(_run([*base, "--interval-len", "15m", "--stats", "mean,max"]))["rows"]
    assert {r["ap"] for r in bucketed} == set(recorded) == {"00", "01", "02", "03"}
    for row in bucketed:
        own = recorded[row["ap"]]
        assert len(own) == 6
        for column in ("util_pct", "rsa2048_crt_ops_s"):
            values = [r[column] for r in own]
            assert row[f"{column}_mean"] == pytest.approx(sum(values) / 6), column
            assert row[f"{column}_max"] == pytest.approx(max(values)), column

    with SqliteReader.open(db) as reader:
        query = catalog.Query(interval_len_us=15 * 60_000_000)
        model = catalog.build_model(reader, "ESACRYPA", query)
        as_recorded = recorded_model(reader, "ESACRYPA", query, model)
    card = ("00", "10")
    dist = distribution(
        model, entity_values(as_recorded, "util_pct", card), 15 * 60_000_000, "util_pct", card
    )
    (bucket,) = dist.buckets
    assert bucket.stats is not None and bucket.stats.n == 6
    assert bucket.stats.max == pytest.approx(max(r["util_pct"] for r in recorded["00"]))


@pytest.mark.parametrize(
    ("value", "number"),
    [
        (2, 2.0),
        (2.5, 2.5),
        (True, None),
        ("2", None),
        (None, None),
        (math.inf, None),
        (-math.inf, None),
        (math.nan, None),
    ],
)
def test_one_rule_for_a_finite_number(value: object, number: float | None) -> None:
    """What a statistic takes and a graph draws: a finite int or float, never a bool."""
    from esatui.screens.model import finite_number

    assert finite_number(value) == number


@pytest.mark.parametrize(("length_s", "chunk"), [(300, 1), (300, 7), (3600, 4), (900, 240)])
def test_stats_read_a_chunk_at_a_time_are_those_of_the_whole(
    tmp_path: Path, length_s: int, chunk: int
) -> None:
    """``export --stats`` of a screen that streams reads the recorded intervals a chunk at a
    time (memory holds a chunk): the same columns and values, to the bit, as from the
    screen built as recorded over the whole range at once. Chunks of one interval, of seven
    (a bucket's intervals in two chunks), of four hours, one chunk; ESALNXC's CPU and
    ``all``, ESACPUU's processors and subtotals, ESASSUM's row (whose chunks without the
    monitor's six minutes see another view of the CPUs: read whole; with the host alone,
    read a chunk at a time); buckets not aligned to the first interval, and a range cut
    inside a bucket."""
    db = tmp_path / "chunks.sqlite"
    uneven = [
        [{**dict.fromkeys(PARTS, 0), "user": 7 * i + 3, "idle": 600 - 7 * i, "steal": i % 5}]
        for i in range(1, 97)
    ]
    record(db, uneven, START_US + 37_000_000, 60)
    host_only = tmp_path / "host.sqlite"
    record(host_only, uneven, START_US + 37_000_000, 60)
    cpus, _guests = hypervisor_samples()
    with Store.open(db) as store:
        write(store, "monitor", (LCPU,), cpus)
    stats = ("mean", "p50", "p95", "p99", "max")
    length_us = length_s * 1_000_000
    for path, until in itertools.product((db, host_only), (None, START_US + 61 * 60_000_000)):
        with SqliteReader.open(path) as reader:
            for screen in ("ESALNXC", "ESACPUU", "ESASSUM"):
                query = catalog.Query(interval_len_us=length_us, until_us=until)
                bucketed = catalog.build_model(reader, screen, query)
                if screen == "ESACPUU" and path == host_only:
                    assert not bucketed.rows  # no hypervisor's processors
                    continue
                recorded = recorded_model(reader, screen, query, bucketed)
                whole = with_stats(bucketed, recorded, length_us, stats)
                read = recorded_stats(reader, bucketed, query, stats, chunk=chunk)
                assert read == whole, (screen, until)
                p99 = [v for r in read.rows for k, v in r.values.items() if k.endswith("_p99")]
                assert any(v is not None for v in p99)


@pytest.mark.parametrize("length_s", [300, 900])
def test_stats_of_every_screen_that_streams_on_a_simulated_system(
    tmp_path: Path, length_s: int
) -> None:
    """``export --stats`` a chunk at a time on a system with every source: each screen
    that streams gives the statistics of the screen built as recorded at once, to the bit
    (seed 002's z/VM 7.2 has every screen's records, ESAPAGE's D3R2 among them)."""
    from tests.graphs.conftest import simulate

    db = simulate(tmp_path / "sim.sqlite", "1h", "seed002-t3-polling")
    stats = ("mean", "p50", "p99", "max")
    length_us = length_s * 1_000_000
    with SqliteReader.open(db) as reader:
        for name, screen in catalog.screens().items():
            if not screen.streams:
                continue
            query = catalog.Query(interval_len_us=length_us)
            bucketed = catalog.build_model(reader, name, query)
            assert bucketed.rows, name
            recorded = recorded_model(reader, name, query, bucketed)
            whole = with_stats(bucketed, recorded, length_us, stats)
            assert recorded_stats(reader, bucketed, query, stats, chunk=7) == whole, name


@pytest.mark.parametrize("name", ["ESALOCK", "ESACRYPE", "ESAPAGE", "ESACRYPA"])
def test_a_screen_that_streams_is_read_a_chunk_at_a_time_for_d(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``d`` on a column that no entity's rows or slot columns make reads the screen as
    recorded a chunk at a time where it streams (memory holds a chunk): every row's values
    are those of the whole range built as recorded, for chunks of 1, 7 and 240 intervals,
    and the whole range is never built."""
    from esatui.screens import distribution as D
    from tests.graphs.conftest import simulate

    db = simulate(tmp_path / "sim.sqlite", "1h", "seed002-t3-polling")
    query = catalog.Query(interval_len_us=900_000_000)
    with SqliteReader.open(db) as reader:
        bucketed = catalog.build_model(reader, name, query)
        recorded = D.recorded_model(reader, name, query, bucketed)
        keys = key_columns(bucketed.columns)
        column = next(c.id for c in bucketed.columns if c.decimals is not None)
        entities = {entity_key(keys, r) for r in bucketed.rows}
        assert entities
        want = {e: entity_values(recorded, column, e) for e in entities}
        assert any(v for v in want.values())
        screen = catalog.get(name)
        for e in entities:
            for chunk in (1, 7, 240):
                got = D._chunked_values(reader, screen, query, bucketed, column, e, chunk)
                assert got == want[e], (e, chunk)

        def whole_range(*args: object) -> None:
            raise AssertionError("built whole")

        monkeypatch.setattr(D, "recorded_model", whole_range)
        for e in entities:
            assert D.recorded_values(reader, bucketed, query, column, e) == want[e]
