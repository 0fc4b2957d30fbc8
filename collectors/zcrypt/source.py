"""The ``zcrypt`` source: AP bus settings, cards and queues from sysfs, nothing else.

Cost matters (a full sample of 16 cards x 16 domains must stay well under 5 ms of CPU, and the
gauges are read every 2 s), so:

- the devices are listed from ``/sys/bus/ap/devices`` (one directory of names) and each card
  directory is stat'ed for its inode; a card's or queue's static facts (type, hwtype, depth,
  functions, driver) are read only when it appears or is re-created;
- the files read repeatedly are kept open and re-read with ``pread`` (:mod:`sysfsio`), the
  ``--hf`` gauges first, then the counters, then the state files, as far as the descriptor
  budget goes; values are parsed on a fast path and only fall back to the strict parsers
  of :mod:`attrs` (which explain what is wrong) when the fast path does not apply;
- ``sample_gauges`` reads only ``requestq_count`` and ``pendingq_count`` of the devices the
  last full sample found, and lists no directory.

Never read: ``serialnr``, ``mkvps``, ``FW_version``, ``API_ordinalnr``, ``op_modes`` (they
send a request to the card), ``se_bind``/``se_associate`` (they run an AP instruction).
A queue's ``interrupt``, read every ``state_refresh_s``, runs TAPQ on recent kernels
(``ap_queue.c``: a status query of the queue, no request to the card); older ones print the
driver's flag. Nothing is ever written. Only the attributes named in :mod:`zcrypt.kinds` are read.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import add
from pathlib import Path
from typing import TypeVar

from esatui.collectors.base import SourceContext, Warnings
from esatui.collectors.model import Availability, GaugeTable, Kind, Number, Reading, Sample
from esatui.collectors.sysfsio import AttrReader, inode, is_dir, list_names
from esatui.collectors.zcrypt import attrs as fmt
from esatui.collectors.zcrypt.kinds import BUS, BUS_KEY, CARD, QUEUE

# What a gauges-only sample reads of each card and queue (its table's columns)
_GAUGES = ("requestq_count", "pendingq_count", "pending_count")
_GAUGE_READ = 64  # bytes read of a gauge file: a number is at most 20 digits and a newline
_CARD_RE = re.compile(r"card([0-9a-f]{2})")
_QUEUE_RE = re.compile(r"([0-9a-f]{2})\.([0-9a-f]{4})")

# Files read at every full sample, in this order; the first three are the counters.
_CARD_FILES = (
    "request_count",
    "requestq_count",
    "pendingq_count",
    "load",
    "online",
    "config",
    "chkstop",
)
_QUEUE_FILES = ("request_count", "requestq_count", "pendingq_count", "online")
# Queue files that change only on configuration events: read every ``state_refresh_s``
# (staggered), and at once when the queue's online flag or its card's state changes.
_QUEUE_SLOW = ("config", "chkstop", "interrupt")

_BUS_TEXT: tuple[tuple[str, Callable[[bytes], object]], ...] = (
    ("ap_domain", fmt.signed),
    ("ap_max_domain_id", fmt.signed),
    ("ap_max_adapter_id", fmt.signed),
    ("config_time", fmt.unsigned),
    ("features", fmt.features),
    ("ap_adapter_mask", fmt.mask),
    ("ap_usage_domain_mask", fmt.mask),
    ("ap_control_domain_mask", fmt.mask),
    ("apmask", fmt.mask),
    ("aqmask", fmt.mask),
)
_BUS_FILES = (
    *("ap_interrupts", "poll_thread", "poll_timeout", "scans", "bindings"),
    *(name for name, _parse in _BUS_TEXT),
)
_FLAG = {b"1\n": "1", b"0\n": "0"}
_INTERRUPT = {
    b"Interrupts enabled.\n": "1",
    b"Interrupts disabled.\n": "0",
    b"Enable Interrupt pending.\n": "pending",
}
_U64_MAX = fmt.U64_MAX
T = TypeVar("T")


@dataclass(slots=True)
class _Device:
    """A card or queue found in the tree, with the paths of the files read every sample."""

    kind: str
    key: str
    path: str
    ino: int
    card: _Device | None = None  # a queue's card
    static: dict[str, str] = field(default_factory=dict)
    files: tuple[str, ...] = ()  # read every full sample (_CARD_FILES / _QUEUE_FILES)
    slow: tuple[str, ...] = ()  # queues: _QUEUE_SLOW
    gauges: tuple[str, str] = ("", "")  # requestq_count, pendingq_count
    slow_raw: tuple[bytes | None, ...] = ()
    slow_due: float = 0.0  # monotonic time the slow files are read next
    phase: float = 1.0  # this device's share of the refresh period (staggers the reads)
    state_raw: tuple[bytes | None, ...] | None = None  # raw state the attrs were built from
    attrs: dict[str, str] = field(default_factory=dict)
    changed: bool = True  # state changed in the last full sample


# A kind's devices in sampling order, and their keys
_Group = tuple[str, list[_Device], tuple[str, ...]]


class ZcryptSource:
    """PolledSource for the AP bus (``--source zcrypt``)."""

    name = "zcrypt"
    kinds: tuple[Kind, ...] = (BUS, CARD, QUEUE)

    def __init__(
        self,
        ctx: SourceContext,
        *,
        fd_budget: int | None = None,
        state_refresh_s: float = 300.0,
    ) -> None:
        self._ctx = ctx
        self._refresh_s = state_refresh_s
        self._bus_dir = str(ctx.path("/sys/bus/ap"))
        self._dev_dir = str(ctx.path("/sys/devices/ap"))
        self._reader = AttrReader(fd_budget)
        self._cards: dict[str, _Device] = {}
        self._queues: dict[str, _Device] = {}
        self._order: list[_Device] = []  # cards then queues, sorted by key
        self._groups_of: list[_Device] | None = None  # the _order _groups were made from
        self._groups: list[_Group] = []
        # read plans over all devices (kept descriptors in device order), rebuilt when the
        # devices, their files or their states change
        self._plan: list[int | str | None] = []
        self._gauge_plan: list[int | str | None] = []
        self._stale = True
        self._listed: list[str] | None = None  # the device names the last scan saw
        self._warn = Warnings(ctx.warn, self.name)  # keyed by path until it reads well

    # -- PolledSource -------------------------------------------------------------------

    def probe(self) -> Availability:
        if not Path(self._bus_dir).is_dir():
            return Availability(
                False, f"{self._bus_dir} does not exist: no AP bus (not IBM Z, or ap module absent)"
            )
        if not Path(self._dev_dir).is_dir():
            return Availability(True, f"AP bus present, no crypto devices under {self._dev_dir}")
        return Availability(True, f"AP bus settings and crypto devices from {self._dev_dir}")

    def sample(self) -> Sample:
        reads0 = self._reader.reads
        self._scan()
        mono_ns = self._ctx.clock.mono_ns()
        time_us = self._ctx.clock.time_us()
        readings: list[Reading] = []
        bus = self._read_bus()
        if bus is not None:
            readings.append(bus)
        now = mono_ns / 1e9
        if self._stale:
            self._plan = self._reader.plan([p for d in self._order for p in d.files])
            self._gauge_plan = self._reader.plan([p for d in self._order for p in d.gauges])
            self._stale = False
        every = self._reader.read_plan(self._plan)
        if every is None:
            self._stale = True  # something went away: this sample reads file by file
        read_all = self._reader.read_all
        at = 0
        for dev in self._order:
            n = len(dev.files)
            raws = every[at : at + n] if every is not None else read_all(dev.files)
            at += n
            readings.append(self._read_device(dev, raws, now))
            if dev.changed:
                self._stale = True
        self._after_reopen()
        self._report_errors()
        return Sample(
            self.name, time_us, tuple(readings), mono_ns=mono_ns, reads=self._reader.reads - reads0
        )

    def sample_gauges(self) -> Sample | None:
        if not self._order:
            return None
        reads0 = self._reader.reads
        mono_ns = self._ctx.clock.mono_ns()
        time_us = self._ctx.clock.time_us()
        every = self._reader.read_plan(self._gauge_plan, _GAUGE_READ)
        if every is not None and _GAUGE_READ in map(len, filter(None, every)):
            every = self._reader.read_plan(self._gauge_plan)  # longer than a number: whole
        if every is None:
            self._stale = True
            read_all = self._reader.read_all
            every = [raw for dev in self._order for raw in read_all(dev.gauges)]
        groups = self._gauge_groups()
        values = None if self._warn.outstanding else _plain_uints(every)
        if values is not None:  # the usual case: every file read, each a plain number
            tables = _gauge_tables(groups, values)
        else:
            tables = self._gauge_tables_checked(groups, every)
        self._report_errors()
        return Sample(
            self.name,
            time_us,
            (),
            mono_ns=mono_ns,
            reads=self._reader.reads - reads0,
            gauges=tuple(tables),
        )

    def _gauge_tables_checked(
        self, groups: list[_Group], every: list[bytes | None]
    ) -> list[GaugeTable]:
        """The gauge tables, value by value: devices gone, values that do not parse (each
        warned about), troubles that are over (cleared)."""
        num = self._uint
        tables: list[GaugeTable] = []
        at = 0
        for kind, devices, all_keys in groups:
            keys: list[str] = []
            rows: list[tuple[Number | None, ...]] = []
            for dev in devices:
                rq, pq = every[at], every[at + 1]
                at += 2
                if rq is None and pq is None:
                    continue  # gone since the last full sample; the next one will tell
                r, p = num(rq, dev.gauges[0]), num(pq, dev.gauges[1])
                rows.append((r, p, None if r is None or p is None else r + p))
                keys.append(dev.key)
            same = len(keys) == len(all_keys)
            tables.append(GaugeTable(kind, _GAUGES, all_keys if same else tuple(keys), tuple(rows)))
        return tables

    def _gauge_groups(self) -> list[_Group]:
        """The devices of each kind in ``_order``'s order (cards, then queues), with their
        keys: the same objects from pass to pass until the devices change."""
        if self._groups_of is not self._order:
            groups: dict[str, list[_Device]] = {}
            for dev in self._order:
                groups.setdefault(dev.kind, []).append(dev)
            self._groups = [(k, ds, tuple(d.key for d in ds)) for k, ds in groups.items()]
            self._groups_of = self._order
        return self._groups

    def close(self) -> None:
        self._reader.close()

    # -- discovery ----------------------------------------------------------------------

    def _names(self) -> list[str]:
        """Names of AP devices (cardXX, XX.YYYY): the bus's device list, else the tree."""
        names = list_names(self._bus_dir + "/devices")
        if names is not None:
            return names
        names = []
        for card in list_names(self._dev_dir) or ():
            if _CARD_RE.fullmatch(card):
                names.append(card)
                names.extend(list_names(f"{self._dev_dir}/{card}") or ())
        return names

    def _scan(self) -> None:  # noqa: PLR0912 - the scan compares, adds and forgets cards and queues in one pass
        """Find cards and queues; read static facts of new ones; forget vanished ones."""
        names = self._names()
        if names == self._listed and all(inode(c.path) == c.ino for c in self._cards.values()):
            return  # the same devices as last time, none re-created
        self._listed = names
        cards: dict[str, _Device] = {}
        queue_names: list[str] = []
        changed = False
        for name in names:
            m = _CARD_RE.fullmatch(name)
            if m is None:
                if _QUEUE_RE.fullmatch(name):
                    queue_names.append(name)
                continue
            key = m.group(1)
            path = f"{self._dev_dir}/{name}"
            ino = inode(path)
            if ino is None:
                continue
            card = self._cards.get(key)
            if card is None or card.ino != ino:
                if card is not None:  # re-created: its queues are new too
                    self._forget(card)
                    for qkey in [q for q in self._queues if q.startswith(key + ".")]:
                        self._forget(self._queues.pop(qkey))
                card = self._new_card(key, path, ino)
                changed = True
            cards[key] = card
        queues: dict[str, _Device] = {}
        for qkey in queue_names:
            card = cards.get(qkey[:2])
            if card is None:
                continue
            queue = self._queues.get(qkey)
            if queue is None:
                path = f"{card.path}/{qkey}"
                if not is_dir(path):
                    continue
                queue = self._new_queue(qkey, path, card)
                changed = True
            queues[qkey] = queue
        for gone in self._cards.keys() - cards.keys():
            self._forget(self._cards[gone])
            changed = True
        for gone in self._queues.keys() - queues.keys():
            self._forget(self._queues[gone])
            changed = True
        self._cards, self._queues = cards, queues
        if changed:
            self._order = [cards[k] for k in sorted(cards)] + [queues[k] for k in sorted(queues)]
            self._pin()
            self._stale = True

    def _forget(self, dev: _Device) -> None:
        self._reader.forget(dev.path + "/")

    def _pin(self) -> None:
        """Keep the hot files open: gauges first, then counters, the bus, state files."""
        pin = self._reader.pin
        for dev in self._order:
            pin(dev.gauges[0])
            pin(dev.gauges[1])
        for dev in self._order:
            for path in dev.files:
                pin(path)
        for name in _BUS_FILES:
            pin(f"{self._bus_dir}/{name}")
        for dev in self._order:
            for path in dev.slow:
                pin(path)

    def _new_card(self, key: str, path: str, ino: int) -> _Device:
        dev = _Device(CARD.name, key, path, ino)
        dev.files = tuple(f"{path}/{n}" for n in _CARD_FILES)
        dev.gauges = (dev.files[1], dev.files[2])
        self._card_static(dev)
        return dev

    def _card_static(self, dev: _Device) -> None:
        path, static = dev.path, dev.static
        static.clear()
        read = self._reader.read
        ctype = self._parsed(read(path + "/type"), path + "/type", fmt.text_value)
        hwtype = self._parsed(read(path + "/hwtype"), path + "/hwtype", fmt.unsigned)
        funcs = self._parsed(read(path + "/ap_functions"), path + "/ap_functions", fmt.functions)
        for name in ("raw_hwtype", "depth"):
            value = self._parsed(read(f"{path}/{name}"), f"{path}/{name}", fmt.unsigned)
            if value is not None:
                static[name] = str(value)
        if hwtype is not None:
            static["hwtype"] = str(hwtype)
        if funcs is not None:
            static["functions"] = f"0x{funcs:08x}"
            static["function_letters"] = fmt.function_letters(funcs)
        if ctype is not None:
            static["type"], static["type_source"] = ctype, "sysfs"
        elif hwtype is not None:
            derived = fmt.type_from_hwtype(hwtype, funcs)
            if derived is not None:
                static["type"], static["type_source"] = derived, "hwtype"
        mode = fmt.mode_of(static.get("type"), funcs)
        if mode is not None:
            static["mode"] = mode
        driver = _link_name(path + "/driver")
        if driver is not None:
            static["driver"] = driver

    def _new_queue(self, key: str, path: str, card: _Device) -> _Device:
        dev = _Device(QUEUE.name, key, path, 0, card)
        dev.files = tuple(f"{path}/{n}" for n in _QUEUE_FILES)
        dev.slow = tuple(f"{path}/{n}" for n in _QUEUE_SLOW)
        dev.gauges = (dev.files[1], dev.files[2])
        dev.phase = 0.75 + 0.5 * zlib.crc32(key.encode()) / 2**32
        dev.static["card"] = card.key
        dev.static["domain"] = key[3:]
        for name in ("type", "mode"):
            if name in card.static:
                dev.static[name] = card.static[name]
        driver = _link_name(path + "/driver")
        if driver is not None:
            dev.static["driver"] = driver
        return dev

    def _after_reopen(self) -> None:
        """Files that had to be reopened belong to re-created devices: refresh their facts."""
        reopened = self._reader.reopened
        if not reopened:
            return
        dirs = {p.rpartition("/")[0] for p in reopened}
        reopened.clear()
        for dev in self._order:
            if dev.path in dirs:
                if dev.kind == CARD.name:
                    self._card_static(dev)
                else:
                    self._refresh_driver(dev)
                dev.state_raw = None  # rebuild its attributes at the next sample

    # -- reading --------------------------------------------------------------------------

    def _read_device(self, dev: _Device, raws: list[bytes | None], now: float) -> Reading:
        at = 4 if dev.card is None else 3  # zcrypt's online: there only while it is bound
        if raws[at] is None and inode(dev.files[at]) is not None:
            raws = self._bound_since(dev)
        rc, rq, pq = raws[0], raws[1], raws[2]
        # the usual case parsed inline (this runs for every device at every sample); any
        # doubt goes to the strict parsers, which also clear or raise warnings
        if (
            not self._warn.outstanding
            and rc is not None
            and rq is not None
            and pq is not None
            and rc[-1:] == rq[-1:] == pq[-1:] == b"\n"
            and rc[:-1].isdigit()
            and rq[:-1].isdigit()
            and pq[:-1].isdigit()
            and len(rc) <= 20
        ):
            values: dict[str, Number | None] = {
                "request_count": int(rc),
                "requestq_count": int(rq),
                "pendingq_count": int(pq),
            }
        else:
            files = dev.files
            values = {
                "request_count": self._count(rc, files[0]),
                "requestq_count": self._uint(rq, files[1]),
                "pendingq_count": self._uint(pq, files[2]),
            }
        values["pending_count"] = _pending(values)
        if dev.card is None:  # a card
            values["load"] = self._uint(raws[3], dev.files[3])
            state_raw = tuple(raws[4:])
            if dev.state_raw is not None and (dev.state_raw[0] is None) != (raws[4] is None):
                self._card_static(dev)  # zcrypt bound or unbound: its type, the driver link
        else:
            online = raws[3]
            prev = dev.state_raw
            if now >= dev.slow_due or dev.card.changed or prev is None or prev[0] != online:
                dev.slow_raw = tuple(self._reader.read_all(dev.slow))
                dev.slow_due = now + self._refresh_s * dev.phase
            status = None if online is not None else self._reader.read(dev.path + "/status")
            state_raw = (online, status, *dev.slow_raw)
        if state_raw != dev.state_raw:
            dev.attrs = self._build_attrs(dev, state_raw)
            dev.state_raw = state_raw
            dev.changed = True
        else:
            dev.changed = False
        return Reading(dev.kind, dev.key, values, dev.attrs)

    def _bound_since(self, dev: _Device) -> list[bytes | None]:
        """The device's files read afresh: its ``online`` exists though the read plan found
        none. A zcrypt driver bound to it after it was found (zcrypt_cex4 loaded later, as
        udev does at boot or at a hot-plug) adds ``online``, ``load`` and the card's ``type``
        (zcrypt_card.c, zcrypt_queue.c: ``sysfs_create_group`` at probe), which neither the
        device list nor an inode shows, and the plan keeps ``None`` for a file absent when
        it was made."""
        self._stale = True
        return self._reader.read_all(dev.files)

    def _build_attrs(self, dev: _Device, raw: tuple[bytes | None, ...]) -> dict[str, str]:
        """Attributes from the static facts and the raw state files (when these changed)."""
        names: tuple[str, ...]
        paths: tuple[str, ...]
        if dev.card is None:
            names = _CARD_FILES[4:]
            paths = dev.files[4:]
        else:
            names = (_QUEUE_FILES[3], "status", *_QUEUE_SLOW)
            paths = (dev.files[3], dev.path + "/status", *dev.slow)
        found: dict[str, str] = {}
        for name, value, path in zip(names, raw, paths, strict=True):
            if value is None:
                continue
            if name == "status":
                text = self._parsed(value, path, fmt.text_value)
            elif name == "interrupt":
                text = _INTERRUPT.get(value) or self._parsed(value, path, fmt.interrupt)
            else:
                text = _FLAG.get(value) or self._parsed(value, path, fmt.flag)
            if text is not None:
                found[name] = text
        if dev.card is not None and ("online" in found) != dev.static.get("driver", "").startswith(
            "cex"
        ):
            self._refresh_driver(dev)  # rebound between zcrypt and vfio_ap
        attrs = {**dev.static, **found}
        state = fmt.card_state(found.get("config"), found.get("chkstop"), found.get("online"))
        if state == "-" and "status" in found:
            state = "vfio:" + found["status"]
        attrs["state"] = state
        return attrs

    def _refresh_driver(self, dev: _Device) -> None:
        driver = _link_name(dev.path + "/driver")
        if driver is None:
            dev.static.pop("driver", None)
        else:
            dev.static["driver"] = driver

    def _read_bus(self) -> Reading | None:
        base = self._bus_dir + "/"
        read = self._reader.read
        values: dict[str, Number | None] = {}
        for name in ("ap_interrupts", "poll_thread"):
            flag = self._parsed(read(base + name), base + name, fmt.flag)
            values[name] = None if flag is None else int(flag)
        values["poll_timeout_ns"] = self._uint(read(base + "poll_timeout"), base + "poll_timeout")
        values["scans"] = self._uint(read(base + "scans"), base + "scans")
        attrs: dict[str, str] = {}
        for name, parse in _BUS_TEXT:
            value = self._parsed(read(base + name), base + name, parse)
            if value is not None:
                attrs[name] = str(value)
        path = base + "bindings"
        raw = read(path)
        b = self._parsed(raw, path, fmt.bindings)
        if raw is not None and b is not None:
            attrs["bindings"] = raw.decode().strip()
            values["bound_apqns"], values["total_apqns"] = b.bound, b.total
        if all(v is None for v in values.values()) and not attrs:
            return None
        return Reading(BUS.name, BUS_KEY, values, attrs)

    # -- parsing --------------------------------------------------------------------------

    def _uint(self, raw: bytes | None, path: str) -> int | None:
        if raw is None:
            return None
        if raw[-1:] == b"\n" and raw[:-1].isdigit():  # the usual case, fast
            value = int(raw)
            if value <= _U64_MAX:
                if self._warn.outstanding:
                    self._warn.clear(path)
                return value
        return self._parsed(raw, path, fmt.unsigned)

    def _count(self, raw: bytes | None, path: str) -> int | None:
        if raw is not None and raw[:1] == b"-":
            # a queue not initialised (vfio_ap-bound), or a count of a kernel before 5.6
            return self._parsed(raw, path, fmt.request_count)
        return self._uint(raw, path)

    def _parsed(self, raw: bytes | None, path: str, parse: Callable[[bytes], T]) -> T | None:
        if raw is None:
            return None
        try:
            value = parse(raw)
        except fmt.Garbage as exc:
            self._complain(path, str(exc))
            return None
        if self._warn.outstanding:
            self._warn.clear(path)
        return value

    # -- warnings -------------------------------------------------------------------------

    def _complain(self, path: str, why: str) -> None:
        """Warn once per file until it reads well again."""
        self._warn(f"skipped {path}: {why}", key=path)

    def _report_errors(self) -> None:
        """The files the reader could not read since the last sample."""
        errors = self._reader.errors
        for path, message in errors.items():
            self._complain(path, message)
        errors.clear()


