"""The hypervisor's crypto arithmetic (docs/MONITOR.md), shared by ESACRYPT, ESAPOLL, ESASSUM.

Everything here is a pure function of one slot's recorded ``crypto`` row (D5R9 deltas over
the slot's measured duration). A value that cannot be computed (a field the record level does
not carry, a division by zero) is ``None``, shown as ``.``, never 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from esatui.db.records import Value
from esatui.db.slots import Slot
from esatui.screens.catalog import Reads
from esatui.screens.common import per_second, ratio
from esatui.screens.model import Level, Threshold, gated_level
from esatui.screens.model import Value as Cell

CRYPTO = "crypto"
CRYPTO_KEY = "system"
PREFER = ("monitor",)

# the D5R9 counters the screens read, in the kind's units (count, µs)
COUNTERS = (
    "virt_nq",
    "real_nq",
    "virt_dq",
    "real_dq",
    "virt_done",
    "real_done",
    "virt_rej",
    "real_rej",
    "vserv_us",
    "rserv_us",
    "hserv_us",
    "nserv_us",
    "dserv_us",
)
CRYPTO_READS = Reads(CRYPTO, COUNTERS, ("layout", "record_length"))


@dataclass(frozen=True)
class CryptoDeltas:
    """One interval (or bucket, or range) of D5R9: counter deltas and the measured duration,
    and the lengths of the records they came from."""

    values: Mapping[str, Value]
    duration_us: int
    flags: int = 0
    lengths: frozenset[int] = frozenset()

    def get(self, name: str) -> Value:
        return self.values.get(name)


def record_length(attrs: Mapping[str, str]) -> int | None:
    """The D5R9 record's length: as recorded, else the length of the layout used
    (``D5R9/360``, recordings made before the length was kept)."""
    raw = attrs.get("record_length") or attrs.get("layout", "").rpartition("/")[2]
    return int(raw) if raw.isdigit() else None


def crypto_deltas(slot: Slot) -> CryptoDeltas | None:
    """The slot's D5R9 deltas, or ``None`` when no crypto record was recorded in it."""
    found = slot.get(CRYPTO, PREFER)
    entity = found.rows.get(CRYPTO_KEY) if found else None
    if found is None or entity is None:
        return None
    length = record_length(entity.attrs)
    lengths = frozenset() if length is None else frozenset((length,))
    return CryptoDeltas(entity.values, found.duration_us, entity.flags | found.flags, lengths)


NO_RECORDS = "No crypto counter records (D5R9) in this range."


def combine(parts: Iterable[CryptoDeltas]) -> CryptoDeltas | None:
    """Several intervals as one: counters summed, durations added (the queue gauge dropped).

    A counter missing from any part is missing from the whole (never a partial sum)."""
    items = list(parts)
    if not items:
        return None
    values: dict[str, Value] = {}
    for name in COUNTERS:
        got = [p.get(name) for p in items]
        if all(isinstance(v, int | float) for v in got):
            values[name] = sum(v for v in got if isinstance(v, int | float))
    flags = 0
    for p in items:
        flags |= p.flags
    lengths = frozenset(n for p in items for n in p.lengths)
    return CryptoDeltas(values, sum(p.duration_us for p in items), flags, lengths)


def ms_per_op(serv_us: Value, ops: Value) -> float | None:
    """Service time per operation, ms: Δ time (µs) / Δ operations / 1000."""
    r = ratio(serv_us, ops)
    return None if r is None else r / 1000


def wait_beyond_ms(
    vserv_us: Value, virt_nq: Value, rserv_us: Value, real_nq: Value
) -> float | None:
    """What the guests wait beyond CP's own NQ-to-DQ time, ms: the two NQ to DQ times
    per operation, virtual less real."""
    v, r = ms_per_op(vserv_us, virt_nq), ms_per_op(rserv_us, real_nq)
    return None if v is None or r is None else v - r


def ms_op_virt(d: CryptoDeltas) -> float | None:
    """Guest NQ to DQ per virtual NQ, ms: ΔCRYVSERV / ΔCRYNOVNQ / 1000."""
    return ms_per_op(d.get("vserv_us"), d.get("virt_nq"))


