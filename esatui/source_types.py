"""The collectors' source types (``--source host``, ``smapi:HOST`` ...), registered in the
source registry when this module is imported; each factory imports its collector only when
a source of its type is built, and ``--source auto`` builds only the local types one of
whose marks (the files their probes look at) exists, so it imports only the collectors of
the sources present."""

from __future__ import annotations

from esatui.registry import Source, SourceOptions, SourceUsageError, source_type


@source_type(
    "host", "/proc/stat, /proc/sysinfo, /proc/cpuinfo, CPU sysfs", local=True, marks=("/proc/stat",)
)
def _host(arg: str | None, opts: SourceOptions) -> Source:
    from esatui.collectors.host import HostSource

    return HostSource(opts.context)


@source_type(
    "zcrypt",
    "/sys/bus/ap and /sys/devices/ap (AP cards and queues)",
    local=True,
    marks=("/sys/bus/ap",),
)
def _zcrypt(arg: str | None, opts: SourceOptions) -> Source:
    from esatui.collectors.zcrypt import ZcryptSource

    return ZcryptSource(opts.context)


@source_type(
    "hypfs",
    "/sys/hypervisor/s390 or debugfs s390_hypfs",
    local=True,
    marks=(
        "/sys/kernel/debug/s390_hypfs/diag_2fc",
        "/sys/kernel/debug/s390_hypfs/diag_204",
        "/sys/hypervisor/s390/hyp/type",
    ),
)
def _hypfs(arg: str | None, opts: SourceOptions) -> Source:
    from esatui.collectors.hypfs import HypfsSource

    return HypfsSource(opts.context)


@source_type("vmcp", "/dev/vmcp (CP commands)", local=True, marks=("/dev/vmcp",))
def _vmcp(arg: str | None, opts: SourceOptions) -> Source:
    from esatui.collectors.vmcp import VmcpSource

    return VmcpSource(opts.context)


def _monitor(name: str, arg: str | None, opts: SourceOptions) -> Source:
    from esatui.collectors.monitor.source import monitor_source

    spec = name if arg is None else f"{name}:{arg}"
    try:
        return monitor_source(spec, opts.context, opts.monitor_layout, opts.progress)
    except ValueError as exc:  # LayoutError is one too
        raise SourceUsageError(str(exc)) from None


@source_type(
    "monreader", "/dev/monreader (z/VM monitor records)", local=True, marks=("/dev/monreader",)
)
def _monreader(arg: str | None, opts: SourceOptions) -> Source:
    return _monitor("monreader", arg, opts)


@source_type("monwrite", "a MONWRITE file (import)", local=False)
def _monwrite(arg: str | None, opts: SourceOptions) -> Source:
    if not arg:
        raise SourceUsageError("monwrite needs a file: --source monwrite:FILE")
    return _monitor("monwrite", arg, opts)


@source_type("smapi", "z/VM SMAPI over TCP, TLS or IUCV", local=False)
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
