"""Screen definitions and the one function that turns recorded data into a screen model."""

from __future__ import annotations

import bisect
import importlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol, Self

from esatui.db.calendar import DAY_US, changes
from esatui.db.navigator import Navigator
from esatui.db.reader import Extent, Reader, Timeline
from esatui.db.slots import Slot
from esatui.screens.common import type_notes
from esatui.screens.model import (
    DEFAULT_THRESHOLDS,
    PARTIAL_MARK,
    Column,
    Row,
    ScreenModel,
    Threshold,
    Value,
)
from esatui.screens.render import (
    date_range,
    format_duration,
    hms,
    local_time,
    moment_text,
    years_differ,
)

if TYPE_CHECKING:
    from esatui.screens.crypto_costs import CostTable
    from esatui.screens.kind_rows import KindRows
    from esatui.screens.row_columns import RowColumns
    from esatui.screens.slot_columns import SlotColumns

# Modules that define screens, each with a module-level SCREEN.
SCREEN_MODULES = (
    "esatui.screens.esassum",
    "esatui.screens.esacpuu",
    "esatui.screens.esalnxc",
    "esatui.screens.esacrypt",
    "esatui.screens.esacrypa",
    "esatui.screens.esacryq",
    "esatui.screens.esapoll",
    "esatui.screens.esacrype",
    "esatui.screens.esapage",
    "esatui.screens.esalock",
    "esatui.screens.esausr2",
    "esatui.screens.esaovhd",
    "esatui.screens.esanode",
)


@dataclass(frozen=True)
class Context:
    """Everything a screen's build function may look at."""

    slots: Sequence[Slot]
    config: Mapping[str, str]
    thresholds: Mapping[str, Threshold] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    entity: str | None = None  # drill-down: only this entity
    options: frozenset[str] = frozenset()
    node: str = ""  # the recorded system (a z/VM userid when it is a guest)
    crypto_costs: CostTable | None = None  # ESACRYPE's software costs (None: the default)
    fleet: tuple[NodeData, ...] = ()  # a fleet screen's nodes (``slots`` is then empty)


@dataclass(frozen=True)
class NodeData:
    """One node's slots and facts, for a screen over every node."""

    node: str
    slots: Sequence[Slot]
    config: Mapping[str, str]


@dataclass(frozen=True)
class Built:
    columns: tuple[Column, ...]
    rows: list[Row]
    notes: tuple[str, ...] = ()
    flags_legend: bool = False  # show each row's flags (see ScreenModel)
    header: Mapping[str, Value] = field(default_factory=dict)
    # where the rows' CPU types came from: the model says so after the notes (type_notes);
    # a set, so the parts of a range (a streamed export) add up to the whole range's
    type_sources: frozenset[str] = frozenset()
    # what ``notes`` and ``header`` are made of, where the parts of a range say them
    # otherwise than the whole range does (ESACRYQ's AP bus settings and flags)
    facts: RangeFacts | None = None


class RangeFacts(Protocol):
    """What a build says of its range (notes, header), made of facts that add up: those of
    the range's parts (a streamed export's chunks), each added to the older ones' with
    ``then``, say what the whole range's build says."""

    def then(self, newer: Self) -> Self | None:
        """These facts followed by a newer part's; ``None`` where they do not add up to the
        whole's (the caller builds the whole range)."""
        ...

    @property
    def notes(self) -> tuple[str, ...]: ...

    @property
    def header(self) -> Mapping[str, Value]: ...


@dataclass(frozen=True)
class NotesByRows:
    """Notes that say one thing of a range with rows (``with_rows``) and another of one
    with intervals but no row (``empty``): a :class:`RangeFacts`."""

    with_rows: tuple[str, ...]
    empty: tuple[str, ...]
    slots: bool
    rows: bool

    def then(self, newer: NotesByRows) -> NotesByRows | None:
        if (self.with_rows, self.empty) != (newer.with_rows, newer.empty):
            return None
        return replace(self, slots=self.slots or newer.slots, rows=self.rows or newer.rows)

    @property
    def notes(self) -> tuple[str, ...]:
        if self.rows:
            return self.with_rows
        return self.empty if self.slots else ()

    @property
    def header(self) -> Mapping[str, Value]:
        return {}


