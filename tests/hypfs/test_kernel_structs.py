"""The debugfs files built byte by byte from the kernel's own struct definitions, not by
esatui's encoder: every field at the offset the C struct puts it, reserved bytes filled with
junk the decoder must not read.

DIAGNOSE X'204' (extended format): arch/s390/include/asm/diag.h (torvalds/linux, stored
version 8cdf3792526ab681e1f4a0c202e779400b2b8177): ``struct diag204_x_info_blk_hdr``,
``diag204_x_part_hdr`` (with ``u8 reserved:3, mtid:5`` at +49), ``diag204_x_cpu_info``,
``diag204_x_phys_hdr``, ``diag204_x_phys_cpu`` and ``enum diag204_cpu_flags``
(``DIAG204_CPU_ONLINE`` 0x20, ``DIAG204_CPU_CAPPED`` 0x40); the 64-byte header is
``struct dbfs_d204_hdr`` of arch/s390/hypfs/hypfs_diag.c (``len`` = PAGE_SIZE * pages).
DIAGNOSE X'2FC': ``struct dbfs_d2fc_hdr`` and ``struct diag2fc_data`` of
arch/s390/hypfs/hypfs_vm.c.
"""

from __future__ import annotations

from pathlib import Path

from esatui.collectors.base import SourceContext
from esatui.collectors.cputype import from_diag224_index
from esatui.collectors.hypfs import HypfsSource
from esatui.collectors.hypfs.dbfs import parse_diag2fc, parse_diag204, unix_us_to_tod

JUNK = 0xEE  # in every reserved byte
TIME_US = 1_795_000_000_000_000
DED_WEIGHT = 0xFFFF  # a dedicated processor's weight (arch/s390/kernel/sthyi.c)
ONLINE, CAPPED = 0x20, 0x40


def _put(buf: bytearray, offset: int, size: int, value: int) -> None:
    buf[offset : offset + size] = value.to_bytes(size, "big")


def _ebcdic(name: str) -> bytes:
    return name.ljust(8).encode("cp037")  # blank (X'40') padded


def x_info_blk_hdr(npar: int, flags: int, phys_cpus: int, this_part: int) -> bytes:
    """struct diag204_x_info_blk_hdr (64 bytes)."""
    b = bytearray([JUNK]) * 64
    b[0], b[1] = npar, flags  # u8 npar, u8 flags
    _put(b, 2, 2, 1000)  # u16 tslice
    _put(b, 4, 2, phys_cpus)  # u16 phys_cpus
    _put(b, 6, 2, this_part)  # u16 this_part
    ext = bytes([0]) + unix_us_to_tod(TIME_US).to_bytes(8, "big") + bytes(7)
    b[8:24] = ext  # u64 curtod1, u64 curtod2: the 16-byte extended TOD clock
    return bytes(b)  # char reserved[40] at +24 stays junk


def x_part_hdr(pn: int, name: str, rcpus: int, mtid: int = 0) -> bytes:
    """struct diag204_x_part_hdr (96 bytes)."""
    b = bytearray([JUNK]) * 96
    b[0], b[1], b[2], b[3] = pn, rcpus, rcpus, 0  # pn, cpus, rcpus, pflag
    _put(b, 4, 4, 0)  # u32 mlu
    b[8:16] = _ebcdic(name)  # part_name
    b[16:24] = _ebcdic("LPC")  # lpc_name
    b[24:32] = _ebcdic("LINUX")  # os_name
    b[48] = 0  # upid
    b[49] = 0xE0 | mtid  # u8 reserved:3 (set here), mtid:5: big-endian bit fields, high first
    return bytes(b)


def x_cpu_info(addr: int, ctidx: int, cflag: int, weight: int, times: tuple[int, ...]) -> bytes:
    """struct diag204_x_cpu_info (96 bytes); times = acc, lp, online, wait, mt idle."""
    acc, lp, online, wait, mt_idle = times
    b = bytearray([JUNK]) * 96
    _put(b, 0, 2, addr)  # u16 cpu_addr
    b[4], b[5] = ctidx, cflag  # u8 ctidx, u8 cflag
    _put(b, 6, 2, weight)  # u16 weight
    _put(b, 8, 8, acc)  # u64 acc_time
    _put(b, 16, 8, lp)  # u64 lp_time
    _put(b, 24, 2, weight)  # u16 min_weight
    _put(b, 26, 2, weight)  # u16 cur_weight
    _put(b, 28, 2, weight)  # u16 max_weight
    _put(b, 32, 8, online)  # u64 online_time
    _put(b, 40, 8, wait)  # u64 wait_time
    _put(b, 48, 4, 0)  # u32 pma_weight
    _put(b, 52, 4, weight)  # u32 polar_weight
    _put(b, 56, 4, 0)  # u32 cpu_type_cap
    _put(b, 60, 4, 0)  # u32 group_cpu_type_cap
    _put(b, 64, 8, mt_idle)  # reserved3 in diag.h; hyptop's l_x_cpu_info: u64 mt_idle_time
    return bytes(b)


