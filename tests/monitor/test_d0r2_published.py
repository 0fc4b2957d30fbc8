"""D0R2 MRSYTPRP decoded from records built byte by byte from the published structure
(tests/monitor/published.py cites IBM's z/VM 6.4 page and zpmd), never from esatui's encoder.

IBM's page settles the two fields that decide ESACPUU's split: PFXPRBTM (+24) counts *down*,
and PFXUTIME (+32) is the time charged to users *including* their emulation. So CP's time on
the guests' behalf is ΔPFXUTIME − Δemulation, and seed 000's ESACPUU rows (User 0.7 beside
Emul 10.1) come out only with both readings right.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from esatui.collectors.kinds import LCPU
from esatui.collectors.model import Sample
from esatui.collectors.monitor import encode as E
from esatui.collectors.monitor.assemble import IntervalAssembler
from esatui.collectors.monitor.frames import walk
from esatui.collectors.monitor.layoutfile import builtin_layouts
from esatui.db.sqlite_reader import SqliteReader
from esatui.db.store import Store
from esatui.screens import catalog
from esatui.screens.model import RowKind
from tests.fixtures.recording import write
from tests.monitor import published as P

T = 1_456_793_940_000_000  # 2016-03-01 00:59 UTC
MINUTE = 60_000_000

# One record, spelled out as IBM's MRSYTPRP page and zpmd lay it out (108 bytes).
SPELLED_OUT = bytes.fromhex(
    # MRRECHDR: length 108, zeros, domain 0, reserved, record 2, TOD of T, 4 reserved
    "006c 0000 00 00 0002 d06028e0a9d00000 00000000"
    # +20 PFXCPUAD 0, +22 PLSCUHAF 0
    " 0000 0000"
    # +24 PFXPRBTM: X'7FFFFFFF_00000000' counted down by 46.0 s (46,000,000 µs << 12)
    " 7fffffd321880000"
    # +32 PFXUTIME: 48.52 s charged to users (46.0 s emulation + 2.52 s CP on their behalf)
    " 0000002e45b40000"
    # +40 PFXTMSYS 9.36 s; +48 20 reserved bytes
    " 00000008ed280000 0000000000000000 0000000000000000 00000000"
    # +68 PFXTOTWT 0; +76 PFXRUNCI, PFXRUNPF, PFXRUNCP, CALFSTPH; +92 PFXSPINT; +100 PFXSPINC
    " 0000000000000000 00000000 00000000 00000000 00000000 0000000000000000 00000000"
    # +104 PFXCPUTY 0 (CP), 3 reserved
    " 00 000000"
)


def _decode(record: bytes) -> dict[str, object]:
    lay = builtin_layouts().select(0, 2, len(record))
    assert lay is not None
    d = lay.decode(record, 0, len(record))
    assert d.problems == []
    return dict(d.values)


def test_a_spelled_out_record_decodes_field_by_field() -> None:
    times = P.ProcessorTimes(46_000_000, 2_520_000, 9_360_000, 0)
    assert P.d0r2(T, 0, 0, times) == SPELLED_OUT
    values = _decode(SPELLED_OUT)
    start_offset = (0x7FFF_FFFF_FFFF_FFFF - P.PRBTM_START) >> 12  # 1,048,575 µs
    assert values == {
        "cpu_addr": 0,
        "emul_time": 46_000_000 + start_offset,
        "charged_time": 48_520_000,
        "syst_time": 9_360_000,
        "wait_time": 0,
        "spin_time": 0,
        "spin_count": 0,
        "cpu_type": 0,
    }


def test_the_count_down_start_never_reaches_a_delta() -> None:
    """The emulation of an interval is previous − current of PFXPRBTM, whichever X'7FFF...'
    the timer started at."""
    for start in (P.PRBTM_START, 0x7FFF_FFFF_FFFF_FFFF):
        before = bytearray(P.d0r2(T, 1, 3, P.ProcessorTimes(5_000_000, 0, 0, 0)))
        after = bytearray(P.d0r2(T + MINUTE, 1, 3, P.ProcessorTimes(16_460_000, 0, 0, 0)))
        for rec, emul in ((before, 5_000_000), (after, 16_460_000)):
            rec[24:32] = (start - (emul << 12)).to_bytes(8, "big")
        now, was = _decode(bytes(after))["emul_time"], _decode(bytes(before))["emul_time"]
        assert isinstance(now, int) and isinstance(was, int)
        assert now - was == 11_460_000


def test_the_encoder_writes_the_published_bytes_but_for_the_start() -> None:
    """esatui's encoder (used by the simulator) writes the same record, with the count-down
    timer started at X'7FFFFFFF_FFFFFFFF' instead of the fixture's X'7FFFFFFF_00000000'."""
    ours = E.processor_record(
        T, cpu=0, cpu_type=0, emul_us=46_000_000, user_us=2_520_000, syst_us=9_360_000, wait_us=0
    )
    assert len(ours) == len(SPELLED_OUT)
    assert ours[:24] == SPELLED_OUT[:24] and ours[32:] == SPELLED_OUT[32:]
    assert int.from_bytes(ours[24:32], "big") == 0x7FFF_FFFF_FFFF_FFFF - (46_000_000 << 12)


