from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from esatui.collectors.base import SourceContext
from esatui.collectors.model import Sample
from esatui.collectors.monitor import encode as E
from esatui.collectors.monitor.fakedev import ScriptedDevice
from esatui.collectors.monitor.monreader import MonreaderSource
from esatui.collectors.monitor.monwrite import MonwriteSource
from esatui.collectors.monitor.stream import SetAssembler


class Warnings(list[str]):
    def __call__(self, msg: str) -> None:
        self.append(msg)


@pytest.fixture
def warnings() -> Warnings:
    return Warnings()


@pytest.fixture
def ctx(warnings: Warnings) -> SourceContext:
    return SourceContext(warn=warnings)


ImportFn = Callable[[list[E.IntervalRecords]], list[Sample]]


@pytest.fixture
def import_monwrite(tmp_path: Path, ctx: SourceContext) -> ImportFn:
    def run(intervals: list[E.IntervalRecords]) -> list[Sample]:
        path = tmp_path / "import.monwrite"
        path.write_bytes(b"".join(E.monwrite_intervals(intervals)))
        return list(MonwriteSource(ctx, path).samples())

    return run


def read_script(
    ctx: SourceContext, script: Sequence[bytes | int], max_read: int | None = None
) -> list[Sample]:
    src = MonreaderSource(ctx, "fake", opener=lambda _p: ScriptedDevice(script, max_read))
    return list(src.samples())


def samples_of(script: Sequence[bytes | int], warn: Warnings | None = None) -> list[Sample]:
    """The source's own parsing, without its reader thread."""
    ctx = SourceContext(warn=warn if warn is not None else Warnings())
    src = MonreaderSource(ctx, "fake", opener=lambda _p: ScriptedDevice([]))
    sets = SetAssembler()
    out: list[Sample] = []
    for item in script:
        ev = sets.error(item) if isinstance(item, int) else sets.chunk(item)
        if ev is None:
            continue
        if ev.data:
            out.extend(src.parse_set(ev.data))
        if ev.gap:
            src.assembler.mark_gap(ev.gap)
    last = src.assembler.finish()
    return [*out, last] if last is not None else out
