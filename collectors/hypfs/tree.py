"""The mounted s390_hypfs tree (``mount -t s390_hypfs none /sys/hypervisor/s390``).

Layout as the kernel builds it (arch/s390/hypfs/hypfs_diag_fs.c, hypfs_vm_fs.c), numbers
as ``%llu``:

- ``hyp/type``: ``LPAR Hypervisor`` or ``z/VM Hypervisor``;
- LPAR: ``systems/<LPAR>/cpus/<address>/{type,cputime,mgmtime,onlinetime}`` (µs;
  ``onlinetime`` only with the extended DIAGNOSE X'204' format) and, with the authority to
  see them, ``cpus/<address>/{type,mgmtime}`` per physical CPU;
- z/VM: ``cpus/count`` and ``systems/<USERID>/`` with ``onlinetime_us``,
  ``cpus/{cputime_us,capped,dedicated,count,weight_min,weight_max,weight_cur}``,
  ``mem/{min_KiB,max_KiB,used_KiB,share_KiB}``,
  ``samples/{cpu_using,cpu_delay,mem_delay,idle,other,total}``. ``weight_min`` is really
  the number of operating CPUs (a naming slip the kernel documents).

Writing to ``update`` rebuilds the tree; the kernel refuses with EBUSY while its monotonic
clock is in the same whole second as the last update (arch/s390/hypfs/inode.c
``hypfs_write_iter``: ``last_update == ktime_get_seconds()``), so a second apart always
works. The tree's files are re-created by each update, so nothing is kept open.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from esatui.collectors.sysfsio import AttrReader, is_dir, list_names

Complain = Callable[[str, str], None]

LPAR_HYPERVISOR = "LPAR Hypervisor"
ZVM_HYPERVISOR = "z/VM Hypervisor"


@dataclass(frozen=True, slots=True)
class TreeCpu:
    address: int
    type: str | None
    cputime_us: int | None
    mgmtime_us: int | None
    onlinetime_us: int | None


@dataclass(frozen=True, slots=True)
class GuestData:
    """One z/VM guest, from the tree or from a DIAGNOSE X'2FC' record."""

    userid: str
    cpu_us: int | None = None
    elapsed_us: int | None = None
    vcpus: int | None = None
    mem_used_kib: int | None = None
    mem_max_kib: int | None = None
    samp_cpu: int | None = None
    samp_delay: int | None = None
    samp_page: int | None = None
    samp_idle: int | None = None
    samp_other: int | None = None
    samp_total: int | None = None


@dataclass
class LparTree:
    systems: dict[str, list[TreeCpu]] = field(default_factory=dict)
    physical: list[TreeCpu] = field(default_factory=list)


@dataclass
class VmTree:
    logical_cpus: int | None = None
    guests: list[GuestData] = field(default_factory=list)


def _uint(raw: bytes | None, path: str, complain: Complain) -> int | None:
    if raw is None:
        return None
    text = raw.strip()
    if text.isdigit():
        value = int(text)
        if value < 1 << 63:  # a u64 near the top is a negative difference that wrapped
            return value
    complain(path, f"not a counter: {raw[:40]!r}")
    return None


def _text(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    text = raw.decode("ascii", errors="replace").strip()
    return text or None


def _numbers(names: list[str] | None) -> list[int]:
    return sorted(int(n) for n in names or () if n.isdigit())


def read_hypervisor(reader: AttrReader, base: str) -> str | None:
    return _text(reader.read(base + "/hyp/type"))


def _cpu(reader: AttrReader, path: str, address: int, complain: Complain) -> TreeCpu:
    return TreeCpu(
        address,
        _text(reader.read(path + "/type")),
        _uint(reader.read(path + "/cputime"), path + "/cputime", complain),
        _uint(reader.read(path + "/mgmtime"), path + "/mgmtime", complain),
        _uint(reader.read(path + "/onlinetime"), path + "/onlinetime", complain),
    )


def read_lpar_tree(
    reader: AttrReader, base: str, complain: Complain, only: str | None = None
) -> LparTree:
    """The LPAR view; ``only`` limits the logical CPUs read to one LPAR (by name)."""
    out = LparTree()
    for name in list_names(base + "/systems") or ():
        if only is not None and name != only:
            continue
        cpus_dir = f"{base}/systems/{name}/cpus"
        out.systems[name] = [
            _cpu(reader, f"{cpus_dir}/{addr}", addr, complain)
            for addr in _numbers(list_names(cpus_dir))
        ]
    if is_dir(base + "/cpus"):
        for addr in _numbers(list_names(base + "/cpus")):
            path = f"{base}/cpus/{addr}"
            out.physical.append(
                TreeCpu(
                    addr,
                    _text(reader.read(path + "/type")),
                    None,
                    _uint(reader.read(path + "/mgmtime"), path + "/mgmtime", complain),
                    None,
                )
            )
    return out


def list_systems(base: str) -> list[str]:
    return sorted(list_names(base + "/systems") or ())


def read_vm_tree(reader: AttrReader, base: str, complain: Complain) -> VmTree:
    out = VmTree(
        logical_cpus=_uint(reader.read(base + "/cpus/count"), base + "/cpus/count", complain)
    )
    for userid in sorted(list_names(base + "/systems") or ()):
        g = f"{base}/systems/{userid}"

        def num(rel: str, g: str = g) -> int | None:
            return _uint(reader.read(f"{g}/{rel}"), f"{g}/{rel}", complain)

        out.guests.append(
            GuestData(
                userid=userid,
                cpu_us=num("cpus/cputime_us"),
                elapsed_us=num("onlinetime_us"),
                vcpus=num("cpus/count"),
                mem_used_kib=num("mem/used_KiB"),
                mem_max_kib=num("mem/max_KiB"),
                samp_cpu=num("samples/cpu_using"),
                samp_delay=num("samples/cpu_delay"),
                samp_page=num("samples/mem_delay"),
                samp_idle=num("samples/idle"),
                samp_other=num("samples/other"),
                samp_total=num("samples/total"),
            )
        )
    return out
