"""A screen's rows a slice of its window at a time, for exports that stream (issue 16).

The whole-range model (:func:`catalog.build_model`) holds every slot and every row of the
range at once: a month of ESACPUU is half a gigabyte. Here the window's spans are read once
(a few dozen bytes each) and cut into chunks; each chunk's slots are read and built on their
own, so memory holds one chunk.

Each chunk gives the same rows the whole build gives for its spans:

- the chunk's slots are read with one neighbouring span on each side as context and those
  two slots dropped: an interval of another kind or source is placed into the span it
  overlaps most (``query.slots``), and with its neighbours present that is the same span
  as in the whole window; buckets hold the intervals that end in them and in the range,
  and the chunk's range is clamped to the whole range;
- the screen's build is per slot for the screens that declare ``streams`` (ScreenDef): a
  row depends on its own slot and the system facts, never on another slot. What the build
  says about the whole range (columns, notes, header) must be the same from every chunk,
  or be made of facts that add up (``Built.facts``); the caller checks (:class:`Parts`)
  and builds the whole model instead when it is not.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from esatui.db.navigator import Navigator
from esatui.db.reader import Extent, Reader, Window
from esatui.db.slots import Slot
from esatui.screens.catalog import Built, Context, Query, RangeFacts, ScreenDef, screen_timeline
from esatui.screens.model import Column, Value

CHUNK = 240  # spans per chunk: four hours of 1-minute intervals


@dataclass(frozen=True)
class Frame:
    """What a build says about the whole range besides its rows: equal from every chunk of
    a screen that streams."""

    columns: tuple[Column, ...]
    notes: tuple[str, ...]
    flags_legend: bool
    header: tuple[tuple[str, Value], ...]

    @classmethod
    def of(cls, built: Built) -> Frame:
        """The build's frame (its CPU types' sources are not: they add up, see ``Built``;
        nor its notes and header where its facts make them)."""
        if built.facts is not None:
            return cls(built.columns, (), built.flags_legend, ())
        return cls(built.columns, built.notes, built.flags_legend, tuple(built.header.items()))


class Parts:
    """What the chunks' builds say of the whole range, as they come (the newest chunk first,
    or the oldest): the frame every chunk must say alike, the facts added up in time order."""

    def __init__(self, oldest_first: bool) -> None:
        self._oldest_first = oldest_first
        self._frame: Frame | None = None
        self._facts: RangeFacts | None = None

    def add(self, built: Built) -> bool:
        """Adds a chunk's build; ``False`` where it does not say what the others say, or
        its facts do not add up (the whole range must be built)."""
        frame = Frame.of(built)
        if self._frame is None:
            self._frame, self._facts = frame, built.facts
            return True
        if frame != self._frame or (self._facts is None) != (built.facts is None):
            return False
        if self._facts is not None and built.facts is not None:
            older, newer = (
                (self._facts, built.facts) if self._oldest_first else (built.facts, self._facts)
            )
            self._facts = older.then(newer)
            return self._facts is not None
        return True

    @property
    def frame(self) -> Frame | None:
        """What the whole range's build says besides its rows (``None``: no chunk yet)."""
        if self._frame is None or self._facts is None:
            return self._frame
        facts = self._facts
        return replace(self._frame, notes=facts.notes, header=tuple(facts.header.items()))


@dataclass(frozen=True)
class Plan:
    """The whole range's spans (oldest first) and what the model's header needs of them."""

    node: str
    window: Window
    config: Mapping[str, str]
    extent: Extent | None


def plan(reader: Reader, screen: ScreenDef, query: Query) -> Plan | None:
    """The window of the whole range, as :func:`catalog.build_model` finds it (``None``: no
    such node; the caller builds the whole model, which says so)."""
    node = reader.node(query.node)
    if node is None:
        return None
    navigator = Navigator(reader, screen_timeline(screen, node, query.interval_len_us))
    window = navigator.window(query.after_us, query.until_us, limit=query.limit, snap=query.snap)
    at = window.spans[-1].end_us if window.spans else (query.until_us or 0)
    return Plan(node, window, reader.config_at(node, at), navigator.extent())


def chunks(
    reader: Reader,
    screen: ScreenDef,
    query: Query,
    found: Plan,
    *,
    oldest_first: bool = False,
    size: int = CHUNK,
) -> Iterator[tuple[Sequence[Slot], Built]]:
    """Each chunk's slots (newest first, as the whole model has them) and its build, the
    newest chunk first (or the oldest)."""
    spans = found.window.spans
    starts = range(0, len(spans), size)
    for lo in reversed(starts) if not oldest_first else starts:
        hi = min(lo + size, len(spans))
        slots = chunk_slots(reader, found.window, screen.kinds, lo, hi)
        context = Context(
            slots,
            found.config,
            query.thresholds,
            query.entity,
            query.options,
            found.node,
            query.crypto_costs,
        )
        yield slots, screen.build(context)


def slot_chunks(
    reader: Reader, whole: Window, kinds: Sequence[str], size: int = CHUNK
) -> Iterator[list[Slot]]:
    """The window's slots (with ``kinds`` beside the timeline's) a chunk of ``size`` spans
    at a time, oldest first, as :meth:`Reader.slots` reads them over the whole window."""
    for lo in range(0, len(whole.spans), size):
        slots = chunk_slots(reader, whole, kinds, lo, min(lo + size, len(whole.spans)))
        slots.reverse()
        yield slots


def chunk_slots(
    reader: Reader, whole: Window, kinds: Sequence[str], lo: int, hi: int
) -> list[Slot]:
    """The slots of spans ``lo`` to ``hi`` (newest first), read with a neighbour each side."""
    spans = whole.spans
    first, last = max(lo - 1, 0), min(hi + 1, len(spans))
    framed = spans[first:last]
    after, until = whole.after_us, whole.until_us
    if whole.timeline.length_us is not None:  # buckets hold what ends in them and the range
        after = _later(after, framed[0].start_us)
        until = _earlier(until, framed[-1].end_us)
    window = Window(whole.timeline, whole.source, framed, after, until)
    slots = reader.slots(window, kinds)  # newest first
    keep = {s.end_us for s in spans[lo:hi]}
    return [s for s in slots if s.end_us in keep]


def _later(a: int | None, b: int) -> int:
    return b if a is None else max(a, b)


def _earlier(a: int | None, b: int) -> int:
    return b if a is None else min(a, b)
