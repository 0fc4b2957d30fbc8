"""ESACRYQ, Crypto Queue Analysis (guest): this Linux's crypto cards and AP queues.

Per interval, each card and below it its APQNs (``0a``, then ``0a.0010``, ``0a.0011`` ...):

- ``req_s``: Δ``request_count`` over the interval's measured duration. A counter that went
  backwards was reset (card reset, device re-created): the builder counts from the reset and
  flags the row (``R``), so a rate is never negative, only a lower bound.
- ``pending_avg``/``pending_max``: ``requestq_count + pendingq_count`` (everything queued in
  the driver, lszcrypt's PENDING), sampled at the ``--hf`` rate, averaged and maxed.
- ``share_pct``: the device's requests as a share of **all** requests through this Linux's
  cards in the interval (the sum of the cards' deltas). One base for cards and queues: card
  shares add up to 100, a card's queues add up to the card's share, and a drilled view shows
  the same numbers as the full one.

The header says how the guest learns that a reply is ready: by interrupt, or by a timer
ticking every ``poll_timeout`` on a fixed grid (docs/ZCRYPT.md section 5): a thread that
waits for each reply before its next request is in step with the ticks and waits nearly the
whole timeout; requests that arrive independently of them wait half of it on average.
Polling is highlighted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from esatui.db.records import Flag, max_column
from esatui.db.slots import EntityData, KindSlice, Slot
from esatui.screens.catalog import Built, Context, Reads, ScreenDef
from esatui.screens.common import TIME, interval_row, natural_key, number, pct, per_second
from esatui.screens.model import MARKERS, Column, Level, Row, Threshold, Value
from esatui.screens.render import FLAG_MARKS, hms
from esatui.screens.row_columns import KindTotal, RowColumn, RowColumns

CARD = "zcrypt_card"
QUEUE = "zcrypt_queue"
BUS = "zcrypt_bus"
BUS_KEY = "ap"
PREFER = ("zcrypt",)

_PENDING = ("Pending",)
COLUMNS = (
    TIME,
    Column("device", ("", "Device"), 7, key=True, doc="card (0a) or APQN: card.domain (0a.0011)"),
    Column("type", ("", "Type"), 6, doc="card type, e.g. CEX7A"),
    Column("mode", ("", "Mode"), 5, doc="ACCEL, CCA or EP11"),
    Column(
        "online",
        ("", "Online"),
        13,
        doc="online, offline, deconfig, checkstop, or vfio:<status> (passed to a KVM guest)",
    ),
    Column("req_s", ("Requests", "/sec"), 8, 1, "/s", doc="requests per second"),
    Column(
        "pending_avg",
        ("", "Avg"),
        7,
        1,
        "count",
        _PENDING,
        doc="requests queued in the driver (requestq + pendingq), average of the --hf samples",
    ),
    Column(
        "pending_max",
        ("", "Max"),
        7,
        0,
        "count",
        _PENDING,
        doc="requests queued in the driver (requestq + pendingq), most at one sample",
    ),
    Column(
        "share_pct",
        ("Share", "%"),
        6,
        1,
        "%",
        doc="share of all requests through this Linux's cards in the interval",
    ),
)

_FLAG_MEANING = {
    Flag.GAP: "data lost in the interval",
    Flag.RESET: "counter reset (the rate counts from the reset: a lower bound)",
    Flag.NEW: "new device (no rate yet)",
}


# --- numbers -------------------------------------------------------------------------


def requests(count: Value) -> float | None:
    """A device's requests in the interval: its ``request_count`` delta."""
    value = number(count)
    return value if value is not None and value >= 0 else None


def requests_added(cards: Sequence[tuple[Value, ...]]) -> float | None:
    """All requests through this Linux's cards in the slot: the sum of the cards' deltas,
    given each card's ``(request_count, flags)`` in the slot's order.

    ``None`` when nothing was counted, or when a card that was there before could not be
    read: a sum without it would be a partial result shown as whole. A card new in the slot
    has no delta yet and counts for nothing.
    """
    total: float | None = None
    for count, flags in cards:
        delta = requests(count)
        if delta is None:
            if isinstance(flags, int) and flags & Flag.NEW:
                continue
            return None
        total = (total or 0.0) + delta
    return total


