"""Columns made of one recorded row (issue 17's distribution over a month): read from the
entity's own rows (a total's: its members'), they are the screen's values as recorded to the
last bit, and where they cannot be (another source of the kind, buckets, a normalized
subtotal) the screen is built instead."""

from __future__ import annotations

import bisect
import contextlib
import itertools
import os
import re
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esatui.collectors.host import CPU
from esatui.collectors.kinds import LCPU
from esatui.collectors.model import Kind, Reading, Sample
from esatui.collectors.monitor.kinds import CRYPTO, SPIN_LOCK
from esatui.collectors.vmcp import VCPU
from esatui.collectors.zcrypt.kinds import CARD as ZCRYPT_CARD
from esatui.collectors.zcrypt.kinds import QUEUE as ZCRYPT_QUEUE
from esatui.db.calendar import bucket_end, bucket_runs
from esatui.db.sqlite_reader import SqliteReader
from esatui.db.store import Store
from esatui.screens import catalog
from esatui.screens.common import HYPFS_STEAL_NOTE
from esatui.screens.distribution import Bin, entity_values, histogram
from esatui.screens.esalock import LOCK_FIELDS
from esatui.screens.model import RowKind, ScreenModel
from esatui.screens.row_columns import IntervalValue, RowColumns, TotalColumn, interval_values
from esatui.screens.rowkey import EntityKey, entity_key, key_columns
from tests.fixtures.cryq_recording import record
from tests.fixtures.hypervisor import hypervisor_samples
from tests.fixtures.reading import sql
from tests.fixtures.recording import (
    CONFIG,
    START_US,
    cpu_ticks,
    host_recording,
    host_samples,
    uneven_minutes,
    write,
)
from tests.graphs.conftest import simulate
from tests.screens.test_esacpuu_smt import smt_samples

DECLARING = [name for name, screen in catalog.screens().items() if screen.row_columns]


@pytest.fixture(scope="module")
def sim_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simulate(tmp_path_factory.mktemp("row-columns") / "sim.sqlite")


def test_the_screens_that_declare_them() -> None:
    declaring = [
        *("ESASSUM", "ESACPUU", "ESALNXC", "ESACRYPT", "ESACRYPA", "ESACRYQ", "ESAPOLL"),
        *("ESALOCK", "ESAUSR2", "ESAOVHD"),
    ]
    assert declaring == DECLARING
    for name in DECLARING:
        screen = catalog.get(name)
        assert screen.row_columns is not None and screen.row_columns.kind == screen.timeline[0]
        # columns the screen lists (<fn>: each of ESACRYPA's functions)
        listed = [re.escape(c.id).replace("<fn>", "[a-z0-9_]+") for c in screen.columns]
        for cid in screen.row_columns.columns:
            assert any(re.fullmatch(pattern, cid) for pattern in listed), cid
        # what they read is what the screen declares it reads (test_screen_fields), beside
        # a row's own flags and sample count
        reads = [r for r in screen.reads if r.kind == screen.row_columns.kind]
        fields = {f for r in reads for f in r.fields} | {"flags", "hf_n"}
        attrs = {a for r in reads for a in r.attrs}
        for column in screen.row_columns.columns.values():
            assert set(column.fields) <= fields and set(column.attrs) <= attrs
            if column.over is not None:
                over = [r for r in screen.reads if r.kind == column.over.kind]
                assert set(column.over.fields) <= {f for r in over for f in r.fields} | {
                    "flags",
                    "hf_n",
                }


def monitor_recording(tmp: pytest.TempPathFactory, kind: Kind, samples: list[Sample]) -> Path:
    """A recording of the monitor's ``samples`` of one kind."""
    db = tmp.mktemp("row-columns") / f"{kind.name}.sqlite"
    with Store.open(db) as store:
        write(store, "monitor", (kind,), samples)
    return db


@pytest.fixture(scope="module")
def monitor_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An LPAR's processors from the monitor alone (the simulated system has three sources of
    them, which ESACPUU's slots choose among)."""
    cpus, _guests = hypervisor_samples()
    return monitor_recording(tmp_path_factory, LCPU, cpus)


def hypfs_processors(minutes: int = 6) -> list[Sample]:
    """An LPAR's three logical processors as hypfs records them (online, dispatched and
    management time; online but not dispatched as ``steal_us``, idle wait included)."""
    busy = {"0": ("CP", 0.5), "1": ("IFL", 0.1), "2": ("IFL", 0.75)}
    samples = []
    for i in range(minutes + 1):
        readings = []
        for key, (cpu_type, share) in busy.items():
            online = i * 60_000_000
            dispatched = round(online * share) + i * 1_013
            values = {
                "elapsed_us": online,
                "busy_us": dispatched,
                "mgmt_us": i * 600_000,
                "steal_us": online - dispatched,
            }
            attrs = {"type": cpu_type, "lpar": "LP1", "type_source": "hypfs:diag_204"}
            readings.append(Reading("lcpu", key, values, attrs))
        when = START_US + i * 60_000_000
        samples.append(Sample("hypfs", when, tuple(readings), config={"hypfs.lpar": "LP1"}))
    return samples


@pytest.fixture(scope="module")
def hypfs_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("row-columns") / "hypfs.sqlite"
    with Store.open(db) as store:
        write(store, "hypfs", (LCPU,), hypfs_processors())
    return db


