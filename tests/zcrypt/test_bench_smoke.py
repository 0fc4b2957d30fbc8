"""The zcrypt benchmark runs (tiny sizes; no timing is asserted)."""

from __future__ import annotations

import pytest

from bench.bench_zcrypt import main


def test_bench_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--cards", "2", "--domains", "2", "--samples", "2", "--batches", "1"]) == 0
    out = capsys.readouterr().out
    assert "2 cards x 2 domains (6 devices)" in out
    assert "full sample" in out
    assert "gauges only (--hf)" in out
