"""Comparing two ranges in the monitor: ``m`` at the start and at the end of a range, then of
another, and the comparison (``screens/compare.py``) shows as a screen; Esc returns."""

from __future__ import annotations

from dataclasses import dataclass, replace

from esatui.db.reader import Reader
from esatui.garbage import reading_in_bulk
from esatui.screens import catalog
from esatui.screens.compare import Side, compare, range_model, render_text
from esatui.screens.render import date_range, moment_text

Range = tuple[int, int]  # (after, until]


@dataclass(frozen=True)
class Marks:
    """The marks set so far: complete ranges, and the first row of the one being marked."""

    ranges: tuple[Range, ...] = ()
    first: Range | None = None  # the interval of the row marked first

    def mark(self, start_us: int, end_us: int) -> tuple[Marks, str]:
        """``m`` on a row (its interval ``start_us``-``end_us``): the start of a range, or
        its end (the range covers both rows whole, whichever was marked first). What to say."""
        if self.first is None:
            which = "first" if not self.ranges else "second"
            said = f"{which} range from {moment_text(start_us)}: m again at its end"
            return replace(self, first=(start_us, end_us)), said
        marked = (min(self.first[0], start_us), max(self.first[1], end_us))
        ranges = (*self.ranges, marked)[-2:]
        if len(ranges) < 2:
            said = f"first range {date_range(*marked)}: m at the start and end of the second"
        else:
            said = f"comparing {date_range(*ranges[0])} with {date_range(*ranges[1])}"
        return Marks(ranges), said

    @property
    def started(self) -> bool:
        """Whether a range is marked, or its first row: a comparison under way."""
        return bool(self.ranges) or self.first is not None

    @property
    def pair(self) -> tuple[Range, Range] | None:
        return (self.ranges[0], self.ranges[1]) if len(self.ranges) == 2 else None


@reading_in_bulk()
def comparison_lines(
    reader: Reader, screen: str, query: catalog.Query, pair: tuple[Range, Range]
) -> list[str]:
    """The comparison of the two ranges (read in a worker), as the text export prints it."""
    sides = []
    labels = [date_range(*r) for r in pair]
    if labels[0] == labels[1]:
        labels = [f"A {labels[0]}", f"B {labels[1]}"]
    for label, (after, until) in zip(labels, pair, strict=True):
        model = range_model(reader, screen, replace(query, after_us=after, until_us=until))
        if not model.rows:
            raise ValueError(f"{label}: {catalog.no_rows_reason(model)}")
        sides.append(Side(label, "this recording", model))
    return render_text(compare(sides[0], sides[1])).splitlines()
