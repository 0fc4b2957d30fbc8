"""The hypervisor a screen header names, from real /proc/sysinfo captures (util-linux's lscpu
test dumps and the ansible fixture, copied verbatim into tests/data/host; provenance in
shared/samples/SOURCES.md). lscpu names VM00, the innermost level, the hypervisor."""

from __future__ import annotations

import pytest

from esatui.collectors.sysinfo import parse_sysinfo
from esatui.screens.catalog import HeaderFacts
from tests.conftest import DATA


@pytest.mark.parametrize(
    ("capture", "level"),
    [
        # VM00 "KVM/Linux" (lscpu: "Hypervisor: KVM/Linux"), VM01 "z/VM 6.4.0"
        ("sysinfo-kvm-in-zvm64-nested-z13-2964-util-linux.txt", "KVM/Linux on z/VM 6.4.0"),
        ("sysinfo-kvm-guest-z196-2817-util-linux.txt", "KVM/Linux"),
        ("sysinfo-zvm72-guest-z15-8561-ansible.txt", "z/VM 7.2.0"),
        ("sysinfo-lpar-z196-2817-util-linux.txt", ""),
    ],
)
def test_the_header_names_the_hypervisor_this_linux_runs_under(capture: str, level: str) -> None:
    config = parse_sysinfo((DATA / "host" / capture).read_text()).config()
    assert HeaderFacts.of(config).level == level
