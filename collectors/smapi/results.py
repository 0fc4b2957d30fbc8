"""Typed readings of decoded SMAPI outputs: the facts the smapi source and screens use.

Every parser here takes decoded values (plain lists and dicts) and never raises on odd
content: a value it cannot read is ``None`` and a record it cannot read is skipped, with
the reason appended to ``problems``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from esatui.collectors.diag2fc import RECORD_LEN, Diag2fcRecord, parse_record
from esatui.collectors.smapi.keyvalue import integer, parse_pairs, percent, split_entry

# Image_CPU_Query CPU_type; DETAILED_CPU's CPU_TYPE is text already.
VCPU_TYPES = {1: "CP", 2: "IFL", 3: "ZAAP", 4: "ZIIP"}
_TYPE_NAMES = {"CP": "CP", "IFL": "IFL", "ZIIP": "ZIIP", "ZAAP": "ZAAP", "ICF": "ICF"}


def cpu_type_name(raw: str) -> str:
    """A processor type as esatui spells it everywhere (CP, IFL, ZIIP, ZAAP, ICF ...)."""
    word = raw.strip().upper()
    return _TYPE_NAMES.get(word, word)


@dataclass(frozen=True, slots=True)
class SystemInfo:
    """System_Information_Query: what the screen header's machine line shows."""

    vm_version: str | None = None  # "7.1.0"
    vm_service_level: str | None = None  # "1801"
    cms_level: str | None = None
    cpu_id: str | None = None  # "FF01917729640000"
    timezone: str | None = None  # "EDT"
    storage_online: str | None = None  # "4G"
    ipl: str | None = None  # "2019-04-28 13:39:31 EDT"

    @property
    def machine_type(self) -> str | None:
        """Machine type from the CPU id (version, serial, type, format: VVSSSSSSTTTTFFFF)."""
        cpu_id = self.cpu_id or ""
        return cpu_id[8:12] if len(cpu_id) == 16 and cpu_id.isalnum() else None

    @property
    def cpu_serial(self) -> str | None:
        cpu_id = self.cpu_id or ""
        return cpu_id[2:8] if len(cpu_id) == 16 and cpu_id.isalnum() else None


def parse_system_information(strings: Iterable[str]) -> SystemInfo:
    entries: dict[str, dict[str, str]] = {}
    for line in strings:
        key, rest = split_entry(line)
        if key:
            entries.setdefault(key, parse_pairs(rest))
    cp = entries.get("CP_LEVEL", {})
    cms = entries.get("CMS_LEVEL", {})
    ipl = " ".join(
        v for v in (cp.get("IPL_DATE"), cp.get("IPL_TIME"), cp.get("IPL_TIME_ZONE")) if v
    )
    return SystemInfo(
        vm_version=cp.get("VERSION") or None,
        vm_service_level=cp.get("SERVICE_LEVEL") or None,
        cms_level=cms.get("LEVEL") or None,
        cpu_id=entries.get("CPUID", {}).get("ID") or None,
        timezone=entries.get("TIME", {}).get("TIMEZONE") or None,
        storage_online=entries.get("STORAGE", {}).get("ONLINE") or None,
        ipl=ipl or None,
    )


@dataclass(frozen=True, slots=True)
class LogicalCpu:
    """One DETAILED_CPU entry: a logical processor of a visible LPAR."""

    lpar: str
    cpu_id: str
    cpu_type: str
    busy_pct: float | None  # CPU_BUSY_TIME
    lp_overhead_pct: float | None  # CPU_LP_OVERHEAD_TIME
    suspend_pct: float | None  # CPU_SUSPEND_TIME
    lpar_overhead_pct: float | None  # LPAR_OVERHEAD (varies per entry; meaning provisional)
    lpar_load_pct: float | None  # LPAR_LOAD
    lpar_number: int | None
    lpar_status: str | None

    @property
    def key(self) -> str:
        return f"{self.lpar}/{self.cpu_id}"


@dataclass(frozen=True, slots=True)
class PerformanceInfo:
    """System_Performance_Information_Query with DETAILED_CPU=SHOW=YES."""

    my_lpar_name: str | None
    cpu_count: int | None
    cpu_average_pct: float | None
    paging_rate: int | None
    memory_in_use: int | None
    memory_total: int | None
    monitor_rate: str | None
    monitor_interval: str | None
    cpus: tuple[LogicalCpu, ...]
    problems: tuple[str, ...] = ()


