from __future__ import annotations

from esatui.collectors.monitor import encode as E
from esatui.collectors.monitor.frames import WalkStats, walk
from esatui.collectors.monitor.header import FRAME, parse_header

T = 1_700_000_000_000_000


def _recs(n: int, size: int, domain: int = 7, record: int = 1) -> list[bytes]:
    return [E.raw_record(domain, record, T + i, bytes([i % 256]) * (size - 20)) for i in range(n)]


def _walk(
    buf: bytes, base: int
) -> tuple[list[tuple[int, int, int, int, int]], WalkStats, list[str]]:
    st = WalkStats()
    msgs: list[str] = []
    return list(walk(buf, base, st, msgs.append)), st, msgs


def test_records_back_to_back() -> None:
    recs = _recs(5, 100)
    got, st, msgs = _walk(b"".join(recs), 0)
    assert [(o, n) for o, n, *_ in got] == [(i * 100, 100) for i in range(5)]
    assert st.records == 5 and not msgs


def test_end_of_frame_moves_to_next_frame() -> None:
    recs = _recs(50, 1000)
    data = E.frame_records(recs, 0)
    got, _st, msgs = _walk(data, 0)
    assert len(got) == 50 and not msgs
    for off, length, *_ in got:
        assert off // FRAME == (off + length - 1) // FRAME  # never crosses a frame
    assert [d[4] for d in got] == [parse_header(r).tod for r in recs]


def test_unaligned_start_address() -> None:
    base = 0x1000_0F00  # 256 bytes before a frame boundary
    recs = _recs(3, 200)
    data = E.frame_records(recs, base)
    # the first record fits, the second does not: D1R13 then the next frame
    assert len(data) == 256 + 400
    got, _st, msgs = _walk(data, base)
    assert [o for o, *_ in got] == [0, 256, 456] and not msgs


def test_short_tail_of_frame_needs_no_end_record() -> None:
    base = FRAME - 10  # 10 bytes left in the first frame: too few for a header
    recs = _recs(2, 50)
    data = E.frame_records(recs, base)
    assert data[:10] == bytes(10)
    got, _st, msgs = _walk(data, base)
    assert [o for o, *_ in got] == [10, 60] and not msgs


def test_impossible_header_skips_the_rest_of_its_frame() -> None:
    recs = _recs(60, 100)
    data = bytearray(E.frame_records(recs, 0))
    data[300:302] = b"\x00\x05"  # the 4th record claims a length of 5
    got, st, msgs = _walk(bytes(data), 0)
    assert st.damaged == 1 and len(msgs) == 1 and "impossible record header" in msgs[0]
    # records 0-2 stay, the rest of frame 0 is lost, frame 1 reads fine
    offsets = [o for o, *_ in got]
    assert offsets[:3] == [0, 100, 200]
    assert all(o >= FRAME for o in offsets[3:])
    assert len(got) == 3 + (60 - 40)  # 40 records in frame 0 (4000 bytes)


def test_record_longer_than_its_span_is_damage() -> None:
    rec = E.raw_record(5, 9, T, bytes(80))
    got, st, msgs = _walk(rec[:60], 0)
    assert got == [] and st.damaged == 1 and msgs


def test_zero_padding_is_silent() -> None:
    data = _recs(1, 100)[0] + bytes(50)
    got, st, msgs = _walk(data, 0)
    assert len(got) == 1 and st.damaged == 0 and not msgs


def test_stray_tail_is_reported() -> None:
    data = _recs(1, 100)[0] + b"\x01\x02\x03"
    got, st, msgs = _walk(data, 0)
    assert len(got) == 1 and st.damaged == 1 and "stray" in msgs[0]
