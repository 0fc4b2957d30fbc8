"""Totals over CPUs online for part of an interval or a bucket (cpuplugd, ``chcpu``, a
logical processor varied off): each CPU adds in by the share of the interval it was online
(screens/online.py), while its own row stays a percent of its own time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from esatui.collectors.host import CPU
from esatui.collectors.kinds import LCPU
from esatui.collectors.model import Reading, Sample
from esatui.db.sqlite_reader import SqliteReader
from esatui.db.store import Store
from esatui.screens import catalog
from esatui.screens.model import Row, RowKind, ScreenModel
from esatui.screens.online import OnlineTime
from tests.fixtures.recording import START_US, TICK_US, write

MINUTE = 60_000_000
PARTS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def busy_ticks(seconds: float, busy_pct: int, steal_pct: int = 0) -> dict[str, int]:
    """A CPU's ticks over ``seconds`` online: ``busy_pct`` user, ``steal_pct`` steal, the
    rest idle."""
    whole = round(seconds * 100)
    user, steal = whole * busy_pct // 100, whole * steal_pct // 100
    return dict.fromkeys(PARTS, 0) | {"user": user, "steal": steal, "idle": whole - user - steal}


def cpu_recording(db: Path, intervals: Sequence[Sequence[tuple[int, dict[str, int]]]]) -> None:
    """:func:`cpu_samples` recorded."""
    with Store.open(db) as store:
        write(store, "host", (CPU,), cpu_samples(intervals))


def cpu_samples(intervals: Sequence[Sequence[tuple[int, dict[str, int]]]]) -> list[Sample]:
    """One-minute intervals from 14:00: each a list of (CPU, its ticks in it). A CPU is read
    at each end of an interval it is in, and not otherwise (it is offline: no line in
    /proc/stat)."""
    totals: dict[int, dict[str, int]] = {}
    samples = []
    for i in range(len(intervals) + 1):
        if i:
            for cpu, ticks in intervals[i - 1]:
                for name, n in ticks.items():
                    totals[cpu][name] += n
        around = [*(intervals[i - 1] if i else ()), *(intervals[i] if i < len(intervals) else ())]
        online = sorted({cpu for cpu, _ in around})
        for cpu in online:
            totals.setdefault(cpu, dict.fromkeys(PARTS, 0))
        readings = tuple(
            Reading(
                "cpu",
                str(cpu),
                {f"{k}_us": v * TICK_US for k, v in totals[cpu].items()},
                {"type": "IFL", "type_source": "vmcp:QUERY VIRTUAL CPUS", "address": str(cpu)},
            )
            for cpu in online
        )
        samples.append(Sample("host", START_US + i * MINUTE, readings, config={"node": "L"}))
    return samples


def rows_of(model: ScreenModel, kind: RowKind) -> list[Row]:
    """The model's rows of ``kind``, oldest first."""
    return sorted((r for r in model.rows if r.kind is kind), key=lambda r: r.end_us)


def test_a_cpu_online_for_a_quarter_of_an_interval_adds_a_quarter(tmp_path: Path) -> None:
    """CPU 1 at 92% of its own time, online 15 s of the second minute: its row shows 92,
    ESALNXC's ``all`` adds 23 (30 + 23 = 53), as ESASSUM's busy does; in the first minute,
    online throughout, it adds 92. ESASSUM's steal is the CPUs' mean weighed alike."""
    db = tmp_path / "plug.sqlite"
    full, quarter = busy_ticks(60, 92, steal_pct=4), busy_ticks(15, 92, steal_pct=4)
    cpu_recording(
        db, [[(0, busy_ticks(60, 30)), (1, full)], [(0, busy_ticks(60, 30)), (1, quarter)]]
    )
    with SqliteReader.open(db) as reader:
        lnxc = catalog.build_model(reader, "ESALNXC", catalog.Query())
        summary = catalog.build_model(reader, "ESASSUM", catalog.Query())
    cpu1 = [r.values["total"] for r in rows_of(lnxc, RowKind.DATA) if r.values["id"] == 1]
    assert cpu1 == [pytest.approx(92.0), pytest.approx(92.0)]
    alls = [r.values["total"] for r in rows_of(lnxc, RowKind.TOTAL)]
    assert alls == [pytest.approx(122.0), pytest.approx(53.0)]
    assert [r.values["busy_ifl"] for r in rows_of(summary, RowKind.DATA)] == alls
    # steal: 0% of 60 s and 4% of 15 s over 75 s online
    steals = [r.values["steal_pct"] for r in rows_of(summary, RowKind.DATA)]
    assert steals == [pytest.approx(2.0), pytest.approx(4 * 0.25 / 1.25)]
    assert rows_of(lnxc, RowKind.TOTAL)[1].values["steal"] == pytest.approx(1.0)