def ms_op_real(d: CryptoDeltas) -> float | None:
    """CP NQ to DQ per real NQ, ms: ΔCRYRSERV / ΔCRYNOFNQ / 1000."""
    return ms_per_op(d.get("rserv_us"), d.get("real_nq"))


def poll_ms(d: CryptoDeltas) -> float | None:
    """What the guests wait beyond CP's own NQ-to-DQ time, ms."""
    return wait_beyond_ms(d.get("vserv_us"), d.get("virt_nq"), d.get("rserv_us"), d.get("real_nq"))


def dq_per_op_virt(d: CryptoDeltas) -> float | None:
    return ratio(d.get("virt_dq"), d.get("virt_nq"))


def dq_per_op_real(d: CryptoDeltas) -> float | None:
    return ratio(d.get("real_dq"), d.get("real_nq"))


def rate(d: CryptoDeltas, name: str) -> float | None:
    return per_second_of(d.duration_us, d.get(name))


def per_second_of(duration_us: int, delta: Value) -> float | None:
    """A counter's delta per second of the interval (:func:`rate`, a row column's way round:
    the duration first)."""
    return per_second(delta, duration_us)


def unsuccessful_dq_s(d: CryptoDeltas) -> float | None:
    """Guest dequeues that found no reply, per second: (ΔCRYNOVPR − ΔCRYNOVPC) / dt."""
    return unsuccessful_per_s(d.duration_us, d.get("virt_dq"), d.get("virt_done"))


def unsuccessful_per_s(duration_us: int, virt_dq: Value, virt_done: Value) -> float | None:
    """:func:`unsuccessful_dq_s` of the two counters. Both fields are provisional; if they
    say fewer dequeues than completions the reading is wrong somewhere, and the screen shows
    ``.`` rather than a negative rate."""
    if not isinstance(virt_dq, int | float) or not isinstance(virt_done, int | float):
        return None
    if virt_dq < virt_done:
        return None
    return per_second(virt_dq - virt_done, duration_us)


def excess_dq_s(d: CryptoDeltas, side: str) -> float | None:
    """Dequeues that found no reply, per second, for ``side`` ``virt`` (the guests) or
    ``real`` (CP): dequeues minus completions, or minus NQs where completions were not
    recorded; ``None`` where the counters say fewer dequeues than that."""
    dq = d.get(f"{side}_dq")
    done = d.get(f"{side}_done")
    if not isinstance(done, int | float):
        done = d.get(f"{side}_nq")
    if not isinstance(dq, int | float) or not isinstance(done, int | float) or dq < done:
        return None
    return per_second(dq - done, d.duration_us)


def polling_levels(
    d: CryptoDeltas, values: Mapping[str, Cell], thresholds: Mapping[str, Threshold]
) -> dict[str, Level]:
    """Highlights of the polling columns in ``values``: a DQ/operation ratio only where its
    unsuccessful dequeues cost (``dq_per_op`` gated by ``unsucc_dq_s``) and those only where
    they are many an operation too (``unsucc_dq_s`` gated by the guests' ``dq_per_op``: a
    busy system makes one an operation by design), DSERV's share only where the wait itself
    matters (``dserv_pct`` gated by ``dserv_us``), the CPU an operation costs only where the
    guests' polling does (``busy_per_kvnq`` gated by ``unsucc_dq_s``)."""
    levels: dict[str, Level] = {}
    for side in ("virt", "real"):
        cid = f"dq_per_op_{side}"
        if cid in values:
            levels[cid] = gated_level(thresholds, "dq_per_op", values[cid], 2, excess_dq_s(d, side))
    if "unsucc_dq_s" in values:
        unsucc, ratio = values["unsucc_dq_s"], dq_per_op_virt(d)
        levels["unsucc_dq_s"] = gated_level(thresholds, "unsucc_dq_s", unsucc, 1, ratio)
    if "dserv_pct" in values:
        dserv = service_times(d).dserv
        levels["dserv_pct"] = gated_level(thresholds, "dserv_pct", values["dserv_pct"], 1, dserv)
    if "total_busy_per_kvnq" in values:  # what an operation costs, where polling costs
        busy = values["total_busy_per_kvnq"]
        unsucc = values.get("unsucc_dq_s")
        levels["total_busy_per_kvnq"] = gated_level(thresholds, "busy_per_kvnq", busy, 4, unsucc)
    return levels


