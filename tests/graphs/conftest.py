"""A simulated half hour with every kind of entity (CPUs, cards, APQNs, guests, locks)."""

from __future__ import annotations

from pathlib import Path

import pytest


def simulate(db: Path, duration: str = "30m", scenario: str = "mode-vm-day") -> Path:
    from esatui.cli import main

    argv = ["sim", "--scenario", scenario, "--duration", duration, "--db", str(db)]
    assert main(argv) == 0
    return db


@pytest.fixture(scope="session")
def sim_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simulate(tmp_path_factory.mktemp("graphs") / "sim.sqlite")