def test_a_cpu_in_two_minutes_of_an_eight_minute_bucket_adds_a_quarter(tmp_path: Path) -> None:
    """cpuplugd brings CPU 1 on for two of eight one-minute intervals: over 8-minute buckets
    it adds 92 x 2/8, not 92; CPU 0 and the one-minute rows are as recorded."""
    db = tmp_path / "bucket.sqlite"
    minutes: list[list[tuple[int, dict[str, int]]]] = []
    for m in range(8):
        minute = [(0, busy_ticks(60, 30))]
        if m in (3, 4):
            minute.append((1, busy_ticks(60, 92)))
        minutes.append(minute)
    cpu_recording(db, minutes)
    with SqliteReader.open(db) as reader:
        one = catalog.build_model(reader, "ESALNXC", catalog.Query())
        eight = catalog.build_model(reader, "ESALNXC", catalog.Query(interval_len_us=8 * MINUTE))
        summary = catalog.build_model(reader, "ESASSUM", catalog.Query(interval_len_us=8 * MINUTE))
    assert [r.values["total"] for r in rows_of(one, RowKind.TOTAL)] == [
        pytest.approx(v) for v in [30.0] * 3 + [122.0] * 2 + [30.0] * 3
    ]
    (bucket,) = rows_of(eight, RowKind.TOTAL)
    assert bucket.values["total"] == pytest.approx(30.0 + 92.0 * 2 / 8)
    assert [r.values["busy_ifl"] for r in summary.rows] == [bucket.values["total"]]


def test_counters_one_tick_apart_leave_the_total_the_rows_sum(tmp_path: Path) -> None:
    """Two CPUs online throughout whose ticks differ by the kernel's rounding: ``all`` is
    exactly (==) their rows added, not weighed."""
    db = tmp_path / "ticks.sqlite"
    short = busy_ticks(60, 50) | {"idle": busy_ticks(60, 50)["idle"] - 3}
    cpu_recording(db, [[(0, busy_ticks(60, 30)), (1, short)]])
    with SqliteReader.open(db) as reader:
        model = catalog.build_model(reader, "ESALNXC", catalog.Query())
    cpus = [r.values["total"] for r in rows_of(model, RowKind.DATA)]
    assert isinstance(cpus[0], float) and isinstance(cpus[1], float)
    assert rows_of(model, RowKind.TOTAL)[0].values["total"] == 0.0 + cpus[0] + cpus[1]


def test_a_counter_reset_leaves_the_others_in_full(tmp_path: Path) -> None:
    """CPU 1's user counter jumps a day ahead in the second minute (as a reset's count
    since reads): its time is longer than the interval, whose length caps the fullest, so
    CPU 0 still adds in full and ``all`` is its rows' sum."""
    db = tmp_path / "reset.sqlite"
    samples = cpu_samples([[(0, busy_ticks(60, 30)), (1, busy_ticks(60, 50))]] * 2)
    last = samples[-1]
    readings = tuple(
        replace(r, values={**r.values, "user_us": 86_400_000_000 - 1}) if r.key == "1" else r
        for r in last.readings
    )
    samples[-1] = replace(last, readings=readings)
    with Store.open(db) as store:
        write(store, "host", (CPU,), samples)
    with SqliteReader.open(db) as reader:
        model = catalog.build_model(reader, "ESALNXC", catalog.Query())
    second = [r for r in model.rows if r.end_us == START_US + 2 * MINUTE]
    (cpu0,) = [r.values["total"] for r in second if r.values["id"] == 0]
    (cpu1,) = [r.values["total"] for r in second if r.values["id"] == 1]
    (all_,) = [r.values["total"] for r in second if r.kind is RowKind.TOTAL]
    assert isinstance(cpu0, float) and isinstance(cpu1, float) and cpu1 > 99
    assert all_ == 0.0 + cpu0 + cpu1


