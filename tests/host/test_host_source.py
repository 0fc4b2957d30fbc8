"""The host source on the real captured trees, with a /proc/stat the test advances."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from esatui.collectors.base import SourceContext
from esatui.collectors.host import CPU, HostSource, user_hz
from esatui.collectors.sysfs_cpu import parse_cpu_list
from esatui.sampling.builder import IntervalBuilder
from esatui.sim.interfaces.procfs import ProcStat
from tests.conftest import DATA

TREES = sorted(p.name for p in (DATA / "host" / "trees").iterdir())


def make_root(tmp_path: Path, tree: str) -> tuple[Path, ProcStat]:
    root = tmp_path / tree
    shutil.copytree(DATA / "host" / "trees" / tree, root, symlinks=True)
    online = sorted(parse_cpu_list((root / "sys/devices/system/cpu/online").read_text()))
    stat = ProcStat(root, online)
    stat.write()
    return root, stat


@pytest.mark.parametrize("tree", TREES)
def test_host_source_on_captured_trees(tmp_path: Path, tree: str) -> None:
    root, stat = make_root(tmp_path, tree)
    source = HostSource(SourceContext(root))
    assert source.probe().available
    first = source.sample()
    online = sorted(stat.ticks)
    assert [r.key for r in first.readings] == [str(n) for n in online]
    assert first.config is not None
    assert first.config["machine.type"] in {"2817", "2964"}
    assert first.config["host.arch"] == "CPU"  # an s390 tree, whatever machine runs the test
    for reading in first.readings:
        assert reading.attrs["type"] == "CPU"
        assert reading.attrs["type_source"] == "arch"
        assert reading.attrs["address"] == reading.key  # these trees number CPUs by address
    for n in online:
        stat.advance(n, user=50, system=10, idle=30, steal=10)
    stat.write()
    builder = IntervalBuilder("host", (CPU,))
    builder.add(first)
    interval = builder.add(source.sample())
    assert interval is not None
    tick_us = 1_000_000 // user_hz()
    for row in interval.rows:
        assert row.values["user_us"] == 50 * tick_us
        assert row.values["steal_us"] == 10 * tick_us
        assert row.values["nice_us"] == 0


def test_node_is_the_vm00_name_under_zvm(tmp_path: Path) -> None:
    root, _ = make_root(tmp_path, "util-linux-s390-zvm")
    sample = HostSource(SourceContext(root)).sample()
    assert sample.config is not None
    assert sample.config["node"] == "R1745003"
    assert sample.config["vm00.control_program"] == "z/VM 6.1.0"
    assert sample.config["host.virtual_cpus"] == "yes"


def test_node_is_the_host_name_in_an_lpar(tmp_path: Path) -> None:
    root, _ = make_root(tmp_path, "util-linux-s390-lpar")
    (root / "proc/sys/kernel").mkdir(parents=True)
    (root / "proc/sys/kernel/hostname").write_text("lnxprod1\n")
    sample = HostSource(SourceContext(root)).sample()
    assert sample.config is not None
    assert sample.config["node"] == "lnxprod1"
    assert sample.config["lpar.name"] == "R35LP37"
    by_key = {r.key: r for r in sample.readings}
    assert by_key["1"].attrs["polarization"] == "vertical:low"
    assert "0" not in by_key  # cpu0 is offline in this capture


def test_a_captured_tree_without_a_host_name_is_named_by_itself(tmp_path: Path) -> None:
    """Before: a tree below ``--root`` with no host name file took this machine's name, so
    captures of several systems clashed under it; now the LPAR's it names, else the root's."""
    import socket

    root, _ = make_root(tmp_path, "util-linux-s390-lpar")
    sample = HostSource(SourceContext(root)).sample()
    assert sample.config is not None
    assert sample.config["node"] == sample.config["lpar.name"] == "R35LP37"
    bare = tmp_path / "bare-capture"
    bare.mkdir()
    shutil.copytree(root / "sys", bare / "sys", symlinks=True)
    (bare / "proc").mkdir()
    shutil.copy(root / "proc/stat", bare / "proc/stat")
    sample = HostSource(SourceContext(bare)).sample()
    assert sample.config is not None
    assert sample.config["node"] == "bare-capture" != socket.gethostname()


def test_facts_are_reread_only_when_the_cpu_set_changes(tmp_path: Path) -> None:
    root, stat = make_root(tmp_path, "util-linux-s390-kvm")
    source = HostSource(SourceContext(root))
    first = source.sample()
    second = source.sample()
    assert first.reads > 1
    assert second.reads == 1  # only /proc/stat
    stat.set_online([0, 1])
    stat.write()
    third = source.sample()
    assert third.reads > 1
    assert [r.key for r in third.readings] == ["0", "1"]


def test_probe_says_why_when_proc_stat_is_missing(tmp_path: Path) -> None:
    found = HostSource(SourceContext(tmp_path)).probe()
    assert not found.available
    assert found.reason.endswith("proc/stat does not exist: not a Linux /proc")


def test_this_machine() -> None:
    source = HostSource(SourceContext(Path("/")))
    sample = source.sample()
    assert sample.readings
    assert sample.mono_ns is not None
    assert all(r.values["idle_us"] is not None for r in sample.readings)


@pytest.mark.parametrize("content", [b"", b"intr 0\nctxt 1\n", b"garbage\x00\xff\n"])
def test_a_proc_stat_without_cpu_lines_is_no_sample(tmp_path: Path, content: bytes) -> None:
    """Before: an empty or foreign /proc/stat in a captured tree (the real util-linux z/VM
    dump of shared/samples/trees/util-linux-s390-zvm, SOURCES.md) gave a sample of zero
    CPUs, so ``collect --source host`` said it recorded the host and exited 0 with nothing
    of it; the kernel prints a ``cpuN`` line for every online CPU and one is always online."""
    root, _ = make_root(tmp_path, "util-linux-s390-zvm")
    (root / "proc/stat").write_bytes(content)
    with pytest.raises(ValueError, match="has no cpuN line: not the kernel's /proc/stat"):
        HostSource(SourceContext(root)).sample()


def test_collect_from_a_tree_whose_proc_stat_is_empty_fails_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: exit 0, ``2 intervals recorded (sources: host, esatui)`` and a database with no
    CPU in it; the README: a collect that recorded nothing of a source it was given is exit
    1, and a new database holding esatui's own rows alone is not kept."""
    from esatui.cli import main

    root, _ = make_root(tmp_path, "util-linux-s390-zvm")
    (root / "proc/stat").write_bytes(b"")
    db = tmp_path / "zvm.sqlite"
    argv = ["collect", "--source", "host", "--root", str(root), "--db", str(db)]
    code = main([*argv, "--interval", "0.2", "--count", "2"])
    out, err = capsys.readouterr()
    assert code == 1
    assert out == ""
    *skipped, last = err.splitlines()
    assert skipped and all(": host: sample skipped: " in line for line in skipped), err
    assert last.startswith("esatui: error: nothing was recorded from host (sample skipped: ")
    assert last.endswith(f"has no cpuN line: not the kernel's /proc/stat); {db} not kept")
    assert "Traceback" not in err
    assert not db.exists()