_CARD_FIELDS = ("request_count", "flags")


def requests_total(cards: KindSlice | None) -> float | None:
    """:func:`requests_added` of the slot's cards (``None``: no card recorded in it)."""
    if cards is None:
        return requests_added([])
    return requests_added([(e.values.get("request_count"), e.flags) for e in cards.rows.values()])


def zcrypt_req_s(slot: Slot) -> float | None:
    """Requests per second through this Linux's AP queues in the slot (ESASSUM)."""
    cards = slot.get(CARD, PREFER)
    if cards is None:
        return None
    return per_second(requests_total(cards), cards.duration_us)


_PENDING_FIELDS = (
    "pending_count",
    max_column("pending_count"),
    "requestq_count",
    "pendingq_count",
    max_column("requestq_count"),
    max_column("pendingq_count"),
    "hf_n",
)


def pending(entity: EntityData) -> tuple[float | None, float | None]:
    """(average, maximum) of requestq + pendingq over the interval's samples."""
    return pending_of(*map(entity.field, _PENDING_FIELDS))


def pending_of(
    pending_count: Value,
    pending_max: Value,
    requestq_count: Value,
    pendingq_count: Value,
    requestq_max: Value,
    pendingq_max: Value,
    hf_n: Value,
) -> tuple[float | None, float | None]:
    """:func:`pending` from the row's fields (:data:`_PENDING_FIELDS`' order)."""
    avg = number(pending_count)
    top = number(pending_max)
    if avg is None and top is None:
        # recorded without the combined gauge: the average adds up exactly; the maximum only
        # when one sample was taken or one part never rose above 0
        rq, pq = number(requestq_count), number(pendingq_count)
        if rq is None or pq is None:
            return None, None
        avg = rq + pq
        rq_max = number(requestq_max)
        pq_max = number(pendingq_max)
        samples = hf_n if isinstance(hf_n, int) else 0
        if rq_max is not None and pq_max is not None and (samples <= 1 or 0 in (rq_max, pq_max)):
            top = rq_max + pq_max
    return (
        avg if avg is not None and avg >= 0 else None,
        top if top is not None and top >= 0 else None,
    )


def _online(attrs: Mapping[str, str]) -> str | None:
    state = attrs.get("state")
    if state and state != "-":
        return state
    return {"1": "online", "0": "offline"}.get(attrs.get("online", ""))


# --- rows ----------------------------------------------------------------------------


def _wanted(key: str, entity: str | None) -> bool:
    """The drill-down filter: a card keeps itself and its APQNs; an APQN only itself."""
    if entity is None:
        return True
    wanted = entity.strip().lower().removeprefix("card")
    return key == wanted or key.partition(".")[0] == wanted


def _rate(duration_us: int, count: Value) -> float | None:
    return per_second(requests(count), duration_us)


def _share(total: Value, count: Value) -> float | None:
    return pct(requests(count), number(total))


ROW_COLUMNS = RowColumns(
    CARD,
    {
        "req_s": RowColumn(("request_count",), _rate, timed=True),
        "pending_avg": RowColumn(_PENDING_FIELDS, pending_of, part=0),
        "pending_max": RowColumn(_PENDING_FIELDS, pending_of, part=1),
        "share_pct": RowColumn(
            ("request_count",), _share, over=KindTotal(CARD, _CARD_FIELDS, requests_added)
        ),
    },
    lambda shown: shown[0] if len(shown) == 1 else None,
    kind_of=lambda key: QUEUE if "." in key else CARD,
)
"""Each card's and APQN's columns of its own row (the distribution view reads them; the
build makes its rows with them)."""


