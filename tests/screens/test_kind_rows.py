"""Rows made of every entity's row of a kind (``screens/kind_rows.py``): ESACRYPE's function
rows and total read for the distribution view from the cards' D5R10 blocks alone, and
ESAPAGE's from the processors' D3R2 rows, equal (==, None included) the screen built as
recorded, on recordings that take each way of their builds."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from esatui.collectors.model import Reading, Sample
from esatui.collectors.monitor.kinds import CRYPTO_AP, PAGING
from esatui.db.sqlite_reader import SqliteReader
from esatui.screens import catalog, distribution
from esatui.screens.crypto_costs import default_table
from esatui.screens.distribution import entity_values, recorded_values
from esatui.screens.kind_rows import kind_row_values
from esatui.screens.model import RowKind, ScreenModel
from esatui.screens.rowkey import EntityKey, entity_key, key_columns
from tests.fixtures.recording import uneven_minutes
from tests.screens.test_row_columns import monitor_recording

SCREEN = catalog.get("ESACRYPE")
COLUMNS = ("ops_s", "ms_op", "sw_ms_op", "sw_cpu_pct", "sw_cpus")
FUNCTIONS = ("rsa1024_me", "rsa2048_crt", "rsa4096_crt", "ep11_asym_fast")
FUNCTION_ROWS = {("RSA 1024 ME",), ("RSA 2048 CRT",), ("RSA 4096 CRT",), ("EP11 asymmetric Fast",)}
TOTAL: EntityKey = ("Total", RowKind.TOTAL.value)
APS = ("00", "00.0001", "01.0003", "01.0005", "02", "03", "01")
SCALE = "9.999999974752427e-07"  # what the simulated CEX cards carry (a float's text)


def _blocks(i: int) -> dict[str, tuple[dict[str, str], dict[str, int | None]]]:
    """Each AP block's attributes and counters (cumulative) at reading ``i``."""
    blocks: dict[str, tuple[dict[str, str], dict[str, int | None]]] = {}
    aps = ["00", "00.0001", "01.0003", "01.0005"]  # 01: its APQNs alone, until reading 6
    if i >= 4:
        aps.append("02")  # a card new in the fourth interval
    if 5 <= i <= 8:
        aps.append("03")  # a card whose scale is unusable: its functions' times not known
    if i >= 6:  # card 01's own block from then on (its APQNs' no longer count), recorded
        aps.append("01")  # after the others: in entity-id order, not key order
    for ap in aps:
        n = APS.index(ap)  # each block's own counts, wherever it is listed
        scale = SCALE
        if ap == "03":
            scale = "junk"
        if ap == "00" and i >= 7:
            scale = "2e-06"  # a new attribute: another entity of the same key
        if ap == "01":
            scale = "1.1e-06"  # added in key order, not the slot's, one sum has other bits
        values: dict[str, int | None] = {}
        for f, fn in enumerate(FUNCTIONS):
            # no work in every third interval for one function: its counters stand still
            busy = [k for k in range(1, i + 1) if fn != "rsa4096_crt" or k % 3]
            count = sum(11 * n + 3 * f + 1 + (k * (n + f)) % 7 for k in busy)
            values[f"{fn}_count"] = count
            values[f"{fn}_time"] = count * (1_900 + 37 * n + 101 * f) + len(busy)
        if ap == "00":
            values["ep11_asym_fast_count"] = values["ep11_asym_fast_time"] = None  # not in it
        if ap == "01.0005" and i % 4 == 2:
            values["rsa1024_me_time"] = None  # a count without its time
        attrs = {"layout": "D5R10/40", "mode": "accel", "type": "10", "scale": scale}
        blocks[ap] = (attrs, values)
    if i % 5 == 3:  # no card reports the EP11 function: no row of it
        for _attrs, values in blocks.values():
            values["ep11_asym_fast_count"] = values["ep11_asym_fast_time"] = None
    return blocks


def crypto_ap_samples(minutes: int = 12) -> list[Sample]:
    """D5R10 readings of cards and APQNs over uneven intervals (the rates are over each
    interval's own length)."""
    samples = []
    for i, t in enumerate(uneven_minutes(minutes + 1)):
        readings = tuple(
            Reading("crypto_ap", ap, values, attrs) for ap, (attrs, values) in _blocks(i).items()
        )
        samples.append(Sample("monitor", t, readings))
    return samples


@pytest.fixture(scope="module")
def ap_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return monitor_recording(tmp_path_factory, CRYPTO_AP, crypto_ap_samples())


def _rows(model: ScreenModel) -> set[EntityKey]:
    """The functions' rows and the total's."""
    keys = key_columns(model.columns)
    return {entity_key(keys, r) for r in model.rows}


def _halves(
    reader: SqliteReader, query: catalog.Query, name: str = "ESACRYPE"
) -> list[tuple[catalog.Query, ScreenModel]]:
    whole = catalog.build_model(reader, name, query)
    middle = (whole.from_us or 0) + ((whole.to_us or 0) - (whole.from_us or 0)) // 2
    queries = [query, replace(query, after_us=middle), replace(query, until_us=middle)]
    return [(q, catalog.build_model(reader, name, q)) for q in queries]


