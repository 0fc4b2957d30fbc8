"""``monwrite:FILE``: import a file written by the CMS MONWRITE utility.

This is our reading of public descriptions (IBM's HCPMWTBK control block and the Linux
monreader documentation), not IBM's specification of the file. The file is a sequence of
4096-byte blocks. A *control block* holds a 40-byte IUCV parameter list, then 12-byte control
elements up to the first all-zero one. It is followed by the data pages covering, in ascending
address order, every page from its lowest start address (rounded down to 4 KiB) to its
highest end address (rounded up); an element's records start at its start address.

Strict about sizes, tolerant about content: a block that is not a valid control block, or
whose pages are implausibly many, is skipped with a warning and reading goes on with the next
block; a file cut short imports what it holds. Memory use is bounded by one control block's
pages (at most ``max_pages``).
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from esatui.collectors.base import SourceContext, SourceError
from esatui.collectors.kinds import LCPU
from esatui.collectors.model import Availability, Kind, Sample
from esatui.collectors.monitor.assemble import IntervalAssembler
from esatui.collectors.monitor.frames import WalkStats
from esatui.collectors.monitor.kinds import (
    CFG_SOURCE,
    CRYPTO,
    CRYPTO_AP,
    PAGING,
    SPIN_CPU,
    SPIN_LOCK,
)
from esatui.collectors.monitor.layout import LayoutTable
from esatui.collectors.monitor.layoutfile import builtin_layouts
from esatui.collectors.monitor.mce import MCE_LEN, ControlElement, parse_mce
from esatui.collectors.monitor.pipeline import feed_span
from esatui.smallfile import kind_of

BLOCK = 4096
IPARML_LEN = 40
MAX_ELEMENTS = (BLOCK - IPARML_LEN) // MCE_LEN
DEFAULT_MAX_PAGES = 16384  # 64 MiB: larger than any monitor saved segment seen in practice

Progress = Callable[[int, int], None]

# what an unusable file's message says a MONWRITE file is
EXPECTED = (
    "expected 4096-byte blocks, each control block a 40-byte IUCV parameter list and 12-byte "
    "control elements of type X'E2' or X'C5', followed by its data pages"
)


@dataclass
class MonwriteStats:
    bytes_total: int = 0
    bytes_read: int = 0
    control_blocks: int = 0
    data_pages: int = 0
    damaged_blocks: int = 0  # blocks skipped as neither a valid control block nor its pages
    truncated: bool = False


def _look_for_control_block(f: BinaryIO, path: Path) -> Availability:
    """Whether ``f`` holds a control block, reading up to the first one."""
    first = f.read(BLOCK)
    if len(first) < BLOCK:
        what = "empty" if not first else f"{len(first)} bytes, shorter than one 4096-byte block"
        return Availability(False, f"{path} is {what}: not a MONWRITE file ({EXPECTED})")
    problem = control_elements(first, strict=True)
    if not isinstance(problem, str):
        return Availability(True, f"MONWRITE file {path}")
    blocks = 1
    while len(block := f.read(BLOCK)) == BLOCK:
        if not isinstance(control_elements(block, strict=True), str):
            at = blocks * BLOCK
            return Availability(True, f"MONWRITE file {path} (first control block at byte {at})")
        blocks += 1
    return Availability(
        False,
        f"{path} is not a MONWRITE file: none of its {blocks} blocks is a control block "
        f"(block 0: {problem}; {EXPECTED})",
    )


def control_elements(
    block: bytes | memoryview, *, strict: bool = True
) -> list[ControlElement] | str:
    """The elements of a control block, or why it is not one (strict: only the documented
    sample and event types)."""
    out: list[ControlElement] = []
    for i in range(MAX_ELEMENTS):
        mce = parse_mce(block, IPARML_LEN + i * MCE_LEN)
        if mce.is_zero:
            break
        problem = mce.problem(strict_type=strict)
        if problem is not None:
            return f"element {i}: {problem}"
        out.append(mce)
    if not out:
        return "no control elements"
    return out


class MonwriteReader:
    """The (element, records) spans of a MONWRITE file, read in one pass."""

    def __init__(
        self,
        f: BinaryIO,
        size: int | None,
        warn: Callable[[str], None],
        progress: Progress | None = None,
        max_pages: int = DEFAULT_MAX_PAGES,
    ) -> None:
        self.f = f
        self.warn = warn
        self.progress = progress
        self.max_pages = max_pages
        self.stats = MonwriteStats(bytes_total=size or 0)
        self._next_progress = 0

    def spans(self) -> Iterator[tuple[ControlElement, memoryview]]:  # noqa: PLR0912 - the block walk and its damaged-data cases stay in one loop
        st = self.stats
        bad_from: int | None = None  # first block of a run of damaged blocks
        while True:
            pos = st.bytes_read
            block = self._read(BLOCK)
            if len(block) < BLOCK:
                if block:
                    st.truncated = True
                    self._gap(f"the file ends with {len(block)} bytes, not a whole block")
                break
            elems = control_elements(block, strict=True)
            if isinstance(elems, str):
                if bad_from is None:
                    bad_from = pos
                st.damaged_blocks += 1
                continue
            if bad_from is not None:
                self._gap(
                    f"bytes {bad_from}-{pos - 1} are neither a control block nor its pages: skipped"
                )
                bad_from = None
            st.control_blocks += 1
            lo = min(e.start for e in elems) & ~(BLOCK - 1)
            hi = max(e.end for e in elems) | (BLOCK - 1)
            npages = (hi - lo + 1) // BLOCK
            if npages > self.max_pages:
                self._gap(
                    f"control block at byte {pos} announces {npages} pages, more than "
                    f"{self.max_pages}: skipped with its pages"
                )
                st.damaged_blocks += 1
                if not self._skip(npages * BLOCK):
                    break
                continue
            data = self._read(npages * BLOCK)
            st.data_pages += len(data) // BLOCK
            whole = len(data) == npages * BLOCK
            if not whole:
                st.truncated = True
                self._gap(
                    f"the file ends inside the pages of the control block at byte {pos}: "
                    "records beyond its end are lost"
                )
            view = memoryview(data)
            for e in elems:
                if e.end - lo >= len(data):
                    continue
                yield e, view[e.start - lo : e.end - lo + 1]
            if not whole:
                break
        if bad_from is not None:
            self._gap(f"bytes {bad_from}-{st.bytes_read - 1} are not monitor data: skipped")
        self._report(final=True)

    def _gap(self, msg: str) -> None:
        self.warn(msg)

    def _read(self, n: int) -> bytes:
        chunks = []
        left = n
        while left > 0:
            c = self.f.read(left)
            if not c:
                break
            chunks.append(c)
            left -= len(c)
        data = b"".join(chunks)
        self.stats.bytes_read += len(data)
        self._report()
        return data

    def _skip(self, n: int) -> bool:
        while n > 0:
            got = len(self._read(min(n, 1 << 20)))
            if not got:
                return False
            n -= got
        return True

    def _report(self, *, final: bool = False) -> None:
        if self.progress is None:
            return
        st = self.stats
        if final or st.bytes_read >= self._next_progress:
            self._next_progress = st.bytes_read + (1 << 20)
            self.progress(st.bytes_read, max(st.bytes_total, st.bytes_read))


class MonwriteSource:
    """A :class:`StreamSource` importing one MONWRITE file."""

    name = "monitor"
    kinds: tuple[Kind, ...] = (CRYPTO, CRYPTO_AP, LCPU, PAGING, SPIN_CPU, SPIN_LOCK)

    def __init__(
        self,
        ctx: SourceContext,
        path: str | Path,
        layouts: LayoutTable | None = None,
        progress: Progress | None = None,
        max_pages: int = DEFAULT_MAX_PAGES,
    ) -> None:
        self.ctx = ctx
        self.path = Path(path)
        self.layouts = layouts if layouts is not None else builtin_layouts()
        self.progress = progress
        self.max_pages = max_pages
        self.walk_stats = WalkStats()
        self.assembler = IntervalAssembler(
            self.layouts,
            self.name,
            ctx.warn,
            {CFG_SOURCE: "monwrite"},
            now_us=ctx.clock.time_us,
        )
        self.reader: MonwriteReader | None = None
        self._file: BinaryIO | None = None

    @property
    def records_read(self) -> int:
        return self.assembler.stats.records

    @property
    def records_skipped(self) -> int:
        return self.assembler.stats.skipped

    @property
    def samples_produced(self) -> int:
        return self.assembler.stats.samples

    def import_summary(self) -> str:
        """What the import read, for the line ``esatui collect`` prints at the end."""
        damaged = self.reader.stats.damaged_blocks if self.reader is not None else 0
        return (
            f"{self.records_read} records read, {self.records_skipped} skipped, "
            f"{damaged} damaged blocks, {self.samples_produced} monitor intervals"
        )

    def probe(self) -> Availability:
        """Whether the file can be imported: readable, and one of its blocks a control block
        (a damaged start is skipped on import like damage anywhere else, so it is looked past)."""
        path = self.path
        try:
            mode = path.stat().st_mode
            if stat.S_ISFIFO(mode):
                # a pipe (zcat ... |): looking at its start would use up what the import reads
                return Availability(True, f"MONWRITE stream {path}")
            if not stat.S_ISREG(mode):
                # a device never ends (/dev/zero was read forever), and is no MONWRITE file
                return Availability(
                    False,
                    f"{path} is {kind_of(mode)}, not a MONWRITE file: give the file MONWRITE "
                    "wrote, or a pipe (| ... monwrite:/dev/stdin)",
                )
            with path.open("rb") as f:
                return _look_for_control_block(f, path)
        except OSError as exc:
            return Availability(False, f"cannot read MONWRITE file {path}: {exc.strerror or exc}")

    def samples(self) -> Iterator[Sample]:
        try:
            f: BinaryIO = self.path.open("rb")
            size = self.path.stat().st_size
        except OSError as exc:
            raise SourceError(f"{self.path}: cannot open: {exc.strerror or exc}") from None
        self._file = f
        if size % BLOCK:
            self.ctx.warn(
                f"{self.path}: size {size} is not a multiple of 4096: the file is cut short"
            )
        asm = self.assembler
        # lost data is both a warning and a GAP flag on the next sample
        reader = MonwriteReader(f, size, asm.mark_gap, self.progress, self.max_pages)
        self.reader = reader
        try:
            for mce, span in reader.spans():
                yield from feed_span(asm, mce, span, self.walk_stats)
            last = asm.finish()
            if last is not None:
                yield last
        finally:
            self.close()

    def close(self) -> None:
        f, self._file = self._file, None
        if f is not None:
            f.close()
