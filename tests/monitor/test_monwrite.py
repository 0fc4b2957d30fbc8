"""MONWRITE import: strict about sizes, tolerant about content, streaming with progress."""

from __future__ import annotations

import io
import itertools
import os
import threading
from pathlib import Path

import pytest

from esatui.cli import main
from esatui.collectors.base import SourceContext, SourceError
from esatui.collectors.model import SampleFlag
from esatui.collectors.monitor import encode as E
from esatui.collectors.monitor.mce import TYPE_EVENT, ControlElement
from esatui.collectors.monitor.monwrite import BLOCK, MonwriteReader, MonwriteSource
from tests.monitor.conftest import Warnings

T = 1_700_000_040_000_000
M = 60_000_000


def _ivs(n: int) -> list[E.IntervalRecords]:
    return [
        E.IntervalRecords(
            T + i * M,
            [E.crypto_record(T + i * M, {"virt_nq": i}), E.raw_record(2, 4, T, bytes(60))],
        )
        for i in range(n)
    ]


def _blocks(n: int) -> list[bytes]:
    return list(E.monwrite_intervals(_ivs(n)))


def _import(
    tmp_path: Path, data: bytes, warnings: Warnings
) -> tuple[list[int], MonwriteSource, list[int]]:
    p = tmp_path / "f.mon"
    p.write_bytes(data)
    src = MonwriteSource(SourceContext(warn=warnings), p)
    samples = list(src.samples())
    return [s.time_us for s in samples], src, [s.flags for s in samples]


def test_layout_of_a_block() -> None:
    block = _blocks(1)[0]
    assert len(block) % BLOCK == 0
    ctrl = block[:BLOCK]
    assert ctrl[40] == 0xE2  # sample data
    assert ctrl[52:64] == bytes(12)  # the element list ends with an all-zero one


def test_counts(tmp_path: Path, warnings: Warnings) -> None:
    times, src, flags = _import(tmp_path, b"".join(_blocks(4)), warnings)
    assert times == [T + i * M for i in range(4)] and not any(flags)
    assert src.records_read == 12  # D5R9, D2R4, D1R11 per interval
    assert src.records_skipped == 4
    assert src.samples_produced == 4
    assert src.reader is not None and src.reader.stats.control_blocks == 4
    assert not warnings


def test_damaged_control_block_is_skipped_and_the_rest_imports(
    tmp_path: Path, warnings: Warnings
) -> None:
    blocks = _blocks(5)
    bad = bytearray(blocks[2])
    bad[40:52] = b"\xff" * 12  # element 0 of the 3rd control block: end below start
    data = b"".join([*blocks[:2], bytes(bad), *blocks[3:]])
    times, src, flags = _import(tmp_path, data, warnings)
    assert times == [T, T + M, T + 3 * M, T + 4 * M]
    assert flags[2] & SampleFlag.GAP
    assert src.reader is not None and src.reader.stats.damaged_blocks == len(blocks[2]) // BLOCK
    assert len(warnings) == 1 and "skipped" in warnings[0]


def test_garbage_between_blocks(tmp_path: Path, warnings: Warnings) -> None:
    blocks = _blocks(3)
    data = blocks[0] + b"\x5a" * (3 * BLOCK) + blocks[1] + blocks[2]
    times, _src, _flags = _import(tmp_path, data, warnings)
    assert times == [T, T + M, T + 2 * M]
    assert len(warnings) == 1


def test_truncated_inside_pages(tmp_path: Path, warnings: Warnings) -> None:
    data = b"".join(_blocks(3))
    times, src, _flags = _import(tmp_path, data[: len(data) - 2 * BLOCK + 100], warnings)
    assert times == [T, T + M]
    assert src.reader is not None and src.reader.stats.truncated
    assert any("not a multiple of 4096" in w for w in warnings)


def test_truncated_between_blocks(tmp_path: Path, warnings: Warnings) -> None:
    blocks = _blocks(3)
    times, _src, _flags = _import(tmp_path, blocks[0] + blocks[1] + blocks[2][:100], warnings)
    assert times == [T, T + M]
    assert any("not a whole block" in w for w in warnings)


