"""One simulated Linux guest as its own files show it: ``/proc`` and ``/sys`` under a root.

The ``host`` and ``zcrypt`` sources read this tree through ``--root`` exactly as they read a
real guest: ``/proc/stat`` (per virtual CPU, USER_HZ ticks), ``/proc/sysinfo`` (machine,
LPAR and the VM00 level naming the guest), ``/proc/cpuinfo``, the hostname,
``/sys/devices/system/cpu`` and the AP bus (``/sys/bus/ap``, ``/sys/devices/ap``) with the
guest's APVIRT queue. The formats are the kernel's (see the captures in ``tests/data/``);
the static files are written once, the counters and gauges at every :meth:`update`.
"""

from __future__ import annotations

import os
from pathlib import Path

from esatui.collectors.procstat import CPU_FIELDS
from esatui.sim.interfaces.aptree import ApTree
from esatui.sim.interfaces.procfs import ProcStat
from esatui.sim.params import SimParams, parse_lpar_cpus
from esatui.sim.snapshot import GuestCounters, Identity, SystemSnapshot

# The IFLs' capability rating (seed 000's machine shows 416); a sub-capacity CP's rating is
# this divided by its relative speed (ratings are inversely proportional to speed).
IFL_CAPABILITY = 416


class GuestTree:
    """Writes and updates the tree of the Linux guest ``userid`` below ``root``."""

    def __init__(
        self, root: Path, params: SimParams, identity: Identity, first: SystemSnapshot, userid: str
    ) -> None:
        self.root = Path(root)
        self.userid = userid
        guest = first.guest(userid)
        if guest.os != "linux" or guest.ap_queue is None or guest.ap_bus is None:
            raise ValueError(f"{userid} is not a simulated Linux guest")
        self._stat = ProcStat(self.root, range(guest.vcpus))
        self._stat.path.parent.mkdir(parents=True, exist_ok=True)
        self._stat_fd = os.open(self._stat.path, os.O_WRONLY | os.O_CREAT, 0o644)
        self._write_static(params, identity, first, guest)
        bus = guest.ap_bus
        self.ap = ApTree(
            self.root,
            interrupts=bus.ap_interrupts,
            poll_thread=bus.poll_thread,
            poll_timeout_ns=bus.poll_timeout_ns,
            ap_domain=bus.domain,
        )
        q = guest.ap_queue
        self._queue = (q.card, q.domain)
        self.ap.defer_masks = True
        self.ap.add_card(q.card, q.card_type)
        self.ap.add_queue(q.card, q.domain)
        self.ap.defer_masks = False
        self.ap.set_bus("ap_domain", bus.domain)
        self._requests = 0
        self._gauges = (-1, -1)
        self.update(first)

    def update(self, snapshot: SystemSnapshot) -> None:
        """Counters and gauges as ``snapshot`` shows them."""
        guest = snapshot.guest(self.userid)
        for t in guest.ticks:
            self._stat.ticks[t.cpu] = [
                t.user,
                t.nice,
                t.system,
                t.idle,
                t.iowait,
                t.irq,
                t.softirq,
                t.steal,
                *([0] * (len(CPU_FIELDS) - 8)),
            ]
        # rewritten in place, like the kernel's file (the sources read it from this thread)
        data = self._stat.render().encode()
        os.pwrite(self._stat_fd, data, 0)
        os.ftruncate(self._stat_fd, len(data))
        self.update_gauges(guest)
        q = guest.ap_queue
        assert q is not None
        if q.request_count != self._requests:
            card, domain = self._queue
            self.ap.advance(card, domain, q.request_count - self._requests)
            self._requests = q.request_count

    def close(self) -> None:
        if self._stat_fd >= 0:
            os.close(self._stat_fd)
            self._stat_fd = -1

    def update_gauges(self, guest: GuestCounters) -> None:
        """Only the AP queue's gauges (what ``zcrypt`` reads at the ``--hf`` rate)."""
        q = guest.ap_queue
        assert q is not None
        gauges = (q.requestq_count, q.pendingq_count)
        if gauges != self._gauges:
            self.ap.set_depths(q.card, q.domain, *gauges)
            self._gauges = gauges

    # --- the files written once ----------------------------------------------------------

    def _write_static(
        self, params: SimParams, identity: Identity, snap: SystemSnapshot, guest: GuestCounters
    ) -> None:
        proc = self.root / "proc"
        _write(proc / "sysinfo", sysinfo_text(params, identity, snap, guest))
        _write(proc / "cpuinfo", cpuinfo_text(identity, guest))
        _write(proc / "sys/kernel/hostname", guest.userid.lower())
        cpu_dir = self.root / "sys/devices/system/cpu"
        last = guest.vcpus - 1
        span = "0" if last == 0 else f"0-{last}"
        for name, value in (
            ("online", span),
            ("present", span),
            ("possible", "0-63"),
            ("offline", f"{guest.vcpus}-63"),
            ("kernel_max", "63"),
            ("dispatching", "0"),
        ):
            _write(cpu_dir / name, value)
        for n in range(guest.vcpus):
            d = cpu_dir / f"cpu{n}"
            files = {"address": str(n), "configure": "1", "polarization": "horizontal"}
            if n:
                files["online"] = "1"  # cpu0 cannot go offline: the kernel gives it no file
            for name, value in files.items():
                _write(d / name, value)


