"""The source registry: which source types exist, how a ``--source`` SPEC builds one, and why
one is not available here.

It knows no source type itself: each registers itself with :func:`source_type` when its
module is imported (the collectors' types in ``esatui.source_types``, the simulator's in
``esatui.sim.source_type``), and the app says which modules those are
(``esatui.commands.common.registry``), so a new kind of source is one more module and one
more line there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from esatui.collectors.base import (
    SYSTEM_CLOCK,
    Clock,
    PolledSource,
    SourceContext,
    SourceError,
    StreamSource,
)
from esatui.collectors.model import Availability

Source = PolledSource | StreamSource


class SourceUsageError(ValueError):
    """A SPEC or its options do not fit together (exit status 2)."""


class SourceUnavailable(RuntimeError):
    """A local source named on the command line cannot run here (exit status 1)."""


@dataclass(frozen=True)
class SourceOptions:
    """Everything a source may be built with, from the command line."""

    root: Path = Path("/")
    warn: Callable[[str], None] = print
    smapi_user: str | None = None
    smapi_password_file: Path | None = None
    smapi_guests: str = "*"
    smapi_tls: bool = False
    smapi_ca: Path | None = None
    monitor_layout: Path | None = None
    progress: Callable[[int, int], None] | None = None
    clock: Clock = SYSTEM_CLOCK
    interval_s: float | None = None  # the recorder's interval, where a source can follow it

    @property
    def context(self) -> SourceContext:
        return SourceContext(self.root, self.warn, self.clock)


Factory = Callable[[str | None, SourceOptions], Source | list[Source]]


@dataclass(frozen=True)
class SourceType:
    name: str
    doc: str
    local: bool  # part of `auto` when present
    make: Factory  # a list: several sources from one SPEC (`sim`)
    # paths (below --root) one of which a local source needs: where none exists, `auto`
    # leaves the type out without building it, so its collector is never imported
    marks: tuple[str, ...] = ()

    def maybe_present(self, opts: SourceOptions) -> bool:
        """A mark that exists, or one this user may not look at (debugfs is root's): then the
        type's own probe decides."""
        return not self.marks or any(_exists_or_hidden(opts.context.path(m)) for m in self.marks)


def _exists_or_hidden(path: Path) -> bool:
    try:
        path.stat()
    except FileNotFoundError:
        return False
    except OSError:
        return True  # not this user's to see (PermissionError), or broken: let the probe say
    return True


class Registry:
    """Source types by name, in the order they registered."""

    def __init__(self) -> None:
        self._types: dict[str, SourceType] = {}

    def add(self, source_type: SourceType) -> None:
        if source_type.name in self._types:
            raise ValueError(f"source type {source_type.name!r} is registered twice")
        self._types[source_type.name] = source_type

    def __iter__(self) -> Iterator[SourceType]:
        return iter(self._types.values())

    def get(self, name: str) -> SourceType | None:
        return self._types.get(name)

    def make_source(self, spec: str, opts: SourceOptions) -> list[Source]:
        """The sources one SPEC gives: one, or the ordinary sources of a simulated system."""
        name, arg = parse_spec(spec)
        made = self._type_of(spec, name).make(arg, opts)
        return made if isinstance(made, list) else [made]

    def _type_of(self, spec: str, name: str) -> SourceType:
        found = self._types.get(name)
        if found is None:
            known = ", ".join(["auto", *self._types])
            raise SourceUsageError(f"unknown source {spec!r} (sources: {known})")
        return found

    def make_sources(self, specs: Sequence[str], opts: SourceOptions) -> list[Source]:
        """Sources for the given SPECs; ``auto`` (the default) is every local one present."""
        sources: list[Source] = []
        for spec in specs or ["auto"]:
            if spec != "auto":
                made = self.make_source(spec, opts)
                self._refuse_absent(spec, made)
                sources.extend(made)
                continue
            for local in self._types.values():
                if not local.local or not local.maybe_present(opts):
                    continue
                source = _one(local.make(None, opts))
                if source.probe().available:
                    sources.append(source)
                else:
                    source.close()
        names = [s.name for s in sources]
        if len(set(names)) != len(names):
            raise SourceUsageError(f"a source is given twice: {', '.join(names)}")
        return sources

    def _refuse_absent(self, spec: str, made: list[Source]) -> None:
        """A local source asked for by name that is not present would record empty
        intervals: say why instead (``auto`` leaves such sources out)."""
        found = self._types.get(parse_spec(spec)[0])
        if found is None or not found.local:
            return
        for source in made:
            probe = source.probe()
            if not probe.available:
                for other in made:
                    other.close()
                raise SourceUnavailable(
                    f"{source.name} is not available here: {probe.reason} (see esatui sources)"
                )

    def availability(
        self, opts: SourceOptions, specs: Sequence[str] = ()
    ) -> list[tuple[str, str, Availability]]:
        """Every local source type, and each SPEC given, with whether it can run here and
        why."""
        named = [spec for spec in specs if spec != "auto"]  # auto: every local one, as without
        for spec in named:
            self._type_of(spec, parse_spec(spec)[0])  # no such source: a usage error, as collect's
        out = [self._given(spec, opts) for spec in named]
        given = {parse_spec(spec)[0] for spec in named}
        for found in self._types.values():
            if found.name not in given:
                out.append((found.name, found.doc, self._probe(found, opts)))
        return out

    def _given(self, spec: str, opts: SourceOptions) -> tuple[str, str, Availability]:
        name, _ = parse_spec(spec)
        try:
            made = self.make_source(spec, opts)
            probes = [source.probe() for source in made]
            for source in made:
                source.close()
            missing = [p for p in probes if not p.available]
            found = missing[0] if missing else _joined(probes)
        except (SourceError, ValueError, OSError) as exc:
            found = Availability(False, str(exc))
        known = self._types.get(name)
        return spec, known.doc if known else "unknown source", found

    @staticmethod
    def _probe(source_type: SourceType, opts: SourceOptions) -> Availability:
        if not source_type.local:
            return Availability(False, f"not a local source: give --source {source_type.name}:...")
        try:
            source = _one(source_type.make(None, opts))
            found = source.probe()
            source.close()
        except (SourceError, ValueError, OSError) as exc:
            found = Availability(False, str(exc))
        return found


REGISTRY = Registry()
"""The registry the source types' modules register themselves in."""


def source_type(
    name: str, doc: str, *, local: bool, marks: tuple[str, ...] = ()
) -> Callable[[Factory], Factory]:
    """``@source_type("host", "...", local=True, marks=("/proc/stat",))`` on a factory
    registers it in :data:`REGISTRY`."""

    def register(make: Factory) -> Factory:
        REGISTRY.add(SourceType(name, doc, local, make, marks))
        return make

    return register


def parse_spec(spec: str) -> tuple[str, str | None]:
    name, sep, arg = spec.partition(":")
    return name.strip().lower(), (arg if sep else None)


def _one(made: Source | list[Source]) -> Source:
    """The source of a local type (those always give exactly one)."""
    if isinstance(made, list):
        raise TypeError("a local source type gives one source")
    return made


def _joined(probes: list[Availability]) -> Availability:
    if len(probes) == 1:
        return probes[0]
    return Availability(True, "; ".join(p.reason for p in probes))
