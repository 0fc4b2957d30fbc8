"""D3R2 MRSTORSP (per processor): encrypted paging, decoded from records spelled out here.

What is published (IBM z/VM 6.4 Monitor Records, www.vm.ibm.com/pubs/mon640/MRSTORSP.HTML):
the 20-byte MRRECHDR, +20 STORSP_PFXCPUAD (u16, processor address) and the record's length,
744 bytes on z/VM 6.4 against 720 on 6.3 (mon630). IBM's perf tip D3R2EC and seed 003 say
the record carries, per processor, the 4 KB pages encrypted and decrypted and the CPU time
of each; *where* is in no readable public source. esatui's layout reads the 24 bytes 6.4
added as two u32 counts (+720, +724) and two CPU-timer-format times (+728, +736):
provisional, overridable with --monitor-layout (docs/MONITOR.md). The records below spell
that reading out byte by byte; what is IBM's (header, address, length) is checked apart.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from esatui.collectors.model import Sample
from esatui.collectors.monitor import encode as E
from esatui.collectors.monitor.assemble import IntervalAssembler
from esatui.collectors.monitor.frames import walk
from esatui.collectors.monitor.layout import LayoutTable
from esatui.collectors.monitor.layoutfile import builtin_layouts, load_layout_file
from tests.monitor import published as P

T = 1_500_000_000_000_000
MINUTE = 60_000_000
STORSP_64 = 744  # mon640
STORSP_63 = 720  # mon630
CPU_TIMER_US = 1 << 12


def storsp(unix_us: int, cpu: int, enc: int, dec: int, enc_us: int, dec_us: int) -> bytes:
    """A 744-byte MRSTORSP: PFXCPUAD at +20 (IBM), zeros to +720, the provisional tail."""
    body = struct.pack(">H698x", cpu)  # +20 .. +719
    tail = struct.pack(">IIQQ", enc, dec, enc_us * CPU_TIMER_US, dec_us * CPU_TIMER_US)
    rec = P.record(3, 2, unix_us, body + tail)
    assert len(rec) == STORSP_64
    return rec


def _samples(records_by_minute: list[list[bytes]], layouts: LayoutTable) -> list[Sample]:
    warnings: list[str] = []
    asm = IntervalAssembler(layouts, "monitor", warnings.append, now_us=lambda: T * 2)
    out: list[Sample] = []
    for i, records in enumerate(records_by_minute):
        data = E.frame_records([*records, E.end_of_interval(T + i * MINUTE)])
        for rec in walk(data, 0):
            got = asm.feed(data, rec)
            if got is not None:
                out.append(got)
    assert not warnings, warnings
    return out


def test_the_published_header_and_address() -> None:
    rec = storsp(T, 5, 1, 2, 3, 4)
    assert struct.unpack_from(">HHBBH", rec) == (744, 0, 3, 0, 2)
    lay = builtin_layouts().select(3, 2, len(rec))
    assert lay is not None and lay.length == STORSP_64
    d = lay.decode(rec, 0, len(rec))
    assert d.problems == []
    assert d.values == {
        "cpu_addr": 5,
        "enc_pages": 1,
        "dec_pages": 2,
        "enc_time": 3,
        "dec_time": 4,
    }


def test_the_encoder_writes_the_same_bytes() -> None:
    ours = E.paging_record(T, cpu=5, enc_pages=1, dec_pages=2, enc_us=3, dec_us=4)
    assert ours == storsp(T, 5, 1, 2, 3, 4)


def test_per_processor_readings_of_an_interval() -> None:
    samples = _samples(
        [
            [storsp(T, 0, 100, 50, 140, 60), storsp(T, 1, 200, 80, 290, 90)],
            [storsp(T + MINUTE, 0, 160, 70, 230, 80), storsp(T + MINUTE, 1, 300, 95, 440, 105)],
        ],
        builtin_layouts(),
    )
    last = samples[-1]
    readings = {r.key: r for r in last.readings if r.kind == "paging_enc"}
    assert set(readings) == {"0", "1"}
    assert readings["1"].values == {"enc_pages": 300, "dec_pages": 95, "enc_us": 440, "dec_us": 105}


def test_a_63_record_has_no_encrypted_paging_and_no_warning() -> None:
    short = P.record(3, 2, T, struct.pack(">H698x", 0))
    assert len(short) == STORSP_63
    samples = _samples([[short, E.crypto_record(T, {"virt_nq": 1})]], builtin_layouts())
    kinds = {r.kind for s in samples for r in s.readings}
    assert "paging_enc" not in kinds


def test_a_layout_file_moves_the_provisional_fields(tmp_path: Path) -> None:
    """When IBM's table is read, a layout file puts the fields where it says."""
    doc = {
        "format": "esatui-monitor-layout",
        "version": 1,
        "records": [
            {
                "domain": 3,
                "record": 2,
                "name": "MRSTORSP",
                "length": 744,
                "fields": [
                    {"name": "cpu_addr", "offset": 20, "type": "u16"},
                    {"name": "enc_time", "offset": 720, "type": "cputime", "unit": "us"},
                    {"name": "dec_time", "offset": 728, "type": "cputime", "unit": "us"},
                    {"name": "enc_pages", "offset": 736, "type": "u32"},
                    {"name": "dec_pages", "offset": 740, "type": "u32"},
                ],
            }
        ],
    }
    path = tmp_path / "layout.json"
    path.write_text(json.dumps(doc))
    rec = bytearray(storsp(T, 2, 0, 0, 0, 0))
    struct.pack_into(">QQII", rec, 720, 7 * CPU_TIMER_US, 8 * CPU_TIMER_US, 9, 10)
    lay = load_layout_file(path).select(3, 2, len(rec))
    assert lay is not None
    values = lay.decode(bytes(rec), 0, len(rec)).values
    assert values["enc_pages"] == 9 and values["enc_time"] == 7
