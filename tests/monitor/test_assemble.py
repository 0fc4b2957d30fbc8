"""Records to samples: interval boundaries, P-bit joining, config, lcpu, unknown records."""

from __future__ import annotations

from pathlib import Path

from esatui.collectors.base import SourceContext
from esatui.collectors.model import Sample, SampleFlag
from esatui.collectors.monitor import encode as E
from esatui.collectors.monitor.assemble import IntervalAssembler
from esatui.collectors.monitor.fakedev import ScriptedDevice
from esatui.collectors.monitor.frames import walk
from esatui.collectors.monitor.layoutfile import builtin_layouts
from esatui.collectors.monitor.monreader import MonreaderSource
from tests.monitor.conftest import ImportFn, Warnings
from tests.monitor.fixtures import reading

T = 1_700_000_040_000_000
M = 60_000_000


def _feed(records: list[bytes], warnings: Warnings) -> tuple[list[Sample], IntervalAssembler]:
    asm = IntervalAssembler(builtin_layouts(), "monitor", warnings)
    data = b"".join(records)
    out = [s for rec in walk(data, 0) if (s := asm.feed(data, rec)) is not None]
    last = asm.finish()
    if last is not None:
        out.append(last)
    return out, asm


def test_d1r11_ends_the_interval_and_stamps_it(warnings: Warnings) -> None:
    recs = [E.crypto_record(T, {"virt_nq": 1}), E.end_of_interval(T + 5)]
    recs += [E.crypto_record(T + M, {"virt_nq": 2}), E.end_of_interval(T + M + 7)]
    samples, asm = _feed(recs, warnings)
    assert [s.time_us for s in samples] == [T + 5, T + M + 7]
    assert asm.stats.samples == 2 and asm.stats.used == 4 and asm.stats.skipped == 0
    assert all(s.mono_ns is None and s.source == "monitor" for s in samples)


def test_next_intervals_records_end_it_without_d1r11(warnings: Warnings) -> None:
    recs = [E.crypto_record(T + i * M, {"virt_nq": i}) for i in range(3)]
    samples, _ = _feed(recs, warnings)
    assert [s.time_us for s in samples] == [T, T + M, T + 2 * M]
    vals = [reading(s, "crypto", "system").values["virt_nq"] for s in samples]  # type: ignore[union-attr]
    assert vals == [0, 1, 2]


def test_tod_jump_ends_the_interval(warnings: Warnings) -> None:
    # a D0R2 for cpu 0 then one for cpu 1 a minute later: different processors, but the time
    # gap says it is the next interval
    recs = [
        E.sample_config_record(T, 60),
        E.processor_record(T, cpu=0, cpu_type=3, emul_us=1, user_us=1, syst_us=1, wait_us=1),
        E.processor_record(T + M, cpu=1, cpu_type=3, emul_us=1, user_us=1, syst_us=1, wait_us=1),
    ]
    samples, _ = _feed(recs, warnings)
    assert [[r.key for r in s.readings if r.kind == "lcpu"] for s in samples] == [["0"], ["1"]]


def test_unknown_records_are_counted_and_skipped(warnings: Warnings) -> None:
    recs = [
        E.raw_record(3, 7, T, b"x" * 40),
        E.raw_record(200, 1, T, b""),
        E.crypto_record(T, {"virt_nq": 5}),
        E.raw_record(5, 9, T, b""),  # a D5R9 of only its header: fields absent, never 0
    ]
    samples, asm = _feed(recs, warnings)
    assert asm.stats.skipped == 2
    assert len(samples) == 2
    assert reading(samples[1], "crypto", "system").values["virt_nq"] is None  # type: ignore[union-attr]
    assert samples[0].reads == 3


def test_p_bit_records_are_joined(warnings: Warnings) -> None:
    cmbs = [E.CmbSpec(ap, ((ap * 10, ap),) * 6) for ap in range(7)]
    recs = E.cmb_records(T, cmbs, per_record=2)
    assert len(recs) == 4
    samples, _ = _feed([*recs, E.end_of_interval(T)], warnings)
    assert len(samples) == 1
    assert [r.key for r in samples[0].readings] == [f"{i:02x}" for i in range(7)]
    assert not samples[0].flags and not warnings


