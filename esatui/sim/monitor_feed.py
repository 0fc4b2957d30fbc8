"""The simulated z/VM monitor: records per sample interval, through a monreader device.

At every monitor sample interval boundary the simulated CP writes what a real one of its
level writes for the crypto and processor domains: D5R9 MRPRCAPC (the APVIRT counters, in the
record of the level: 112 bytes before z/VM 7.1, 128 on 7.1, 360 with the NSERV, HSERV and
DSERV accumulators from z/VM 7.2 with PTF UM35974 on; docs/MONITOR.md), D5R10 (one crypto
measurement block per adapter), D0R2 per logical processor (its spin lock fields included),
D0R23 (the formal spin locks, from z/VM 5.3), D3R2 per logical processor when the level has
encrypted paging (6.4 on), zero counts where it pages none, D0R16 for the partition (per
core with SMT), and a D1R11 ending the interval; the first set also carries the
configuration records D1R4 (system), D1R5 (per processor) and D1R9 (the sample interval), as
the monitor sends them when a reader connects. Records are encoded by
:mod:`esatui.collectors.monitor.encode` from the same layout tables the readers decode with.

Sets reach the ordinary ``monitor`` source through :class:`MonitorDevice`, which reads like
``/dev/monreader`` (each set, then a 0-byte read; ``EINTR`` while there is nothing to read),
and optionally also go to a MONWRITE file.
"""

from __future__ import annotations

import errno
import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path

from esatui.collectors.monitor import encode
from esatui.collectors.monitor.encode import CmbSpec
from esatui.collectors.monitor.kinds import FUNCTIONS, MODE_ACCEL, MODE_CCA
from esatui.sim.guest_tree import cpu_serial
from esatui.sim.locks import MIN_LEVEL as MIN_LOCK_LEVEL
from esatui.sim.paging import MIN_LEVEL as MIN_PAGING_LEVEL
from esatui.sim.snapshot import Identity, ProcessorCounters, SystemSnapshot

CPU_TYPE_CODES = {"CP": 0, "IFL": 3, "ICF": 4, "ZIIP": 5}
# MRPRCAPC's length by level (IBM's monitor record pages: 5.2/5.4 112 bytes, 7.1 128, 7.2
# with the PTF 360); a scenario may declare another (Identity.d5r9_length)
D5R9_BY_LEVEL = (((7, 2), 360), ((7, 1), 128), ((0, 0), 112))
CMB_SCALE = 1e-6
"""Seconds per unit of a simulated CMB time (the model keeps µs)."""
HF_RATE = 30
# The monreader device answers "nothing yet" (EINTR) after this long without data, so the
# reading thread can notice that it is being stopped.
_READ_WAIT_S = 0.5


