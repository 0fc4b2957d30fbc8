"""Columns a slot makes from some of its kinds (issue 17's distribution over a month): read
from slots holding only those kinds, they are the screen's values as recorded to the last
bit; where the screen does not declare them, the distribution builds the screen."""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from esatui.cli import main
from esatui.collectors.kinds import LCPU
from esatui.collectors.model import Reading, Sample
from esatui.collectors.monitor.kinds import CRYPTO, PAGING, SPIN_CPU, SPIN_LOCK
from esatui.db.navigator import Navigator
from esatui.db.slots import KindSlice
from esatui.db.sqlite_reader import SqliteReader
from esatui.db.store import Store
from esatui.screens import catalog
from esatui.screens.distribution import entity_values
from esatui.screens.row_columns import IntervalValue
from esatui.screens.rowkey import entity_key, key_columns
from esatui.screens.slot_columns import slot_values
from tests.fixtures.hypervisor import hypervisor_samples
from tests.fixtures.recording import CONFIG, START_US, host_recording, write
from tests.graphs.conftest import simulate
from tests.screens import crypto_data as D
from tests.screens.test_row_columns import built_over_halves, odd_crypto, spinning_locks

DECLARING = [name for name, screen in catalog.screens().items() if screen.slot_columns]


# columns declared both ways: ESASSUM's steal (from the CPUs' rows where the reader can);
# ESALOCK's own, a lock's of its rows, the total's of its slot
BOTH = {
    "ESASSUM": {"steal_pct"},
    "ESALOCK": {"spins_s", "excl_s", "shared_s", "us_spin", "pct_cpu"},
}


def test_the_screens_that_declare_them() -> None:
    assert DECLARING == ["ESASSUM", "ESAPOLL", "ESALOCK"]
    for name in DECLARING:
        screen = catalog.get(name)
        assert screen.slot_columns is not None
        listed = {c.id for c in screen.columns}
        readable = {*screen.timeline, *screen.kinds}
        assert set(screen.slot_columns.row_kinds) <= readable
        for cid, column in screen.slot_columns.columns.items():
            assert cid in listed, cid
            assert set(column.kinds) <= readable, cid
        if screen.row_columns is not None:  # both: from the rows where the reader can
            both = set(screen.row_columns.columns) & set(screen.slot_columns.columns)
            assert both == BOTH.get(name, set()), name
    esassum = catalog.get("ESASSUM").slot_columns
    assert esassum is not None
    for cid in ("busy_ifl", "cpus_ziip", "busy_cpu"):  # made over the range
        ranged = esassum.of_range(cid)
        assert ranged is not None and set(ranged.kinds) == {"cpu", "vcpu", "lcpu"}, cid
    for cid in ("busy_<type>", "time", "steal_pct", "busy", "cpus_"):
        assert esassum.of_range(cid) is None, cid


@pytest.fixture(scope="module")
def sim_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every kind but encrypted paging: the host, vmcp, SMAPI, the monitor (D5R9, D0R2,
    spin locks), zcrypt and esatui's own rows."""
    return simulate(tmp_path_factory.mktemp("slot-columns") / "sim.sqlite")


def paging_samples(minutes: int = 6) -> list[Sample]:
    """D3R2's encrypted paging of two processors, uneven, one of them missing a minute."""
    totals = {cpu: {"enc_pages": 0, "dec_pages": 0, "enc_us": 0, "dec_us": 0} for cpu in (0, 1)}
    samples = []
    for i in range(minutes + 1):
        readings = []
        for cpu in (1, 0):
            if cpu == 1 and i == 3:
                continue
            for n, name in enumerate(totals[cpu]):
                totals[cpu][name] += i and (31 * i + 7 * n + 3 * cpu) * (100 if "us" in name else 1)
            readings.append(Reading("paging_enc", str(cpu), dict(totals[cpu])))
        samples.append(Sample("monitor", START_US + i * 60_000_000, tuple(readings)))
    return samples


@pytest.fixture(scope="module")
def offset_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A host recording with D5R9 on the monitor's own clock (20 s after the host's minute,
    two minutes lost) and encrypted paging on a clock 7 s before it: each kind placed into
    the host's slots by its own intervals."""
    db = tmp_path_factory.mktemp("slot-columns") / "offset.sqlite"
    host_recording(db, n_intervals=10)
    crypto = [
        replace(sample, time_us=sample.time_us + 20_000_000)
        for n, sample in enumerate(odd_crypto())
        if n not in (4, 5)
    ]
    paging = [replace(s, time_us=s.time_us - 7_000_000) for s in paging_samples(10)]
    with Store.open(db) as store:
        write(store, "monitor", (CRYPTO,), crypto, node=CONFIG["node"])
        write(store, "monitor", (PAGING,), paging, node=CONFIG["node"])
    return db


