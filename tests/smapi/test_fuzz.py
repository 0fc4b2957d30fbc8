"""Hypothesis fuzzing of everything that reads bytes or text from the server (bounded)."""

from __future__ import annotations

import contextlib
import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from esatui.collectors.smapi.codec import decode_output
from esatui.collectors.smapi.errors import SmapiProtocolError
from esatui.collectors.smapi.keyvalue import parse_pairs
from esatui.collectors.smapi.layouts import FUNCTIONS
from esatui.collectors.smapi.results import (
    parse_guest_records,
    parse_performance_information,
    parse_system_information,
)
from esatui.collectors.smapi.wire import decode_header, decode_request

FAST = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
NAMES = [*sorted(FUNCTIONS), "Not_A_Function"]
RCS = st.sampled_from([0, 4, 8, 24, 120, 900])


def _framed(chunks: list[bytes]) -> bytes:
    """Byte strings that look like SMAPI output: length-prefixed pieces, counts, NULs."""
    return b"".join(struct.pack(">I", len(c)) + c for c in chunks)


OUTPUTS = st.one_of(
    st.binary(max_size=300),
    st.lists(st.binary(max_size=40), max_size=6).map(_framed),
    st.tuples(st.integers(0, 2**32 - 1), st.binary(max_size=200)).map(
        lambda t: struct.pack(">I", t[0]) + t[1]
    ),
)


@FAST
@given(st.sampled_from(NAMES), RCS, OUTPUTS)
def test_decoder_returns_or_raises_protocol_error(function: str, rc: int, data: bytes) -> None:
    try:
        out = decode_output(function, rc, data, {"eqid_for": "EQID"})
    except SmapiProtocolError as exc:
        assert "\n" not in str(exc)
        return
    assert out.trailing >= 0


@FAST
@given(st.binary(min_size=16, max_size=16), st.integers(-(2**31), 2**31 - 1))
def test_header_decoder(data: bytes, request_id: int) -> None:
    try:
        header = decode_header(data, request_id, 1 << 20)
    except SmapiProtocolError:
        return
    assert 0 <= header.data_length <= (1 << 20)


@FAST
@given(st.binary(max_size=200))
def test_request_decoder(data: bytes) -> None:
    with contextlib.suppress(SmapiProtocolError):
        decode_request(data)


LINES = st.lists(
    st.one_of(
        st.text(max_size=80),
        st.builds(
            lambda k, v: f"DETAILED_CPU=LPAR_NAME={k} CPU_ID={v} CPU_BUSY_TIME={v}%",
            st.text(max_size=10),
            st.text(max_size=10),
        ),
    ),
    max_size=8,
)


@settings(FAST, max_examples=60)
@given(LINES)
def test_text_parsers_never_raise(lines: list[str]) -> None:
    perf = parse_performance_information(lines)
    assert all(c.busy_pct is None or c.busy_pct >= 0 for c in perf.cpus)
    assert len({c.key for c in perf.cpus}) == len(perf.cpus)
    parse_system_information(lines)
    for line in lines:
        parse_pairs(line)


@FAST
@given(
    st.lists(st.dictionaries(st.sampled_from(["record", "x"]), st.binary(max_size=130)), max_size=5)
)
def test_guest_records_never_raise(entries: list[dict[str, object]]) -> None:
    parsed = parse_guest_records(entries)
    assert len(parsed.records) + len(parsed.problems) == len(entries)
