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
CRYPTO_READS = Reads(CRYPTO, COUNTERS)


@dataclass(frozen=True)
class CryptoDeltas:
    """One interval (or bucket, or range) of D5R9: counter deltas and the measured duration."""

    values: Mapping[str, Value]
    duration_us: int
    flags: int = 0

    def get(self, name: str) -> Value:
        return self.values.get(name)


def crypto_deltas(slot: Slot) -> CryptoDeltas | None:
    """The slot's D5R9 deltas, or ``None`` when no crypto record was recorded in it."""
    found = slot.get(CRYPTO, PREFER)
    entity = found.rows.get(CRYPTO_KEY) if found else None
    if found is None or entity is None:
        return None
    return CryptoDeltas(entity.values, found.duration_us, entity.flags | found.flags)


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
    return CryptoDeltas(values, sum(p.duration_us for p in items), flags)


def ms_op_virt(d: CryptoDeltas) -> float | None:
    """Guest NQ to DQ per virtual NQ, ms: ΔCRYVSERV / ΔCRYNOVNQ / 1000."""
    r = ratio(d.get("vserv_us"), d.get("virt_nq"))
    return None if r is None else r / 1000


def ms_op_real(d: CryptoDeltas) -> float | None:
    """CP NQ to DQ per real NQ, ms: ΔCRYRSERV / ΔCRYNOFNQ / 1000."""
    r = ratio(d.get("rserv_us"), d.get("real_nq"))
    return None if r is None else r / 1000


def poll_ms(d: CryptoDeltas) -> float | None:
    """What the guests wait beyond CP's own NQ-to-DQ time, ms."""
    v, r = ms_op_virt(d), ms_op_real(d)
    return None if v is None or r is None else v - r


def dq_per_op_virt(d: CryptoDeltas) -> float | None:
    return ratio(d.get("virt_dq"), d.get("virt_nq"))


def dq_per_op_real(d: CryptoDeltas) -> float | None:
    return ratio(d.get("real_dq"), d.get("real_nq"))


def rate(d: CryptoDeltas, name: str) -> float | None:
    return per_second(d.get(name), d.duration_us)


def unsuccessful_dq_s(d: CryptoDeltas) -> float | None:
    """Guest dequeues that found no reply, per second: (ΔCRYNOVPR − ΔCRYNOVPC) / dt.

    Both fields are provisional; if they say fewer dequeues than completions the reading is
    wrong somewhere, and the screen shows ``.`` rather than a negative rate."""
    dq, done = d.get("virt_dq"), d.get("virt_done")
    if not isinstance(dq, int | float) or not isinstance(done, int | float) or dq < done:
        return None
    return per_second(dq - done, d.duration_us)


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
        if self.dserv is None or not self.vserv:
            return None
        return 100.0 * self.dserv / self.vserv


SPLIT = ("hserv_us", "nserv_us", "dserv_us")


def split_recorded(d: CryptoDeltas) -> bool:
    """Whether HSERV, NSERV and DSERV were kept in this interval.

    A 112- or 128-byte record lacks them; a 360-byte record from a CP without the
    accumulators (before APAR VM66534) carries them as zeros. Guest requests that took time
    (ΔCRYVSERV > 0) while all three stood still mean "not kept", never "no time"."""
    split = [d.get(name) for name in SPLIT]
    if not all(isinstance(v, int | float) for v in split):
        return False
    vserv = d.get("vserv_us")
    return any(split) or not (isinstance(vserv, int | float) and vserv > 0)


def service_times(d: CryptoDeltas) -> ServiceTimes:
    vnq = d.get("virt_nq")
    kept = split_recorded(d)

    def per_vnq(name: str) -> float | None:
        if name in SPLIT and not kept:
            return None
        return ratio(d.get(name), vnq)

    return ServiceTimes(
        vnq=vnq if isinstance(vnq, int) else None,
        vserv=per_vnq("vserv_us"),
        hserv=per_vnq("hserv_us"),
        nserv=per_vnq("nserv_us"),
        rserv=per_vnq("rserv_us"),
        dserv=per_vnq("dserv_us"),
    )
