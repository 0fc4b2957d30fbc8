"""The ``smapi`` source: guests (ESAUSR2) and the LPARs' logical CPUs (ESACPUU) via SMAPI.

Per full sample:
1. ``System_Information_Query`` (first sample, then every ``system_refresh_s``): the
   machine line (``Sample.config``).
2. ``System_Performance_Information_Query`` with ``DETAILED_CPU=SHOW=YES``: one ``lcpu``
   per logical CPU of every visible LPAR (falls back to the legacy
   ``System_Performance_Info_Query`` on a z/VM level without it).
3. The guests, as ``--smapi-guests`` says: ``*`` (default) asks ``Image_Status_Query`` for
   the active guests, then ``Image_Performance_Query`` for their DIAGNOSE X'2FC' records;
   ``namelist:NAME`` asks ``System_Image_Performance_Query`` for a SMAPI namelist; a
   comma-separated list of userids asks ``Image_Performance_Query`` for those.

A part that fails for a transient reason (refused, timeout, malformed answer) is left out
of the sample with a warning; authentication failure raises ``SourceError``.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from esatui.collectors.base import SourceContext, SourceError, Warnings
from esatui.collectors.diag2fc import Diag2fcRecord
from esatui.collectors.kinds import GUEST, LCPU
from esatui.collectors.model import Availability, Kind, Reading, Sample
from esatui.collectors.smapi.client import SmapiClient, SmapiResponse
from esatui.collectors.smapi.credentials import EMPTY, load_password
from esatui.collectors.smapi.errors import (
    SmapiAuthError,
    SmapiConfigError,
    SmapiError,
    SmapiUnsupportedTransport,
)
from esatui.collectors.smapi.results import (
    SystemInfo,
    parse_guest_records,
    parse_legacy_procs,
    parse_performance_information,
    parse_system_information,
)
from esatui.collectors.smapi.transport import (
    DEFAULT_PORT,
    IucvTransport,
    TcpTransport,
    Transport,
    make_tls_context,
)

SOURCE_NAME = "smapi"
IUCV_TARGET = "MAINT"  # what zthin's smcli names as target over IUCV
DETAILED_CPU = "DETAILED_CPU=SHOW=YES"
RETRY = "retry"  # the warning key of a call being tried again

# Sample.config keys (docs/SMAPI.md): the machine line of every screen header.
CONFIG_KEYS = (
    "vm_version",  # "7.1.0" (CP_LEVEL VERSION)
    "vm_service_level",  # "1801"
    "vm_level",  # "z/VM 7.1.0 SL 1801"
    "cms_level",  # "29"
    "cpu_id",  # "FF01917729640000"
    "machine_type",  # "2964" (from the CPU id)
    "cpu_serial",  # "019177" (from the CPU id)
    "lpar_name",  # "LP1" (MY_LPAR_NAME)
    "timezone",  # "EDT"
)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where ``smapi:HOST[:PORT]`` or ``smapi:iucv`` points."""

    iucv: bool
    host: str = ""
    port: int = DEFAULT_PORT


def parse_spec(spec: str) -> Endpoint:
    """``smapi:HOST``, ``smapi:HOST:PORT``, ``smapi:[V6ADDR]:PORT`` or ``smapi:iucv``."""
    kind, sep, rest = spec.partition(":")
    if kind != SOURCE_NAME or not sep or not rest:
        raise SmapiConfigError(f"source {spec!r} is not smapi:HOST[:PORT] or smapi:iucv")
    if rest.lower() == "iucv":
        return Endpoint(iucv=True)
    host, port_text = rest, ""
    if rest.startswith("["):
        host, _, after = rest[1:].partition("]")
        if after and not after.startswith(":"):
            raise SmapiConfigError(f"source {spec!r}: text after ] must be :PORT")
        port_text = after[1:]
    elif rest.count(":") == 1:
        host, _, port_text = rest.partition(":")
    if not host:
        raise SmapiConfigError(f"source {spec!r} has no host")
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise SmapiConfigError(f"source {spec!r}: port {port_text!r} is not 1..65535")
        return Endpoint(False, host, int(port_text))
    return Endpoint(False, host)