def test_a_processor_online_for_a_quarter_adds_a_quarter_to_its_types_tot(tmp_path: Path) -> None:
    """ESACPUU: IFL 2 online 15 s of the minute (its online time), busy 80% of it: its row
    80, the IFL ``Tot`` 40 + 80/4 = 60, and ESASSUM's busy by type (the hypervisor's view)
    the same."""
    db = tmp_path / "lpar.sqlite"
    samples = []
    for i in range(2):
        readings = tuple(
            Reading(
                "lcpu",
                str(n),
                {
                    "elapsed_us": i * seconds * 1_000_000,
                    "emul_us": i * seconds * busy * 10_000,
                    "user_us": 0,
                    "syst_us": 0,
                    "idle_us": i * seconds * (100 - busy) * 10_000,
                },
                {"type": "IFL", "lpar": "L32", "type_source": "monitor"},
            )
            for n, seconds, busy in ((1, 60, 40), (2, 15, 80))
        )
        samples.append(
            Sample("monitor", START_US + i * MINUTE, readings, config={"lpar_name": "L32"})
        )
    with Store.open(db) as store:
        write(store, "monitor", (LCPU,), samples)
    with SqliteReader.open(db) as reader:
        cpuu = catalog.build_model(reader, "ESACPUU", catalog.Query())
        summary = catalog.build_model(reader, "ESASSUM", catalog.Query())
    assert [r.values["total"] for r in rows_of(cpuu, RowKind.DATA)] == [
        pytest.approx(40.0),
        pytest.approx(80.0),
    ]
    (tot,) = rows_of(cpuu, RowKind.SUBTOTAL)
    assert tot.values["total"] == pytest.approx(60.0)
    assert tot.values["idle"] == pytest.approx(60.0 + 20.0 / 4)
    assert [r.values["busy_ifl"] for r in summary.rows] == [tot.values["total"]]


@pytest.mark.parametrize(
    ("times", "duration", "shares"),
    [
        ([60.0, 60.0, 59.5], 60.0, None),  # within 1% of the fullest
        ([60.0, 15.0, 0.0], 60.0, [1.0, 0.25, 1.0]),  # 0: not known, online throughout
        ([60.0, 0.0], 60.0, None),
        ([0.0, 0.0], 60.0, None),
        ([], 60.0, None),
        ([30.0, 15.0], 60.0, [1.0, 0.5]),  # a partial bucket: over the time it covers
        ([6e9, 60.0, 60.0], 60.0, None),  # a counter reset reads long: the interval caps it
        ([6e9, 60.0, 15.0], 60.0, [1.0, 1.0, 0.25]),
        ([60.0, 15.0], 0.0, [1.0, 0.25]),  # no duration: no cap
    ],
)
def test_shares_of_the_interval(
    times: list[float], duration: float, shares: list[float] | None
) -> None:
    assert OnlineTime((), slack_us=0.1).shares(times, duration) == shares


def test_the_kernels_rounding_counts_as_online_throughout() -> None:
    """Up to a tick per /proc/stat field each way (two CPUs of 8 fields: 160 ms)."""
    from esatui.screens.esalnxc import CPU_ONLINE

    assert CPU_ONLINE.shares([1_000_000, 840_000], 1_000_000) is None
    assert CPU_ONLINE.shares([1_000_000, 830_000], 1_000_000) == [1.0, 0.83]
