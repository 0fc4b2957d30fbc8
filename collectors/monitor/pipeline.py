"""Spans of records through the frame walker into the interval assembler."""

from __future__ import annotations

from collections.abc import Iterator

from esatui.collectors.model import Sample
from esatui.collectors.monitor.assemble import USED, IntervalAssembler
from esatui.collectors.monitor.frames import WalkStats, walk
from esatui.collectors.monitor.mce import ControlElement


def feed_span(
    asm: IntervalAssembler, mce: ControlElement, span: memoryview, stats: WalkStats
) -> Iterator[Sample]:
    """Every sample completed by the records of ``span`` (records at ``mce.start``)."""

    def damaged(msg: str) -> None:
        asm.mark_gap(f"damaged monitor data: {msg}")

    feed = asm.feed
    skip = asm.skip_unused
    used = USED
    for rec in walk(span, mce.start, stats, damaged):
        if (rec[2], rec[3]) not in used:
            skip()  # most records of a real file: keep their cost to a set lookup
            continue
        sample = feed(span, rec)
        if sample is not None:
            yield sample
