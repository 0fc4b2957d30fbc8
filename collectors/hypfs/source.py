"""The ``hypfs`` source: the hypervisor's own view, read by this Linux.

In an LPAR it gives this LPAR's logical cores (kind ``lcpu``): type, dispatched time,
LPAR management time and online time. Under z/VM it gives the guests CP lets this guest see
(kind ``guest``): CPU time, memory and the state samples CP takes.

Where from, in order of preference (``mode="auto"``):

1. debugfs ``s390_hypfs/diag_2fc`` (z/VM) or ``diag_204`` (LPAR): one read of a binary
   snapshot stamped with the hypervisor's TOD clock, which becomes the sample's time (the
   kernel caches a snapshot for a second; an unchanged TOD means no new data);
2. the mounted tree ``/sys/hypervisor/s390``: refreshed by writing ``update`` at most once a
   second (EBUSY means another reader refreshed it within the second: not an error), then
   one small file per value.

Mapping into ``lcpu`` (see collectors/kinds.py): ``elapsed_us`` = online time,
``busy_us`` = dispatched time (``cputime``), ``mgmt_us`` = management time, ``steal_us`` =
online time not dispatched (this includes the time the CPU waited voluntarily: DIAGNOSE
X'204' does not separate the two), ``wait_us`` = DIAGNOSE X'204''s wait time (binary
only, provisional); ``emul_us``, ``user_us``, ``syst_us`` and ``idle_us`` stay absent.
A logical CPU the binary does not flag online (standby, reserved) is no reading; the tree
lists those too and cannot tell them apart.
Key: the CPU address in decimal (the core address when multithreading is on).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

from esatui.collectors import cputype
from esatui.collectors.base import SourceContext, Warnings
from esatui.collectors.diag2fc import Diag2fcRecord
from esatui.collectors.hypfs import tree as hyptree
from esatui.collectors.hypfs.dbfs import (
    Diag204,
    FormatError,
    parse_diag2fc,
    parse_diag204,
)
from esatui.collectors.kinds import GUEST, LCPU
from esatui.collectors.model import Availability, Kind, Number, Reading, Sample
from esatui.collectors.sysfsio import AttrReader
from esatui.collectors.sysinfo import parse_sysinfo

Updater = Callable[[str], None]
_MODES = ("auto", "debugfs", "tree")


def write_update(path: str) -> None:
    """Ask hypfs to rebuild its tree (raises OSError, EBUSY within a second of the last)."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, b"1")
    finally:
        os.close(fd)


def guest_from_record(rec: Diag2fcRecord) -> hyptree.GuestData:
    return hyptree.GuestData(
        userid=rec.guest,
        cpu_us=rec.used_cpu_us,
        elapsed_us=rec.elapsed_us,
        vcpus=rec.vcpus,
        mem_used_kib=rec.mem_used_kib,
        mem_max_kib=rec.mem_max_kib,
        samp_cpu=rec.samp_cpu,
        samp_delay=rec.samp_delay,
        samp_page=rec.samp_page,
        samp_idle=rec.samp_idle,
        samp_other=rec.samp_other,
        samp_total=rec.samp_total,
    )


