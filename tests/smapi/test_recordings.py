"""Every recorded z/VM 7.1 exchange: request bytes reproduced, response decoded as recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from esatui.collectors.smapi.client import SmapiClient
from esatui.collectors.smapi.codec import decode_output, encode_params
from esatui.collectors.smapi.credentials import Secret
from esatui.collectors.smapi.layouts import lookup
from esatui.collectors.smapi.transport import TcpTransport
from esatui.collectors.smapi.wire import decode_request, encode_request
from tests.fakes.smapi_server import SmapiTestServer
from tests.smapi.conftest import RECORDINGS, recording

IDS = [p.stem for p in RECORDINGS]

# Values the recording client filled in itself (README: "defaults the client filled in").
RECORDER_DEFAULTS = {("System_Performance_Info_Query", "monitor_rate", "0")}


def _norm(value: Any) -> Any:
    """Empty string, empty list and absent are the same 'nothing'; a NUL-split list's
    trailing empty string is an artifact of splitting, not a value."""
    if isinstance(value, list):
        items = [_norm(v) for v in value]
        while items and items[-1] is None:
            items.pop()
        return items or None
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if value in {"", b""}:
        return None
    return value


def _split(path: Path) -> tuple[dict[str, Any], str, dict[str, Any]]:
    data = recording(path)
    params = dict(data["kwargs"])
    target = params.pop("target")
    return data, target, params


def test_all_27_recordings_present() -> None:
    assert len(RECORDINGS) == 27


@pytest.mark.parametrize("path", RECORDINGS, ids=IDS)
def test_request_reproduced_byte_for_byte(path: Path) -> None:
    data, target, params = _split(path)
    body = encode_params(data["function"], params)
    request = encode_request(data["function"], b"maint", b"maint", target, body)
    assert request.hex() == data["request_hex"]
    parsed = decode_request(request)
    assert (parsed.function, parsed.target) == (data["function"], target)


@pytest.mark.parametrize("path", RECORDINGS, ids=IDS)
def test_response_decodes_to_recorded_values(path: Path) -> None:
    data, _, params = _split(path)
    function = data["function"]
    response = bytes.fromhex(data["response_hex"])
    rc = int.from_bytes(response[12:16], "big", signed=True)
    rs = int.from_bytes(response[16:20], "big", signed=True)
    assert (rc, rs) == (data["return_code"], data["reason_code"])
    out = decode_output(function, rc, response[20:], params)
    assert out.trailing == 0
    inputs = {p.name for p in lookup(function).params} | set(params) | {"request_id", "target"}
    for key, recorded in data["decoded"].items():
        if key in out.values:
            assert _norm(out.values[key]) == _norm(recorded), key
        elif key not in inputs and (function, key, repr(recorded)) not in RECORDER_DEFAULTS:
            assert _norm(recorded) is None, f"{key} recorded but not decoded"
    for key in out.values:
        assert key in data["decoded"], f"{key} decoded but not in the recording"


@pytest.mark.parametrize("path", RECORDINGS, ids=IDS)
def test_replayed_over_a_real_socket(path: Path) -> None:
    data, target, params = _split(path)
    with SmapiTestServer() as srv:
        srv.load_recordings([path])
        client = SmapiClient(TcpTransport("127.0.0.1", srv.port), "maint", Secret(b"maint"))
        response = client.call(data["function"], target, **params)
    assert (response.rc, response.rs) == (data["return_code"], data["reason_code"])
    assert response.request_id > 0
    body = bytes.fromhex(data["response_hex"])[20:]
    assert (
        response.output.values == decode_output(data["function"], response.rc, body, params).values
    )