def _plain_uints(raws: list[bytes | None]) -> list[int] | None:
    """Every file's value when each one is what ``_uint``'s fast path takes (decimal digits
    and a newline, at most 2**64 - 1), parsed at once; ``None`` when any is not."""
    if not raws or None in raws:
        return None
    lines = b"".join(raws).split(b"\n")  # type: ignore[arg-type]  # no None: tested
    if lines.pop():  # something after the last newline
        return None
    # n lines, each one shorter than its file: every file is its line and a newline
    if len(lines) != len(raws) or list(map(len, raws)) != list(map(_one_more, map(len, lines))):  # type: ignore[arg-type]
        return None
    if not all(lines) or not b"".join(lines).isdigit():
        return None
    values = list(map(int, lines))
    if max(map(len, lines)) > _U64_DIGITS and max(values) > _U64_MAX:
        return None
    return values


_one_more = (1).__add__
_U64_DIGITS = 19  # every number of up to 19 digits is below 2**64


def _gauge_tables(groups: list[_Group], values: list[int]) -> list[GaugeTable]:
    """The gauge tables from every device's (requestq_count, pendingq_count), in order."""
    tables: list[GaugeTable] = []
    at = 0
    for kind, devices, keys in groups:
        end = at + 2 * len(devices)
        requestq, pendingq = values[at:end:2], values[at + 1 : end : 2]
        rows = tuple(zip(requestq, pendingq, map(add, requestq, pendingq), strict=True))
        tables.append(GaugeTable(kind, _GAUGES, keys, rows))
        at = end
    return tables


def _pending(values: dict[str, Number | None]) -> Number | None:
    """Everything queued in the driver at this sample; unknown if either part is."""
    rq, pq = values["requestq_count"], values["pendingq_count"]
    return None if rq is None or pq is None else rq + pq


def _link_name(path: str) -> str | None:
    try:
        return Path(path).readlink().name
    except OSError:
        return None
