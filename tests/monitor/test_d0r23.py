"""D0R23 MRSYTLCK and D0R2's spin fields, decoded from records spelled out byte by byte, and
ESALOCK reproducing seed 001's three measurements from a MONWRITE file of them.

What is published: IBM's MRSYTLCK page (mon530, mon610, mon730): one record per sample
interval, a 32-byte fixed part, one entry per formal spin lock with its spin counts and
times, exclusive and shared. Where each field sits comes only from zpmd's unfinished reading
of z/VM 5.3 (``struct d0r23``, ``d0r23ext``): provisional, overridable (docs/MONITOR.md). The
records here are packed by ``tests/monitor/published.py`` from that reading, never with
esatui's encoder or layout table; the MONWRITE file around them is the project's framing
(tested on its own in test_monwrite.py).

Seed 001 (IBM, *Linux Guest Crypto on z990*, VMPRF): "Avg Spin Lock Rate, Spin Time, Pct
Spin Time" 4,969/s × 2.037 µs = 1.012% (z900, 8 processors, z/VM 4.3.0), 13,174/s × 24.989
µs = 32.92% (z990, 16 processors, 4.3.0), 5,772/s × 8.984 µs = 5.186% (16 processors, 4.4.0).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from esatui.cli import main
from esatui.collectors.monitor import encode as E
from esatui.collectors.monitor.assemble import IntervalAssembler
from esatui.collectors.monitor.frames import walk
from esatui.collectors.monitor.layoutfile import builtin_layouts, load_layout_file
from esatui.db.sqlite_reader import SqliteReader
from esatui.screens import catalog
from esatui.screens.model import Level, RowKind, ScreenModel
from tests.monitor import fixtures as F
from tests.monitor import published as P

T = 1_070_000_000_000_000  # 2003-11-28, the z/VM 4.4.0 days of seed 001's runs
MINUTE = 60_000_000

SPELLED_OUT = bytes.fromhex(
    # MRRECHDR: length 96, zeros, domain 0, reserved, record 23, TOD of T, 4 reserved
    "0060 0000 00 00 0017 ba63912a58000000 00000000"
    # +20 CALNMLKS 2 entries, +24 CALENTSZ 32 bytes, +26 CALENTDSP 32, 4 reserved
    " 00000002 0020 0020 00000000"
    # entry 1: "SRMSLOCK" in EBCDIC, CALXSCNT 1000, CALXTIME 2,500 µs, CALSSCNT 10, CALSTIME 7 µs
    " e2d9d4e2d3d6c3d2 000003e8 00000000009c4000 0000000a 0000000000007000"
    # entry 2: "HCPTRQLK", 3 exclusive spins of 4 µs in all, no shared
    " c8c3d7e3d9d8d3d2 00000003 0000000000004000 00000000 0000000000000000"
)


def test_a_spelled_out_record_decodes_field_by_field() -> None:
    rec = SPELLED_OUT
    assert len(rec) == 96 and rec == P.d0r23(
        T, [P.LockSpins("SRMSLOCK", 1000, 2500, 10, 7), P.LockSpins("HCPTRQLK", 3, 4)]
    )
    lay = builtin_layouts().select(0, 23, len(rec))
    assert lay is not None and lay.length == 32
    d = lay.decode(rec, 0, len(rec))
    assert d.problems == []
    assert d.values == {"lock_count": 2, "entry_len": 32, "entry_offset": 32}
    assert d.entries == [
        {
            "lock_id": "SRMSLOCK",
            "excl_spins": 1000,
            "excl_time": 2500,
            "shared_spins": 10,
            "shared_time": 7,
        },
        {
            "lock_id": "HCPTRQLK",
            "excl_spins": 3,
            "excl_time": 4,
            "shared_spins": 0,
            "shared_time": 0,
        },
    ]


def test_the_encoder_writes_the_published_bytes() -> None:
    locks = [P.LockSpins("SRMSLOCK", 1000, 2500, 10, 7), P.LockSpins("HCPTRQLK", 3, 4)]
    ours = E.spin_lock_record(
        T,
        [
            E.LockCounters(x.name, x.excl_spins, x.excl_us, x.shared_spins, x.shared_us)
            for x in locks
        ],
    )
    assert ours == P.d0r23(T, locks)
    times = P.ProcessorTimes(5, 6, 7, 8, spin=9, spins=10)
    ours = E.processor_record(
        T, cpu=3, cpu_type=0, emul_us=5, user_us=6, syst_us=7, wait_us=8, spin_us=9, spins=10
    )
    # the count-down start of PFXPRBTM is the one byte range allowed to differ
    assert ours[:24] + ours[32:] == (p := P.d0r2(T, 3, 0, times))[:24] + p[32:]


def test_a_later_levels_longer_entries_are_found_by_the_records_own_size() -> None:
    rec = P.d0r23(T, [P.LockSpins("SRMSLOCK", 5, 6), P.LockSpins("DSVLOCK", 7, 8)], entry_len=48)
    lay = builtin_layouts().select(0, 23, len(rec))
    assert lay is not None
    d = lay.decode(rec, 0, len(rec))
    assert d.problems == []
    assert [(e["lock_id"], e["excl_spins"], e["excl_time"]) for e in d.entries] == [
        ("SRMSLOCK", 5, 6),
        ("DSVLOCK", 7, 8),
    ]


def test_a_second_d0r23_starts_the_next_interval() -> None:
    asm = IntervalAssembler(builtin_layouts(), "monitor", lambda m: None, now_us=lambda: T * 2)
    data = E.frame_records(
        [
            P.d0r23(T, [P.LockSpins("SRMSLOCK", 1, 1)]),
            P.d0r23(T + 1, [P.LockSpins("SRMSLOCK", 2, 2)]),
        ]
    )
    got = [s for rec in walk(data, 0) if (s := asm.feed(data, rec)) is not None]
    assert len(got) == 1
    last = asm.finish()
    assert last is not None
    (lock,) = [r for r in last.readings if r.kind == "spin_lock"]
    assert lock.key == "SRMSLOCK" and lock.values["excl_spins"] == 2


def test_a_layout_file_moves_the_provisional_fields(tmp_path: Path) -> None:
    """When IBM's table is read, a layout file puts the entry fields where it says."""
    doc = {
        "format": "esatui-monitor-layout",
        "version": 1,
        "records": [
            {
                "domain": 0,
                "record": 23,
                "name": "MRSYTLCK",
                "length": 32,
                "fields": [
                    {"name": "lock_count", "offset": 20, "type": "u32"},
                    {"name": "entry_len", "offset": 24, "type": "u16"},
                    {"name": "entry_offset", "offset": 26, "type": "u16"},
                ],
                "entries": {
                    "start": "entry_offset",
                    "count": "lock_count",
                    "length": "entry_len",
                    "fields": [
                        {"name": "lock_id", "offset": 0, "type": "ebcdic", "size": 8},
                        {"name": "excl_time", "offset": 8, "type": "cputime", "unit": "us"},
                        {"name": "excl_spins", "offset": 16, "type": "u32"},
                    ],
                },
            }
        ],
    }
    path = tmp_path / "layout.json"
    path.write_text(json.dumps(doc))
    rec = bytearray(P.d0r23(T, [P.LockSpins("SRMSLOCK", 0, 0)]))
    struct.pack_into(">QI", rec, 32 + 8, 11 * P.CPU_TIMER_US, 12)
    lay = load_layout_file(path).select(0, 23, len(rec))
    assert lay is not None
    (entry,) = lay.decode(bytes(rec), 0, len(rec)).entries
    assert entry["excl_time"] == 11 and entry["excl_spins"] == 12


