"""Parsers for the CP command responses esatui uses. None of them ever raises on odd input:
what a parser does not understand it keeps in ``other`` (raw lines) for the docs and tests.

How sure each one is (details and sources in docs/ZCRYPT.md):

- INDICATE LOAD, INDICATE USER: verified against real captures (z/VM 6.3);
- QUERY VIRTUAL CPUS: the line layout ``CPU nn  ID  cpuid [(BASE)] [STOPPED|CHECK-STOP]
  type [CPUAFF ON|OFF]`` is from the CP Commands and Utilities Reference and real output
  relayed by IBM's xCAT documentation (z/VM 6.1);
- QUERY CRYPTO AP, QUERY VIRTUAL CRYPTO: no public capture; tolerant guesswork that picks
  AP numbers, domains, card types and a few keywords from each line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from esatui.collectors import cputype

POLARIZATION = {
    "HZ": "horizontal",
    "VH": "vertical:high",
    "VM": "vertical:medium",
    "VL": "vertical:low",
}

_CPU_TYPES = {"CP", "IFL", "ZIIP", "ZAAP", "ICF"}

# --- INDICATE LOAD -----------------------------------------------------------------------

_PROC = re.compile(r"PROC\s+([0-9A-F]{4})-\s*(\d{1,3})%(?:\s+([A-Z]{2,4})(?:\s+(HZ|VH|VM|VL)\b)?)?")
_AVGPROC = re.compile(r"AVGPROC-\s*(\d{1,3})%\s+(\d+)")
_PAGING = re.compile(r"PAGING-\s*(\d+)/SEC")
_STORAGE = re.compile(r"STORAGE-\s*(\d+)%")
_MDC = re.compile(r"MDC READS-\s*(\d+)/SEC\s+WRITES-\s*(\d+)/SEC\s+HIT RATIO-\s*(\d+)%")
_QUEUE = re.compile(r"\b(Q[0-3]|E[1-3])-\s*(\d+)\((\d+)\)")
_SIMPLE = re.compile(r"\b(DORMANT|LIMITED|EXPAN)-\s*(\d+)")


@dataclass(frozen=True, slots=True)
class RealProcessor:
    address: int
    busy_pct: int
    type: str | None  # CP, IFL, zIIP ... (absent on old z/VM levels)
    polarization: str | None  # horizontal, vertical:high ...


@dataclass
class IndicateLoad:
    avgproc_pct: int | None = None
    processors_online: int | None = None
    paging_per_s: int | None = None
    storage_pct: int | None = None
    mdc: tuple[int, int, int] | None = None  # reads/s, writes/s, hit ratio %
    queues: dict[str, tuple[int, int]] = field(default_factory=dict)  # Q1 -> (users, loading)
    counts: dict[str, int] = field(default_factory=dict)  # DORMANT, LIMITED, EXPAN (last)
    processors: list[RealProcessor] = field(default_factory=list)
    other: list[str] = field(default_factory=list)


def parse_indicate_load(text: str) -> IndicateLoad:
    out = IndicateLoad()
    for line in _lines(text):
        upper = line.upper()
        understood = False
        for p in _PROC.finditer(upper):
            understood = True
            kind = cputype.normalize(p.group(3)) if p.group(3) else None
            pol = POLARIZATION.get(p.group(4) or "")
            out.processors.append(RealProcessor(int(p.group(1), 16), int(p.group(2)), kind, pol))
        if avg := _AVGPROC.search(upper):
            out.avgproc_pct, out.processors_online = int(avg.group(1)), int(avg.group(2))
            understood = True
        if paging := _PAGING.search(upper):
            out.paging_per_s = int(paging.group(1))
            understood = True
        if storage := _STORAGE.search(upper):
            out.storage_pct = int(storage.group(1))
            understood = True
        if mdc := _MDC.search(upper):
            out.mdc = (int(mdc.group(1)), int(mdc.group(2)), int(mdc.group(3)))
            understood = True
        for q in _QUEUE.finditer(upper):
            out.queues[q.group(1)] = (int(q.group(2)), int(q.group(3)))
            understood = True
        for c in _SIMPLE.finditer(upper):
            out.counts[c.group(1)] = int(c.group(2))
            understood = True
        if not understood and not _is_noise(upper):
            out.other.append(line)
    return out


# --- INDICATE USER -----------------------------------------------------------------------

_KV = re.compile(r"([A-Z][A-Z0-9]*)=(\S+)")
_USER_CPU = re.compile(r"^CPU\s+([0-9A-F]{1,2}):\s*(.*)$")


@dataclass
class UserCpu:
    address: int
    type: str | None
    values: dict[str, str] = field(default_factory=dict)  # CTIME, VTIME, TTIME, IO ...


@dataclass
class IndicateUser:
    values: dict[str, str] = field(default_factory=dict)  # USERID, STOR, RES, WS ...
    cpus: list[UserCpu] = field(default_factory=list)
    other: list[str] = field(default_factory=list)


def parse_indicate_user(text: str) -> IndicateUser:
    out = IndicateUser()
    current: UserCpu | None = None
    for line in _lines(text):
        upper = line.upper().strip()
        m = _USER_CPU.match(upper)
        if m:
            current = UserCpu(int(m.group(1), 16), None)
            out.cpus.append(current)
            rest = m.group(2)
        elif current is not None and line[:1] == " ":
            rest = upper  # continuation of the CPU block
        else:
            current = None
            rest = upper.removeprefix("PAGES:").strip()
        pairs = _KV.findall(rest)
        if not pairs:
            if not _is_noise(upper):
                out.other.append(line)
            continue
        target = out.values if current is None else current.values
        for key, value in pairs:
            target[key] = value
        if current is not None and "TYPE" in current.values:
            current.type = cputype.normalize(current.values["TYPE"])
    return out


# --- QUERY VIRTUAL CPUS ------------------------------------------------------------------

_VCPU = re.compile(r"^CPU\s+([0-9A-F]{1,2})\s+ID\s+([0-9A-F]{6,16})\b\s*(.*)$")


@dataclass(frozen=True, slots=True)
class VirtualCpu:
    address: int
    cpuid: str
    type: str | None
    base: bool = False
    state: str = "operating"  # operating | stopped | check-stop
    affinity: str | None = None  # ON | OFF | SUPPRESSED (CPUAFF)
    extra: tuple[str, ...] = ()  # tokens not understood


@dataclass
class VirtualCpus:
    cpus: list[VirtualCpu] = field(default_factory=list)
    other: list[str] = field(default_factory=list)


def parse_query_virtual_cpus(text: str) -> VirtualCpus:
    out = VirtualCpus()
    for line in _lines(text):
        upper = line.upper().strip()
        m = _VCPU.match(upper)
        if not m:
            if not _is_noise(upper):
                out.other.append(line)
            continue
        tokens = m.group(3).split()
        kind: str | None = None
        base = False
        state = "operating"
        affinity: str | None = None
        extra: list[str] = []
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            if tok in ("(BASE)", "BASE", "MASTER", "(MASTER)"):
                base = True
            elif tok == "STOPPED":
                state = "stopped"
            elif tok in ("CHECK-STOP", "CHECK-STOPPED", "CHKSTOP"):
                state = "check-stop"
            elif tok in _CPU_TYPES and kind is None:
                kind = cputype.normalize(tok)
            elif tok.startswith("CPUAFF") and i + 1 < len(tokens):
                affinity = tokens[i + 1]
                i += 1
            else:
                extra.append(tok)
            i += 1
        out.cpus.append(
            VirtualCpu(int(m.group(1), 16), m.group(2), kind, base, state, affinity, tuple(extra))
        )
    return out


# --- QUERY CRYPTO AP / QUERY VIRTUAL CRYPTO (provisional) -----------------------------------

_AP = re.compile(r"\bAPS?\s+([0-9A-F]{1,3})\b")
_DOMAIN = re.compile(r"\b(?:DOMAIN|QUEUE|DOM)S?\s*[=:]?\s*([0-9A-F]{1,4})\b")
_CARD_TYPE = re.compile(r"\b(CEX\d+[ACPS]?|PCI[A-Z]{2,4}|CRYPTO\s+EXPRESS\s*\d+[ACPS]?)\b")
_KEYWORDS = (
    "DEDICATED",
    "SHARED",
    "APVIRT",
    "APDED",
    "ONLINE",
    "OFFLINE",
    "INSTALLED",
    "AVAILABLE",
    "FREE",
    "INTERRUPTS",
    "POLLING",
)


@dataclass(frozen=True, slots=True)
class CryptoEntry:
    ap: int | None
    domain: int | None
    card_type: str | None
    keywords: tuple[str, ...]
    line: str


@dataclass
class CryptoReport:
    entries: list[CryptoEntry] = field(default_factory=list)
    other: list[str] = field(default_factory=list)


def parse_crypto(text: str) -> CryptoReport:
    """QUERY CRYPTO AP / QUERY VIRTUAL CRYPTO: one entry per line that names an AP."""
    out = CryptoReport()
    for line in _lines(text):
        upper = line.upper().strip()
        ap = _AP.search(upper)
        if ap is None:
            if not _is_noise(upper):
                out.other.append(line)
            continue
        dom = _DOMAIN.search(upper)
        card = _CARD_TYPE.search(upper)
        words = tuple(k for k in _KEYWORDS if re.search(rf"\b{k}\b", upper))
        out.entries.append(
            CryptoEntry(
                int(ap.group(1), 16),
                int(dom.group(1), 16) if dom else None,
                card.group(1).replace(" ", "") if card else None,
                words,
                line.strip(),
            )
        )
    return out


parse_query_crypto_ap = parse_crypto
parse_query_virtual_crypto = parse_crypto


# --- helpers ---------------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def _is_noise(upper: str) -> bool:
    """The echoed command and CMS's ``Ready;`` line of console captures."""
    return upper.startswith(("READY;", "READY(")) or upper.strip() in (
        "IND LOAD",
        "IND USER",
        "INDICATE LOAD",
        "INDICATE USER",
        "Q V CPUS",
        "QUERY VIRTUAL CPUS",
    )