def test_hypfs_processors_show_no_steal(hypfs_db: Path) -> None:
    """hypfs's online time not dispatched holds the idle wait: a processor 10% busy is not
    90% stolen. No row shows steal nor its highlight, the note says why, and the
    distribution's values (a processor's, a type's ``Tot``) say the same."""
    screen = catalog.get("ESACPUU")
    with SqliteReader.open(hypfs_db) as reader:
        model = catalog.build_model(reader, "ESACPUU", catalog.Query())
        node = reader.node(None)
        assert node is not None
        one = interval_values(reader, screen, node, "steal", ("IFL", "1"), None, None)
        assert one == sorted((r.end_us, None) for r in model.rows if r.values["id"] == 1)
        tot = interval_values(reader, screen, node, "steal", ("IFL", "Tot", "subtotal"), None, None)
        assert tot is not None and all(v is None for _, v in tot)
    assert {r.values["steal"] for r in model.rows} == {None}
    assert not any(r.levels.get("steal") for r in model.rows)
    newest = {
        (r.values["type"], r.values["id"]): r.values["total"]
        for r in model.rows
        if r.end_us == model.rows[0].end_us
    }
    expected = {("CP", 0): 50.0, ("CP", "Tot"): 50.0, ("IFL", 1): 10.0, ("IFL", 2): 75.0}
    assert newest == pytest.approx({**expected, ("IFL", "Tot"): 85.0}, abs=0.01)
    assert HYPFS_STEAL_NOTE in model.notes


@pytest.fixture(scope="module")
def smt_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ESACPUU's processors as threads of cores (a core column, keys of three parts)."""
    db = tmp_path_factory.mktemp("row-columns") / "smt.sqlite"
    host_recording(db, n_intervals=3, config={**CONFIG, "lpar.cpus_g_mtid": "1"})
    with Store.open(db) as store:
        write(store, "monitor", (LCPU,), smt_samples())
    return db


@pytest.fixture(scope="module")
def host_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Linux's CPUs with no source proving their types (the simulated system's vmcp
    does: ESALNXC builds the screen there)."""
    return host_recording(tmp_path_factory.mktemp("row-columns") / "host.sqlite", 12)


def odd_crypto(minutes: int = 10) -> list[Sample]:
    """D5R9 counters whose intervals take each way of the crypto columns: the split kept,
    the split standing still while VSERV moves (not kept), no operation at all, fewer
    guest dequeues than completions, a reading without the split, and uneven ratios."""
    names = (
        *("virt_nq", "real_nq", "virt_dq", "real_dq", "virt_done", "real_done"),
        *("virt_rej", "real_rej", "vserv_us", "rserv_us", "hserv_us", "nserv_us", "dserv_us"),
    )
    totals = dict.fromkeys(names, 10**9)
    samples = []
    for i in range(minutes + 1):
        values: dict[str, int | None] = dict(totals)
        way = i % 5
        if i:
            for n, name in enumerate(names):
                step = (7 * i + 3 * n) * 1_013 + i * i
                if way == 2 and not name.endswith("_us"):
                    step = 0  # no operation
                if way == 1 and name in ("hserv_us", "nserv_us", "dserv_us"):
                    step = 0  # the split stood still: not kept
                if way == 3 and name == "virt_dq":
                    step = 5  # fewer dequeues than completions
                totals[name] += step
            values = dict(totals)
        if way == 4:
            for name in ("hserv_us", "nserv_us", "dserv_us"):
                values[name] = None
        # one layout throughout: a key whose attributes change is read from the slots
        attrs = {"layout": "D5R9/360", "record_length": "360"}
        reading = Reading("crypto", "system", values, attrs)
        samples.append(Sample("monitor", START_US + i * 60_000_000, (reading,)))
    return samples


@pytest.fixture(scope="module")
def cryq_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Cards and APQNs whose counters reset, a card new in the second interval, an offline
    APQN and one passed to KVM (tests/fixtures/cryq_recording.py)."""
    tmp = tmp_path_factory.mktemp("row-columns")
    record(tmp / "cryq.sqlite", tmp / "root")
    return tmp / "cryq.sqlite"


@pytest.fixture(scope="module")
def crypto_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return monitor_recording(tmp_path_factory, CRYPTO, odd_crypto())


def spinning_locks(minutes: int = 12) -> list[Sample]:
    """D0R23's locks: one spinning every interval, one only in every third (else its row
    shows no spin and the screen leaves it out), one spinning shared only, one that never
    spins; the interval lengths uneven."""
    totals: dict[str, dict[str, int]] = {}
    samples = []
    for i, t in enumerate(uneven_minutes(minutes + 1)):
        readings = []
        for n, lock in enumerate(("SRMSLOCK", "HCPTRQLK", "RSAAVLLK", "QUIETLK")):
            was = totals.setdefault(lock, dict.fromkeys(LOCK_FIELDS, 0))
            spins = (0, 0, 0, 0)
            if i and (n == 0 or (n == 1 and i % 3 == 0)):
                spins = (40 * i + n, 1_593 * i + 7 * n, 5, 1_601)
            elif i and n == 2:
                spins = (0, 0, 3 * i, 997 * i)
            for name, step in zip(LOCK_FIELDS, spins, strict=True):
                was[name] += step
            readings.append(Reading("spin_lock", lock, dict(was), {"layout": "D0R23"}))
        samples.append(Sample("monitor", t, tuple(readings)))
    return samples


@pytest.fixture(scope="module")
def lock_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return monitor_recording(tmp_path_factory, SPIN_LOCK, spinning_locks())


# a short mode-vm-day has no lock that spun (D0R23 rows): ESALOCK has a recording of its own
RECORDINGS = [(n, "sim_db") for n in DECLARING if n not in ("ESACPUU", "ESALNXC", "ESALOCK")]
RECORDINGS += [("ESACPUU", "monitor_db"), ("ESACPUU", "smt_db"), ("ESALNXC", "host_db")]
RECORDINGS += [("ESACRYPT", "crypto_db"), ("ESAPOLL", "crypto_db"), ("ESASSUM", "host_db")]
RECORDINGS += [("ESACRYQ", "cryq_db"), ("ESALOCK", "lock_db"), ("ESACPUU", "hypfs_db")]


def built_over_halves(
    reader: SqliteReader, name: str
) -> Iterator[tuple[int | None, int | None, ScreenModel]]:
    """(after, until, the screen built as recorded over it): the whole recording, then each
    half."""
    whole = catalog.build_model(reader, name, catalog.Query())
    middle = (whole.from_us or 0) + ((whole.to_us or 0) - (whole.from_us or 0)) // 2
    for after, until in ((None, None), (middle, None), (None, middle)):
        yield (
            after,
            until,
            catalog.build_model(reader, name, catalog.Query(after_us=after, until_us=until)),
        )


