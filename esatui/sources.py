"""Which sources exist, how a ``--source`` SPEC builds one, and why one is not available."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from esatui.collectors.base import PolledSource, SourceContext, SourceError, StreamSource
from esatui.collectors.model import Availability

Source = PolledSource | StreamSource


@dataclass(frozen=True)
class SourceOptions:
    """Everything a source may be built with, from the command line."""

    root: Path = Path("/")
    warn: Callable[[str], None] = print
    smapi_user: str | None = None
    smapi_password_file: Path | None = None
    monitor_layout: Path | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def context(self) -> SourceContext:
        return SourceContext(self.root, self.warn)


@dataclass(frozen=True)
class SourceType:
    name: str
    doc: str
    local: bool  # part of `auto` when present
    make: Callable[[str | None, SourceOptions], Source]


def _host(arg: str | None, opts: SourceOptions) -> Source:
    from esatui.collectors.host import HostSource

    return HostSource(opts.context)


SOURCE_TYPES: dict[str, SourceType] = {
    "host": SourceType("host", "/proc/stat, /proc/sysinfo, /proc/cpuinfo, CPU sysfs", True, _host),
}


def parse_spec(spec: str) -> tuple[str, str | None]:
    name, sep, arg = spec.partition(":")
    return name.strip().lower(), (arg if sep else None)


def make_source(spec: str, opts: SourceOptions) -> Source:
    name, arg = parse_spec(spec)
    source_type = SOURCE_TYPES.get(name)
    if source_type is None:
        known = ", ".join(["auto", *SOURCE_TYPES])
        raise SourceError(f"unknown source {spec!r} (sources: {known})")
    return source_type.make(arg, opts)


def make_sources(specs: Sequence[str], opts: SourceOptions) -> list[Source]:
    """Sources for the given SPECs; ``auto`` (the default) is every local one present."""
    sources: list[Source] = []
    for spec in specs or ["auto"]:
        if spec == "auto":
            for source_type in SOURCE_TYPES.values():
                if not source_type.local:
                    continue
                source = source_type.make(None, opts)
                if source.probe().available:
                    sources.append(source)
                else:
                    source.close()
        else:
            sources.append(make_source(spec, opts))
    names = [s.name for s in sources]
    if len(set(names)) != len(names):
        raise SourceError(f"a source is given twice: {', '.join(names)}")
    return sources


def availability(opts: SourceOptions) -> list[tuple[str, str, Availability]]:
    """Every known source type with whether it can run here and why."""
    out: list[tuple[str, str, Availability]] = []
    for source_type in SOURCE_TYPES.values():
        try:
            source = source_type.make(None, opts)
            found = source.probe()
            source.close()
        except SourceError as exc:
            found = Availability(False, str(exc))
        out.append((source_type.name, source_type.doc, found))
    return out