# --- seed 001 through a MONWRITE file ------------------------------------------------------

# (processors, spins per second, µs per spin, % of one processor) as VMPRF printed them
SEED001 = (
    ("E2C06BV3", 8, 4969, 2.037, 1.012),
    ("E3503BV2", 16, 13174, 24.989, 32.92),
    ("E3521BV1", 16, 5772, 8.984, 5.186),
)
# how the spins split over the locks (the scheduler lock took them: seed 001's finding)
SPLIT = (("SRMSLOCK", 0.80, 0.12), ("HCPTRQLK", 0.05, 0.0), ("RSAAVLLK", 0.03, 0.0))
CP_SHARE = 0.25  # each processor's CP time (user + system) in the stream, share of the minute


# the minutes (after the baseline) that carry the three runs: minute 2 brings processors 8-15
# online (they have no delta until minute 3), at the 16-way's rates
MEASURED = (1, 3, 4)


def _seed001_intervals(*, with_d0r23: bool) -> list[E.IntervalRecords]:
    """A baseline minute, then a minute per seed 001 run (and one to vary on the 16-way's
    other processors), counters cumulative."""
    locks = {
        name: P.LockSpins(name, 10_000 * i, 20_000 * i, 50 * i, 60 * i)
        for i, (name, *_) in enumerate(SPLIT)
    }
    cpus = {
        cpu: P.ProcessorTimes(0, 0, 0, 0, spin=1000 * cpu, spins=100 * cpu) for cpu in range(16)
    }
    out: list[E.IntervalRecords] = []
    for n, run in enumerate((None, SEED001[0], SEED001[1], *SEED001[1:])):
        at = T + n * MINUTE
        spins = spin_us = 0
        online = 8
        if run is not None:
            _name, online, rate, us, _pct = run
            spins = rate * 60
            spin_us = round(spins * us)
        # the locks' shares, the remainder on the last one, so the total is exact
        given = given_us = 0
        for i, (name, excl, shared) in enumerate(SPLIT):
            was = locks[name]
            if i == len(SPLIT) - 1:
                ex, ex_us, sh, sh_us = spins - given, spin_us - given_us, 0, 0
            else:
                ex, sh = round(spins * excl), round(spins * shared)
                ex_us, sh_us = round(spin_us * excl), round(spin_us * shared)
            given, given_us = given + ex + sh, given_us + ex_us + sh_us
            locks[name] = P.LockSpins(
                name,
                was.excl_spins + ex,
                was.excl_us + ex_us,
                was.shared_spins + sh,
                was.shared_us + sh_us,
            )
        records = [E.sample_config_record(at, 60)] if run is None else []
        for cpu in range(online):
            was_t = cpus[cpu]
            share, share_us = spins // online, spin_us // online
            if cpu == online - 1:
                share, share_us = spins - share * (online - 1), spin_us - share_us * (online - 1)
            cpus[cpu] = P.ProcessorTimes(
                was_t.emul,
                was_t.user + round(MINUTE * CP_SHARE / 2),
                was_t.syst + round(MINUTE * CP_SHARE / 2),
                was_t.wait + round(MINUTE * (1 - CP_SHARE)),
                spin=was_t.spin + share_us,
                spins=was_t.spins + share,
            )
            records.append(P.d0r2(at, cpu, 3, cpus[cpu]))
        if with_d0r23:
            records.append(P.d0r23(at, list(locks.values())))
        out.append(E.IntervalRecords(at, records))
    return out


