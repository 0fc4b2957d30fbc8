"""Screens declare what they read (``ScreenDef.reads``), the declarations name what the
collectors declare, and the screens read nothing else: a field renamed in a collector fails
here instead of showing ``.`` on a screen."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

import esatui.collectors
from esatui.cli import main
from esatui.collectors.model import Kind
from esatui.db.navigator import Navigator
from esatui.db.records import max_column
from esatui.db.slots import EntityData, Slot
from esatui.db.sqlite_reader import SqliteReader
from esatui.screens import catalog
from tests.screens import crypto_data as D


def collector_kinds() -> dict[str, Kind]:
    """Every kind a collector module declares, by name."""
    found: dict[str, Kind] = {}
    prefix = esatui.collectors.__name__ + "."
    for info in pkgutil.walk_packages(esatui.collectors.__path__, prefix):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, Kind):
                assert found.get(value.name, value) == value, f"two kinds named {value.name}"
                found[value.name] = value
    return found


def declared(screen: catalog.ScreenDef) -> dict[str, tuple[set[str], set[str]]]:
    """kind -> (fields, attributes) the screen declares it reads."""
    out: dict[str, tuple[set[str], set[str]]] = {}
    for reads in screen.reads:
        fields, attrs = out.setdefault(reads.kind, (set(), set()))
        fields.update(reads.fields)
        attrs.update(reads.attrs)
    return out


def test_every_declaration_names_what_a_collector_declares() -> None:
    kinds = collector_kinds()
    assert {"cpu", "lcpu", "crypto", "crypto_ap", "guest", "zcrypt_card"} <= set(kinds)
    for screen in catalog.screens().values():
        assert screen.reads, f"{screen.name} declares nothing"
        for kind, (fields, attrs) in declared(screen).items():
            assert kind in kinds, f"{screen.name} reads kind {kind!r}, which no collector declares"
            k = kinds[kind]
            names = {f.name for f in k.fields} | {max_column(g.name) for g in k.gauges}
            assert fields <= names, f"{screen.name}: {kind} has no {sorted(fields - names)}"
            assert attrs <= set(k.attrs), (
                f"{screen.name}: {kind} has no {sorted(attrs - set(k.attrs))}"
            )


def test_a_screen_declares_every_kind_it_loads() -> None:
    for screen in catalog.screens().values():
        assert set(declared(screen)) == {*screen.timeline, *screen.kinds}, screen.name


# --- what the screens really read -----------------------------------------------------

Seen = set[tuple[str, str, str]]  # (kind, "field" or "attr", name)


class Watched(Mapping[str, object]):
    """A mapping that notes every name looked up in it."""

    def __init__(self, inner: Mapping[str, object], kind: str, what: str, seen: Seen) -> None:
        self._inner, self._kind, self._what, self._seen = inner, kind, what, seen

    def __getitem__(self, name: str) -> object:
        self._seen.add((self._kind, self._what, name))
        return self._inner[name]

    def __contains__(self, name: object) -> bool:
        self._seen.add((self._kind, self._what, str(name)))
        return name in self._inner

    def __iter__(self) -> Iterator[str]:
        self._seen.add((self._kind, self._what, "*"))  # reading all of them: never declared
        return iter(self._inner)

    def __len__(self) -> int:
        return len(self._inner)


def watched(slots: Sequence[Slot], seen: Seen) -> list[Slot]:
    out = []
    for slot in slots:
        data = {
            kind: {
                source: replace(
                    part,
                    rows={
                        key: EntityData(
                            e.key,
                            Watched(e.attrs, kind, "attr", seen),  # type: ignore[arg-type]
                            Watched(e.values, kind, "field", seen),  # type: ignore[arg-type]
                            e.flags,
                            e.hf_n,
                        )
                        for key, e in part.rows.items()
                    },
                )
                for source, part in by_source.items()
            }
            for kind, by_source in slot.data.items()
        }
        out.append(replace(slot, data=data))
    return out


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A simulated z/VM system (every source), seed 000's monitor records (D5R10) and a
    simulated z/VM 6.4 paging encrypted (D3R2)."""
    tmp = tmp_path_factory.mktemp("fields")
    sim = tmp / "sim.sqlite"
    argv = ["sim", "--scenario", "mode-vm-day", "--duration", "3m", "--db", str(sim)]
    assert main([*argv, "--start", "2026-01-05T00:00+00:00"]) == 0
    seed = tmp / "seed000.sqlite"
    mon = D.seed000_file(tmp / "seed000.mon")
    assert main(["collect", "--source", f"monwrite:{mon}", "--db", str(seed)]) == 0
    paging = tmp / "paging.sqlite"
    argv = ["sim", "--scenario", "seed003-t3-medium", "--duration", "2m", "--db", str(paging)]
    assert main([*argv, "--start", "2026-01-05T00:00+00:00"]) == 0
    return [sim, seed, paging]


def test_screens_read_only_what_they_declare(
    recordings: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    for name, screen in catalog.screens().items():
        seen: Seen = set()
        for db in recordings:
            with SqliteReader.open(db) as reader:
                node = reader.node(None)
                assert node is not None
                for length in (None, 3_600_000_000):
                    timeline = catalog.screen_timeline(screen, node, length)
                    window = Navigator(reader, timeline).window(None, None)
                    slots = reader.slots(window, screen.kinds)
                    config = reader.config_at(node, slots[0].end_us) if slots else {}
                    for options in (frozenset(), frozenset(screen.options)):
                        shown = watched(slots, seen)
                        context = catalog.Context(
                            shown,
                            config,
                            options=options,
                            node=node,
                            # a fleet screen sees the node among its fleet
                            fleet=(catalog.NodeData(node, shown, config),) if screen.fleet else (),
                        )
                        screen.build(context)
        assert seen, f"{name} read nothing from the recordings"
        fields = {(kind, n) for kind, what, n in seen if what == "field"}
        attrs = {(kind, n) for kind, what, n in seen if what == "attr"}
        want = declared(screen)
        undeclared = {(k, n) for k, n in fields if n not in want.get(k, (set(), set()))[0]}
        undeclared |= {(k, n) for k, n in attrs if n not in want.get(k, (set(), set()))[1]}
        assert not undeclared, f"{name} reads what it does not declare: {sorted(undeclared)}"


@pytest.mark.parametrize("length", [None, 60_000_000, 900_000_000, 3_600_000_000])
def test_a_model_read_for_its_fields_is_the_model_of_every_field(
    recordings: list[Path], capsys: pytest.CaptureFixture[str], length: int | None
) -> None:
    """build_model reads only the fields a screen declares (``Timeline.fields``): its model
    is the one built from slots that carry every field."""
    capsys.readouterr()
    compared = 0
    for db in recordings:
        with SqliteReader.open(db) as reader:
            node = reader.node(None)
            assert node is not None
            for name, screen in catalog.screens().items():
                if screen.fleet:
                    continue
                query = catalog.Query(interval_len_us=length)
                timeline = catalog.screen_timeline(screen, node, length)
                assert timeline.fields == catalog.read_fields(screen)
                timeline = replace(timeline, fields=())  # every field
                navigator = Navigator(reader, timeline)
                slots = reader.slots(navigator.window(None, None), screen.kinds)
                config = reader.config_at(node, slots[0].end_us if slots else 0)
                every = catalog.model_of(screen, slots, config, query, node, navigator.extent())
                assert catalog.build_model(reader, name, query) == every, (db.name, name)
                compared += bool(every.rows)
    assert compared > 10
