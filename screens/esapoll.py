"""ESAPOLL, Crypto Polling Analysis: where the guests' crypto latency goes, and what it costs.

Seed 002's split of the service time per virtual NQ (VNQ): VSERV (guest request to guest
taking the reply) = NSERV (until CP hands the request to the adapter) + RSERV (adapter to CP
holding the reply) + DSERV (until the guest takes it). Next to it the polling that pays for
the latency: dequeues per operation, unsuccessful guest dequeues per second, and the guest's
own poll setting when this Linux's zcrypt source was recorded in the same range. A note
names the part that drives the latency and what changing it would cost, from the numbers.

Beside the latency, its price (screens/crypto_cost.py): busy per 1000 virtual NQs as seed
002 defines it (% of one processor per thousand VNQs a second: guest = the processors'
emulation, CP = CP on the guests' behalf and for itself, all charged to crypto as seed 002
does) and the same as CPU µs per operation. Two note lines say what an operation costs and
what the alternative (a shorter poll timeout, interrupts, the PTF) would buy and cost, both
in this recording's numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from esatui.db.records import max_column
from esatui.db.slots import Slot
from esatui.screens import crypto as C
from esatui.screens import crypto_cost as K
from esatui.screens.catalog import Built, Context, Reads, ScreenDef
from esatui.screens.common import TIME, interval_row, number, ratio, whole_numbers
from esatui.screens.esacpuu import LCPU_ONE_SOURCE, LCPU_READS
from esatui.screens.model import Column, Row, Value
from esatui.screens.poll_trade import cost_note, trade_off
from esatui.screens.poll_trade import fit as _fit
from esatui.screens.row_columns import RowColumn, RowColumns, one_entity
from esatui.screens.slot_columns import SlotColumn, SlotColumns

ZCRYPT_BUS = "zcrypt_bus"
BUS_READS = Reads(ZCRYPT_BUS, ("ap_interrupts", "poll_timeout_ns", max_column("poll_timeout_ns")))
BUS_KEY = "ap"
_SERV = ("Service time per virtual NQ, µs",)
_DQ = ("DQ/oper",)
_BUSY = ("Busy per 1000 VNQs",)  # seed 002's name; the unit (% of a processor) is the columns'
_US_OP = ("CPU µs/oper",)
_ALL_CP = (
    "all CP time is charged to crypto, as seed 002 does: on a system doing other work it is "
    "an upper bound"
)


def _serv(cid: str, name: str, doc: str, provisional: bool) -> Column:
    return Column(cid, ("", name), 9, 3, "us", _SERV, provisional=provisional, doc=doc)


COLUMNS = (
    TIME,
    Column(
        "guest_poll",
        ("Guest", "Poll"),
        6,
        0,
        "us",
        doc="this Linux's AP bus: irq (adapter interrupts) or poll_timeout in µs (zcrypt)",
    ),
    Column("ops_s", ("Oper", "/sec"), 8, 1, "/s", doc="guest NQ per second (CRYNOVNQ)"),
    _serv("vserv_us", "VSERV", "guest request complete to guest taking the reply", False),
    _serv("nserv_us", "NSERV", "guest request complete to CP's NQ to the adapter", True),
    _serv("rserv_us", "RSERV", "CP's NQ to CP holding the reply", False),
    _serv("dserv_us", "DSERV", "CP holding the reply to the guest taking it", True),
    _serv(
        "hserv_us",
        "HSERV",
        "guest request complete to CP holding the reply: the CRYHSERV accumulator where "
        "recorded (APAR VM66534), else NSERV + RSERV",
        True,
    ),
    Column(
        "dserv_pct",
        ("DSERV", "%VSERV"),
        6,
        1,
        "%",
        threshold="dserv_pct",
        provisional=True,
        doc="DSERV as % of VSERV: the part the guests' polling decides (marked only when "
        "DSERV reaches dserv_us)",
    ),
    Column(
        "dq_per_op_virt",
        ("", "Virt"),
        5,
        2,
        "",
        _DQ,
        threshold="dq_per_op",
        provisional=True,
        doc="guest dequeues per guest NQ (marked only when its unsuccessful dequeues cost: "
        "see unsucc_dq_s)",
    ),
    Column(
        "dq_per_op_real",
        ("", "Real"),
        5,
        2,
        "",
        _DQ,
        threshold="dq_per_op",
        doc="CP dequeues per real NQ (marked only when CP's unsuccessful dequeues per second "
        "reach unsucc_dq_s)",
    ),
    Column(
        "unsucc_dq_s",
        ("Unsucc", "DQ/sec"),
        8,
        1,
        "/s",
        threshold="unsucc_dq_s",
        provisional=True,
        doc="guest dequeues that found no reply, per second (CRYNOVPR − CRYNOVPC): what "
        "polling costs the guests and CP (marked only when the guests' dequeues per "
        "operation reach dq_per_op: the kernel makes one an operation by design)",
    ),
    Column(
        "poll_ms",
        ("Poll", "ms"),
        5,
        2,
        "ms",
        doc="ms_op_virt − ms_op_real: what the guests wait beyond CP's NQ to DQ",
    ),
    Column(
        "total_busy_per_kvnq",
        ("", "Total"),
        6,
        4,
        "%",
        _BUSY,
        threshold="busy_per_kvnq",
        provisional=True,  # CP for itself: D0R2 PFXTMSYS, zpmd's offset alone
        doc="the LPAR's busy time (guest + CP) as % of one processor per 1000 virtual NQs "
        f"a second (seed 002's metric; 1.0 = 10 µs of CPU per operation); {_ALL_CP} "
        "(marked only when unsucc_dq_s is too)",
    ),
    Column(
        "guest_busy_per_kvnq",
        ("", "Guest"),
        6,
        4,
        "%",
        _BUSY,
        doc="the processors' emulation time (every guest's, crypto or not) per 1000 virtual "
        "NQs a second (D0R2 PFXPRBTM)",
    ),
    Column(
        "cp_busy_per_kvnq",
        ("", "CP"),
        6,
        4,
        "%",
        _BUSY,
        drill="ESALOCK",
        provisional=True,  # PFXTMSYS
        doc="CP time on the guests' behalf and for itself per 1000 virtual NQs a second "
        f"(D0R2 PFXUTIME − PFXPRBTM, PFXTMSYS); {_ALL_CP}; Enter: ESALOCK, whether CP spins",
    ),
    Column(
        "guest_us_op",
        ("", "Guest"),
        6,
        1,
        "us",
        _US_OP,
        doc="guest emulation µs per virtual NQ (guest_busy_per_kvnq × 10)",
    ),
    Column(
        "cp_us_op",
        ("", "CP"),
        6,
        1,
        "us",
        _US_OP,
        drill="ESALOCK",
        provisional=True,  # PFXTMSYS
        doc=f"CP µs per virtual NQ (cp_busy_per_kvnq × 10); {_ALL_CP}; Enter: ESALOCK",
    ),
)

GuestPoll = int | str | None


def guest_poll(slot: Slot) -> GuestPoll:
    """``irq``, the poll timeout in µs, ``mixed`` (switched within the interval), or None
    when this Linux's AP bus was not recorded in the slot."""
    bus = slot.get(ZCRYPT_BUS)
    entity = bus.rows.get(BUS_KEY) if bus else None
    if entity is None:
        return None
    irq = number(entity.values.get("ap_interrupts"))
    timeout_ns = number(entity.values.get("poll_timeout_ns"))
    if irq is not None and irq >= 1.0:
        return "irq"
    if irq is not None and irq > 0.0:
        return "mixed"
    if timeout_ns is None:
        return None
    # a setting is no rate: samples whose mean is not their maximum did not all agree (an
    # hour of 1500 then 50 µs is no 775 µs poll)
    top = number(entity.values.get(max_column("poll_timeout_ns")))
    if top is not None and not math.isclose(timeout_ns, top, rel_tol=1e-9):
        return "mixed"
    return round(timeout_ns / 1000)


