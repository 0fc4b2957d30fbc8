"""The recorder's committed intervals as cumulative Prometheus series.

The recorder hands every interval it committed to :meth:`Exporter.interval` (an
``on_interval`` consumer: nothing of the recorder changes). A counter's series is the sum of
its interval deltas since the exporter started, so PromQL's ``increase()`` over a range is
the sum of the deltas esatui recorded in it, and ``rate()`` is what esatui's screens show;
a reset esatui saw is already a delta (never negative), so the series only grows. A gauge's
series is its average over the latest interval. An entity that leaves its source's interval
leaves the exposition. The recorder's part is one append of the (immutable) interval to a
queue: the intervals are added to the series by whoever shows them next (a scrape, the
textfile, or the exposition's own thread after each pass), under a lock the recorder never
takes, so a scrape never blocks the recorder and the recorder never waits for a scrape.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from esatui.db.records import EntityRow, Interval, max_column
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

INTERVAL_METRIC = "esatui_recorder_interval_seconds"
MEASURED_METRIC = "esatui_source_measured_seconds"  # a counter: _total exposed
CONFIG_METRIC = "esatui_config_info"

Labels = tuple[str, ...]
SeriesKey = tuple[int, Labels]  # (family index, its label values)


class _Route:
    """Where one field of a kind goes: its family, field, label value and factor."""

    __slots__ = ("counter", "factor", "family", "field", "value")

    def __init__(self, family: Family, index: int, member: Member | None) -> None:
        self.family = index
        self.counter = family.type is MetricType.COUNTER
        field = None if member is None else member.field.name  # None: an info family
        self.field = max_column(field) if field is not None and family.maximum else field
        self.value = None if member is None else member.value
        self.factor = (1.0, 1.0) if member is None else member.factor


Series = dict[SeriesKey, tuple[float, Factor]]


class Exporter:
    """Cumulative series from committed intervals; :meth:`collect` is a Prometheus custom
    collector.

    The recorder's threads only append the (immutable) interval to a queue; whoever shows
    the series next (a scrape, the textfile, or :meth:`drain` after each pass) adds the
    queued intervals under its own lock, which the recorder never takes.
    """

    def __init__(self, interval_s: float | None = None) -> None:
        self.interval_s = interval_s  # the recorder's, shown as INTERVAL_METRIC
        self.families: tuple[Family, ...] = families()
        routes: dict[str, list[_Route]] = {}
        for index, family in enumerate(self.families):
            for member in family.members or (None,):
                routes.setdefault(family.kind, []).append(_Route(family, index, member))
        self._routes = {kind: tuple(r) for kind, r in routes.items()}
        self._pending: deque[Interval] = deque()
        # per source: its series, each (value in the field's own unit, factor to the base
        # unit); counters' deltas are summed as integers where they are, so totals are exact
        self._state: dict[str, Series] = {}
        self._config: dict[str, str] = {}  # every source's facts, the latest of each key
        self._configs: dict[str, dict[str, str]] = {}  # each source's latest facts
        self._measured: dict[str, int] = {}  # each source's intervals' durations, summed (µs)
        self._node = ""
        self._lock = (
            threading.Lock()
        )  # the readers' (scrape, textfile, drain): never the recorder's

    def interval(self, interval: Interval) -> None:
        """Queue one committed interval (the recorder's ``on_interval``): O(1), no lock."""
        self._pending.append(interval)

    def drain(self) -> None:
        """Add the queued intervals to the series."""
        with self._lock:
            self._drain()

    def _drain(self) -> None:
        pending = self._pending
        while pending:
            interval = pending.popleft()
            self._node = interval.node
            if interval.config:
                self._config.update(interval.config)
                self._configs[interval.source] = dict(interval.config)
            self._measured[interval.source] = (
                self._measured.get(interval.source, 0) + interval.duration_us
            )
            previous = self._state.get(interval.source, {})
            current: Series = {}
            for row in interval.rows:
                self._add_row(row, interval.source, previous, current)
            self._state[interval.source] = current

    def series_count(self) -> int:
        with self._lock:
            self._drain()
            return sum(len(s) for s in self._state.values())

    def _add_row(self, row: EntityRow, source: str, previous: Series, current: Series) -> None:
        routes = self._routes.get(row.kind)
        if not routes:
            return
        entity = _entity_labels(row, source)
        values = row.values
        get_previous = previous.get
        for route in routes:
            factor = route.factor
            if factor is None:
                factor = _scale(row)
                if factor is None:
                    continue  # the block's time unit is not known: no seconds to give
            label = route.value
            key = (route.family, entity if label is None else (*entity, label))
            if route.field is None:
                current[key] = (1, factor)  # an info series: the entity is there
                continue
            value = values.get(route.field)
            if route.counter:
                total = get_previous(key)
                if value is None:
                    if total is not None:
                        current[key] = total  # not measured this interval: unchanged
                    continue
                current[key] = ((0 if total is None else total[0]) + value, factor)
            elif value is not None:
                current[key] = (value, factor)

    def collect(self) -> Iterator[Metric]:
        """The series as metric families (prometheus_client's Collector)."""
        with self._lock:
            self._drain()
            target = (
                self._node,
                self._config.get(LPAR_KEY, ""),
                self._config.get(SYSTEM_KEY, ""),
            )
            configs = [(s, dict(c)) for s, c in self._configs.items()]
            measured = list(self._measured.items())
            by_family: dict[int, list[tuple[Labels, float]]] = {}
            for state in self._state.values():
                for (index, labels), (raw, (times, per)) in state.items():
                    by_family.setdefault(index, []).append((labels, raw * times / per))
        if self.interval_s is not None and self._node:
            interval = GaugeMetricFamily(
                INTERVAL_METRIC,
                "the recorder's interval: each counter moves once per interval",
                labels=TARGET_LABELS,
                unit="seconds",
            )
            interval.add_metric(target, self.interval_s)
            yield interval
        yield from _own_families(target, configs, measured)
        for index, family in enumerate(self.families):
            rows = by_family.get(index)
            if not rows:
                continue
            names = [*TARGET_LABELS, *family.labels]
            metric: CounterMetricFamily | GaugeMetricFamily
            if family.type is MetricType.COUNTER:
                metric = CounterMetricFamily(
                    family.name, family.help, labels=names, unit=family.unit
                )
            else:
                metric = GaugeMetricFamily(family.name, family.help, labels=names, unit=family.unit)
            for values, value in rows:
                metric.add_metric([*target, *values], value)
            yield metric

    def describe(self) -> Iterator[Metric]:
        return iter(())  # no description: the registry does not collect at registration


def _own_families(
    target: Labels, configs: list[tuple[str, dict[str, str]]], measured: list[tuple[str, int]]
) -> Iterator[Metric]:
    """What the recorder knows besides the kinds: each source's system facts and the
    measured length of its intervals (the base of every rate a screen shows)."""
    labels = [*TARGET_LABELS, "source"]
    if measured:
        lengths = CounterMetricFamily(
            MEASURED_METRIC,
            "the durations of the source's intervals, as measured (monotonic clock), summed",
            labels=labels,
            unit="seconds",
        )
        for source, total_us in measured:
            lengths.add_metric([*target, source], total_us / 1e6)
        yield lengths
    if configs:
        facts = GaugeMetricFamily(
            CONFIG_METRIC,
            "the system facts each source reported last (machine, LPAR, z/VM level ...): 1",
            labels=[*labels, "key", "value"],
        )
        for source, config in configs:
            for key, value in sorted(config.items()):
                facts.add_metric([*target, source, key, value], 1.0)
        yield facts


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