def _total(made: RowColumns, entity: EntityKey) -> bool:
    return made.totals is not None and made.totals.members(entity) is not None


@pytest.mark.parametrize(("name", "recording"), RECORDINGS)
def test_each_column_of_each_entity_is_the_screen_as_recorded(
    request: pytest.FixtureRequest, name: str, recording: str
) -> None:
    """Every declared column of every entity, over the whole recording and each half:
    equal (==, None included) to the screen built as recorded, which makes it from the
    slots. Rows that are neither a recorded entity nor a declared total (ESALOCK's, whose
    total adds the locks' counters before any column is made) are left to the build."""
    screen = catalog.get(name)
    made = screen.row_columns
    assert made is not None
    with SqliteReader.open(request.getfixturevalue(recording)) as reader:
        node = reader.node(None)
        assert node is not None
        for after, until, model in built_over_halves(reader, name):
            keys = key_columns(model.columns)
            entities = {entity_key(keys, r) for r in model.rows}  # totals and subtotals too
            entities = {e for e in entities if made.entity(e) is not None or _total(made, e)}
            assert entities
            compared = 0
            for entity in sorted(entities):
                for column in made.columns:
                    fast = interval_values(reader, screen, node, column, entity, after, until)
                    assert fast is not None, (column, entity)
                    assert fast == entity_values(model, column, entity), (column, entity)
                    compared += sum(v is not None for _, v in fast)
            assert compared >= 2 * len(entities)  # values, not only Nones


def entities_of(reader: SqliteReader, name: str, kind: RowKind) -> tuple[str, set[EntityKey]]:
    """The node, and the entities of the screen's rows of ``kind`` over the recording."""
    node = reader.node(None)
    assert node is not None
    model = catalog.build_model(reader, name, catalog.Query())
    keys = key_columns(model.columns)
    return node, {entity_key(keys, r) for r in model.rows if r.kind is kind}


def odd_processors(minutes: int = 8) -> list[Sample]:
    """Five logical processors of an LPAR written out of address order, with uneven values
    (sums that depend on the order they are added in): 3 appears at the third minute, 4 is
    gone for four, 1 is online for a quarter of the sixth, and 2 turns from an IFL into a
    CP halfway."""
    fields = ("elapsed_us", "emul_us", "user_us", "syst_us", "idle_us", "steal_us")
    totals = {cpu: dict.fromkeys(fields, 0) for cpu in range(5)}
    samples = []
    for i in range(minutes + 1):
        readings = []
        for cpu in (4, 1, 3, 0, 2):
            if (cpu == 4 and 2 <= i <= 5) or (cpu == 3 and i < 3):
                continue
            cpu_type = "CP" if cpu == 0 or (cpu == 2 and i >= 4) else "IFL"
            if i:
                for n, name in enumerate(fields):
                    step = (17 * cpu + 7 * i + 5 * n) * 100_003
                    online = 15_000_000 if (cpu, i) == (1, 6) else 60_000_000  # weighed
                    totals[cpu][name] += online if name == "elapsed_us" else step
            attrs = {"type": cpu_type, "lpar": "L32", "type_source": "monitor"}
            readings.append(Reading("lcpu", str(cpu), dict(totals[cpu]), attrs))
        when = START_US + i * 60_000_000
        samples.append(Sample("monitor", when, tuple(readings), config={"lpar_name": "L32"}))
    return samples


