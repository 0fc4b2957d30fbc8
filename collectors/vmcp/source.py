"""The ``vmcp`` source: what CP itself says about this guest's CPUs and the real processors.

Every full sample runs QUERY VIRTUAL CPUS and INDICATE LOAD (one DIAGNOSE X'08' each); when
QUERY VIRTUAL CPUS yields no CPU line, INDICATE USER's ``TYPE=`` per CPU is the fallback.
QUERY VIRTUAL CRYPTO and QUERY CRYPTO AP run at the first sample and then every
``crypto_refresh_s`` (their answers change only with the configuration).

A command that fails or answers in an unexpected shape costs a warning, never the sample.
"""

from __future__ import annotations

from collections.abc import Callable

from esatui.collectors.base import SourceContext, SourceError, Warnings
from esatui.collectors.kinds import LCPU
from esatui.collectors.model import Availability, Kind, Reading, Sample
from esatui.collectors.vmcp.client import CpResponse, Opener, VmcpClient, VmcpError
from esatui.collectors.vmcp.device import LinuxVmcpSession
from esatui.collectors.vmcp.parsers import (
    Leftover,
    parse_crypto,
    parse_indicate_load,
    parse_indicate_user,
    parse_query_virtual_cpus,
)

# Sample.config keys: CP's crypto polling mode (SET CRYPTO POLLING ON|OFF) where a CP
# response says it, and which command did
CFG_CRYPTO_POLLING = "cp_crypto_polling"
CFG_CRYPTO_POLLING_SOURCE = "cp_crypto_polling_source"

VCPU = Kind(
    name="vcpu",
    doc="virtual CPU of this z/VM guest as CP defines it (QUERY VIRTUAL CPUS); key: the CPU "
    "address in decimal, as Linux's /sys/devices/system/cpu/cpuN/address",
    fields=(),
    attrs=("type", "type_source", "address_hex", "base", "state", "affinity"),
)

ZVM_CRYPTO = Kind(
    name="zvm_crypto",
    doc="crypto queue (AP.domain) CP gives this guest (QUERY VIRTUAL CRYPTO, provisional "
    "parse); key: 'AP.DOMAIN' in hex like zcrypt's queues ('0a.0011')",
    fields=(),
    attrs=("card_type", "use", "keywords", "line", "query"),
)


