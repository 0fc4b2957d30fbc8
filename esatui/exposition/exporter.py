"""The recorder's committed intervals as cumulative Prometheus series.

The recorder hands every interval it committed to :meth:`Exporter.interval` (an
``on_interval`` consumer: nothing of the recorder changes). A counter's series is the sum of
its interval deltas since the exporter started, so PromQL's ``increase()`` over a range is
the sum of the deltas esatui recorded in it, and ``rate()`` is what esatui's screens show;
a reset esatui saw is already a delta (never negative), so the series only grows. A gauge's
series is its average over the latest interval. An entity that leaves its source's interval
leaves the exposition. Each interval's update builds a new immutable snapshot and swaps the
reference: a scrape reads whichever snapshot is current and never takes a lock the recorder
waits on.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from esatui.db.records import EntityRow, Interval
from esatui.exposition.catalog import (
    ENTITY_LABELS,
    SCALE_ATTR,
    TARGET_LABELS,
    Factor,
    Family,
    Member,
    MetricType,
    families,
)

# config keys (any source's) that give the target labels lpar and zvm_system
LPAR_KEY = "lpar_name"
SYSTEM_KEY = "system_name"

Labels = tuple[str, ...]
SeriesKey = tuple[int, Labels]  # (family index, its label values)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a scrape shows: the target labels and each family's series."""

    target: Labels
    series: Mapping[int, tuple[tuple[Labels, float], ...]]


_EMPTY = Snapshot(("", "", ""), {})


class _Route:
    """Where one field of a kind goes: its family's index and member."""

    __slots__ = ("family", "member")

    def __init__(self, family: int, member: Member) -> None:
        self.family = family
        self.member = member


class Exporter:
    """Cumulative series from committed intervals; :meth:`collect` is a Prometheus custom
    collector over the current snapshot."""

    def __init__(self) -> None:
        self.families: tuple[Family, ...] = families()
        self._routes: dict[str, list[_Route]] = {}
        for index, family in enumerate(self.families):
            for member in family.members:
                self._routes.setdefault(family.kind, []).append(_Route(index, member))
        # per source: its series, each (value in the field's own unit, factor to the base
        # unit); counters' deltas are summed as integers where they are, so totals are exact
        self._state: dict[str, dict[SeriesKey, tuple[float, Factor]]] = {}
        self._config: dict[str, str] = {}
        self._node = ""
        self._lock = threading.Lock()  # writers only (several sources' threads)
        self._snapshot = _EMPTY

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def interval(self, interval: Interval) -> None:
        """Add one committed interval (the recorder's ``on_interval``)."""
        with self._lock:
            self._node = interval.node
            if interval.config:
                self._config.update(interval.config)
            previous = self._state.get(interval.source, {})
            current: dict[SeriesKey, tuple[float, Factor]] = {}
            for row in interval.rows:
                self._add_row(row, interval.source, previous, current)
            self._state[interval.source] = current
            self._snapshot = self._publish()

    def _add_row(
        self,
        row: EntityRow,
        source: str,
        previous: Mapping[SeriesKey, tuple[float, Factor]],
        current: dict[SeriesKey, tuple[float, Factor]],
    ) -> None:
        routes = self._routes.get(row.kind)
        if not routes:
            return
        entity = _entity_labels(row, source)
        values = row.values
        for route in routes:
            member = route.member
            factor = member.factor
            if factor is None:
                factor = _scale(row)
                if factor is None:
                    continue  # the block's time unit is not known: no seconds to give
            family = self.families[route.family]
            labels = entity if member.value is None else (*entity, member.value)
            key = (route.family, labels)
            value = values.get(member.field.name)
            if family.type is MetricType.COUNTER:
                total = previous.get(key)
                if value is None:
                    if total is not None:
                        current[key] = total  # not measured this interval: unchanged
                    continue
                current[key] = ((0 if total is None else total[0]) + value, factor)
            elif value is not None:
                current[key] = (value, factor)

    def _publish(self) -> Snapshot:
        series: dict[int, list[tuple[Labels, float]]] = {}
        for state in self._state.values():
            for (family, labels), (raw, (times, per)) in state.items():
                series.setdefault(family, []).append((labels, raw * times / per))
        target = (
            self._node,
            self._config.get(LPAR_KEY, ""),
            self._config.get(SYSTEM_KEY, ""),
        )
        return Snapshot(target, {f: tuple(s) for f, s in series.items()})

    def collect(self) -> Iterator[Metric]:
        """The current snapshot as metric families (prometheus_client's Collector)."""
        snapshot = self._snapshot  # one read: the recorder swaps whole snapshots
        for index, family in enumerate(self.families):
            rows = snapshot.series.get(index)
            if not rows:
                continue
            labels = [*TARGET_LABELS, *family.labels]
            metric: CounterMetricFamily | GaugeMetricFamily
            if family.type is MetricType.COUNTER:
                metric = CounterMetricFamily(
                    family.name, family.help, labels=labels, unit=family.unit
                )
            else:
                metric = GaugeMetricFamily(
                    family.name, family.help, labels=labels, unit=family.unit
                )
            for values, value in rows:
                metric.add_metric([*snapshot.target, *values], value)
            yield metric

    def describe(self) -> Iterator[Metric]:
        return iter(())  # no description: the registry does not collect at registration


def _entity_labels(row: EntityRow, source: str) -> Labels:
    spec = ENTITY_LABELS[row.kind]
    attrs = row.attrs
    out: list[str] = []
    if spec.key is not None:
        out.append(row.key)
    out.extend(attrs.get(attr, "") for _, attr in spec.attrs)
    if spec.by_source:
        out.append(source)
    return tuple(out)


def _scale(row: EntityRow) -> Factor | None:
    text = row.attrs.get(SCALE_ATTR)
    try:
        return (float(text), 1.0) if text else None
    except ValueError:
        return None
