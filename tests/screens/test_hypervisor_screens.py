"""ESACPUU and ESAUSR2 from every source that fills ``lcpu`` and ``guest``."""

from __future__ import annotations

import itertools
import shutil
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esatui.collectors.base import PolledSource, SourceContext
from esatui.collectors.host import HostSource
from esatui.collectors.hypfs import HypfsSource
from esatui.collectors.kinds import LCPU
from esatui.collectors.model import Reading, Sample
from esatui.db.sqlite_reader import SqliteReader
from esatui.db.store import Store
from esatui.formats import render
from esatui.sampling.session import Recording
from esatui.screens import catalog
from esatui.screens.common import HYPFS_STEAL_NOTE
from esatui.screens.esacpuu import lcpu_shares, lcpu_total
from esatui.screens.model import RowKind
from esatui.sim.clock import SimClock
from esatui.sim.interfaces.procfs import ProcStat
from tests.conftest import DATA
from tests.fakes.hypfs import HypfsLpar, HypfsVm, guest, lpar
from tests.fixtures.clock import stepping
from tests.fixtures.recording import write
from tests.screens.golden import check

MINUTE_S = 60
START_US = 1_790_000_040_000_000  # on a minute boundary


def record(db_path: Path, sources: list[PolledSource], clock: SimClock, count: int) -> None:
    recording = Recording(
        db_path, sources, interval_s=MINUTE_S, hf_s=None, node="LNXT01", clock=clock
    )
    recording.run(threading.Event(), warn=print, count=count)


def lpar_sysinfo(name: str) -> str:
    """A real z15 sysinfo (sub-capacity CP: 3085 vs IFL 416) as seen in LPAR ``name``."""
    text = (DATA / "host/sysinfo-zvm72-guest-z15-8561-ansible.txt").read_text()
    text = text.split("\nVM00")[0].replace(
        "LPAR Name:            L32", f"LPAR Name:            {name}"
    )
    return text + "\n"


@pytest.fixture
def lpar_recording(tmp_path: Path, db_path: Path) -> Path:
    root = tmp_path / "root"
    box = HypfsLpar(
        root, [lpar("ZOS1", 1, "CP,ZIIP"), lpar("LP1", 3, "CP,IFL,IFL")], "LP1", now_us=START_US
    )
    (root / "proc").mkdir(parents=True)
    (root / "proc/sysinfo").write_text(lpar_sysinfo("LP1"))
    stat = ProcStat(root, [0, 1])
    busy = {("LP1", 0): 0.5, ("LP1", 1): 0.25, ("LP1", 2): 0.75}

    def advance(seconds: float) -> None:
        box.advance(seconds, busy, mgmt=0.01)
        box.write()
        for cpu in (0, 1):
            stat.advance(cpu, user=int(seconds * 50), idle=int(seconds * 50))
        stat.write()

    box.write()
    stat.write()
    clock = stepping(START_US, advance)
    ctx = SourceContext(root, clock=clock)
    record(db_path, [HypfsSource(ctx, mode="debugfs"), HostSource(ctx)], clock, count=3)
    return db_path


def test_esacpuu_from_hypfs_in_an_lpar(lpar_recording: Path) -> None:
    with SqliteReader.open(lpar_recording) as reader:
        model = catalog.build_model(reader, "ESACPUU", catalog.Query())
    rows = [r for r in model.rows if r.end_us == model.rows[0].end_us]
    data = [r for r in rows if r.kind is RowKind.DATA]
    assert [(r.values["type"], r.values["id"]) for r in data] == [("CP", 0), ("IFL", 1), ("IFL", 2)]
    assert [r.values["total"] for r in data] == pytest.approx([50.0, 25.0, 75.0])
    # online but not dispatched (50, 75, 25%) holds the idle wait: neither steal nor idle
    assert all(r.values[c] is None for r in data for c in ("emul", "idle", "steal"))
    assert all(r.values["mgmt"] == pytest.approx(1.0) for r in data)
    subtotals = {r.values["type"]: r for r in rows if r.kind is RowKind.SUBTOTAL}
    assert subtotals["IFL"].values["total"] == pytest.approx(100.0)
    assert subtotals["CP"].values["total"] == pytest.approx(50.0)
    assert model.system.startswith("LP1")
    assert "CPU types from the hypervisor file system (diag 204)." in model.notes
    assert HYPFS_STEAL_NOTE in model.notes
    # the other LPAR's processors are not this LPAR's
    assert all(r.values["type"] != "ZIIP" for r in rows)


