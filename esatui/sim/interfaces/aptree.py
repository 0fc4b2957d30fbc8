"""A fake AP bus: ``/sys/bus/ap`` and ``/sys/devices/ap`` as the kernel shows them.

The attribute formats are the kernel's (see ``collectors/zcrypt/attrs.py``). Types, function
bits, depths and counter magnitudes follow the real ``lszcrypt`` and ``/proc/driver/z90crypt``
captures in ``tests/data/zcrypt/``:

- CEX5A: hwtype 11, ``functions=0x68800000`` (``lszcrypt -VVV``, s390-tools 1.x);
- CEX8P (EP11): hwtype 14, FUNCTIONS ``-----XN-F-`` = 0x06800000, QDEPTH 08 (``lszcrypt -V``);
- CEX7C (CCA): hwtype 13 (``lszcrypt`` in a KVM guest); its function bits are not in any
  capture: 0x92800000 (S, D, N, F) is an assumption from lszcrypt's bit table;
- a lab guest had 1,382,729 requests on one accelerator (z90crypt's hex counter 0x151949).

Files are rewritten in place (same inode), as sysfs values change under an open descriptor.
A device that is re-created gets a new directory inode, as kernfs gives it.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

FUNCTIONS = {"A": 0x68800000, "C": 0x92800000, "P": 0x06800000}
DEFAULT_DEPTH = 7  # sysfs 'depth'; lszcrypt shows QDEPTH = depth + 1 = 08
VFIO_STATUSES = ("assigned", "unassigned", "in use")


def hwtype_of(card_type: str) -> int:
    """CEX4 -> 10 ... CEX8 -> 14; CEX2/CEX3 by mode as the old drivers numbered them."""
    gen = int("".join(c for c in card_type[3:] if c.isdigit()) or "7")
    if gen >= 4:
        return 6 + gen
    accel = card_type.endswith("A")
    return {2: 6, 3: 8}.get(gen, 8) + (0 if accel else 1)


@dataclass
class _Queue:
    card: int
    domain: int
    driver: str
    request_count: int = 0
    requestq: int = 0
    pendingq: int = 0


@dataclass
class _Card:
    card: int
    card_type: str
    driver: str
    request_count: int = 0


class ApTree:
    """Writes and updates a fake AP bus below ``root`` (the directory given as ``--root``)."""

    def __init__(
        self,
        root: Path,
        *,
        interrupts: bool = True,
        poll_thread: bool = False,
        poll_timeout_ns: int = 250000,
        ap_domain: int = -1,
        max_domain_id: int = 84,
        old_kernel: bool = False,
    ) -> None:
        self.root = Path(root)
        self.old_kernel = old_kernel
        self.bus = self.root / "sys/bus/ap"
        self.devices = self.root / "sys/devices/ap"
        self.interrupts = interrupts
        self.defer_masks = False  # True while building many devices: masks written once after
        self._cards: dict[int, _Card] = {}
        self._queues: dict[tuple[int, int], _Queue] = {}
        self.devices.mkdir(parents=True, exist_ok=True)
        (self.bus / "devices").mkdir(parents=True, exist_ok=True)
        for drv in ("cex4card", "cex4queue", "vfio_ap"):
            (self.bus / "drivers" / drv).mkdir(parents=True, exist_ok=True)
        bus = {
            "ap_interrupts": int(interrupts),
            "poll_thread": int(poll_thread),
            "poll_timeout": poll_timeout_ns,
            "ap_domain": ap_domain,
            "ap_max_domain_id": max_domain_id,
            "config_time": 30,
            "ap_adapter_mask": "0x" + "0" * 64,
            "ap_usage_domain_mask": "0x" + "0" * 64,
            "ap_control_domain_mask": "0x" + "0" * 64,
        }
        if not old_kernel:
            bus |= {
                "ap_max_adapter_id": 255,
                "apmask": "0x" + "f" * 64,
                "aqmask": "0x" + "f" * 64,
                "features": "APSC APXA QACT RC8A APSB",
                "scans": 1,
                "bindings": "0/0 (complete)",
            }
        for name, value in bus.items():
            self.set_bus(name, value)

    # -- the bus ----------------------------------------------------------------------------

    def set_bus(self, name: str, value: object) -> None:
        _write(self.bus / name, str(value))

    def _update_masks(self) -> None:
        if self.defer_masks:
            return
        cards = set(self._cards)
        domains = {d for _c, d in self._queues}
        self.set_bus("ap_adapter_mask", _mask(cards))
        self.set_bus("ap_usage_domain_mask", _mask(domains))
        self.set_bus("ap_control_domain_mask", _mask(domains))
        if not self.old_kernel:
            bound = sum(1 for q in self._queues.values() if q.driver)
            total = len(self._queues)
            self.set_bus("bindings", f"{bound}/{total}" + (" (complete)" if bound == total else ""))

    # -- cards and queues -------------------------------------------------------------------

    def card_dir(self, card: int) -> Path:
        return self.devices / f"card{card:02x}"

    def queue_dir(self, card: int, domain: int) -> Path:
        return self.card_dir(card) / f"{card:02x}.{domain:04x}"

    def add_card(
        self,
        card: int,
        card_type: str = "CEX7C",
        *,
        functions: int | None = None,
        depth: int = DEFAULT_DEPTH,
        driver: str = "cex4card",
        request_count: int = 0,
        online: bool = True,
    ) -> None:
        d = self.card_dir(card)
        d.mkdir(parents=True)
        hw = hwtype_of(card_type)
        funcs = FUNCTIONS.get(card_type[-1], 0) if functions is None else functions
        files: dict[str, object] = {
            "hwtype": hw,
            "depth": depth,
            "ap_functions": f"0x{funcs:08X}",
            "request_count": request_count,
            "requestq_count": 0,
            "pendingq_count": 0,
            "modalias": f"ap:t{hw:02X}",
        }
        if driver.startswith("cex"):
            files |= {"type": card_type, "online": int(online)}
        if not self.old_kernel:
            files |= {"raw_hwtype": hw, "config": 1, "chkstop": 0, "max_msg_size": 12288}
            if driver.startswith("cex"):
                files["load"] = 0
        for name, value in files.items():
            _write(d / name, str(value))
        # never read by a monitor (they talk to the card): present so a test can prove it
        for name in ("serialnr", "mkvps", "FW_version", "API_ordinalnr", "op_modes"):
            _write(d / name, "DO-NOT-READ")
        self._link_driver(d, driver, depth=3)
        _symlink(self.bus / "devices" / d.name, f"../../../devices/ap/{d.name}")
        self._cards[card] = _Card(card, card_type, driver, request_count)
        self._update_masks()

    def add_queue(
        self,
        card: int,
        domain: int,
        *,
        driver: str = "cex4queue",
        request_count: int = 0,
        online: bool = True,
        status: str = "in use",
    ) -> None:
        d = self.queue_dir(card, domain)
        d.mkdir(parents=True)
        vfio = driver == "vfio_ap"
        files: dict[str, object] = {
            "request_count": "-" if vfio else request_count,
            "requestq_count": 0,
            "pendingq_count": 0,
            "interrupt": (
                "Interrupts enabled." if self.interrupts and not vfio else "Interrupts disabled."
            ),
            "reset": "No Reset Timer set.",
        }
        if vfio:
            files["status"] = status
        elif driver:
            files["online"] = int(online)
            if not self.old_kernel:
                files["load"] = 0
        if not self.old_kernel:
            files |= {"config": 1, "chkstop": 0}
        for name, value in files.items():
            _write(d / name, str(value))
        for name in ("mkvps", "op_modes"):
            _write(d / name, "DO-NOT-READ")
        if driver:
            self._link_driver(d, driver, depth=4)
        _symlink(self.bus / "devices" / d.name, f"../../../devices/ap/card{card:02x}/{d.name}")
        self._queues[(card, domain)] = _Queue(card, domain, driver, 0 if vfio else request_count)
        self._update_masks()

    def _link_driver(self, d: Path, driver: str, depth: int) -> None:
        link = d / "driver"
        if link.is_symlink():
            link.unlink()
        if driver:
            _symlink(link, "../" * depth + f"bus/ap/drivers/{driver}")

    def advance(self, card: int, domain: int, requests: int) -> None:
        """``requests`` more requests through queue card.domain (the card counts them too)."""
        q = self._queues[(card, domain)]
        c = self._cards[card]
        q.request_count += requests
        c.request_count += requests
        _write(self.queue_dir(card, domain) / "request_count", str(q.request_count))
        _write(self.card_dir(card) / "request_count", str(c.request_count))

    def set_depths(self, card: int, domain: int, requestq: int, pendingq: int) -> None:
        """The queue's gauges now; the card's are the sums over its queues, as the kernel's."""
        q = self._queues[(card, domain)]
        q.requestq, q.pendingq = requestq, pendingq
        qd = self.queue_dir(card, domain)
        _write(qd / "requestq_count", str(requestq))
        _write(qd / "pendingq_count", str(pendingq))
        mine = [x for x in self._queues.values() if x.card == card]
        _write(self.card_dir(card) / "requestq_count", str(sum(x.requestq for x in mine)))
        _write(self.card_dir(card) / "pendingq_count", str(sum(x.pendingq for x in mine)))
        if not self.old_kernel and (self.card_dir(card) / "load").exists():
            _write(self.card_dir(card) / "load", str(sum(x.pendingq for x in mine)))

    def reset_card_counter(self, card: int) -> None:
        """``echo 0 > cardXX/request_count``: the kernel zeroes the card and its queues."""
        self._cards[card].request_count = 0
        _write(self.card_dir(card) / "request_count", "0")
        for (c, d), q in self._queues.items():
            if c == card and q.driver != "vfio_ap":
                q.request_count = 0
                _write(self.queue_dir(c, d) / "request_count", "0")

    def set_state(self, card: int, domain: int | None = None, **flags: bool) -> None:
        """Set ``online``, ``config`` or ``chkstop`` of a card (domain None) or a queue."""
        d = self.card_dir(card) if domain is None else self.queue_dir(card, domain)
        for name, value in flags.items():
            _write(d / name, str(int(value)))

    def bind_queue(self, card: int, domain: int, driver: str, status: str = "in use") -> None:
        """Rebind a queue (zcrypt <-> vfio_ap): its directory stays, its attributes change."""
        d = self.queue_dir(card, domain)
        q = self._queues[(card, domain)]
        for name in ("online", "load", "status"):
            _remove(d / name)
        if driver == "vfio_ap":
            _write(d / "status", status)
            _write(d / "request_count", "-")
        else:
            _write(d / "online", "1")
            _write(d / "request_count", "0")
        q.driver, q.request_count = driver, 0
        self._link_driver(d, driver, depth=4)
        self._update_masks()

    def remove_card(self, card: int) -> None:
        shutil.rmtree(self.card_dir(card))
        for link in (self.bus / "devices").iterdir():
            if link.name.startswith(f"{card:02x}") or link.name == f"card{card:02x}":
                link.unlink()
        self._cards.pop(card)
        for key in [k for k in self._queues if k[0] == card]:
            self._queues.pop(key)
        self._update_masks()

    def recreate_card(self, card: int) -> None:
        """The card goes and comes back (new inodes, counters from 0), same type and queues."""
        old = self._cards[card]
        queues = [q for q in self._queues.values() if q.card == card]
        # keep the old directory until the new one exists, so its inode cannot be reused
        parked = self.devices / f".gone-card{card:02x}"
        self.card_dir(card).rename(parked)
        self._cards.pop(card)
        for q in queues:
            self._queues.pop((q.card, q.domain))
        self.add_card(card, old.card_type, driver=old.driver)
        for q in queues:
            self.add_queue(card, q.domain, driver=q.driver)
        shutil.rmtree(parked)

    @property
    def apqns(self) -> list[tuple[int, int]]:
        return sorted(self._queues)


