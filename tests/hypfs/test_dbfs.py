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
    return Diag204(7, 3, unix_us_to_tod(1_790_000_000_123_456), [other, own], [PhysCpu(0, 3, 42)])


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
