"""Bucket boundaries in local time, across daylight-saving changes.

A bucket of length L holds the intervals whose end lies in (start, end]. Two rules:

- L divides an hour (1 min ... 30 min, 1 h): the ends are aligned at the zone's offset, as
  before (``aligned``): the same instants whichever side of an hour's change, so the
  buckets are whole UTC-aligned pieces and the repeated hour of an autumn change is two
  buckets, never one of two hours. Near a change that L does not divide (Lord Howe's 30
  minutes at 1 h) the aligned ends of the two sides would overlap: there the calendar rule
  below holds (the hour that holds the change is one of 90 minutes in autumn, the half
  hour left of it in spring).
- any other L (2 h, 3 h, 1 day, 45 min ...): the local calendar. A bucket ends where the
  local clock first reaches a multiple of L (local midnight for a day; whole weeks count
  from a Monday's midnight, so they run Monday to Monday, :func:`origin_us`): on the day the
  clocks change the bucket that holds the change is one bucket of L less or more the hour
  changed (a 23- or 25-hour day; 2 or 4 hours of a 3-hour bucket; the 02:00-04:00 bucket of
  2 hours holds 1 or 3). A boundary the spring change skips (02:00 in Berlin) is the change
  itself; a boundary the autumn change repeats counts once, when first reached.

Without a change near, both rules are plain arithmetic (``end - L`` is the start, ``k L``
further the k-th bucket on); the changes are found once per 64 days of a zone (a zone
changes its offset at most once a day) and kept per zone. Where a change moves the clock
by L or more (Troll's 2 hours at 2 h, Apia's skipped day in 2011 at 1 day) several
multiples of L share one end, and ``shifted`` counts a bucket at a time.
"""

from __future__ import annotations

import bisect
import math
import os
import time
from collections.abc import Sequence

from esatui.db.schema import HOUR_US

DAY_US = 24 * HOUR_US
WEEK_US = 7 * DAY_US
_MONDAY_US = 4 * DAY_US  # 1970-01-05, the epoch's first Monday (1970-01-01 was a Thursday)
_BLOCK_US = 64 * DAY_US