@pytest.mark.parametrize(
    ("cpuinfo", "label"),
    [
        (b"", "CPU"),  # a capture whose cpuinfo is lost: no architecture claimed
        (b"processor\t: 0\nvendor_id\t: GenuineIntel\n", "X86"),
        (b"processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n", "CPU"),
    ],
)
def test_a_captured_tree_is_not_labelled_by_this_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpuinfo: bytes, label: str
) -> None:
    """Before: a tree below ``--root`` whose /proc/cpuinfo does not say IBM/S390 took the
    architecture of the machine running esatui (an aarch64 capture read on x86 became
    ``X86``, and so did the real util-linux z/VM capture, shared/samples/trees/
    util-linux-s390-zvm, with its cpuinfo emptied); now only the tree's own cpuinfo says."""
    import platform

    monkeypatch.setattr(platform, "machine", lambda: "ppc64le")  # whatever runs the test
    root, _ = make_root(tmp_path, "util-linux-s390-zvm")
    (root / "proc/cpuinfo").write_bytes(cpuinfo)
    sample = HostSource(SourceContext(root)).sample()
    assert sample.config is not None and sample.config["host.arch"] == label
    assert {r.attrs["type"] for r in sample.readings} == {label}
    # this machine's own tree keeps this machine's label
    from esatui.collectors.cpuinfo import parse_cpuinfo
    from esatui.collectors.host import arch_label

    assert arch_label(parse_cpuinfo(cpuinfo.decode())) == "PPC"