def hserv(st: C.ServiceTimes) -> float | None:
    """HSERV per VNQ (:func:`crypto.hserv_or_parts`)."""
    return C.hserv_or_parts(st.hserv, st.nserv, st.rserv)


def _split_of(field: str) -> RowColumn:
    return RowColumn((field, *C.KEPT), C.split_per_vnq)


ROW_COLUMNS = RowColumns(
    C.CRYPTO,
    {
        "ops_s": RowColumn(("virt_nq",), C.per_second_of, timed=True),
        "vserv_us": RowColumn(("vserv_us", "virt_nq"), ratio),
        "nserv_us": _split_of("nserv_us"),
        "rserv_us": RowColumn(("rserv_us", "virt_nq"), ratio),
        "dserv_us": _split_of("dserv_us"),
        "dserv_pct": RowColumn(C.KEPT, C.dserv_pct),
        "dq_per_op_virt": RowColumn(("virt_dq", "virt_nq"), ratio),
        "dq_per_op_real": RowColumn(("real_dq", "real_nq"), ratio),
        "unsucc_dq_s": RowColumn(("virt_dq", "virt_done"), C.unsuccessful_per_s, timed=True),
        "poll_ms": RowColumn(("vserv_us", "virt_nq", "rserv_us", "real_nq"), C.wait_beyond_ms),
        "hserv_us": RowColumn((*C.KEPT, "rserv_us"), C.hserv_per_vnq),
    },
    one_entity(C.CRYPTO_KEY),
)
"""ESAPOLL's columns that one interval's D5R9 row makes, with the functions the build's own
(:func:`esapoll_values`) are made of: what the distribution view reads per interval (the
guest's poll setting and the CPU cost come from other kinds: for those the screen is built)."""