@dataclass(frozen=True)
class Reads:
    """What a screen reads of one recorded kind: numeric fields (a gauge's maximum as
    ``<gauge>_max``) and text attributes, as the collectors declare them (a test holds every
    screen to its declaration and every declaration to the collectors' kinds)."""

    kind: str
    fields: tuple[str, ...] = ()
    attrs: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScreenDef:
    name: str
    title: str
    doc: str
    timeline: tuple[str, ...]  # kinds whose intervals make the rows, in order of preference
    kinds: tuple[str, ...]  # other kinds the screen reads
    columns: tuple[Column, ...]  # as listed by `esatui screens` (<type> stands for each type)
    build: Callable[[Context], Built]
    needs: str  # what must be recorded, said when it is not
    reads: tuple[Reads, ...]  # the fields and attributes the build function looks at
    prefer: tuple[str, ...] = ()  # preferred sources when several wrote a kind
    options: tuple[str, ...] = ()  # view toggles the screen understands
    fleet: bool = False  # every node the reader holds (Context.fleet), not one
    sorts: tuple[str, ...] = ()  # columns the rows can be sorted by (option sort:<column>)
    # rows depend on their own slot and on what the build says of the range (columns, notes,
    # header) alone, which any part of it says alike or the export is built whole: exports
    # stream it (screens/stream.py)
    streams: bool = False
    # columns one recorded row of the timeline kind makes (screens/row_columns.py)
    row_columns: RowColumns | None = None
    # columns a slot makes from some of its kinds, the rows having no key (slot_columns.py)
    slot_columns: SlotColumns | None = None
    # rows made of every entity's row of a kind in their interval (screens/kind_rows.py)
    kind_rows: KindRows | None = None
    # (kind, prefer): kinds the build and its columns read only as ``Slot.get(kind,
    # prefer)``, so slots need hold only that source of them (``Timeline.one_source``; a
    # test builds each such screen both ways on a recording with several)
    one_source: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def view_options(self) -> tuple[str, ...]:
        """Every ``--option`` the screen takes: its toggles and ``sort:<column>``."""
        return (*self.options, *(f"sort:{column}" for column in self.sorts))


@dataclass(frozen=True)
class Query:
    """Which data a screen shows: node, time range (after, until], aggregation, drill."""

    node: str | None = None
    after_us: int | None = None
    until_us: int | None = None
    interval_len_us: int | None = None
    limit: int | None = None
    entity: str | None = None
    thresholds: Mapping[str, Threshold] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    options: frozenset[str] = frozenset()
    snap: bool = False  # (after, until] is one interval of another screen: match it
    crypto_costs: CostTable | None = None  # --crypto-costs (None: the built-in default)


def screen_timeline(screen: ScreenDef, node: str | None, length_us: int | None) -> Timeline:
    """The timeline a screen's rows are made of, at an interval length, its slots carrying
    the fields and the sources the screen reads alone."""
    return Timeline(
        node, screen.timeline, screen.prefer, length_us, read_fields(screen), screen.one_source
    )


