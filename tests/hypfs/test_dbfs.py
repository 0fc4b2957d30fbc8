"""The debugfs binary formats: round trips, bounds, garbage."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esatui.collectors.hypfs.dbfs import (
    Diag204,
    FormatError,
    LparCpu,
    Partition,
    PhysCpu,
    encode_diag2fc,
    encode_diag204,
    parse_diag2fc,
    parse_diag204,
    tod_to_unix_us,
    unix_us_to_tod,
)
from tests.fakes.hypfs import guest


def sample_204() -> Diag204:
    own = Partition(
        3,
        "LINUX1",
        2,
        (
            LparCpu(0, 0, 1_500, 1_000, 10_000, 8_000, 77, 10, 20),
            LparCpu(1, 3, 2_600, 2_000, 10_000, 7_000),
        ),
    )
    other = Partition(1, "ZOS1", 1, (LparCpu(0, 5, 9, 8, 7, 6),))
    return Diag204(7, 1, unix_us_to_tod(1_790_000_000_123_456), [other, own], [PhysCpu(0, 3, 42)])


def test_tod_conversion() -> None:
    assert tod_to_unix_us(0x7D91048BCA000000) == 0
    assert tod_to_unix_us(unix_us_to_tod(1_790_000_000_123_456)) == 1_790_000_000_123_456


def test_diag204_round_trip() -> None:
    d = sample_204()
    data = encode_diag204(d)
    assert len(data) == 64 + 4096  # the kernel reports whole pages
    back = parse_diag204(data)
    assert back == d
    own = back.own()
    assert own is not None
    assert own.name == "LINUX1"
    assert own.cpus[0].mgmt_us == 500
    assert back.time_us == 1_790_000_000_123_456


def test_diag204_truncated_keeps_whole_partitions() -> None:
    data = encode_diag204(sample_204())
    cut = parse_diag204(data[: 64 + 64 + 96 + 96 + 50])  # inside LINUX1's header
    assert cut.truncated
    assert [p.name for p in cut.partitions] == ["ZOS1"]
    assert cut.own() is None


def test_diag204_too_short() -> None:
    with pytest.raises(FormatError):
        parse_diag204(b"\x00" * 100)


def test_diag2fc_round_trip() -> None:
    records = [guest("LINUX01"), guest("tcpip", vcpus=1)]
    data = encode_diag2fc(unix_us_to_tod(1_790_000_000_000_000), records)
    parsed = parse_diag2fc(data)
    assert not parsed.truncated
    assert parsed.records == records
    assert parsed.time_us == 1_790_000_000_000_000
    cut = parse_diag2fc(data[:-10])
    assert cut.truncated
    assert [r.guest for r in cut.records] == ["LINUX01"]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=1200))
def test_garbage_only_ever_raises_format_error(data: bytes) -> None:
    for parse in (parse_diag204, parse_diag2fc):
        with contextlib.suppress(FormatError):
            parse(data)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=4096 + 64), st.binary(min_size=8, max_size=8))
def test_lying_lengths_are_bounded(cut: int, length: bytes) -> None:
    data = bytearray(encode_diag204(sample_204()))
    data[:8] = length  # the header claims any length at all
    try:
        parsed = parse_diag204(bytes(data[:cut]))
    except FormatError:
        return
    assert len(parsed.partitions) <= 2


def _by_hand(own_first: bool) -> bytes:
    """A DIAGNOSE X'204' subcode 7 buffer built byte by byte from s390-tools'
    hyptop/dg_debugfs_lpar.c (struct l_x_info_blk_hdr, l_x_sys_hdr, l_x_cpu_info; the
    kernel's debugfs header from arch/s390/hypfs/hypfs_diag.c): two partitions, number 64
    ("ZOS1", 2 CPUs) and number 3 ("LINUX1", 1 CPU); the info header's u16 at +6 is the
    byte offset of the caller's partition header from the info header itself (hyptop:
    ``this_part = (void *)time_hdr + time_hdr->this_part``)."""

    def part(number: int, name: str, cpus: list[tuple[int, int, int, int]]) -> bytes:
        hdr = bytearray(96)
        hdr[0], hdr[1], hdr[2] = number, len(cpus), len(cpus)  # pn, cpus, rcpus
        hdr[8:16] = name.ljust(8).encode("cp037")  # sys_name, EBCDIC
        blocks = b""
        for addr, ctidx, lp_us, online_us in cpus:
            cpu = bytearray(96)
            cpu[0:2] = addr.to_bytes(2, "big")  # cpu_addr
            cpu[4] = ctidx  # ctidx: 3 = IFL
            cpu[8:16] = (lp_us + 100).to_bytes(8, "big")  # acc_time
            cpu[16:24] = lp_us.to_bytes(8, "big")  # lp_time
            cpu[32:40] = online_us.to_bytes(8, "big")  # online_time
            blocks += bytes(cpu)
        return bytes(hdr) + blocks

    zos = part(64, "ZOS1", [(0, 0, 5_000, 60_000_000), (1, 0, 6_000, 60_000_000)])
    linux = part(3, "LINUX1", [(0, 3, 7_000, 60_000_000)])
    parts = (linux, zos) if own_first else (zos, linux)
    this = 64 if own_first else 64 + len(zos)  # LINUX1's header, from the info header
    info = bytearray(64)
    info[0] = 2  # npar
    info[6:8] = this.to_bytes(2, "big")
    info[9:17] = unix_us_to_tod(1_790_000_000_000_000).to_bytes(8, "big")  # ext TOD byte 1
    body = bytes(info) + b"".join(parts)
    header = len(body).to_bytes(8, "big") + (0).to_bytes(2, "big") + bytes([7]) + bytes(53)
    return header + body


@pytest.mark.parametrize("own_first", [False, True])
def test_this_partition_is_the_header_the_offset_points_at(own_first: bool) -> None:
    """The caller's partition is found by its header's offset, never by a partition
    number: with LINUX1 first its offset is 64, which is ZOS1's number."""
    parsed = parse_diag204(_by_hand(own_first))
    own = parsed.own()
    assert own is not None and own.name == "LINUX1" and own.number == 3
    assert [(c.address, c.type_index, c.lp_us, c.mgmt_us) for c in own.cpus] == [(0, 3, 7_000, 100)]
    assert parsed.time_us == 1_790_000_000_000_000
    assert parse_diag204(encode_diag204(parsed)) == parsed