def x_phys_hdr(cpus: int) -> bytes:
    """struct diag204_x_phys_hdr (96 bytes)."""
    b = bytearray([JUNK]) * 96
    b[1] = cpus  # u8 cpus
    b[8:16] = _ebcdic("PHYSICAL")  # mgm_name
    return bytes(b)


def x_phys_cpu(addr: int, ctidx: int, weight: int, mgm_us: int) -> bytes:
    """struct diag204_x_phys_cpu (96 bytes)."""
    b = bytearray([JUNK]) * 96
    _put(b, 0, 2, addr)  # u16 cpu_addr
    b[4] = ctidx  # u8 ctidx
    _put(b, 6, 2, weight)  # u16 weight
    _put(b, 8, 8, mgm_us)  # u64 mgm_time
    return bytes(b)


def diag204_file() -> bytes:
    """Three partitions: ZOS1 (a shared CP, a dedicated zIIP), an LPAR with no CPUs
    reported, and LINUX1, the caller, with SMT 2 and three IFL blocks: online, online and
    capped, and one not online (standby); then the physical section."""
    zos = (
        x_part_hdr(1, "ZOS1", 2)
        + x_cpu_info(0, 0, ONLINE, 100, (9_000, 8_000, 60_000_000, 0, 0))
        + x_cpu_info(1, 5, ONLINE, DED_WEIGHT, (60_000_100, 60_000_000, 60_000_000, 0, 0))
    )
    empty = x_part_hdr(2, "SPARE", 0)
    linux = (
        x_part_hdr(3, "LINUX1", 3, mtid=1)
        + x_cpu_info(0, 3, ONLINE, 50, (31_000_000, 30_000_000, 60_000_000, 29_000_000, 7))
        + x_cpu_info(1, 3, ONLINE | CAPPED, 50, (12_500_000, 12_000_000, 60_000_000, 1, 8))
        + x_cpu_info(2, 3, 0, 50, (0, 0, 0, 0, 0))
    )
    this_part = 64 + len(zos) + len(empty)  # from the info block header
    phys = (
        x_phys_hdr(4)
        + x_phys_cpu(0, 0, 100, 11)
        + x_phys_cpu(1, 3, 100, 22)
        + x_phys_cpu(2, 5, DED_WEIGHT, 33)
        + x_phys_cpu(3, 4, DED_WEIGHT, 44)  # an ICF (a coupling facility's)
    )
    body = x_info_blk_hdr(3, 0x80, 4, this_part) + zos + empty + linux + phys
    pages = -(-len(body) // 4096)
    body += bytes(pages * 4096 - len(body))
    header = bytearray([JUNK]) * 64  # struct dbfs_d204_hdr
    _put(header, 0, 8, pages * 4096)  # u64 len: PAGE_SIZE * diag204_buf_pages
    _put(header, 8, 2, 0)  # u16 version (DBFS_D204_HDR_VERSION)
    header[10] = 7  # u8 sc: subcode 7
    return bytes(header) + body


def diag2fc_data(name: str, *, flags: int, cpu_us: int, vcpus: int) -> bytes:
    """struct diag2fc_data (112 bytes: every member is naturally aligned)."""
    b = bytearray(112)
    _put(b, 0, 4, 2)  # u32 version
    _put(b, 4, 4, flags)  # u32 flags: 0x06 capped, 0x08 dedicated
    _put(b, 8, 8, cpu_us)  # u64 used_cpu
    _put(b, 16, 8, 3_600_000_000)  # u64 el_time
    _put(b, 24, 8, 0)  # u64 mem_min_kb
    _put(b, 32, 8, 4 << 20)  # u64 mem_max_kb
    _put(b, 40, 8, 0)  # u64 mem_share_kb
    _put(b, 48, 8, 1 << 20)  # u64 mem_used_kb
    for i, value in enumerate((8, 6, vcpus, vcpus, 0, 100, 40, 5, 3, 50, 2, 100)):
        # u32 pcpus, lcpus, vcpus, ocpus (cpu_min), cpu_max, cpu_shares, cpu_use_samp,
        # cpu_delay_samp, page_wait_samp, idle_samp, other_samp, total_samp
        _put(b, 56 + 4 * i, 4, value)
    b[104:112] = _ebcdic(name)  # char guest_name[8]
    return bytes(b)


def diag2fc_file() -> bytes:
    records = diag2fc_data("LINUX01", flags=0x08, cpu_us=123_456, vcpus=2) + diag2fc_data(
        "TCPIP", flags=0, cpu_us=7, vcpus=1
    )
    header = bytearray([JUNK]) * 64  # struct dbfs_d2fc_hdr
    _put(header, 0, 8, len(records))  # u64 len
    _put(header, 8, 2, 0)  # u16 version
    header[10:26] = bytes([0]) + unix_us_to_tod(TIME_US).to_bytes(8, "big") + bytes(7)
    _put(header, 26, 8, 2)  # u64 count
    return bytes(header) + records


def test_diag204_decodes_the_kernel_layout() -> None:
    d = parse_diag204(diag204_file())
    assert not d.truncated and d.subcode == 7 and d.time_us == TIME_US
    assert [(p.number, p.name, p.threads, len(p.cpus)) for p in d.partitions] == [
        (1, "ZOS1", 1, 2),
        (2, "SPARE", 1, 0),
        (3, "LINUX1", 2, 3),
    ]
    own = d.own()
    assert own is not None and own.name == "LINUX1"
    c0, c1, c2 = own.cpus
    assert (c0.address, c0.type_index, c0.lp_us, c0.mgmt_us) == (0, 3, 30_000_000, 1_000_000)
    assert (c0.online_us, c0.wait_us, c0.mt_idle_us, c0.weight) == (60_000_000, 29_000_000, 7, 50)
    assert (c1.lp_us, c1.mgmt_us, c1.polar_weight) == (12_000_000, 500_000, 50)
    assert (c0.online, c1.online, c2.online) == (True, True, False)
    assert d.partitions[0].cpus[1].weight == DED_WEIGHT
    assert [(p.address, p.type_index, p.mgmt_us) for p in d.physical] == [
        (0, 0, 11),
        (1, 3, 22),
        (2, 5, 33),
        (3, 4, 44),
    ]


def test_a_logical_cpu_not_online_is_no_processor(tmp_path: Path) -> None:
    """A standby or reserved logical CPU has a block of its own (hyptop counts cores as
    'sum of initial and reserved'), without DIAG204_CPU_ONLINE: the kernel's sthyi.c
    (lpar_cpu_inf) and IBM's qclib (QC_CPU_CONFIGURED) skip it; it is not a processor of
    this LPAR's to show at 0% busy."""
    dbfs = tmp_path / "sys/kernel/debug/s390_hypfs"
    dbfs.mkdir(parents=True)
    (dbfs / "diag_204").write_bytes(diag204_file())
    sample = HypfsSource(SourceContext(root=tmp_path), mode="debugfs").sample()
    cpus = {r.key: r for r in sample.readings if r.kind == "lcpu"}
    assert sorted(cpus) == ["0", "1"]
    assert cpus["1"].attrs["type"] == "IFL" and cpus["1"].values["busy_us"] == 12_000_000
    assert sample.config is not None
    assert sample.config["hypfs.threads_per_core"] == "2"
    assert sample.config["hypfs.physical_cpus.zIIP"] == "1"


def test_type_index_4_is_an_icf() -> None:
    """The index is the SCCB processor type code (ICF 4), as Hercules stores it in ctidx
    and names it in its DIAGNOSE X'224' table (SDL-Hercules-390/hyperion diagmssf.c
    diag224_call from hscutl.c ptypes; the older hercules-390 table said ICF at 1 and
    '*UNKNOWN*' at 4 while its DIAGNOSE X'204' stored 4 for an ICF)."""
    d = parse_diag204(diag204_file())
    assert [from_diag224_index(p.type_index) for p in d.physical] == ["CP", "IFL", "zIIP", "ICF"]
    assert from_diag224_index(1) == "UN"


def test_diag2fc_decodes_the_kernel_layout() -> None:
    d = parse_diag2fc(diag2fc_file())
    assert not d.truncated and d.time_us == TIME_US
    a, b = d.records
    assert (a.guest, a.flags, a.used_cpu_us, a.elapsed_us) == ("LINUX01", 8, 123_456, 3_600_000_000)
    assert (a.mem_max_kib, a.mem_used_kib, a.pcpus, a.lcpus, a.vcpus) == (4 << 20, 1 << 20, 8, 6, 2)
    assert (a.samp_cpu, a.samp_delay, a.samp_page, a.samp_idle, a.samp_other) == (40, 5, 3, 50, 2)
    assert (a.samp_total, a.cpu_shares) == (100, 100)
    assert (b.guest, b.vcpus, b.used_cpu_us) == ("TCPIP", 1, 7)