def sysinfo_text(
    params: SimParams, identity: Identity, snap: SystemSnapshot, guest: GuestCounters
) -> str:
    """``/proc/sysinfo`` of a guest of the simulated LPAR (the kernel's layout)."""
    counts = parse_lpar_cpus(params.lpar_cpus)
    lcpus = len(snap.processors)
    capability = round(IFL_CAPABILITY / params.cp_speed) if "CP" in counts else IFL_CAPABILITY
    shared = 0 if params.dedicated else lcpus
    level = identity.zvm_level
    lines = [
        ("Manufacturer", "IBM"),
        ("Type", identity.machine_type),
        ("Model", "701              H43"),
        ("Sequence Code", "00000000000" + cpu_serial(identity)[1:]),
        ("Plant", "02"),
        ("Model Capacity", "701              00000000"),
        ("Capacity Adj. Ind.", "100"),
        ("Capacity Ch. Reason", "0"),
        ("", ""),
        ("CPUs Total", "43"),
        ("CPUs Configured", str(lcpus)),
        ("CPUs Standby", "0"),
        ("CPUs Reserved", str(43 - lcpus)),
        ("Capability", str(capability)),
        ("Nominal Capability", str(capability)),
        ("Secondary Capability", str(IFL_CAPABILITY)),
        ("", ""),
        ("LPAR Number", "1"),
        ("LPAR Characteristics", "Dedicated" if params.dedicated else "Shared"),
        ("LPAR Name", identity.lpar),
        ("LPAR Adjustment", "1000" if params.dedicated else "500"),
        ("LPAR CPUs Total", str(lcpus)),
        ("LPAR CPUs Configured", str(lcpus)),
        ("LPAR CPUs Standby", "0"),
        ("LPAR CPUs Reserved", "0"),
        ("LPAR CPUs Dedicated", str(lcpus - shared)),
        ("LPAR CPUs Shared", str(shared)),
        *_mtid_lines(params),
        ("", ""),
        ("VM00 Name", guest.userid),
        ("VM00 Control Program", f"z/VM    {level}"),
        ("VM00 Adjustment", "1000"),
        ("VM00 CPUs Total", str(guest.vcpus)),
        ("VM00 CPUs Configured", str(guest.vcpus)),
        ("VM00 CPUs Standby", "0"),
        ("VM00 CPUs Reserved", "0"),
    ]
    return "".join(f"{k + ':':<22}{v}\n" if k else "\n" for k, v in lines)


def _mtid_lines(params: SimParams) -> list[tuple[str, str]]:
    """SYSIB 2.2.2's thread IDs (the kernel prints them when multithreading is installed):
    with SMT the IFL cores run threads 0 and 1, CPs one thread."""
    if not params.smt:
        return []
    return [("LPAR CPUs G-MTID", "0"), ("LPAR CPUs S-MTID", "1"), ("LPAR CPUs PS-MTID", "1")]


def cpuinfo_text(identity: Identity, guest: GuestCounters) -> str:
    """``/proc/cpuinfo`` of a z/VM guest: version FF marks its CPUs as virtual."""
    lines = [
        "vendor_id       : IBM/S390",
        f"# processors    : {guest.vcpus}",
        "bogomips per cpu: 21881.00",
        "features\t: esan3 zarch stfle msa ldisp eimm dfp edat etf3eh highgprs te vx sie",
    ]
    serial = cpu_serial(identity)
    for n in range(guest.vcpus):
        ident = f"{n % 16:X}{serial[1:]}"
        lines.append(
            f"processor {n}: version = FF,  identification = {ident},  "
            f"machine = {identity.machine_type}"
        )
    return "\n".join(lines) + "\n"


def cpu_serial(identity: Identity) -> str:
    """A six-digit CPU serial for the simulated machine (from its LPAR name: stable)."""
    return f"{sum(ord(c) * (i + 1) for i, c in enumerate(identity.lpar)) % 1_000_000:06d}"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text if text.endswith("\n") else text + "\n")
    tmp.replace(path)
