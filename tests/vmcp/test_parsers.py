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
    assert load.counts == {"DORMANT": 1, "LIMITED": 0}
    assert load.expansion == {"Q2": 1, "Q3": 1}
    assert [(p.address, p.busy_pct, p.type, p.polarization) for p in load.processors] == [
        (n, 0, "CP", "horizontal") for n in range(5)
    ]
    assert load.other == []  # the echoed command and CMS's Ready; line are not data
    assert load.leftovers == []


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
    assert user.other == [] and user.leftovers == []
    assert user.values["IPLSYS"] == "DEV 0190"  # a value runs to the next KEY=


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


# --- INDICATE LOAD across z/VM levels, and nothing dropped silently ------------------------

# z/VM 4.x-5.x era summary relayed in a UFT daemon's source comment: all queues on one line,
# without the (loading) counts
ONE_LINE_QUEUES = (
    "AVGPROC-027% 0017\n"
    "MDC READS-000000/SEC WRITES-000000/SEC HIT RATIO-000%\n"
    "PAGING-3/SEC\n"
    "Q0-00001 Q1-00007           Q2-00002 EXPAN-002 Q3-00068 EXPAN-002\n"
)
# the expanded-storage era (up to z/VM 6.3): XSTORE/MIGRATE and STORAGE/PAGING/STEAL lines,
# processors without type or polarization
EXPANDED_STORAGE = (
    "AVGPROC-003% 02\n"
    "XSTORE-000012/SEC MIGRATE-0000/SEC\n"
    "MDC READS-000004/SEC WRITES-000001/SEC HIT RATIO-098%\n"
    "STORAGE-012% PAGING-0002/SEC STEAL-000%\n"
    "Q0-00001(00000)                           DORMANT-00022\n"
    "Q1-00000(00000)           E1-00000(00000)\n"
    "Q2-00001(00000) EXPAN-001 E2-00000(00000)\n"
    "Q3-00003(00000) EXPAN-001 E3-00000(00000)\n"
    "\n"
    "PROC 0000-003%            PROC 0001-002%\n"
    "\n"
    "LIMITED-00000\n"
)


def test_indicate_load_one_line_queues() -> None:
    load = parse_indicate_load(ONE_LINE_QUEUES)
    assert (load.avgproc_pct, load.processors_online, load.paging_per_s) == (27, 17, 3)
    assert load.queues == {"Q0": (1, None), "Q1": (7, None), "Q2": (2, None), "Q3": (68, None)}
    assert load.expansion == {"Q2": 2, "Q3": 2}
    assert (load.other, load.leftovers) == ([], [])


def test_indicate_load_expanded_storage_era() -> None:
    load = parse_indicate_load(EXPANDED_STORAGE)
    assert load.rates == {"XSTORE": 12, "MIGRATE": 0, "PAGING": 2}
    assert load.percents == {"STORAGE": 12, "STEAL": 0}
    assert load.mdc == (4, 1, 98)
    assert load.queues["Q3"] == (3, 0) and load.expansion == {"Q2": 1, "Q3": 1}
    assert load.counts == {"DORMANT": 22, "LIMITED": 0}
    assert [(p.address, p.busy_pct, p.type) for p in load.processors] == [
        (0, 3, None),
        (1, 2, None),
    ]
    assert (load.other, load.leftovers) == ([], [])


def test_a_line_read_in_part_keeps_the_rest() -> None:
    # relayed by a monitoring agent (Big Brother's z/VM client, z/VM 4.4), and a field no
    # level documents in the middle of a queue line
    text = (
        "CPU Utilization  7% z/VM Version 4 Release 4.0, service level 0402 (32-bit) "
        "AVGPROC-007% 01\n"
        "Q1-00000(00000) NEWTHING-0005 E1-00000(00000)\n"
    )
    load = parse_indicate_load(text)
    assert (load.avgproc_pct, load.processors_online) == (7, 1)
    assert load.queues == {"Q1": (0, 0), "E1": (0, 0)}
    assert [rest for _line, rest in load.leftovers] == [
        "CPU Utilization 7% z/VM Version 4 Release 4.0, service level 0402 (32-bit)",
        "NEWTHING-0005",
    ]


_KNOWN = [
    "AVGPROC-004% 03",
    "PAGING-12/SEC",
    "XSTORE-000000/SEC",
    "Q2-00001(00000)",
    "Q1-00003",
    "EXPAN-001",
    "E1-00000(00000)",
    "DORMANT-00001",
    "PROC 0000-012% IFL VH",
    "PROC 0001-000%",
    "STORAGE-010%",
]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(st.sampled_from(_KNOWN), st.from_regex(r"\A[A-Z]{3,7}9\Z")), max_size=6),
        max_size=6,
    )
)
def test_indicate_load_never_drops_a_word_silently(lines: list[list[str]]) -> None:
    text = "\n".join("  ".join(words) for words in lines)
    load = parse_indicate_load(text)
    kept = " ".join([*load.other, *(rest for _line, rest in load.leftovers)])
    for words in lines:
        for word in words:
            if word not in _KNOWN:  # the words no level prints
                assert word in kept, (word, text)


def test_indicate_user_keeps_what_it_cannot_place() -> None:
    user = parse_indicate_user("USERID=LINUX01 MACH=ESA\nSOMETHING odd here\nGARBLE X=1\n")
    assert user.values == {"USERID": "LINUX01", "MACH": "ESA", "X": "1"}
    assert user.other == ["SOMETHING odd here"]
    assert user.leftovers == [("GARBLE X=1", "GARBLE")]


def test_query_virtual_cpus_keeps_unknown_tokens_with_their_line() -> None:
    parsed = parse_query_virtual_cpus("CPU 02  ID  FF22C1F820978000 IFL NEWWORD\n")
    assert parsed.leftovers == [("CPU 02  ID  FF22C1F820978000 IFL NEWWORD", "NEWWORD")]


def test_crypto_polling_mode_where_cp_says_it() -> None:
    assert parse_crypto("Crypto polling is OFF\nAP 01 CEX7A Domain 02 shared\n").polling == "off"
    report = parse_crypto("POLLING: ON\n")
    assert report.polling == "on" and report.other == []
    assert parse_crypto("AP 01 CEX7A Domain 02 shared\n").polling is None