def build(
    root: Path,
    cards: int = 4,
    domains: int = 4,
    *,
    types: tuple[str, ...] = ("CEX7A", "CEX7C", "CEX8P"),
    vfio_domains: tuple[int, ...] = (),
    first_domain: int = 0x10,
    old_kernel: bool = False,
    interrupts: bool = True,
    poll_timeout_ns: int = 250000,
) -> ApTree:
    """``cards`` cards (types in rotation), each with ``domains`` queues from ``first_domain``.

    Domains listed in ``vfio_domains`` are bound to vfio_ap on every card.
    """
    tree = ApTree(
        root, old_kernel=old_kernel, interrupts=interrupts, poll_timeout_ns=poll_timeout_ns
    )
    tree.defer_masks = True
    for i in range(cards):
        card = 2 * i + 1
        tree.add_card(card, types[i % len(types)])
        for j in range(domains):
            domain = first_domain + j
            driver = "vfio_ap" if domain in vfio_domains else "cex4queue"
            tree.add_queue(card, domain, driver=driver)
    tree.defer_masks = False
    tree._update_masks()
    return tree


def _mask(bits: set[int]) -> str:
    value = 0
    for bit in bits:
        value |= 1 << (255 - bit)
    return f"0x{value:064x}"


def _write(path: Path, text: str) -> None:
    # sysfs values end with a newline. Rewrite in place so open descriptors see the change;
    # write before truncating so a concurrent reader of a growing counter never sees it empty.
    data = (text + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    """Remove an attribute; truncate it first so a descriptor kept on it reads empty (in real
    sysfs such a descriptor reads ENODEV; an unlinked regular file would keep its content)."""
    if path.exists():
        os.truncate(path, 0)
        path.unlink()


def _symlink(link: Path, target: str) -> None:
    if link.is_symlink():
        link.unlink()
    link.symlink_to(target)