def _row(
    slot: Slot,
    kind: KindSlice,
    entity: EntityData,
    total: float | None,
    first: bool,
    drill: str | None,
) -> Row:
    values: dict[str, Value] = {
        "device": entity.key,
        "type": entity.attrs.get("type") or None,
        "mode": entity.attrs.get("mode") or None,
        "online": _online(entity.attrs),
    }
    for cid, column in ROW_COLUMNS.columns.items():
        values[cid] = column.of(kind.duration_us, entity.field, total=total)
    flags = entity.flags | (kind.flags & Flag.GAP)
    return interval_row(slot, values, first=first, drill=drill, entity=entity.key, flags=flags)


def slot_rows(slot: Slot, entity: str | None = None) -> list[Row]:
    """One slot's rows: each card, then its APQNs, in card and domain order."""
    cards = slot.get(CARD, PREFER)
    queues = slot.get(QUEUE, PREFER)
    total = requests_total(cards)
    by_card: dict[str, list[EntityData]] = {}
    for q in queues.rows.values() if queues is not None else ():
        if _wanted(q.key, entity):
            by_card.setdefault(q.key.partition(".")[0], []).append(q)
    card_rows = {k: e for k, e in (cards.rows.items() if cards else ()) if _wanted(k, entity)}
    rows: list[Row] = []
    for key in sorted(card_rows.keys() | by_card.keys(), key=natural_key):
        card = card_rows.get(key)
        if card is not None and cards is not None:
            rows.append(_row(slot, cards, card, total, not rows, None if entity else "ESACRYQ"))
        for q in sorted(by_card.get(key, ()), key=lambda e: natural_key(e.key)):
            assert queues is not None
            rows.append(_row(slot, queues, q, total, not rows, None))
    return rows


# --- the AP bus settings in the header -------------------------------------------------

_SETTINGS = ("ap_interrupts", "poll_thread", "poll_timeout_ns")
# what the rows read of a card or an APQN (pending_count: or its parts, when not recorded)
_GAUGES = ("pending_count", "requestq_count", "pendingq_count")
_DEVICE_FIELDS = ("request_count", *_GAUGES, *(max_column(g) for g in _GAUGES))
_DEVICE_ATTRS = ("type", "mode", "state", "online")
_QUEUE_ATTRS = (*_DEVICE_ATTRS, "interrupt")
_NAMED = 4  # polled queues named in the header at most
_LABELS = dict(zip(_SETTINGS, ("ap_interrupts", "poll_thread", "poll_timeout"), strict=True))


@dataclass(frozen=True)
class BusSettings:
    """The AP bus settings in one slot; a setting that changed within it is ``mixed``."""

    end_us: int
    values: Mapping[str, float | None]  # the value, or the maximum when mixed
    mixed: frozenset[str]
    # the online queues whose interrupts are off (or not yet on), and those whose state is
    # known: the kernel polls such a queue on the timer whatever ap_interrupts says
    # (ap_queue.c: ap_sm_read and ap_sm_write wait AP_SM_WAIT_HIGH_TIMEOUT without irq)
    polled: tuple[str, ...] = ()
    queues: int = 0

    def value(self, name: str) -> float | None:
        return None if name in self.mixed else self.values.get(name)

    @property
    def polling(self) -> bool:
        """The guest polled for replies for some of the slot (ap_interrupts 0)."""
        low = self.values.get("ap_interrupts")
        return low is not None and (low == 0 or "ap_interrupts" in self.mixed)


def bus_settings(slot: Slot) -> BusSettings | None:
    bus = slot.get(BUS, PREFER)
    entity = bus.rows.get(BUS_KEY) if bus is not None else None
    if entity is None:
        return None
    values: dict[str, float | None] = {}
    mixed: set[str] = set()
    for name in _SETTINGS:
        avg = number(entity.values.get(name))
        top = number(entity.values.get(max_column(name)))
        values[name] = top if top is not None else avg
        # the settings are read at every full sample: several samples whose average is not
        # their maximum did not all agree
        if avg is not None and top is not None and not math.isclose(avg, top, rel_tol=1e-9):
            mixed.add(name)
    polled, queues = _polled_queues(slot)
    return BusSettings(slot.end_us, values, frozenset(mixed), polled, queues)