@pytest.mark.parametrize("table", ["default", "custom"])
def test_each_function_row_is_the_screen_as_recorded(ap_db: Path, table: str) -> None:
    """Every function's five columns of the cards' blocks and the total's, over the whole
    recording and each half, with the built-in cost table and another: the build's values."""
    costs = default_table()
    if table == "custom":  # another price per function, and one function not priced
        priced = {fn: 0.3 + 1.7 * k for k, fn in enumerate(FUNCTIONS) if fn != "rsa2048_crt"}
        costs = replace(costs, name="custom", ms_per_op=priced, builtin=False)
    with SqliteReader.open(ap_db) as reader:
        node = reader.node(None)
        assert node is not None
        known: set[str] = set()  # the columns compared on values, not only Nones
        for query, model in _halves(reader, catalog.Query(crypto_costs=costs)):
            rows = _rows(model)
            assert rows == {TOTAL, *FUNCTION_ROWS}
            for entity in sorted(rows):
                for column in COLUMNS:
                    fast = kind_row_values(
                        reader, SCREEN, node, column, entity, query.after_us, query.until_us, query
                    )
                    assert fast is not None, (column, entity)
                    assert fast == entity_values(model, column, entity), (column, entity)
                    if any(v is not None for _, v in fast):
                        known.add(column)
        assert known == set(COLUMNS)


def test_the_recording_takes_each_way_of_the_build(ap_db: Path) -> None:
    """The cases above are there: a function missing from some intervals, a time not known
    (a card's scale unusable, a count without its time), a priced function without work."""
    with SqliteReader.open(ap_db) as reader:
        model = catalog.build_model(reader, "ESACRYPE", catalog.Query())
    ep11 = entity_values(model, "ops_s", ("EP11 asymmetric Fast",))
    assert 0 < len(ep11) < len(entity_values(model, "ops_s", ("RSA 1024 ME",)))
    assert None in {v for _, v in entity_values(model, "ms_op", ("RSA 1024 ME",))}
    assert 0.0 in {v for _, v in entity_values(model, "ops_s", ("RSA 4096 CRT",))}


def test_the_saving_is_built(ap_db: Path) -> None:
    """The saving is over the LPAR's processors too: the reader path declines it, and the
    distribution view builds the screen for it."""
    query = catalog.Query()
    with SqliteReader.open(ap_db) as reader:
        node = reader.node(None)
        assert node is not None
        model = catalog.build_model(reader, "ESACRYPE", query)
        for entity in (TOTAL, ("RSA 1024 ME",)):
            assert (
                kind_row_values(reader, SCREEN, node, "saved_pct", entity, None, None, query)
                is None
            )
            assert recorded_values(reader, model, query, "saved_pct", entity) == entity_values(
                model, "saved_pct", entity
            )


def test_the_distribution_view_reads_the_cards_blocks(
    ap_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``d`` on a function's column takes this path, not a build of the screen."""
    query = catalog.Query()
    with SqliteReader.open(ap_db) as reader:
        model = catalog.build_model(reader, "ESACRYPE", query)
        want = entity_values(model, "sw_cpu_pct", ("RSA 2048 CRT",))

        def no_build(*args: object) -> None:
            raise AssertionError("built as recorded")

        monkeypatch.setattr(distribution, "_chunked_values", no_build)
        monkeypatch.setattr(distribution, "recorded_model", no_build)
        assert recorded_values(reader, model, query, "sw_cpu_pct", ("RSA 2048 CRT",)) == want


def paging_samples(minutes: int = 12) -> list[Sample]:
    """D3R2's encrypted paging of three processors over uneven intervals: one missing a
    minute (the sum is of the others), one without its decryption time in another (that
    sum is missing), and a minute without any decryption."""
    totals = {
        cpu: dict.fromkeys(("enc_pages", "dec_pages", "enc_us", "dec_us"), 0) for cpu in range(3)
    }
    samples = []
    for i, t in enumerate(uneven_minutes(minutes + 1)):
        readings = []
        for cpu in (2, 0, 1):
            if cpu == 1 and i == 3:
                continue
            for n, name in enumerate(totals[cpu]):
                step = (31 * i + 7 * n + 3 * cpu) * (97 if name.endswith("_us") else 1)
                totals[cpu][name] += 0 if i == 0 or (i == 8 and name.startswith("dec")) else step
            values: dict[str, int | None] = dict(totals[cpu])
            if cpu == 2 and i in (5, 6):
                values["dec_us"] = None
            readings.append(Reading("paging_enc", str(cpu), values))
        samples.append(Sample("monitor", t, tuple(readings)))
    return samples


@pytest.fixture(scope="module")
def paging_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return monitor_recording(tmp_path_factory, PAGING, paging_samples())


def test_esapage_is_the_screen_as_recorded(paging_db: Path) -> None:
    """Each of ESAPAGE's columns of the processors' D3R2 rows, over the whole recording and
    each half: the build's values."""
    screen = catalog.get("ESAPAGE")
    columns = [c.id for c in screen.columns if c.id != "time"]
    with SqliteReader.open(paging_db) as reader:
        node = reader.node(None)
        assert node is not None
        unknown: set[str] = set()  # the columns that are None somewhere, as the build says
        for query, model in _halves(reader, catalog.Query(), "ESAPAGE"):
            assert model.rows
            for column in columns:
                fast = kind_row_values(
                    reader, screen, node, column, (), query.after_us, query.until_us, query
                )
                assert fast is not None, column
                assert fast == entity_values(model, column, ()), column
                assert any(v is not None for _, v in fast), column
                unknown |= {column for _, v in fast if v is None}
        assert {"dec_us_page", "dec_cpu_pct", "cpu_pct"} <= unknown