@dataclass(frozen=True, slots=True)
class GuestSelection:
    """Which guests to report: all active ones, a SMAPI namelist, or a fixed list."""

    namelist: str | None = None
    userids: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        return self.namelist is None and not self.userids

    def describe(self) -> str:
        if self.namelist is not None:
            return f"namelist {self.namelist}"
        return ",".join(self.userids) if self.userids else "*"


def parse_guests(text: str) -> GuestSelection:
    """``*`` (all active guests), ``namelist:NAME`` or ``USERID[,USERID...]``."""
    text = text.strip()
    if text in ("", "*"):
        return GuestSelection()
    if text.lower().startswith("namelist:"):
        name = text.split(":", 1)[1].strip()
        if not name:
            raise SmapiConfigError("--smapi-guests namelist: needs a namelist name")
        return GuestSelection(namelist=name)
    names = tuple(dict.fromkeys(n.strip().upper() for n in text.split(",") if n.strip()))
    bad = [n for n in names if not 1 <= len(n) <= 8 or not n.isascii() or " " in n]
    if bad or not names:
        raise SmapiConfigError(f"--smapi-guests: {bad[0] if bad else text!r} is not a userid")
    return GuestSelection(userids=names)


def _config_from(info: SystemInfo | None, lpar_name: str | None) -> dict[str, str]:
    values: dict[str, str | None] = {"lpar_name": lpar_name}
    if info is not None:
        level = None
        if info.vm_version:
            sl = f" SL {info.vm_service_level}" if info.vm_service_level else ""
            level = f"z/VM {info.vm_version}{sl}"
        values.update(
            vm_version=info.vm_version,
            vm_service_level=info.vm_service_level,
            vm_level=level,
            cms_level=info.cms_level,
            cpu_id=info.cpu_id,
            machine_type=info.machine_type,
            cpu_serial=info.cpu_serial,
            timezone=info.timezone,
        )
    return {k: v for k, v in values.items() if v}


def _guest_reading(rec: Diag2fcRecord) -> Reading:
    return Reading(
        kind=GUEST.name,
        key=rec.guest,
        values={
            "cpu_us": rec.used_cpu_us,
            "elapsed_us": rec.elapsed_us,
            "samp_total": rec.samp_total,
            "samp_cpu": rec.samp_cpu,
            "samp_delay": rec.samp_delay,
            "samp_page": rec.samp_page,
            "samp_idle": rec.samp_idle,
            "samp_other": rec.samp_other,
            "vcpus": rec.vcpus,
            "mem_used_kib": rec.mem_used_kib,
            "mem_max_kib": rec.mem_max_kib,
        },
        attrs={"userid": rec.guest},
    )


# The type source of processors read from the legacy query (z/VM levels without DETAILED_CPU)
LEGACY_TYPE_SOURCE = f"{SOURCE_NAME}:System_Performance_Info_Query"


def _lcpu_reading(
    lpar: str,
    cpu_id: str,
    cpu_type: str,
    busy: float | None,
    overhead: float | None,
    type_source: str = SOURCE_NAME,
) -> Reading:
    return Reading(
        kind=LCPU.name,
        key=f"{lpar}/{cpu_id}",
        values={"busy_pct": busy, "overhead_pct": overhead},
        attrs={"type": cpu_type, "lpar": lpar, "type_source": type_source},
    )