def _cost_of(part: str) -> SlotColumn:
    """A cost column of the slot: the processors' times over its crypto row's VNQs."""

    def value(slot: Slot, config: Mapping[str, str]) -> Value:
        d = C.crypto_deltas(slot)
        if d is None:
            return None
        made: Value = getattr(operation_cost(d, K.cpu_time(slot, config)), part)
        return made

    return SlotColumn((C.CRYPTO, K.LCPU), value)


SLOT_COLUMNS = SlotColumns(
    {
        "guest_poll": SlotColumn((ZCRYPT_BUS,), lambda slot, config: guest_poll(slot)),
        **{
            part: _cost_of(part)
            for part in (
                "total_busy_per_kvnq",
                "guest_busy_per_kvnq",
                "cp_busy_per_kvnq",
                "guest_us_op",
                "cp_us_op",
            )
        },
    },
    has_row=lambda slot: C.crypto_deltas(slot) is not None,
    row_kinds=(C.CRYPTO,),
)
"""ESAPOLL's columns of other kinds than the D5R9 row: the guest's poll setting (the AP
bus) and the CPU an operation costs (the processors), each of its slot as :func:`_build`
makes them; a slot has a row where it has a D5R9 row."""


def esapoll_values(
    d: C.CryptoDeltas, poll: GuestPoll, cpu: K.CpuTime | None = None
) -> dict[str, Value]:
    """ESAPOLL's columns (all but ``time``) for one interval's deltas and the processors'
    times over the same interval: the D5R9 row's from :data:`ROW_COLUMNS` (what the
    distribution view reads), the cost from :func:`operation_cost` (as the slot columns)."""
    made = {cid: c.of(d.duration_us, d.get) for cid, c in ROW_COLUMNS.columns.items()}
    cost = operation_cost(d, cpu)
    return {
        "guest_poll": poll,
        **{c.id: made[c.id] for c in COLUMNS if c.id in made},
        "total_busy_per_kvnq": cost.total_busy_per_kvnq,
        "guest_busy_per_kvnq": cost.guest_busy_per_kvnq,
        "cp_busy_per_kvnq": cost.cp_busy_per_kvnq,
        "guest_us_op": cost.guest_us_op,
        "cp_us_op": cost.cp_us_op,
    }


def operation_cost(d: C.CryptoDeltas, cpu: K.CpuTime | None) -> K.OperationCost:
    """What the interval's virtual NQs cost of the processors' times ``cpu``."""
    return K.operation_cost(cpu, d.get("virt_nq"), d.duration_us)


# --- the explanation ---------------------------------------------------------------------

# seed 002: on-demand NQ cut NSERV 80-95%; interrupts cut RSERV 42% (Table 3) to 61% (1-2)
_INTERRUPT_LIKE_DQ = 1.05  # CP dequeues per operation at or below this: no CP DQ polling
_POLLING_MATTERS_PCT = 25.0  # without the split: guest wait beyond CP worth naming


def _poll_text(poll: GuestPoll) -> str:
    if poll == "irq":
        return " (here: interrupts)"
    if isinstance(poll, int):
        return f" (here {poll} µs)"
    return ""