@pytest.fixture(scope="module")
def processors_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:func:`odd_processors` beside a host recording (its capability ratings: CPs are
    normalized)."""
    db = tmp_path_factory.mktemp("row-columns") / "processors.sqlite"
    host_recording(db, n_intervals=8)
    with Store.open(db) as store:
        write(store, "monitor", (LCPU,), odd_processors())
    return db


def test_a_types_subtotal_adds_its_processors_as_the_screen_does(processors_db: Path) -> None:
    """ESACPUU's ``Tot`` rows from their processors' rows, each column over the whole
    recording and each half, equal (==) to the screen built as recorded: processors first
    seen out of order, appearing, disappearing and changing type."""
    screen = catalog.get("ESACPUU")
    assert screen.row_columns is not None
    with SqliteReader.open(processors_db) as reader:
        node, subtotals = entities_of(reader, "ESACPUU", RowKind.SUBTOTAL)
        assert subtotals == {("CP", "Tot", "subtotal"), ("IFL", "Tot", "subtotal")}
        for after, until, model in built_over_halves(reader, "ESACPUU"):
            for subtotal in subtotals:
                for column in screen.row_columns.columns:
                    fast = interval_values(reader, screen, node, column, subtotal, after, until)
                    assert fast is not None, (subtotal, column)
                    assert fast == entity_values(model, column, subtotal), (subtotal, column)
                    assert all(v is not None for _, v in fast) or column == "mgmt"


def test_subtotals_normalized_or_of_several_lpars_build_the_screen(
    monitor_db: Path, tmp_path: Path
) -> None:
    """A type's ``Tot`` row is its processors' own rows added up (each equal to the screen,
    above), but not when normalized (capacity factors from the configuration), nor where
    the processors are of several LPARs (SMAPI's: the build keeps the LPAR's own)."""
    screen = catalog.get("ESACPUU")
    with SqliteReader.open(monitor_db) as reader:
        node, subtotals = entities_of(reader, "ESACPUU", RowKind.SUBTOTAL)
        assert subtotals == {("CP", "Tot", "subtotal"), ("IFL", "Tot", "subtotal")}
        for subtotal in subtotals:
            assert interval_values(reader, screen, node, "total", subtotal, None, None)
            normalized = frozenset({"normalized"})
            args = ("total", subtotal, None, None, normalized)
            assert interval_values(reader, screen, node, *args) is None
        assert interval_values(reader, screen, node, "total", ("IFL", "1"), None, None)
        assert interval_values(reader, screen, node, "total", ("CP", "1"), None, None) is None
    db = tmp_path / "lpars.sqlite"
    shutil.copy(monitor_db, db)
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE entity SET attrs = json_set(attrs, '$.lpar', 'L33')"
            " WHERE kind = 'lcpu' AND key = (SELECT max(key) FROM entity WHERE kind = 'lcpu')"
        )
    conn.close()
    with SqliteReader.open(db) as reader:
        node, subtotals = entities_of(reader, "ESACPUU", RowKind.SUBTOTAL)
        for subtotal in subtotals:
            assert interval_values(reader, screen, node, "total", subtotal, None, None) is None


def test_a_processor_of_another_lpar_late_in_the_range_builds_the_screen(
    tmp_path: Path,
) -> None:
    """The members' rows are read as they are iterated (a range's are not held at once),
    and whether the build keeps only the LPAR's own processors is a question of the whole
    range: a processor of another LPAR recorded in its last interval alone makes the
    whole range's subtotal the build's, though the rows before it are of one LPAR; a range
    that ends before it is read from the rows, equal to the build."""
    samples = odd_processors()
    for n, at in enumerate((-2, -1)):  # first seen at the one before: a row in the last
        values = {"elapsed_us": n * 60_000_000, "user_us": n * 6_000_000}
        stranger = Reading("lcpu", "9", values, {"type": "IFL", "lpar": "L33"})
        samples[at] = replace(samples[at], readings=(*samples[at].readings, stranger))
    db = tmp_path / "late.sqlite"
    host_recording(db, n_intervals=8)
    with Store.open(db) as store:
        write(store, "monitor", (LCPU,), samples)
    screen = catalog.get("ESACPUU")
    subtotal = ("IFL", "Tot", "subtotal")
    with SqliteReader.open(db) as reader:
        node = reader.node(None)
        assert node is not None
        timeline = catalog.screen_timeline(screen, node, None)
        found = reader.kind_entity_rows(timeline, "lcpu", ("user_us",), None, None)
        assert found is not None and iter(found.rows) is found.rows  # an iterator, read once
        assert interval_values(reader, screen, node, "user", subtotal, None, None) is None
        before = samples[-2].time_us
        fast = interval_values(reader, screen, node, "user", subtotal, None, before)
        model = catalog.build_model(reader, "ESACPUU", catalog.Query(until_us=before))
        assert fast is not None and fast == entity_values(model, "user", subtotal)
        assert len(fast) == 7


def test_types_proven_by_vmcp_build_the_screen(tmp_path: Path) -> None:
    """ESALNXC's type comes from the vcpu rows in each slot (vmcp), else from the host's
    own: with one vmcp poll missed, CPU 0 shows as two entities, which only the screen
    built as recorded tells apart."""
    db = tmp_path / "vmcp.sqlite"
    samples = host_samples(8, range(2), 60, START_US, cpu_type="CP", type_source="arch")
    proven = {"type": "IFL", "type_source": "vmcp:QUERY VIRTUAL CPUS"}
    polls = [
        Sample(
            "vmcp",
            START_US + i * 60_000_000 + 5,
            tuple(Reading("vcpu", str(cpu), {}, proven) for cpu in range(2)),
        )
        for i in range(9)
        if i != 4
    ]
    with Store.open(db) as store:
        write(store, "host", (CPU,), samples)
        write(store, "vmcp", (VCPU,), polls)
    with SqliteReader.open(db) as reader:
        _node, entities = entities_of(reader, "ESALNXC", RowKind.DATA)
        assert {("CP", "0"), ("IFL", "0")} <= entities
        steal = reading(reader, "ESALNXC", "steal")
        assert all(steal(entity, None, None) is None for entity in entities)


@pytest.mark.parametrize(("shift_s", "length_s"), [(30, 60), (1, 120)])
def test_a_recording_merged_with_itself_shifted_is_read_alike(
    tmp_path: Path, shift_s: int, length_s: int
) -> None:
    """Two runs of one source (``esatui db merge`` of two recorders), the second ``shift_s``
    later at intervals ``length_s`` long (at 120 s each of the first run's intervals lies
    inside one of the second's): each interval is its own row, in the screen as in the
    entity's rows and the all row's, whatever the range."""
    db = tmp_path / "shifted.sqlite"
    shifted = host_samples(
        360 // length_s,
        range(2),
        length_s,
        START_US + shift_s * 1_000_000,
        ticks=lambda i, c, s: cpu_ticks(i + 3, c, s),
    )
    with Store.open(db) as store:
        write(store, "host", (CPU,), host_samples(6, range(2), 60, START_US))
        write(store, "host", (CPU,), shifted)
    rows = 6 + 360 // length_s
    with SqliteReader.open(db) as reader:
        assert len(catalog.build_model(reader, "ESALNXC", catalog.Query()).rows) == 3 * rows
        for after, until in ((None, None), (START_US + 120_000_000, START_US + 270_000_000)):
            query = catalog.Query(after_us=after, until_us=until)
            model = catalog.build_model(reader, "ESALNXC", query)
            for entity in (("IFL", "0"), ("", "all", RowKind.TOTAL.value)):
                user = reading(reader, "ESALNXC", "user")(entity, after, until)
                assert user == entity_values(model, "user", entity)
                assert user is not None and len(user) > 2


def test_another_nodes_sources_leave_a_node_read_directly(tmp_path: Path) -> None:
    db = tmp_path / "fleet.sqlite"
    with Store.open(db) as store:
        write(store, "host", (CPU,), host_samples(5, range(2), 60, START_US), node="LNXA")
        write(store, "import", (CPU,), host_samples(5, range(2), 60, START_US), node="LNXB")
        # and the same node's other source a year before: far from the range
        write(
            store, "import", (CPU,), host_samples(5, range(2), 60, START_US - 10**12), node="LNXA"
        )
    screen = catalog.get("ESALNXC")
    with SqliteReader.open(db) as reader:
        for after in (START_US, None):
            found = interval_values(reader, screen, "LNXA", "steal", ("IFL", "0"), after, None)
            assert (found is not None) is (after is not None)  # all of it: the import too


def test_rows_that_are_neither_build_the_screen(sim_db: Path) -> None:
    screen = catalog.get("ESALNXC")
    with SqliteReader.open(sim_db) as reader:
        node, _ = entities_of(reader, "ESALNXC", RowKind.TOTAL)
        # a column the screen does not declare, columns of other kinds, a screen that
        # declares none
        data = min(entities_of(reader, "ESALNXC", RowKind.DATA)[1])
        assert interval_values(reader, screen, node, "time", data, None, None) is None
        esapoll = catalog.get("ESAPOLL")
        assert interval_values(reader, esapoll, node, "poll_ms", (), None, None) is not None
        for other_kinds in ("guest_poll", "cp_us_op"):  # the AP bus, the processors
            assert interval_values(reader, esapoll, node, other_kinds, (), None, None) is None
        esassum = catalog.get("ESASSUM")
        assert interval_values(reader, esassum, node, "crypto_ops_s", (), None, None) is None
        # ESACPUU's processors from three sources: the slots choose among them
        cpuu = catalog.get("ESACPUU")
        assert interval_values(reader, cpuu, node, "steal", ("CP", "0"), None, None) is None


def test_the_all_row_adds_every_cpu_as_the_screen_does(sim_db: Path, tmp_path: Path) -> None:
    """ESALNXC's ``all`` row (and ESASSUM's steal, their mean) from every CPU's rows, each
    declared column over the whole recording and each half, equal (==) to the screen built
    as recorded: where vmcp
    proves the CPUs' types (they do not change the sum); and in a recording whose CPUs
    were first seen out of their order (10, 2, 0), one of which counted no tick in an
    interval (not counted), one was online for a quarter of one (weighed), one never read
    its steal (counted, adding no steal), and one
    changed its attributes halfway (two entities of one key, never in one interval)."""
    db = tmp_path / "odd.sqlite"

    def ticks(interval: int, cpu: int, seconds: int) -> dict[str, int]:
        made = cpu_ticks(interval, cpu, seconds)
        if (interval, cpu) == (3, 2):
            return dict.fromkeys(made, 0)
        if (interval, cpu) == (5, 10):  # online for a quarter of it: weighed
            return {name: n // 4 for name, n in made.items()}
        # a whole of uneven ticks: shares whose sum depends on the order they are added in
        return made | {"idle": made["idle"] + 7 * cpu + 11 * interval}

    samples = host_samples(8, (10, 2, 0), 60, START_US, ticks=ticks)
    odd = []
    for n, sample in enumerate(samples):
        readings = []
        for r in sample.readings:
            values = {k: v for k, v in r.values.items() if (r.key, k) != ("10", "steal_us")}
            attrs = (
                {**r.attrs, "polarization": "vertical:medium"}
                if r.key == "0" and n > 4
                else r.attrs
            )
            readings.append(replace(r, values=values, attrs=attrs))
        odd.append(replace(sample, readings=tuple(readings)))
    with Store.open(db) as store:
        write(store, "host", (CPU,), odd)
    screen = catalog.get("ESALNXC")
    assert screen.row_columns is not None
    for path in (sim_db, db):
        with SqliteReader.open(path) as reader:
            node, (total,) = entities_of(reader, "ESALNXC", RowKind.TOTAL)
            for after, until, model in built_over_halves(reader, "ESALNXC"):
                for column in screen.row_columns.columns:
                    fast = interval_values(reader, screen, node, column, total, after, until)
                    assert fast is not None, (path, column)
                    assert fast == entity_values(model, column, total), (path, column)
                    assert all(v is not None for _, v in fast) or column == "steal"
    with SqliteReader.open(db) as reader:
        steal = reading(reader, "ESALNXC", "steal")(total, None, None)
        assert steal is not None and len(steal) == 8 and all(v for _, v in steal)
    # ESASSUM's steal: the mean of the CPUs' that are known, in the slot's order
    esassum = catalog.get("ESASSUM")
    with SqliteReader.open(db) as reader:
        its = reader.node(None)
        assert its is not None
        for after, until, model in built_over_halves(reader, "ESASSUM"):
            fast = interval_values(reader, esassum, its, "steal_pct", (), after, until)
            assert fast is not None and fast == entity_values(model, "steal_pct", ())
            assert all(v is not None for _, v in fast)


def test_esassums_steal_is_the_mean_in_the_slots_order(tmp_path: Path) -> None:
    """ESASSUM's steal from the CPUs' own rows: four CPUs first seen out of their order
    (5, 3, 0, 7), shares of uneven wholes whose sum depends on the order they are added in,
    one of them counting no tick in an interval (left out of the mean), one online for a
    quarter of one (weighed): equal to the screen
    built as recorded, in every interval; and the sum in the CPUs' own order is not."""
    db = tmp_path / "mean.sqlite"

    def ticks(interval: int, cpu: int, seconds: int) -> dict[str, int]:
        made = cpu_ticks(interval, cpu, seconds)
        if (interval, cpu) == (2, 3):
            return dict.fromkeys(made, 0)
        if (interval, cpu) == (4, 5):  # online for a quarter of it: weighed
            return {name: n // 4 for name, n in made.items()}
        return made | {"idle": made["idle"] + 13 * cpu + 7 * interval + 1}

    with Store.open(db) as store:
        write(store, "host", (CPU,), host_samples(10, (5, 3, 0, 7), 60, START_US, ticks=ticks))
    screen = catalog.get("ESASSUM")
    made = screen.row_columns
    assert made is not None and made.totals is not None
    with SqliteReader.open(db) as reader:
        node = reader.node(None)
        assert node is not None
        model = catalog.build_model(reader, "ESASSUM", catalog.Query())
        fast = interval_values(reader, screen, node, "steal_pct", (), None, None)
        assert fast is not None and len(fast) == 10
        assert fast == entity_values(model, "steal_pct", ())
        by_number = replace(made.totals, order=lambda key, attrs: int(key))
        other = replace(screen, row_columns=replace(made, totals=by_number))
        assert interval_values(reader, other, node, "steal_pct", (), None, None) != fast


def test_esacryqs_share_over_cards_whose_attributes_change(tmp_path: Path) -> None:
    """ESACRYQ's columns of each card and APQN from their own rows, the share over the
    cards' rows: equal (==) to the screen built as recorded where card 02 goes offline
    halfway (two entities of one key, never in one interval), card 0a is new in the fourth
    interval (no delta: out of the base) and the requests are uneven."""
    db = tmp_path / "cards.sqlite"
    counts = {"01": 1_000, "02": 50, "0a": 7}
    samples = []
    for n in range(10):
        readings = []
        for card, base in counts.items():
            if card == "0a" and n < 3:
                continue
            total = base + sum((17 * i + 31 * len(card) + 3 * i * i) % 97 for i in range(n))
            state = "offline" if card == "02" and n > 4 else "online"
            attrs = {"type": "CEX7A", "mode": "ACCEL", "state": state}
            values = {"request_count": total, "pending_count": n % 3, "requestq_count": 0}
            readings.append(Reading("zcrypt_card", card, values, attrs))
            for domain in ("0010", "0011"):
                share = total // (2 if domain == "0010" else 3)
                readings.append(
                    Reading("zcrypt_queue", f"{card}.{domain}", {"request_count": share}, attrs)
                )
        samples.append(Sample("zcrypt", START_US + n * 60_000_000, tuple(readings)))
    with Store.open(db) as store:
        write(store, "zcrypt", (ZCRYPT_CARD, ZCRYPT_QUEUE), samples)
    screen = catalog.get("ESACRYQ")
    assert screen.row_columns is not None
    with SqliteReader.open(db) as reader:
        node = reader.node(None)
        assert node is not None
        for after, until, model in built_over_halves(reader, "ESACRYQ"):
            keys = key_columns(model.columns)
            for entity in sorted({entity_key(keys, r) for r in model.rows}):
                fast = interval_values(reader, screen, node, "share_pct", entity, after, until)
                if entity[0].startswith("02"):
                    assert fast is None  # one key, two entities: the slots tell them apart
                    continue
                assert fast is not None and fast == entity_values(model, "share_pct", entity)
                assert any(v is not None for _, v in fast), entity


def busy_by_type_recording(db: Path) -> list[str]:
    """Eight CPUs first seen out of their order, of three types (IFL, CP and one of none:
    ``CPU``), uneven ticks, one counting none in an interval, one online for a quarter of
    one, CPU 4 (the only CP but one)
    gone for two intervals and CPU 9 (the other) only in the first three; ESASSUM's busy
    columns of them."""

    def ticks(interval: int, cpu: int, seconds: int) -> dict[str, int]:
        made = cpu_ticks(interval, cpu, seconds)
        if (interval, cpu) == (4, 1):
            return dict.fromkeys(made, 0)
        if (interval, cpu) == (6, 7):  # online for a quarter of it: weighed
            return {name: n // 4 for name, n in made.items()}
        return made | {"idle": made["idle"] + 11 * cpu + 5 * interval + 3}

    types = {"7": "IFL", "1": "IFL", "0": "IFL", "2": "IFL", "6": "IFL", "4": "CP", "9": "CP"}
    types["5"] = ""
    cpus = (7, 1, 4, 0, 9, 5, 2, 6)
    samples = []
    for n, sample in enumerate(host_samples(9, cpus, 60, START_US, ticks=ticks)):
        readings = tuple(
            replace(r, attrs={**r.attrs, "type": types[r.key]})
            for r in sample.readings
            if not (r.key == "4" and n in (5, 6)) and not (r.key == "9" and n > 3)
        )
        samples.append(replace(sample, readings=readings))
    with Store.open(db) as store:
        write(store, "host", (CPU,), samples)
    return ["busy_ifl", "busy_cp", "busy_cpu"]


def test_esassums_busy_by_type_adds_its_cpus_as_the_screen_does(tmp_path: Path) -> None:
    """ESASSUM's busy of each CPU type (the guest's view) from that type's CPUs' own rows:
    equal (==, the intervals without one of the type's CPUs None) to the screen built as
    recorded, over the whole recording and each half; and the sum in the CPUs' own order
    is not."""
    db = tmp_path / "types.sqlite"
    columns = busy_by_type_recording(db)
    screen = catalog.get("ESASSUM")
    with SqliteReader.open(db) as reader:
        node = reader.node(None)
        assert node is not None
        for after, until, model in built_over_halves(reader, "ESASSUM"):
            assert {c.id for c in model.columns} >= set(columns)
            for column in columns:
                fast = interval_values(reader, screen, node, column, (), after, until)
                assert fast is not None, column
                assert fast == entity_values(model, column, ()), (after, until, column)
        whole = interval_values(reader, screen, node, "busy_cp", (), None, None)
        assert whole is not None and len(whole) == 9
        # no CP in intervals 5 and 6; in 7 CPU 4 is back, with no delta yet
        assert [v is None for _, v in whole] == [False] * 4 + [True] * 3 + [False] * 2
        made = screen.row_columns
        assert made is not None
        fast = interval_values(reader, screen, node, "busy_ifl", (), None, None)
        assert fast is not None and all(v is not None for _, v in fast)

        def by_number(column_id: str) -> TotalColumn | None:
            total = made.total_column(column_id)
            return total and replace(total, order=lambda key, attrs: int(key))

        other = replace(screen, row_columns=replace(made, total_column=by_number))
        assert interval_values(reader, other, node, "busy_ifl", (), None, None) != fast


def test_esassums_busy_by_type_reads_the_slots_beside_other_views(tmp_path: Path) -> None:
    """Where the hypervisor's processors (their view takes over) or vmcp's CPUs (they prove
    types) were recorded, busy by type is not read from the CPUs' rows: the slots give it."""
    cpus, _guests = hypervisor_samples()
    proven = [
        Sample("vmcp", START_US + i * 60_000_000 + 5, (Reading("vcpu", "0", {}, {"type": "CP"}),))
        for i in range(9)
    ]
    screen = catalog.get("ESASSUM")
    for name, source, kind, samples in (
        ("lcpu", "monitor", LCPU, cpus),
        ("vcpu", "vmcp", VCPU, proven),
    ):
        db = tmp_path / f"{name}.sqlite"
        busy_by_type_recording(db)
        with Store.open(db) as store:
            write(store, source, (kind,), samples)
        with SqliteReader.open(db) as reader:
            node = reader.node(None)
            assert node is not None
            assert interval_values(reader, screen, node, "busy_ifl", (), None, None) is None


def test_a_key_twice_in_an_interval_builds_the_all_row(tmp_path: Path) -> None:
    """Two entities of one key in one interval (a damaged or hand-made database): a slot
    holds one of them, so the all row is built as recorded."""
    db = tmp_path / "twice.sqlite"
    with Store.open(db) as store:
        write(store, "host", (CPU,), host_samples(4, range(2), 60, START_US))
    total = ("", "all", RowKind.TOTAL.value)
    with SqliteReader.open(db) as reader:
        assert reading(reader, "ESALNXC", "steal")(total, None, None)
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO entity (node_id, kind, key, attrs) SELECT node_id, kind, key,"
            " '{\"type\": \"CP\"}' FROM entity WHERE kind = 'cpu' AND key = '0'"
        )
        conn.execute(
            "INSERT INTO k_cpu SELECT interval_id, (SELECT max(id) FROM entity), flags, hf_n,"
            " user_us, nice_us, system_us, idle_us, iowait_us, irq_us, softirq_us, steal_us,"
            " guest_us, guest_nice_us FROM k_cpu WHERE entity_id = (SELECT min(id) FROM"
            " entity WHERE kind = 'cpu' AND key = '0') LIMIT 1"
        )
    conn.close()
    with SqliteReader.open(db) as reader:
        assert reading(reader, "ESALNXC", "steal")(total, None, None) is None


def test_a_second_source_of_the_kind_or_buckets_read_the_slots(tmp_path: Path) -> None:
    """Rows of the same kind from another source would be placed into the same slots (or
    chosen instead): the reader declines, and so does a timeline of buckets."""
    db = tmp_path / "two.sqlite"
    samples = host_samples(5, range(2), 60, START_US)
    with Store.open(db) as store:
        write(store, "host", (CPU,), samples)
    screen = catalog.get("ESALNXC")
    with SqliteReader.open(db) as reader:
        node = reader.node(None)
        assert node is not None
        timeline = catalog.screen_timeline(screen, node, None)
        fields = ("steal_us",)
        found = reader.entity_rows(timeline, "cpu", "0", fields, None, None)
        assert found is not None and len(found.rows) == 5
        bucketed = catalog.screen_timeline(screen, node, 300_000_000)
        assert reader.entity_rows(bucketed, "cpu", "0", fields, None, None) is None
        assert reader.entity_rows(timeline, "vcpu", "0", fields, None, None) is None
        every = reader.kind_entity_rows(timeline, "cpu", fields, None, None)
        assert every is not None and len(list(every.rows)) == 10
        assert reader.kind_entity_rows(bucketed, "cpu", fields, None, None) is None
    with Store.open(db) as store:
        write(store, "other", (CPU,), host_samples(5, range(2), 60, START_US + 1))
    with SqliteReader.open(db) as reader:
        assert reader.entity_rows(timeline, "cpu", "0", fields, None, None) is None
        assert reader.kind_entity_rows(timeline, "cpu", fields, None, None) is None


def test_an_entity_shown_otherwise_or_recorded_twice_reads_the_slots(
    sim_db: Path, tmp_path: Path
) -> None:
    """An AP of another type than its block's is not that block; a key recorded with two
    sets of attributes (a CPU whose type changed) may show as either in a slot."""
    with SqliteReader.open(sim_db) as reader:
        util = reading(reader, "ESACRYPA", "util_pct")
        assert util(("00", "10"), None, None)
        assert util(("00", "11"), None, None) is None
    db = tmp_path / "changed.sqlite"
    with Store.open(db) as store:
        write(store, "host", (CPU,), host_samples(5, range(2), 60, START_US))
    with SqliteReader.open(db) as reader:
        assert reading(reader, "ESALNXC", "steal")(("IFL", "0"), None, None)
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO entity (node_id, kind, key, attrs) SELECT node_id, kind, key,"
            " '{\"type\": \"CP\"}' FROM entity WHERE kind = 'cpu' AND key = '0'"
        )
    conn.close()
    with SqliteReader.open(db) as reader:
        assert reading(reader, "ESALNXC", "steal")(("IFL", "0"), None, None) is None


