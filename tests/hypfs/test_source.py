"""The hypfs source through fake hypfs trees and debugfs snapshots, LPAR and z/VM."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from esatui.collectors.base import PolledSource, SourceContext
from esatui.collectors.hypfs import HypfsSource
from esatui.collectors.model import Reading, Sample
from esatui.sampling.builder import IntervalBuilder
from tests.fakes.hypfs import HypfsLpar, HypfsVm, guest, lpar


def readings(sample: Sample, kind: str) -> dict[str, Reading]:
    return {r.key: r for r in sample.readings if r.kind == kind}


class Clock:
    def __init__(self) -> None:
        self.ns = 1_000_000_000

    def __call__(self) -> int:
        return self.ns


class Updates:
    def __init__(self, error: int | None = None) -> None:
        self.paths: list[str] = []
        self.error = error

    def __call__(self, path: str) -> None:
        self.paths.append(path)
        if self.error is not None:
            raise OSError(self.error, "refused")


def lpar_box(root: Path) -> HypfsLpar:
    box = HypfsLpar(
        root,
        [lpar("ZOS1", 1, "CP,ZIIP"), lpar("LINUX1", 3, "CP,IFL,IFL,ZIIP")],
        "LINUX1",
        physical={0: "CP", 1: "IFL", 2: "IFL", 3: "IFL"},
    )
    box.write()
    return box


def deltas(a: Reading, b: Reading) -> dict[str, int]:
    out = {}
    for k, v in b.values.items():
        before = a.values.get(k)
        if isinstance(v, int) and isinstance(before, int):
            out[k] = v - before
    return out


@pytest.mark.parametrize("mode", ["debugfs", "tree"])
def test_lpar_logical_cores(tmp_path: Path, mode: str) -> None:
    box = lpar_box(tmp_path)
    clock = Clock()
    updates = Updates()
    warnings: list[str] = []
    ctx = SourceContext(root=tmp_path, warn=warnings.append)
    src = HypfsSource(ctx, mode=mode, clock=clock, updater=updates)
    assert isinstance(src, PolledSource)
    assert src.probe().available
    first = src.sample()
    box.advance(60.0, {("LINUX1", 1): 0.25, ("LINUX1", 2): 1.0}, mgmt=0.01)
    box.write()
    clock.ns += 60_000_000_000
    second = src.sample()
    assert not warnings
    cpus = readings(second, "lcpu")
    assert sorted(cpus, key=int) == ["0", "1", "2", "3"]  # this LPAR only
    assert {k: r.attrs["type"] for k, r in cpus.items()} == {
        "0": "CP",
        "1": "IFL",
        "2": "IFL",
        "3": "zIIP",
    }
    assert cpus["1"].attrs["lpar"] == "LINUX1"
    d1 = deltas(readings(first, "lcpu")["1"], cpus["1"])
    assert d1["elapsed_us"] == 60_000_000
    assert d1["busy_us"] == 15_000_000
    assert d1["mgmt_us"] == 600_000
    assert d1["steal_us"] == 45_000_000
    d2 = deltas(readings(first, "lcpu")["2"], cpus["2"])
    assert d2["steal_us"] == 0
    for absent in ("emul_us", "user_us", "syst_us", "idle_us"):
        assert cpus["1"].values.get(absent) is None
    assert second.config is not None
    assert second.config["hypfs.lpar"] == "LINUX1"
    assert second.config["hypfs.physical_cpus.IFL"] == "3"
    if mode == "debugfs":
        # the snapshot's own TOD clock is the time; no monotonic clock
        assert second.time_us - first.time_us == 60_000_000
        assert second.mono_ns is None
        assert cpus["1"].attrs["type_source"] == "hypfs:diag_204"
        assert d1["wait_us"] == 45_000_000
        assert updates.paths == []
    else:
        assert second.mono_ns is not None
        assert cpus["1"].attrs["type_source"] == "hypfs:tree"
        assert "wait_us" not in cpus["1"].values
        assert updates.paths == [str(tmp_path / "sys/hypervisor/s390/update")] * 2


def test_debugfs_is_preferred_in_auto_mode(tmp_path: Path) -> None:
    lpar_box(tmp_path)
    sample = HypfsSource(SourceContext(root=tmp_path)).sample()
    assert sample.config is not None
    assert sample.config["hypfs.source"] == "diag_204"


def test_unchanged_snapshot_gives_no_data(tmp_path: Path) -> None:
    """A snapshot read again (old kernels kept one for a second) is the same sample at the
    same time: no interval ends there, and the next runs from the snapshot before, its
    processors not new again."""
    box = lpar_box(tmp_path)
    warnings: list[str] = []
    src = HypfsSource(SourceContext(root=tmp_path, warn=warnings.append), mode="debugfs")
    builder = IntervalBuilder("hypfs", src.kinds)
    first = src.sample()
    assert readings(first, "lcpu") and builder.add(first) is None
    again = src.sample()
    assert (again.time_us, again.readings) == (first.time_us, first.readings)
    assert builder.add(again) is None
    assert warnings[0].startswith("hypfs: snapshot unchanged")
    box.advance(60.0, 0.5)
    box.write()
    interval = builder.add(src.sample())
    assert interval is not None and interval.duration_us == 60_000_000
    cpus = [r for r in interval.rows if r.kind == "lcpu"]
    assert cpus and all(r.flags == 0 and r.values["busy_us"] for r in cpus)


def test_tree_update_at_most_once_a_second(tmp_path: Path) -> None:
    lpar_box(tmp_path)
    clock = Clock()
    updates = Updates()
    src = HypfsSource(SourceContext(root=tmp_path), mode="tree", clock=clock, updater=updates)
    src.sample()
    clock.ns += 400_000_000
    src.sample()
    assert len(updates.paths) == 1
    clock.ns += 600_000_000
    src.sample()
    assert len(updates.paths) == 2


def test_ebusy_is_not_an_error_but_eacces_is_said_once(tmp_path: Path) -> None:
    lpar_box(tmp_path)
    clock = Clock()
    warnings: list[str] = []
    ctx = SourceContext(root=tmp_path, warn=warnings.append)
    busy = HypfsSource(ctx, mode="tree", clock=clock, updater=Updates(errno.EBUSY))
    busy.sample()
    assert not warnings
    denied = HypfsSource(ctx, mode="tree", clock=clock, updater=Updates(errno.EACCES))
    first = denied.sample()
    assert len(warnings) == 1 and warnings[0].startswith("hypfs: cannot refresh")
    clock.ns += 2_000_000_000
    denied.sample()
    assert len(warnings) == 1
    assert readings(first, "lcpu")  # the tree as it was is still read


def test_which_lpar_is_this_one(tmp_path: Path) -> None:
    box = HypfsLpar(tmp_path, [lpar("A", 1, "CP"), lpar("B", 2, "IFL,IFL")], "B", sysinfo=False)
    box.write(debugfs=False)
    warnings: list[str] = []
    src = HypfsSource(SourceContext(root=tmp_path, warn=warnings.append), mode="tree")
    sample = src.sample()
    assert not readings(sample, "lcpu")
    assert "cannot tell which of the 2 LPARs" in warnings[0]
    named = HypfsSource(SourceContext(root=tmp_path), mode="tree", lpar="B").sample()
    assert sorted(readings(named, "lcpu")) == ["0", "1"]
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/sysinfo").write_text("LPAR Number: 2\nLPAR Name:            B       \n")
    from_sysinfo = HypfsSource(SourceContext(root=tmp_path), mode="tree").sample()
    assert sorted(readings(from_sysinfo, "lcpu")) == ["0", "1"]


def test_an_empty_lpar_name_in_sysinfo_is_no_name(tmp_path: Path) -> None:
    """Found from outside: a pattern read 'LPAR Name:' with nothing after it as the next
    line's first word ('LPAR'), and no LPAR of that name was this one."""
    box = HypfsLpar(tmp_path, [lpar("A", 1, "CP"), lpar("LPAR", 2, "IFL,IFL")], "A", sysinfo=False)
    box.write(debugfs=False)
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/sysinfo").write_text(
        "LPAR Number: 2\nLPAR Name:\nLPAR Characteristics: Shared\n"
    )
    warnings: list[str] = []
    sample = HypfsSource(SourceContext(root=tmp_path, warn=warnings.append), mode="tree").sample()
    assert not readings(sample, "lcpu")  # two LPARs and no name: it does not guess
    assert "cannot tell which of the 2 LPARs" in warnings[0]


