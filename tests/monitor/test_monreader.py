"""The monreader stream: sets, reads split anywhere, errors, the busy device."""

from __future__ import annotations

import errno
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esatui.collectors.base import SourceContext, SourceError
from esatui.collectors.model import SampleFlag
from esatui.collectors.monitor import encode as E
from esatui.collectors.monitor.mce import ControlElement, pack_mce
from esatui.collectors.monitor.monreader import MonreaderSource
from esatui.collectors.monitor.stream import SetAssembler, split_set
from tests.monitor import fixtures as F
from tests.monitor.conftest import Warnings, read_script, samples_of

T = 1_700_000_040_000_000
M = 60_000_000


def _intervals(n: int = 3) -> list[E.IntervalRecords]:
    ivs = []
    for i in range(n):
        us = T + i * M
        recs = [E.crypto_record(us, {"virt_nq": 10 * i, "vserv_us": 999 * i})]
        recs += E.cmb_records(us, [E.CmbSpec(ap, ((i, i),) * 6) for ap in range(3)], per_record=2)
        ivs.append(E.IntervalRecords(us, recs))
    return ivs


SCRIPT = E.monreader_intervals(_intervals())
WHOLE = samples_of(SCRIPT)


def test_whole_stream() -> None:
    assert len(WHOLE) == 3
    assert [s.time_us for s in WHOLE] == [T, T + M, T + 2 * M]
    assert [len(s.readings) for s in WHOLE] == [4, 4, 4]


def test_split_at_every_byte_position() -> None:
    total = sum(len(x) for x in SCRIPT)
    for cut in range(1, total):
        assert samples_of(E.rechunk(SCRIPT, [cut])) == WHOLE, cut


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4000), max_size=40))
def test_split_anywhere_many_times(cuts: list[int]) -> None:
    assert samples_of(E.rechunk(SCRIPT, cuts)) == WHOLE


def test_threaded_source_one_byte_reads(ctx: SourceContext) -> None:
    assert read_script(ctx, SCRIPT, max_read=1) == WHOLE
    assert read_script(ctx, SCRIPT) == WHOLE


def test_several_elements_in_one_set() -> None:
    ivs = _intervals(2)
    spans = [
        E.interval_span(iv.records, 0x200000 + i * 0x10000, iv.end_us) for i, iv in enumerate(ivs)
    ]
    script = E.monreader_script([spans])
    assert [s.time_us for s in samples_of(script)] == [T, T + M]


def test_a_set_is_valid_only_after_its_zero_byte_read() -> None:
    script = SCRIPT[:-1]  # the last set never closes
    got = samples_of(script)
    assert got == WHOLE[:2]


def test_eoverflow_keeps_data_and_flags_the_next_sample(warnings: Warnings) -> None:
    # set 1 complete, set 2 read but ended by EOVERFLOW instead of a 0-byte read, set 3 fine
    script: Sequence[bytes | int] = [SCRIPT[0], b"", SCRIPT[2], errno.EOVERFLOW, SCRIPT[4], b""]
    got = samples_of(script, warnings)
    assert [s.time_us for s in got] == [T, T + M, T + 2 * M]
    # the records after set 2 may be missing: the interval ending at set 3 is flagged
    assert [bool(s.flags & SampleFlag.GAP) for s in got] == [False, False, True]
    assert any("EOVERFLOW" in w for w in warnings)


