"""The recorder's committed intervals as cumulative Prometheus series.

The recorder hands every interval it committed to :meth:`Exporter.interval` (an
``on_interval`` consumer: nothing of the recorder changes). A counter's series is the sum of
its interval deltas since the exporter started, so PromQL's ``increase()`` over a range is
the sum of the deltas esatui recorded in it, and ``rate()`` is what esatui's screens show;
a reset esatui saw is already a delta (never negative), so the series only grows. A gauge's
series is its average over the latest interval. An entity that leaves its source's interval
leaves the exposition (back, its counters go on from its totals). The recorder's part is
one append of the (immutable) interval to a queue: the intervals are added to the series by
whoever shows them next (a scrape, the textfile, or the exposition's own thread after each
pass), under a lock the recorder never takes, so a scrape never blocks the recorder and the
recorder never waits for a scrape.

An entity keeps its running totals and its labels from interval to interval: adding an
interval touches each of its values once, and labels are made again only when the entity's
attributes change. A changed state (a card going offline) moves its info series alone; its
counters go on in the same series. A changed identity label starts new series.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from esatui.db.records import EntityRow, Interval, Value, max_column
from esatui.exposition.catalog import (
    ENTITY_LABELS,
    SCALE_ATTR,
    TARGET_LABELS,
    Factor,
    Family,
    MetricType,
    families,
)
from esatui.exposition.derived import DERIVED

# config keys (any source's) that give the target labels lpar and zvm_system, the first
# one known: the host's /proc/sysinfo, the monitor's and SMAPI's, hypfs' (as ESACPUU reads)
LPAR_KEYS = ("lpar.name", "lpar_name", "hypfs.lpar")
SYSTEM_KEYS = ("system_name",)

INTERVAL_METRIC = "esatui_recorder_interval_seconds"
MEASURED_METRIC = "esatui_source_measured_seconds"  # a counter: _total exposed
CONFIG_METRIC = "esatui_config_info"
LAST_END_METRIC = "esatui_source_last_interval_end_timestamp_seconds"
PASS_SOURCE = "esatui"  # the recorder's own interval: written last in every pass
STALE_AFTER = 2  # of a source's intervals (at least of the recorder's) without one: stale

Labels = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Head:
    """What a metric family shows besides its samples."""

    name: str
    help: str
    type: MetricType
    unit: str
    labels: Labels

    def metric(self) -> CounterMetricFamily | GaugeMetricFamily:
        if self.type is MetricType.COUNTER:
            return CounterMetricFamily(self.name, self.help, labels=self.labels, unit=self.unit)
        return GaugeMetricFamily(self.name, self.help, labels=self.labels, unit=self.unit)


@dataclass(slots=True)
class Samples:
    """One family's series at one moment: their label values and values, in step."""

    head: Head
    labels: list[Labels] = field(default_factory=list)
    values: list[float] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Every series with a value, family by family; ``generation`` moves with every interval
    added, so a shown exposition can be kept until it does."""

    generation: int
    families: tuple[Samples, ...]

    def metrics(self) -> Iterator[Metric]:
        for samples in self.families:
            metric = samples.head.metric()
            for labels, value in zip(samples.labels, samples.values, strict=True):
                metric.add_metric(labels, value)
            yield metric


_INTERVAL_HEAD = Head(
    INTERVAL_METRIC,
    "the recorder's interval: each counter moves once per interval",
    MetricType.GAUGE,
    "seconds",
    TARGET_LABELS,
)
_MEASURED_HEAD = Head(
    MEASURED_METRIC,
    "the durations of the source's intervals, as measured (monotonic clock), summed",
    MetricType.COUNTER,
    "seconds",
    (*TARGET_LABELS, "source"),
)
_LAST_END_HEAD = Head(
    LAST_END_METRIC,
    "the end of the source's newest recorded interval (Unix time): how fresh its series are",
    MetricType.GAUGE,
    "seconds",
    (*TARGET_LABELS, "source"),
)
_CONFIG_HEAD = Head(
    CONFIG_METRIC,
    "the system facts each source reported last (machine, LPAR, z/VM level ...): 1",
    MetricType.GAUGE,
    "",
    (*TARGET_LABELS, "source", "key", "value"),
)


RECORDER_HEADS = (_INTERVAL_HEAD, _MEASURED_HEAD, _LAST_END_HEAD, _CONFIG_HEAD)
"""The families of what the recorder knows of itself, beside the kinds'."""


@dataclass(frozen=True, slots=True)
class _Last:
    """A source's newest interval: its end and length, and the end of the recorder's pass
    before it was handed over (None: before the first pass)."""

    end_us: int
    length_us: int
    pass_end_us: int | None


@dataclass(frozen=True, slots=True)
class _Route:
    """Where one value of an entity goes: its family, the group's label value, the field
    (None: an info family, 1 while the entity is there, labelled with its state too) and the
    factor to the base unit (None: the entity's own scale)."""

    family: int
    value: str | None
    field: str | None
    factor: Factor | None


