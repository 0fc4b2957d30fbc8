"""Samples to interval records: the one place where counters become deltas.

Between two full samples the builder takes the difference of every counter over the exact
measured duration. A counter that went backwards was reset (device re-created, card reset,
counter wrapped): the value after the reset is the delta and the row is flagged, so a rate is
never negative. Entities that appear have no delta yet (their gauges still count); entities
that vanish simply end. Gauges from every sample of the interval, the high-frequency ones
included, are averaged and maxed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from esatui.collectors.model import Kind, Reading, Role, Sample
from esatui.db.records import EntityRow, Flag, Interval, Value, max_column

EntityId = tuple[str, str]


@dataclass(slots=True)
class _GaugeAcc:
    n: int = 0
    sums: dict[str, float] = field(default_factory=dict)
    maxima: dict[str, float] = field(default_factory=dict)

    def add(self, values: Mapping[str, Value], names: Iterable[str]) -> None:
        counted = False
        for name in names:
            v = values.get(name)
            if v is None:
                continue
            counted = True
            self.sums[name] = self.sums.get(name, 0.0) + v
            self.maxima[name] = max(self.maxima.get(name, v), v)
        self.n += counted


class IntervalBuilder:
    """Turns one source's samples into intervals."""

    def __init__(self, source: str, kinds: Iterable[Kind], node: str = "") -> None:
        self.source = source
        self.node = node
        self._counters: dict[str, tuple[str, ...]] = {}
        self._gauges: dict[str, tuple[str, ...]] = {}
        for kind in kinds:
            self._counters[kind.name] = tuple(f.name for f in kind.fields if f.role is Role.COUNTER)
            self._gauges[kind.name] = tuple(f.name for f in kind.fields if f.role is Role.GAUGE)
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
                self._acc.setdefault(entity, _GaugeAcc()).add(reading.values, names)

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
        if duration <= 0:
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
            for name in counters:
                now, before = current.values.get(name), previous.values.get(name)
                if now is None or before is None:
                    continue
                if now < before:
                    values[name] = now
                    flags |= Flag.RESET
                else:
                    values[name] = now - before
        hf_n = 0
        if acc is not None and acc.n:
            hf_n = acc.n
            for name, total in acc.sums.items():
                values[name] = total / acc.n
                values[max_column(name)] = acc.maxima[name]
        if previous is None and not hf_n:
            return None  # nothing measured yet for a newcomer without gauges
        return EntityRow(current.kind, current.key, dict(current.attrs), values, flags, hf_n)


def _duration_us(previous: Sample, current: Sample) -> int:
    if previous.mono_ns is not None and current.mono_ns is not None:
        return (current.mono_ns - previous.mono_ns) // 1000
    return current.time_us - previous.time_us
