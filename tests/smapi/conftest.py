from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.smapi_server import SimGuest, SmapiTestServer

DATA = Path(__file__).parent.parent / "data" / "smapi"
RECORDINGS = sorted(DATA.glob("*.json"))
PASSWORD = b"s3cr3t-Pw!"  # the tests grep outputs for this


def recording(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


@pytest.fixture
def server() -> Iterator[SmapiTestServer]:
    guests = [
        SimGuest("LINUX01", step_cpu_us=250_000, step_elapsed_us=1_000_000),
        SimGuest("LINUX02", step_cpu_us=500_000, step_elapsed_us=1_000_000),
        SimGuest("GT@PONG", step_cpu_us=0, step_elapsed_us=1_000_000),
    ]
    with SmapiTestServer(userid="ESAUSER", password=PASSWORD, guests=guests) as srv:
        yield srv
