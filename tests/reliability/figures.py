"""The fault-injection suite's figures, printed at the end of the test run (conftest.py)
and quoted in docs/RELIABILITY.md."""

from __future__ import annotations

FIGURES: list[tuple[str, str]] = []


def record_figure(case: str, outcome: str) -> None:
    FIGURES.append((case, outcome))