@dataclass(frozen=True, slots=True)
class _KindRoutes:
    routes: tuple[_Route, ...]
    counters: tuple[str, ...]  # fields summed
    gauges: tuple[str, ...]  # fields replaced (averages and maxima)


def _kind_routes(fams: tuple[Family, ...]) -> dict[str, _KindRoutes]:
    routes: dict[str, list[_Route]] = {}
    counters: dict[str, list[str]] = {}
    gauges: dict[str, list[str]] = {}
    for index, family in enumerate(fams):
        kind = family.kind
        routes.setdefault(kind, [])
        if not family.members:
            routes[kind].append(_Route(index, None, None, (1.0, 1.0)))
            continue
        for member in family.members:
            name = max_column(member.field.name) if family.maximum else member.field.name
            routes[kind].append(_Route(index, member.value, name, member.factor))
            counted = family.type is MetricType.COUNTER
            (counters if counted else gauges).setdefault(kind, []).append(name)
    return {
        kind: _KindRoutes(tuple(r), tuple(counters.get(kind, ())), tuple(gauges.get(kind, ())))
        for kind, r in routes.items()
    }


_Series = tuple[int, Labels, str | None, float, float]  # family, labels, field, x, /


class _Entity:
    """One entity of one source: its labels and its series' values in the field's unit
    (counters' deltas are summed as integers where they are, so totals are exact)."""

    __slots__ = ("_series", "attrs", "labels", "scale", "state", "totals")

    def __init__(self, row: EntityRow, source: str) -> None:
        self.attrs: Mapping[str, str] = row.attrs
        self.labels = _entity_labels(row, source)
        self.state = _state_labels(row)
        self.scale = _scale(row)
        self.totals: dict[str, Value] = {}
        self._series: tuple[Labels, list[_Series]] | None = None

    def series(self, target: Labels, routes: _KindRoutes) -> list[_Series]:
        """Its series, made again only when the target labels or its attributes change."""
        if self._series is None or self._series[0] != target:
            made: list[_Series] = []
            labels = (*target, *self.labels)
            for route in routes.routes:
                factor = route.factor if route.factor is not None else self.scale
                if factor is None:
                    continue  # the block's time unit is not known: no seconds to give
                if route.field is None:
                    full = (*labels, *self.state)
                else:
                    full = labels if route.value is None else (*labels, route.value)
                made.append((route.family, full, route.field, factor[0], factor[1]))
            self._series = (target, made)
        return self._series[1]

    def restate(self, row: EntityRow) -> None:
        """New attributes that keep the identity labels (``scale`` is one: a new scale is a
        new series): a new state for the info series, the totals kept."""
        self.attrs = row.attrs
        self.state = _state_labels(row)
        self._series = None

    def add(self, values: Mapping[str, Value], routes: _KindRoutes) -> None:
        totals = self.totals
        get = values.get
        for name in routes.counters:
            value = get(name)
            if value is not None:  # not measured this interval: unchanged
                totals[name] = (totals.get(name) or 0) + value
        for name in routes.gauges:
            totals[name] = get(name)