# docs/ZCRYPT.md section 5: where DSERV sits on the guest's poll timer tells the regime
_IN_STEP = 0.7  # DSERV of at least this many ticks: requests released by the tick
_BETWEEN_TICKS = 0.3  # below this: other requests' enqueues read the replies
_OVER_A_TICK = 1.25  # DSERV beyond a tick of this guest's timer: not its timer alone


def poll_regime(dserv: float | None, hserv: float | None, poll: GuestPoll) -> str | None:
    """Which regime of docs/ZCRYPT.md section 5 the guests' polling is in, as a short
    clause, or None without the guest's poll timeout or the split: requests in step with
    the ticks (each reply releases the next request: nearly a whole tick), independent of
    them (half a tick), read between ticks by other requests' enqueues, or ticks shorter
    than the service (part of a tick, half on average)."""
    if not isinstance(poll, int) or poll <= 0 or dserv is None or hserv is None:
        return None
    ticks = dserv / poll
    if ticks > _OVER_A_TICK:  # this Linux's timer is not every guest's, or ticks run late
        return "over its tick (others slower?)"
    if hserv >= poll:
        return "ticks shorter than HSERV (half a tick)"
    if ticks >= _IN_STEP:
        return "in step (a whole tick per op)"
    if ticks >= _BETWEEN_TICKS:
        return "independent of it (half a tick)"
    return "replies read between its ticks"


def explain(  # noqa: PLR0911 - one sentence per dominant part and level
    d: C.CryptoDeltas | None, poll: GuestPoll = None, facts: C.RecordFacts | None = None
) -> str:
    """One line: which part of the latency dominates and what changing it would cost, with
    only what the recording's z/VM level has (``facts``: its records and CP's polling mode)."""
    if d is None or not isinstance(d.get("virt_nq"), int) or not d.get("virt_nq"):
        return "No guest crypto operations in this range: nothing to explain."
    facts = facts or C.RecordFacts.of({}, d)
    st = C.service_times(d)
    vserv = st.vserv
    parts = {"NSERV": st.nserv, "RSERV": st.rserv, "DSERV": st.dserv}
    if not vserv or any(v is None for v in parts.values()):
        return _explain_without_split(d, poll, facts)
    name = max(parts, key=lambda k: parts[k] or 0.0)
    head = f"{name} {100.0 * (parts[name] or 0.0) / vserv:.0f}% of {vserv:.0f} µs/op"
    if name == "DSERV":
        fails = C.unsuccessful_dq_s(d)
        count = f" ({fails:.0f}/s)" if fails is not None else ""
        timer = f"{head}: guest poll timer"
        cost = "; shorter poll_timeout cuts it, multiplying unsuccessful DQs"
        setting = _poll_text(poll)
        regime = poll_regime(st.dserv, st.hserv, poll)
        faster = "; faster polling: more DQs"
        step = (
            [
                f"{timer}{setting}, {regime}{faster}{count} and CPU",
                f"{timer}{setting}, {regime}{faster} and CPU",
            ]
            if regime
            else []
        )
        return _fit(
            *step,
            f"{timer}{setting}{cost}{count} and CPU",
            f"{timer}{setting}{cost} and CPU",
            f"{timer}{cost} and CPU",
        )
    if name == "NSERV":
        if facts.ptf:
            return _fit(
                f"{head}: CP is slow to hand requests to the adapter even with the PTF's "
                "on-demand NQ: look at CP's own load (ESACPUU)"
            )
        return _fit(
            f"{head}: CP's NQ polling (pre-PTF UM35974); the PTF's on-demand NQ cuts NSERV "
            "80-95% for a little CP CPU"
        )
    dq_real = C.dq_per_op_real(d)
    if facts.polling == "off":
        shown = f" ({dq_real:.2f} CP DQ/op)" if dq_real is not None else ""
        return _fit(
            f"{head}: the adapter itself, CP's DQ by interrupts{shown}; only more or faster "
            "adapters cut it",
            f"{head}: the adapter itself; only more or faster adapters cut it",
        )
    if dq_real is not None and dq_real <= _INTERRUPT_LIKE_DQ:
        # One CP DQ per operation wastes none, but it does not tell interrupts from a polling
        # DQ loop that finds a reply at every pass (frequent replies: docs/MODEL.md, CP)
        wasted = f"{head}: adapter + CP's DQ ({dq_real:.2f} DQ/op, none wasted)"
        return _fit(*_one_dq_advice(wasted, facts))
    cost = _interrupts_advice(facts)
    detailed = [f"{head}: adapter + CP's DQ polling ({dq_real:.2f} DQ/op){cost}"] if dq_real else []
    return _fit(*detailed, f"{head}: adapter + CP's DQ polling{cost}")


