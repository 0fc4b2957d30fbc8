"""Moving along a timeline: the interval (or bucket) before, after or at a moment.

The TUI asks it where a key leads (the next interval, the page before), and every screen
model (the TUI, replay, the exports) asks it for the window its rows are made of, so all of
them agree on which intervals a timeline has at a given length. It reads through a
:class:`~esatui.db.reader.Reader`, whatever the backend.
"""

from __future__ import annotations

from dataclasses import replace

from esatui.db.reader import Extent, Reader, Span, Timeline, Window

# A live recorder's intervals run a little long or short of its --interval (60.00025 s is
# its 1m): a length this close to a multiple of the recorded one is that multiple.
LENGTH_SLACK = 0.01


def shorter_than_recorded(length_us: float, recorded_us: int) -> bool:
    """``length_us`` cannot be made of the recorded intervals: it is shorter than one."""
    return length_us < recorded_us * (1 - LENGTH_SLACK)


def multiple_of_recorded(length_us: float, recorded_us: int) -> bool:
    """``length_us`` holds a whole number of the recorded intervals, within the slack."""
    whole = max(1, round(length_us / recorded_us))
    return abs(length_us - whole * recorded_us) <= LENGTH_SLACK * length_us


class Navigator:
    """The spans of one timeline (one screen's rows at one interval length)."""

    def __init__(self, reader: Reader, timeline: Timeline) -> None:
        self.reader = reader
        self.timeline = timeline

    def window(
        self,
        after_us: int | None,
        until_us: int | None,
        *,
        limit: int | None = None,
        snap: bool = False,
    ) -> Window:
        """The newest ``limit`` spans ending in (after_us, until_us], or with ``snap`` those
        that match one interval of another timeline (see :meth:`Reader.window`)."""
        return self.reader.window(self.timeline, after_us, until_us, limit=limit, snap=snap)

    def before(self, time_us: int, count: int = 1, *, after_us: int | None = None) -> Span | None:
        """The ``count``-th span ending at or before ``time_us`` (counting back from the
        newest), or the oldest there is after ``after_us`` when there are fewer."""
        spans = self.reader.window(self.timeline, after_us, time_us, limit=count).spans
        return spans[0] if spans else None

    def after(self, time_us: int, count: int = 1, *, until_us: int | None = None) -> Span | None:
        """The ``count``-th span ending after ``time_us``, or the newest there is up to
        ``until_us`` when there are fewer."""
        spans = self.reader.window(
            self.timeline, time_us, until_us, limit=count, newest_first=False
        ).spans
        return spans[-1] if spans else None

    def at(self, time_us: int) -> Span | None:
        """The span that holds ``time_us`` (start < time_us <= end), if there is one."""
        found = self.after(time_us - 1)
        return found if found is not None and found.start_us < time_us else None

    def newest(self, until_us: int | None = None) -> Span | None:
        spans = self.reader.window(self.timeline, None, until_us, limit=1).spans
        return spans[-1] if spans else None

    def nearest(self, time_us: int) -> Span | None:
        """The span ending at or before ``time_us``, else the first after it: where a jump
        outside the recording lands."""
        return self.before(time_us) or self.after(time_us)

    def extent(self) -> Extent | None:
        """The timeline as recorded: its oldest interval's start, its newest one's end."""
        recorded = replace(self.timeline, length_us=None)
        newest = self.reader.window(recorded, None, None, limit=1).spans
        if not newest:
            return None
        oldest = self.reader.window(recorded, None, None, limit=1, newest_first=False).spans
        return Extent((oldest or newest)[0].start_us, newest[-1].end_us)

    def recorded_length_us(self, sample: int = 8) -> int | None:
        """The length of the timeline's recorded intervals: the median of the newest
        ``sample`` (the first one a live recorder writes may be up to half longer)."""
        recorded = replace(self.timeline, length_us=None)
        spans = self.reader.window(recorded, None, None, limit=sample).spans
        if not spans:
            return None
        lengths = sorted(s.end_us - s.start_us for s in spans)
        return lengths[len(lengths) // 2]