def test_too_many_pages_is_skipped(tmp_path: Path, warnings: Warnings) -> None:
    blocks = _blocks(2)
    huge = E.Span(b"\x00" * 40, 0, TYPE_EVENT, 0x4000)
    far = E.Span(b"\x00" * 40, 300 * BLOCK, TYPE_EVENT, 0x4000)
    big = E.monwrite_block([huge, far])  # 301 pages
    p = tmp_path / "f.mon"
    p.write_bytes(blocks[0] + big + blocks[1])
    src = MonwriteSource(SourceContext(warn=warnings), p, max_pages=100)
    times = [s.time_us for s in src.samples()]
    assert times == [T, T + M]
    assert any("more than 100" in w for w in warnings)


def test_event_data_blocks_are_read_and_ignored(tmp_path: Path, warnings: Warnings) -> None:
    ev = E.Span(
        E.frame_records([E.raw_record(3, 2, T + 5, bytes(30))], 0x3000), 0x3000, TYPE_EVENT, 0x1000
    )
    blocks = _blocks(2)
    times, src, _ = _import(tmp_path, blocks[0] + E.monwrite_block([ev]) + blocks[1], warnings)
    assert times == [T, T + M] and src.records_skipped == 3 and not warnings


def test_progress_is_reported(tmp_path: Path) -> None:
    data = b"".join(_blocks(400))
    p = tmp_path / "f.mon"
    p.write_bytes(data)
    calls: list[tuple[int, int]] = []
    src = MonwriteSource(SourceContext(), p, progress=lambda d, t: calls.append((d, t)))
    n = sum(1 for _ in src.samples())
    assert n == 400
    assert calls[-1] == (len(data), len(data))
    assert all(a[0] <= b[0] for a, b in itertools.pairwise(calls))
    assert len(calls) >= 3


def test_reader_memory_is_one_block_at_a_time() -> None:
    # the reader never asks for more than one control block's pages at once
    data = b"".join(_blocks(50))
    sizes: list[int] = []

    class Spy(io.BytesIO):
        def read(self, n: int | None = -1) -> bytes:
            sizes.append(n if n is not None else -1)
            return super().read(n)

    reader = MonwriteReader(Spy(data), len(data), lambda _m: None)
    assert sum(1 for _ in reader.spans()) == 50
    assert max(sizes) <= 2 * BLOCK


def test_probe_and_open_errors(tmp_path: Path) -> None:
    ctx = SourceContext()
    missing = MonwriteSource(ctx, tmp_path / "nope")
    assert not missing.probe().available
    with pytest.raises(SourceError, match="cannot open"):
        next(iter(missing.samples()))
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x01" * BLOCK)
    av = MonwriteSource(ctx, junk).probe()
    assert not av.available and "control block" in av.reason
    short = tmp_path / "short"
    short.write_bytes(b"\x01" * 10)
    assert "shorter" in MonwriteSource(ctx, short).probe().reason
    good = tmp_path / "good"
    good.write_bytes(b"".join(_blocks(1)))
    assert MonwriteSource(ctx, good).probe().available


def test_control_element_types() -> None:
    assert ControlElement(0x01, 1, 0, 1).problem(strict_type=True) is not None
    assert ControlElement(0x01, 1, 0, 1).problem() is None


def test_a_damaged_start_is_looked_past(tmp_path: Path) -> None:
    """The import skips damaged blocks wherever they are, so a damaged first block does not
    make the file unusable."""
    p = tmp_path / "f.mon"
    p.write_bytes(b"\x01" * 2 * BLOCK + b"".join(_blocks(1)))
    av = MonwriteSource(SourceContext(), p).probe()
    assert av.available and "first control block at byte 8192" in av.reason


# --- through esatui collect ----------------------------------------------------------------


def _collect(
    capsys: pytest.CaptureFixture[str], mon: Path, db: Path
) -> tuple[int, list[str], list[str]]:
    code = main(["collect", "--source", f"monwrite:{mon}", "--db", str(db)])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


def _files(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in directory.iterdir()}