def _one_dq_advice(wasted: str, facts: C.RecordFacts) -> tuple[str, ...]:
    """What to say when CP dequeues once per operation: interrupts, or a polling DQ loop
    that finds a reply at every pass; what would cut RSERV, as far as the level has it."""
    if facts.ptf:
        return (
            f"{wasted}; if CP still polls, SET CRYPTO POLLING OFF cuts it 40-60%; else only "
            "more or faster adapters",
            f"{wasted}; if CP still polls, SET CRYPTO POLLING OFF cuts it 40-60%",
        )
    if facts.ptf is False:
        return (
            f"{wasted}; PTF UM35974 brings SET CRYPTO POLLING OFF: 40-60% less",
            f"{wasted}; only more or faster adapters cut it",
        )
    return (
        f"{wasted}; with PTF UM35974, SET CRYPTO POLLING OFF may cut it 40-60%",
        f"{wasted}; only more or faster adapters cut it",
    )


def _interrupts_advice(facts: C.RecordFacts) -> str:
    """What CP's interrupt-driven DQ would do here, as far as the level has it."""
    if facts.ptf:
        return "; SET CRYPTO POLLING OFF cuts it 40-60% for ~50% more CP CPU/op"
    if facts.ptf is False:
        return "; PTF UM35974 brings SET CRYPTO POLLING OFF: 40-60% less for ~50% more CP CPU"
    return "; with PTF UM35974, SET CRYPTO POLLING OFF cuts it 40-60% for more CP CPU"


def _explain_without_split(d: C.CryptoDeltas, poll: GuestPoll, facts: C.RecordFacts) -> str:
    virt, real = C.ms_op_virt(d), C.ms_op_real(d)
    if virt is None or real is None or virt <= 0:
        return "NQ to DQ times not recorded: no latency split (needs CRYVSERV and CRYRSERV)."
    waited = virt - real
    share = 100.0 * waited / virt
    if share < _POLLING_MATTERS_PCT:
        if facts.ptf is False:
            return _fit(
                f"CP's NQ to DQ is {real:.2f} of {virt:.2f} ms/op: adapter and CP's polling "
                "(pre-PTF), not guest polling; PTF UM35974 or more adapters would cut it",
                f"CP's NQ to DQ is {100 - share:.0f}% of the guests' ms/op: adapter and CP's "
                "polling, not guest polling; PTF UM35974 or more adapters would cut it",
            )
        return _fit(
            f"CP's NQ to DQ is {real:.2f} of {virt:.2f} ms/op: adapter and CP time, not guest "
            "polling; more or faster adapters would cut it",
            f"CP's NQ to DQ is {100 - share:.0f}% of the guests' ms/op: adapter and CP time, "
            "not guest polling; more or faster adapters would cut it",
        )
    head = f"Guests wait {share:.0f}% of {virt:.2f} ms/op beyond CP"
    if poll == "irq":  # no guest polls: what is beyond CP's NQ to DQ is CP's NQ wait
        return _fit(f"{head}: CP's NQ wait (the guest takes interrupts, no polling)")
    dq = C.dq_per_op_virt(d)
    polls = f"{dq:.1f} DQ/op" if dq is not None else ""
    setting = _poll_text(poll).strip(" ()")
    details = [f" ({setting}, {polls})"] if setting and polls else []
    details += [f" ({polls or setting})"] if polls or setting else []
    # NSERV + DSERV, which these records do not split (before APAR VM66534)
    head += ": polling + CP's NQ wait"
    cost = "; faster polling trades it for DQs and CPU"
    return _fit(*(f"{head}{detail}{cost}" for detail in details), f"{head}{cost}")