@pytest.mark.parametrize("err", [errno.EIO, errno.EFAULT])
def test_eio_efault_discard_the_set(err: int, warnings: Warnings) -> None:
    half = SCRIPT[2][: len(SCRIPT[2]) // 2]
    script: Sequence[bytes | int] = [SCRIPT[0], b"", half, err, SCRIPT[4], b""]
    got = samples_of(script, warnings)
    assert [s.time_us for s in got] == [T, T + 2 * M]
    assert got[1].flags & SampleFlag.GAP
    assert any("discarded" in w for w in warnings)


def test_eagain_and_eintr_lose_nothing() -> None:
    script: list[bytes | int] = []
    for item in SCRIPT:
        script += [errno.EAGAIN, item, errno.EINTR]
    assert samples_of(script) == WHOLE


def test_garbage_set_is_skipped_with_a_gap(warnings: Warnings) -> None:
    bad = pack_mce(ControlElement(0xE2, 0x4000, 0x1000, 0x0FFF)) + b"junk"
    script = [SCRIPT[0], b"", bad, b"", SCRIPT[2], b""]
    got = samples_of(script, warnings)
    assert [s.time_us for s in got] == [T, T + M]
    assert got[1].flags & SampleFlag.GAP


def test_split_set_reasons() -> None:
    ok = E.interval_span([E.crypto_record(T, {})])
    good = pack_mce(ok.element) + ok.data
    parts = list(split_set(good + b"\x01\x02"))
    assert isinstance(parts[0], tuple) and isinstance(parts[1], str)
    parts = list(split_set(pack_mce(ControlElement(0, 1, 0, 10)) + bytes(11)))
    assert parts == ["control element at byte 0 of the set unusable (type byte is zero)"]
    parts = list(split_set(pack_mce(ControlElement(0xE2, 1, 0, 100)) + bytes(11)))
    assert parts == ["control element announces 101 bytes, only 11 follow"]


def test_busy_device_says_only_one_reader(ctx: SourceContext) -> None:
    def busy(_path: str) -> object:
        raise OSError(errno.EBUSY, "Device or resource busy")

    src = MonreaderSource(ctx, "/dev/monreader", opener=busy)  # type: ignore[arg-type]
    with pytest.raises(SourceError, match="only one reader is allowed"):
        next(iter(src.samples()))


def test_other_open_errors_are_one_line(ctx: SourceContext) -> None:
    for err, text in [
        (errno.EIO, r"\*MONITOR"),
        (errno.EACCES, "permission"),
        (errno.ENOENT, "module"),
    ]:

        def fail(_path: str, err: int = err) -> object:
            raise OSError(err, "x")

        src = MonreaderSource(ctx, "/dev/monreader", opener=fail)  # type: ignore[arg-type]
        with pytest.raises(SourceError, match=text) as exc:
            next(iter(src.samples()))
        assert "\n" not in str(exc.value)


def test_probe(tmp_path: Path, warnings: Warnings) -> None:
    ctx = SourceContext(root=tmp_path, warn=warnings)
    src = MonreaderSource(ctx)
    assert src.device == str(tmp_path / "dev/monreader")
    av = src.probe()
    assert not av.available and "not present" in av.reason
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev/monreader").write_bytes(b"")
    av = src.probe()
    assert not av.available and "not a character device" in av.reason


def test_seed_data_through_monreader(ctx: SourceContext) -> None:
    ivs = F.seed000_intervals()
    got = read_script(ctx, E.monreader_intervals(ivs), max_read=999)
    rows = F.esacrypa_rows(got[-2], got[-1])
    assert f"{rows['00']['rsa2048_crt_ms_op']:.2f}" == "2.16"


def test_regular_file_is_refused(tmp_path: Path, ctx: SourceContext) -> None:
    f = tmp_path / "capture"
    f.write_bytes(b"x")
    with pytest.raises(SourceError, match="monwrite:FILE"):
        next(iter(MonreaderSource(ctx, str(f)).samples()))


def test_file_device_reads_and_wakes_up(tmp_path: Path) -> None:
    import os
    import threading

    from esatui.collectors.monitor.monreader import FileDevice

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    wfd: list[int] = []
    opener = threading.Thread(target=lambda: wfd.append(os.open(fifo, os.O_WRONLY)))
    opener.start()
    dev = FileDevice(str(fifo))
    opener.join()
    with pytest.raises(InterruptedError):
        dev.read(10)  # nothing yet: wakes up after half a second
    os.write(wfd[0], b"abc")
    assert dev.read(10) == b"abc"
    os.close(wfd[0])
    dev.close()
    with pytest.raises(OSError):
        dev.read(1)


def test_oversized_set_is_discarded() -> None:
    sets = SetAssembler(max_set=10)
    assert sets.chunk(b"x" * 8) is None
    assert sets.chunk(b"y" * 8) is None
    ev = sets.chunk(b"")
    assert ev is not None and ev.data is None and ev.gap and "size limit" in ev.gap
    assert sets.chunk(b"z") is None
    ev = sets.chunk(b"")
    assert ev is not None and ev.data == b"z"
