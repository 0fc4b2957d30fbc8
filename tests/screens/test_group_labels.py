"""Every group label of every screen fits over its columns: a label cut where the columns
end reads as something else ("Busy per 1000 VNQ/" for ESAPOLL's busy per 1000 VNQs)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from esatui.screens import catalog
from esatui.screens.model import Column


def _runs(columns: Sequence[Column], level: int) -> Iterator[tuple[str, Sequence[Column]]]:
    """(label, columns under it) of the adjacent columns sharing a group label at ``level``
    and every level above, as the header draws them."""
    i = 0
    while i < len(columns):
        groups = columns[i].groups
        j = i + 1
        while j < len(columns) and columns[j].groups[: level + 1] == groups[: level + 1]:
            j += 1
        if len(groups) > level and groups[level]:
            yield groups[level], columns[i:j]
        i = j


@pytest.mark.parametrize("name", list(catalog.screens()))
def test_every_group_label_fits_over_its_columns(name: str) -> None:
    # a column standing for each CPU type (<type>) is one column where one type is
    # recorded, the fewest a screen shows
    columns = catalog.screens()[name].columns
    depth = max((len(c.groups) for c in columns), default=0)
    for level in range(depth):
        for label, under in _runs(columns, level):
            span = sum(c.cell_width for c in under) + len(under) - 1
            assert len(label) + 2 <= span, (
                f"{name}: {label!r} needs {len(label) + 2} places, its columns have {span}"
            )
