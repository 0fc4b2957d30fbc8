"""Issue 13 item 3: a monitor record stamped with an impossible TOD is skipped with one
warning, and no stored interval has a negative or absurd duration (before: TOD 0 stored an
elapsed time of -2.2e15 µs and the next interval +3.98e15)."""

from __future__ import annotations

import struct
import tempfile
import threading
from pathlib import Path

from hypothesis import given

from esatui.collectors.base import SourceContext
from esatui.collectors.monitor import encode as E
from esatui.collectors.monitor.kinds import CRYPTO
from esatui.collectors.monitor.monwrite import MonwriteSource
from esatui.sampling.builder import IntervalBuilder
from esatui.sampling.session import Recording, WarnChannel
from tests.fixtures.reading import sql
from tests.monitor import fixtures as F
from tests.monitor.test_fuzz import FUZZ, damaged_file

TOD_AT = 8  # the u64 TOD in the 20-byte record header (SPEC section 3)
DAY_US = 86_400_000_000


def _stamped(record: bytes, tod: int) -> bytes:
    return record[:TOD_AT] + struct.pack(">Q", tod) + record[TOD_AT + 8 :]


def _is_d5r9(record: bytes) -> bool:
    return record[4] == 5 and struct.unpack_from(">H", record, 6)[0] == 9


def _file_with_d5r9_tod(path: Path, index: int, tod: int) -> None:
    intervals = F.seed000_intervals()
    iv = intervals[index]
    iv.records = [_stamped(r, tod) if _is_d5r9(r) else r for r in iv.records]
    path.write_bytes(b"".join(E.monwrite_intervals(intervals)))


def _import(path: Path, db: Path) -> list[str]:
    said: list[str] = []
    channel = WarnChannel(said.append)
    source = MonwriteSource(SourceContext(warn=channel), path)
    recording = Recording(db, [source], interval_s=60, hf_s=None, channel=channel)
    recording.run(threading.Event(), warn=said.append)
    return said


def test_a_record_stamped_tod_0_is_skipped_with_one_warning(tmp_path: Path) -> None:
    mon = tmp_path / "tod0.mon"
    _file_with_d5r9_tod(mon, 2, 0)
    said = _import(mon, tmp_path / "m.sqlite")
    durations = sql(tmp_path / "m.sqlite", "SELECT duration_us FROM interval")
    assert durations and all(0 < d <= DAY_US for (d,) in durations)
    assert {d for (d,) in durations} == {60_000_000}  # every monitor interval as written
    assert [m for m in said if "1900" in m and "skipped" in m] == [said[0]]
    assert len(said) == 1


def test_a_record_stamped_far_ahead_is_skipped(tmp_path: Path) -> None:
    mon = tmp_path / "ahead.mon"
    _file_with_d5r9_tod(mon, 3, 2**64 - 1)
    said = _import(mon, tmp_path / "m.sqlite")
    durations = sql(tmp_path / "m.sqlite", "SELECT duration_us FROM interval")
    assert durations and all(0 < d <= DAY_US for (d,) in durations)
    assert len(said) == 1 and "ahead of the clock" in said[0]


@FUZZ
@given(damaged_file())
def test_the_damaged_monwrite_corpus_never_gives_an_absurd_duration(data: bytes) -> None:
    """Every interval the fuzzed files give lasts a positive time of at most a day, and
    starts no earlier than 1990."""
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "f.mon"
        p.write_bytes(data)
        src = MonwriteSource(SourceContext(), p)
        builder = IntervalBuilder("monitor", src.kinds)
        for sample in src.samples():
            interval = builder.add(sample)
            if interval is not None:
                assert 0 < interval.duration_us <= DAY_US
                assert interval.start_us >= 631_152_000_000_000
                assert CRYPTO.name in {r.kind for r in interval.rows} or interval.rows
