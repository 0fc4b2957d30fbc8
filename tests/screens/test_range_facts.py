"""What a build says of its range from facts that add up (``Built.facts``: ESACRYQ, ESAPOLL,
ESACRYPE, ESALOCK, ESAPAGE, ESACRYPA): the facts of a range's parts, added in time order
(``stream.Parts``, as a streamed export adds its chunks'), say what the whole range's build
says. The parts are of a simulated system whose slots are thinned at random, so that they
differ (a kind missing here, an entity there: a lock left out as quiet, fewer processors,
no AP bus settings, no crypto counters)."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import replace

import pytest

from esatui.db.slots import Slot
from esatui.db.sqlite_reader import SqliteReader
from esatui.screens import catalog, stream
from esatui.screens.catalog import Built, Context
from tests.graphs.conftest import simulate

# mode-vm-day, and z/VM 7.2 whose D3R2 ESAPAGE shows
SCENARIOS = ("mode-vm-day", "seed002-t3-polling")


@pytest.fixture(scope="module", params=SCENARIOS)
def simulated(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SqliteReader]:
    db = simulate(tmp_path_factory.mktemp("facts") / "sim.sqlite", "90m", request.param)
    with SqliteReader.open(db) as reader:
        yield reader


def thinned(slots: Sequence[Slot], rng: random.Random) -> list[Slot]:
    """Each slot without some of its kinds and some entities of the others."""
    out = []
    for slot in slots:
        data = {
            kind: {
                source: replace(
                    found, rows={k: e for k, e in found.rows.items() if rng.random() > 0.25}
                )
                for source, found in by_source.items()
            }
            for kind, by_source in slot.data.items()
            if rng.random() > 0.2
        }
        out.append(replace(slot, data=data))
    return out


def with_facts(reader: SqliteReader) -> list[str]:
    query = catalog.Query()
    return [
        name
        for name in catalog.SCREEN_NAMES
        if catalog.build_model(reader, name, query).rows
        and _build(reader, name, _slots(reader, name, query), query).facts is not None
    ]


def _slots(reader: SqliteReader, name: str, query: catalog.Query) -> list[Slot]:
    screen = catalog.get(name)
    found = stream.plan(reader, screen, query)
    assert found is not None
    return list(reader.slots(found.window, screen.kinds))


def _build(reader: SqliteReader, name: str, slots: Sequence[Slot], query: catalog.Query) -> Built:
    found = stream.plan(reader, catalog.get(name), query)
    assert found is not None
    return catalog.get(name).build(Context(slots, found.config, node=found.node))


def test_the_screens_with_range_facts(simulated: SqliteReader) -> None:
    names = set(with_facts(simulated))
    assert {"ESACRYQ", "ESAPOLL", "ESACRYPE", "ESALOCK", "ESACRYPA"} <= names
    assert names <= {"ESACRYQ", "ESAPOLL", "ESACRYPE", "ESALOCK", "ESACRYPA", "ESAPAGE"}


@pytest.mark.parametrize("name", ["ESACRYQ", "ESAPOLL", "ESACRYPE", "ESALOCK", "ESAPAGE"])
@pytest.mark.parametrize("length_s", [None, 600])
@pytest.mark.parametrize("seed", range(4))
def test_the_parts_facts_say_what_the_whole_says(
    simulated: SqliteReader, name: str, length_s: int | None, seed: int
) -> None:
    query = catalog.Query(interval_len_us=None if length_s is None else length_s * 1_000_000)
    slots = thinned(_slots(simulated, name, query), random.Random(seed))
    want = _build(simulated, name, slots, query)
    assert want.facts is not None
    for size in (1, 2, 5):
        for oldest_first in (False, True):
            parts = stream.Parts(oldest_first)
            starts = range(0, len(slots), size)  # slots are newest first
            for lo in reversed(starts) if oldest_first else starts:
                assert parts.add(_build(simulated, name, slots[lo : lo + size], query))
            said = parts.frame
            assert said is not None
            assert (said.notes, dict(said.header)) == (want.notes, dict(want.header)), size


def test_thinning_makes_the_parts_say_different_things(simulated: SqliteReader) -> None:
    """The parts above differ: some alone say other notes than the whole (else the test
    would hold for facts that never add anything up)."""
    query = catalog.Query()
    differ = set()
    for name in with_facts(simulated):
        slots = thinned(_slots(simulated, name, query), random.Random(0))
        whole = _build(simulated, name, slots, query).notes
        if any(_build(simulated, name, [s], query).notes != whole for s in slots):
            differ.add(name)
    assert {"ESACRYQ", "ESAPOLL", "ESACRYPE", "ESALOCK"} <= differ


@pytest.mark.parametrize("seed", range(3))
def test_esacrype_names_the_lpars_processors_of_the_newest_interval(
    simulated: SqliteReader, seed: int
) -> None:
    """The note says "this LPAR has" the processors of the newest interval with the adapters'
    work and the LPAR's processors (the slots are thinned: some have fewer, some none)."""
    from esatui.screens.crypto_costs import default_table
    from esatui.screens.esacrype import function_work, lpar_processors

    query = catalog.Query()
    slots = thinned(_slots(simulated, "ESACRYPE", query), random.Random(seed))
    found = stream.plan(simulated, catalog.get("ESACRYPE"), query)
    assert found is not None
    newest = next(
        lpar
        for slot in slots  # newest first
        if function_work(slot)[0]
        and (lpar := lpar_processors(slot, found.config, default_table())) is not None
    )
    notes = _build(simulated, "ESACRYPE", slots, query).notes
    assert any(f"this LPAR has {newest.count};" in note for note in notes), notes