class HypfsSource:
    """PolledSource over hypfs (``--source hypfs``)."""

    name = "hypfs"
    kinds: tuple[Kind, ...] = (LCPU, GUEST)

    def __init__(
        self,
        ctx: SourceContext,
        *,
        mode: str = "auto",
        lpar: str | None = None,
        updater: Updater = write_update,
        clock: Callable[[], int] | None = None,
    ) -> None:
        if mode not in _MODES:
            raise ValueError(f"hypfs mode must be one of {', '.join(_MODES)}, not {mode!r}")
        self._ctx = ctx
        self._mode = mode
        self._lpar = lpar
        self._updater = updater
        self._clock = clock or ctx.clock.mono_ns
        self._tree = str(ctx.path("/sys/hypervisor/s390"))
        dbfs = str(ctx.path("/sys/kernel/debug/s390_hypfs"))
        self._d204 = dbfs + "/diag_204"
        self._d2fc = dbfs + "/diag_2fc"
        self._reader = AttrReader(0)  # hypfs files are re-created by every update
        self._reads0 = 0
        self._buf = 1 << 16
        self._last_tod: int | None = None
        self._last_binary: tuple[list[Reading], dict[str, str]] | None = None  # its sample's
        self._updated_ns: int | None = None
        self._sysinfo_read = False
        self._warn = Warnings(ctx.warn, self.name)

    # -- PolledSource -------------------------------------------------------------------

    def probe(self) -> Availability:
        where = self._where()
        if where == "diag_2fc":
            return Availability(True, f"z/VM guest data from {self._d2fc}")
        if where == "diag_204":
            return Availability(True, f"LPAR logical CPU data from {self._d204}")
        if where == "tree":
            kind = hyptree.read_hypervisor(self._reader, self._tree)
            return Availability(True, f"{kind} data from the hypfs tree at {self._tree}")
        return Availability(
            False,
            f"no hypfs data: {self._tree} is not mounted (mount -t s390_hypfs none "
            f"{self._tree}) and {self._d204.rsplit('/', 1)[0]} is not readable (debugfs, root)",
        )

    def sample(self) -> Sample:
        self._reads0 = self._reader.reads
        where = self._where()
        if where in ("diag_204", "diag_2fc"):
            sample = self._sample_binary(where)
            if sample is not None:
                return sample
            if self._mode == "auto" and self._tree_there():
                return self._sample_tree()
        elif where == "tree":
            return self._sample_tree()
        self._warn(f"nothing to read ({self.probe().reason})")
        return self._sample(self._ctx.clock.time_us(), self._clock(), [], {})

    def sample_gauges(self) -> Sample | None:
        return None

    def close(self) -> None:
        self._reader.close()

    # -- where from -----------------------------------------------------------------------

    def _where(self) -> str:
        if self._mode in ("auto", "debugfs"):
            if os.access(self._d2fc, os.R_OK):
                return "diag_2fc"
            if os.access(self._d204, os.R_OK):
                return "diag_204"
        if self._mode in ("auto", "tree") and self._tree_there():
            return "tree"
        return "none"

    def _tree_there(self) -> bool:
        return Path(self._tree, "hyp", "type").is_file()

    # -- debugfs --------------------------------------------------------------------------

    def _read_dbfs(self, path: str) -> bytes | None:
        """One read() per attempt: the kernel serves the snapshot at file offset 0 only."""
        for _ in range(4):
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError as exc:
                self._warn(f"{path}: {exc.strerror or exc}")
                return None
            try:
                data = os.read(fd, self._buf)
            except OSError as exc:
                self._warn(f"{path}: {exc.strerror or exc}")
                return None
            finally:
                os.close(fd)
            self._reader.reads += 1
            if len(data) < 8:
                return data
            need = int.from_bytes(data[:8], "big") + 64
            if len(data) >= need or need > 64 << 20:
                return data
            self._buf = -(-need // 4096) * 4096  # the snapshot grew: read it whole
        return data

    def _sample_binary(self, where: str) -> Sample | None:
        path = self._d2fc if where == "diag_2fc" else self._d204
        data = self._read_dbfs(path)
        if data is None:
            return None
        try:
            parsed = parse_diag2fc(data) if where == "diag_2fc" else parse_diag204(data)
        except FormatError as exc:
            self._warn(str(exc))
            return self._sample(self._ctx.clock.time_us(), None, [], {})
        if parsed.truncated:
            self._warn(f"{path}: data shorter than its header says; used what was whole")
        if parsed.tod == self._last_tod and self._last_binary is not None:
            self._warn(
                "snapshot unchanged since the last sample (refreshed at most once a "
                "second): no new data"
            )
            # the same data at the same time: no interval ends here, and the next one runs
            # from the snapshot before (an empty sample would make every entity new again)
            return self._sample(parsed.time_us, None, *self._last_binary)
        self._last_tod = parsed.tod
        if isinstance(parsed, Diag204):
            readings, config = self._lpar_binary(parsed)
        else:
            guests = [guest_from_record(r) for r in parsed.records]
            readings = [_guest_reading(g) for g in guests]
            config = {"hypfs.hypervisor": hyptree.ZVM_HYPERVISOR, "hypfs.source": "diag_2fc"}
            if parsed.records:
                config["hypfs.logical_cpus"] = str(parsed.records[0].lcpus)
        self._last_binary = (readings, config)
        return self._sample(parsed.time_us, None, readings, config)

    def _lpar_binary(self, d: Diag204) -> tuple[list[Reading], dict[str, str]]:
        own = d.own()
        if own is None:  # the buffer points at no partition it holds whole: go by name
            name = self._lpar_name(d.partitions[0].name if len(d.partitions) == 1 else None)
            own = next((p for p in d.partitions if p.name == name), None)
        config = {"hypfs.hypervisor": hyptree.LPAR_HYPERVISOR, "hypfs.source": "diag_204"}
        config |= _type_counts("hypfs.physical_cpus.", [p.type_index for p in d.physical])
        if own is None:
            self._warn("this LPAR is not among the partitions DIAGNOSE X'204' reported")
            return [], config
        config["hypfs.lpar"] = own.name
        config["hypfs.threads_per_core"] = str(own.threads)
        readings = []
        for cpu in own.cpus:
            if not cpu.online:  # standby or reserved: skipped as the kernel's sthyi.c does
                continue
            values: dict[str, Number | None] = {
                "elapsed_us": cpu.online_us,
                "busy_us": cpu.lp_us,
                "mgmt_us": cpu.mgmt_us,
                "steal_us": max(0, cpu.online_us - cpu.lp_us),
                "wait_us": cpu.wait_us,
            }
            attrs = {
                "type": cputype.from_diag224_index(cpu.type_index),
                "lpar": own.name,
                "type_source": "hypfs:diag_204",
            }
            readings.append(Reading(LCPU.name, str(cpu.address), values, attrs))
        return readings, config

    # -- the mounted tree -----------------------------------------------------------------

    def _refresh_tree(self, now: int) -> None:
        if self._updated_ns is not None and now - self._updated_ns < 1_000_000_000:
            return
        try:
            self._updater(self._tree + "/update")
        except OSError as exc:
            if exc.errno != errno.EBUSY:  # EBUSY: refreshed within the second by someone
                self._warn(f"cannot refresh {self._tree}: {exc.strerror or exc}")
        self._updated_ns = now

    def _sample_tree(self) -> Sample:
        now = self._clock()
        self._refresh_tree(now)
        time_us = self._ctx.clock.time_us()
        kind = hyptree.read_hypervisor(self._reader, self._tree)
        complain = self._complain
        if kind == hyptree.ZVM_HYPERVISOR:
            vm = hyptree.read_vm_tree(self._reader, self._tree, complain)
            config = {"hypfs.hypervisor": kind, "hypfs.source": "tree"}
            if vm.logical_cpus is not None:
                config["hypfs.logical_cpus"] = str(vm.logical_cpus)
            return self._sample(time_us, now, [_guest_reading(g) for g in vm.guests], config)
        systems = hyptree.list_systems(self._tree)
        own = self._lpar_name(systems[0] if len(systems) == 1 else None)
        config = {"hypfs.hypervisor": kind or "unknown", "hypfs.source": "tree"}
        if own is None or own not in systems:
            self._warn(f"cannot tell which of the {len(systems)} LPARs is this one")
            lpar = hyptree.read_lpar_tree(self._reader, self._tree, complain, only="")
            config |= _type_counts_by_name("hypfs.physical_cpus.", lpar.physical)
            return self._sample(time_us, now, [], config)
        lpar = hyptree.read_lpar_tree(self._reader, self._tree, complain, only=own)
        config["hypfs.lpar"] = own
        config |= _type_counts_by_name("hypfs.physical_cpus.", lpar.physical)
        readings = []
        for cpu in lpar.systems.get(own, []):
            values: dict[str, Number | None] = {
                "elapsed_us": cpu.onlinetime_us,
                "busy_us": cpu.cputime_us,
                "mgmt_us": cpu.mgmtime_us,
            }
            if cpu.onlinetime_us is not None and cpu.cputime_us is not None:
                values["steal_us"] = max(0, cpu.onlinetime_us - cpu.cputime_us)
            attrs = {"lpar": own, "type_source": "hypfs:tree"}
            if cpu.type:
                attrs["type"] = cputype.normalize(cpu.type)
            readings.append(Reading(LCPU.name, str(cpu.address), values, attrs))
        return self._sample(time_us, now, readings, config)

    def _lpar_name(self, only_one: str | None) -> str | None:
        """This LPAR's name: given, else /proc/sysinfo (read once), else the only one."""
        if self._lpar is None and not self._sysinfo_read:
            self._sysinfo_read = True
            try:
                text = self._ctx.path("/proc/sysinfo").read_text(errors="replace")
            except OSError:
                text = ""
            # the host source's parser: an empty "LPAR Name:" is no name (a pattern read
            # the next line's first word for it)
            self._lpar = parse_sysinfo(text).lpar_name or None
        return self._lpar or only_one

    # -- helpers --------------------------------------------------------------------------

    def _sample(
        self, time_us: int, mono_ns: int | None, readings: list[Reading], config: dict[str, str]
    ) -> Sample:
        return Sample(
            self.name,
            time_us,
            tuple(readings),
            mono_ns=mono_ns,
            config=config or None,
            reads=self._reader.reads - self._reads0,
        )

    def _complain(self, path: str, why: str) -> None:
        self._warn(f"skipped {path}: {why}")


def _guest_reading(g: hyptree.GuestData) -> Reading:
    values: dict[str, Number | None] = {
        "cpu_us": g.cpu_us,
        "elapsed_us": g.elapsed_us,
        "samp_total": g.samp_total,
        "samp_cpu": g.samp_cpu,
        "samp_delay": g.samp_delay,
        "samp_page": g.samp_page,
        "samp_idle": g.samp_idle,
        "samp_other": g.samp_other,
        "vcpus": g.vcpus,
        "mem_used_kib": g.mem_used_kib,
        "mem_max_kib": g.mem_max_kib,
    }
    return Reading(GUEST.name, g.userid, values, {"userid": g.userid})


def _type_counts(prefix: str, indexes: list[int]) -> dict[str, str]:
    counts: dict[str, int] = {}
    for index in indexes:
        name = cputype.from_diag224_index(index)
        counts[name] = counts.get(name, 0) + 1
    return {prefix + k: str(v) for k, v in sorted(counts.items())}


def _type_counts_by_name(prefix: str, cpus: list[hyptree.TreeCpu]) -> dict[str, str]:
    counts: dict[str, int] = {}
    for cpu in cpus:
        name = cputype.normalize(cpu.type) if cpu.type else "UN"
        counts[name] = counts.get(name, 0) + 1
    return {prefix + k: str(v) for k, v in sorted(counts.items())}