def parse_performance_information(strings: Iterable[str]) -> PerformanceInfo:
    top: dict[str, str] = {}
    cpus: list[LogicalCpu] = []
    problems: list[str] = []
    seen: set[str] = set()
    for line in strings:
        key, rest = split_entry(line)
        if key != "DETAILED_CPU":
            top.setdefault(key, rest.strip())
            continue
        pairs = parse_pairs(rest)
        lpar, cpu_id = pairs.get("LPAR_NAME", ""), pairs.get("CPU_ID", "")
        if not lpar or not cpu_id:
            problems.append("DETAILED_CPU entry without LPAR_NAME or CPU_ID skipped")
            continue
        cpu = LogicalCpu(
            lpar=lpar,
            cpu_id=cpu_id,
            cpu_type=cpu_type_name(pairs.get("CPU_TYPE", "")),
            busy_pct=percent(pairs.get("CPU_BUSY_TIME")),
            lp_overhead_pct=percent(pairs.get("CPU_LP_OVERHEAD_TIME")),
            suspend_pct=percent(pairs.get("CPU_SUSPEND_TIME")),
            lpar_overhead_pct=percent(pairs.get("LPAR_OVERHEAD")),
            lpar_load_pct=percent(pairs.get("LPAR_LOAD")),
            lpar_number=integer(pairs.get("LPAR_NUMBER")),
            lpar_status=pairs.get("LPAR_STATUS") or None,
        )
        if cpu.key in seen:
            problems.append(f"duplicate DETAILED_CPU entry {cpu.key} skipped")
            continue
        seen.add(cpu.key)
        cpus.append(cpu)
    return PerformanceInfo(
        my_lpar_name=top.get("MY_LPAR_NAME") or None,
        cpu_count=integer(top.get("CPU_COUNT")),
        cpu_average_pct=percent(top.get("CPU_AVERAGE_USE")),
        paging_rate=integer(top.get("PAGING_RATE")),
        memory_in_use=integer(top.get("MEMORY_IN_USE")),
        memory_total=integer(top.get("MEMORY_TOTAL")),
        monitor_rate=top.get("MONITOR_RATE") or None,
        monitor_interval=top.get("MONITOR_INTERVAL") or None,
        cpus=tuple(cpus),
        problems=tuple(problems),
    )


@dataclass(frozen=True, slots=True)
class GuestRecords:
    """Image_Performance_Query / System_Image_Performance_Query: one DIAG X'2FC' record
    per guest, keyed by the guest name inside the record."""

    records: tuple[Diag2fcRecord, ...]
    problems: tuple[str, ...] = ()


def parse_guest_records(entries: Iterable[dict[str, object]]) -> GuestRecords:
    """From the decoded ``records`` array (each entry's ``record`` holds the raw bytes)."""
    records: list[Diag2fcRecord] = []
    problems: list[str] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        raw = entry.get("record")
        if not isinstance(raw, bytes) or len(raw) < RECORD_LEN:
            size = len(raw) if isinstance(raw, bytes) else 0
            problems.append(f"guest record {i} is {size} bytes, not {RECORD_LEN}: skipped")
            continue
        rec = parse_record(raw)
        if not rec.guest or rec.guest in seen:
            problems.append(f"guest record {i} has an empty or repeated name: skipped")
            continue
        seen.add(rec.guest)
        records.append(rec)
    return GuestRecords(tuple(records), tuple(problems))


@dataclass(frozen=True, slots=True)
class VirtualCpu:
    """One Image_CPU_Query entry."""

    number: int
    cpu_id: str
    base: bool
    status: int  # 1 stopped, 2 check-stopped, 3 operating (IBM); kept as a number
    cpu_type: str | None  # CP, IFL, ZAAP, ZIIP; None for a code IBM does not list


def parse_virtual_cpus(entries: Iterable[dict[str, object]]) -> tuple[VirtualCpu, ...]:
    cpus = []
    for e in entries:
        number, kind, status = e.get("cpu_number"), e.get("cpu_type"), e.get("cpu_status")
        if not isinstance(number, int) or not isinstance(kind, int):
            continue
        cpus.append(
            VirtualCpu(
                number=number,
                cpu_id=str(e.get("cpu_id", "")),
                base=e.get("cpu_base") == 1,
                status=status if isinstance(status, int) else 0,
                cpu_type=VCPU_TYPES.get(kind),
            )
        )
    return tuple(cpus)


@dataclass(frozen=True, slots=True)
class Processor:
    """One System_Processor_Query line, e.g. ``PROCESSOR 00 MASTER IFL`` (provisional)."""

    address: str
    role: str
    cpu_type: str


def parse_processors(entries: Iterable[dict[str, object]]) -> tuple[Processor, ...]:
    """From the decoded ``processors`` array of System_Processor_Query."""
    out = []
    for entry in entries:
        words = str(entry.get("processor_info", "")).split()
        if words and words[0].upper() == "PROCESSOR":
            words = words[1:]
        if len(words) >= 2:
            out.append(Processor(words[0], " ".join(words[1:-1]), cpu_type_name(words[-1])))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class LegacyProcessor:
    """One ``PROC 0000-046% IFL VM`` line of System_Performance_Info_Query."""

    address: str
    busy_pct: float | None
    cpu_type: str
    owner: str


def parse_legacy_procs(procs: Iterable[dict[str, object]]) -> tuple[LegacyProcessor, ...]:
    out = []
    for p in procs:
        usage = p.get("usage")
        out.append(
            LegacyProcessor(
                address=str(p.get("addr", "")),
                busy_pct=float(usage) if isinstance(usage, int) else None,
                cpu_type=cpu_type_name(str(p.get("type", ""))),
                owner=str(p.get("pe", "")),
            )
        )
    return tuple(out)