@pytest.fixture(scope="module")
def late_lcpu_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Ten minutes of a host whose LPAR's processors (CP, IFL) are recorded in the last
    five: ESASSUM's CPU types are the guest's over the first half, the hypervisor's over the
    second and over the whole (where its first minutes have none)."""
    db = tmp_path_factory.mktemp("slot-columns") / "late-lcpu.sqlite"
    host_recording(db, n_intervals=10)
    cpus, _ = hypervisor_samples()
    late = [replace(sample, time_us=sample.time_us + 5 * 60_000_000) for sample in cpus]
    with Store.open(db) as store:
        write(store, "monitor", (LCPU,), late, node=CONFIG["node"])
    return db


@pytest.fixture(scope="module")
def spin_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Beside a host recording, D0R23's locks for six minutes, D0R2's processors' spin all
    along, on uneven intervals (ESALOCK's total: the locks', then the processors'; ESASSUM's
    spin % placed into the host's slots)."""
    locks = spinning_locks()
    samples = []
    for i, sample in enumerate(locks):
        cpus = tuple(
            Reading("spin_cpu", str(cpu), {"spins": i * (9 + cpu), "spin_us": i * i * (401 + cpu)})
            for cpu in (0, 1, 2)
        )
        samples.append(replace(sample, readings=(*sample.readings[: 4 if i <= 6 else 0], *cpus)))
    db = tmp_path_factory.mktemp("slot-columns") / "spin.sqlite"
    host_recording(db, n_intervals=12)
    with Store.open(db) as store:
        write(store, "monitor", (SPIN_LOCK, SPIN_CPU), samples, node=CONFIG["node"])
    return db


@pytest.fixture(scope="module")
def poll_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seed 002's three runs with this Linux's AP bus on a clock 3 ms off, its poll setting
    changing every interval."""
    where = tmp_path_factory.mktemp("slot-columns")
    db = where / "poll.sqlite"
    monwrite = D.seed002_file(where / "f.mon")
    assert main(["collect", "--source", f"monwrite:{monwrite}", "--db", str(db)]) == 0
    D.add_guest_poll(db, D.SEED002_START_US, [250, "irq", 50])
    return db


@pytest.fixture(scope="module")
def paging_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:func:`paging_samples` beside a host recording (the slots: its CPUs' intervals)."""
    db = tmp_path_factory.mktemp("slot-columns") / "paging.sqlite"
    host_recording(db, n_intervals=6)
    with Store.open(db) as store:
        write(store, "monitor", (PAGING,), paging_samples())
    return db


def bits(values: list[IntervalValue]) -> list[tuple[int, object]]:
    """Values as compared: floats by their bits (-0.0 is not 0.0, a NaN equals itself)."""
    return [(end, struct.pack("<d", v) if isinstance(v, float) else v) for end, v in values]


SLOTTED = [
    ("ESASSUM", "sim_db", ()),
    ("ESAPOLL", "sim_db", ()),
    ("ESASSUM", "paging_db", ("paging_enc_pct",)),
    ("ESASSUM", "offset_db", ("crypto_ops_s", "crypto_ms_op", "paging_enc_pct", "steal_pct")),
    ("ESAPOLL", "poll_db", ("guest_poll", "cp_us_op", "guest_us_op", "total_busy_per_kvnq")),
    ("ESASSUM", "late_lcpu_db", ()),
    ("ESALOCK", "spin_db", ("pct_cpu", "us_spin")),
    ("ESASSUM", "spin_db", ("spin_pct",)),
]


