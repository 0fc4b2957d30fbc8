"""Every monitor test runs with readers that fail on the UI thread (tests/fixtures/ui_guard)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _ui_never_reads(ui_never_reads: None) -> None:
    """(autouse: the guard applies to every test of this folder)"""