# seed 000, "CP Overhead in Mode VM": ESACPUU (% of one processor) at 00:47, 00:54, 00:59
# (minute: {cpu: (type code, emul, user, syst, idle, steal)})
SEED000 = {
    47: {
        0: (0, 10.1, 0.7, 2.2, 86.7, 0.3),
        1: (3, 0.4, 0.1, 0.1, 99.2, 0.1),
        2: (3, 0.3, 0.1, 0.1, 99.5, 0.0),
    },
    54: {
        0: (0, 10.6, 0.7, 45.4, 42.6, 0.7),
        1: (3, 17.9, 5.8, 1.3, 69.7, 5.3),
        2: (3, 18.8, 6.1, 1.3, 68.5, 5.3),
    },
    59: {
        0: (0, 76.6, 4.2, 15.6, 0.0, 3.6),
        1: (3, 19.1, 5.5, 2.3, 71.9, 1.3),
        2: (3, 19.3, 5.5, 2.3, 71.7, 1.2),
    },
}


def _samples() -> list[Sample]:
    """D0R2 records (only) for 00:46, then each seed minute after an idle one, assembled."""
    totals = {cpu: P.ProcessorTimes(0, 0, 0, 0) for cpu in SEED000[47]}
    types = {cpu: row[0] for cpu, row in SEED000[47].items()}
    day = T - 59 * MINUTE
    samples: list[Sample] = []
    asm = IntervalAssembler(builtin_layouts(), "monitor", lambda _m: None)

    def emit(minute: int, rows: dict[int, tuple[int, float, float, float, float, float]]) -> None:
        at = day + minute * MINUTE
        records = []
        for cpu, (_t, emul, user, syst, idle, _steal) in rows.items():
            was = totals[cpu]
            totals[cpu] = now = P.ProcessorTimes(
                was.emul + round(emul * 600_000),  # % of a minute in µs
                was.user + round(user * 600_000),
                was.syst + round(syst * 600_000),
                was.wait + round(idle * 600_000),
            )
            records.append(P.d0r2(at, cpu, types[cpu], now))
        data = E.frame_records([*records, E.end_of_interval(at)])
        for rec in walk(data, 0):
            got = asm.feed(data, rec)
            if got is not None:
                samples.append(got)

    idle = {cpu: (t, 0.0, 0.0, 0.0, 100.0, 0.0) for cpu, (t, *_) in SEED000[47].items()}
    emit(46, idle)
    for minute, rows in SEED000.items():
        emit(minute - 1, idle)
        emit(minute, rows)
    return samples


def test_esacpuu_reproduces_seed_000_from_published_d0r2_bytes(tmp_path: Path) -> None:
    db = tmp_path / "d0r2.sqlite"
    with Store.open(db) as store:
        write(store, "monitor", (LCPU,), _samples(), node="VMSYS1")
    with SqliteReader.open(db) as reader:
        for minute, expected in SEED000.items():
            end = T - (59 - minute) * MINUTE
            model = catalog.build_model(
                reader, "ESACPUU", catalog.Query(after_us=end - MINUTE, until_us=end)
            )
            rows = {r.values["id"]: r.values for r in model.rows if r.kind is RowKind.DATA}
            assert set(rows) == {0, 1, 2}
            for cpu, (_t, emul, user, syst, idle, steal) in expected.items():
                got = rows[cpu]
                assert got["type"] == ("CP" if cpu == 0 else "IFL")
                assert got["emul"] == pytest.approx(emul, abs=1e-6)
                assert got["user"] == pytest.approx(user, abs=1e-6)  # not emul + user
                assert got["syst"] == pytest.approx(syst, abs=1e-6)
                assert got["idle"] == pytest.approx(idle, abs=1e-6)
                # no D0R16 here: steal is what is left of 100% (seed's rounding: ±0.1)
                assert got["steal"] == pytest.approx(steal, abs=0.15)