def test_only_lpar_visible_is_this_one(tmp_path: Path) -> None:
    HypfsLpar(tmp_path, [lpar("SOLO", 1, "IFL")], "SOLO", sysinfo=False).write(debugfs=False)
    sample = HypfsSource(SourceContext(root=tmp_path), mode="tree").sample()
    assert list(readings(sample, "lcpu")) == ["0"]


def test_garbage_in_the_tree(tmp_path: Path) -> None:
    box = lpar_box(tmp_path)
    del box
    (tmp_path / "sys/hypervisor/s390/systems/LINUX1/cpus/1/cputime").write_text("lots\n")
    (tmp_path / "sys/hypervisor/s390/systems/LINUX1/cpus/2/mgmtime").write_text(
        "18446744073709551000\n"  # a negative difference that wrapped in the kernel
    )
    warnings: list[str] = []
    sample = HypfsSource(SourceContext(root=tmp_path, warn=warnings.append), mode="tree").sample()
    cpus = readings(sample, "lcpu")
    assert cpus["1"].values["busy_us"] is None
    assert "steal_us" not in cpus["1"].values
    assert cpus["2"].values["mgmt_us"] is None
    assert len(warnings) == 2


@pytest.mark.parametrize("mode", ["debugfs", "tree"])
def test_zvm_guests(tmp_path: Path, mode: str) -> None:
    vm = HypfsVm(tmp_path, [guest("LINUX01", vcpus=2), guest("TCPIP", vcpus=1)], lcpus=6)
    vm.write()
    clock = Clock()
    src = HypfsSource(SourceContext(root=tmp_path), mode=mode, clock=clock, updater=Updates())
    assert "z/VM" in src.probe().reason or "diag_2fc" in src.probe().reason
    first = src.sample()
    vm.advance(60.0, {"LINUX01": 0.5, "TCPIP": 0.0}, samples_per_s=1)
    vm.write()
    clock.ns += 60_000_000_000
    second = src.sample()
    guests = readings(second, "guest")
    assert sorted(guests) == ["LINUX01", "TCPIP"]
    g = guests["LINUX01"]
    assert g.attrs == {"userid": "LINUX01"}
    assert g.values["vcpus"] == 2
    assert g.values["mem_max_kib"] == 4 << 20
    assert g.values["mem_used_kib"] == 1 << 20
    d = deltas(readings(first, "guest")["LINUX01"], g)
    assert d["cpu_us"] == 30_000_000
    assert d["elapsed_us"] == 60_000_000
    assert d["samp_total"] == 60
    assert d["samp_cpu"] == 30
    assert d["samp_cpu"] + d["samp_delay"] + d["samp_idle"] == 60
    assert second.config is not None
    assert second.config["hypfs.hypervisor"] == "z/VM Hypervisor"
    assert second.config["hypfs.logical_cpus"] == "6"


def test_nothing_mounted(tmp_path: Path) -> None:
    probe = HypfsSource(SourceContext(root=tmp_path)).probe()
    assert not probe.available
    assert "mount -t s390_hypfs" in probe.reason
    warnings: list[str] = []
    sample = HypfsSource(SourceContext(root=tmp_path, warn=warnings.append)).sample()
    assert not sample.readings
    assert warnings


def test_bad_mode() -> None:
    with pytest.raises(ValueError, match="mode"):
        HypfsSource(SourceContext(), mode="magic")