def test_d5r10_after_the_final_record_starts_the_next_interval(warnings: Warnings) -> None:
    a = E.cmb_records(T, [E.CmbSpec(0, ((1, 1),) * 6)])
    b = E.cmb_records(T + 1000, [E.CmbSpec(0, ((2, 2),) * 6)])
    samples, _ = _feed(a + b, warnings)
    assert len(samples) == 2


def test_interim_records_without_a_final_one_are_dropped_and_flagged(warnings: Warnings) -> None:
    recs = E.cmb_records(T, [E.CmbSpec(ap, ((1, 1),) * 6) for ap in range(4)], per_record=2)
    interim_only = recs[:1]
    samples, _ = _feed(
        [
            *interim_only,
            E.crypto_record(T, {"virt_nq": 1}),
            E.end_of_interval(T),
            E.crypto_record(T + M, {"virt_nq": 2}),
            E.end_of_interval(T + M),
        ],
        warnings,
    )
    assert [r.kind for r in samples[0].readings] == ["crypto"]  # no partial AP set
    assert samples[0].flags & SampleFlag.GAP
    assert not samples[1].flags
    assert any("interim" in w for w in warnings)


def test_zero_cmb_length_means_the_fixed_length_of_the_crypto_type(warnings: Warnings) -> None:
    # zcryptstats get_cmb_length: 80 bytes CEX2A/CEX3A, 64 the coprocessors, 336 PCICA
    cmbs = [
        E.CmbSpec(0, ((5, 6),) * 4, mode=0, ap_type=6, zero_length=True),
        E.CmbSpec(1, ((7, 8),) * 2, mode=0, ap_type=9, zero_length=True),
        E.CmbSpec(2, tuple((e, 1) for e in range(20)), mode=0, ap_type=4, zero_length=True),
        E.CmbSpec(3, ((9, 10),) * 5, mode=10, ap_type=12),
    ]
    recs = E.cmb_records(T, cmbs)
    assert len(recs[0]) == 40 + 80 + 64 + 336 + (16 + 5 * 16)
    samples, _ = _feed(recs, warnings)
    aps = {r.key: r for r in samples[0].readings}
    assert aps["00"].attrs["mode"] == "accel" and aps["00"].values["rsa2048_crt_count"] == 6
    assert aps["00"].values["rsa4096_crt_count"] is None  # beyond an 80-byte block
    assert aps["01"].attrs["mode"] == "cca" and aps["01"].values["cca_rsa_keygen_time"] == 7
    assert aps["01"].values.get("rsa1024_me_count") is None
    # PCICA: five engines of four pairs each, summed per function
    assert aps["02"].values["rsa1024_me_time"] == 0 + 4 + 8 + 12 + 16
    assert aps["02"].values["rsa2048_crt_count"] == 5
    assert aps["03"].attrs["mode"] == "ep11" and aps["03"].values["ep11_asym_keygen_count"] == 10
    assert not warnings


def test_a_cex4_block_must_carry_its_length(warnings: Warnings) -> None:
    cmbs = [E.CmbSpec(0, ((5, 6),) * 6), E.CmbSpec(1, ((5, 6),) * 6, zero_length=True)]
    samples, _ = _feed(E.cmb_records(T, cmbs), warnings)
    assert [r.key for r in samples[0].readings] == ["00"]
    assert any("no usable length" in w for w in warnings)


def test_validity_mask_and_unknown_mode(warnings: Warnings) -> None:
    cmbs = [
        E.CmbSpec(0, ((5, 6),) * 6, valid=0x80000000 | 0x10000000),  # pairs 0 and 3
        E.CmbSpec(1, ((5, 6),) * 3, mode=77),
        E.CmbSpec(2, ((5, 6),) * 6, scale=float("nan")),
    ]
    samples, _ = _feed(E.cmb_records(T, cmbs), warnings)
    aps = {r.key: r for r in samples[0].readings}
    v0 = aps["00"].values
    assert v0["rsa1024_me_count"] == 6 and v0["rsa2048_crt_count"] == 6
    assert v0["rsa2048_me_count"] is None and v0["rsa4096_crt_time"] is None
    assert aps["01"].values == {} and aps["01"].attrs["mode"] == "77"
    assert aps["02"].attrs["scale"] == ""
    assert len(warnings) == 2


