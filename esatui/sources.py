"""Which sources exist, how a ``--source`` SPEC builds one, and why one is not available."""

from __future__ import annotations

from collections.abc import Callable, Sequence
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

    @property
    def context(self) -> SourceContext:
        return SourceContext(self.root, self.warn, self.clock)


@dataclass(frozen=True)
class SourceType:
    name: str
    doc: str
    local: bool  # part of `auto` when present
    make: Callable[[str | None, SourceOptions], Source | list[Source]]  # list: `sim`


def _host(arg: str | None, opts: SourceOptions) -> Source:
    from esatui.collectors.host import HostSource

    return HostSource(opts.context)


def _zcrypt(arg: str | None, opts: SourceOptions) -> Source:
    from esatui.collectors.zcrypt import ZcryptSource

    return ZcryptSource(opts.context)


def _hypfs(arg: str | None, opts: SourceOptions) -> Source:
    from esatui.collectors.hypfs import HypfsSource

    return HypfsSource(opts.context)


def _vmcp(arg: str | None, opts: SourceOptions) -> Source:
    from esatui.collectors.vmcp import VmcpSource

    return VmcpSource(opts.context)


def _monitor(name: str) -> Callable[[str | None, SourceOptions], Source]:
    def make(arg: str | None, opts: SourceOptions) -> Source:
        from esatui.collectors.monitor.source import monitor_source

        if name == "monwrite" and not arg:
            raise SourceUsageError("monwrite needs a file: --source monwrite:FILE")
        spec = name if arg is None else f"{name}:{arg}"
        try:
            return monitor_source(spec, opts.context, opts.monitor_layout, opts.progress)
        except ValueError as exc:  # LayoutError is one too
            raise SourceUsageError(str(exc)) from None

    return make


def _smapi(arg: str | None, opts: SourceOptions) -> Source:
    from esatui.collectors.smapi.source import build_source

    if not arg:
        raise SourceUsageError("smapi needs a server: --source smapi:HOST[:PORT] or smapi:iucv")
    try:
        return build_source(
            f"smapi:{arg}",
            user=opts.smapi_user,
            password_file=opts.smapi_password_file,
            guests=opts.smapi_guests,
            tls=opts.smapi_tls,
            tls_ca=opts.smapi_ca,
            ctx=opts.context,
        )
    except ValueError as exc:
        raise SourceUsageError(str(exc)) from None


def _sim(arg: str | None, opts: SourceOptions) -> list[Source]:
    from esatui.sim.sources import sim_sources

    if not arg:
        raise SourceUsageError("sim needs a scenario: --source sim:SCENARIO (e.g. sim:mode-vm-day)")
    try:
        return sim_sources(arg, opts)
    except ValueError as exc:
        raise SourceUsageError(str(exc)) from None


SOURCE_TYPES: dict[str, SourceType] = {
    "host": SourceType("host", "/proc/stat, /proc/sysinfo, /proc/cpuinfo, CPU sysfs", True, _host),
    "zcrypt": SourceType(
        "zcrypt", "/sys/bus/ap and /sys/devices/ap (AP cards and queues)", True, _zcrypt
    ),
    "hypfs": SourceType("hypfs", "/sys/hypervisor/s390 or debugfs s390_hypfs", True, _hypfs),
    "vmcp": SourceType("vmcp", "/dev/vmcp (CP commands)", True, _vmcp),
    "monreader": SourceType(
        "monreader", "/dev/monreader (z/VM monitor records)", True, _monitor("monreader")
    ),
    "monwrite": SourceType("monwrite", "a MONWRITE file (import)", False, _monitor("monwrite")),
    "smapi": SourceType("smapi", "z/VM SMAPI over TCP, TLS or IUCV", False, _smapi),
    "sim": SourceType(
        "sim",
        "a simulated z/VM system, read by the host, zcrypt, vmcp, monitor and smapi sources",
        False,
        _sim,
    ),
}


def parse_spec(spec: str) -> tuple[str, str | None]:
    name, sep, arg = spec.partition(":")
    return name.strip().lower(), (arg if sep else None)


def make_source(spec: str, opts: SourceOptions) -> list[Source]:
    """The sources one SPEC gives: one, or the ordinary sources of a simulated system."""
    name, arg = parse_spec(spec)
    source_type = SOURCE_TYPES.get(name)
    if source_type is None:
        known = ", ".join(["auto", *SOURCE_TYPES])
        raise SourceUsageError(f"unknown source {spec!r} (sources: {known})")
    made = source_type.make(arg, opts)
    return made if isinstance(made, list) else [made]


def make_sources(specs: Sequence[str], opts: SourceOptions) -> list[Source]:
    """Sources for the given SPECs; ``auto`` (the default) is every local one present."""
    sources: list[Source] = []
    for spec in specs or ["auto"]:
        if spec == "auto":
            for source_type in SOURCE_TYPES.values():
                if not source_type.local:
                    continue
                source = _one(source_type.make(None, opts))
                if source.probe().available:
                    sources.append(source)
                else:
                    source.close()
        else:
            sources.extend(make_source(spec, opts))
    names = [s.name for s in sources]
    if len(set(names)) != len(names):
        raise SourceUsageError(f"a source is given twice: {', '.join(names)}")
    return sources


def availability(
    opts: SourceOptions, specs: Sequence[str] = ()
) -> list[tuple[str, str, Availability]]:
    """Every local source type, and each SPEC given, with whether it can run here and why."""
    out: list[tuple[str, str, Availability]] = []
    for spec in specs:
        name, _ = parse_spec(spec)
        try:
            made = make_source(spec, opts)
            probes = [source.probe() for source in made]
            for source in made:
                source.close()
            missing = [p for p in probes if not p.available]
            found = missing[0] if missing else _joined(probes)
        except (SourceError, ValueError, OSError) as exc:
            found = Availability(False, str(exc))
        doc = SOURCE_TYPES[name].doc if name in SOURCE_TYPES else "unknown source"
        out.append((spec, doc, found))
    given = {parse_spec(spec)[0] for spec in specs}
    for source_type in SOURCE_TYPES.values():
        if source_type.name in given:
            continue
        if not source_type.local:
            found = Availability(False, f"not a local source: give --source {source_type.name}:...")
            out.append((source_type.name, source_type.doc, found))
            continue
        try:
            source = _one(source_type.make(None, opts))
            found = source.probe()
            source.close()
        except (SourceError, ValueError, OSError) as exc:
            found = Availability(False, str(exc))
        out.append((source_type.name, source_type.doc, found))
    return out


def _one(made: Source | list[Source]) -> Source:
    """The source of a local type (those always give exactly one)."""
    if isinstance(made, list):
        raise TypeError("a local source type gives one source")
    return made


def _joined(probes: list[Availability]) -> Availability:
    if len(probes) == 1:
        return probes[0]
    return Availability(True, "; ".join(p.reason for p in probes))