def test_esacpuu_normalized_view(lpar_recording: Path) -> None:
    with SqliteReader.open(lpar_recording) as reader:
        query = catalog.Query(options=frozenset({"normalized"}))
        model = catalog.build_model(reader, "ESACPUU", query)
    newest = [r for r in model.rows if r.end_us == model.rows[0].end_us]
    subtotals = {r.values["type"]: r for r in newest if r.kind is RowKind.SUBTOTAL}
    assert subtotals["CP"].values["total"] == pytest.approx(50.0 * 416 / 3085)
    assert subtotals["IFL"].values["total"] == pytest.approx(100.0)  # IFLs are full speed
    assert any("normalized to full-speed engines (CP x 0.135" in n for n in model.notes)


def test_esassum_takes_the_hypervisor_view_when_recorded(lpar_recording: Path) -> None:
    with SqliteReader.open(lpar_recording) as reader:
        model = catalog.build_model(reader, "ESASSUM", catalog.Query())
    row = model.rows[0]
    assert row.values["cpus_cp"] == 1 and row.values["cpus_ifl"] == 2
    assert row.values["busy_ifl"] == pytest.approx(100.0)
    assert model.column("busy_cp").drill == "ESACPUU"
    assert model.notes[0].startswith("CPUs by type: the hypervisor view")


def test_esausr2_from_diag_2fc(tmp_path: Path, db_path: Path) -> None:
    root = tmp_path / "root"
    vm = HypfsVm(
        root,
        [
            guest("LNXT01", vcpus=2),
            guest("ZVSE1", vcpus=2, mem_used_kib=512 << 10),  # 120%: more than one CPU
            guest("TCPIP", vcpus=1),
        ],
        now_us=START_US,
    )
    cpu = {"LNXT01": 0.35, "ZVSE1": 1.2, "TCPIP": 0.01}

    def advance(seconds: float) -> None:
        vm.advance(seconds, cpu, samples_per_s=2)
        vm.write()

    vm.write()
    clock = stepping(START_US, advance)
    record(db_path, [HypfsSource(SourceContext(root, clock=clock), mode="debugfs")], clock, 2)
    with SqliteReader.open(db_path) as reader:
        model = catalog.build_model(reader, "ESAUSR2", catalog.Query())
        # hypfs under z/VM has intervals but no LPAR processors (before: "nothing recorded")
        cpuu = catalog.build_model(reader, "ESACPUU", catalog.Query())
    assert not cpuu.rows
    assert catalog.no_rows_reason(cpuu) == (
        "no ESACPUU data in this range: it needs the z/VM monitor, hypfs in an LPAR, SMAPI or vmcp"
    )
    newest = [r for r in model.rows if r.end_us == model.rows[0].end_us]
    assert [r.values["userid"] for r in newest] == ["ZVSE1", "LNXT01", "TCPIP"]
    assert [r.values["cpu_pct"] for r in newest] == pytest.approx([120.0, 35.0, 1.0])
    zvse = newest[0].values
    assert zvse["vcpus"] == 2 and zvse["mem_used_mb"] == pytest.approx(512)
    assert zvse["samp_cpu"] == 120  # CP sampled it using a CPU every time (capped at 100%)
    assert newest[1].drill is not None  # LNXT01 is this Linux: drill to ESALNXC
    check("ESAUSR2.text", render(model, "text"))


def pct_sample(
    t_us: int,
    rows: dict[str, tuple[str, float, float, float, float]],
    totals: dict[str, dict[str, int]],
    seconds: int,
) -> Sample:
    """Monitor-style lcpu counters that advance by the given percentages of ``seconds``
    (emul, user, syst, idle; D0R16's time not dispatched, ``steal_us``, is what is left,
    the idle wait included, as PR/SM takes a shared processor that waits off its own)."""
    readings = []
    for key, (cpu_type, emul, user, syst, idle) in rows.items():
        acc = totals.setdefault(
            key,
            dict.fromkeys(
                ("elapsed_us", "emul_us", "user_us", "syst_us", "idle_us", "steal_us"), 0
            ),
        )
        for name, share in (
            ("elapsed_us", 100.0),
            ("emul_us", emul),
            ("user_us", user),
            ("syst_us", syst),
            ("idle_us", idle),
            ("steal_us", 100.0 - emul - user - syst),
        ):
            acc[name] += round(share * seconds * 10_000)
        readings.append(
            Reading(
                "lcpu",
                key,
                dict(acc),
                {"type": cpu_type, "lpar": "MODEVM", "type_source": "monitor"},
            )
        )
    return Sample(
        "monitor",
        t_us,
        tuple(readings),
        config={"lpar_name": "MODEVM", "machine_type": "2828", "zvm_level": "6.3.0"},
    )


