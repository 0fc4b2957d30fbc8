"""Shared test setup: local time is UTC unless a test says otherwise."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=150, deadline=None, derandomize=True)
settings.load_profile("ci")

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    time.tzset()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "esatui.sqlite"


@pytest.fixture
def ui_never_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The monitor's readers fail on the UI thread (see tests/fixtures/ui_guard.py)."""
    from tests.fixtures.ui_guard import guard_readers

    misuses = guard_readers(monkeypatch)
    yield
    assert not misuses, f"the UI thread touched the database: {misuses}"
