"""D0R16 MRSYTCUP decoded from records built byte by byte from the published structure
(tests/monitor/published.py cites IBM's MRSYTCUP page, zpmd and DIAGNOSE X'204' as Linux maps
it), never from esatui's encoder.

The CPU entry is DIAGNOSE X'204''s: LCUCACTM is its accumulated time (LPAR management
included) and LCUCLPTM the partition's own, so management is their difference, as hypfs reads
the same pair. Read the other way round, ESACPUU's LPAR mgmt showed the whole dispatch time.
"""

from __future__ import annotations

from esatui.collectors.model import Reading, Sample
from esatui.collectors.monitor import encode as E
from esatui.collectors.monitor.assemble import IntervalAssembler
from esatui.collectors.monitor.frames import walk
from esatui.collectors.monitor.layoutfile import builtin_layouts
from tests.monitor import published as P

T = 1_456_793_940_000_000  # 2016-03-01 00:59 UTC
MINUTE = 60_000_000

# One record, spelled out as IBM's MRSYTCUP page and zpmd lay it out: partition ZVMLP1 with
# one IFL, 50 s accumulated of which 49.9 s its own (104 bytes).
SPELLED_OUT = bytes.fromhex(
    # MRRECHDR: length 104, zeros, domain 0, reserved, record 16, TOD of T, 4 reserved
    "0068 0000 00 00 0010 d06028e0a9d00000 00000000"
    # +20 LCUPNAME 'ZVMLP1  ' in EBCDIC, +28 LCUPPNUM 1, CALFLGS 0, LCUPCPCT 1, a byte
    " e9e5d4d3d7f14040 01 00 01 00"
    # +32 CALCPUOF 64, +34 CALCPULN 40, +36 LCUTCTOD of T
    " 0040 0028 d06028e0a9d00000"
    # +44 LCPTYPE, +60 LCXPUPID, 3 bytes
    " 00000000000000000000000000000000 00 000000"
    # entry: LCUCPUID 2, LCUCWGHT 100, LCUCFLGS 0, a byte
    " 0002 0064 00 00"
    # LCUCACTM 50 s, LCUCLPTM 49.9 s (µs << 12, CPU-timer format)
    " 0000002faf080000 0000002f969e0000"
    # LCXCPTYP 'IFL' in EBCDIC, padded; 2 bytes
    " c9c6d340404040404040404040404040 0000"
)


def test_a_spelled_out_record_decodes_field_by_field() -> None:
    cpu = P.PartitionCpu(2, 50_000_000, 49_900_000)
    assert P.d0r16(T, "ZVMLP1", T, [cpu]) == SPELLED_OUT
    lay = builtin_layouts().select(0, 16, len(SPELLED_OUT))
    assert lay is not None
    d = lay.decode(SPELLED_OUT, 0, len(SPELLED_OUT))
    assert d.problems == []
    assert d.values["lpar_name"] == "ZVMLP1"
    assert d.values["data_tod"] == T
    assert [dict(e) for e in d.entries] == [
        {"cpu_addr": 2, "acc_time": 50_000_000, "lp_time": 49_900_000, "cpu_type_name": "IFL"}
    ]


def _samples(cpus_at: dict[int, list[P.PartitionCpu]]) -> list[Sample]:
    """Per minute: D0R2 for CPU 0 (published bytes) and ZVMLP1's D0R16 with ``cpus_at``."""
    asm = IntervalAssembler(builtin_layouts(), "monitor", lambda _m: None)
    samples: list[Sample] = []
    frames = [E.system_record(T, lpar_name="ZVMLP1")]
    for minute, cpus in cpus_at.items():
        at = T + minute * MINUTE
        times = P.ProcessorTimes(minute * 6_000_000, 0, 0, minute * 54_000_000)
        frames += [P.d0r2(at, 0, 3, times), P.d0r16(at, "ZVMLP1", at, cpus)]
        frames.append(E.end_of_interval(at))
    data = E.frame_records(frames)
    for rec in walk(data, 0):
        got = asm.feed(data, rec)
        if got is not None:
            samples.append(got)
    last = asm.finish()
    if last is not None:
        samples.append(last)
    return samples


def _lcpu(sample: Sample, key: str) -> Reading:
    found = [r for r in sample.readings if r.kind == "lcpu" and r.key == key]
    assert len(found) == 1
    return found[0]


def test_management_is_the_accumulated_time_beyond_the_partitions_own() -> None:
    """CPU 0 has D0R2 and D0R16; CPU 1 only D0R16 (its busy is the partition's own time)."""
    samples = _samples(
        {
            minute: [
                P.PartitionCpu(0, minute * 6_030_000, minute * 6_000_000),
                P.PartitionCpu(1, minute * 30_060_000, minute * 30_000_000),
            ]
            for minute in (1, 2)
        }
    )
    first, second = samples[-2:]
    cpu0 = {k: v - _lcpu(first, "0").values[k] for k, v in _lcpu(second, "0").values.items()}  # type: ignore[operator]
    assert cpu0["mgmt_us"] == 30_000  # 0.05% of the minute, not the 10% dispatched
    assert cpu0["steal_us"] == MINUTE - 6_000_000
    cpu1 = {k: v - _lcpu(first, "1").values[k] for k, v in _lcpu(second, "1").values.items()}  # type: ignore[operator]
    assert cpu1 == {
        "elapsed_us": MINUTE,
        "busy_us": 30_000_000,
        "mgmt_us": 60_000,
        "steal_us": MINUTE - 30_000_000,
    }
