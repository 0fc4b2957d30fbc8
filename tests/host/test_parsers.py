"""The host parsers against every real capture in tests/data/host."""

from __future__ import annotations

from pathlib import Path

import pytest

from esatui.collectors.cpuinfo import parse_cpuinfo
from esatui.collectors.procstat import CPU_FIELDS, parse_proc_stat
from esatui.collectors.sysfs_cpu import parse_cpu_list, read_cpu_facts
from esatui.collectors.sysinfo import normal_key, parse_sysinfo
from tests.conftest import DATA

HOST = DATA / "host"

# file -> (machine type, LPAR name, VM level names innermost first, capability, secondary)
SYSINFO = {
    "sysinfo-kvm-guest-z196-2817-util-linux.txt": ("2817", "R17LP39", ["KVMguest"], 696, 696),
    "sysinfo-kvm-in-zvm64-nested-z13-2964-util-linux.txt": (
        "2964",
        "L16",
        ["rhel8-1", "OSHIFT5"],
        3296,
        492,
    ),
    "sysinfo-lpar-z13-2964-drawer-util-linux.txt": ("2964", "S35LP67", [], 492, 492),
    "sysinfo-lpar-z13-2964-smt-libvirt-sanitized.txt": ("2964", "VIRLP01", [], 492, 492),
    "sysinfo-lpar-z196-2817-util-linux.txt": ("2817", "R35LP37", [], 696, 696),
    "sysinfo-zvm53-guest-z10-2097-virt-what.txt": ("2097", "L15", ["DEVEL1"], 904, 904),
    "sysinfo-zvm61-guest-z196-2817-util-linux.txt": ("2817", "R17LP45", ["R1745003"], 696, 696),
    "sysinfo-zvm62-guest-z196-2817-libvirt-sanitized.txt": (
        "2817",
        "VIRLP01",
        ["VIRVM01"],
        696,
        696,
    ),
    "sysinfo-zvm72-guest-z15-8561-ansible.txt": ("8561", "L32", ["IBM-Z507"], 3085, 416),
}


def test_every_sysinfo_capture_is_covered() -> None:
    assert sorted(p.name for p in HOST.glob("sysinfo-*.txt")) == sorted(SYSINFO)


@pytest.mark.parametrize("name", sorted(SYSINFO))
def test_sysinfo_blocks(name: str) -> None:
    machine, lpar, vms, capability, secondary = SYSINFO[name]
    info = parse_sysinfo((HOST / name).read_text())
    assert info.machine_type == machine
    assert info.lpar_name == lpar  # trailing blanks of the capture are gone
    assert [vm.name for vm in info.vm] == vms
    assert [vm.level for vm in info.vm] == list(range(len(vms)))
    assert info.capability == capability
    assert info.secondary_capability == secondary
    config = info.config()
    assert config["machine.type"] == machine
    assert config["lpar.name"] == lpar
    assert all(v == v.strip() for v in config.values())


def test_nested_kvm_in_zvm_keeps_both_levels_innermost_first() -> None:
    info = parse_sysinfo((HOST / "sysinfo-kvm-in-zvm64-nested-z13-2964-util-linux.txt").read_text())
    kvm, zvm = info.vm
    assert kvm.control_program == "KVM/Linux"
    assert kvm.fields["UUID"] == "209c8e3b-7191-4338-97a2-67685e5232be"
    assert zvm.control_program == "z/VM 6.4.0"
    assert zvm.fields["CPUs Configured"] == "4"
    assert info.lpar["Characteristics"] == "Shared Limited"
    assert info.config()["vm01.control_program"] == "z/VM 6.4.0"


def test_old_two_column_capability_format() -> None:
    info = parse_sysinfo((HOST / "sysinfo-zvm53-guest-z10-2097-virt-what.txt").read_text())
    assert info.cec["Capability"] == "904 1350"
    assert info.capability == 904
    assert info.adjustments[2] == (61500, 61500)
    assert info.adjustments[34] == (38600, 38840)


def test_drawer_lpar_multithreading_and_topology_fields() -> None:
    info = parse_sysinfo((HOST / "sysinfo-lpar-z13-2964-drawer-util-linux.txt").read_text())
    assert info.cec["CPUs G-MTID"] == "1"
    assert info.cec["CPU Topology HW"] == "0 0 4 2 3 8"
    assert info.machine["Model"].split() == ["703", "N96"]
    assert info.config()["cec.cpus_g_mtid"] == "1"
    assert len(info.adjustments) > 50


def test_sub_capacity_cp_against_full_speed_engines() -> None:
    info = parse_sysinfo((HOST / "sysinfo-zvm72-guest-z15-8561-ansible.txt").read_text())
    assert info.capability is not None and info.secondary_capability is not None
    assert round(info.capability / info.secondary_capability, 2) == 7.42
    assert info.machine["LIC Identifier"] == "1234567890abcdef"


def test_normal_key() -> None:
    assert normal_key("CPUs G-MTID") == "cpus_g_mtid"
    assert normal_key("Model Perm. Capacity") == "model_perm_capacity"


