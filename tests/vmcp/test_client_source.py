"""The vmcp client's protocol and the vmcp source, through a scripted /dev/vmcp."""

from __future__ import annotations

from pathlib import Path

import pytest

from esatui.collectors.base import PolledSource, SourceContext, SourceError
from esatui.collectors.model import Reading, Sample
from esatui.collectors.vmcp import (
    VmcpClient,
    VmcpPermissionError,
    VmcpSource,
    VmcpUnavailable,
)
from esatui.collectors.vmcp.device import (
    MAX_BUFFER,
    VMCP_GETCODE,
    VMCP_GETSIZE,
    VMCP_SETBUF,
)
from esatui.sim.interfaces.vmcp import ScriptedVmcp, zvm_guest


def _ioc(direction: int, nr: int) -> int:
    return (direction << 30) | (4 << 16) | (0x10 << 8) | nr  # _IOC(dir, 0x10, nr, sizeof(int))


def test_ioctl_numbers_are_the_uapi_ones() -> None:
    assert _ioc(2, 1) == VMCP_GETCODE == 0x80041001
    assert _ioc(1, 2) == VMCP_SETBUF == 0x40041002
    assert _ioc(2, 3) == VMCP_GETSIZE == 0x80041003


def test_command_is_upper_cased_and_answered() -> None:
    dev = ScriptedVmcp({"QUERY CPLEVEL": (0, "z/VM Version 7 Release 3.0\n")})
    response = VmcpClient(dev.open).run("query cplevel")
    assert (response.rc, response.lines, response.truncated) == (
        0,
        ["z/VM Version 7 Release 3.0"],
        False,
    )
    assert dev.commands == ["QUERY CPLEVEL"]


def test_unknown_command_returns_cp_return_code() -> None:
    response = VmcpClient(ScriptedVmcp().open).run("FOO")
    assert response.rc == 1
    assert response.text.startswith("HCPCMD001E")


def test_truncated_response_is_run_again_with_a_bigger_buffer() -> None:
    big = "".join(f"LINE {n:05d} {'X' * 60}\n" for n in range(300))  # 21 600 bytes
    dev = ScriptedVmcp({"Q BIG": (0, big)})
    client = VmcpClient(dev.open)
    response = client.run("Q BIG")
    assert response.text == big
    assert not response.truncated
    assert dev.commands == ["Q BIG", "Q BIG"]  # once cut at 8 KiB, once whole
    dev.commands.clear()
    assert client.run("Q BIG").text == big
    assert dev.commands == ["Q BIG"]  # the client remembers the size it needed


def test_response_beyond_the_kernel_limit_is_flagged_truncated() -> None:
    huge = "Y" * (MAX_BUFFER + 5000)
    response = VmcpClient(ScriptedVmcp({"Q HUGE": (0, huge)}).open).run("Q HUGE")
    assert response.truncated
    assert len(response.text) == MAX_BUFFER


def test_command_length_limit() -> None:
    client = VmcpClient(ScriptedVmcp().open)
    with pytest.raises(ValueError, match="240"):
        client.run("Q " + "X" * 239)
    with pytest.raises(ValueError, match="ASCII"):
        client.run("Q ÄÖÜ")


def test_refused_and_absent_device_say_why() -> None:
    with pytest.raises(VmcpPermissionError, match="CAP_SYS_ADMIN"):
        VmcpClient(ScriptedVmcp(permitted=False).open).run("Q CPLEVEL")
    with pytest.raises(VmcpUnavailable, match="vmcp module"):
        VmcpClient(ScriptedVmcp(present=False).open).run("Q CPLEVEL")


def readings(sample: Sample, kind: str) -> dict[str, Reading]:
    return {r.key: r for r in sample.readings if r.kind == kind}


def make_source(tmp_path: Path, dev: ScriptedVmcp, warnings: list[str] | None = None) -> VmcpSource:
    warn = warnings.append if warnings is not None else (lambda _m: None)
    return VmcpSource(SourceContext(root=tmp_path, warn=warn), opener=dev.open)