def read_fields(screen: ScreenDef) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(kind, fields) the screen's build reads (``ScreenDef.reads``, a test holds every
    screen to it): what its slots need to carry."""
    fields: dict[str, dict[str, None]] = {}
    for reads in screen.reads:
        fields.setdefault(reads.kind, {}).update(dict.fromkeys(reads.fields))
    return tuple((kind, tuple(names)) for kind, names in fields.items())


_SCREENS: dict[str, ScreenDef] = {}
# Each module is named after its screen (esatui.screens.esalnxc: ESALNXC; a test holds them
# to it): a name is found without importing every screen (an export imports one).
SCREEN_NAMES = tuple(module.rsplit(".", 1)[1].upper() for module in SCREEN_MODULES)


def screens() -> dict[str, ScreenDef]:
    """Every screen, by name, in catalog order."""
    if len(_SCREENS) < len(SCREEN_NAMES):
        for name in SCREEN_NAMES:
            _load(name)
        _SCREENS.update({name: _SCREENS.pop(name) for name in SCREEN_NAMES})  # in order
    return _SCREENS


def _load(name: str) -> ScreenDef:
    found = _SCREENS.get(name)
    if found is None:
        module = SCREEN_MODULES[SCREEN_NAMES.index(name)]
        found = _SCREENS[name] = importlib.import_module(module).SCREEN
    return found


def get(name: str) -> ScreenDef:
    """The screen ``name`` names, by the one rule every command and the monitor use:
    case does not matter, the ``ESA`` prefix may be left out, and the start of a name
    will do when only one screen starts so (``lnxc``, ``usr2``, ``ESACPUU``, ``ovh``).
    A ``KeyError`` says why not (no such screen, or which ones the text could mean)."""
    wanted = "".join(name.split()).upper()
    names = SCREEN_NAMES
    for candidate in (wanted, "ESA" + wanted):
        if candidate in names:
            return _load(candidate)
    matches = [n for n in names if wanted and n.startswith((wanted, "ESA" + wanted))]
    if len(matches) == 1:
        return _load(matches[0])
    if matches:
        raise KeyError(f"{name!r} could be {', '.join(matches)}")
    raise KeyError(f"no screen {name!r}; screens are {', '.join(names)}")


def _first(config: Mapping[str, str], *keys: str) -> str:
    for key in keys:
        if config.get(key):
            return config[key]
    return ""


@dataclass(frozen=True)
class HeaderFacts:
    """The machine line of every screen header, whichever source told it."""

    machine: str  # machine type, e.g. 8561
    system: str  # LPAR name, else the serial
    level: str  # the hypervisor this Linux runs under: z/VM 7.2.0, KVM/Linux on z/VM 6.4.0

    @classmethod
    def of(cls, config: Mapping[str, str]) -> HeaderFacts:
        level = _first(config, "vm_level", "zvm_level")
        if level and not level.startswith("z/VM"):
            level = f"z/VM {level}"
        if not level:
            level = _hypervisors(config)
        return cls(
            machine=_first(config, "machine.type", "machine_type", "host.machine_type"),
            system=_first(
                config, "lpar.name", "lpar_name", "machine.sequence_code", "machine_serial"
            ),
            level=level,
        )


def _hypervisors(config: Mapping[str, str]) -> str:
    """The hypervisor this Linux runs under (/proc/sysinfo's VM00), and the z/VM under it
    where VM00 is another (a KVM guest in a z/VM guest: ``KVM/Linux on z/VM 6.4.0``, as
    lscpu names VM00 the hypervisor); empty in an LPAR."""
    programs = [
        v
        for k, v in sorted(config.items())
        if k.startswith("vm") and k.endswith(".control_program")
    ]
    if not programs or programs[0].startswith("z/VM"):
        return programs[0] if programs else ""
    under = next((p for p in programs[1:] if p.startswith("z/VM")), "")
    return f"{programs[0]} on {under}" if under else programs[0]


def recorded_length_us(reader: Reader, screen: ScreenDef, node: str | None) -> int | None:
    """How long the intervals of the screen's timeline are, as recorded (``None``: none)."""
    found = reader.node(node)
    if found is None:
        return None
    return Navigator(reader, screen_timeline(screen, found, None)).recorded_length_us()


def build_model(reader: Reader, name: str, query: Query) -> ScreenModel:
    """The screen ``name`` for the data ``query`` selects, newest interval first."""
    screen = get(name)
    if screen.fleet:
        return _build_fleet(reader, screen, query)
    node = reader.node(query.node)
    if node is None:
        empty = screen.build(Context((), {}, query.thresholds, options=query.options))
        return ScreenModel(
            screen.name,
            screen.title,
            empty.columns,
            (),
            node=query.node or "",
            notes=("Nothing recorded for this node.",) if query.node else (),
        )
    timeline = screen_timeline(screen, node, query.interval_len_us)
    navigator = Navigator(reader, timeline)
    window = navigator.window(query.after_us, query.until_us, limit=query.limit, snap=query.snap)
    slots = reader.slots(window, screen.kinds)
    at = slots[0].end_us if slots else (query.until_us or 0)
    config = reader.config_at(node, at)
    return model_of(screen, slots, config, query, node, navigator.extent())


def model_of(
    screen: ScreenDef,
    slots: Sequence[Slot],
    config: Mapping[str, str],
    query: Query,
    node: str,
    extent: Extent | None,
    *,
    recorded: bool = True,
    notes: tuple[str, ...] = (),
) -> ScreenModel:
    """The screen built from these slots (read from a database, or a live recording's first
    samples: not ``recorded`` yet), with its notes and header facts."""
    built = screen.build(
        Context(
            slots, config, query.thresholds, query.entity, query.options, node, query.crypto_costs
        )
    )
    notes = (*notes, *built.notes, *type_notes(built.type_sources))
    partial = partial_note(built.rows, query.interval_len_us, query.after_us, query.until_us)
    if partial:
        notes = (*notes, partial)
    notes = (*notes, *clock_notes(slots, query.interval_len_us))
    if config.get("simulated"):
        notes = (SIMULATED_NOTE, *notes)
    if not slots:
        notes = (empty_note(screen, extent, query.after_us, query.until_us), *notes)
    facts = HeaderFacts.of(config)
    columns = built.columns
    if any(r.partial for r in built.rows):  # room for the mark after the time
        columns = tuple(replace(c, marks_partial=c.id == "time") for c in columns)
    return ScreenModel(
        name=screen.name,
        title=screen.title,
        columns=columns,
        rows=tuple(built.rows),
        node=node,
        machine=facts.machine,
        system=" ".join(p for p in (facts.system, facts.level) if p),
        from_us=slots[-1].start_us if slots else query.after_us,
        to_us=slots[0].end_us if slots else query.until_us,
        interval_len_s=None if query.interval_len_us is None else query.interval_len_us / 1e6,
        notes=notes,
        flags_legend=built.flags_legend,
        header=built.header,
        extent=extent,
        recorded=recorded,
    )


SIMULATED_NOTE = "Simulated data (esatui sim)."


def no_rows_reason(model: ScreenModel) -> str:
    """Why a screen has no rows, in one line naming the screen (for exports)."""
    said = [note for note in model.notes if note != SIMULATED_NOTE]
    if not said:  # its sources wrote intervals, but none of its rows
        return f"no {model.name} data in this range: it needs {get(model.name).needs}"
    return said[0] if said[0].startswith(model.name) else f"no {model.name} data: {said[0]}"


def empty_note(
    screen: ScreenDef, extent: Extent | None, after_us: int | None, until_us: int | None
) -> str:
    """Why a screen has no rows: its sources recorded nothing, or nothing in the range (and
    what the database does hold)."""
    if extent is None:
        return f"{screen.name} needs {screen.needs}: nothing recorded of it here."
    year = years_differ(extent.start_us, extent.end_us, after_us, until_us)
    within = (
        after_us is not None
        and until_us is not None
        and extent.start_us <= after_us
        and until_us < extent.end_us
    )
    # a range shorter than an interval, inside the recording: no interval *ends* in it
    why = ": no recorded interval ends in it (rows are at their interval's end)" if within else ""
    return (
        f"{screen.name}: recorded {date_range(extent.start_us, extent.end_us, year=year)}; "
        f"nothing {range_words(after_us, until_us, year=year)}{why}."
    )


def _fleet_empty_note(reader: Reader, screen: ScreenDef, query: Query) -> str:
    """:func:`empty_note` over every node: what they hold together."""
    extents = [
        extent
        for node in reader.nodes()
        if (extent := Navigator(reader, screen_timeline(screen, node, None)).extent())
    ]
    held = (
        Extent(min(e.start_us for e in extents), max(e.end_us for e in extents))
        if extents
        else None
    )
    return empty_note(screen, held, query.after_us, query.until_us)


def range_words(after_us: int | None, until_us: int | None, *, year: bool = False) -> str:
    """``from 10:00 to 11:00``, ``after 19:00``, ``up to 10:00``: a range in the user's
    words (the moments with their ``year`` if asked)."""
    if after_us is not None and until_us is not None:
        return f"from {moment_text(after_us, year=year)} to {moment_text(until_us, year=year)}"
    if after_us is not None:
        return f"after {moment_text(after_us, year=year)}"
    if until_us is not None:
        return f"up to {moment_text(until_us, year=year)}"
    return "in this range"


def _held(seconds: int) -> str:
    """730 -> ``12m10s``, 120 -> ``2m``, 45 -> ``45s``: minutes and seconds, as read."""
    minutes, rest = divmod(seconds, 60)
    if not minutes or not rest:
        return format_duration(seconds)
    return f"{format_duration(minutes * 60)}{rest}s"


def partial_note(
    rows: Sequence[Row],
    length_us: int | None,
    after_us: int | None = None,
    until_us: int | None = None,
) -> str | None:
    """What the ``~`` on partial rows means, with how much of each the range read holds:
    the range asked for (after, until] cut the buckets at its ends, the recording the
    others."""
    partial = [r for r in rows if r.partial and r.first]
    if not partial or length_us is None:
        return None
    cut = sum(
        (after_us is not None and r.start_us < after_us)
        or (until_us is not None and r.end_us > until_us)
        for r in partial
    )
    who = (
        "the recording"
        if not cut
        else "the range asked for"
        if cut == len(partial)
        else "the range asked for or the recording"
    )
    days = {local_time(r.end_us)[:3] for r in partial}
    # the date where one time could be several, and where the time alone says nothing (a
    # day's buckets all end at 00:00:00)
    when = hms if len(days) == 1 and length_us < DAY_US else moment_text
    shown = [
        f"{when(r.end_us)} holds {_held(round((r.covered_us or 0) / 1e6))}" for r in partial[:3]
    ]
    more = f" (and {len(partial) - 3} more)" if len(partial) > 3 else ""
    return (
        f"{PARTIAL_MARK} partial: {who} covers only part of the "
        f"{format_duration(length_us / 1e6)}: {'; '.join(shown)}{more}."
    )


class Spanned(Protocol):
    """A slot or a window's span: where it starts and ends."""

    @property
    def start_us(self) -> int: ...

    @property
    def end_us(self) -> int: ...


def clock_notes(spans: Sequence[Spanned], length_us: int | None) -> tuple[str, ...]:
    """What the local clock's changes do to the rows of ``spans`` (slots or a window's
    spans): buckets not ``length_us`` long, and local times shown twice."""
    calendar = calendar_note([(s.start_us, s.end_us) for s in spans], length_us)
    repeated = repeated_note([s.end_us for s in spans])
    return tuple(note for note in (calendar, repeated) if note)


def calendar_note(spans: Sequence[tuple[int, int]], length_us: int | None) -> str | None:
    """Which buckets of the (start, end) ``spans`` are not ``length_us`` long: buckets on the
    local calendar that hold a change of the local clock (a 23- or 25-hour day, a 3-hour
    bucket of 2 or 4), which a CSV or JSON row shows only by its ``time``."""
    if length_us is None:
        return None
    odd = sorted({(end, end - start) for start, end in spans if end - start != length_us})
    if not odd:
        return None
    shown = [f"{moment_text(end)} is {format_duration(long / 1e6)}" for end, long in odd[-3:]]
    more = f" (and {len(odd) - 3} more)" if len(odd) > 3 else ""
    return (
        f"Buckets on the local calendar: the one ending {'; '.join(shown)}{more}"
        " (the local clock changed in it)."
    )


def repeated_note(ends: Sequence[int]) -> str | None:
    """Where the local clock went back (an autumn change) between rows ending on both sides
    of it within the time it repeats: the screen's times (the clock's, with no offset) show
    those times twice, which the rows' order alone does not explain."""
    ordered = sorted(ends)
    if not ordered:
        return None
    shown = [
        _went_back(at, before, after)
        for at, before, after in changes(ordered[0] - DAY_US, ordered[-1])
        if after < before
        and _any_in(ordered, at - (before - after), at)
        and _any_in(ordered, at, at + (before - after))
    ]
    if not shown:
        return None
    return f"The local clock went back {'; '.join(shown)}."


def _any_in(ordered: Sequence[int], lo: int, hi: int) -> bool:
    """Whether the ascending ``ordered`` has a value in [lo, hi)."""
    i = bisect.bisect_left(ordered, lo)
    return i < len(ordered) and ordered[i] < hi


def _went_back(at_us: int, before_us: int, after_us: int) -> str:
    """``on 11/01 at 02:00 to 01:00: times from 01:00 to 02:00 show twice, first at -04:00,
    then at -05:00``."""
    old = time.gmtime((at_us + before_us) / 1e6)  # the clock's reading as it went back
    new, old_hm = time.strftime("%H:%M", local_time(at_us)), time.strftime("%H:%M", old)
    return (
        f"on {time.strftime('%m/%d', old)} at {old_hm} to {new}: times from {new} to {old_hm}"
        f" show twice, first at {_utc_offset(before_us)}, then at {_utc_offset(after_us)}"
    )


def _utc_offset(offset_us: int) -> str:
    """``-04:00``, ``+10:30``: an offset as ISO 8601 (and the CSV and JSON times) write it."""
    minutes = abs(offset_us) // 60_000_000
    return f"{'-' if offset_us < 0 else '+'}{minutes // 60:02d}:{minutes % 60:02d}"


def _build_fleet(reader: Reader, screen: ScreenDef, query: Query) -> ScreenModel:
    """A screen over every node the reader holds: each node's own timeline and slots."""
    fleet: list[NodeData] = []
    for node in reader.nodes():
        timeline = screen_timeline(screen, node, query.interval_len_us)
        window = Navigator(reader, timeline).window(
            query.after_us, query.until_us, limit=query.limit, snap=query.snap
        )
        slots = reader.slots(window, screen.kinds)
        if slots:
            fleet.append(NodeData(node, slots, reader.config_at(node, slots[0].end_us)))
    built = screen.build(
        Context(
            (),
            {},
            query.thresholds,
            query.entity,
            query.options,
            "",
            query.crypto_costs,
            fleet=tuple(fleet),
        )
    )
    starts = [n.slots[-1].start_us for n in fleet]
    ends = [n.slots[0].end_us for n in fleet]
    notes = built.notes
    if any(n.config.get("simulated") for n in fleet):
        notes = (SIMULATED_NOTE, *notes)
    if not fleet:
        notes = (_fleet_empty_note(reader, screen, query), *notes)
    return ScreenModel(
        name=screen.name,
        title=screen.title,
        columns=built.columns,
        rows=tuple(built.rows),
        node=fleet[0].node if len(fleet) == 1 else f"{len(fleet)} nodes",
        from_us=min(starts) if starts else query.after_us,
        to_us=max(ends) if ends else query.until_us,
        interval_len_s=None if query.interval_len_us is None else query.interval_len_us / 1e6,
        notes=notes,
        flags_legend=built.flags_legend,
        header=built.header,
        recorded=bool(fleet),
    )