def utc_offset_us(time_us: int) -> int:
    return int(time.localtime(time_us // 1_000_000).tm_gmtoff) * 1_000_000


def origin_us(length_us: int) -> int:
    """The local time (since the epoch) lengths are counted from: a Monday's midnight for
    whole weeks (ISO 8601's weeks, Monday to Monday), the epoch for any other length."""
    return _MONDAY_US if length_us % WEEK_US == 0 else 0


def aligned(end_us: int, offset_us: int, length_us: int) -> int:
    """The first instant at or after ``end_us`` whose local time at ``offset_us`` is a
    multiple of ``length_us`` past :func:`origin_us`."""
    offset_us -= origin_us(length_us)
    return -((-(end_us + offset_us)) // length_us) * length_us - offset_us


def _wall(k: int, length_us: int) -> int:
    """The local time of the k-th multiple of ``length_us`` past :func:`origin_us`."""
    return k * length_us + origin_us(length_us)


def on_calendar(length_us: int) -> bool:
    """Whether buckets of ``length_us`` follow the local calendar everywhere (see the
    module); the others follow it only near a change they do not divide."""
    return HOUR_US % length_us != 0


# --- the zone's changes ------------------------------------------------------------------

Change = tuple[int, int, int]  # the first instant at the new offset, the offset before, after

_CHANGES: dict[tuple[object, ...], dict[int, list[Change]]] = {}
# per zone and block, the greatest common divisor of its changes' sizes (0: none)
_GRAINS: dict[tuple[object, ...], dict[int, int]] = {}
_ZONE: list[tuple[object, ...]] = []
# per length that divides an hour, the blocks last found without a change it does not
# divide: (the zone's time.tzname, from, to)
_QUIET: dict[int, tuple[object, int, int]] = {}


def _zone() -> tuple[object, ...]:
    """The zone ``localtime`` reads: the one the last ``time.tzset`` set (each makes a new
    ``time.tzname``), by name too: zones alike in offsets and names differ in changes. A C
    call that runs tzset itself (glibc's ``mktime``) after ``TZ`` changed without
    ``time.tzset`` would go unseen here; esatui makes none."""
    names = time.tzname
    if not _ZONE or _ZONE[0][-1] is not names:
        _ZONE[:] = [(os.environ.get("TZ"), time.timezone, time.altzone, names)]
    return _ZONE[0]


def _block(block: int) -> list[Change]:
    """The changes in one block of 64 days: its days' ends compared, and a day whose ends
    differ bisected to the second."""
    zone = _zone()
    blocks = _CHANGES.get(zone)
    if blocks is None:
        blocks = _CHANGES[zone] = {}
    found = blocks.get(block)
    if found is not None:
        return found
    out: list[Change] = []
    t = block * _BLOCK_US
    before = utc_offset_us(t)
    for _ in range(_BLOCK_US // DAY_US):
        after = utc_offset_us(t + DAY_US)
        if after != before:
            lo, hi = t // 1_000_000, (t + DAY_US) // 1_000_000  # offset(lo) is before's
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if utc_offset_us(mid * 1_000_000) == before:
                    lo = mid
                else:
                    hi = mid
            out.append((hi * 1_000_000, before, utc_offset_us(hi * 1_000_000)))
        t += DAY_US
        before = after
    blocks[block] = out
    return out


def _grain(block: int) -> int:
    """The greatest common divisor of the sizes of the block's changes (0: none)."""
    grains = _GRAINS.get(_zone())
    if grains is None:
        grains = _GRAINS[_zone()] = {}
    found = grains.get(block)
    if found is None:
        found = grains[block] = math.gcd(*(abs(c[2] - c[1]) for c in _block(block)))
    return found


def changes(after_us: int, until_us: int) -> list[Change]:
    """The zone's changes in (after, until], oldest first."""
    out: list[Change] = []
    for block in range(after_us // _BLOCK_US, until_us // _BLOCK_US + 1):
        out += [c for c in _block(block) if after_us < c[0] <= until_us]
    return out


def _first_reach(wall_us: int) -> int:
    """The first instant the local clock reads ``wall_us`` (local time as microseconds since
    the epoch) or later: the change itself where the clock skips it."""
    near = changes(wall_us - 2 * DAY_US, wall_us + 2 * DAY_US)
    starts = [wall_us - 2 * DAY_US, *(c[0] for c in near)]
    offsets = [near[0][1] if near else utc_offset_us(wall_us), *(c[2] for c in near)]
    for i, (start, offset) in enumerate(zip(starts, offsets, strict=True)):
        at = max(start, wall_us - offset)
        if i + 1 == len(starts) or at < starts[i + 1]:
            return at
    raise AssertionError("unreachable")


def _near(after_us: int, until_us: int, length_us: int) -> list[Change]:
    """The changes in (after - a day, until] that move buckets of ``length_us`` off the
    arithmetic ones (a change repeats at most a day of the clock): every change for a
    length on the calendar, else those it does not divide (Lord Howe's 30 minutes at an
    hour), near which the calendar rule is used too. Where there are none the boundaries
    are plain arithmetic at the local offset."""
    if HOUR_US % length_us:  # on the calendar
        return changes(after_us - DAY_US, until_us)
    zone = _zone()
    grains = _GRAINS.get(zone)
    first = block = (after_us - DAY_US) // _BLOCK_US
    last = until_us // _BLOCK_US
    while block <= last:
        grain = grains.get(block) if grains is not None else None
        if (grain if grain is not None else _grain(block)) % length_us:
            # some change there that the length does not divide
            found = changes(after_us - DAY_US, until_us)
            return [c for c in found if (c[2] - c[1]) % length_us != 0]
        block += 1
    _QUIET[length_us] = (zone[-1], first * _BLOCK_US, (last + 1) * _BLOCK_US)
    return []


def _index(end_us: int, length_us: int) -> int:
    """The k of the bucket holding ``end_us``: its end is ``_first_reach(_wall(k, L))``, the
    first such at or after ``end_us``."""
    k = -(-(end_us + utc_offset_us(end_us) - origin_us(length_us)) // length_us)
    while _first_reach(_wall(k - 1, length_us)) >= end_us:
        k -= 1
    while _first_reach(_wall(k, length_us)) < end_us:
        k += 1
    return k


# --- buckets -----------------------------------------------------------------------------


def bucket_end(end_us: int, length_us: int) -> int:
    """The end of the bucket of ``length_us`` holding ``end_us``: 15-minute buckets end at
    :00, :15 ...; daily ones at local midnight."""
    b = aligned(end_us, utc_offset_us(end_us), length_us)
    quiet = _QUIET.get(length_us)  # the common case, one look: no change near that matters
    if (
        quiet is not None
        and quiet[0] is time.tzname
        and quiet[1] < b - length_us - DAY_US
        and b < quiet[2]
    ):
        return b
    if not _near(b - length_us, b, length_us):
        return b
    return _first_reach(_wall(_index(end_us, length_us), length_us))


def bucket_start(end_us: int, length_us: int) -> int:
    """The start of the bucket ending at ``end_us`` (a bucket end): the previous end."""
    if not _near(end_us - length_us, end_us, length_us):
        return end_us - length_us
    return _first_reach(_wall(_index(end_us, length_us) - 1, length_us))


def shifted(end_us: int, buckets: int, length_us: int) -> int:
    """The end of the bucket ``buckets`` after (before, if negative) the one ending at
    ``end_us`` (a bucket end)."""
    plain = end_us + buckets * length_us
    near = _near(min(plain, end_us) - length_us, max(plain, end_us), length_us)
    if not near:
        return plain
    if all(abs(c[2] - c[1]) < length_us for c in near):  # one end per multiple of the length
        return _first_reach(_wall(_index(end_us, length_us) + buckets, length_us))
    # a bucket at a time: where the clock skips a bucket or more (Troll's 2 hours at 2
    # hours, Apia's whole day in 2011), several multiples of the length share one end
    b = end_us
    for _ in range(abs(buckets)):
        b = bucket_end(b + 1, length_us) if buckets > 0 else bucket_start(b, length_us)
    return b


def bucket_starts(ends: Sequence[int], length_us: int) -> list[int]:
    """:func:`bucket_start` of ascending bucket ends (arithmetic where no change is near)."""
    if not ends:
        return []
    if not _near(ends[0] - length_us, ends[-1], length_us):
        return [b - length_us for b in ends]
    return [bucket_start(b, length_us) for b in ends]


def near_change(after_us: int, until_us: int, length_us: int) -> bool:
    """Whether a bucket of ``length_us`` holding an end in (after, until] may differ from
    the arithmetic one at the ends' own offset."""
    return bool(_near(after_us - length_us, until_us + length_us, length_us))


_QUARTER_US = 900_000_000


def bucket_runs(ends: Sequence[int], length_us: int) -> list[tuple[int, int, int]]:
    """Ascending ``ends`` cut into runs in one bucket each: (its :func:`bucket_end`, first
    index, index after the last). On the calendar, one bucket end and one bisection per
    run; at lengths that divide an hour (many short runs) the local time's offset is read
    once per quarter hour a run spans (per end in a quarter hour whose two ends disagree on
    it), so a month of 1-minute intervals costs a few thousand ``localtime`` calls."""
    if on_calendar(length_us) or (ends and near_change(ends[0], ends[-1], length_us)):
        runs: list[tuple[int, int, int]] = []
        i = 0
        while i < len(ends):
            b = bucket_end(ends[i], length_us)
            stop = bisect.bisect_right(ends, b, i)
            runs.append((b, i, stop))
            i = stop
        return runs
    return _runs_at_offsets(ends, length_us)


def _runs_at_offsets(ends: Sequence[int], length_us: int) -> list[tuple[int, int, int]]:
    offsets: dict[int, int | None] = {}

    def offset_in(quarter: int) -> int | None:
        if quarter not in offsets:
            first = utc_offset_us(quarter * _QUARTER_US)
            last = utc_offset_us((quarter + 1) * _QUARTER_US - 1)
            offsets[quarter] = first if first == last else None
        return offsets[quarter]

    runs: list[tuple[int, int, int]] = []
    i = 0
    while i < len(ends):
        quarter = ends[i] // _QUARTER_US
        offset = offset_in(quarter)
        if offset is None:
            runs.append((bucket_end(ends[i], length_us), i, i + 1))
            i += 1
            continue
        bucket = aligned(ends[i], offset, length_us)
        # the run: ends up to the bucket's, in quarter hours of the same offset
        while (quarter + 1) * _QUARTER_US <= bucket and offset_in(quarter + 1) == offset:
            quarter += 1
        last = min(bucket, (quarter + 1) * _QUARTER_US - 1)
        stop = bisect.bisect_right(ends, last, i)
        runs.append((bucket, i, stop))
        i = stop
    return runs
