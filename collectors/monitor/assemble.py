"""Records in, one Sample per monitor sample interval out.

An interval ends at a D1R11 record (end of sample interval), or when a record arrives that
belongs to the next interval: a second D5R9 or D0R23, a second D0R2 for the same processor, a
D5R10 after the final (P bit 0) one, a D0R16 of the same partition that does not continue
its series of records (:meth:`IntervalAssembler._next_lpar_record`), or a record whose TOD is
more than half a sample interval after the interval's first one. Configuration records
(D1R4, D1R5, D1R9) update facts that go with every later sample. Records the table has no use
for are counted and skipped. Event data is never used (its records are simply not known here).

The sample is stamped with the D1R11 record's TOD, else with the latest TOD of the records
it holds; its counters are the records' own cumulative values.

A record whose TOD cannot be right is skipped with one warning (per kind of trouble): before
1990 (a TOD of 0 is 1900), more than a day ahead of the clock, or earlier than the interval
already read by more than one sample interval (time does not go back within a monitor
stream). So no interval gets a negative or absurd duration from a damaged stamp.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from esatui.collectors.base import Warnings
from esatui.collectors.model import Number, Reading, Sample, SampleFlag
from esatui.collectors.monitor import decode as D
from esatui.collectors.monitor import kinds as K
from esatui.collectors.monitor.header import (
    DOMAIN_MONITOR,
    DOMAIN_PROCESSOR,
    DOMAIN_STORAGE,
    DOMAIN_SYSTEM,
    REC_END_OF_INTERVAL,
    tod_to_unix_us,
)
from esatui.collectors.monitor.layout import Decoded, LayoutTable

Buffer = bytes | bytearray | memoryview

D0R2 = (DOMAIN_SYSTEM, 2)
D0R16 = (DOMAIN_SYSTEM, 16)
D1R4 = (DOMAIN_MONITOR, 4)
D1R5 = (DOMAIN_MONITOR, 5)
D1R9 = (DOMAIN_MONITOR, 9)
D1R11 = (DOMAIN_MONITOR, REC_END_OF_INTERVAL)
D5R9 = (DOMAIN_PROCESSOR, 9)
D5R10 = (DOMAIN_PROCESSOR, 10)
D3R2 = (DOMAIN_STORAGE, 2)  # MRSTORSP, per processor
D0R23 = (DOMAIN_SYSTEM, 23)  # MRSYTLCK, one per interval
USED = frozenset({D0R2, D0R16, D0R23, D1R4, D1R5, D1R9, D1R11, D3R2, D5R9, D5R10})

DEFAULT_GAP_US = 5_000_000  # when the sample interval is not known yet
TOD_FLOOR_US = 631_152_000_000_000  # 1990-01-01T00:00Z: no monitor record is older
TOD_AHEAD_US = 86_400_000_000  # a stamp more than a day ahead of the clock is damaged
_TIMED = frozenset({D0R2, D0R16, D0R23, D1R11, D3R2, D5R9, D5R10})


def _system_now_us() -> int:
    return time.time_ns() // 1000


@dataclass
class AssemblerStats:
    records: int = 0  # every record fed
    used: int = 0  # records that went into a sample or the configuration
    skipped: int = 0  # records of no use here, or unusable
    samples: int = 0


@dataclass
class _Interval:
    first_us: int | None = None
    last_us: int | None = None
    reads: int = 0
    crypto: Reading | None = None
    aps: dict[str, Reading] = field(default_factory=dict)
    ap_open: bool = False  # interim (P bit 1) records seen, final one not yet
    ap_closed: bool = False  # the final D5R10 record seen
    cpus: dict[int, D.ProcessorTimes] = field(default_factory=dict)
    cpu_us: dict[int, int] = field(default_factory=dict)
    lpars: dict[str, tuple[int | None, list[D.LparCpu]]] = field(default_factory=dict)
    paging: dict[str, Reading] = field(default_factory=dict)
    spin_cpus: dict[int, Reading] = field(default_factory=dict)
    locks: list[Reading] | None = None  # the interval's D0R23 (None: none yet)

    @property
    def empty(self) -> bool:
        return (
            self.crypto is None
            and not self.aps
            and not self.cpus
            and not self.lpars
            and not self.paging
            and self.locks is None
        )


class IntervalAssembler:
    """Feed records in stream order with :meth:`feed`; completed samples come back."""

    def __init__(
        self,
        layouts: LayoutTable,
        source: str,
        warn: Callable[[str], None],
        config: dict[str, str] | None = None,
        now_us: Callable[[], int] = _system_now_us,
    ) -> None:
        self.layouts = layouts
        self.source = source
        self._now_us = now_us
        self._last_end_us: int | None = None  # the last sample's stamp
        self.stats = AssemblerStats()
        self.config: dict[str, str] = dict(config or {})
        # low bits of a CPU address that are its thread in our partition (/proc/sysinfo of
        # the system the monitor is read on; 0: no multithreading, or not known)
        self.thread_bits = 0
        self._cpu_types: dict[int, int] = {}
        self._cur = _Interval()
        self._gap = False
        self._warnings = Warnings(warn, source)

    def mark_gap(self, reason: str) -> None:
        """Data was lost: the next sample carries the GAP flag."""
        self._gap = True
        self._warn_once(reason, reason)

    def skip_unused(self) -> None:
        """Count a record of no use here without looking at it (same as feeding it)."""
        st = self.stats
        st.records += 1
        st.skipped += 1
        self._cur.reads += 1

    def feed(self, buf: Buffer, rec: tuple[int, int, int, int, int]) -> Sample | None:  # noqa: PLR0911, PLR0912, PLR0915 - one dispatch per record type, read in stream order
        """One record, as ``(offset, length, domain, record, tod)`` in ``buf`` (what the frame
        walker yields); returns the previous interval's sample if this record ended it."""
        off, length, domain, record, tod = rec
        st = self.stats
        st.records += 1
        key = (domain, record)
        if key not in USED:
            st.skipped += 1
            self._cur.reads += 1
            return None
        if key in _TIMED and not self._plausible(domain, record, tod_to_unix_us(tod)):
            st.skipped += 1
            self._cur.reads += 1
            return None
        if key == D1R11:
            st.used += 1
            self._cur.reads += 1
            return self._flush(tod_to_unix_us(tod))
        lay = self.layouts.select(domain, record, length)
        # a D3R2 shorter than its layout comes from a level before encrypted paging
        if lay is None or (key == D3R2 and length < lay.length):
            st.skipped += 1
            self._cur.reads += 1
            return None
        # D0R16 comes for every partition of the machine: only ours needs its CPU entries
        dec = lay.decode(buf, off, length, entries=key != D0R16)
        if key == D0R16 and dec.values.get("lpar_name") == self.config.get(K.CFG_LPAR_NAME):
            lay.decode_entries(buf, off, length, dec)
        for p in dec.problems:
            self._warn_once(f"problem:{lay.id}", p)
        st.used += 1
        if key == D1R4:
            self.config.update(D.system_config(dec))
            self._cur.reads += 1
            return None
        if key == D1R5:
            pc = D.processor_config(dec)
            if pc is not None:
                self._cpu_types[pc[0]] = pc[1]
                self.config[K.CFG_CPU_TYPES] = " ".join(
                    f"{c}:{K.cpu_type_name(t)}" for c, t in sorted(self._cpu_types.items())
                )
            self._cur.reads += 1
            return None
        if key == D1R9:
            self.config.update(D.sample_config(dec))
            self._cur.reads += 1
            return None

        unix_us = tod_to_unix_us(tod)
        out = None
        if self._starts_next(key, dec, unix_us):
            out = self._flush(None)
        cur = self._cur
        cur.reads += 1
        if cur.first_us is None:
            cur.first_us = unix_us
        cur.last_us = unix_us if cur.last_us is None else max(cur.last_us, unix_us)
        if key == D5R9:
            cur.crypto = D.crypto_reading(dec)
        elif key == D5R10:
            self._add_cmbs(dec)
        elif key == D0R2:
            pt = D.processor_times(dec)
            if pt is not None:
                cur.cpus[pt.cpu] = pt
                cur.cpu_us[pt.cpu] = unix_us
                spin = D.spin_cpu_reading(dec)
                if spin is not None:
                    cur.spin_cpus[pt.cpu] = spin
        elif key == D0R23:
            cur.locks = D.spin_lock_readings(dec)
        elif key == D0R16:
            name, data_us, cpus = D.lpar_cpus(dec)
            before = cur.lpars.get(name)  # a continuation adds the partition's other CPUs
            cur.lpars[name] = (data_us, cpus if before is None else [*before[1], *cpus])
        elif key == D3R2:
            paging = D.paging_reading(dec)
            if paging is not None:
                cur.paging[paging.key] = paging
        return out

    def finish(self) -> Sample | None:
        """The end of the data: the interval under way, if it holds anything."""
        return self._flush(None)

    # --- internals -------------------------------------------------------------------

    def _starts_next(self, key: tuple[int, int], dec: Decoded, unix_us: int) -> bool:  # noqa: PLR0911 - each rule that ends an interval is one early answer
        cur = self._cur
        if cur.empty:
            return False
        if cur.first_us is not None and unix_us - cur.first_us > self._gap_us():
            return True
        if key == D5R9:
            return cur.crypto is not None
        if key == D5R10:
            return cur.ap_closed
        if key == D0R2:
            cpu = dec.values.get("cpu_addr")
            return isinstance(cpu, int) and cpu in cur.cpus
        if key == D0R23:
            return cur.locks is not None
        if key == D0R16:
            return self._next_lpar_record(dec)
        if key == D3R2:
            cpu = dec.values.get("cpu_addr")
            return isinstance(cpu, int) and str(cpu) in cur.paging
        return False

    def _next_lpar_record(self, dec: Decoded) -> bool:
        """Whether a D0R16 is the next interval's: its partition's again, of another data
        TOD or repeating a CPU. A partition with many CPUs spans a series of records in one
        interval (IBM's MRSYTCUP, z/VM 6.3 on: SYTCPU_CALMORE, SYTCPU_CALNREC), of one
        snapshot of the hypervisor's data, each with CPUs the others do not hold (only our
        partition's CPUs are decoded: another's series is told by its TOD alone)."""
        name, data_us, cpus = D.lpar_cpus(dec)
        before = self._cur.lpars.get(name)
        if before is None:
            return False
        given = {cpu.cpu for cpu in before[1]}
        if any(cpu.cpu in given for cpu in cpus):
            return True
        if data_us is None or before[0] is None:
            return not cpus  # no TOD to tell a series by: new CPUs continue it
        return data_us != before[0]

    def _plausible(self, domain: int, record: int, unix_us: int) -> bool:
        """Whether a record's stamp can be right; one warning per kind of trouble if not."""
        if unix_us < TOD_FLOOR_US:
            trouble, why = "old", "before 1990"
        elif unix_us > self._now_us() + TOD_AHEAD_US:
            trouble, why = "ahead", "more than a day ahead of the clock"
        elif self._last_end_us is not None and unix_us < self._last_end_us - self._gap_us() * 2:
            trouble, why = "back", "earlier than the interval already read"
        else:
            return True
        try:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(unix_us / 1e6))
        except (OverflowError, OSError, ValueError):
            stamp = f"{unix_us} µs after 1970"
        self._warn_once(
            f"tod:{trouble}",
            f"D{domain}R{record} record stamped {stamp} UTC ({why}): skipped, "
            "with any other record whose time is that far off",
        )
        return False

    def _gap_us(self) -> int:
        iv = self.config.get(K.CFG_INTERVAL)
        return int(iv) * 500_000 if iv else DEFAULT_GAP_US

    def _add_cmbs(self, dec: Decoded) -> None:
        cur = self._cur
        label = D.layout_label(dec)
        problem = D.response_problem(dec)
        if problem is not None:
            self._warn_once(f"d5r10-rc:{problem}", problem)
        for cmb in D.cmbs(dec) if problem is None else ():
            if cmb.key in cur.aps:
                self._warn_once(f"dup-ap:{cmb.key}", f"AP {cmb.key} given twice in one interval")
                continue
            reading, warning = D.ap_reading(cmb, label)
            if warning:
                self._warn_once(f"ap:{cmb.key}:{warning}", warning)
            cur.aps[cmb.key] = reading
        more = dec.values.get("more")
        cur.ap_open = more == 1
        cur.ap_closed = more != 1

    def _flush(self, end_us: int | None) -> Sample | None:
        cur = self._cur
        if cur.ap_open:
            cur.aps.clear()
            self.mark_gap("D5R10 interim records without their final record: AP data dropped")
        self._cur = _Interval()
        readings: list[Reading] = []
        if cur.crypto is not None:
            readings.append(cur.crypto)
        readings.extend(cur.aps[key] for key in sorted(cur.aps))
        readings.extend(self._lcpu_readings(cur))
        readings.extend(cur.paging[key] for key in sorted(cur.paging, key=int))
        readings.extend(cur.spin_cpus[cpu] for cpu in sorted(cur.spin_cpus))
        readings.extend(cur.locks or ())
        if not readings:
            return None
        time_us = end_us if end_us is not None else cur.last_us
        assert time_us is not None
        flags = SampleFlag.GAP.value if self._gap else 0
        self._gap = False
        self.stats.samples += 1
        self._last_end_us = time_us
        return Sample(
            source=self.source,
            time_us=time_us,
            readings=tuple(readings),
            mono_ns=None,
            config=dict(self.config) if self.config else None,
            reads=cur.reads,
            flags=flags,
        )

    def _lcpu_readings(self, cur: _Interval) -> list[Reading]:
        ours: tuple[int | None, list[D.LparCpu]] | None = None
        if cur.lpars:
            lpar = self.config.get(K.CFG_LPAR_NAME)
            if lpar is None:
                self._warn_once(
                    "no-lpar",
                    "D0R16 partition data not used: the partition's name (D1R4) is unknown",
                )
            else:
                ours = cur.lpars.get(lpar)
        # with multithreading D0R16 reports cores (MRSYTCUP: "PER CORE if MT is enabled"),
        # D0R2 threads: a core's values go to its first thread's address
        bits = self.thread_bits
        lp: dict[int, D.LparCpu] = {c.cpu << bits: c for c in ours[1]} if ours else {}
        data_us = ours[0] if ours else None
        lpar_name = self.config.get(K.CFG_LPAR_NAME, "")
        out: list[Reading] = []
        for cpu in sorted(set(cur.cpus) | set(lp)):
            pt = cur.cpus.get(cpu)
            lc = lp.get(cpu)
            values: dict[str, Number | None] = {}
            type_code = pt.cpu_type if pt and pt.cpu_type is not None else self._cpu_types.get(cpu)
            if type_code is not None:
                ctype = K.cpu_type_name(type_code)
            else:
                ctype = lc.type_name.upper() if lc else ""
            if pt is not None:
                values["elapsed_us"] = cur.cpu_us[cpu]
                values["emul_us"] = pt.emul_us
                values["user_us"] = pt.user_us
                values["syst_us"] = pt.syst_us
                values["idle_us"] = pt.wait_us
            elif lc is not None and data_us is not None:
                values["elapsed_us"] = data_us
                values["busy_us"] = lc.lp_us
            if lc is not None:
                # as the hypfs source reads DIAGNOSE X'204': busy the partition's own time,
                # management what the accumulated time holds beyond it
                values["mgmt_us"] = lc.mgmt_us
                if data_us is not None and lc.lp_us is not None and data_us >= lc.lp_us:
                    values["steal_us"] = data_us - lc.lp_us
            out.append(
                Reading(
                    "lcpu",
                    str(cpu),
                    values,
                    {"type": ctype, "lpar": lpar_name, "type_source": "monitor"},
                )
            )
        return out

    def _warn_once(self, key: str, message: str) -> None:
        self._warnings(message, key=key)
