"""Totals over CPUs that were online for only part of an interval.

A CPU's own row is a percent of its own time online (its ticks in /proc/stat, a logical
processor's online time), as sar's and hyptop's are. A total (ESALNXC's ``all``, ESASSUM's
busy by type, ESACPUU's ``Tot``) is a percent of one CPU over the interval, so each CPU adds
in by the share of the interval it was online: a CPU online for 2 s of an 8-s bucket at 92%
adds 23, not 92 (cpuplugd and ``chcpu`` take CPUs off and on; a CPU offline at either end of
an interval has no row in it). A mean (ESASSUM's steal) weighs its CPUs the same way.

The interval's length is its fullest CPU's time, so a bucket the recording covers in part
is taken over the time it covers, as its other percentages are; never longer than the
interval's recorded duration (a counter that reset or was misread reads as long). A CPU within
:data:`RELATIVE_SLACK` of it, or within its source's ``slack_us``, counts as online
throughout: counters round, and a total stays exactly the sum of its rows (``v * 1.0``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from esatui.screens.model import Value

RELATIVE_SLACK = 0.01
"""A CPU online for 99% of its interval's fullest CPU's time counts as online throughout."""


@dataclass(frozen=True)
class OnlineTime:
    """How long an entity of a kind was online in an interval: the sum of its row's
    ``fields`` that were recorded (µs; 0: not known, then online throughout), which its
    source rounds by up to ``slack_us``."""

    fields: tuple[str, ...]
    slack_us: float = 0.0

    def of(self, values: Mapping[str, Value]) -> float:
        """The time of a row whose values are ``values``."""
        fields = self.fields
        if len(fields) == 1:  # the sum below, of one field (an export asks per row)
            return values.get(fields[0]) or 0  # type: ignore[return-value]
        # filter(None): a field not recorded adds nothing; the fields are numbers
        return sum(cast("Iterable[float]", filter(None, map(values.get, fields))))

    def shares(self, times: Sequence[float], duration_us: float) -> list[float] | None:
        """Each time's share of an interval of ``duration_us``, in order; ``None`` where
        every one counts as online throughout (the usual interval: nothing to weigh)."""
        if not times:
            return None
        longest, shortest, slack = max(times), min(times), self.slack_us
        if shortest >= longest - max(slack, longest * RELATIVE_SLACK):
            return None  # the usual interval, whatever its length
        # the fullest is the interval, never longer than it (a counter reset reads as long)
        full = min(longest, duration_us) if duration_us > 0 else longest
        least = full - max(slack, full * RELATIVE_SLACK)
        if full <= 0 or shortest >= least:
            return None
        made = [1.0 if t <= 0 or t >= least else t / full for t in times]
        return None if min(made) == 1.0 else made


def weighed(values: Sequence[float | None], shares: Sequence[float] | None) -> list[float | None]:
    """``values`` each at its share (unchanged where ``shares`` is ``None``)."""
    if shares is None:
        return list(values)
    return [None if v is None else v * s for v, s in zip(values, shares, strict=True)]
