"""Samples to interval records: the one place where counters become deltas.

Between two full samples the builder takes the difference of every counter over the exact
measured duration. A counter that went backwards was reset (device re-created, card reset):
the value after the reset is the delta and the row is flagged, so a rate is never negative.
Some counters are not so simple, as their fields declare (``collectors.model.Field``):

- an unsigned counter of a stated width (a monitor record's u64) that passes its top wraps
  round: the delta is taken modulo 2**width when that is less than half the range;
- a counter the source documents as able to go back a little (``/proc/stat``'s iowait) is
  not a reset when it does: its delta is 0, unless the entity's other counters, which cannot
  go back, say the entity was reset;
- a reading SQLite cannot store (beyond 64-bit signed integers, not finite) or a counter
  that jumps by more than that is that entity's problem, never the interval's: the value is
  left out with a warning, and the counter's last good reading stays the base for the next
  interval, so sums over intervals stay exact.

Entities that appear have no delta yet (their gauges still count); entities that vanish
simply end. A kind whose entities say how old their counters are (``Kind.age``: a z/VM
guest's time logged on) is the exception: an entity younger than the interval began within
it (a guest logged on, or off and on again), and its counters' values are all the interval's,
flagged a reset. Gauges from every sample of the interval, the high-frequency ones included, are
averaged and maxed. An interval that would not last a positive time, or longer than
``max_duration_us``, is not made: the sample starts afresh, with a warning.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from operator import add

from esatui.collectors.base import Warn, Warnings
from esatui.collectors.model import GaugeTable, Kind, Number, Reading, Role, Sample
from esatui.db.records import EntityRow, Flag, Interval, Value, max_column

EntityId = tuple[str, str]
INT64_MAX = 2**63 - 1  # SQLite's INTEGER; gauges are held to the same range
DAY_US = 86_400 * 1_000_000
_RESET, _NEW = int(Flag.RESET), int(Flag.NEW)  # plain ints: no enum arithmetic per row


def _ignore(message: str) -> None:
    del message


@dataclass(slots=True)
class _GaugeAcc:
    n: int = 0
    sums: dict[str, float] = field(default_factory=dict)
    maxima: dict[str, float] = field(default_factory=dict)

    def add(self, values: Mapping[str, Value], names: Iterable[str]) -> list[str]:
        """Adds the values of ``names``; the names whose value is out of range (left out)."""
        counted = False
        odd: list[str] = []
        sums, maxima = self.sums, self.maxima
        for name in names:
            v = values.get(name)
            if v is None:
                continue
            if not -INT64_MAX <= v <= INT64_MAX:  # also NaN and infinities
                odd.append(name)
                continue
            counted = True
            sums[name] = sums.get(name, 0.0) + v
            maxima[name] = max(maxima.get(name, v), v)
        self.n += counted
        return odd


@dataclass(slots=True)
class _Columns:
    """A gauge table's running sums, column by column, while each pass of the interval gives
    the same entities, each with every value read and in range: the sums are the very floats
    :class:`_GaugeAcc` would add up, one pass after the other, and the maxima are taken
    over the passes' columns (kept) when the sums are handed on."""

    keys: tuple[str, ...]
    names: tuple[str, ...]  # the table's column names
    used: tuple[tuple[int, str], ...]  # (column, name) of the kind's gauges, in kind order
    sums: list[list[float]] = field(default_factory=list)
    passes: list[list[tuple[Value, ...]]] = field(default_factory=list)  # per used column

    def add(self, rows: tuple[tuple[Value, ...], ...]) -> bool:
        """Adds one pass's rows; ``False`` (nothing added) unless every value is clean."""
        if not rows:
            return True
        columns = list(zip(*rows, strict=True))
        picked = [columns[i] for i, _ in self.used]
        for column in picked:
            if None in column:
                return False
            if min(column) < -INT64_MAX or max(column) > INT64_MAX:
                return False
            if not math.isfinite(sum(column)):  # a NaN in it
                return False
        if self.passes:
            self.sums = [list(map(add, s, c)) for s, c in zip(self.sums, picked, strict=True)]
            for kept, column in zip(self.passes, picked, strict=True):
                kept.append(column)
        else:
            self.sums = [[0.0 + v for v in c] for c in picked]
            self.passes = [[c] for c in picked]
        return True

    def flush(self, kind: str, into: dict[EntityId, _GaugeAcc]) -> None:
        """Hands the sums and maxima to per-entity accumulators (there are none yet)."""
        if not self.passes:
            return
        n = len(self.passes[0])
        maxima = [list(map(max, *kept)) if n > 1 else list(kept[0]) for kept in self.passes]
        names = [name for _, name in self.used]
        for i, key in enumerate(self.keys):
            into[(kind, key)] = _GaugeAcc(
                n,
                {name: self.sums[j][i] for j, name in enumerate(names)},
                {name: maxima[j][i] for j, name in enumerate(names)},  # type: ignore[misc]
            )


