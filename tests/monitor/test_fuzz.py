"""Fuzzing the record and stream parsers (hypothesis, bounded to a few seconds).

Whatever the bytes, the parsers must neither raise nor read outside a record: damage is a
warning and a skipped record or block. Crashes found here become regression tests below.
For a long hunt: ``ESATUI_FUZZ_EXAMPLES=20000 pytest tests/monitor/test_fuzz.py``.
"""

from __future__ import annotations

import errno
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from esatui.collectors.base import SourceContext
from esatui.collectors.model import Sample
from esatui.collectors.monitor import encode as E
from esatui.collectors.monitor.assemble import IntervalAssembler
from esatui.collectors.monitor.frames import walk
from esatui.collectors.monitor.header import FRAME
from esatui.collectors.monitor.layoutfile import LayoutError, builtin_layouts, parse_layouts
from esatui.collectors.monitor.mce import ControlElement, pack_mce
from esatui.collectors.monitor.monwrite import BLOCK, MonwriteReader, MonwriteSource
from esatui.collectors.monitor.stream import split_set
from tests.monitor import fixtures as F
from tests.monitor.conftest import samples_of

# a few seconds in the normal run; ESATUI_FUZZ_EXAMPLES=20000 for a long hunt
EXAMPLES = int(os.environ.get("ESATUI_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example],
)


@FUZZ
@given(st.binary(max_size=3 * FRAME), st.integers(0, 2**32 - 1))
def test_walk_never_crosses_a_frame_or_the_buffer(data: bytes, base: int) -> None:
    for off, length, *_ in walk(data, base):
        assert off >= 0 and off + length <= len(data) and length >= 20
        assert (base + off) // FRAME == (base + off + length - 1) // FRAME


@FUZZ
@given(st.binary(max_size=2000))
def test_split_set_never_raises(data: bytes) -> None:
    for part in split_set(data):
        if not isinstance(part, str):
            mce, span = part
            assert len(span) == mce.size


@FUZZ
@given(st.sampled_from(list(builtin_layouts())), st.binary(min_size=20, max_size=600))
def test_every_layout_decodes_any_bytes(lay: Any, body: bytes) -> None:
    d = lay.decode(body, 0, len(body))
    assert set(d.values) == {f.name for f in lay.fields}


def _assemble(data: bytes) -> list[Sample]:
    asm = IntervalAssembler(builtin_layouts(), "monitor", lambda _m: None)
    out = [s for rec in walk(data, 0) if (s := asm.feed(data, rec)) is not None]
    last = asm.finish()
    return [*out, last] if last else out


# records with valid headers and random bodies: the decoders see every kind of nonsense
random_known = st.builds(
    E.raw_record,
    st.sampled_from([0, 1, 5]),
    st.sampled_from([2, 4, 5, 9, 10, 11, 16]),
    st.integers(0, 2**40),
    st.binary(max_size=400),
)


@FUZZ
@given(st.lists(random_known, max_size=30))
def test_assembler_takes_any_known_record(records: list[bytes]) -> None:
    for s in _assemble(E.frame_records(records, 0)):
        for r in s.readings:
            for v in r.values.values():
                assert v is None or isinstance(v, int | float)


VALID_FILE = b"".join(E.monwrite_intervals(F.seed000_intervals()))


@st.composite
def damaged_file(draw: st.DrawFn) -> bytes:
    data = bytearray(VALID_FILE)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["flip", "zero", "cut", "garbage", "swap"]))
        if not data:
            break
        i = draw(st.integers(0, len(data) - 1))
        if op == "flip":
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "zero":
            n = draw(st.integers(1, 64))
            data[i : i + n] = bytes(len(data[i : i + n]))
        elif op == "cut":
            del data[i:]
        elif op == "garbage":
            data[i:i] = draw(st.binary(min_size=1, max_size=3 * BLOCK))
        else:
            a, b = sorted((i // BLOCK, draw(st.integers(0, len(data) // BLOCK))))
            blocks = [data[k * BLOCK : (k + 1) * BLOCK] for k in range(len(data) // BLOCK)]
            if a < b < len(blocks):
                blocks[a], blocks[b] = blocks[b], blocks[a]
                data = bytearray(b"".join(blocks)) + data[len(blocks) * BLOCK :]
    return bytes(data)


@FUZZ
@given(damaged_file())
def test_damaged_monwrite_files_never_crash(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "f.mon"
        p.write_bytes(data)
        src = MonwriteSource(SourceContext(), p)
        samples = list(src.samples())
    assert src.samples_produced == len(samples)
    times = [s.time_us for s in samples]
    assert all(isinstance(t, int) for t in times)


element = st.tuples(
    st.sampled_from([0xE2, 0xC5, 0x00, 0x41]),
    st.integers(0, 0xFFFF),
    st.integers(0, 3 * BLOCK),
    st.integers(-20, 3 * BLOCK),
).map(lambda t: pack_mce(ControlElement(t[0], t[1], t[2], max(0, t[2] + t[3]))))
random_file = st.builds(
    lambda head, elems, tail: (head + b"".join(elems)).ljust(BLOCK, b"\x00")[:BLOCK] + tail,
    st.binary(min_size=40, max_size=40),
    st.lists(element, max_size=5),
    st.binary(max_size=4 * BLOCK),
)


@FUZZ
@given(random_file)
def test_random_files_never_crash(data: bytes) -> None:
    reader = MonwriteReader(io.BytesIO(data), len(data), lambda _m: None)
    for mce, span in reader.spans():
        assert len(span) <= mce.size
        list(walk(span, mce.start))


SCRIPT = E.monreader_intervals(F.seed000_intervals())


@FUZZ
@given(
    st.lists(
        st.tuples(
            st.integers(0, len(SCRIPT)),
            st.one_of(
                st.sampled_from(
                    [errno.EOVERFLOW, errno.EIO, errno.EFAULT, errno.EAGAIN, errno.EINTR]
                ),
                st.binary(max_size=300),
                st.just(b""),
            ),
        ),
        max_size=8,
    )
)
def test_damaged_monreader_streams_never_crash(inserts: list[tuple[int, bytes | int]]) -> None:
    script: list[bytes | int] = list(SCRIPT)
    for pos, item in sorted(inserts, key=lambda x: -x[0]):
        script.insert(pos, item)
    samples_of(script)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 70000) | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=20,
)
field_like = st.fixed_dictionaries(
    {"name": st.sampled_from(["a", "b", "cmb_len", "mode", "x y"]), "offset": st.integers(-1, 400)},
    optional={
        "type": st.sampled_from(["u8", "u16", "u64", "f32", "ebcdic", "pairs", "tod", "zz"]),
        "size": st.integers(0, 20),
        "mask": st.integers(0, 300),
        "status": st.sampled_from(["verified", "provisional", "?"]),
    },
)
record_like = st.fixed_dictionaries(
    {
        "domain": st.integers(-1, 300),
        "record": st.integers(0, 20),
        "length": st.integers(0, 500),
        "fields": st.lists(field_like, max_size=4),
    },
    optional={
        "entries": st.fixed_dictionaries(
            {
                "start": st.one_of(st.integers(0, 100), st.sampled_from(["a", "b"])),
                "count": st.one_of(st.none(), st.sampled_from(["a", "b"])),
                "length": st.one_of(
                    st.integers(0, 100), st.sampled_from(["a", "entry.a", "entry.cmb_len"])
                ),
                "fields": st.lists(field_like, max_size=4),
            },
            optional={
                "length_if_zero": st.fixed_dictionaries(
                    {"by": st.just("mode"), "values": json_values}
                )
            },
        )
    },
)


@FUZZ
@given(
    st.one_of(json_values, st.fixed_dictionaries({"records": st.lists(record_like, max_size=3)}))
)
def test_layout_loader_only_raises_layout_error(doc: Any) -> None:
    try:
        table = parse_layouts(doc, "fuzz")
    except LayoutError as exc:
        assert "\n" not in str(exc)
        return
    # a layout that loads must decode anything without raising
    for lay in table:
        body = bytes(range(256)) * 3
        lay.decode(body, 0, min(len(body), max(lay.length, 20)))
        json.dumps([f.name for f in lay.all_fields()])


# --- regression tests for crashes the fuzzers found ----------------------------------------


def test_regression_entries_with_zero_length_stop() -> None:
    # an entry length field of 0 without a fallback would loop forever; it must stop
    doc = {
        "records": [
            {
                "domain": 5,
                "record": 10,
                "length": 40,
                "fields": [],
                "entries": {
                    "start": 40,
                    "count": None,
                    "length": "entry.l",
                    "fields": [{"name": "l", "offset": 0, "type": "u8"}],
                },
            }
        ]
    }
    lay = next(iter(parse_layouts(doc, "x")))
    d = lay.decode(bytes(200), 0, 200)
    assert d.entries == [] and d.problems


@pytest.mark.parametrize("count", [0, 1, 65535])
def test_regression_cmb_count_larger_than_record(count: int) -> None:
    rec = E.cmb_records(F.utc_us(2020, 1, 1, 0, 0), [E.CmbSpec(0, ((1, 1),) * 6)])[0]
    data = bytearray(rec)
    data[22:24] = count.to_bytes(2, "big")
    _assemble(E.frame_records([bytes(data)], 0))
