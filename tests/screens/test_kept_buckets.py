"""The monitor's reader keeps the buckets it has read and hands the same ``EntityData`` to
every model built from them; ``Row`` and ``EntityData`` are not frozen (an export makes one per
row), so a build that changed one would change the next screen. Every screen built twice from
one reader that keeps its buckets is what a fresh reader builds."""

from __future__ import annotations

from pathlib import Path

import pytest

from esatui.db.sqlite_reader import SqliteReader
from esatui.screens import catalog
from tests.graphs.conftest import simulate

MINUTE = 60_000_000


@pytest.fixture(scope="module")
def sim_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simulate(tmp_path_factory.mktemp("kept") / "sim.sqlite")


@pytest.mark.parametrize("length", [5 * MINUTE, 60 * MINUTE])
def test_every_screen_built_again_from_kept_buckets_is_built_afresh(
    sim_db: Path, length: int
) -> None:
    query = catalog.Query(interval_len_us=length)
    with SqliteReader.open(sim_db, keep_buckets=True) as kept:
        for name, screen in catalog.screens().items():
            if screen.fleet:
                continue
            first = catalog.build_model(kept, name, query)
            again = catalog.build_model(kept, name, query)
            with SqliteReader.open(sim_db) as fresh:
                afresh = catalog.build_model(fresh, name, query)
            assert first == again == afresh, name
            assert first.rows or name in ("ESAPAGE", "ESALOCK"), name
