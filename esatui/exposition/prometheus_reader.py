"""The Prometheus backend of the reading interface: esatui's screens over any node that a
Prometheus server holds (``esatui live|replay|export --prometheus URL``).

Every node exposes its recorder's interval (``esatui_recorder_interval_seconds``, I). The
timeline is the grid of that node's interval ends (aligned to local time, as the recorder
aligns them), or of buckets of a chosen length L. A counter's value for the span ending at
t is read as the difference of the series at t + D and at t - L + D, where D is just under
one interval (I less a tenth of it, at most 1 s): the series moves once per interval,
milliseconds after the interval ends, so a scrape between that moment and t + D has the
total through t, and nothing of the next interval. With a scrape at least that often (every
half interval: contrib/prometheus.yml) a span's counters are exactly the deltas the node
recorded, as its SQLite export shows them; a decrease (the recorder restarted) counts as
the value after it, as the interval builder counts a reset. Gauges are the series at
t + D (one interval) or their average and maximum over the scrapes of the bucket's own
intervals (a bucket: not the first scrapes after its start, which still show the previous
bucket's last interval).
An entity's attributes are its series' labels, its state those of its info family's
series at t + D (a bucket: at its end, as the database takes its newest row's).
These are range queries at the span's length, one per metric family a screen reads;
buckets are read in runs of one length, so a bucket on the local calendar that holds a
daylight-saving change (a day of 23 or 25 hours, see ``db/calendar.py``) is a range query of
its own whose step is its real length.
"""

from __future__ import annotations

import itertools
import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from esatui.db.calendar import bucket_end, bucket_start, near_change, shifted
from esatui.db.reader import EntityRows, KindEntityRows, Span, Timeline, Window, as_one_span
from esatui.db.records import Value, max_column
from esatui.db.slots import EntityData, KindSlice, Slot
from esatui.exposition.catalog import (
    ENTITY_LABELS,
    KEY_FORMAT,
    SOURCE_OF,
    Family,
    MetricType,
    families,
)
from esatui.exposition.exporter import CONFIG_METRIC, INTERVAL_METRIC, MEASURED_METRIC

MAX_POINTS = 10_000  # per range query (Prometheus refuses more than 11,000)
DEFAULT_RANGE_S = 86_400.0  # an unbounded range: the last day the node has data for
TIMEOUT_S = 30.0


class PrometheusError(OSError):
    """Prometheus could not be asked, or refused the question (one line)."""


@dataclass(frozen=True)
class _Plan:
    """How a window's spans are read: the grid and the scrape offset."""

    step: float  # span length (s)
    delay: float  # D (s): how long after a span's end its counters are read
    node: str
    interval: float  # the node's recorder interval (s)

    @property
    def bucket_range(self) -> str:
        """The range, read at a bucket's end + D, of the scrapes of the bucket's own
        intervals: those from half the lead (interval - D) after its first interval ended.
        Before that a scrape still shows the previous bucket's last interval."""
        lead = self.interval - self.delay
        return _duration(self.step - 1.5 * lead)


@dataclass(frozen=True)
class _Away:
    """Whether a series' gap between two values (s) is its entity away from its source's
    intervals (a CPU set offline, a guest logged off) rather than scrapes missed: its
    source measured every span of the gap and the one after it. The exporter keeps an
    away entity's totals and goes on from them, so the increase over the gap is the
    intervals' it had in those spans: in a window of intervals, the one it came back in;
    in one of buckets, also the intervals it had in a bucket at whose end it was away (its
    last value in that bucket tells them apart)."""

    plan: _Plan
    kind: str
    measured: Mapping[str, Mapping[float, int]]  # source -> span end -> duration (µs)
    bucketed: bool

    def __call__(self, labels: Mapping[str, str], t0: float, t1: float) -> bool:
        spans = self.measured.get(labels.get("source", SOURCE_OF.get(self.kind, "")), {})
        step, delay = self.plan.step, self.plan.delay
        n = round((t1 - t0) / step)
        return all(round(t0 - delay + k * step, 3) in spans for k in range(1, n + 1))


@dataclass(frozen=True)
class _Run:
    """Span ends first, first + step ... last (s) on one grid: one range query each."""

    plan: _Plan
    first: float
    last: float


# each series' (time, value) points, by its labels
_Lasts = dict[tuple[tuple[str, str], ...], list[tuple[float, float]]]
# one span's entities: kind -> source -> key -> (attrs, values)
_SpanRows = dict[str, dict[str, dict[str, tuple[dict[str, str], dict[str, Value]]]]]