@dataclass(frozen=True)
class ServiceTimes:
    """Seed 002's service-time split, µs per virtual NQ (VNQ).

    VSERV: guest request complete → guest starts to take the reply; NSERV: → CP hands it to
    the adapter; RSERV: adapter → CP holds the reply; HSERV ≈ NSERV + RSERV; DSERV: CP holds
    the reply → the guest takes it."""

    vnq: int | None
    vserv: float | None
    hserv: float | None
    nserv: float | None
    rserv: float | None
    dserv: float | None

    @property
    def dserv_pct(self) -> float | None:
        return dserv_share(self.dserv, self.vserv)


def dserv_share(dserv: float | None, vserv: float | None) -> float | None:
    """DSERV as a percentage of VSERV (both per VNQ)."""
    if dserv is None or not vserv:
        return None
    return 100.0 * dserv / vserv


SPLIT = ("hserv_us", "nserv_us", "dserv_us")


def split_recorded(d: CryptoDeltas) -> bool:
    """Whether HSERV, NSERV and DSERV were kept in this interval (:func:`split_kept`)."""
    return split_kept(d.get("hserv_us"), d.get("nserv_us"), d.get("dserv_us"), d.get("vserv_us"))


def split_kept(hserv_us: Value, nserv_us: Value, dserv_us: Value, vserv_us: Value) -> bool:
    """Whether an interval's HSERV, NSERV and DSERV were kept.

    A 112- or 128-byte record lacks them; a 360-byte record from a CP without the
    accumulators (before APAR VM66534) carries them as zeros. Guest requests that took time
    (ΔCRYVSERV > 0) while all three stood still mean "not kept", never "no time"."""
    split = (hserv_us, nserv_us, dserv_us)
    if not all(isinstance(v, int | float) for v in split):
        return False
    return any(split) or not (isinstance(vserv_us, int | float) and vserv_us > 0)


# what :func:`split_kept` reads, with the VNQs: the fields of a split time per VNQ
KEPT = ("virt_nq", "hserv_us", "nserv_us", "dserv_us", "vserv_us")


def split_per_vnq(
    value: Value, virt_nq: Value, hserv_us: Value, nserv_us: Value, dserv_us: Value, vserv_us: Value
) -> float | None:
    """One of HSERV, NSERV, DSERV (``value``) per VNQ; ``None`` where the split was not
    kept (:data:`KEPT` after ``value``: what :func:`service_times` gives for it)."""
    return kept_per_vnq(value, virt_nq, split_kept(hserv_us, nserv_us, dserv_us, vserv_us))


def kept_per_vnq(value: Value, virt_nq: Value, kept: bool) -> float | None:
    """A split time per VNQ where the split was kept (:func:`split_kept`), else ``None``."""
    return ratio(value, virt_nq) if kept else None


def dserv_pct(
    virt_nq: Value, hserv_us: Value, nserv_us: Value, dserv_us: Value, vserv_us: Value
) -> float | None:
    """``service_times(...).dserv_pct`` of the :data:`KEPT` fields."""
    dserv = split_per_vnq(dserv_us, virt_nq, hserv_us, nserv_us, dserv_us, vserv_us)
    return dserv_share(dserv, ratio(vserv_us, virt_nq))


def hserv_or_parts(hserv: float | None, nserv: float | None, rserv: float | None) -> float | None:
    """HSERV per VNQ: the accumulator where kept, else NSERV + RSERV (seed 002: "RSERV plus
    NSERV is approximately equal to HSERV")."""
    if hserv is not None:
        return hserv
    if nserv is None or rserv is None:
        return None
    return nserv + rserv


def hserv_per_vnq(
    virt_nq: Value,
    hserv_us: Value,
    nserv_us: Value,
    dserv_us: Value,
    vserv_us: Value,
    rserv_us: Value,
) -> float | None:
    """:func:`hserv_or_parts` of the :data:`KEPT` fields and RSERV."""
    kept = split_kept(hserv_us, nserv_us, dserv_us, vserv_us)
    hserv, nserv = kept_per_vnq(hserv_us, virt_nq, kept), kept_per_vnq(nserv_us, virt_nq, kept)
    return hserv_or_parts(hserv, nserv, ratio(rserv_us, virt_nq))