def reading(
    reader: SqliteReader, name: str, column: str
) -> Callable[[EntityKey, int | None, int | None], list[IntervalValue] | None]:
    """The screen's column read for an entity and range, on the reader's only node."""
    node = reader.node(None)
    assert node is not None
    return partial(interval_values, reader, catalog.get(name), node, column)


@contextlib.contextmanager
def local_time(zone: str) -> Iterator[None]:
    was = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    try:
        yield
    finally:
        if was is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = was
        time.tzset()


DAY_US = 86_400_000_000
# around the 2026 changes: New York's in March and November, Lord Howe's half hour in April
TRANSITIONS_US = (1_773_014_400_000_000, 1_793_577_600_000_000, 1_775_318_400_000_000)


@pytest.mark.parametrize(
    "zone", ["America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "UTC"]
)
@settings(max_examples=40, deadline=None)
@given(
    around=st.sampled_from(TRANSITIONS_US),
    steps=st.lists(st.integers(1, 3_600_000_000), min_size=1, max_size=400),
    length_s=st.sampled_from([60, 300, 900, 1800, 3600, 7200, 86_400]),
)
def test_bucket_runs_put_each_end_where_bucket_end_does(
    zone: str, around: int, steps: list[int], length_s: int
) -> None:
    ends = []
    at = around - DAY_US
    for step in steps:
        at += step
        ends.append(at)
    with local_time(zone):
        runs = bucket_runs(ends, length_s * 1_000_000)
        want = [bucket_end(end, length_s * 1_000_000) for end in ends]
    assert runs[0][1] == 0 and runs[-1][2] == len(ends)
    assert all(a[2] == b[1] for a, b in itertools.pairwise(runs))
    assert [bucket for bucket, first, stop in runs for _ in range(first, stop)] == want


@pytest.mark.parametrize("zone", ["America/New_York", "Australia/Lord_Howe"])
@pytest.mark.parametrize("length_s", [900, 3600, 86_400])
def test_bucket_runs_across_each_change_of_the_local_offset(zone: str, length_s: int) -> None:
    """Every 5 minutes for two days around each change: the runs follow the offset."""
    length_us = length_s * 1_000_000
    for around in TRANSITIONS_US:
        ends = list(range(around - DAY_US, around + DAY_US, 300_000_000))
        with local_time(zone):
            runs = bucket_runs(ends, length_us)
            want = [bucket_end(end, length_us) for end in ends]
        assert [bucket for bucket, first, stop in runs for _ in range(first, stop)] == want


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.floats(min_value=-1e6, max_value=1e9, allow_nan=False, allow_infinity=False),
        min_size=1,
        max_size=300,
    )
)
def test_histogram_counts_each_value_in_its_bin(values: list[float]) -> None:
    """Counted by bisection per edge, each value is where the rule puts it: [edge, next
    edge), below the first edge in the first bin, the last bin closed."""
    h = histogram(values)
    bins = h.bins
    edges = [b.low for b in bins] + [bins[-1].high]
    counts = [0] * len(bins)
    counted = [v for v in values if v > 0] if h.log else values
    for v in counted:
        i = min(max(bisect.bisect_right(edges, v) - 1, 0), len(bins) - 1)
        counts[i] += 1
    assert [b.count for b in bins] == counts
    assert sum(counts) + h.below == len(values)
    assert all(isinstance(b, Bin) for b in bins)


