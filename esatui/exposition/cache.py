"""The exposition's bytes, made once per interval and per format.

prometheus_client's encoders format every sample of every scrape: at a large node (64 CPUs,
256 APQNs: 2,500 series) that is some 50 ms of CPU per scrape, nearly all of it escaping
label values that have not changed since the series began. Here each encoder formats the
series once per *shape* (the families and label values present): the text it gives with a
placeholder value becomes a template, each sample line's text up to its value. Until the
shape changes, an exposition is the template with the values formatted by the library's own
``floatToGoString``, so the bytes are the library's (a test holds them equal to the
encoder's output); until the next interval is added it is served as made, gzipped once.
"""

from __future__ import annotations

import gzip
import math
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prometheus_client.metrics_core import Metric
from prometheus_client.utils import floatToGoString

from esatui.exposition.exporter import Exporter, Labels, Samples, Snapshot

_INF = math.inf
_go: Callable[[float], str] = floatToGoString  # the library's value format (untyped there)
Encoder = Callable[..., bytes]  # prometheus_client's: a collector in, the exposition out
Shape = tuple[tuple[object, tuple[Labels, ...]], ...]


class _Placeholders:
    """A collector of the snapshot's series, each with the value 0 (the template's)."""

    def __init__(self, families: tuple[Samples, ...]) -> None:
        self._families = families

    def collect(self) -> Iterator[Metric]:
        zeros = (Samples(s.head, s.labels, [0.0] * len(s.labels)) for s in self._families)
        return Snapshot(0, tuple(zeros)).metrics()


@dataclass(frozen=True, slots=True)
class _Template:
    prefixes: tuple[str, ...]  # before each value: the lines before it and its own start
    tail: str  # after the last value's line

    @classmethod
    def make(cls, encoder: Encoder, snapshot: Snapshot) -> _Template | None:
        text = encoder(_Placeholders(snapshot.families)).decode("utf-8")
        prefixes: list[str] = []
        pending: list[str] = []
        lines = text.split("\n")  # the encoders escape a label's newline: one line a sample
        for line in lines[:-1]:
            if line.startswith("#"):
                pending.append(line + "\n")
                continue
            start, _, value = line.rpartition(" ")
            if value != "0.0":
                return None  # not a plain sample line: no template, the encoder each time
            pending.append(start + " ")  # its line's end: the join's
            prefixes.append("".join(pending))
            pending.clear()
        values = sum(len(s.values) for s in snapshot.families)
        if len(prefixes) != values:
            return None
        return cls(tuple(prefixes), "".join(pending) + lines[-1])

    def fill(self, snapshot: Snapshot) -> bytes:
        values = [v for samples in snapshot.families for v in samples.values]
        if not values:
            return self.tail.encode("utf-8")
        lines = list(map(str.__add__, self.prefixes, _formatted(values)))
        lines.append(self.tail)  # each sample line ends in the join's newline
        return "\n".join(lines).encode("utf-8")


def _formatted(values: list[float]) -> list[str]:
    """floatToGoString of each value. For a finite float under 1e6 it is repr (the library
    switches to exponents above, and spells infinities and NaN its own way), and the repr of
    a list of floats formats them all in one call."""
    reprs = repr(values)[1:-1].split(", ")
    return [r if -_INF < v < 1e6 else _go(v) for v, r in zip(values, reprs, strict=True)]


@dataclass(frozen=True, slots=True)
class _Made:
    generation: int
    body: bytes
    gzipped: bytes | None


class ExpositionCache:
    """An exporter's exposition per encoder, made again only when an interval was added."""

    def __init__(self, exporter: Exporter) -> None:
        self._exporter = exporter
        self._lock = threading.Lock()  # scrapes run in threads of their own
        self._templates: dict[str, tuple[Shape, _Template | None]] = {}
        self._made: dict[str, _Made] = {}

    def body(self, name: str, encoder: Encoder, gzipped: bool = False) -> bytes:
        """The exposition as ``encoder`` gives it (``name`` tells encoders apart)."""
        with self._lock:
            made = self._made.get(name)
            if made is None or made.generation != self._exporter.generation():
                snapshot = self._exporter.snapshot()
                made = _Made(snapshot.generation, self._render(name, encoder, snapshot), None)
            if gzipped and made.gzipped is None:
                made = _Made(made.generation, made.body, gzip.compress(made.body))
            self._made[name] = made
            return made.gzipped if gzipped and made.gzipped is not None else made.body

    def _render(self, name: str, encoder: Encoder, snapshot: Snapshot) -> bytes:
        shape: Shape = tuple((s.head, tuple(s.labels)) for s in snapshot.families)
        known = self._templates.get(name)
        if known is not None and known[0] == shape:
            template = known[1]
        else:
            template = _Template.make(encoder, snapshot)
            self._templates[name] = (shape, template)
        if template is None:
            return encoder(_Snapshotted(snapshot))
        return template.fill(snapshot)


class _Snapshotted:
    """A collector of one snapshot."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot

    def collect(self) -> Iterator[Metric]:
        return self._snapshot.metrics()
