"""The reading interface: what screens, the navigator and exports read, whatever the backend.

A *timeline* is what makes a screen's rows: the intervals of the first of its kinds that has
data (from that kind's sources in the screen's order of preference), as recorded or in
buckets of a chosen length aligned to local time. A *window* is a run of a timeline's spans
(intervals or buckets) in a time range; *slots* are a window's spans with every kind's data
in them. SQLite (``db/reading.py``) is one backend; another (Prometheus, say) implements
:class:`Reader` and every screen, the TUI and the exports work on it unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from esatui.db.slots import Slot


@dataclass(frozen=True)
class Timeline:
    """The spans a screen's rows are made of: of ``node`` (``None``: the only node, or the
    one most recently written), the first of ``kinds`` with data, its sources in the order
    of ``prefer``; ``length_us`` buckets of that length, or ``None`` as recorded. ``fields``
    lets a backend leave out what the screen does not read (SQLite reads only those, and
    its buckets add up only those); ``one_source`` the sources of a kind it does not read."""

    node: str | None
    kinds: tuple[str, ...]
    prefer: tuple[str, ...] = ()
    length_us: int | None = None
    # (kind, fields) the rows are read for: slots may carry only these fields of a kind
    # named here (a gauge's average and maximum together), every field of the others
    fields: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # (kind, prefer) read from one source a slot: slots may carry only the source that
    # ``Slot.get(kind, prefer)`` takes there (the first of ``prefer`` with rows, else the
    # first by name), where that is all the reader takes of the kind
    one_source: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True, slots=True)
class Span:
    """One interval, or one bucket, of a timeline."""

    start_us: int
    end_us: int  # the time a row is shown at (a bucket's nominal end)
    duration_us: int  # measured: the recorded intervals' durations added up
    flags: int
    # a bucket its recorded intervals cover only in part: still being filled, or the
    # recording started, stopped or lost intervals inside it (see ``partial_bucket``)
    partial: bool = False


def partial_bucket(length_us: int, covered_us: int, intervals: int) -> bool:
    """Whether ``intervals`` recorded intervals, ``covered_us`` long together, leave a bucket
    of ``length_us`` short by more than half of one of them: a bucket still being filled
    (18:01 in the 18:15 bucket), one the recording began or ended in, or one with intervals
    lost. Half an interval of slack keeps buckets whose length is not a multiple of the
    recorded intervals' (90 s of 60 s intervals) from being marked for what they cannot
    hold."""
    if intervals <= 0:
        return True
    return covered_us < length_us - covered_us / intervals / 2


@dataclass(frozen=True, slots=True)
class Extent:
    """What a timeline holds: its oldest interval's start and its newest interval's end."""

    start_us: int
    end_us: int


@dataclass(frozen=True)
class Window:
    """The spans of a timeline in (after_us, until_us], oldest first, from ``source``."""

    timeline: Timeline
    source: str  # the timeline's source in this window ("" when there is none)
    spans: tuple[Span, ...]
    after_us: int | None = None
    until_us: int | None = None
    # what the backend read to find the spans, kept for reading their slots (or None)
    backend: object = field(default=None, compare=False, repr=False)


def as_one_span(window: Window) -> Window:
    """The window with its spans as one: the first one's start, the last one's end, their
    recorded time and flags added up (unchanged when it has none)."""
    spans = window.spans
    if not spans:
        return window
    flags = 0
    for span in spans:
        flags |= span.flags
    whole = Span(spans[0].start_us, spans[-1].end_us, sum(s.duration_us for s in spans), flags)
    return replace(window, spans=(whole,))


@dataclass(frozen=True)
class EntityRows:
    """One recorded entity's rows of one kind, read straight from the timeline's source:
    ``(end_us, *fields)`` per interval (``(end_us, duration_us, *fields)`` when the
    duration was asked for), oldest first. Each is one slot of the screen as recorded,
    holding that entity's row and nothing merged into it."""

    source: str
    fields: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    attrs: Mapping[str, str]  # the entity's attributes


@dataclass(frozen=True)
class KindEntityRows:
    """Every recorded entity's rows of one kind, read straight from the timeline's source:
    ``(end_us, entity_id, *fields)`` per row (``(end_us, entity_id, duration_us, *fields)``
    when the duration was asked for), by interval, oldest first, then by entity id. Each
    interval's rows are one slot of the screen as recorded, holding those rows and nothing
    merged into them. The rows are read as they are iterated, once: a month of a total's
    members is hundreds of thousands of them, which memory need not hold at once."""

    source: str
    fields: tuple[str, ...]
    rows: Iterable[tuple[Any, ...]]
    entities: Mapping[int, tuple[str, Mapping[str, str]]]  # each entity id's key and attributes


class Reader(Protocol):
    """Reading recorded data (``close`` when done)."""

    def nodes(self) -> list[str]:
        """The systems recorded, by name."""
        ...

    def node(self, name: str | None) -> str | None:
        """``name`` if it was recorded; with ``None``, the only node or the one most
        recently written; ``None`` when there is none."""
        ...

    def window(
        self,
        timeline: Timeline,
        after_us: int | None,
        until_us: int | None,
        *,
        limit: int | None = None,
        newest_first: bool = True,
        snap: bool = False,
    ) -> Window:
        """The timeline's spans ending in (after_us, until_us]: with ``limit``, the newest
        (or, not ``newest_first``, the oldest) that many. With ``snap`` the range is one
        interval of another timeline (a drill-down): the spans that overlap it for at least
        half their length (in buckets, the buckets of the intervals that end in it)."""
        ...

    def range_window(
        self, timeline: Timeline, after_us: int | None, until_us: int | None
    ) -> Window:
        """:meth:`window`'s spans in (after_us, until_us] as one (:func:`as_one_span`): a
        comparison's run, whose range may hold a year of intervals that need not all be
        read into memory to be added up."""
        ...

    def slots(self, window: Window, kinds: Sequence[str]) -> list[Slot]:
        """The window's spans, newest first, with the data of its timeline's kinds and of
        ``kinds``."""
        ...

    def config_at(self, node: str, time_us: int) -> dict[str, str]:
        """The system facts every source last reported at or before ``time_us``."""
        ...

    def entity_rows(
        self,
        timeline: Timeline,
        kind: str,
        key: str,
        fields: Sequence[str],
        after_us: int | None,
        until_us: int | None,
        *,
        duration: bool = False,
        keyed_by: Sequence[str] = (),
    ) -> EntityRows | None:
        """The rows of ``kind``'s entity ``key`` in the timeline as recorded, when each is a
        slot of its own: the timeline's intervals in (after_us, until_us] are ``kind``'s, no
        other source recorded the kind for the node near the range, nor any source the kinds
        ``keyed_by`` (those the screen's key columns also come from), and ``key`` names one
        recorded entity (its attributes never changed). ``None`` when not, or when the
        backend cannot tell (read :meth:`slots` then); a field never recorded reads
        ``None``, and ``flags`` and ``hf_n`` read the row's own (``EntityData.field``)."""
        ...

    def kind_entity_rows(
        self,
        timeline: Timeline,
        kind: str,
        fields: Sequence[str],
        after_us: int | None,
        until_us: int | None,
        *,
        duration: bool = False,
        keyed_by: Sequence[str] = (),
    ) -> KindEntityRows | None:
        """As :meth:`entity_rows`, the rows of every entity of ``kind`` (a total of them),
        where each interval's rows are a slot of their own and no other source recorded the
        kind for the node near the range, nor any source the kinds ``keyed_by``; ``None``
        when not, or when the backend cannot tell."""
        ...

    def close(self) -> None: ...