# seed 000, "CP Overhead in Mode VM": ESACPUU at 00:47, 00:54 and 00:59, as printed:
# type, total, emul, user, syst, idle, steal (each rounded: total + idle + steal is 99.9 or
# 100.0; an exact zero is printed 0)
SEED000_ESACPUU = {
    "00:47": {
        "0": ("CP", "13.0", "10.1", "0.7", "2.2", "86.7", "0.3"),
        "1": ("IFL", "0.6", "0.4", "0.1", "0.1", "99.2", "0.1"),
        "2": ("IFL", "0.4", "0.3", "0.1", "0.1", "99.5", "0.0"),
    },
    "00:54": {
        "0": ("CP", "56.6", "10.6", "0.7", "45.4", "42.6", "0.7"),
        "1": ("IFL", "25.0", "17.9", "5.8", "1.3", "69.7", "5.3"),
        "2": ("IFL", "26.1", "18.8", "6.1", "1.3", "68.5", "5.3"),
    },
    "00:59": {
        "0": ("CP", "96.4", "76.6", "4.2", "15.6", "0", "3.6"),
        "1": ("IFL", "26.8", "19.1", "5.5", "2.3", "71.9", "1.3"),
        "2": ("IFL", "27.1", "19.3", "5.5", "2.3", "71.7", "1.2"),
    },
}


def _shown(value: float) -> str:
    return "0" if value == 0 else f"{value:.1f}"


def unrounded(printed: tuple[str, ...]) -> tuple[str, float, float, float, float]:
    """Percentages (type, emul, user, syst, idle), to the hundredth, that the printed row
    rounds from, with steal what is left of 100 after total and idle: the screen's values
    of an exact recording, which the seed shows rounded."""
    cpu_type, _total, *parts, _steal = printed
    steps = [d / 100 for d in range(-4, 5)]
    for offsets in itertools.product(steps, repeat=4):
        exact = [float(p) + d if p != "0" else 0.0 for p, d in zip(parts, offsets, strict=True)]
        busy = sum(exact[:3])
        left = 100.0 - busy - exact[3]
        values = (busy, *exact, left)
        # each a little away from where it would round otherwise (the counters are µs)
        if left >= 0 and all(
            _shown(v) == want and (v == 0 or _shown(v - 0.004) == _shown(v + 0.004) == want)
            for v, want in zip(values, printed[1:], strict=True)
        ):
            emul, user, syst, idle = exact
            return cpu_type, emul, user, syst, idle
    raise AssertionError(f"no exact values round to {printed}")


def test_esacpuu_reproduces_seed_000_from_monitor_counters(db_path: Path) -> None:
    """Every figure seed 000 prints, total and steal included, from counters that round to
    them; steal is what is left (D0R16's time not dispatched holds the idle wait too)."""
    day = 1_456_790_400_000_000  # 2016-03-01 00:00 UTC
    exact = {
        hhmm: {k: unrounded(row) for k, row in rows.items()}
        for hhmm, rows in SEED000_ESACPUU.items()
    }
    idle = {k: (t, 0.0, 0.0, 0.0, 100.0) for k, (t, *_) in exact["00:47"].items()}
    totals: dict[str, dict[str, int]] = {}
    samples = [pct_sample(day + 46 * 60_000_000, idle, totals, 0)]
    last = 46
    for hhmm, rows in exact.items():
        minute = int(hhmm[3:])
        if minute - 1 > last:  # quiet minutes between the seed's screens
            samples.append(
                pct_sample(day + (minute - 1) * 60_000_000, idle, totals, (minute - 1 - last) * 60)
            )
        samples.append(pct_sample(day + minute * 60_000_000, rows, totals, 60))
        last = minute
    with Store.open(db_path) as store:
        write(store, "monitor", (LCPU,), samples, node="VMSYS1")
    columns = ("total", "emul", "user", "syst", "idle", "steal")
    with SqliteReader.open(db_path) as reader:
        for hhmm, printed in SEED000_ESACPUU.items():
            end = day + int(hhmm[3:]) * 60_000_000
            model = catalog.build_model(
                reader, "ESACPUU", catalog.Query(after_us=end - 60_000_000, until_us=end)
            )
            data = [r for r in model.rows if r.kind is RowKind.DATA]
            assert len(data) == 3
            for row in data:
                cpu_type, *figures = printed[str(row.values["id"])]
                assert row.values["type"] == cpu_type
                shown = [_shown(row.values[c]) for c in columns]  # type: ignore[arg-type]
                assert shown == figures, (hhmm, row.values["id"])
                assert row.values["total"] + row.values["idle"] + row.values["steal"] == (  # type: ignore[operator]
                    pytest.approx(100.0)
                )
            if hhmm == "00:59":
                check("ESACPUU-seed000.text", render(model, "text"))


