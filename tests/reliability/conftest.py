"""Prints the fault-injection figures (kills survived, intervals lost, cases run)."""

from __future__ import annotations

import pytest

from tests.reliability.figures import FIGURES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FIGURES:
        return
    terminalreporter.section("fault injection (docs/RELIABILITY.md)")
    for case, outcome in FIGURES:
        terminalreporter.write_line(f"{case}: {outcome}")