class Exporter:
    """Cumulative series from committed intervals; :meth:`collect` is a Prometheus custom
    collector, :meth:`snapshot` the series for a cached exposition.

    The recorder's threads only append the (immutable) interval to a queue; whoever shows
    the series next (a scrape, the textfile, or :meth:`drain` after each pass) adds the
    queued intervals under its own lock, which the recorder never takes.
    """

    def __init__(self, interval_s: float | None = None) -> None:
        self.interval_s = interval_s  # the recorder's, shown as INTERVAL_METRIC
        self.families: tuple[Family, ...] = families()
        self._heads = tuple(
            Head(f.name, f.help, f.type, f.unit, (*TARGET_LABELS, *f.labels)) for f in self.families
        )
        self._routes = _kind_routes(self.families)
        self._pending: deque[Interval] = deque()
        self._entities: dict[str, dict[tuple[str, str], _Entity]] = {}  # per source
        # entities that left their source's interval, kept for their totals: one that comes
        # back goes on from them, so a range over its leaving and return is its deltas
        self._gone: dict[str, dict[tuple[str, str], _Entity]] = {}  # per source
        self._config: dict[str, str] = {}  # every source's facts, the latest of each key
        self._configs: dict[str, dict[str, str]] = {}  # each source's latest facts
        self._measured: dict[str, int] = {}  # each source's intervals' durations, summed (µs)
        self._last: dict[str, _Last] = {}  # each source's newest interval
        self._pass_end_us: int | None = None  # the recorder's newest pass, as it ended
        self._node = ""
        self._generation = 0
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
            self._generation += 1
            self._node = interval.node
            source = interval.source
            if interval.config:
                self._config.update(interval.config)
                self._configs[source] = dict(interval.config)
            self._measured[source] = self._measured.get(source, 0) + interval.duration_us
            self._last[source] = _Last(
                interval.end_us, interval.end_us - interval.start_us, self._pass_end_us
            )
            if source == PASS_SOURCE:
                self._pass_end_us = interval.end_us
            previous = self._entities.get(source, {})
            gone = self._gone.setdefault(source, {})
            known = {**gone, **previous} if gone else previous  # usually none are gone
            current = self._add_rows(interval.rows, source, known, interval.duration_us)
            for key in current.keys() & gone.keys():
                del gone[key]
            for key in previous.keys() - current.keys():
                gone[key] = previous[key]
            self._entities[source] = current

    def _add_rows(
        self,
        rows: tuple[EntityRow, ...],
        source: str,
        previous: dict[tuple[str, str], _Entity],
        duration_us: int,
    ) -> dict[tuple[str, str], _Entity]:
        current: dict[tuple[str, str], _Entity] = {}
        kinds = self._routes
        for row in rows:
            routes = kinds.get(row.kind)
            if routes is None:
                continue
            key = (row.kind, row.key)
            entity = previous.get(key)
            if entity is None:
                entity = _Entity(row, source)
            elif row.attrs is not entity.attrs and row.attrs != entity.attrs:
                if _entity_labels(row, source) == entity.labels:
                    entity.restate(row)
                else:
                    entity = _Entity(row, source)  # a new series: its own total from here
            derived = DERIVED.get(row.kind)
            if derived:
                values = dict(row.values)
                for d in derived:
                    values[d.field.name] = d.compute(row.values, duration_us)
                entity.add(values, routes)
            else:
                entity.add(row.values, routes)
            current[key] = entity
        return current

    def generation(self) -> int:
        """The queued intervals added: how many intervals the series hold."""
        with self._lock:
            self._drain()
            return self._generation

    def series_count(self) -> int:
        return sum(len(s.values) for s in self.snapshot().families)

    def snapshot(self) -> Snapshot:
        """The queued intervals added, every series with a value."""
        with self._lock:
            self._drain()
            target = (self._node, self._fact(LPAR_KEYS), self._fact(SYSTEM_KEYS))
            out: list[Samples] = []
            if self.interval_s is not None and self._node:
                out.append(Samples(_INTERVAL_HEAD, [target], [float(self.interval_s)]))
            if self._last:
                ends = Samples(_LAST_END_HEAD)
                for source, last in self._last.items():
                    ends.labels.append((*target, source))
                    ends.values.append(last.end_us / 1e6)
                out.append(ends)
            stale = self._stale()
            measured = Samples(_MEASURED_HEAD)
            for source, total_us in self._measured.items():
                if source not in stale:
                    measured.labels.append((*target, source))
                    measured.values.append(total_us / 1e6)
            facts = Samples(_CONFIG_HEAD)
            for source, config in self._configs.items():
                if source not in stale:
                    for key, value in sorted(config.items()):
                        facts.labels.append((*target, source, key, value))
                        facts.values.append(1.0)
            out.extend(s for s in (measured, facts) if s.values)
            out.extend(self._series(target, stale))
            return Snapshot(self._generation, tuple(out))

    def _fact(self, keys: tuple[str, ...]) -> str:
        return next((v for k in keys if (v := self._config.get(k, "").strip())), "")

    def _stale(self) -> frozenset[str]:
        """The sources whose newest interval is :data:`STALE_AFTER` of their own intervals
        (at least of the recorder's) older than the recorder's newest pass: measured on the
        recorder's clock, from the pass before the interval was handed over (an import's
        intervals carry the times of its file)."""
        now = self._pass_end_us
        recorder = self._last.get(PASS_SOURCE)
        if now is None or recorder is None:
            return frozenset()
        return frozenset(
            source
            for source, last in self._last.items()
            if last.pass_end_us is not None
            and now - last.pass_end_us > STALE_AFTER * max(last.length_us, recorder.length_us)
        )

    def _series(self, target: Labels, stale: frozenset[str]) -> list[Samples]:
        by_family = [Samples(head) for head in self._heads]
        kinds = self._routes
        for source, entities in self._entities.items():
            if source in stale:
                continue  # a hung source's values are not served as if fresh
            for (kind, _), entity in entities.items():
                totals = entity.totals
                for family, labels, name, times, per in entity.series(target, kinds[kind]):
                    value = 1 if name is None else totals.get(name)
                    if value is not None:
                        samples = by_family[family]
                        samples.labels.append(labels)
                        samples.values.append(value * times / per)
        return [samples for samples in by_family if samples.values]

    def collect(self) -> Iterator[Metric]:
        """The series as metric families (prometheus_client's Collector)."""
        yield from self.snapshot().metrics()

    def describe(self) -> Iterator[Metric]:
        """Every family the exposition may show, without samples: the names the registry
        keeps (without a collect at registration), which a scrape's ``name[]`` filter
        (the library's ``restricted_registry``) looks its collectors up by."""
        for head in (*RECORDER_HEADS, *self._heads):
            yield head.metric()


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


def _state_labels(row: EntityRow) -> Labels:
    return tuple(row.attrs.get(attr, "") for _, attr in ENTITY_LABELS[row.kind].state)


def _scale(row: EntityRow) -> Factor | None:
    text = row.attrs.get(SCALE_ATTR)
    try:
        return (float(text), 1.0) if text else None
    except ValueError:
        return None
