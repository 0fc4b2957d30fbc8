from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from esatui.collectors.monitor.header import (
    TOD_UNIX_EPOCH,
    pack_header,
    parse_header,
    tod_to_unix_us,
    unix_us_to_tod,
)


def test_tod_epoch() -> None:
    assert tod_to_unix_us(TOD_UNIX_EPOCH) == 0
    # the TOD clock's own epoch is 1900-01-01
    assert tod_to_unix_us(0) == int(datetime(1900, 1, 1, tzinfo=UTC).timestamp() * 1e6)


def test_tod_known_date() -> None:
    us = int(datetime(2016, 3, 6, 10, 34, tzinfo=UTC).timestamp()) * 1_000_000
    tod = unix_us_to_tod(us)
    assert tod >> 12 == (us + 2208988800 * 1_000_000)  # bit 51 is one microsecond
    assert tod_to_unix_us(tod) == us
    assert tod_to_unix_us(tod + 4095) == us  # sub-microsecond bits are dropped


@given(st.integers(0, 2**64 - 1))
def test_tod_roundtrip_to_microsecond(tod: int) -> None:
    us = tod_to_unix_us(tod)
    assert unix_us_to_tod(us) == tod & ~0xFFF


def test_header_layout() -> None:
    raw = pack_header(360, 5, 9, 0x0123456789ABCDEF)
    assert len(raw) == 20
    assert raw[:8] == bytes.fromhex("0168 0000 05 00 0009")
    assert raw[8:16] == bytes.fromhex("0123456789ABCDEF")
    h = parse_header(raw)
    assert (h.length, h.domain, h.record, h.tod, h.key) == (360, 5, 9, 0x0123456789ABCDEF, (5, 9))