def _quote(value: str) -> str:
    return json.dumps(value)  # a PromQL string literal is a JSON one


class PrometheusReader:
    """A Prometheus server, read as recorded esatui data."""

    def __init__(self, url: str, *, timeout_s: float = TIMEOUT_S) -> None:
        self.url = url.rstrip("/")
        self._timeout = timeout_s
        self._families = families()
        self._by_kind: dict[str, list[Family]] = {}
        for family in self._families:
            self._by_kind.setdefault(family.kind, []).append(family)
        self._intervals: dict[str, float] = {}
        self._nodes: list[str] | None = None

    # --- HTTP ---------------------------------------------------------------------------

    def _get(self, path: str, params: Mapping[str, str]) -> object:
        query = urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(f"{self.url}{path}?{query}", timeout=self._timeout) as r:
                answer = json.load(r)
        except urllib.error.HTTPError as exc:
            try:
                detail = json.load(exc).get("error", exc.reason)
            except ValueError:
                detail = exc.reason
            raise PrometheusError(f"Prometheus at {self.url}: {detail}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise PrometheusError(f"Prometheus at {self.url}: {reason}") from None
        if not isinstance(answer, dict) or answer.get("status") != "success":
            raise PrometheusError(f"Prometheus at {self.url}: unexpected answer")
        return answer["data"]

    def _instant(self, expr: str, at_s: float | None = None) -> list[dict[str, object]]:
        params = {"query": expr}
        if at_s is not None:
            params["time"] = f"{at_s:.3f}"
        data = self._get("/api/v1/query", params)
        assert isinstance(data, dict)
        result: list[dict[str, object]] = data["result"]
        return result

    def _range(
        self, expr: str, start_s: float, end_s: float, step_s: float
    ) -> Iterator[tuple[dict[str, str], list[tuple[float, float]]]]:
        """Each series of a range query with its (time, value) points, in chunks that
        Prometheus accepts."""
        merged: dict[
            tuple[tuple[str, str], ...], tuple[dict[str, str], list[tuple[float, float]]]
        ] = {}
        chunk = step_s * (MAX_POINTS - 1)
        begin = start_s
        while begin <= end_s + 1e-6:
            stop = min(end_s, begin + chunk)
            params = {
                "query": expr,
                "start": f"{begin:.3f}",
                "end": f"{stop:.3f}",
                "step": f"{step_s:.3f}",
            }
            data = self._get("/api/v1/query_range", params)
            assert isinstance(data, dict)
            for series in data["result"]:
                labels: dict[str, str] = series["metric"]
                points = merged.setdefault(_key(labels), (labels, []))[1]
                points.extend((float(t), float(v)) for t, v in series["values"])
            begin = stop + step_s
        yield from merged.values()

    # --- the Reader interface -----------------------------------------------------------

    def nodes(self) -> list[str]:
        if self._nodes is None:
            found = self._instant(f"max by (node) (last_over_time({INTERVAL_METRIC}[30d]))")
            self._nodes = sorted(str(_labels(r).get("node", "")) for r in found)
        return self._nodes

    def node(self, name: str | None) -> str | None:
        nodes = self.nodes()
        if name is not None:
            return name if name in nodes else None
        if len(nodes) <= 1:
            return nodes[0] if nodes else None
        newest = self._instant(f"max by (node) (timestamp(last_over_time({INTERVAL_METRIC}[30d])))")
        if not newest:
            return None
        latest = max(newest, key=lambda r: float(_value(r)))
        return str(_labels(latest).get("node", "")) or None

    def interval_s(self, node: str) -> float:
        """The node's recorder interval, as it exposes it."""
        if node not in self._intervals:
            found = self._instant(f"last_over_time({INTERVAL_METRIC}{{node={_quote(node)}}}[30d])")
            if not found:
                raise PrometheusError(f"Prometheus at {self.url}: no esatui node {node!r}")
            self._intervals[node] = float(_value(found[0]))
        return self._intervals[node]

    def _plan(self, timeline: Timeline) -> _Plan:
        assert timeline.node is not None
        interval = self.interval_s(timeline.node)
        step = interval if timeline.length_us is None else timeline.length_us / 1e6
        return _Plan(step, _delay(interval), timeline.node, interval)

    def _last_data_s(self, node: str) -> float | None:
        found = self._instant(
            f"max(timestamp(last_over_time(esatui_self_samples_total{{node={_quote(node)}}}[30d])))"
        )
        return float(_value(found[0])) if found else None

    def window(
        self,
        timeline: Timeline,
        after_us: int | None,
        until_us: int | None,
        *,
        limit: int | None = None,
        newest_first: bool = True,
        snap: bool = False,
    ) -> Window:
        empty = Window(timeline, "", (), after_us, until_us)
        if timeline.node is None or timeline.node not in self.nodes():
            return empty
        plan = self._plan(timeline)
        last = self._last_data_s(plan.node)
        if last is None:
            return empty
        grid = _Grid(plan.step, timeline.length_us)
        newest_end = grid.floor(last - plan.delay)
        until = newest_end if until_us is None else min(newest_end, grid.floor(until_us / 1e6))
        if after_us is not None:
            after = after_us / 1e6
        elif limit is not None and newest_first:
            after = grid.shifted(until, -limit)
        else:
            after = until - DEFAULT_RANGE_S
        first = grid.shifted(grid.floor(after), 1)
        if snap and after_us is not None and until_us is not None:
            if timeline.length_us is None:
                # one interval of another timeline: the spans that overlap it by half at least
                first = grid.shifted(grid.floor(after + plan.step / 2 - 1e-6), 1)
                until = max(first, grid.floor(until_us / 1e6 + plan.step / 2))
            else:
                # buckets: those the interval's end falls in, as the database's buckets
                first = grid.ceiling(after + 1e-6)
                until = min(newest_end, grid.ceiling(until_us / 1e6))
        if first > until:
            return empty
        runs = tuple(_Run(replace(plan, step=step), a, b) for step, a, b in grid.runs(first, until))
        found = self._timeline_source(timeline, runs)
        if found is None:
            return empty
        source, ends = found
        spans = [Span(_us(e - step), _us(e), _us(step), 0) for e, step in ends]
        if limit is not None:
            spans = spans[-limit:] if newest_first else spans[:limit]
        return Window(timeline, source, tuple(spans), after_us, until_us, backend=runs)

    def range_window(
        self, timeline: Timeline, after_us: int | None, until_us: int | None
    ) -> Window:
        return as_one_span(self.window(timeline, after_us, until_us))

    def _timeline_source(
        self, timeline: Timeline, runs: Sequence[_Run]
    ) -> tuple[str, list[tuple[float, float]]] | None:
        """The first timeline kind (and preferred source) with data: its source and the ends
        of the spans where it has some, each with its span's length (s). Any family of the
        kind will do: a source may fill none of the first's fields (SMAPI's processors)."""
        for kind in timeline.kinds:
            fams = self._by_kind.get(kind)
            if not fams:
                continue
            names = "|".join(family.exposed for family in fams)
            by_source = ENTITY_LABELS[kind].by_source
            ends_by_source: dict[str, list[tuple[float, float]]] = {}
            for run in runs:
                plan = run.plan
                selector = f"{{__name__=~{_quote(names)},node={_quote(plan.node)}}}"
                expr = f"count by (source) ({selector})"
                for labels, points in self._range(
                    expr, run.first + plan.delay, run.last + plan.delay, plan.step
                ):
                    source = labels.get("source", "") if by_source else SOURCE_OF[kind]
                    ends_by_source.setdefault(source, []).extend(
                        (round(t - plan.delay, 3), plan.step) for t, _ in points
                    )
            if not ends_by_source:
                continue
            order = sorted(
                ends_by_source,
                key=lambda s: (
                    timeline.prefer.index(s) if s in timeline.prefer else len(timeline.prefer),
                    s,
                ),
            )
            return order[0], sorted(ends_by_source[order[0]])
        return None

    def slots(self, window: Window, kinds: Sequence[str]) -> list[Slot]:
        if not window.spans or not isinstance(window.backend, tuple):
            return []
        ends = [s.end_us / 1e6 for s in window.spans]
        index = {round(e, 3): i for i, e in enumerate(ends)}
        # the runs of one step (a daylight-saving change's bucket is a run of its own) that
        # hold the window's spans, cut to them
        runs = [
            (r.plan, max(r.first, ends[0]), min(r.last, ends[-1]))
            for r in window.backend
            if isinstance(r, _Run) and r.first <= ends[-1] and r.last >= ends[0]
        ]
        rows: list[_SpanRows] = [{} for _ in ends]
        bucketed = window.timeline.length_us is not None
        measured: dict[str, dict[float, int]] = {}
        for plan, first, last in runs:
            for source, durations in self._measured(plan, first, last).items():
                measured.setdefault(source, {}).update(durations)
        for kind in dict.fromkeys([*window.timeline.kinds, *kinds]):
            for family, run in itertools.product(self._by_kind.get(kind, []), runs):
                away = _Away(run[0], kind, measured, bucketed)
                self._add_family(rows, index, kind, family, run, away)
        out: list[Slot] = []
        for end, span, by_kind in zip(ends, window.spans, rows, strict=True):
            at = round(end, 3)

            def length(source: str, at: float = at, nominal: int = span.duration_us) -> int:
                return measured.get(source, {}).get(at) or nominal

            data = {
                kind: {
                    source: KindSlice(
                        source,
                        length(source),
                        0,
                        {
                            key: EntityData(key, attrs, values, 0, 1)
                            for key, (attrs, values) in entities.items()
                        },
                    )
                    for source, entities in by_source.items()
                }
                for kind, by_source in by_kind.items()
            }
            duration = length(window.source)
            out.append(Slot(span.start_us, span.end_us, duration, span.flags, data))
        out.reverse()
        return out

    def _add_family(
        self,
        rows: list[_SpanRows],
        index: Mapping[float, int],
        kind: str,
        family: Family,
        run: tuple[_Plan, float, float],
        away: _Away,
    ) -> None:
        """A family's values, and the attributes its labels carry, into each span's
        entities (span end -> ``index`` in ``rows``)."""
        plan, first, last = run
        for labels, points in self._family_points(family, plan, first, last, away):
            source = labels.get("source", SOURCE_OF.get(kind, ""))
            key, attrs = _entity(kind, labels)
            named = _field(family, labels)
            if named is None:
                continue  # derived (the screens compute it) or unknown: not a field
            field, max_field = named
            for t, value, peak in points:
                i = index.get(round(t, 3))
                if i is None:
                    continue
                entity = rows[i].setdefault(kind, {}).setdefault(source, {})
                known, values = entity.setdefault(key, (attrs, {}))
                if field is None:  # an info family: the entity and its state
                    if known is not attrs:
                        entity[key] = ({**known, **attrs}, values)
                    continue
                values[field] = value
                if max_field is not None:
                    values[max_field] = peak

    def _counter_deltas(
        self, selector: str, plan: _Plan, first: float, last: float, away: _Away | None = None
    ) -> Iterator[tuple[dict[str, str], list[tuple[float, float]]]]:
        """Each series' increase over every span: its value at the span's end + D less its
        value one span before (a decrease: the value after it, a restarted recorder). After
        a gap, the increase since the series' last value where ``away`` says its entity was
        away (its totals stood still), else none."""
        lasts: _Lasts | None = None
        for labels, points in self._range(
            _merged(selector), first - plan.step + plan.delay, last + plan.delay, plan.step
        ):
            out: list[tuple[float, float]] = []
            for (t0, v0), (t1, v1) in itertools.pairwise(points):
                if math.isclose(t1 - t0, plan.step, abs_tol=1e-3):
                    out.append((t1 - plan.delay, _increase(v0, v1)))
                elif away is not None and away(labels, t0, t1):
                    within: Sequence[tuple[float, float]] = ()
                    if away.bucketed:  # the buckets it left in: up to its last value there
                        if lasts is None:
                            lasts = self._lasts(selector, plan, first, last)
                        within = [(t, v) for t, v in lasts.get(_key(labels), ()) if t0 < t < t1]
                    out.extend(_increases(v0, [*within, (t1, v1)], plan.delay))
            yield labels, out

    def _lasts(self, selector: str, plan: _Plan, first: float, last: float) -> _Lasts:
        """Each series' last value among the scrapes of every bucket's own intervals: read
        only where an entity was away at a bucket's end."""
        expr = _merged(f"last_over_time({selector}[{plan.bucket_range}])")
        return {
            _key(labels): points
            for labels, points in self._range(
                expr, first + plan.delay, last + plan.delay, plan.step
            )
        }

    def _measured(self, plan: _Plan, first: float, last: float) -> dict[str, dict[float, int]]:
        """Each source's measured interval durations (µs) in every span."""
        selector = f"{MEASURED_METRIC}_total{{node={_quote(plan.node)}}}"
        return {
            labels.get("source", ""): {round(t, 3): _us(d) for t, d in deltas}
            for labels, deltas in self._counter_deltas(selector, plan, first, last)
        }

    def _family_points(
        self, family: Family, plan: _Plan, first: float, last: float, away: _Away
    ) -> Iterator[tuple[dict[str, str], list[tuple[float, Value, Value]]]]:
        """Each series of a family: (span end, value in the field's unit, maximum)."""
        selector = f"{family.exposed}{{node={_quote(plan.node)}}}"
        bucketed = away.bucketed
        if not family.members:
            yield from self._info_points(selector, plan, first, last, bucketed)
            return
        fixed = family.members[0].factor
        if family.type is MetricType.COUNTER:
            for labels, deltas in self._counter_deltas(selector, plan, first, last, away):
                factor = fixed or _scale(labels)
                if factor is not None:
                    times, per = factor
                    yield labels, [(t, round(d * per / times), None) for t, d in deltas]
            return
        if bucketed:
            step = plan.bucket_range
            over = "max_over_time" if family.maximum else "avg_over_time"
            averages = self._range(
                _merged(f"{over}({selector}[{step}])"),
                first + plan.delay,
                last + plan.delay,
                plan.step,
            )
            peaks = {
                tuple(sorted(labels.items())): dict(points)
                for labels, points in self._range(
                    _merged(f"max_over_time({selector}[{step}])"),
                    first + plan.delay,
                    last + plan.delay,
                    plan.step,
                )
            }
        else:
            averages = self._range(
                _merged(selector), first + plan.delay, last + plan.delay, plan.step
            )
            peaks = {}
        for named, points in averages:
            labels = {k: v for k, v in named.items() if k != "__name__"}
            factor = fixed or _scale(labels)
            if factor is None:
                continue
            times, per = factor
            peak = peaks.get(tuple(sorted(labels.items())), {})
            yield (
                labels,
                [
                    (t - plan.delay, v * per / times, peak.get(t, v) * per / times)
                    for t, v in points
                ],
            )

    def _info_points(
        self, selector: str, plan: _Plan, first: float, last: float, bucketed: bool
    ) -> Iterator[tuple[dict[str, str], list[tuple[float, Value, Value]]]]:
        """An info family's series at every span's end: the entity and its attributes then.
        A bucket holds every entity seen in it, with the attributes it has at the bucket's
        end where it is still there (yielded last: they win), as the database gives the
        attributes of an entity's newest row."""
        queries = [_merged(selector)]
        if bucketed:
            queries.insert(0, _merged(f"last_over_time({selector}[{plan.bucket_range}])"))
        for expr in queries:
            for named, points in self._range(
                expr, first + plan.delay, last + plan.delay, plan.step
            ):
                labels = {k: v for k, v in named.items() if k != "__name__"}
                yield labels, [(t - plan.delay, 1, 1) for t, _ in points]

    def config_at(self, node: str, time_us: int) -> dict[str, str]:
        delay = _delay(self.interval_s(node)) if node in self.nodes() else 0.0
        found = self._instant(f"{CONFIG_METRIC}{{node={_quote(node)}}}", time_us / 1e6 + delay)
        config: dict[str, str] = {}
        for result in found:
            labels = _labels(result)
            config[str(labels.get("key", ""))] = str(labels.get("value", ""))
        return config

    def entity_rows(
        self,
        timeline: Timeline,
        kind: str,
        key: str,
        fields: Sequence[str],
        after_us: int | None,
        until_us: int | None,
        *,
        duration: bool = False,
        keyed_by: Sequence[str] = (),
    ) -> EntityRows | None:
        return None  # a span's values come from range queries over every series: slots

    def kind_entity_rows(
        self,
        timeline: Timeline,
        kind: str,
        fields: Sequence[str],
        after_us: int | None,
        until_us: int | None,
        *,
        duration: bool = False,
        keyed_by: Sequence[str] = (),
    ) -> KindEntityRows | None:
        return None  # as entity_rows

    def close(self) -> None:
        pass


def _labels(result: Mapping[str, object]) -> dict[str, str]:
    metric = result.get("metric", {})
    assert isinstance(metric, dict)
    return metric


def _value(result: Mapping[str, object]) -> str:
    value = result["value"]
    assert isinstance(value, list)
    return str(value[1])


# Labels that name where a series came from rather than what it is: a node's series keep
# their identity when the LPAR or z/VM system becomes known (or Prometheus's job changes).
_NOT_IDENTITY = "lpar, zvm_system, instance, job"


def _increase(before: float, after: float) -> float:
    """A counter's increase (a decrease: the value after it, a restarted recorder)."""
    return after - before if after >= before else after


def _increases(
    before: float, after: Sequence[tuple[float, float]], delay: float
) -> list[tuple[float, float]]:
    """Each span's increase (its end, the value read ``delay`` after it) from ``before``."""
    out = []
    for t, value in after:
        out.append((t - delay, _increase(before, value)))
        before = value
    return out


def _key(labels: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(labels.items()))


def _merged(expr: str) -> str:
    """``expr`` with the series that differ only in :data:`_NOT_IDENTITY` added up (only one
    of them exists at a time)."""
    return f"sum without ({_NOT_IDENTITY}) ({expr})"


def _delay(interval_s: float) -> float:
    """D: just under one interval after a span's end, its counters are read."""
    return interval_s - min(1.0, interval_s / 10)


def _us(seconds: float) -> int:
    return round(seconds * 1_000_000)


@dataclass(frozen=True)
class _Grid:
    """A window's span ends (s): an interval's, multiples of ``step`` in local time; a
    bucket's (``length_us``), the ends of ``db/calendar.py``, where the bucket that holds
    a daylight-saving change may be longer or shorter than the others (on the local
    calendar: a day of 23 or 25 hours, an hour of 30 or 90 minutes at Lord Howe)."""

    step: float
    length_us: int | None

    def floor(self, t: float) -> float:
        """The latest span end at or before ``t``."""
        if self.length_us is None:
            return _grid_floor(t, self.step)
        end = bucket_end(_us(t), self.length_us)
        return (end if end <= _us(t) else bucket_start(end, self.length_us)) / 1e6

    def ceiling(self, t: float) -> float:
        """The earliest span end at or after ``t``."""
        end = self.floor(t)
        return end if end >= t - 1e-6 else self.shifted(end, 1)

    def shifted(self, end: float, buckets: int) -> float:
        """The end ``buckets`` spans after (before, if negative) the span end ``end``."""
        if self.length_us is None:
            return end + buckets * self.step
        return shifted(_us(end), buckets, self.length_us) / 1e6

    def runs(self, first: float, last: float) -> list[tuple[float, float, float]]:
        """The span ends first..last as runs of one length (step, first, last): a range
        query has one step, so the bucket that holds a change is read as a run of its own,
        at its real length (a day of 23 or 25 hours)."""
        if self.length_us is None or not near_change(_us(first), _us(last), self.length_us):
            return [(self.step, first, last)]
        runs: list[tuple[float, float, float]] = []
        end = _us(first)
        while end <= _us(last):
            step = (end - bucket_start(end, self.length_us)) / 1e6
            if runs and runs[-1][0] == step:
                runs[-1] = (step, runs[-1][1], end / 1e6)
            else:
                runs.append((step, end / 1e6, end / 1e6))
            end = shifted(end, 1, self.length_us)
        return runs


def _duration(seconds: float) -> str:
    """A PromQL duration: whole seconds, else milliseconds (``%g`` would write 14 days as
    ``1.2096e+06s``, which PromQL refuses)."""
    if seconds == int(seconds):
        return f"{int(seconds)}s"
    return f"{round(seconds * 1000)}ms"


def _grid_floor(t: float, step: float) -> float:
    """The latest span end at or before ``t``: multiples of ``step`` in local time."""
    offset = time.localtime(t).tm_gmtoff
    return math.floor((t + offset) / step + 1e-9) * step - offset


def _scale(labels: Mapping[str, str]) -> tuple[float, float] | None:
    """A measurement block's time unit, from its ``scale`` label (seconds per unit)."""
    try:
        return (float(labels["scale"]), 1.0)
    except (KeyError, ValueError):
        return None


def _entity(kind: str, labels: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """An entity's key and the attributes a series of it carries (its state: the info
    family's series)."""
    spec = ENTITY_LABELS[kind]
    key = KEY_FORMAT[kind].format_map(labels)
    attrs = {attr: labels[label] for label, attr in spec.labelled if labels.get(label)}
    return key, attrs


def _field(family: Family, labels: Mapping[str, str]) -> tuple[str | None, str | None] | None:
    """The kind's field a series of ``family`` is, and its maximum's column (gauges); (None,
    None) for an info family; None for a series that is no recorded field (a derived
    member, or a label value this version does not know)."""
    if not family.members:
        return None, None
    member = family.members[0]
    if family.group_label is not None:
        value = labels.get(family.group_label)
        found = next((m for m in family.members if m.value == value), None)
        if found is None or found.derived:
            return None
        member = found
    name = member.field.name
    if family.maximum:
        return max_column(name), None
    return name, (max_column(name) if family.type is MetricType.GAUGE else None)