@pytest.mark.parametrize(("name", "recording", "varied"), SLOTTED)
def test_each_declared_column_is_the_screen_as_recorded(
    request: pytest.FixtureRequest, name: str, recording: str, varied: tuple[str, ...]
) -> None:
    """Every declared column, over the whole recording and each half: equal (floats by
    bits, None included) to the screen built as recorded from slots of every kind, read
    a chunk of slots at a time as a month is, and two at a time (each chunk's edges: the
    intervals of a source on another clock placed as over the whole range); the columns
    ``varied`` take more than one value, so a row in the wrong slot shows."""
    screen = catalog.get(name)
    assert screen.slot_columns is not None
    with SqliteReader.open(request.getfixturevalue(recording)) as reader:
        node = reader.node(None)
        assert node is not None
        row = screen.slot_columns.row  # ESALOCK's total; the screen's one row a slot
        known = 0
        for after, until, model in built_over_halves(reader, name):
            keys = key_columns(model.columns)
            rows = [r for r in model.rows if entity_key(keys, r) == row]
            assert rows
            ranged = [c.id for c in model.columns if screen.slot_columns.of_range(c.id)]
            assert ranged or name != "ESASSUM"  # its CPU types
            for column in [*screen.slot_columns.columns, *ranged]:
                fast = slot_values(reader, screen, node, column, row, after, until)
                assert fast is not None, column
                assert bits(fast) == bits(entity_values(model, column, row)), column
                pairs = slot_values(reader, screen, node, column, row, after, until, chunk=2)
                assert pairs is not None and bits(pairs) == bits(fast), column
                known += sum(v is not None for _, v in fast)
                if after is None and until is None and column in varied:
                    assert len({v for _, v in fast if v is not None}) > 1, column
        assert known >= len(rows)  # values, not only Nones


class _Only(Mapping[str, Mapping[str, KindSlice]]):
    """A slot's data that lets a function read the kinds named, and fails on any other."""

    def __init__(self, data: Mapping[str, Mapping[str, KindSlice]], kinds: set[str]) -> None:
        self._data, self._kinds = data, kinds

    def __getitem__(self, kind: str) -> Mapping[str, KindSlice]:
        assert kind in self._kinds, f"reads {kind}, not declared"
        return self._data[kind]

    def get(self, kind: str, default: object = None) -> Any:
        assert kind in self._kinds, f"reads {kind}, not declared"
        return self._data.get(kind, default)

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("reads every kind")

    def __len__(self) -> int:
        raise AssertionError("reads every kind")


@pytest.mark.parametrize(
    "recording", ["sim_db", "paging_db", "offset_db", "poll_db", "late_lcpu_db", "spin_db"]
)
def test_each_column_reads_only_the_kinds_it_declares(
    request: pytest.FixtureRequest, recording: str
) -> None:
    """Slots of every kind, each column given only its own: a kind read but not declared
    fails even where another kind would have given the same value."""
    with SqliteReader.open(request.getfixturevalue(recording)) as reader:
        node = reader.node(None)
        assert node is not None
        for name in DECLARING:
            screen = catalog.get(name)
            made = screen.slot_columns
            assert made is not None
            window = Navigator(reader, catalog.screen_timeline(screen, node, None)).window(
                None, None, limit=None
            )
            if not window.spans:
                continue  # ESAPOLL beside no D5R9
            config = reader.config_at(node, window.spans[-1].end_us)
            slots = reader.slots(window, screen.kinds)
            for slot in slots:
                made.has_row(replace(slot, data=_Only(slot.data, set(made.row_kinds))))
                for column in made.columns.values():
                    column.value(replace(slot, data=_Only(slot.data, set(column.kinds))), config)
            built = catalog.build_model(reader, name, catalog.Query())
            for cid in (c.id for c in built.columns):
                ranged = made.of_range(cid)
                if ranged is not None:
                    only = [replace(s, data=_Only(s.data, set(ranged.kinds))) for s in slots]
                    assert len(ranged.values(only, config)) == len(slots)


def test_the_paging_recording_has_paging(paging_db: Path) -> None:
    with SqliteReader.open(paging_db) as reader:
        node = reader.node(None)
        assert node is not None
        screen = catalog.get("ESASSUM")
        found = slot_values(reader, screen, node, "paging_enc_pct", (), None, None)
        assert found is not None and sum(v is not None for _, v in found) >= 5


def test_the_cpu_types_view_is_the_whole_ranges(late_lcpu_db: Path) -> None:
    """Over the whole recording the LPAR's processors make ESASSUM's CPU types, and the
    minutes before them have none; over the first half this Linux's own CPUs do."""
    with SqliteReader.open(late_lcpu_db) as reader:
        node = reader.node(None)
        assert node is not None
        esassum = catalog.get("ESASSUM")
        whole = slot_values(reader, esassum, node, "busy_ifl", (), None, None)
        assert whole is not None and len(whole) == 10
        assert [v is None for _, v in whole] == [True] * 5 + [False] * 5
        middle = whole[4][0]
        first = slot_values(reader, esassum, node, "busy_ifl", (), None, middle)
        assert first is not None and len(first) == 5
        assert all(isinstance(v, float) for _, v in first)