def test_config_records_go_with_every_sample(warnings: Warnings) -> None:
    recs = [
        E.system_record(
            T, machine_type="2827", lpar_name="ZVMLP1", level=(7, 2, 0), tz_offset_s=3600
        ),
        E.sample_config_record(T, 60),
        E.processor_config_record(T, 0, 0),
        E.processor_config_record(T, 1, 3),
        E.crypto_record(T, {}),
        E.crypto_record(T + M, {}),
    ]
    samples, _ = _feed(recs, warnings)
    for s in samples:
        assert s.config is not None
        assert s.config["machine_type"] == "2827"
        assert s.config["lpar_name"] == "ZVMLP1"
        assert s.config["zvm_level"] == "7.2.0"
        assert s.config["tz_offset_s"] == "3600"
        assert s.config["sample_interval_s"] == "60"
        assert s.config["cpu_types"] == "0:CP 1:IFL"


def test_lcpu_from_d0r2_and_d0r16(warnings: Warnings) -> None:
    def interval(i: int) -> list[bytes]:
        us = T + i * M
        return [
            E.processor_record(
                us,
                cpu=0,
                cpu_type=0,
                emul_us=100 * i,
                user_us=10 * i,
                syst_us=5 * i,
                wait_us=40 * i,
            ),
            E.processor_record(
                us,
                cpu=1,
                cpu_type=3,
                emul_us=200 * i,
                user_us=20 * i,
                syst_us=5 * i,
                wait_us=30 * i,
            ),
            E.lpar_record(us, lpar_name="OTHER", data_us=us, cpus=[(0, 1, 1, "CP")]),
            E.lpar_record(
                us,
                lpar_name="ZVMLP1",
                data_us=us,
                # (address, accumulated, the partition's own): 3 and 4 µs of management
                cpus=[(0, 900_003 * i, 900_000 * i, "CP"), (1, 950_004 * i, 950_000 * i, "IFL")],
            ),
        ]

    recs = [E.system_record(T, lpar_name="ZVMLP1"), *interval(0), *interval(1)]
    samples, _ = _feed(recs, warnings)
    assert len(samples) == 2
    a, b = samples
    ra, rb = reading(a, "lcpu", "1"), reading(b, "lcpu", "1")
    assert ra is not None and rb is not None
    assert rb.attrs == {"type": "IFL", "lpar": "ZVMLP1", "type_source": "monitor"}
    d = {k: rb.values[k] - ra.values[k] for k in rb.values}  # type: ignore[operator]
    assert d == {
        "elapsed_us": M,
        "emul_us": 200,
        "user_us": 20,
        "syst_us": 5,
        "idle_us": 30,
        "mgmt_us": 4,
        "steal_us": M - 950_000,
    }
    assert reading(b, "lcpu", "0").attrs["type"] == "CP"  # type: ignore[union-attr]
    assert not warnings


def test_a_partitions_d0r16_series_stays_in_its_interval(warnings: Warnings) -> None:
    """A partition with many CPUs spans a series of D0R16 records in one interval (IBM's
    MRSYTCUP, z/VM 6.3 on: "the data spans a series of records", SYTCPU_CALMORE): ours
    (CPUs 0-2, then 3-5) and another's (its CPUs not decoded: one data TOD) continue the
    interval, which D1R11 ends and stamps; the next interval's records start the next."""

    def interval(i: int) -> list[bytes]:
        us = T + i * M
        recs = [
            E.processor_record(
                us, cpu=c, cpu_type=3, emul_us=i * 100, user_us=i, syst_us=i, wait_us=i * 50
            )
            for c in range(6)
        ]
        for part in ((0, 1, 2), (3, 4, 5)):
            recs.append(E.lpar_record(us, lpar_name="ZOS1", data_us=us, cpus=[(0, i, i, "CP")]))
            cpus = [(c, i * (900_000 + c + 1), i * 900_000, "IFL") for c in part]
            recs.append(E.lpar_record(us + 1, lpar_name="ZVMLP1", data_us=us, cpus=cpus))
        return [*recs, E.end_of_interval(us + 9)]

    recs = [E.system_record(T, lpar_name="ZVMLP1"), *interval(1), *interval(2)]
    samples, _ = _feed(recs, warnings)
    assert [s.time_us for s in samples] == [T + M + 9, T + 2 * M + 9]
    for n, sample in enumerate(samples, start=1):
        for c in range(6):
            cpu = reading(sample, "lcpu", str(c))
            assert cpu is not None
            assert (cpu.values["emul_us"], cpu.values["mgmt_us"]) == (n * 100, n * (c + 1))
    assert not warnings