def config_records(snap: SystemSnapshot, interval_s: float) -> list[bytes]:
    """D1R4, D1R5 per processor, D1R9: what the monitor sends when a reader connects."""
    ident = snap.identity
    at = snap.time_us
    tz = time.localtime(at // 1_000_000).tm_gmtoff
    records = [
        encode.system_record(
            at,
            machine_type=ident.machine_type,
            machine_model="701",
            machine_serial="00000000000" + cpu_serial(ident)[1:],
            system_name=ident.node,
            lpar_name=ident.lpar,
            level=ident.level,
            tz_offset_s=tz,
        )
    ]
    records += [
        encode.processor_config_record(at, p.address, CPU_TYPE_CODES.get(p.ptype, 3))
        for p in snap.processors
    ]
    records.append(
        encode.sample_config_record(at, interval_s=max(1, round(interval_s)), hf_rate=HF_RATE)
    )
    return records


def d5r9_length(identity: Identity) -> int:
    """The length of the D5R9 record the simulated CP of ``identity`` writes."""
    if identity.d5r9_length is not None:
        return identity.d5r9_length
    level = identity.level[:2]
    return next(length for since, length in D5R9_BY_LEVEL if level >= since)


def interval_records(snap: SystemSnapshot) -> list[bytes]:
    """D5R9, D5R10, D0R2 per processor and D0R16 with the counters of ``snap``; fields the
    level's D5R9 lacks (NSERV, HSERV, DSERV before the PTF) are not written."""
    at = snap.time_us
    c = snap.crypto
    records = [
        encode.crypto_record(
            at,
            {
                "virt_nq": c.vnq,
                "real_nq": c.rnq,
                "virt_dq": c.vdq,
                "real_dq": c.rdq,
                "virt_done": c.vdone,
                "real_done": c.rdone,
                "virt_rej": c.vnq_rejected,
                "real_rej": c.rnq_rejected,
                "vserv_us": c.vserv_us,
                "rserv_us": c.rserv_us,
                "hserv_us": c.hserv_us,
                "nserv_us": c.nserv_us,
                "dserv_us": c.dserv_us,
                "nq_waiting": c.waiting_nq,
            },
            d5r9_length(snap.identity),
        )
    ]
    cmbs = []
    for a in snap.adapters:
        mode = MODE_CCA if a.mode == "cca" else MODE_ACCEL
        by_name = {f.name: f for f in a.functions}
        pairs = tuple(
            (by_name[name].time_us, by_name[name].count) if name in by_name else (0, 0)
            for name in FUNCTIONS[mode]
        )
        cmbs.append(CmbSpec(ap=a.ap, pairs=pairs, mode=mode, ap_type=a.hwtype, scale=CMB_SCALE))
    records += encode.cmb_records(at, cmbs, per_record=16)
    records += [
        encode.processor_record(
            at,
            cpu=p.address,
            cpu_type=CPU_TYPE_CODES.get(p.ptype, 3),
            emul_us=p.emul_us,
            user_us=p.user_us,
            syst_us=p.syst_us,
            wait_us=p.wait_us,
            spin_us=p.spin_us,
            spins=p.spins,
        )
        for p in snap.processors
    ]
    if snap.identity.level[:2] >= MIN_LOCK_LEVEL and snap.locks:
        records.append(
            encode.spin_lock_record(
                at,
                [
                    encode.LockCounters(
                        lock.name, lock.excl_spins, lock.excl_us, lock.shared_spins, lock.shared_us
                    )
                    for lock in snap.locks
                ],
            )
        )
    # a real CP writes D3R2 for every online processor in every sample of the storage
    # domain, its encrypted paging counts zero where nothing pages encrypted
    if snap.identity.level[:2] >= MIN_PAGING_LEVEL:
        records += [
            encode.paging_record(
                at,
                cpu=p.address,
                enc_pages=p.paging.enc_pages,
                dec_pages=p.paging.dec_pages,
                enc_us=p.paging.enc_us,
                dec_us=p.paging.dec_us,
            )
            for p in snap.processors
        ]
    records.append(
        encode.lpar_record(
            at, lpar_name=snap.identity.lpar, data_us=at, cpus=_partition_cpus(snap.processors)
        )
    )
    return records


def _partition_cpus(
    processors: Sequence[ProcessorCounters],
) -> list[tuple[int, int, int, str]]:
    """D0R16's entries (address, accumulated µs, the partition's own µs, type): one per
    processor, or per core where multithreading is on, its addresses those of threads (IBM's
    MRSYTCUP: "PER CORE if MT is enabled"; a CP core of one thread too). PR/SM dispatched a
    shared processor whenever it was online, neither stolen nor waiting (one that waits is
    taken off its physical one); a core, while any thread did not wait (the threads' waits
    taken to overlap as far as they can: a provisional model). No LPAR management is
    modelled: the accumulated time is the partition's own."""
    if all(p.address == p.core for p in processors):
        return [
            _dispatched(p.address, p.online_us - p.steal_us - p.wait_us, p.ptype)
            for p in processors
        ]
    cores: dict[int, list[ProcessorCounters]] = {}
    for p in processors:
        cores.setdefault(p.core, []).append(p)
    return [
        _dispatched(core, t[0].online_us - t[0].steal_us - min(p.wait_us for p in t), t[0].ptype)
        for core, t in cores.items()
    ]


def _dispatched(address: int, dispatched_us: int, ptype: str) -> tuple[int, int, int, str]:
    return (address, dispatched_us, dispatched_us, ptype)


class MonitorDevice:
    """Reads like ``/dev/monreader``: the sets pushed so far, each ended by a 0-byte read."""

    def __init__(self) -> None:
        self._chunks: deque[bytes] = deque()
        self._pos = 0
        self._cond = threading.Condition()
        self.closed = False
        self.ending = False

    def push(self, data: bytes) -> None:
        with self._cond:
            self._chunks.append(data)
            self._chunks.append(b"")
            self._cond.notify_all()

    def read(self, n: int) -> bytes:
        with self._cond:
            if not self._chunks and not self.closed and not self.ending:
                self._cond.wait(_READ_WAIT_S)
            if self.closed:
                raise OSError(errno.EBADF, "device closed")
            if not self._chunks:
                if self.ending:
                    raise EOFError  # the simulated monitor has stopped: the data ends here
                raise InterruptedError(errno.EINTR, "no data yet")
            item = self._chunks[0]
            if not item:
                self._chunks.popleft()
                return b""
            out = item[self._pos : self._pos + n]
            self._pos += len(out)
            if self._pos >= len(item):
                self._chunks.popleft()
                self._pos = 0
            return out

    def end(self) -> None:
        """No more sets: reads drain what is there, then the stream ends."""
        with self._cond:
            self.ending = True
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self.closed = True
            self._cond.notify_all()


class MonitorFeed:
    """The simulated monitor: one set per sample interval to the reader, if one is there.

    Sets written before a reader connects wait for it (a real monitor would give a new
    reader the configuration and the next interval; keeping them makes every simulated
    interval reach the recording). :meth:`wait_read` lets the simulated site wait until the
    reader has taken in everything written, so a simulated day never outruns the recorder.
    """

    def __init__(self, interval_s: float, monwrite: Path | None = None) -> None:
        self.interval_s = interval_s
        self._device: MonitorDevice | None = None
        self._pending: list[bytes] = []
        self._cond = threading.Condition()
        self._written = 0
        self._read = 0
        self._sets = 0
        self.attached = False
        self._ended = False
        self._monwrite = monwrite
        if monwrite is not None:
            monwrite.write_bytes(b"")

    def open(self, path: str = "") -> MonitorDevice:
        """The opener the ``monitor`` source is built with (a new device each time)."""
        del path
        with self._cond:
            if self._device is not None:
                self._device.close()
            dev = MonitorDevice()
            for data in self._pending:
                dev.push(data)
            self._pending.clear()
            if self._ended:
                dev.end()
            self._device = dev
            return dev

    def write(self, snap: SystemSnapshot) -> None:
        """The records of the interval ending at ``snap`` (with the configuration first)."""
        records = interval_records(snap)
        if self._sets == 0:
            records = config_records(snap, self.interval_s) + records
        self._sets += 1
        span = encode.interval_span(records, end_us=snap.time_us)
        if self._monwrite is not None:
            with self._monwrite.open("ab") as f:
                f.write(encode.monwrite_block([span]))
        data = b"".join(encode.monreader_script([[span]]))
        with self._cond:
            self._written += 1
            if self._device is not None and not self._device.closed:
                self._device.push(data)
            else:
                self._pending.append(data)

    # --- keeping the reader in step -----------------------------------------------------

    def attach(self) -> None:
        with self._cond:
            self.attached = True

    def detach(self) -> None:
        with self._cond:
            self.attached = False
            self._cond.notify_all()

    def taken(self) -> None:
        """The reader has recorded one more interval."""
        with self._cond:
            self._read += 1
            self._cond.notify_all()

    def wait_read(self, timeout_s: float) -> bool:
        """Until every set written has been recorded; False on timeout or if the reader left."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while self.attached and self._read < self._written:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return self.attached

    def end(self) -> None:
        """The simulated run is over: the reader gets what was written, then the end of data
        (so the ``monitor`` source finishes at once instead of waiting for more)."""
        with self._cond:
            self._ended = True
            if self._device is not None:
                self._device.end()

    def close(self) -> None:
        with self._cond:
            if self._device is not None:
                self._device.close()
            self.attached = False
            self._cond.notify_all()