class SmapiSource:
    """A :class:`~esatui.collectors.base.PolledSource` reading z/VM through SMAPI."""

    name = SOURCE_NAME
    kinds: tuple[Kind, ...] = (LCPU, GUEST)

    def __init__(
        self,
        client: SmapiClient,
        *,
        target: str,
        guests: GuestSelection | None = None,
        ctx: SourceContext | None = None,
        system_refresh_s: float = 600.0,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.client = client
        self.target = target
        self.guests = guests or GuestSelection()
        self.ctx = ctx or SourceContext()
        self._warn = Warnings(self.ctx.warn, self.name)
        client.on_retry = self._retrying
        self.system_refresh_s = system_refresh_s
        self._clock = clock or (lambda: self.ctx.clock.mono_ns() / 1e9)
        self._system: SystemInfo | None = None
        self._system_at: float | None = None
        self._lpar_name: str | None = None
        self._legacy_cpu = False  # DETAILED_CPU not available at this z/VM level

    def __repr__(self) -> str:
        guests = self.guests.describe()
        return f"SmapiSource({self.client!r}, target={self.target!r}, guests={guests!r})"

    # --- PolledSource --------------------------------------------------------------------

    def probe(self) -> Availability:
        transport = self.client.transport
        try:
            sock = transport.connect(min(self.client.connect_timeout, 2.0))
        except SmapiError as exc:
            return Availability(False, str(exc))
        _quiet_close(sock)
        return Availability(True, f"SMAPI server {transport.describe()} accepts connections")

    def sample(self) -> Sample:
        calls = self.client.calls
        self._refresh_system()
        readings = self._lcpus()
        guest_readings = self._guests()
        self._warn.clear(RETRY)
        time_us, mono_ns = self.ctx.clock.time_us(), self.ctx.clock.mono_ns()
        return Sample(
            source=self.name,
            time_us=time_us,
            readings=tuple(readings + guest_readings),
            mono_ns=mono_ns,
            config=_config_from(self._system, self._lpar_name) or None,
            reads=self.client.calls - calls,
        )

    def sample_gauges(self) -> Sample | None:
        # SMAPI's busy and overhead figures are CP's own interval averages: polling them at
        # the high-frequency rate would add authenticated requests, not information.
        return None

    def close(self) -> None:
        """Nothing to release: every SMAPI request has its own connection."""

    def _retrying(self, why: str) -> None:
        """Said at the first retry of a sample: a retried call can outlast the recorder's
        deadline, whose own message would not say why."""
        self._warn(why, key=RETRY)

    # --- the parts of a sample -------------------------------------------------------------

    def _call(self, function: str, target: str, **params: object) -> SmapiResponse:
        """One call; authentication failure stops the source, other errors propagate."""
        try:
            return self.client.call(function, target, **params)
        except SmapiUnsupportedTransport as exc:
            raise SourceError(str(exc)) from None

    def _checked(
        self, response: SmapiResponse, accept: tuple[tuple[int, int], ...] = ((0, 0),)
    ) -> SmapiResponse:
        try:
            return response.check(accept)
        except SmapiAuthError as exc:
            who = self.client.userid or "this guest"
            raise SourceError(
                f"SMAPI refused {who} at {self.client.transport.describe()}: return code "
                f"{exc.rc} reason {exc.rs} ({exc.meaning})"
            ) from None

    def _refresh_system(self) -> None:
        now = self._clock()
        if self._system_at is not None and now - self._system_at < self.system_refresh_s:
            return
        try:
            response = self._checked(self._call("System_Information_Query", self.target))
        except SmapiError as exc:
            self._warn(f"system information not read: {exc}", key="system")
            return
        self._warn.clear("system")
        self._system = parse_system_information(response.output.get("system_information_data", []))
        self._system_at = now

    def _lcpus(self) -> list[Reading]:
        try:
            if not self._legacy_cpu:
                response = self._call(
                    "System_Performance_Information_Query",
                    self.target,
                    system_performance_information_list=[DETAILED_CPU],
                )
                if response.outcome.not_supported or response.rc == 24:
                    self._legacy_cpu = True
                    self._warn(
                        "DETAILED_CPU not available "
                        f"({response.outcome.meaning}); using System_Performance_Info_Query"
                    )
                else:
                    return self._detailed(self._checked(response))
            legacy = self._checked(self._call("System_Performance_Info_Query", self.target))
        except SmapiError as exc:
            self._warn(f"logical CPUs not read: {exc}", key="lcpus")
            return []
        self._warn.clear("lcpus")
        lpar = self._lpar_name or "-"
        return [
            _lcpu_reading(
                lpar, _hex_id(p.address), p.cpu_type, p.busy_pct, None, LEGACY_TYPE_SOURCE
            )
            for p in parse_legacy_procs(legacy.output.get("procs", []))
            if p.address
        ]

    def _detailed(self, response: SmapiResponse) -> list[Reading]:
        self._warn.clear("lcpus")
        perf = parse_performance_information(
            response.output.get("system_performance_information_data", [])
        )
        for problem in perf.problems:
            self._warn(problem)
        self._lpar_name = perf.my_lpar_name or self._lpar_name
        return [
            _lcpu_reading(c.lpar, c.cpu_id, c.cpu_type, c.busy_pct, c.lp_overhead_pct)
            for c in perf.cpus
        ]

    def _guests(self) -> list[Reading]:
        sel = self.guests
        try:
            if sel.namelist is not None:
                response = self._call("System_Image_Performance_Query", sel.namelist)
            else:
                names = list(sel.userids) or self._active_guests()
                if not names:
                    return []
                response = self._call("Image_Performance_Query", self.target, guests=names)
            response = self._checked(response, ((0, 0), (4, 4)))
        except SmapiError as exc:
            self._warn(f"guests ({sel.describe()}) not read: {exc}", key="guests")
            return []
        self._warn.clear("guests")
        parsed = parse_guest_records(response.output.get("records", []))
        for problem in parsed.problems:
            self._warn(problem)
        return [_guest_reading(rec) for rec in parsed.records]

    def _active_guests(self) -> list[str]:
        response = self._checked(self._call("Image_Status_Query", "*"), ((0, 0), (0, 28), (4, 28)))
        entries = response.output.get("image_name_array", [])
        names = (str(e.get("image_name", "")).strip().upper() for e in entries)
        return [n for n in names if n]


def _hex_id(address: str) -> str:
    """Legacy PROC addresses are 4 hex digits: "000A" -> "A"."""
    try:
        return f"{int(address, 16):X}"
    except ValueError:
        return address


def _is_userid(user: str) -> bool:
    return 1 <= len(user) <= 8 and user.isascii() and user.isprintable() and " " not in user


def _loopback(host: str) -> bool:
    """Whether ``host`` names this machine (a loopback address or ``localhost``)."""
    if host.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _quiet_close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.close()


def build_source(
    spec: str,
    *,
    user: str | None = None,
    password_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
    guests: str = "*",
    target: str | None = None,
    tls: bool = False,
    tls_ca: Path | None = None,
    tls_verify: bool = True,
    connect_timeout: float = 5.0,
    read_timeout: float = 30.0,
    retries: int = 3,
    ctx: SourceContext | None = None,
) -> SmapiSource:
    """The source for ``--source smapi:...`` and its options (``SmapiConfigError``, a
    ``ValueError``, with a one-line reason when they do not fit together)."""
    endpoint = parse_spec(spec)
    selection = parse_guests(guests)
    context = ctx or SourceContext()
    transport: Transport
    if endpoint.iucv:
        if user or password_file or tls:
            context.warn(
                "smapi:iucv authenticates this guest itself: user, password and TLS are ignored"
            )
        transport, userid, password = IucvTransport(), "", EMPTY
        default_target = IUCV_TARGET
    else:
        if not user:
            raise SmapiConfigError(f"{spec} needs --smapi-user")
        if not _is_userid(user):
            raise SmapiConfigError(
                f"--smapi-user {user!r} is not a z/VM userid (1 to 8 ASCII characters, no blanks)"
            )
        password = load_password(password_file, environ)
        context_tls = make_tls_context(tls_ca, verify=tls_verify) if tls or tls_ca else None
        if context_tls is None and not _loopback(endpoint.host):
            Warnings(context.warn, SOURCE_NAME)(
                f"the SMAPI password goes to {endpoint.host} in clear text (SMAPI's plain TCP); "
                "give --smapi-tls (with --smapi-ca FILE for a private CA) to encrypt it"
            )
        transport = TcpTransport(endpoint.host, endpoint.port, context_tls)
        userid, default_target = user, user
    client = SmapiClient(
        transport,
        userid,
        password,
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        retries=retries,
    )
    return SmapiSource(client, target=target or default_target, guests=selection, ctx=context)