class VmcpSource:
    """PolledSource over /dev/vmcp (``--source vmcp``)."""

    name = "vmcp"
    kinds: tuple[Kind, ...] = (VCPU, LCPU, ZVM_CRYPTO)

    def __init__(
        self,
        ctx: SourceContext,
        *,
        opener: Opener | None = None,
        crypto_refresh_s: float = 3600.0,
        clock: Callable[[], int] | None = None,
    ) -> None:
        self._ctx = ctx
        self._path = str(ctx.path("/dev/vmcp"))
        path = self._path
        self._client = VmcpClient(opener or (lambda: LinuxVmcpSession(path)), path=path)
        self._crypto_refresh_ns = int(crypto_refresh_s * 1e9)
        self._crypto_at: int | None = None
        self._crypto: list[Reading] = []
        self._config: dict[str, str] = {}
        self._clock = clock or ctx.clock.mono_ns
        self._warn = Warnings(ctx.warn, self.name)

    def probe(self) -> Availability:
        try:
            response = self._client.run("QUERY CPLEVEL")
        except VmcpError as exc:
            return Availability(False, str(exc))
        if response.rc != 0:
            return Availability(False, f"CP answered QUERY CPLEVEL with rc {response.rc}")
        level = response.lines[0] if response.lines else "z/VM"
        return Availability(True, f"CP commands through {self._path} ({level.strip()})")

    def sample(self) -> Sample:
        mono_ns = self._clock()
        time_us = self._ctx.clock.time_us()
        readings: list[Reading] = []
        reads = 0
        vcpus = self._run("QUERY VIRTUAL CPUS")
        reads += 1
        cpu_readings = self._virtual_cpus(vcpus) if vcpus else []
        if not cpu_readings:
            user = self._run("INDICATE USER")
            reads += 1
            if user is not None:
                cpu_readings = self._user_cpus(user)
        readings.extend(cpu_readings)
        load = self._run("INDICATE LOAD")
        reads += 1
        if load is not None:
            readings.extend(self._real_processors(load))
        if self._crypto_at is None or mono_ns - self._crypto_at >= self._crypto_refresh_ns:
            self._crypto = self._crypto_readings()
            self._crypto_at = mono_ns
            reads += 2
        readings.extend(self._crypto)
        return Sample(
            self.name,
            time_us,
            tuple(readings),
            mono_ns=mono_ns,
            config=dict(self._config) if self._config else None,
            reads=reads,
        )

    def sample_gauges(self) -> Sample | None:
        return None

    def close(self) -> None:
        pass

    # -- commands -------------------------------------------------------------------------

    def _run(self, command: str) -> CpResponse | None:
        try:
            response = self._client.run(command)
        except VmcpError as exc:
            # no device or no permission: nothing this source gives can be had
            raise SourceError(str(exc)) from exc
        if response.rc != 0:
            self._warn(f"{command}: CP return code {response.rc}: {response.text.strip()[:80]}")
            return None
        if response.truncated:
            self._warn(f"{command}: response truncated at the largest buffer")
        return response

    # -- readings -------------------------------------------------------------------------

    def _not_understood(self, command: str, other: list[str], leftovers: list[Leftover]) -> None:
        """One warning per distinct line: kept whole, or the part of it not understood."""
        for line in other:
            self._warn(f"{command}: kept line not understood: {line.strip()[:80]}")
        for line, rest in leftovers:
            self._warn(f"{command}: kept text not understood: {rest[:60]!r} in {line.strip()[:80]}")

    def _virtual_cpus(self, response: CpResponse) -> list[Reading]:
        parsed = parse_query_virtual_cpus(response.text)
        self._not_understood("QUERY VIRTUAL CPUS", parsed.other, parsed.leftovers)
        out = []
        for cpu in parsed.cpus:
            attrs = {
                "address_hex": f"{cpu.address:02X}",
                "base": "1" if cpu.base else "0",
                "state": cpu.state,
                "type_source": "vmcp:QUERY VIRTUAL CPUS",
            }
            if cpu.type:
                attrs["type"] = cpu.type
            if cpu.affinity:
                attrs["affinity"] = cpu.affinity
            out.append(Reading(VCPU.name, str(cpu.address), {}, attrs))
        return out

    def _user_cpus(self, response: CpResponse) -> list[Reading]:
        out = []
        parsed = parse_indicate_user(response.text)
        self._not_understood("INDICATE USER", parsed.other, parsed.leftovers)
        for cpu in parsed.cpus:
            attrs = {"address_hex": f"{cpu.address:02X}", "type_source": "vmcp:INDICATE USER"}
            if cpu.type:
                attrs["type"] = cpu.type
            if "CPUAFFIN" in cpu.values:
                attrs["affinity"] = cpu.values["CPUAFFIN"]
            out.append(Reading(VCPU.name, str(cpu.address), {}, attrs))
        return out

    def _real_processors(self, response: CpResponse) -> list[Reading]:
        parsed = parse_indicate_load(response.text)
        self._not_understood("INDICATE LOAD", parsed.other, parsed.leftovers)
        out = []
        for proc in parsed.processors:
            attrs = {"type_source": "vmcp:INDICATE LOAD"}
            if proc.type:
                attrs["type"] = proc.type
            if proc.polarization:
                attrs["polarization"] = proc.polarization
            out.append(Reading(LCPU.name, str(proc.address), {"busy_pct": proc.busy_pct}, attrs))
        return out

    def _crypto_readings(self) -> list[Reading]:
        out: dict[str, Reading] = {}
        for command in ("QUERY VIRTUAL CRYPTO", "QUERY CRYPTO AP"):
            response = self._run(command)
            if response is None:
                continue
            report = parse_crypto(response.text)
            self._not_understood(command, report.other, report.leftovers)
            if report.polling is not None:
                self._config[CFG_CRYPTO_POLLING] = report.polling
                self._config[CFG_CRYPTO_POLLING_SOURCE] = f"CP {command}"
            for entry in report.entries:
                if entry.ap is None or entry.domain is None:
                    continue
                key = f"{entry.ap:02x}.{entry.domain:04x}"
                if key in out:
                    continue  # the guest's own view (QUERY VIRTUAL CRYPTO) wins
                attrs = {"line": entry.line, "query": command}
                if entry.card_type:
                    attrs["card_type"] = entry.card_type
                if entry.keywords:
                    attrs["keywords"] = " ".join(entry.keywords)
                use = next((k for k in entry.keywords if k in ("DEDICATED", "SHARED")), None)
                if use:
                    attrs["use"] = use.lower()
                out[key] = Reading(ZVM_CRYPTO.name, key, {}, attrs)
        return list(out.values())