def test_with_multithreading_d0r16s_cores_go_to_their_first_threads(warnings: Warnings) -> None:
    """MT on (one thread bit): D0R2 per thread (CPUs 0-3: cores 0 and 1), D0R16 per core
    (IBM's MRSYTCUP: "PER CORE if MT is enabled"): core 1's management time is CPU 2's,
    and the second threads have none (before, core 1's went to CPU 1)."""

    def interval(i: int) -> list[bytes]:
        us = T + i * M
        recs = [
            E.processor_record(us, cpu=c, cpu_type=3, emul_us=i, user_us=i, syst_us=i, wait_us=i)
            for c in range(4)
        ]
        cores = [(0, i * 800_007, i * 800_000, "IFL"), (1, i * 900_003, i * 900_000, "IFL")]
        return [*recs, E.lpar_record(us, lpar_name="ZVMLP1", data_us=us, cpus=cores)]

    asm = IntervalAssembler(builtin_layouts(), "monitor", warnings)
    asm.thread_bits = 1
    data = b"".join([E.system_record(T, lpar_name="ZVMLP1"), *interval(1), *interval(2)])
    samples = [s for rec in walk(data, 0) if (s := asm.feed(data, rec)) is not None]
    last = asm.finish()
    assert last is not None
    mgmt = {}
    for c in range(4):
        cpu = reading(last, "lcpu", str(c))
        assert cpu is not None
        mgmt[c] = cpu.values.get("mgmt_us")
    assert mgmt == {0: 14, 1: None, 2: 6, 3: None}
    assert len(samples) == 1 and not warnings


def test_the_thread_bits_come_from_the_systems_sysinfo(tmp_path: Path) -> None:
    """The monreader source reads /proc/sysinfo below its root: PS-MTID bounds G/S-MTID."""
    (tmp_path / "proc").mkdir()
    sysinfo = tmp_path / "proc/sysinfo"

    def bits_read() -> int:
        source = MonreaderSource(
            SourceContext(tmp_path), "fake", opener=lambda _p: ScriptedDevice([])
        )
        assert list(source.samples()) == []  # the device read to its end
        return source.assembler.thread_bits

    for lines, bits in (
        ("LPAR CPUs G-MTID:     0\nLPAR CPUs S-MTID:     1\nLPAR CPUs PS-MTID:    1\n", 1),
        ("LPAR CPUs G-MTID:     1\nLPAR CPUs S-MTID:     1\nLPAR CPUs PS-MTID:    0\n", 0),
        ("LPAR Name:            L32\n", 0),
    ):
        sysinfo.write_text(lines)
        assert bits_read() == bits
    sysinfo.unlink()
    assert bits_read() == 0


def test_d0r16_without_partition_name_is_not_used(warnings: Warnings) -> None:
    recs = [
        E.lpar_record(T, lpar_name="X", data_us=T, cpus=[(0, 1, 1, "CP")]),
        E.crypto_record(T, {}),
    ]
    samples, _ = _feed(recs, warnings)
    assert [r.kind for r in samples[0].readings] == ["crypto"]
    assert any("partition" in w for w in warnings)


def test_import_via_file(import_monwrite: ImportFn) -> None:
    ivs = [
        E.IntervalRecords(T + i * M, [E.crypto_record(T + i * M, {"virt_nq": i})]) for i in range(5)
    ]
    samples = import_monwrite(ivs)
    assert [s.time_us for s in samples] == [T + i * M for i in range(5)]