def test_source_types_of_virtual_and_real_cpus(tmp_path: Path) -> None:
    answers = zvm_guest(
        {0: "IFL", 1: "IFL", 0x0A: "ZIIP"},
        real={0: ("IFL", "VH"), 1: ("IFL", "VM"), 2: ("CP", "VL")},
        crypto="AP 01 CEX7C Domain 011 shared\n",
    )
    warnings: list[str] = []
    src = make_source(tmp_path, ScriptedVmcp(answers), warnings)
    assert isinstance(src, PolledSource)
    assert src.probe().available
    assert "z/VM Version 7" in src.probe().reason
    sample = src.sample()
    vcpus = readings(sample, "vcpu")
    assert {k: r.attrs["type"] for k, r in vcpus.items()} == {"0": "IFL", "1": "IFL", "10": "zIIP"}
    assert vcpus["10"].attrs["address_hex"] == "0A"
    assert vcpus["0"].attrs["base"] == "1"
    assert vcpus["0"].attrs["type_source"] == "vmcp:QUERY VIRTUAL CPUS"
    lcpus = readings(sample, "lcpu")
    assert {k: (r.attrs["type"], r.attrs["polarization"]) for k, r in lcpus.items()} == {
        "0": ("IFL", "vertical:high"),
        "1": ("IFL", "vertical:medium"),
        "2": ("CP", "vertical:low"),
    }
    assert lcpus["0"].values == {"busy_pct": 0}
    crypto = readings(sample, "zvm_crypto")
    assert crypto["01.0011"].attrs["use"] == "shared"
    assert crypto["01.0011"].attrs["card_type"] == "CEX7C"
    # QUERY CRYPTO AP is not scripted: one warning, the sample goes on
    assert [w for w in warnings if "QUERY CRYPTO AP" in w] == [
        "vmcp: QUERY CRYPTO AP: CP return code 1: HCPCMD001E Unknown CP command: QUERY"
    ]
    assert src.sample_gauges() is None


def test_crypto_queries_run_only_on_refresh(tmp_path: Path) -> None:
    dev = ScriptedVmcp(zvm_guest({0: "CP"}, crypto=""))
    src = make_source(tmp_path, dev)
    src.sample()
    src.sample()
    assert dev.commands.count("QUERY VIRTUAL CRYPTO") == 1
    assert dev.commands.count("QUERY VIRTUAL CPUS") == 2
    assert dev.commands.count("INDICATE USER") == 0


def test_indicate_user_is_the_fallback(tmp_path: Path) -> None:
    answers = zvm_guest({0: "IFL", 1: "CP"})
    answers["QUERY VIRTUAL CPUS"] = (1, "HCPCMD001E Unknown CP command: QUERY\n")
    src = make_source(tmp_path, ScriptedVmcp(answers))
    vcpus = readings(src.sample(), "vcpu")
    assert {k: r.attrs["type"] for k, r in vcpus.items()} == {"0": "IFL", "1": "CP"}
    assert vcpus["1"].attrs["type_source"] == "vmcp:INDICATE USER"


def test_without_permission_the_source_says_so(tmp_path: Path) -> None:
    src = make_source(tmp_path, ScriptedVmcp(permitted=False))
    probe = src.probe()
    assert not probe.available
    assert "CAP_SYS_ADMIN" in probe.reason
    with pytest.raises(SourceError, match="CAP_SYS_ADMIN"):
        src.sample()


def test_absent_device(tmp_path: Path) -> None:
    probe = make_source(tmp_path, ScriptedVmcp(present=False)).probe()
    assert not probe.available
    assert "not a z/VM guest" in probe.reason


def test_the_source_warns_once_per_line_it_reads_only_in_part(tmp_path: Path) -> None:
    answers = zvm_guest({0: "IFL"}, real={0: ("IFL", "HZ")}, crypto="Crypto polling is OFF\n")
    answers["INDICATE LOAD"] = (0, "AVGPROC-001% 01\nQ1-00000(00000) NEWTHING-0005\n")
    answers["QUERY CRYPTO AP"] = (0, "")
    warnings: list[str] = []
    src = make_source(tmp_path, ScriptedVmcp(answers), warnings)
    first = src.sample()
    src.sample()
    assert [w for w in warnings if "NEWTHING" in w] == [
        "vmcp: INDICATE LOAD: kept text not understood: 'NEWTHING-0005' in "
        "Q1-00000(00000) NEWTHING-0005"
    ]
    # CP's crypto polling mode, from the response that says it
    assert first.config == {
        "cp_crypto_polling": "off",
        "cp_crypto_polling_source": "CP QUERY VIRTUAL CRYPTO",
    }