def _esalock(tmp_path: Path, *, with_d0r23: bool) -> ScreenModel:
    mon = F.write_monwrite(tmp_path / "seed001.mon", _seed001_intervals(with_d0r23=with_d0r23))
    db = tmp_path / "db.sqlite"
    assert main(["collect", "--source", f"monwrite:{mon}", "--db", str(db)]) == 0
    with SqliteReader.open(db) as reader:
        return catalog.build_model(reader, "ESALOCK", catalog.Query())


@pytest.mark.parametrize("with_d0r23", [True, False], ids=["D0R23", "D0R2-only"])
def test_esalock_shows_seed_001s_three_measurements(tmp_path: Path, with_d0r23: bool) -> None:
    model = _esalock(tmp_path, with_d0r23=with_d0r23)
    by_minute = {(r.end_us - T) // MINUTE: r for r in model.rows if r.kind is RowKind.TOTAL}
    assert sorted(by_minute) == [1, 2, 3, 4]
    totals = [by_minute[m] for m in MEASURED]
    for row, (_run, online, rate, us, pct) in zip(totals, SEED001, strict=True):
        v = row.values
        assert v["lock"] == "Total"
        assert v["source"] == ("D0R23" if with_d0r23 else "D0R2")
        assert round(float(v["spins_s"]), 0) == rate  # type: ignore[arg-type]
        assert round(float(v["us_spin"]), 3) == pytest.approx(us)  # type: ignore[arg-type]
        assert float(v["pct_cpu"]) == pytest.approx(pct, abs=0.0006)  # type: ignore[arg-type]
        assert float(v["pct_lpar"]) == pytest.approx(pct / online, abs=0.0001)  # type: ignore[arg-type]
        assert float(v["pct_cp"]) == pytest.approx(  # type: ignore[arg-type]
            pct / (online * CP_SHARE * 100) * 100, rel=1e-3
        )
    # the highlight marks the 16-way's 32.92% and leaves the normal 1% and 5.186% alone
    marks = [r.levels.get("pct_cpu", Level.NONE) for r in totals]
    assert marks == [Level.NONE, Level.CRIT, Level.NONE]


def test_esalock_names_the_locks_hottest_first(tmp_path: Path) -> None:
    model = _esalock(tmp_path, with_d0r23=True)
    bad_run = [r for r in model.rows if r.end_us == T + MEASURED[1] * MINUTE]
    assert [r.values["lock"] for r in bad_run] == ["SRMSLOCK", "HCPTRQLK", "RSAAVLLK", "Total"]
    srm = bad_run[0].values
    assert float(srm["pct_cpu"]) == pytest.approx(32.92 * 0.92, abs=0.001)  # type: ignore[arg-type]
    assert float(srm["shared_s"]) == pytest.approx(13174 * 0.12, abs=0.1)  # type: ignore[arg-type]
    assert bad_run[0].levels["pct_cpu"] is Level.CRIT


def test_esassum_shows_the_spinning_and_marks_the_same_run(tmp_path: Path) -> None:
    mon = F.write_monwrite(tmp_path / "seed001.mon", _seed001_intervals(with_d0r23=True))
    db = tmp_path / "db.sqlite"
    assert main(["collect", "--source", f"monwrite:{mon}", "--db", str(db)]) == 0
    with SqliteReader.open(db) as reader:
        model = catalog.build_model(reader, "ESASSUM", catalog.Query())
    (col,) = [c for c in model.columns if c.id == "spin_pct"]
    assert col.drill == "ESALOCK" and col.provisional
    rows = {(r.end_us - T) // MINUTE: r for r in model.rows}
    for minute, (*_, pct) in zip(MEASURED, SEED001, strict=True):
        assert float(rows[minute].values["spin_pct"]) == pytest.approx(pct, abs=0.0006)  # type: ignore[arg-type]
    marked = sorted(m for m, r in rows.items() if r.levels.get("spin_pct", Level.NONE))
    assert marked == [2, 3]  # the 16-way at 4.3.0's rates: varied on, then measured


def test_cp_time_drills_into_esalock() -> None:
    """ESACPUU's CP system time and ESAPOLL's CP cost lead to the spin locks behind them."""
    drills = {
        (name, c.id): c.drill
        for name in ("ESACPUU", "ESAPOLL")
        for c in catalog.get(name).columns
        if c.drill
    }
    assert drills == {
        ("ESACPUU", "syst"): "ESALOCK",
        ("ESAPOLL", "cp_busy_per_kvnq"): "ESALOCK",
        ("ESAPOLL", "cp_us_op"): "ESALOCK",
    }


@pytest.mark.parametrize(
    ("count", "entry_len", "problem"),
    [(3, 32, "3 entries announced, 1 present"), (1, 0, "entry 0 has no usable length")],
)
def test_a_damaged_record_is_said_once_and_loses_nothing_else(
    count: int, entry_len: int, problem: str
) -> None:
    rec = bytearray(P.d0r23(T, [P.LockSpins("SRMSLOCK", 5, 6)]))
    struct.pack_into(">IH", rec, 20, count, entry_len)
    warnings: list[str] = []
    asm = IntervalAssembler(builtin_layouts(), "monitor", warnings.append, now_us=lambda: T * 2)
    data = E.frame_records(
        [bytes(rec), P.d0r2(T, 0, 3, P.ProcessorTimes(1, 2, 3, 4)), E.end_of_interval(T)]
    )
    got = [s for r in walk(data, 0) if (s := asm.feed(data, r)) is not None]
    assert len(got) == 1 and any(problem in w for w in warnings), warnings
    kinds = {r.kind for r in got[0].readings}
    assert "lcpu" in kinds  # the processor's record is kept
    locks = [r for r in got[0].readings if r.kind == "spin_lock"]
    assert [r.key for r in locks] == (["SRMSLOCK"] if entry_len else [])