def service_times(d: CryptoDeltas) -> ServiceTimes:
    vnq = d.get("virt_nq")
    kept = split_recorded(d)

    def per_vnq(name: str) -> float | None:
        return kept_per_vnq(d.get(name), vnq, kept) if name in SPLIT else ratio(d.get(name), vnq)

    return ServiceTimes(
        vnq=vnq if isinstance(vnq, int) else None,
        vserv=per_vnq("vserv_us"),
        hserv=per_vnq("hserv_us"),
        nserv=per_vnq("nserv_us"),
        rserv=per_vnq("rserv_us"),
        dserv=per_vnq("dserv_us"),
    )


# --- which z/VM the records came from ------------------------------------------------------

# CRYDSERV, the last of the accumulators APAR VM66534 added, ends at +152 of MRPRCAPC: a
# record at least this long carries NSERV, HSERV and DSERV (IBM's 7.2 page: 360 bytes; 5.x:
# 112; 7.1: 128; docs/MONITOR.md).
SPLIT_MIN_LENGTH = 152
POLLING_KEY = "cp_crypto_polling"  # config: "on" or "off", from a source that says so
POLLING_SOURCE_KEY = "cp_crypto_polling_source"
LEVEL_KEY = "zvm_level"


@dataclass(frozen=True)
class RecordFacts:
    """What the recording says about the z/VM it came from: its level (D1R4), the D5R9
    lengths, and CP's crypto polling mode where a source told it."""

    level: str
    lengths: frozenset[int]
    polling: str | None = None  # "on" / "off": SET CRYPTO POLLING, as a source told
    polling_source: str = ""
    kept: bool = True  # NSERV, HSERV, DSERV moved where the record has them

    @classmethod
    def of(cls, config: Mapping[str, str], d: CryptoDeltas | None) -> RecordFacts:
        polling = config.get(POLLING_KEY, "").lower()
        return cls(
            config.get(LEVEL_KEY, ""),
            d.lengths if d is not None else frozenset(),
            polling if polling in ("on", "off") else None,
            config.get(POLLING_SOURCE_KEY, ""),
            d is None or split_recorded(d),
        )

    @property
    def ptf(self) -> bool | None:
        """Whether CP has PTF UM35974 (APAR VM66534): the records carry and keep its D5R9
        fields, or a source told the polling mode, which only the PTF has. None when the
        records are mixed, do not keep the fields, or are unknown."""
        if self.polling is not None:
            return True
        if not self.lengths:
            return None
        with_split = {n >= SPLIT_MIN_LENGTH for n in self.lengths}
        if len(with_split) != 1:
            return None
        ptf = with_split.pop()
        return None if ptf and not self.kept else ptf

    def cp_mode(self) -> str:
        """CP's crypto polling mode, and how esatui knows it."""
        if self.polling is not None:
            source = f" ({self.polling_source})" if self.polling_source else ""
            return f"SET CRYPTO POLLING {self.polling.upper()}{source}"
        if self.ptf is False:
            return "NQ and DQ polling (pre-PTF, inferred)"
        if self.ptf:
            return "SET CRYPTO POLLING ON or OFF, not known"
        return "mode unknown"

    def note(self) -> str:
        """One line: the level and record length the intervals came from, what they lack,
        and CP's crypto polling mode."""
        level = f"z/VM {self.level}, " if self.level else ""
        sizes = " and ".join(str(n) for n in sorted(self.lengths)) or "?"
        if not self.lengths:
            fields = "length not recorded"
        elif max(self.lengths) < SPLIT_MIN_LENGTH:
            fields = "no NSERV/HSERV/DSERV (before APAR VM66534)"
        elif min(self.lengths) < SPLIT_MIN_LENGTH:
            fields = "NSERV/HSERV/DSERV only in the longer ones"
        elif not self.kept:
            fields = "NSERV/HSERV/DSERV fields, not kept"
        else:
            fields = "NSERV/HSERV/DSERV (APAR VM66534)"
        return f"Records: {level}D5R9 {sizes} bytes: {fields}. CP crypto: {self.cp_mode()}."
