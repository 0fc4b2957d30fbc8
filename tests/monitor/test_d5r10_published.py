"""D5R10 MRPRCAPM decoded from records built byte by byte from the published structures
(tests/monitor/published.py cites them), never from esatui's own encoder."""

from __future__ import annotations

import struct

from esatui.collectors.model import Sample
from esatui.collectors.monitor import encode as E
from esatui.collectors.monitor import kinds as K
from esatui.collectors.monitor.assemble import IntervalAssembler
from esatui.collectors.monitor.frames import walk
from esatui.collectors.monitor.layoutfile import builtin_layouts
from tests.monitor import published as P
from tests.monitor.conftest import Warnings

T = 1_456_857_180_000_000  # 2016-03-01 18:33 UTC
F32 = struct.Struct(">f")


def f32(x: float) -> float:
    return float(F32.unpack(F32.pack(x))[0])


# One record, spelled out as the documents lay it out (hex: 20 + 20 + 16 + 16 = 72 bytes).
SPELLED_OUT = bytes.fromhex(
    # MRRECHDR: length 72, zeros, domain 5, reserved, record 10, TOD of T, 4 reserved
    "0048 0000 05 00 000a d061147706f00000 00000000"
    # reserved 4; PRCAPM_L2 = 16 + 32 (response header + one block); PRCAPM_RC = X'0001'
    " 00000000 0030 0001"
    # reserved 4; P bit off; reserved 3; reserved 4 (blocks start at +40)
    " 00000000 00 000000 00000000"
    # chsc_cmb_header: reserved, ct 14 (CEX8), format 1 (APQN), ax 0x0b,
    # s = 2**-20 (IEEE binary32 0x35800000), v = pair 0 valid, dx 0x2c, mt 9 (CCA), l4 32
    " 00 0e 01 0b 35800000 80000000 2c 09 0020"
    # chsc_cmb_entry 0: t = 3 * 2**20 (3 s), c = 7
    " 0000000000300000 0000000000000007"
)


def test_a_spelled_out_record_decodes_field_by_field() -> None:
    lay = builtin_layouts().select(5, 10, len(SPELLED_OUT))
    assert lay is not None
    d = lay.decode(SPELLED_OUT, 0, len(SPELLED_OUT))
    assert d.problems == []
    assert d.values == {"l2": 48, "rc": 1, "more": 0}
    assert d.entries == [
        {
            "ap_type": 14,
            "format": 1,
            "ap": 11,
            "scale": 2.0**-20,
            "valid": 0x80000000,
            "domain": 0x2C,
            "mode": 9,
            "cmb_len": 32,
            "pairs": ((3 << 20, 7),),
        }
    ]


def _interval(records: list[bytes], warnings: Warnings) -> Sample:
    asm = IntervalAssembler(builtin_layouts(), "monitor", warnings.append)
    data = E.frame_records([*records, E.end_of_interval(T)], 0)
    out = [s for rec in walk(data, 0) if (s := asm.feed(data, rec)) is not None]
    assert len(out) == 1
    return out[0]


def _aps(sample: Sample) -> dict[str, tuple[dict[str, object], dict[str, str]]]:
    return {
        r.key: (dict(r.values), dict(r.attrs)) for r in sample.readings if r.kind == "crypto_ap"
    }


def test_the_spelled_out_record_is_one_apqn_row(warnings: Warnings) -> None:
    aps = _aps(_interval([SPELLED_OUT], warnings))
    values, attrs = aps["0b.002c"]
    assert attrs == {
        "type": "14",
        "mode": "cca",
        "scale": repr(2.0**-20),
        "valid": "80000000",
        "layout": "D5R10/40",
    }
    assert values == {
        "cca_all_time": 3 << 20,
        "cca_all_count": 7,
        "cca_rsa_keygen_time": None,  # its pair is not in the block
        "cca_rsa_keygen_count": None,
    }
    assert list(aps) == ["0b.002c"] and warnings == []


ACCEL = P.Cmb(ct=10, ax=0, s=1e-6, pairs=tuple((1000 * i + 1, i) for i in range(6)), mt=8)
CARD = P.Cmb(ct=13, ax=0x3A, s=2.0**-12, pairs=((11, 1), (22, 2), (33, 3), (44, 4), (55, 5)), mt=10)
APQN = P.Cmb(
    ct=13,
    ax=0x3A,
    s=2.0**-12,
    pairs=((5, 1), (6, 2), (7, 3), (8, 4), (9, 5)),
    v=0xA8000000,  # pairs 0, 2, 4
    fmt=1,
    dx=0x11,
    mt=10,
)


