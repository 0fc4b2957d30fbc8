"""The distribution view (``d``): the recorded interval values of the column under the
cursor inside each aggregated interval on view, and their histogram (``screens/
distribution.py``); Esc returns."""

from __future__ import annotations

from dataclasses import replace

from esatui.db.reader import Reader
from esatui.garbage import reading_in_bulk
from esatui.screens import catalog
from esatui.screens.distribution import distribution, recorded_values, render_lines
from esatui.screens.model import ScreenModel
from esatui.screens.rowkey import EntityKey


@reading_in_bulk()
def distribution_lines(
    reader: Reader,
    bucketed: ScreenModel,
    query: catalog.Query,
    column_id: str,
    entity: EntityKey,
    width: int,
) -> list[str]:
    """The view of ``column_id`` for ``entity`` over the buckets on view (read in a
    worker)."""
    length_us = query.interval_len_us
    if length_us is None:
        raise ValueError("d: the distribution inside aggregated intervals: + first")
    rows = bucketed.rows
    after, until = query.after_us, query.until_us
    if rows:  # the buckets on view, within the range asked (a partial bucket's part)
        oldest, newest = min(r.start_us for r in rows), max(r.end_us for r in rows)
        after = oldest if after is None else max(after, oldest)
        until = newest if until is None else min(until, newest)
    ranged = replace(query, after_us=after, until_us=until, limit=None, snap=False)
    values = recorded_values(reader, bucketed, ranged, column_id, entity)
    screen = catalog.get(bucketed.name)
    # the recording's interval length (of its newest intervals: robust to gaps)
    recorded_us = None if screen.fleet else catalog.recorded_length_us(reader, screen, query.node)
    dist = distribution(bucketed, values, length_us, column_id, entity, recorded_us)
    return render_lines(dist, width)
