"""Parsers for the CP command responses esatui uses. None of them ever raises on odd input,
and none drops what it does not understand: every result keeps the lines it could not read
at all in ``other`` and, for lines it read only in part, the text left over in ``leftovers``
(``(line, leftover)``), so the source can warn once per distinct line and the docs and tests
can see it. A line is never "understood" because one field in it was.

How sure each one is (details and sources in docs/ZCRYPT.md):

- INDICATE LOAD: a real z/VM 6.3 capture, and the forms other tools relay from older levels
  (one-line queue summaries without the loading counts, ``AVGPROC-027% 0017``, the
  ``XSTORE``/``MIGRATE`` and ``STORAGE``/``STEAL`` lines of the expanded-storage era,
  processor lines without type or polarization);
- INDICATE USER: a real z/VM 6.3 capture; values run to the next ``KEY=`` (``IPLSYS=DEV 0190``);
- QUERY VIRTUAL CPUS: the line layout ``CPU nn  ID  cpuid [(BASE)] [STOPPED|CHECK-STOP]
  type [CPUAFF ON|OFF]`` is from the CP Commands and Utilities Reference and real output
  relayed by IBM's xCAT documentation (z/VM 6.1);
- QUERY CRYPTO AP, QUERY VIRTUAL CRYPTO: no public capture; tolerant guesswork that picks
  AP numbers, domains, card types, a few keywords and CP's crypto polling mode (``POLLING
  ON|OFF``, from the PTF of APAR VM66534 on) from each line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from esatui.collectors import cputype

POLARIZATION = {
    "HZ": "horizontal",
    "VH": "vertical:high",
    "VM": "vertical:medium",
    "VL": "vertical:low",
}

_CPU_TYPES = {"CP", "IFL", "ZIIP", "ZAAP", "ICF"}

Leftover = tuple[str, str]  # (the line, the text in it that was not understood)


def _rest(line: str, spans: Iterable[tuple[int, int]]) -> str:
    """``line`` without the ``spans`` understood, blanks collapsed."""
    keep = []
    pos = 0
    for start, end in sorted(spans):
        if start > pos:
            keep.append(line[pos:start])
        pos = max(pos, end)
    keep.append(line[pos:])
    return " ".join(" ".join(keep).split())


# --- INDICATE LOAD -----------------------------------------------------------------------

# A processor: "PROC 0001-012% IFL  VM"; old levels print neither type nor polarization
_PROC = re.compile(
    r"\bPROC\s+([0-9A-F]{4})-\s*(\d{1,3})%(?:\s+(?!PROC\b)([A-Z]{2,4})\b(?:\s+(HZ|VH|VM|VL)\b)?)?"
)
_AVGPROC = re.compile(r"\bAVGPROC-\s*(\d{1,3})%(?:\s+(\d+))?")
_MDC = re.compile(r"\bMDC READS-\s*(\d+)/SEC\s+WRITES-\s*(\d+)/SEC\s+HIT RATIO-\s*(\d+)%")
# rates and percentages of the system lines, by name (PAGING, XSTORE, MIGRATE: per second;
# STORAGE, STEAL: percent), kept as CP prints them
_RATE = re.compile(r"\b(PAGING|XSTORE|MIGRATE)-\s*(\d+)/SEC")
_PERCENT = re.compile(r"\b(STORAGE|STEAL)-\s*(\d+)%")
# dispatch (Q0-Q3) and eligible (E1-E3) lists: users, and (since z/VM 5) those loading
_QUEUE = re.compile(r"\b(Q[0-3]|E[1-3])-\s*(\d+)(?:\((\d+)\))?")
_EXPAN = re.compile(r"\bEXPAN-\s*(\d+)")
_COUNT = re.compile(r"\b(DORMANT|LIMITED)-\s*(\d+)")


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
    rates: dict[str, int] = field(default_factory=dict)  # PAGING, XSTORE, MIGRATE: per second
    percents: dict[str, int] = field(default_factory=dict)  # STORAGE, STEAL
    queues: dict[str, tuple[int, int | None]] = field(
        default_factory=dict
    )  # Q1 -> (users, loading)
    expansion: dict[str, int] = field(default_factory=dict)  # EXPAN of the queue it follows
    counts: dict[str, int] = field(default_factory=dict)  # DORMANT, LIMITED
    processors: list[RealProcessor] = field(default_factory=list)
    other: list[str] = field(default_factory=list)
    leftovers: list[Leftover] = field(default_factory=list)


def parse_indicate_load(text: str) -> IndicateLoad:
    out = IndicateLoad()
    for line in _lines(text):
        upper = line.upper()
        if _is_noise(upper):
            continue
        spans: list[tuple[int, int]] = []
        for p in _PROC.finditer(upper):
            spans.append(p.span())
            kind = cputype.normalize(p.group(3)) if p.group(3) else None
            pol = POLARIZATION.get(p.group(4) or "")
            out.processors.append(RealProcessor(int(p.group(1), 16), int(p.group(2)), kind, pol))
        if avg := _AVGPROC.search(upper):
            spans.append(avg.span())
            out.avgproc_pct = int(avg.group(1))
            out.processors_online = int(avg.group(2)) if avg.group(2) else None
        if mdc := _MDC.search(upper):
            spans.append(mdc.span())
            out.mdc = (int(mdc.group(1)), int(mdc.group(2)), int(mdc.group(3)))
        for r in _RATE.finditer(upper):
            spans.append(r.span())
            out.rates[r.group(1)] = int(r.group(2))
        for pc in _PERCENT.finditer(upper):
            spans.append(pc.span())
            out.percents[pc.group(1)] = int(pc.group(2))
        queues = list(_QUEUE.finditer(upper))
        for q in queues:
            spans.append(q.span())
            loading = int(q.group(3)) if q.group(3) is not None else None
            out.queues[q.group(1)] = (int(q.group(2)), loading)
        for x in _EXPAN.finditer(upper):
            owner = [q.group(1) for q in queues if q.end() <= x.start()]
            if owner:  # an expansion factor belongs to the queue printed before it
                spans.append(x.span())
                out.expansion[owner[-1]] = int(x.group(1))
        for c in _COUNT.finditer(upper):
            spans.append(c.span())
            out.counts[c.group(1)] = int(c.group(2))
        _keep(out.other, out.leftovers, line, spans)
    out.paging_per_s = out.rates.get("PAGING")
    out.storage_pct = out.percents.get("STORAGE")
    return out


def _keep(
    other: list[str], leftovers: list[Leftover], line: str, spans: list[tuple[int, int]]
) -> None:
    """Keep ``line`` whole if nothing in it was understood, else what was left over."""
    if not spans:
        other.append(line)
        return
    rest = _rest(line, spans)
    if rest:
        leftovers.append((line, rest))


# --- INDICATE USER -----------------------------------------------------------------------

_KEY = re.compile(r"\b([A-Z][A-Z0-9]*)=")
_USER_CPU = re.compile(r"^CPU\s+([0-9A-F]{1,2}):")
_PREFIXES = ("PAGES:",)


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
    leftovers: list[Leftover] = field(default_factory=list)


def _key_values(upper: str, start: int) -> tuple[list[tuple[str, str]], int]:
    """``KEY=value`` pairs from ``start`` on (a value runs to the next key: ``IPLSYS=DEV
    0190``), and where the first key begins."""
    keys = [m for m in _KEY.finditer(upper) if m.start() >= start]
    if not keys:
        return [], len(upper)
    pairs = [
        (m.group(1), upper[m.end() : nxt.start() if nxt else len(upper)].strip())
        for m, nxt in zip(keys, [*keys[1:], None], strict=True)
    ]
    return pairs, keys[0].start()


def parse_indicate_user(text: str) -> IndicateUser:
    out = IndicateUser()
    current: UserCpu | None = None
    for line in _lines(text):
        upper = line.upper()
        stripped = upper.strip()
        if _is_noise(stripped):
            continue
        begin = len(upper) - len(upper.lstrip())
        m = _USER_CPU.match(stripped)
        if m:
            current = UserCpu(int(m.group(1), 16), None)
            out.cpus.append(current)
            begin += m.end()
        elif current is None or line[:1] != " ":
            current = None  # a continuation of a CPU block is indented
            for prefix in _PREFIXES:
                if stripped.startswith(prefix):
                    begin += len(prefix)
        pairs, first = _key_values(upper, begin)
        if not pairs:
            if current is None or not m:
                out.other.append(line)
            continue
        lead = upper[begin:first].strip()
        if lead:
            out.leftovers.append((line, lead))
        target = out.values if current is None else current.values
        target.update(pairs)
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
    leftovers: list[Leftover] = field(default_factory=list)


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
        if extra:
            out.leftovers.append((line, " ".join(extra)))
        out.cpus.append(
            VirtualCpu(int(m.group(1), 16), m.group(2), kind, base, state, affinity, tuple(extra))
        )
    return out


# --- QUERY CRYPTO AP / QUERY VIRTUAL CRYPTO (provisional) -----------------------------------

_AP = re.compile(r"\bAPS?\s+([0-9A-F]{1,3})\b")
_DOMAIN = re.compile(r"\b(?:DOMAIN|QUEUE|DOM)S?\s*[=:]?\s*([0-9A-F]{1,4})\b")
_CARD_TYPE = re.compile(r"\b(CEX\d+[ACPS]?|PCI[A-Z]{2,4}|CRYPTO\s+EXPRESS\s*\d+[ACPS]?)\b")
# CP's crypto polling mode (SET CRYPTO POLLING ON|OFF, PTF UM35974): "POLLING ON",
# "Crypto polling is OFF", "POLLING: ON"
_POLLING = re.compile(r"\bPOLLING\b\s*(?:IS\s+|[:=]\s*)?(ON|OFF)\b")
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
    line: str  # the whole line, kept: the format is not publicly captured


@dataclass
class CryptoReport:
    entries: list[CryptoEntry] = field(default_factory=list)
    polling: str | None = None  # "on" / "off": CP's crypto polling mode, where a line says it
    other: list[str] = field(default_factory=list)
    leftovers: list[Leftover] = field(default_factory=list)  # none: entries keep their line


def parse_crypto(text: str) -> CryptoReport:
    """QUERY CRYPTO AP / QUERY VIRTUAL CRYPTO: one entry per line that names an AP."""
    out = CryptoReport()
    for line in _lines(text):
        upper = line.upper().strip()
        poll = _POLLING.search(upper)
        if poll is not None:
            out.polling = poll.group(1).lower()
        ap = _AP.search(upper)
        if ap is None:
            if poll is None and not _is_noise(upper):
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
    return upper.strip().startswith(("READY;", "READY(")) or upper.strip() in (
        "IND",
        "IND LOAD",
        "IND USER",
        "INDICATE",
        "INDICATE LOAD",
        "INDICATE USER",
        "Q V CPUS",
        "QUERY VIRTUAL CPUS",
    )