def test_esacpuu_from_smapi_gauges_shows_only_this_lpar(db_path: Path) -> None:
    def smapi_sample(t_us: int, busy: float) -> Sample:
        rows = [("LP1", "0", "IFL", busy), ("LP1", "1", "IFL", busy / 2), ("LP2", "0", "CP", 99.0)]
        return Sample(
            "smapi",
            t_us,
            tuple(
                Reading(
                    "lcpu",
                    f"{lp}/{cpu}",
                    {"busy_pct": b, "overhead_pct": 0.1},
                    {"type": t, "lpar": lp, "type_source": "smapi"},
                )
                for lp, cpu, t, b in rows
            ),
            config={"lpar_name": "LP1"},
        )

    with Store.open(db_path) as store:
        write(
            store,
            "smapi",
            (LCPU,),
            [smapi_sample(START_US, 10.0), smapi_sample(START_US + 60_000_000, 98.5)],
        )
    with SqliteReader.open(db_path) as reader:
        model = catalog.build_model(reader, "ESACPUU", catalog.Query())
    data = [r for r in model.rows if r.kind is RowKind.DATA]
    assert [(r.values["type"], r.values["id"], r.values["total"]) for r in data] == [
        ("IFL", 0, 98.5),
        ("IFL", 1, 49.25),
    ]
    assert all(r.values["emul"] is None and r.values["idle"] is None for r in data)
    assert data[0].values["mgmt"] == pytest.approx(0.1)
    subtotal = next(r for r in model.rows if r.kind is RowKind.SUBTOTAL)
    assert subtotal.values["total"] == pytest.approx(147.75)


def test_esalnxc_and_esassum_show_the_type_vmcp_proves(tmp_path: Path, db_path: Path) -> None:
    """A z/VM guest with two IFLs and a CP: /proc cannot tell, QUERY VIRTUAL CPUS can."""
    from esatui.collectors.vmcp import VmcpSource
    from esatui.sim.interfaces.vmcp import ScriptedVmcp, zvm_guest

    root = tmp_path / "root"
    shutil.copytree(DATA / "host/trees/util-linux-s390-zvm", root)
    stat = ProcStat(root, [0, 1, 2, 3])
    stat.write()
    device = ScriptedVmcp(zvm_guest({0: "IFL", 1: "IFL", 2: "CP", 3: "IFL"}))

    def advance(seconds: float) -> None:
        for cpu in range(4):
            stat.advance(cpu, user=int(seconds * 40), idle=int(seconds * 60))
        stat.write()

    clock = stepping(START_US, advance)
    ctx = SourceContext(root, clock=clock)
    record(db_path, [HostSource(ctx), VmcpSource(ctx, opener=device.open)], clock, count=2)
    with SqliteReader.open(db_path) as reader:
        lnxc = catalog.build_model(reader, "ESALNXC", catalog.Query())
        summary = catalog.build_model(reader, "ESASSUM", catalog.Query())
    newest = [r for r in lnxc.rows if r.end_us == lnxc.rows[0].end_us and r.kind is RowKind.DATA]
    assert [(r.values["id"], r.values["type"]) for r in newest] == [
        (0, "IFL"),
        (1, "IFL"),
        (2, "CP"),
        (3, "IFL"),
    ]
    assert "CPU types from CP QUERY VIRTUAL CPUS (vmcp)." in lnxc.notes
    ids = [c.id for c in summary.columns]
    assert ids[1:5] == ["cpus_cp", "busy_cp", "cpus_ifl", "busy_ifl"]
    assert summary.rows[0].values["cpus_ifl"] == 3
    assert summary.rows[0].values["busy_cp"] == pytest.approx(40.0)
    assert "CPU types from CP QUERY VIRTUAL CPUS (vmcp)." in summary.notes


_FIELD = st.one_of(
    st.none(),
    st.integers(min_value=0, max_value=2**63),
    st.floats(min_value=0, max_value=1e15, allow_nan=False),
    st.just("x"),
)


@settings(max_examples=400, deadline=None)
@given(st.integers(min_value=0, max_value=2**40), st.lists(_FIELD, min_size=9, max_size=9))
def test_a_processors_total_alone_is_its_shares_total(duration: int, fields: list[object]) -> None:
    """ESACPUU's ``total`` column reads ``lcpu_total``, the build ``lcpu_shares``: the same
    value (==, None included) for any fields, recorded or not, of any type."""
    assert lcpu_total(duration, *fields) == lcpu_shares(duration, *fields)[0]  # type: ignore[arg-type]