class IntervalBuilder:
    """Turns one source's samples into intervals."""

    def __init__(
        self,
        source: str,
        kinds: Iterable[Kind],
        node: str = "",
        *,
        warn: Warn = _ignore,
        max_duration_us: int = DAY_US,
    ) -> None:
        self.source = source
        self.node = node
        self.max_duration_us = max_duration_us
        self._warnings = Warnings(warn, source)
        self._counters: dict[str, tuple[str, ...]] = {}
        self._gauges: dict[str, tuple[str, ...]] = {}
        self._loose: dict[str, frozenset[str]] = {}  # counters that may go back a little
        self._modulus: dict[str, dict[str, int]] = {}  # counters that wrap, and where
        self._age: dict[str, str] = {}  # kinds whose entities say how old their counters are
        for kind in kinds:
            counters = [f for f in kind.fields if f.role is Role.COUNTER]
            self._counters[kind.name] = tuple(f.name for f in counters)
            self._gauges[kind.name] = tuple(f.name for f in kind.fields if f.role is Role.GAUGE)
            self._loose[kind.name] = frozenset(f.name for f in counters if not f.monotonic)
            self._modulus[kind.name] = {f.name: 1 << f.wrap_bits for f in counters if f.wrap_bits}
            if kind.age is not None:
                self._age[kind.name] = kind.age
        self._previous: Sample | None = None
        self._prev_readings: dict[EntityId, Reading] = {}
        self._acc: dict[EntityId, _GaugeAcc] = {}
        self._columns: dict[str, _Columns] = {}  # per kind: its gauge table's running sums
        self._flags = 0

    @property
    def previous(self) -> Sample | None:
        return self._previous

    def add_gauges(self, sample: Sample) -> None:
        """A high-frequency sample: only its gauges count, into the interval under way."""
        self._flags |= sample.flags
        if sample.readings:
            self._flush_columns()  # the readings' gauges come after the tables' so far
        for reading in sample.readings:
            names = self._gauges.get(reading.kind, ())
            if names:
                entity = (reading.kind, reading.key)
                acc = self._acc.get(entity)
                if acc is None:
                    acc = self._acc[entity] = _GaugeAcc()
                for name in acc.add(reading.values, names):
                    self._out_of_range(reading.kind, reading.key, name, reading.values[name])
        for table in sample.gauges:
            self._add_table(table)

    def _add_table(self, table: GaugeTable) -> None:
        """A gauge table: into its kind's running columns while it can, else row by row."""
        gauges = self._gauges.get(table.kind, ())
        if not gauges:
            return
        columns = self._columns.get(table.kind)
        if columns is not None and (columns.keys != table.keys or columns.names != table.names):
            self._flush_columns(table.kind)
            columns = None
        if columns is None and not any((table.kind, k) in self._acc for k in table.keys):
            where = {name: i for i, name in enumerate(table.names)}
            used = tuple((where[g], g) for g in gauges if g in where)
            if used:
                columns = self._columns[table.kind] = _Columns(table.keys, table.names, used)
        if columns is not None:
            if columns.add(table.rows):
                return
            self._flush_columns(table.kind)
        names = [g for g in gauges if g in table.names]
        for key, row in zip(table.keys, table.rows, strict=True):
            values = dict(zip(table.names, row, strict=True))
            entity = (table.kind, key)
            acc = self._acc.get(entity)
            if acc is None:
                acc = self._acc[entity] = _GaugeAcc()
            for name in acc.add(values, names):
                self._out_of_range(table.kind, key, name, values[name])

    def _flush_columns(self, kind: str | None = None) -> None:
        for name in [kind] if kind is not None else list(self._columns):
            columns = self._columns.pop(name, None)
            if columns is not None:
                columns.flush(name, self._acc)

    def add(self, sample: Sample) -> Interval | None:
        """A full sample: closes the interval since the previous one (``None`` for the first,
        or when the clock did not advance)."""
        self.add_gauges(sample)
        self._flush_columns()
        previous, prev_readings = self._previous, self._prev_readings
        acc, flags = self._acc, self._flags
        readings = sample.all_readings() if sample.gauges else sample.readings
        self._previous = sample
        self._prev_readings = {(r.kind, r.key): r for r in readings}
        self._acc, self._flags = {}, 0
        if previous is None:
            return None
        duration = _duration_us(previous, sample)
        if not 0 < duration <= self.max_duration_us:
            if duration < 0 or duration > self.max_duration_us:
                self._warnings(
                    f"samples {duration / 1e6:.6g} s apart: no interval between them; "
                    "the later one starts afresh",
                    key="duration",
                )
            return None
        rows = []
        for reading in readings:
            entity = (reading.kind, reading.key)
            if reading.kind in self._age and self._began_within(reading, duration):
                row = self._began_row(reading, acc.get(entity))
            else:
                row = self._row(reading, prev_readings.get(entity), acc.get(entity))
            if row is not None:
                rows.append(row)
                flags |= row.flags & _RESET
        return Interval(
            source=self.source,
            node=self.node or (sample.config or {}).get("node", ""),
            start_us=previous.time_us,
            end_us=sample.time_us,
            duration_us=duration,
            rows=tuple(rows),
            flags=flags,
            config=sample.config,
        )

    def _began_within(self, reading: Reading, duration_us: int) -> bool:
        """Whether an entity's counters began within an interval of ``duration_us``: its age
        is less than the interval's, by more than a tenth of it (the two clocks' jitter)."""
        age = reading.values.get(self._age[reading.kind])
        return isinstance(age, int) and 0 <= age < duration_us - duration_us // 10

    def _began_row(self, current: Reading, acc: _GaugeAcc | None) -> EntityRow | None:
        """The row of an entity whose counters began within the interval (a guest that
        logged on, or off and on again): their values are all the interval's, from zero, and
        the row is flagged a reset."""
        zero = Reading(current.kind, current.key, dict.fromkeys(self._counters[current.kind], 0))
        row = self._row(current, zero, acc)
        return None if row is None else replace(row, flags=row.flags | _RESET)

    def _row(
        self, current: Reading, previous: Reading | None, acc: _GaugeAcc | None
    ) -> EntityRow | None:
        counters = self._counters.get(current.kind)
        if counters is None:
            return None  # a kind this builder was not told about
        values: dict[str, Value] = {}
        flags = 0
        if previous is None:
            flags |= _NEW
        else:
            odd: list[str] = []
            for name in counters:
                now, before = current.values.get(name), previous.values.get(name)
                if now is None or before is None:
                    continue
                delta = now - before
                if 0 <= delta <= INT64_MAX:
                    values[name] = delta
                else:
                    odd.append(name)
            if odd:
                flags |= self._odd_counters(current, previous, odd, values)
        hf_n = 0
        if acc is not None and acc.n:
            hf_n = acc.n
            for name, total in acc.sums.items():
                values[name] = total / acc.n
                values[max_column(name)] = acc.maxima[name]
        if previous is None and not hf_n:
            return None  # nothing measured yet for a newcomer without gauges
        return EntityRow(current.kind, current.key, dict(current.attrs), values, flags, hf_n)

    def _odd_counters(
        self, current: Reading, previous: Reading, names: list[str], values: dict[str, Value]
    ) -> int:
        """Counters that went back or jumped too far (the rare case): wraps, resets, the
        documented drift of loose counters, and readings left out. Returns the row's flags."""
        kind = current.kind
        modulus, loose = self._modulus[kind], self._loose[kind]
        flags = 0
        kept: dict[str, Number] = {}  # the last good reading stays the base
        drifted: list[str] = []
        for name in names:
            now, before = current.values[name], previous.values[name]
            assert now is not None and before is not None
            delta = now - before
            wrap = modulus.get(name)
            if wrap is not None and 0 <= now < wrap and 0 <= before < wrap:
                delta %= wrap
                if delta <= min(wrap // 2, INT64_MAX):  # passed its top: a wrap
                    values[name] = delta
                    continue
                if now > before:  # "went back" by more than half the range: a bad reading
                    self._out_of_range(kind, current.key, name, now)
                    kept[name] = before
                    continue
                delta = now - before
            if delta > INT64_MAX:
                self._out_of_range(kind, current.key, name, now)
                kept[name] = before
            elif name in loose:
                drifted.append(name)
            elif 0 <= now <= INT64_MAX:
                values[name] = now  # the value after the reset
                flags |= Flag.RESET
            else:
                self._out_of_range(kind, current.key, name, now)
                kept[name] = before
        for name in drifted:  # back a little, as documented: a reset only with the others
            values[name] = current.values[name] if flags & Flag.RESET else 0
        if kept:
            entity = (kind, current.key)
            self._prev_readings[entity] = Reading(
                kind, current.key, {**current.values, **kept}, current.attrs
            )
        return flags

    def _out_of_range(self, kind: str, key: str, name: str, value: Value) -> None:
        self._warnings(
            f"{kind} {key}: {name} read as {value}, out of range: left out",
            key=f"range:{kind}:{key}:{name}",
        )


def _duration_us(previous: Sample, current: Sample) -> int:
    if previous.mono_ns is not None and current.mono_ns is not None:
        return (current.mono_ns - previous.mono_ns) // 1000
    return current.time_us - previous.time_us