class SlotsOnly:
    """A reader that declines every entity's own rows: the view builds the screen."""

    def __init__(self, inner: SqliteReader) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def entity_rows(self, *args: object, **kwargs: object) -> None:
        return None

    def kind_entity_rows(self, *args: object, **kwargs: object) -> None:
        return None


@pytest.mark.parametrize(
    ("name", "column", "recording", "options"),
    [
        ("ESALNXC", "steal", "host_db", ()),
        ("ESACRYPT", "ms_op_virt", "sim_db", ()),
        ("ESACRYPA", "util_pct", "sim_db", ()),
        ("ESACPUU", "total", "processors_db", ()),
        ("ESACPUU", "total", "processors_db", ("normalized",)),
    ],
)
def test_the_view_is_the_same_either_way(
    request: pytest.FixtureRequest, name: str, column: str, recording: str, options: tuple[str]
) -> None:
    """``d`` as the monitor draws it, from the entity's rows and from the screen built as
    recorded: the same lines, totals and subtotals included, with the view's options."""
    from esatui.tui.distribution import distribution_lines

    with SqliteReader.open(request.getfixturevalue(recording)) as reader:
        query = catalog.Query(interval_len_us=4 * 60_000_000, options=frozenset(options))
        bucketed = catalog.build_model(reader, name, query)
        keys = key_columns(bucketed.columns)
        shown = {entity_key(keys, r) for r in bucketed.rows}
        if name == "ESACPUU":  # the processor that changed type is built either way
            shown -= {("IFL", "2"), ("CP", "2")}
        for entity in sorted(shown):
            fast = distribution_lines(reader, bucketed, query, column, entity, 100)
            built = distribution_lines(
                SlotsOnly(reader),  # type: ignore[arg-type]
                bucketed,
                query,
                column,
                entity,
                100,
            )
            assert fast == built
            read = interval_values(
                reader, catalog.get(name), bucketed.node, column, entity, None, None, query.options
            )
            assert (read is None) is ("normalized" in options and "Tot" in entity), entity
            (counted,) = [line for line in fast if line.startswith("Histogram of ")]
            assert int(counted.split()[2]) > 0


def test_a_range_as_one_slot_holds_every_interval_of_it(host_db: Path) -> None:
    """``compare``'s one slot over a range (its spans merged into one) holds every interval
    of the window's own source in the range: CPU 0's user share of the summed ticks."""
    from esatui.screens.compare import range_model

    ticks = sql(
        host_db,
        "SELECT i.end_us, k.user_us, k.nice_us, k.system_us, k.idle_us, k.iowait_us, k.irq_us,"
        " k.softirq_us, k.steal_us FROM k_cpu k JOIN interval i ON i.id = k.interval_id"
        " JOIN entity e ON e.id = k.entity_id WHERE e.key = '0' ORDER BY i.end_us",
    )
    after, until = ticks[2][0], ticks[-3][0]
    inside = [row[1:] for row in ticks if after < row[0] <= until]
    user = sum(r[0] for r in inside) * 100 / sum(sum(r) for r in inside)
    with SqliteReader.open(host_db) as reader:
        model = range_model(reader, "ESALNXC", catalog.Query(after_us=after, until_us=until))
    (cpu0,) = [r for r in model.rows if r.values.get("id") == 0]
    assert len(inside) > 3 and cpu0.values["user"] == pytest.approx(user, rel=1e-12)
