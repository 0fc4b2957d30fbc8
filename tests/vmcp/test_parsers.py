"""CP response parsers: real captures where they exist, tolerant everywhere."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from esatui.collectors.vmcp.parsers import (
    parse_crypto,
    parse_indicate_load,
    parse_indicate_user,
    parse_query_virtual_cpus,
)

DATA = Path(__file__).parent.parent / "data" / "vmcp"


def test_indicate_load_real_capture() -> None:
    load = parse_indicate_load((DATA / "zvm-cp-indicate-load-zvm63-5cp-workshop.txt").read_text())
    assert load.avgproc_pct == 0
    assert load.processors_online == 5
    assert load.paging_per_s == 0
    assert load.mdc == (0, 0, 0)
    assert load.queues["Q1"] == (0, 0)
    assert load.queues["E3"] == (0, 0)
    assert load.counts == {"DORMANT": 1, "EXPAN": 1, "LIMITED": 0}
    assert [(p.address, p.busy_pct, p.type, p.polarization) for p in load.processors] == [
        (n, 0, "CP", "horizontal") for n in range(5)
    ]
    assert load.other == []  # the echoed command and CMS's Ready; line are not data


def test_indicate_load_mixed_types_and_vertical_polarization() -> None:
    text = (
        "AVGPROC-045% 04\n"
        "STORAGE-021% PAGING-0012/SEC STEAL-000%\n"
        "PROC 0000-061% CP   VH     PROC 0001-012% IFL  VM\n"
        "PROC 0002-100% ZIIP VL     PROC 000A-7%\n"
        "SOMETHING NEW-17\n"
    )
    load = parse_indicate_load(text)
    assert load.avgproc_pct == 45
    assert load.storage_pct == 21
    assert load.paging_per_s == 12
    assert [(p.address, p.busy_pct, p.type, p.polarization) for p in load.processors] == [
        (0, 61, "CP", "vertical:high"),
        (1, 12, "IFL", "vertical:medium"),
        (2, 100, "zIIP", "vertical:low"),
        (10, 7, None, None),
    ]
    assert load.other == ["SOMETHING NEW-17"]


def test_indicate_user_real_capture() -> None:
    user = parse_indicate_user((DATA / "zvm-cp-indicate-user-maint-zvm63-workshop.txt").read_text())
    assert user.values["USERID"] == "MAINT"
    assert user.values["STOR"] == "256M"
    assert user.values["RES"] == "1622"
    assert user.values["INSTAN"] == "1622"
    assert user.values["WRITES"] == "13"
    assert len(user.cpus) == 1
    cpu = user.cpus[0]
    assert (cpu.address, cpu.type) == (0, "CP")
    assert cpu.values["VTIME"] == "000:00"
    assert cpu.values["IO"] == "000603"
    assert cpu.values["CPUAFFIN"] == "ON"
    assert user.other == []


def test_indicate_user_several_cpus() -> None:
    text = (
        "USERID=LINUX01  MACH=ESA STOR=4G VIRT=V XSTORE=NONE\n"
        "CPU 00: CTIME=10:00 VTIME=001:02 TTIME=001:10 IO=001234\n"
        "        RDR=000000 PRT=000000 PCH=000000 TYPE=IFL  CPUAFFIN=ON\n"
        "CPU 01: CTIME=10:00 VTIME=000:30 TTIME=000:31 IO=000000\n"
        "        RDR=000000 PRT=000000 PCH=000000 TYPE=IFL  CPUAFFIN=ON\n"
    )
    cpus = parse_indicate_user(text).cpus
    assert [(c.address, c.type) for c in cpus] == [(0, "IFL"), (1, "IFL")]


def test_query_virtual_cpus_real_output() -> None:
    parsed = parse_query_virtual_cpus((DATA / "query-virtual-cpus-zvm61-xcat-doc.txt").read_text())
    assert parsed.other == []
    assert [(c.address, c.type, c.base, c.state, c.affinity) for c in parsed.cpus] == [
        (1, "CP", False, "operating", "ON"),
        (0, "CP", True, "operating", "ON"),
    ]
    assert parsed.cpus[0].cpuid == "FF0C452E20978000"


def test_query_virtual_cpus_documented_variants() -> None:
    text = (
        "CPU 00  ID  FF22C1F820978000 (BASE) IFL  CPUAFF ON\n"
        "CPU 01  ID  FF22C1F820978000 STOPPED IFL  CPUAFF ON\n"
        "CPU 0A  ID  FF22C1F820978000 CHECK-STOP ZIIP CPUAFF SUPPRESSED\n"
        "CPU 02  ID  FF22C1F820978000 IFL NEWWORD\n"
        "garbage line\n"
    )
    parsed = parse_query_virtual_cpus(text)
    got = [(c.address, c.type, c.base, c.state, c.affinity, c.extra) for c in parsed.cpus]
    assert got == [
        (0, "IFL", True, "operating", "ON", ()),
        (1, "IFL", False, "stopped", "ON", ()),
        (10, "zIIP", False, "check-stop", "SUPPRESSED", ()),
        (2, "IFL", False, "operating", None, ("NEWWORD",)),
    ]
    assert parsed.other == ["garbage line"]


def test_crypto_queries_are_parsed_tolerantly() -> None:
    text = (
        "AP 01 CEX7C Queue 08 is installed\n"
        "AP 003 CEX7A Domain 021 dedicated\n"
        "AP 04 Domain 0A shared\n"
        "Crypto domain(s) 6 7 shared\n"
        "There are no crypto queues\n"
    )
    report = parse_crypto(text)
    got = [(e.ap, e.domain, e.card_type, e.keywords) for e in report.entries]
    assert got == [
        (1, 8, "CEX7C", ("INSTALLED",)),
        (3, 0x21, "CEX7A", ("DEDICATED",)),
        (4, 0x0A, None, ("SHARED",)),
    ]
    assert report.other == ["Crypto domain(s) 6 7 shared", "There are no crypto queues"]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_parsers_never_raise(text: str) -> None:
    parse_indicate_load(text)
    parse_indicate_user(text)
    parse_query_virtual_cpus(text)
    parse_crypto(text)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "CPU 00  ID  FF0C452E20978000 (BASE) CP   CPUAFF ON",
                "PROC 0000-000% CP   HZ     PROC 0001-000% CP   HZ",
                "AP 01 CEX7C Queue 08 is installed",
                "CPU 00: CTIME=00:38 VTIME=000:00 TTIME=000:00 IO=000603",
                "        RDR=000000 PRT=000432 PCH=000000 TYPE=CP   CPUAFFIN=ON",
                "CPU",
                "PROC 00",
                "AP",
                "=",
                "TYPE=",
            ]
        ),
        max_size=12,
    )
)
def test_fragments_of_real_lines_never_raise(lines: list[str]) -> None:
    text = "\n".join(lines)
    parse_indicate_load(text)
    parse_indicate_user(text)
    parse_query_virtual_cpus(text)
    parse_crypto(text)
