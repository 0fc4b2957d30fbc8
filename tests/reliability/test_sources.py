"""Fault injection, sources: one that hangs, one that is slow, one that returns absurd
values. The recorder runs on the simulated clock (its boundaries come at once), while a
pass's deadline is real time (half the interval), so these tests take about a second each
and assert on what was recorded, never on how long it took."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path

from esatui.sampling.session import Recording, WarnChannel
from esatui.sim.clock import SimClock
from tests.fakes.sources import AbsurdSource, CountingSource, HangingSource, SlowSource
from tests.fixtures.reading import sql
from tests.reliability.figures import record_figure

START_US = 1_790_000_040_000_000  # on a minute boundary
INTERVAL_S = 1.0  # a pass waits half of it, in real time


def _ends(db: Path, source: str) -> list[int]:
    rows = sql(db, "SELECT end_us FROM interval WHERE source = ? ORDER BY end_us", (source,))
    return [end for (end,) in rows]


def _on_time(ends: list[int]) -> bool:
    """Every interval ends on a boundary, one interval after the one before."""
    return all(b - a == INTERVAL_S * 1e6 for a, b in itertools.pairwise(ends))


def test_a_hung_source_is_skipped_and_never_delays_the_others(db_path: Path) -> None:
    clock = SimClock(START_US)
    good = CountingSource("good", clock)
    hung = HangingSource("hung", clock, answers=2)  # the first interval, then nothing
    said: list[str] = []
    recording = Recording(db_path, [good, hung], interval_s=INTERVAL_S, hf_s=None, clock=clock)
    try:
        stats = recording.run(threading.Event(), warn=said.append, count=6)
    finally:
        hung.release()
    good_ends = _ends(db_path, "good")
    assert len(good_ends) == 6 and _on_time(good_ends)
    assert len(_ends(db_path, "hung")) == 1
    assert len(_ends(db_path, "esatui")) == 6
    late = [m for m in said if m.startswith("hung: no sample within 0.5 s")]
    assert len(late) == 1, said  # one warning for the whole episode
    assert stats.overdue == 5
    assert good.closed and not hung.closed  # a source in a hung call is not closed under it
    record_figure("hung source", f"6 of 6 intervals of the others on time, {stats.overdue} skipped")


def test_a_source_still_sampling_at_the_end_says_nothing_after_it(db_path: Path) -> None:
    """Before: a source hung at the end warned through its channel when its call came back,
    after the command had returned (into whatever ran next in the process)."""
    clock = SimClock(START_US)
    said: list[str] = []
    channel = WarnChannel(said.append)
    hung = HangingSource("hung", clock, answers=1)
    recording = Recording(
        db_path, [hung], interval_s=INTERVAL_S, hf_s=None, clock=clock, channel=channel
    )
    recording.run(threading.Event(), warn=said.append, count=2)
    assert any("still sampling at the end" in m for m in said), said
    ended_with = len(said)
    hung.release()
    channel("hung: its late answer, after the recording ended")  # as the source would
    assert len(said) == ended_with


def test_a_slow_source_keeps_its_counts_and_the_others_their_times(db_path: Path) -> None:
    # at wall-clock pace, so a late answer has the rest of the interval to arrive
    clock = SimClock(START_US, speed=1.0)
    good = CountingSource("good", clock)
    slow = SlowSource("slow", clock, delay_s=0.7)  # over the 0.5 s deadline, every other call
    said: list[str] = []
    recording = Recording(db_path, [good, slow], interval_s=INTERVAL_S, hf_s=None, clock=clock)
    recording.run(threading.Event(), warn=said.append, count=5)
    good_ends = _ends(db_path, "good")
    assert len(good_ends) == 5 and _on_time(good_ends)
    slow_rows = sql(
        db_path,
        "SELECT i.start_us, i.end_us, i.duration_us, SUM(k.ops) FROM interval i"
        " JOIN k_thing k ON k.interval_id = i.id WHERE i.source = 'slow' AND k.entity_id ="
        " (SELECT MIN(entity_id) FROM k_thing) GROUP BY i.id ORDER BY i.end_us",
    )
    assert slow_rows, said
    assert all(duration > 0 and end > start for start, end, duration, _ in slow_rows)
    # each late answer closed the slow source's next interval: its intervals follow one
    # another without a hole, so no count was lost
    assert all(b[0] == a[1] for a, b in itertools.pairwise(slow_rows))
    assert all(ops > 0 and ops % 10 == 0 for *_, ops in slow_rows)
    assert [m for m in said if m.startswith("slow: no sample")], said
    record_figure("slow source", f"5 of 5 intervals of the others on time, {len(slow_rows)} slow")


def test_absurd_values_lose_only_themselves(db_path: Path) -> None:
    clock = SimClock(START_US)
    good = CountingSource("good", clock)
    absurd = AbsurdSource("absurd", clock)
    said: list[str] = []
    recording = Recording(db_path, [good, absurd], interval_s=INTERVAL_S, hf_s=None, clock=clock)
    recording.run(threading.Event(), warn=said.append, count=12)
    assert len(_ends(db_path, "good")) == 12
    assert len(_ends(db_path, "absurd")) == 12  # no interval lost to a value
    assert not [m for m in said if "not written" in m], said
    assert [m for m in said if "out of range" in m]
    values = sql(db_path, "SELECT ops, depth, depth_max FROM k_thing")
    for ops, depth, depth_max in values:
        assert ops is None or 0 <= ops < 2**63
        for gauge in (depth, depth_max):
            assert gauge is None or abs(gauge) < 2**63
    record_figure("absurd values", "12 of 12 intervals of every source written")