UNREADABLE = b"unreadable"  # a good file this user may not read
DIRECTORY = b"directory"

EXPECTED = "(expected 4096-byte blocks, each control block a 40-byte IUCV parameter list"


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "cannot read MONWRITE file {mon}: No such file or directory"),
        (DIRECTORY, "{mon} is a directory, not a MONWRITE file"),
        pytest.param(
            UNREADABLE,
            "cannot read MONWRITE file {mon}: Permission denied",
            marks=pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file"),
        ),
        (b"", "{mon} is empty: not a MONWRITE file " + EXPECTED),
        (
            b"\x01" * 10,
            "{mon} is 10 bytes, shorter than one 4096-byte block: not a MONWRITE file " + EXPECTED,
        ),
        (
            b"\x01" * 3 * BLOCK,
            "{mon} is not a MONWRITE file: none of its 3 blocks is a control block "
            "(block 0: element 0: unknown type X'01'; expected 4096-byte blocks",
        ),
    ],
    ids=["missing", "directory", "unreadable", "empty", "short", "not-monwrite"],
)
def test_an_unusable_file_is_one_error_line_and_no_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, says: str
) -> None:
    """Before: three lines (the summary, the import's counts, a warning or an error naming no
    file), exit 1, and an empty database and its lock file left behind."""
    mon = tmp_path / "in.mw"
    if content is DIRECTORY:
        mon.mkdir()
    elif content is UNREADABLE:
        mon.write_bytes(b"".join(_blocks(2)))
        mon.chmod(0)
    elif content is not None:
        mon.write_bytes(content)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code, out, err = _collect(capsys, mon, out_dir / "vm.sqlite")
    assert code == 1 and out == []
    assert len(err) == 1 and err[0].startswith("esatui: error: " + says.format(mon=mon)), err
    assert list(out_dir.iterdir()) == []  # no database, no lock file


def test_an_unusable_file_leaves_an_existing_database_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.mw"
    good.write_bytes(b"".join(_blocks(3)))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    db = out_dir / "vm.sqlite"
    assert _collect(capsys, good, db)[0] == 0
    before = _files(out_dir)
    junk = tmp_path / "junk.mw"
    junk.write_bytes(b"\x5a" * 2 * BLOCK)
    code, out, err = _collect(capsys, junk, db)
    assert code == 1 and out == [] and len(err) == 1
    assert _files(out_dir) == before


def test_a_good_file_imports_as_before(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mon = tmp_path / "f.mon"
    mon.write_bytes(b"".join(_blocks(4)))
    db = tmp_path / "vm.sqlite"
    code, out, err = _collect(capsys, mon, db)
    assert code == 0 and err == []
    assert out == [
        f"3 intervals recorded (sources: monitor) in {db}",
        "monitor: 12 records read, 4 skipped, 0 damaged blocks, 4 monitor intervals",
    ]


@pytest.mark.parametrize("damage", ["cut", "damaged-start"])
def test_a_damaged_file_still_imports_what_it_can(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    data = b"".join(_blocks(4))
    mon = tmp_path / "f.mon"
    if damage == "cut":
        mon.write_bytes(data[: len(data) - 2 * BLOCK + 100])
        recorded, warned = 2, "not a whole block"
    else:
        mon.write_bytes(b"\x01" * BLOCK + data)
        recorded, warned = 3, "neither a control block nor its pages"
    db = tmp_path / "vm.sqlite"
    code, out, err = _collect(capsys, mon, db)
    assert code == 0 and out[0] == f"{recorded} intervals recorded (sources: monitor) in {db}"
    assert any(warned in line for line in err)
    assert not any(line.startswith("esatui: error:") for line in err)


def test_a_pipe_is_imported_not_used_up_by_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "f.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_bytes, args=(b"".join(_blocks(4)),), daemon=True)
    writer.start()
    code, out, err = _collect(capsys, fifo, tmp_path / "vm.sqlite")
    writer.join(timeout=30)
    assert code == 0 and err == []
    assert out[1] == "monitor: 12 records read, 4 skipped, 0 damaged blocks, 4 monitor intervals"
