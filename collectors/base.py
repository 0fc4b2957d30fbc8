"""The two shapes a source can have, and the context every source is built with.

A *polled* source (host, zcrypt, hypfs, vmcp, smapi) is asked for a sample at every interval
boundary, and for its gauges alone at the high-frequency rate in between.
A *stream* source (monreader, monwrite) brings its own timing: it yields one sample per
interval of the data it reads (z/VM monitor sample intervals), stamped with the data's time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from esatui.collectors.model import Availability, Kind, Sample

Warn = Callable[[str], None]


def _ignore(message: str) -> None:
    del message


@dataclass(frozen=True)
class SourceContext:
    """What a source is built with: where the system's files are and how to report trouble."""

    root: Path = Path("/")
    warn: Warn = field(default=_ignore)

    def path(self, absolute: str) -> Path:
        """``absolute`` (``/proc/stat``) below the root directory."""
        return self.root / absolute.lstrip("/")


@runtime_checkable
class PolledSource(Protocol):
    name: str
    kinds: tuple[Kind, ...]

    def probe(self) -> Availability:
        """Whether this source can run here, with the reason in one line."""
        ...

    def sample(self) -> Sample:
        """A full sample: counters, gauges, attributes (called at interval boundaries)."""
        ...

    def sample_gauges(self) -> Sample | None:
        """Only the gauges, cheaply (called at the ``--hf`` rate); ``None`` when it has none."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class StreamSource(Protocol):
    name: str
    kinds: tuple[Kind, ...]

    def probe(self) -> Availability: ...

    def samples(self) -> Iterator[Sample]:
        """Samples in time order, one per interval boundary of the data (may block)."""
        ...

    def close(self) -> None: ...


class SourceError(Exception):
    """A source cannot go on (device busy, authentication refused ...): one clear line."""
