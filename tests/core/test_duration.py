"""``--duration``: as many intervals as the duration holds, wherever in an interval the
run begins."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from esatui.collectors.base import SourceContext
from esatui.collectors.host import HostSource
from esatui.sampling.session import Recording, WarnChannel
from esatui.sim.interfaces.procfs import ProcStat
from tests.fixtures.clock import stepping

START_US = 1_790_000_040_000_000  # on a minute boundary


@pytest.mark.parametrize("offset_s", [0.0, 10.0, 29.0, 31.0, 50.0])
def test_a_duration_records_as_many_intervals_as_it_holds(tmp_path: Path, offset_s: float) -> None:
    """Outside check: ``collect --interval 1 --duration 4`` recorded 4 or 5 intervals by
    where in a second it began. 4 minutes of 1-minute intervals are 4, wherever it begins
    (the first one up to half an interval shorter or longer)."""
    root = tmp_path / "root"
    stat = ProcStat(root, [0])
    stat.write()

    def advance(seconds: float) -> None:
        stat.advance(0, user=int(seconds * 40), idle=int(seconds * 60))
        stat.write()

    clock = stepping(START_US + round(offset_s * 1e6), advance)
    ctx = SourceContext(root, WarnChannel(print), clock)
    recording = Recording(
        tmp_path / "d.sqlite", [HostSource(ctx)], interval_s=60, hf_s=None, clock=clock
    )
    stats = recording.run(threading.Event(), warn=print, duration_s=240)
    assert stats.intervals == 4
