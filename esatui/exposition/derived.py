"""Counters the exporter computes from an interval's recorded fields, so that the parts of
one family add up to its whole as the screens add them.

A logical processor's recorded ``steal_us`` (the monitor's D0R16, hypfs) is its online time
that PR/SM did not dispatch, which holds a shared processor's idle wait (PR/SM takes a
processor that waits off its physical one); ESACPUU's steal is what is left of the elapsed
time after busy and idle (``total + idle + steal = 100``, :func:`~esatui.screens.esacpuu.
lcpu_shares`). Exposed as a mode beside emul, user, syst and idle, only the latter keeps
the modes of a processor summing to its online time; the raw one has a family of its own.
A derived value is never read back (``esatui --prometheus``): the screens compute it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from esatui.collectors.model import Field, counter
from esatui.db.records import Value


@dataclass(frozen=True, slots=True)
class Derived:
    """One computed field of a kind: from the row's values and the source's measured
    interval (µs), its delta in the interval, or None where it cannot be told."""

    kind: str
    field: Field
    compute: Callable[[Mapping[str, Value], int], Value]


def _num(value: Value) -> int | float | None:
    return value if isinstance(value, int | float) else None


def lcpu_steal_us(values: Mapping[str, Value], duration_us: int) -> Value:
    """ESACPUU's steal of one processor in one interval, in µs: its elapsed time (else the
    interval's, as the screen takes it) less busy (emul + user + syst, else busy, else the
    busy percentage of it) and idle, never negative; None without idle or busy."""
    base = _num(values.get("elapsed_us")) or duration_us
    idle = _num(values.get("idle_us"))
    if base <= 0 or idle is None:
        return None
    emul, user, syst = (_num(values.get(f)) for f in ("emul_us", "user_us", "syst_us"))
    busy = _num(values.get("busy_us"))
    percent = _num(values.get("busy_pct"))
    if emul is not None and user is not None and syst is not None:
        busy = emul + user + syst
    elif busy is None and percent is not None:
        busy = percent * base / 100.0
    if busy is None:
        return None
    left = base - busy - idle
    return left if left > 0 else 0


LCPU_STEAL = Derived(
    "lcpu",
    counter(
        "ready_steal_us",
        "us",
        "ESACPUU's steal: online time neither busy nor idle, elapsed - busy - idle per "
        "interval (busy: emul + user + syst where the source splits it), never negative; "
        "only where the source gives idle (the z/VM monitor's D0R2)",
    ),
    lcpu_steal_us,
)

DERIVED: Mapping[str, tuple[Derived, ...]] = {"lcpu": (LCPU_STEAL,)}
"""The computed fields of each kind (exposed, never recorded)."""