def test_every_field_of_cards_and_apqns(warnings: Warnings) -> None:
    records = P.d5r10_set(T, [ACCEL, CARD, APQN], per_record=2)
    assert [r[32] for r in records] == [P.P_BIT, 0]
    lay = builtin_layouts().select(5, 10, len(records[0]))
    assert lay is not None
    d = lay.decode(records[0], 0, len(records[0]))
    assert d.values == {"l2": 16 + (16 + 96) + (16 + 80), "rc": 1, "more": 1}
    first, second = d.entries
    assert (first["ap_type"], first["format"], first["ap"], first["mode"]) == (10, 0, 0, 8)
    assert first["scale"] == f32(1e-6) and first["valid"] == 0xFC000000
    assert first["cmb_len"] == 112 and first["pairs"] == ACCEL.pairs
    assert (second["ap_type"], second["ap"], second["mode"], second["cmb_len"]) == (13, 58, 10, 96)

    aps = _aps(_interval(records, warnings))
    assert list(aps) == ["00", "3a", "3a.0011"]  # the APQN under its card
    values, attrs = aps["00"]
    assert attrs["mode"] == "accel" and attrs["type"] == "10" and attrs["valid"] == "fc000000"
    assert float(attrs["scale"]) == f32(1e-6)
    for i, fn in enumerate(K.FUNCTIONS[K.MODE_ACCEL]):
        assert values[f"{fn}_time"] == 1000 * i + 1 and values[f"{fn}_count"] == i
    card, _ = aps["3a"]
    assert [card[f"{fn}_count"] for fn in K.FUNCTIONS[K.MODE_EP11]] == [1, 2, 3, 4, 5]
    apqn, apqn_attrs = aps["3a.0011"]
    assert apqn_attrs["mode"] == "ep11" and apqn_attrs["valid"] == "a8000000"
    assert apqn["ep11_asym_slow_time"] == 5 and apqn["ep11_asym_slow_count"] == 1
    assert apqn["ep11_asym_fast_time"] is None  # its validity bit is off
    assert apqn["ep11_sym_partial_count"] == 3 and apqn["ep11_asym_keygen_count"] == 5
    assert warnings == []


def test_fixed_lengths_by_crypto_type(warnings: Warnings) -> None:
    blocks = [
        P.Cmb(ct=9, ax=1, s=1e-6, pairs=((10, 1), (20, 2)), l4=0),  # CEX3C: 64 bytes
        P.Cmb(ct=4, ax=2, s=1e-6, pairs=tuple((e, 1) for e in range(20)), l4=0),  # PCICA: 336
        P.Cmb(ct=6, ax=3, s=1e-6, pairs=((1, 1), (2, 2), (3, 3), (4, 4)), l4=0),  # CEX2A: 80
    ]
    rec = P.d5r10(T, blocks)
    assert len(rec) == 40 + 64 + 336 + 80
    aps = _aps(_interval([rec], warnings))
    assert aps["01"][0]["cca_all_count"] == 1 and aps["01"][0]["cca_rsa_keygen_time"] == 20
    pcica = aps["02"][0]
    assert pcica["rsa1024_me_time"] == 0 + 4 + 8 + 12 + 16 and pcica["rsa2048_crt_count"] == 5
    assert aps["03"][0]["rsa2048_crt_time"] == 4 and aps["03"][0]["rsa4096_me_count"] is None
    assert warnings == []


def test_the_response_length_bounds_the_blocks(warnings: Warnings) -> None:
    rec = bytearray(P.d5r10(T, [ACCEL]) + bytes(64))  # 64 bytes of padding after the block
    struct.pack_into(">H", rec, 0, len(rec))
    aps = _aps(_interval([bytes(rec)], warnings))
    assert list(aps) == ["00"] and warnings == []

    rec = bytearray(P.d5r10(T, [ACCEL]))
    struct.pack_into(">H", rec, 24, 16 + 112 + 16)  # L2 announces more than the record holds
    _interval([bytes(rec)], warnings)
    assert any("beyond the record" in w for w in warnings)


def test_an_unsuccessful_response_is_not_used(warnings: Warnings) -> None:
    sample = _interval(
        [P.d5r10(T, [ACCEL], rc=0x0003), E.crypto_record(T, {"virt_nq": 1})], warnings
    )
    assert _aps(sample) == {}
    assert any("X'0003'" in w for w in warnings)


def test_the_encoder_writes_what_the_documents_say() -> None:
    """The encoder the tests and the simulator use lays records out as the documents do."""
    specs = [
        E.CmbSpec(0, ACCEL.pairs, mode=8, ap_type=10, scale=1e-6),
        E.CmbSpec(0x3A, CARD.pairs, mode=10, ap_type=13, scale=2.0**-12),
        E.CmbSpec(0x3A, APQN.pairs, mode=10, ap_type=13, scale=2.0**-12, valid=APQN.v, domain=0x11),
    ]
    assert E.cmb_records(T, specs, per_record=2) == P.d5r10_set(T, [ACCEL, CARD, APQN], 2)
    fixed = [E.CmbSpec(1, ((10, 1), (20, 2)), mode=0, ap_type=9, zero_length=True)]
    assert E.cmb_records(T, fixed) == [P.d5r10(T, [P.Cmb(9, 1, 1e-6, ((10, 1), (20, 2)), l4=0)])]


def test_the_d5r9_encoder_writes_what_the_documents_say() -> None:
    counters = {name: 1000 + i for i, name in enumerate(P.D5R9_COUNTERS)}
    for length in (112, 128):
        assert E.crypto_record(T, counters, length=length) == P.d5r9(T, counters, length)


def test_a_response_code_left_at_zero_is_not_a_failure(warnings: Warnings) -> None:
    assert list(_aps(_interval([P.d5r10(T, [ACCEL], rc=0)], warnings))) == ["00"]
    assert warnings == []
