"""ESAPOLL's cost lines: what an operation costs, and what the alternative would buy and cost,
in the recording's own numbers.

The alternatives and their published effects (seed 002, IBM, PTF UM35974 for APAR VM66534;
z15, 10 guests, RSA-1024; docs/CRYPTO_SCREENS.md section "ESAPOLL's cost"):
- CP's DQ by interrupts (SET CRYPTO POLLING OFF) against the baseline: RSERV −61%, −61%,
  −42% (Tables 1, 2, 3); CP busy per 1000 VNQ +49% and +66% at 46,700 VNQ/s (Tables 1-2),
  −21% at 6,666 VNQ/s (Table 3).
- The PTF's on-demand NQ (polling runs against the baseline): NSERV −94%, −96%, −95%; CP busy
  per 1000 VNQ +23%, +22% (Tables 1-2), −17% (Table 3).
- A shorter guest poll timeout: DSERV is a whole or half a tick of the guest's timer
  (docs/ZCRYPT.md section 5), so halving the timeout halves it, and doubles the ticks that find
  nothing (seed 002: about 200,000 unsuccessful DQs a second at 50 µs against 6,700 at 250 µs).
"""

from __future__ import annotations

from esatui.screens import crypto as C
from esatui.screens.crypto_cost import OperationCost

# seed 002: the rate above which CP's extra work per operation (interrupts, on-demand NQ)
# showed as more CP busy per 1000 VNQ (Tables 1-2, ~46,700/s); below it (Table 3, 6,666/s)
# CP used less. Between the two the direction is not published: 20,000/s splits them.
HIGH_RATE_VNQ_S = 20_000.0
# interrupts against the baseline: RSERV -61.0% and -61.1% at ~46,700/s (Tables 1-2), -42.1%
# at 6,666/s (Table 3); each goes with its rate's CP change
RSERV_CUT_HIGH_RATE = 0.61
RSERV_CUT_LOW_RATE = 0.42
CP_MORE_INTERRUPTS = (0.49, 0.66)  # Tables 1-2
CP_LESS_INTERRUPTS = 0.21  # Table 3
NSERV_CUT = (0.94, 0.96)
CP_MORE_ON_DEMAND = (0.22, 0.23)

MS_FROM_US = 10_000.0  # a cost line's CPU per operation from here on is in ms
Poll = int | str | None
NOTE_WIDTH = 132  # the default text export's width: each note stays one line there


def fit(*variants: str) -> str:
    """The most detailed variant that fits one line of the default text export."""
    for text in variants:
        if len(text) <= NOTE_WIDTH:
            return text
    return variants[-1][:NOTE_WIDTH]


def cost_note(cost: OperationCost) -> str:
    """One line: the CPU an operation costs, in µs and as seed 002's busy per 1000 VNQ."""
    if cost.total_busy_per_kvnq is None:
        return (
            "Cost per operation: not known (needs the LPAR's processor times in the same range: "
            "z/VM monitor D0R2)."
        )
    if cost.guest_us_op is None or cost.cp_us_op is None or cost.total_us_op is None:
        total_us = cost.total_busy_per_kvnq * 10
        scale, unit = _unit(total_us)
        return (
            f"Cost per operation: {total_us * scale:.1f} {unit} of CPU (busy per 1000 "
            f"VNQ {cost.total_busy_per_kvnq:.4f}); no guest/CP split from this source."
        )
    scale, unit = _unit(cost.total_us_op)
    head = (
        f"Cost per operation: guest {cost.guest_us_op * scale:.1f} + CP "
        f"{cost.cp_us_op * scale:.1f} = {cost.total_us_op * scale:.1f} {unit} of CPU"
    )
    busy = f" (busy per 1000 VNQ {cost.guest_busy_per_kvnq:.4f} + {cost.cp_busy_per_kvnq:.4f})"
    caveat = "; all CP time counted as crypto's."
    return fit(
        f"{head}{busy}{caveat}",
        f"{head}; all of the LPAR's CPU counted as crypto's (an upper bound).",
        f"{head}{caveat}",
    )


def _unit(total_us: float) -> tuple[float, str]:
    """The factor from µs and the unit a cost line gives CPU per operation in: ms from
    :data:`MS_FROM_US` (a system doing other work can charge an operation hundreds of ms, all
    of its CPU counted: "639678.1 µs" is unreadable)."""
    return (1e-3, "ms") if total_us >= MS_FROM_US else (1.0, "µs")


def _cpu(us: float) -> str:
    """CPU per operation, in µs or ms (:func:`_unit`)."""
    scale, unit = _unit(us)
    return f"{us * scale:.1f} {unit}"


def _range(value: float, factors: tuple[float, float]) -> str:
    low, high = sorted(value * f for f in factors)
    return f"{low:.0f}-{high:.0f}" if round(low) != round(high) else f"{low:.0f}"


def _cp_change(cost: OperationCost, rate: float | None, more: tuple[float, float]) -> str:
    cp = cost.cp_us_op
    if cp is None:
        return "CP CPU per operation: not known here"
    if rate is not None and rate >= HIGH_RATE_VNQ_S:
        low, high = (cp * f for f in more)
        scale, unit = _unit(high)
        return f"+{low * scale:.1f}-{high * scale:.1f} {unit} CP/op (now {cp * scale:.1f})"
    return f"no more CP/op at this rate (now {_cpu(cp)}; seed 002 at 6,666/s)"


