"""Before a live recording's first interval: what its first samples already say.

A rate needs two samples, so the first interval's rows come only at its end (between half
an interval and one and a half after the start). Until then the monitor shows each screen
built from the sources' first samples: the configuration (machine, LPAR, z/VM level), the
entities (CPUs, cards, queues) and the gauges a sample carries, with ``.`` for every rate,
as one row marked partial (``~``), and counts down to the first interval.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from esatui.collectors.base import PolledSource, StreamSource
from esatui.collectors.model import Availability, Kind, Role, Sample
from esatui.db.records import Value, max_column
from esatui.db.slots import EntityData, KindSlice, Slot


@dataclass(frozen=True)
class FirstSample:
    """A source's first full sample, with the kinds that say which fields are gauges."""

    sample: Sample
    kinds: tuple[Kind, ...]


class SampleChannel:
    """Where first samples go: pointed at the monitor once it runs (like ``WarnChannel``);
    samples taken before that are kept and handed over then."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._target: Callable[[FirstSample], None] | None = None
        self._kept: list[FirstSample] = []

    def __call__(self, first: FirstSample) -> None:
        with self._lock:
            target = self._target
            if target is None:
                self._kept.append(first)
                return
        target(first)

    def connect(self, target: Callable[[FirstSample], None]) -> None:
        with self._lock:
            self._target, kept, self._kept = target, self._kept, []
        for first in kept:
            target(first)


class FirstSampleTap:
    """A polled source that hands its first full sample to a :class:`SampleChannel` and is
    otherwise the source itself (the recorder sees no difference)."""

    def __init__(self, source: PolledSource, channel: SampleChannel) -> None:
        self._source = source
        self._channel: SampleChannel | None = channel
        self.name = source.name
        self.kinds = source.kinds

    def probe(self) -> Availability:
        return self._source.probe()

    def sample(self) -> Sample:
        sample = self._source.sample()
        channel, self._channel = self._channel, None
        if channel is not None:
            channel(FirstSample(sample, self.kinds))
        return sample

    def sample_gauges(self) -> Sample | None:
        return self._source.sample_gauges()

    def close(self) -> None:
        self._source.close()

    def __getattr__(self, name: str) -> object:
        return getattr(self._source, name)  # what a source offers beyond the protocol


def tapped(
    sources: Sequence[PolledSource | StreamSource], channel: SampleChannel
) -> list[PolledSource | StreamSource]:
    """The sources, each polled one tapped for its first sample (streams as they are)."""
    return [FirstSampleTap(s, channel) if isinstance(s, PolledSource) else s for s in sources]


def first_slot(firsts: Sequence[FirstSample]) -> tuple[Slot, dict[str, str]]:
    """One slot at the newest first sample's time holding every first sample's entities:
    gauges as sampled (average and maximum alike), counters unknown (no delta yet); and
    the configuration the samples carry."""
    data: dict[str, dict[str, KindSlice]] = {}
    config: dict[str, str] = {}
    at = max((f.sample.time_us for f in firsts), default=0)
    for first in firsts:
        sample = first.sample
        config.update(sample.config or {})
        roles = {k.name: {f.name: f.role for f in k.fields} for k in first.kinds}
        rows: dict[str, dict[str, EntityData]] = {}
        for reading in sample.readings:
            fields = roles.get(reading.kind, {})
            values: dict[str, Value] = {}
            for name, role in fields.items():
                value = reading.values.get(name) if role is Role.GAUGE else None
                values[name] = value
                if role is Role.GAUGE:
                    values[max_column(name)] = value
            entity = EntityData(reading.key, dict(reading.attrs), values, 0, 1)
            rows.setdefault(reading.kind, {})[reading.key] = entity
        for kind, entities in rows.items():
            data.setdefault(kind, {})[sample.source] = KindSlice(sample.source, 0, 0, entities)
    return Slot(at, at, 0, 0, data, partial=True), config


def node_of(config: Mapping[str, str]) -> str:
    return config.get("node", "")
