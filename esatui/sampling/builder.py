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
simply end. Gauges from every sample of the interval, the high-frequency ones included, are
averaged and maxed. An interval that would not last a positive time, or longer than
``max_duration_us``, is not made: the sample starts afresh, with a warning.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from esatui.collectors.base import Warn, Warnings
from esatui.collectors.model import Kind, Number, Reading, Role, Sample
from esatui.db.records import EntityRow, Flag, Interval, Value, max_column

EntityId = tuple[str, str]
INT64_MAX = 2**63 - 1  # SQLite's INTEGER; gauges are held to the same range
DAY_US = 86_400 * 1_000_000


def _ignore(message: str) -> None:
    del message


@dataclass(slots=True)
class _GaugeAcc:
    n: int = 0
    sums: dict[str, float] = field(default_factory=dict)
    maxima: dict[str, float] = field(default_factory=dict)

    def add(
        self, values: Mapping[str, Value], names: Iterable[str], odd: Callable[[str, Value], None]
    ) -> None:
        counted = False
        for name in names:
            v = values.get(name)
            if v is None:
                continue
            if not -INT64_MAX <= v <= INT64_MAX:  # also NaN and infinities
                odd(name, v)
                continue
            counted = True
            self.sums[name] = self.sums.get(name, 0.0) + v
            self.maxima[name] = max(self.maxima.get(name, v), v)
        self.n += counted


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
        for kind in kinds:
            counters = [f for f in kind.fields if f.role is Role.COUNTER]
            self._counters[kind.name] = tuple(f.name for f in counters)
            self._gauges[kind.name] = tuple(f.name for f in kind.fields if f.role is Role.GAUGE)
            self._loose[kind.name] = frozenset(f.name for f in counters if not f.monotonic)
            self._modulus[kind.name] = {f.name: 1 << f.wrap_bits for f in counters if f.wrap_bits}
        self._previous: Sample | None = None
        self._prev_readings: dict[EntityId, Reading] = {}
        self._acc: dict[EntityId, _GaugeAcc] = {}
        self._flags = 0

    @property
    def previous(self) -> Sample | None:
        return self._previous

    def add_gauges(self, sample: Sample) -> None:
        """A high-frequency sample: only its gauges count, into the interval under way."""
        self._flags |= sample.flags
        for reading in sample.readings:
            names = self._gauges.get(reading.kind, ())
            if names:
                entity = (reading.kind, reading.key)

                def odd(name: str, value: Value, reading: Reading = reading) -> None:
                    self._out_of_range(reading, name, value)

                self._acc.setdefault(entity, _GaugeAcc()).add(reading.values, names, odd)

    def add(self, sample: Sample) -> Interval | None:
        """A full sample: closes the interval since the previous one (``None`` for the first,
        or when the clock did not advance)."""
        self.add_gauges(sample)
        previous, prev_readings = self._previous, self._prev_readings
        acc, flags = self._acc, self._flags
        self._previous = sample
        self._prev_readings = {(r.kind, r.key): r for r in sample.readings}
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
        for reading in sample.readings:
            entity = (reading.kind, reading.key)
            row = self._row(reading, prev_readings.get(entity), acc.get(entity))
            if row is not None:
                rows.append(row)
                flags |= row.flags & Flag.RESET
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

    def _row(
        self, current: Reading, previous: Reading | None, acc: _GaugeAcc | None
    ) -> EntityRow | None:
        counters = self._counters.get(current.kind)
        if counters is None:
            return None  # a kind this builder was not told about
        values: dict[str, Value] = {}
        flags = 0
        if previous is None:
            flags |= Flag.NEW
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
                    self._out_of_range(current, name, now)
                    kept[name] = before
                    continue
                delta = now - before
            if delta > INT64_MAX:
                self._out_of_range(current, name, now)
                kept[name] = before
            elif name in loose:
                drifted.append(name)
            elif 0 <= now <= INT64_MAX:
                values[name] = now  # the value after the reset
                flags |= Flag.RESET
            else:
                self._out_of_range(current, name, now)
                kept[name] = before
        for name in drifted:  # back a little, as documented: a reset only with the others
            values[name] = current.values[name] if flags & Flag.RESET else 0
        if kept:
            entity = (kind, current.key)
            self._prev_readings[entity] = Reading(
                kind, current.key, {**current.values, **kept}, current.attrs
            )
        return flags

    def _out_of_range(self, reading: Reading, name: str, value: Value) -> None:
        self._warnings(
            f"{reading.kind} {reading.key}: {name} read as {value}, out of range: left out",
            key=f"range:{reading.kind}:{reading.key}:{name}",
        )


def _duration_us(previous: Sample, current: Sample) -> int:
    if previous.mono_ns is not None and current.mono_ns is not None:
        return (current.mono_ns - previous.mono_ns) // 1000
    return current.time_us - previous.time_us
