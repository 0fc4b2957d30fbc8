"""Typed readings of recorded outputs, KEY=value parsing, return code meanings, framing."""

from __future__ import annotations

from typing import Any

import pytest

from esatui.collectors.smapi.codec import decode_output, encode_params
from esatui.collectors.smapi.codes import describe, outcome
from esatui.collectors.smapi.errors import SmapiConfigError, SmapiProtocolError
from esatui.collectors.smapi.keyvalue import parse_pairs, percent
from esatui.collectors.smapi.results import (
    parse_legacy_procs,
    parse_performance_information,
    parse_processors,
    parse_system_information,
    parse_virtual_cpus,
)
from esatui.collectors.smapi.wire import Reader, decode_header, encode_response
from tests.smapi.conftest import DATA, recording


def _output(name: str) -> dict[str, Any]:
    data = recording(DATA / f"{name}.json")
    params = {k: v for k, v in data["kwargs"].items() if k != "target"}
    raw = bytes.fromhex(data["response_hex"])[20:]
    return decode_output(data["function"], data["return_code"], raw, params).values


def test_detailed_cpu_from_the_recording() -> None:
    perf = parse_performance_information(
        _output("System_Performance_Information_Query-1")["system_performance_information_data"]
    )
    assert perf.my_lpar_name == "LP1"
    assert perf.memory_total == 1048576 and perf.monitor_rate == "2.00 SECONDS"
    assert [c.key for c in perf.cpus] == ["LP1/0", "LP1/1", "LP1/2", "LP1/3"]
    assert {c.cpu_type for c in perf.cpus} == {"IFL"}
    assert [c.busy_pct for c in perf.cpus] == [98.5, 97.0, 96.7, 96.2]
    assert [c.lp_overhead_pct for c in perf.cpus] == [0.1] * 4
    assert [c.lpar_overhead_pct for c in perf.cpus] == [66.7, 68.8, 78.5, 73.1]
    assert perf.problems == ()


def test_system_information_from_the_recording() -> None:
    info = parse_system_information(
        _output("System_Information_Query-1")["system_information_data"]
    )
    assert (info.vm_version, info.vm_service_level, info.cms_level) == ("7.1.0", "1801", "29")
    assert info.cpu_id == "FF01917729640000"
    assert (info.machine_type, info.cpu_serial) == ("2964", "019177")
    assert info.timezone == "EDT" and info.storage_online == "4G"
    assert info.ipl == "2019-04-28 13:39:31 EDT"


def test_virtual_cpu_types_from_the_recording() -> None:
    cpus = parse_virtual_cpus(_output("Image_CPU_Query-1")["cpu_info_array"])
    assert [(c.number, c.base, c.cpu_type, c.status) for c in cpus] == [
        (0, True, "IFL", 3),
        (1, False, "IFL", 1),
    ]


def test_legacy_procs_from_the_recording() -> None:
    procs = parse_legacy_procs(_output("System_Performance_Info_Query-2")["procs"])
    assert [(p.address, p.busy_pct, p.cpu_type) for p in procs] == [
        ("0000", 46.0, "IFL"),
        ("0001", 47.0, "IFL"),
        ("0002", 36.0, "IFL"),
        ("0003", 33.0, "IFL"),
    ]


def test_processor_lines() -> None:
    procs = parse_processors([{"processor_info": "PROCESSOR 00 MASTER IFL"}, {"x": 1}])
    assert [(p.address, p.role, p.cpu_type) for p in procs] == [("00", "MASTER", "IFL")]


def test_key_value_pairs() -> None:
    pairs = parse_pairs("LPAR_NAME=LP1      LPAR_NUMBER=1 LPAR_ID= ... MONITOR_RATE=2.00 SECONDS ")
    assert pairs == {
        "LPAR_NAME": "LP1",
        "LPAR_NUMBER": "1",
        "LPAR_ID": "...",
        "MONITOR_RATE": "2.00 SECONDS",
    }
    assert parse_pairs('CHANGE_EXPLANATION=""') == {"CHANGE_EXPLANATION": '""'}
    assert [percent(v) for v in ("98.50%", "...", None, "-1%", "nan")] == [
        98.5,
        None,
        None,
        None,
        None,
    ]


@pytest.mark.parametrize(
    ("rc", "rs", "function", "words"),
    [
        (0, 0, "", "request successful"),
        (4, 4, "Response_Recovery", "no saved response"),
        (4, 28, "", "no matching entries"),
        (8, 3017, "", "function-specific error (3017)"),
        (24, 1310, "", "syntax error in parameter 13: characters not in 0-9"),
        (24, 298, "", "parameter 2: syntax reason 98"),
        (100, 8, "", "external security manager"),
        (120, 0, "", "userid or password not valid"),
        (128, 0, "", "password expired"),
        (200, 4, "", "image not found"),
        (200, 12, "", "image not active"),
        (396, 8700, "", "internal system error, product-specific code (8700)"),
        (592, 17, "", "asynchronous operation started"),
        (900, 12, "", "not supported at this z/VM level"),
        (900, 20, "", "length mismatch"),
        (900, 99, "", "reissue"),
        (12345, 1, "", "not described"),
    ],
)
def test_return_code_meanings(rc: int, rs: int, function: str, words: str) -> None:
    assert words in describe(rc, rs, function)


def test_outcome_classes() -> None:
    assert outcome(120, 0).auth_failure and outcome(100, 16).auth_failure
    assert not outcome(100, 0).auth_failure and not outcome(0, 0).auth_failure
    assert outcome(900, 99).reissue and outcome(900, 12).not_supported


def test_header_checks() -> None:
    good = encode_response(7, 0, 0, b"abc")[4:]
    assert decode_header(good[:16], 7, 100).data_length == 3
    with pytest.raises(SmapiProtocolError, match="differs"):
        decode_header(good[:16], 8, 100)
    with pytest.raises(SmapiProtocolError, match="exceeds"):
        decode_header(good[:16], 7, 10)
    with pytest.raises(SmapiProtocolError, match="shorter"):
        decode_header(b"\0\0\0\x0b" + good[4:16], 7, 100)


def test_reader_never_reads_past_the_end() -> None:
    reader = Reader(b"\x00\x00\x00\x05ab")
    with pytest.raises(SmapiProtocolError, match="needs 5 bytes"):
        reader.lstring()


def test_parameter_errors() -> None:
    with pytest.raises(SmapiConfigError, match="needs parameter failed_request_id"):
        encode_params("Response_Recovery", {})
    with pytest.raises(SmapiConfigError, match="no parameter bogus"):
        encode_params("Image_CPU_Query", {"bogus": 1})
    with pytest.raises(SmapiConfigError, match="integer"):
        encode_params("Response_Recovery", {"failed_request_id": "x"})
    assert encode_params("Response_Recovery", {"failed_request_id": 0xFFFFFFFF}) == b"\xff" * 4
    assert encode_params("Image_Performance_Query", {"guests": ["A", "BB"]}) == b"A\0BB\0"


def test_lying_array_count_is_an_error() -> None:
    with pytest.raises(SmapiProtocolError, match="claims"):
        decode_output("Image_Performance_Query", 0, b"\x7f\xff\xff\xff")
