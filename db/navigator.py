"""Moving along a timeline: the interval (or bucket) before, after or at a moment.

The TUI asks it where a key leads (the next interval, the page before), and every screen
model (the TUI, replay, the exports) asks it for the window its rows are made of, so all of
them agree on which intervals a timeline has at a given length. It reads through a
:class:`~esatui.db.reader.Reader`, whatever the backend.
"""

from __future__ import annotations

from esatui.db.reader import Reader, Span, Timeline, Window


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