# file -> (number of identification lines, lowest CPU number, virtual, max thread id, blocks)
CPUINFO = {
    "cpuinfo-guest-z14-3906-2cpu-pe-linuxone.txt": (2, 0, True, None, 0),
    "cpuinfo-kvm-guest-z196-2817-util-linux.txt": (3, 0, True, None, 0),
    "cpuinfo-kvm-in-zvm64-nested-z13-2964-util-linux.txt": (2, 0, True, 0, 2),
    "cpuinfo-lpar-z13-2964-drawer-util-linux.txt": (8, 0, False, None, 8),
    "cpuinfo-lpar-z196-2817-util-linux.txt": (17, 1, False, None, 0),
    "cpuinfo-z13-2964-2cpu-ansible.txt": (2, 0, True, 0, 0),
    "cpuinfo-z14-3906-64cpu-smt-ansible.txt": (64, 0, False, 1, 64),
    "cpuinfo-zvm53-guest-z10-2097-virt-what.txt": (1, 0, True, None, 0),
    "cpuinfo-zvm61-guest-z196-2817-util-linux.txt": (4, 0, True, None, 0),
    "cpuinfo-zvm62-guest-z196-2817-libvirt.txt": (3, 0, True, None, 0),
}


def test_every_cpuinfo_capture_is_covered() -> None:
    assert sorted(p.name for p in HOST.glob("cpuinfo-*.txt")) == sorted(CPUINFO)


@pytest.mark.parametrize("name", sorted(CPUINFO))
def test_cpuinfo(name: str) -> None:
    count, lowest, virtual, max_thread, blocks = CPUINFO[name]
    info = parse_cpuinfo((HOST / name).read_text())
    assert info.vendor == "IBM/S390"
    assert len(info.ids) == count
    assert min(info.ids) == lowest
    assert info.is_virtual is virtual
    assert info.max_thread_id == max_thread
    assert len(info.details) == blocks


def test_cpuinfo_modern_blocks_carry_topology() -> None:
    info = parse_cpuinfo((HOST / "cpuinfo-z14-3906-64cpu-smt-ansible.txt").read_text())
    assert info.details[1]["address"] == "1"
    assert info.details[0]["drawer id"] == "4"
    assert info.ids[63].machine == "3906"
    assert "vxe" in info.features


def test_non_s390_cpuinfo_gives_only_what_it_has() -> None:
    info = parse_cpuinfo("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: X\n\n")
    assert info.vendor == "GenuineIntel"
    assert not info.ids and not info.is_virtual


def test_proc_stat_by_identity_with_offline_cpus_absent() -> None:
    data = (
        b"cpu  10 0 20 300 4 0 1 2 0 0\n"
        b"cpu0 5 0 10 150 2 0 1 1 0 0\n"
        b"cpu3 5 0 10 150 2 0 0 1 0 0\n"
        b"intr 1 2 3\nctxt 100\nprocs_running 3\nprocs_blocked 1\n"
    )
    stat = parse_proc_stat(data)
    assert sorted(stat.cpus) == [0, 3]
    assert stat.cpus[3] == (5, 0, 10, 150, 2, 0, 0, 1, 0, 0)


def test_proc_stat_lines_after_the_cpus_are_not_read() -> None:
    stat = parse_proc_stat(b"cpu  2 0 2 3\ncpu0 1 0 1 2\nintr 1\ncpu1 9 9 9 9\n")
    assert list(stat.cpus) == [0]


def test_proc_stat_old_kernels_print_fewer_fields() -> None:
    stat = parse_proc_stat(b"cpu0 1 2 3 4 5 6 7\n")
    assert stat.cpus[0] == (1, 2, 3, 4, 5, 6, 7, None, None, None)
    assert len(stat.cpus[0]) == len(CPU_FIELDS)


def test_proc_stat_garbage_lines_are_skipped_not_guessed() -> None:
    stat = parse_proc_stat(
        b"cpu0 1 2 x 4\ncpu1 1 2\ncpu2 -1 2 3 4\ncpux 1 2 3 4\ncpu4 1 2 3 4\ncpu\xff 1 2 3 4\n"
    )
    assert list(stat.cpus) == [4]


def test_this_machines_proc_stat() -> None:
    stat = parse_proc_stat(Path("/proc/stat").read_bytes())
    assert stat.cpus
    assert all(t[0] is not None for t in stat.cpus.values())


def test_cpu_list() -> None:
    assert parse_cpu_list("0-3,5,7-8\n") == {0, 1, 2, 3, 5, 7, 8}
    assert parse_cpu_list("") == set()


def test_sysfs_cpu_facts_of_an_lpar_tree() -> None:
    facts, reads = read_cpu_facts(HOST / "trees/util-linux-s390-lpar/sys/devices/system/cpu")
    assert len(facts) == 20
    assert facts[1].polarization == "vertical:low"
    assert facts[1].address == 1
    assert facts[0].online is False
    assert reads >= 60