@dataclass(frozen=True)
class PollFacts:
    """What the screen says of its range (catalog.RangeFacts), its explanation: the D5R9
    deltas added up, those of the intervals with processor times (``priced``) and those
    times, and the guests' poll settings. Sums of whole numbers (the counters, in µs) add
    up part by part to the whole range's exactly; others do not (``exact``)."""

    config: Mapping[str, str]
    slots: bool
    whole: C.CryptoDeltas | None
    priced: C.CryptoDeltas | None
    cpu: K.CpuTime | None
    polls: frozenset[int | str]  # the settings seen
    exact: bool

    def then(self, newer: PollFacts) -> PollFacts | None:
        if not (self.exact and newer.exact):
            return None
        added = PollFacts(
            self.config,
            self.slots or newer.slots,
            C.combine(d for d in (self.whole, newer.whole) if d is not None),
            C.combine(d for d in (self.priced, newer.priced) if d is not None),
            K.combine(c for c in (self.cpu, newer.cpu) if c is not None),
            self.polls | newer.polls,
            True,
        )
        return added if _exact(added.whole, added.cpu) else None

    @property
    def notes(self) -> tuple[str, ...]:
        whole, priced = self.whole, self.priced
        if whole is None:
            return (C.NO_RECORDS,) if self.slots else ()
        facts = C.RecordFacts.of(self.config, whole)
        poll = next(iter(self.polls)) if len(self.polls) == 1 else None
        cost = (
            K.operation_cost(self.cpu, priced.get("virt_nq"), priced.duration_us)
            if priced is not None
            else K.NO_COST
        )
        return (
            facts.note(),
            explain(whole, poll, facts),
            cost_note(cost),
            trade_off(priced or whole, cost, poll, facts),
        )

    @property
    def header(self) -> Mapping[str, Value]:
        return {}


def _exact(d: C.CryptoDeltas | None, cpu: K.CpuTime | None) -> bool:
    """Whether the sums are of whole numbers (see PollFacts)."""
    counters = () if d is None else (d.get(name) for name in C.COUNTERS)
    times = () if cpu is None else (cpu.guest_us, cpu.cp_us, cpu.busy_us)
    return whole_numbers(counters) and whole_numbers(times)


def _build(ctx: Context) -> Built:
    rows: list[Row] = []
    parts: list[C.CryptoDeltas] = []
    polls: set[int | str] = set()
    cpus: list[K.CpuTime] = []
    costed: list[C.CryptoDeltas] = []
    for slot in ctx.slots:
        d = C.crypto_deltas(slot)
        if d is None:
            continue
        poll = guest_poll(slot)
        cpu = K.cpu_time(slot, ctx.config)
        parts.append(d)
        if poll is not None:
            polls.add(poll)
        if cpu is not None:
            cpus.append(cpu)
            costed.append(d)
        values = esapoll_values(d, poll, cpu)
        levels = C.polling_levels(d, values, ctx.thresholds)
        rows.append(interval_row(slot, values, levels, drill="ESACRYPT", flags=d.flags))
    exact = all(_exact(d, None) for d in parts) and all(_exact(None, c) for c in cpus)
    whole, cpu = C.combine(parts), K.combine(cpus)
    facts = PollFacts(
        ctx.config,
        bool(ctx.slots),
        whole,
        C.combine(costed),
        cpu,
        frozenset(polls),
        exact and _exact(whole, cpu),
    )
    return Built(COLUMNS, rows, facts.notes, facts=facts, flags_legend=True)


SCREEN = ScreenDef(
    name="ESAPOLL",
    title="Crypto Polling Analysis",
    doc="the crypto service time split (NSERV, RSERV, HSERV, DSERV per virtual NQ), dequeues "
    "per operation, unsuccessful dequeues, the guest's poll setting, and the CPU an operation "
    "costs (busy per 1000 VNQ, guest and CP µs per operation) with the trade-off in numbers",
    timeline=(C.CRYPTO,),
    kinds=(ZCRYPT_BUS, K.LCPU),
    columns=COLUMNS,
    build=_build,
    needs="the z/VM monitor (monreader or a MONWRITE file) with D5R9 crypto records",
    prefer=C.PREFER,
    reads=(C.CRYPTO_READS, BUS_READS, LCPU_READS),
    row_columns=ROW_COLUMNS,
    slot_columns=SLOT_COLUMNS,
    streams=True,
    one_source=LCPU_ONE_SOURCE,
)