def _polled_queues(slot: Slot) -> tuple[tuple[str, ...], int]:
    """The online queues without interrupts (``interrupt`` 0 or pending), and the online
    queues whose ``interrupt`` was read (zcrypt's; kernels before 4.10 have none)."""
    queues = slot.get(QUEUE, PREFER)
    if queues is None:
        return (), 0
    known = [
        e for e in queues.rows.values() if e.attrs.get("online") == "1" and e.attrs.get("interrupt")
    ]
    polled = [e.key for e in known if e.attrs["interrupt"] != "1"]
    return tuple(sorted(polled, key=natural_key)), len(known)


def _us(ns: float) -> str:
    return f"{ns / 1000:.3f}".rstrip("0").rstrip(".")


def _shown(settings: BusSettings, name: str) -> str:
    if name in settings.mixed:
        return "changed"
    value = settings.values.get(name)
    if value is None:
        return "."
    return f"{_us(value)} µs" if name == "poll_timeout_ns" else f"{value:.0f}"


def bus_notes(settings: BusSettings, thresholds: Mapping[str, Threshold]) -> list[str]:
    """The header line with the newest settings, and what polling costs. Polling is how a
    guest without AP interrupts takes its replies (the usual case under z/VM), not a fault:
    it is marked only when the latency it can add reaches the ``dserv_us`` threshold."""
    shown = "  ".join(f"{label} {_shown(settings, name)}" for name, label in _LABELS.items())
    timeout = settings.values.get("poll_timeout_ns")
    if not settings.polling:
        if settings.value("ap_interrupts") == 1:
            return [f"AP bus: {shown}  (replies signalled by interrupt{_polled(settings)})"]
        return [f"AP bus: {shown}"]
    cost = f"up to {_us(timeout)} µs" if timeout is not None else "up to the poll timeout"
    level = Level.NONE if timeout is None else thresholds["dserv_us"].level(timeout / 1000)
    mark = f"{MARKERS[level]} " if level is not Level.NONE else ""
    notes = [f"{mark}POLLING: {shown}: {cost} added latency per request"]
    if settings.value("poll_thread") == 1:
        notes.append(
            "A lowest-priority poll thread looks for replies while requests are pending:"
            " little wait while a CPU is free, CPU time spent polling."
        )
    else:
        notes.append(
            "Timer on a fixed grid: a thread awaiting each reply waits nearly the whole"
            " timeout, independent requests half; shorter costs CPU."
        )
    return notes


def _polled(settings: BusSettings) -> str:
    """``; 2 of 8 queues without: 01.0011, 01.0012 polled every 1500 µs``, or nothing."""
    polled = settings.polled
    if not polled:
        return ""
    named = ", ".join(polled[:_NAMED]) + (", ..." if len(polled) > _NAMED else "")
    timeout = settings.values.get("poll_timeout_ns")
    every = f" every {_us(timeout)} µs" if timeout is not None else ""
    return f"; {len(polled)} of {settings.queues} queues without: {named} polled{every}"


def change_note(history: Sequence[BusSettings]) -> str | None:
    """Where the settings changed within the range (``history`` oldest first)."""
    changes: list[str] = []
    for name, label in _LABELS.items():
        before: float | None = None
        for settings in history:
            if name in settings.mixed:
                changes.append(f"{label} within the interval ending {hms(settings.end_us)}")
                before = None
                continue
            now = settings.values.get(name)
            if now is None:
                continue
            if before is not None and now != before:
                old, new = (
                    (f"{_us(before)}", f"{_us(now)} µs")
                    if name == "poll_timeout_ns"
                    else (f"{before:.0f}", f"{now:.0f}")
                )
                changes.append(f"{label} {old} -> {new} at {hms(settings.end_us)}")
            before = now
    if not changes:
        return None
    return f"{MARKERS[Level.WARN]} AP bus settings changed in this range: " + "; ".join(changes)