def trade_off(
    d: C.CryptoDeltas | None, cost: OperationCost, poll: Poll, facts: C.RecordFacts
) -> str:
    """One line: what the alternative to the dominant part would buy (µs per operation) and
    cost (CPU µs per operation, unsuccessful DQs), from this recording's numbers."""
    if d is None or not d.get("virt_nq"):
        return "Trade-off: no operations in this range."
    st = C.service_times(d)
    rate = C.rate(d, "virt_nq")
    parts = {"NSERV": st.nserv, "RSERV": st.rserv, "DSERV": st.dserv}
    if any(v is None for v in parts.values()):
        return _without_split(d, cost, poll, facts)
    name = max(parts, key=lambda k: parts[k] or 0.0)
    if name == "DSERV":
        return _shorter_poll(st.dserv or 0.0, d, cost, poll)
    if name == "NSERV" and not facts.ptf:
        nserv = st.nserv or 0.0
        return fit(
            f"Trade-off: PTF UM35974's on-demand NQ would cut NSERV {_range(nserv, NSERV_CUT)} "
            f"µs/op for {_cp_change(cost, rate, CP_MORE_ON_DEMAND)}.",
            f"Trade-off: PTF UM35974's on-demand NQ: NSERV −{_range(nserv, NSERV_CUT)} µs/op.",
        )
    if name == "RSERV" and facts.polling != "off":
        high = rate is not None and rate >= HIGH_RATE_VNQ_S
        cut = (st.rserv or 0.0) * (RSERV_CUT_HIGH_RATE if high else RSERV_CUT_LOW_RATE)
        how = "SET CRYPTO POLLING OFF" if facts.ptf is not False else "PTF UM35974's interrupts"
        return fit(
            f"Trade-off: {how} would cut RSERV ~{cut:.0f} µs/op for "
            f"{_cp_change(cost, rate, CP_MORE_INTERRUPTS)}.",
            f"Trade-off: {how}: RSERV −{cut:.0f} µs/op.",
        )
    total = cost.total_us_op
    spent = f" ({_cpu(total)} CPU/op)" if total is not None else ""
    return fit(
        f"Trade-off: {name} is the adapter's and CP's own time{spent}: only more or faster "
        "adapters, or CP capacity, cut it."
    )


def _shorter_poll(dserv: float, d: C.CryptoDeltas, cost: OperationCost, poll: Poll) -> str:
    fails = C.unsuccessful_dq_s(d)
    ops = C.rate(d, "virt_nq")
    per_op = "?" if fails is None or not ops else f"{fails / ops:.{1 if fails >= ops else 2}f}"
    setting = f"{poll // 2} µs" if isinstance(poll, int) and poll > 1 else "half the timeout"
    guest = cost.guest_us_op
    cpu = f", in {_cpu(guest)} guest CPU/op" if guest is not None else ""
    # the guest's timer holds a reply at most a tick: a DSERV beyond it is not its alone
    timer = min(dserv, poll) if isinstance(poll, int) and poll > 0 else dserv
    up_to = "up to " if timer < dserv else ""
    head = f"Trade-off: a poll timeout of {setting} would cut DSERV {up_to}~{timer / 2:.0f} µs/op"
    return fit(
        f"{head} for twice the unsuccessful DQs ({per_op}/op now{cpu}).",
        f"{head} for twice the unsuccessful DQs ({per_op}/op now).",
    )


GUEST_WAIT_MATTERS = 0.25  # as ESAPOLL's explanation: the guests' wait beyond CP worth naming


def _without_split(d: C.CryptoDeltas, cost: OperationCost, poll: Poll, facts: C.RecordFacts) -> str:
    """Records without NSERV/DSERV (before APAR VM66534): the guests' wait beyond CP's NQ to
    DQ (ms_op_virt − ms_op_real) is NSERV + DSERV, CP's NQ wait and the guests' polling; a
    shorter poll timeout cuts the second only, which the guest's timer keeps under a tick."""
    virt, real = C.ms_op_virt(d), C.ms_op_real(d)
    if virt is None or real is None or virt <= 0:
        return "Trade-off: needs the guests' and CP's NQ to DQ times (CRYVSERV, CRYRSERV)."
    waited_us = (virt - real) * 1000
    total = cost.total_us_op
    cure = (
        "PTF UM35974 (on-demand NQ, interrupts) or more adapters"
        if facts.ptf is False
        else "more or faster adapters"
    )
    if waited_us / (virt * 1000) >= GUEST_WAIT_MATTERS:
        if poll == "irq":
            return fit(
                f"Trade-off: the wait beyond CP ({waited_us:.0f} µs/op) is CP's NQ wait, not "
                f"polling (the guest takes interrupts): {cure}."
            )
        fails = C.unsuccessful_dq_s(d)
        ops = C.rate(d, "virt_nq")
        per_op = f" ({fails / ops:.1f}/op now)" if fails is not None and ops else ""
        cpu = f", CPU/op now {_cpu(total)}" if total is not None else ""
        timer = min(waited_us, poll) if isinstance(poll, int) and poll > 0 else waited_us
        less = f"up to ~{timer / 2:.0f} µs/op less wait beyond CP"
        return fit(
            f"Trade-off: half the poll timeout: {less}, twice the unsuccessful DQs{per_op}{cpu}.",
            f"Trade-off: half the poll timeout: {less}, twice the unsuccessful DQs{cpu}.",
            f"Trade-off: half the poll timeout: {less}, twice the unsuccessful DQs.",
        )
    cpu = f"; CPU/op now {_cpu(total)}" if total is not None else ""
    return fit(f"Trade-off: CP's NQ to DQ ({real * 1000:.0f} µs/op) dominates: {cure}{cpu}.")