def test_what_is_not_declared_builds_the_screen(sim_db: Path) -> None:
    with SqliteReader.open(sim_db) as reader:
        node = reader.node(None)
        assert node is not None
        esassum, esapoll = catalog.get("ESASSUM"), catalog.get("ESAPOLL")
        assert slot_values(reader, esassum, node, "no_such", (), None, None) is None
        assert slot_values(reader, esapoll, node, "nserv_us", (), None, None) is None  # a row's
        assert slot_values(reader, esapoll, node, "cp_us_op", ("x",), None, None) is None
        # an option of another screen (the monitor carries them along) changes nothing
        options = frozenset({"normalized", "sort:busy"})
        assert slot_values(reader, esassum, node, "steal_pct", (), None, None, options)


@pytest.mark.parametrize(
    ("name", "column", "recording"),
    [
        ("ESASSUM", "crypto_ops_s", "offset_db"),
        ("ESASSUM", "steal_pct", "sim_db"),
        ("ESASSUM", "busy_ifl", "sim_db"),
        ("ESASSUM", "busy_cp", "late_lcpu_db"),
        ("ESAPOLL", "cp_us_op", "poll_db"),
        ("ESAPOLL", "guest_poll", "poll_db"),
    ],
)
def test_the_view_reads_the_slots_of_its_kinds(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    column: str,
    recording: str,
) -> None:
    """``d`` as the monitor draws it takes the slot columns' way (nothing built) and draws
    what the screen built as recorded gives, a chunk at a time or at once."""
    from esatui.screens import distribution
    from esatui.tui.distribution import distribution_lines

    with SqliteReader.open(request.getfixturevalue(recording)) as reader:
        query = catalog.Query(interval_len_us=2 * 60_000_000)
        bucketed = catalog.build_model(reader, name, query)
        built: list[str] = []
        real_build = distribution.recorded_model

        def recorded_model(*args: Any, **kwargs: Any) -> Any:
            built.append(name)
            return real_build(*args, **kwargs)

        monkeypatch.setattr(distribution, "recorded_model", recorded_model)
        fast = distribution_lines(reader, bucketed, query, column, (), 100)
        assert not built  # the slots of its kinds, not the screen
        monkeypatch.setattr(distribution, "slot_values", lambda *args, **kwargs: None)
        monkeypatch.setattr(distribution, "interval_values", lambda *args, **kwargs: None)
        chunked = distribution_lines(reader, bucketed, query, column, (), 100)
        assert not built  # the screen as recorded, a chunk at a time
        monkeypatch.setattr(distribution, "_chunked_values", lambda *args, **kwargs: None)
        slow = distribution_lines(reader, bucketed, query, column, (), 100)
        assert built
        assert fast == chunked == slow
        (counted,) = [line for line in fast if line.startswith("Histogram of ")]
        assert int(counted.split()[2]) > 0


ONE_SOURCE = [name for name, screen in catalog.screens().items() if screen.one_source]


def test_the_screens_that_read_the_processors_from_one_source() -> None:
    assert ONE_SOURCE == ["ESASSUM", "ESACPUU", "ESAPOLL", "ESACRYPE", "ESALOCK"]


@pytest.mark.parametrize("name", ONE_SOURCE)
def test_a_screen_read_from_one_source_is_the_screen_read_from_every_source(
    sim_db: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The processors are recorded by three sources (the monitor, SMAPI, vmcp): a screen
    that takes them as ``Slot.get(kind, prefer)`` does (``ScreenDef.one_source``) is the
    same model, to the last bit, from slots that hold only that source as from slots that
    hold all three: as recorded, the newest and a range in the middle, and by the hour."""
    screen = catalog.get(name)
    with SqliteReader.open(sim_db) as reader:
        node = reader.node(None)
        assert len(reader.queries.sources_of("lcpu")) == 3
        every = replace(screen, one_source=())
        timelines = [catalog.screen_timeline(s, node, None) for s in (screen, every)]
        read = [
            reader.slots(Navigator(reader, t).window(None, None, limit=5), screen.kinds)
            for t in timelines
        ]
        assert [len(s.data["lcpu"]) for s in read[0]] == [1] * 5  # the slots hold one source
        assert [len(s.data["lcpu"]) for s in read[1]] == [3] * 5
        extent = Navigator(reader, timelines[0]).extent()
        assert extent is not None
        middle = (extent.start_us + 600_000_000, extent.start_us + 1_200_000_000)
        for query in (
            catalog.Query(),
            catalog.Query(after_us=middle[0], until_us=middle[1]),
            catalog.Query(interval_len_us=3_600_000_000),
        ):
            declared = catalog.build_model(reader, name, query)
            monkeypatch.setitem(catalog._SCREENS, name, every)
            assert catalog.build_model(reader, name, query) == declared
            monkeypatch.undo()
            assert declared.rows