def _header(settings: BusSettings | None, changed: bool) -> dict[str, Value]:
    if settings is None:
        return {}
    timeout = settings.value("poll_timeout_ns")
    timeout_us: Value = None
    if timeout is not None:
        timeout_us = int(timeout) // 1000 if timeout % 1000 == 0 else timeout / 1000
    flags = {n: settings.value(n) for n in ("ap_interrupts", "poll_thread")}
    return {
        "ap_interrupts": None if flags["ap_interrupts"] is None else int(flags["ap_interrupts"]),
        "poll_thread": None if flags["poll_thread"] is None else int(flags["poll_thread"]),
        "poll_timeout_us": timeout_us,
        "polling": settings.polling,
        "settings_changed": changed,
    }


def _flags_note(seen: int) -> str | None:
    parts = [f"{letter} {_FLAG_MEANING[flag]}" for flag, letter, _ in FLAG_MARKS if seen & flag]
    return "Flags: " + "; ".join(parts) if parts else None


def _runs(history: Sequence[BusSettings]) -> tuple[BusSettings, ...]:
    """``history`` (oldest first) with each run of equal settings, none changing within its
    slot, kept by its first: the changes it shows are the same (:func:`change_note`)."""
    kept: list[BusSettings] = []
    for settings in history:
        last = kept[-1] if kept else None
        if (
            last is not None
            and not last.mixed
            and not settings.mixed
            and last.values == settings.values
        ):
            continue
        kept.append(settings)
    return tuple(kept)


@dataclass(frozen=True)
class QueueFacts:
    """What the screen says of its range (catalog.RangeFacts): whether it had slots and
    rows, the rows' flags, the AP bus settings' changes and the newest settings."""

    thresholds: Mapping[str, Threshold]
    slots: bool
    rows: bool
    flags: int  # every row's, or'ed
    history: tuple[BusSettings, ...]  # oldest first, as kept by _runs
    newest: BusSettings | None

    def then(self, newer: QueueFacts) -> QueueFacts:
        return QueueFacts(
            self.thresholds,
            self.slots or newer.slots,
            self.rows or newer.rows,
            self.flags | newer.flags,
            _runs((*self.history, *newer.history)),
            newer.newest or self.newest,
        )

    @property
    def notes(self) -> tuple[str, ...]:
        notes: list[str] = []
        if self.slots and not self.rows:
            notes.append("No crypto cards or AP queues recorded in this range.")
        if self.newest is not None:
            notes += bus_notes(self.newest, self.thresholds)
        elif self.slots:
            notes.append("AP bus settings not recorded in this range.")
        changed = change_note(self.history)
        if changed:
            notes.append(changed)
        flags = _flags_note(self.flags)
        if flags:
            notes.append(flags)
        return tuple(notes)

    @property
    def header(self) -> dict[str, Value]:
        return _header(self.newest, change_note(self.history) is not None)


# --- the screen ----------------------------------------------------------------------


def _build(ctx: Context) -> Built:
    rows: list[Row] = []
    history: list[BusSettings] = []
    flags = 0
    for slot in ctx.slots:
        rows += slot_rows(slot, ctx.entity)
        settings = bus_settings(slot)
        if settings is not None:
            history.append(settings)
    for row in rows:
        flags |= row.flags
    history.reverse()  # oldest first
    newest = history[-1] if history else None
    facts = QueueFacts(ctx.thresholds, bool(ctx.slots), bool(rows), flags, _runs(history), newest)
    return Built(COLUMNS, rows, facts.notes, flags_legend=True, header=facts.header, facts=facts)


SCREEN = ScreenDef(
    name="ESACRYQ",
    title="Crypto Queue Analysis (guest)",
    doc="this Linux's crypto cards and APQNs: requests/s, queued requests, share; AP polling",
    timeline=(CARD, QUEUE, BUS),
    kinds=(QUEUE, BUS),
    columns=COLUMNS,
    build=_build,
    row_columns=ROW_COLUMNS,
    streams=True,
    needs="the zcrypt source (/sys/bus/ap)",
    prefer=PREFER,
    reads=(
        Reads(CARD, _DEVICE_FIELDS, _DEVICE_ATTRS),
        Reads(QUEUE, _DEVICE_FIELDS, _QUEUE_ATTRS),
        Reads(BUS, (*_SETTINGS, *(max_column(s) for s in _SETTINGS))),
    ),
)
