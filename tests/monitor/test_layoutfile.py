from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from esatui.collectors.monitor import encode as E
from esatui.collectors.monitor.layout import LayoutTable
from esatui.collectors.monitor.layoutfile import (
    LayoutError,
    builtin_layouts,
    effective_layouts,
    load_layout_file,
    parse_layouts,
)

T = 1_700_000_000_000_000


def _doc(**rec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "domain": 5,
        "record": 9,
        "length": 112,
        "fields": [{"name": "cryvserv", "offset": 24, "type": "u64", "unit": "us"}],
    }
    base.update(rec)
    return {"format": "esatui-monitor-layout", "version": 1, "records": [base]}


def test_builtin_table_is_complete() -> None:
    t = builtin_layouts()
    assert [x.length for x in t.layouts(5, 9)] == [112, 128, 360]
    for key in [(5, 10), (0, 2), (0, 16), (1, 4), (1, 5), (1, 9)]:
        assert key in t
    verified = {f.name for f in t.layouts(5, 9)[-1].fields if not f.provisional}
    assert verified == {
        "cryvserv",
        "cryrserv",
        "crynownq",
        "crynovnq",
        "crynoxvn",
        "crynoxrn",
        "crynofnq",
        "crynofdq",
    }
    for lay in t:
        for f in lay.all_fields():
            assert f.source, (lay.id, f.name)


def test_selection_by_length() -> None:
    t = builtin_layouts()
    assert t.select(5, 9, 112).length == 112  # type: ignore[union-attr]
    assert t.select(5, 9, 200).length == 128  # type: ignore[union-attr]
    assert t.select(5, 9, 400).length == 360  # type: ignore[union-attr]
    assert t.select(5, 9, 60).length == 112  # type: ignore[union-attr]
    assert t.select(5, 99, 60) is None


def test_longer_record_skips_unknown_tail_and_shorter_loses_fields() -> None:
    t = builtin_layouts()
    rec = E.crypto_record(T, {"cryvserv": 11, "crydserv": 22}, length=360)
    longer = E.raw_record(5, 9, T, rec[20:] + b"\xff" * 40)
    lay = t.select(5, 9, len(longer))
    assert lay is not None and lay.length == 360
    d = lay.decode(longer, 0, len(longer))
    assert d.values["cryvserv"] == 11 and d.values["crydserv"] == 22
    short = E.raw_record(5, 9, T, rec[20:80])  # 80 bytes
    lay = t.select(5, 9, len(short))
    assert lay is not None
    d = lay.decode(short, 0, len(short))
    assert d.values["cryvserv"] == 11
    assert d.values["crynofnq"] == 0  # +72..79 still inside
    assert d.values["crynofdq"] is None  # +80 is beyond the record: absent, never 0


def test_override_replaces_same_length(tmp_path: Path) -> None:
    p = tmp_path / "lay.json"
    p.write_text(json.dumps(_doc(fields=[{"name": "cryvserv", "offset": 32, "type": "u64"}])))
    t = effective_layouts(p)
    assert t.select(5, 9, 112).field("cryvserv").offset == 32  # type: ignore[union-attr]
    assert t.select(5, 9, 360).field("cryvserv").offset == 24  # type: ignore[union-attr]
    assert builtin_layouts().select(5, 9, 112).field("cryvserv").offset == 24  # type: ignore[union-attr]


def test_override_adds_a_length(tmp_path: Path) -> None:
    p = tmp_path / "lay.json"
    p.write_text(json.dumps(_doc(length=400, level="z/VM 8.1")))
    t = effective_layouts(p)
    assert [x.length for x in t.layouts(5, 9)] == [112, 128, 360, 400]


def test_builtin_file_roundtrips_through_the_loader() -> None:
    # the shipped table is written in the user format: it must load as a user file would
    from importlib import resources

    text = resources.files("esatui.collectors.monitor").joinpath("layouts.json").read_text()
    t = parse_layouts(json.loads(text), "x")
    assert isinstance(t, LayoutTable) and len(list(t)) == len(list(builtin_layouts()))


BAD: list[tuple[Any, str]] = [
    ([], "top level must be an object"),
    ({"format": "other", "records": []}, "format is 'other'"),
    ({"version": 2, "records": []}, "version 2 is not supported"),
    ({"records": {}}, "'records' must be a list"),
    ({"records": [], "extra": 1}, "unknown key 'extra'"),
    (_doc(domain=300), "'domain' must be between 0 and 255"),
    (_doc(length=10), "'length' must be between 20"),
    (_doc(length="112"), "'length' must be a whole number"),
    (_doc(fields={}), "'fields' must be a list"),
    (_doc(fields=[{"name": "x", "offset": 24, "type": "u65"}]), "unknown type 'u65'"),
    (_doc(fields=[{"name": "x", "offset": 10, "type": "u8"}]), "'offset' must be between 20"),
    (_doc(fields=[{"name": "x", "offset": 110, "type": "u64"}]), "beyond the record length"),
    (_doc(fields=[{"name": "x y", "offset": 24, "type": "u8"}]), "letters, digits"),
    (_doc(fields=[{"name": "x", "offset": 24, "type": "ebcdic"}]), "needs a 'size'"),
    (_doc(fields=[{"name": "x", "offset": 24, "type": "u8", "size": 2}]), "only for ebcdic"),
    (_doc(fields=[{"name": "x", "offset": 24, "type": "f32", "mask": 1}]), "only for integer"),
    (_doc(fields=[{"name": "x", "offset": 24, "type": "u8", "status": "maybe"}]), "status"),
    (_doc(fields=[{"name": "x", "offset": 24, "type": "u8", "typo": 1}]), "unknown key 'typo'"),
    (_doc(fields=[{"name": "x", "offset": 24, "type": "pairs"}]), "belong to entries"),
    (
        _doc(
            fields=[
                {"name": "x", "offset": 24, "type": "u8"},
                {"name": "x", "offset": 25, "type": "u8"},
            ]
        ),
        "defined twice",
    ),
    (_doc(entries={"start": 40, "count": None, "length": 8, "fields": []}), "non-empty list"),
    (
        _doc(
            entries={
                "start": "nope",
                "count": None,
                "length": 8,
                "fields": [{"name": "a", "offset": 0, "type": "u8"}],
            }
        ),
        "'start' names 'nope'",
    ),
    (
        _doc(
            entries={
                "start": 40,
                "count": "nope",
                "length": 8,
                "fields": [{"name": "a", "offset": 0, "type": "u8"}],
            }
        ),
        "'count' must be null or",
    ),
    (
        _doc(
            entries={
                "start": 40,
                "count": None,
                "length": "entry.zz",
                "fields": [{"name": "a", "offset": 0, "type": "u8"}],
            }
        ),
        "not an integer entry field",
    ),
    (
        _doc(
            entries={
                "start": 40,
                "count": None,
                "length": 8,
                "length_if_zero": {"by": "a", "values": {"1": 2}},
                "fields": [{"name": "a", "offset": 0, "type": "u8"}],
            }
        ),
        "needs 'length' of the form",
    ),
    (
        _doc(
            entries={
                "start": 40,
                "count": None,
                "length": "entry.a",
                "length_if_zero": {"by": "a", "values": {"x": 2}},
                "fields": [{"name": "a", "offset": 0, "type": "u8"}],
            }
        ),
        "must be a decimal number",
    ),
]


@pytest.mark.parametrize(("doc", "message"), BAD, ids=[m for _d, m in BAD])
def test_bad_layout_files_give_one_line(tmp_path: Path, doc: Any, message: str) -> None:
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(LayoutError) as exc:
        load_layout_file(p)
    text = str(exc.value)
    assert message in text
    assert "\n" not in text and text.startswith(str(p))


def test_unreadable_and_non_json(tmp_path: Path) -> None:
    with pytest.raises(LayoutError, match="cannot read"):
        load_layout_file(tmp_path / "missing.json")
    p = tmp_path / "x.json"
    p.write_text("{nope")
    with pytest.raises(LayoutError, match="not JSON"):
        load_layout_file(p)
    p.write_bytes(b"\xff\xfe")
    with pytest.raises(LayoutError, match="not UTF-8"):
        load_layout_file(p)


def test_the_documented_example_loads(tmp_path: Path) -> None:
    doc = (Path(__file__).parents[2] / "docs" / "MONITOR.md").read_text()
    example = doc.split("```json\n", 1)[1].split("```", 1)[0]
    p = tmp_path / "example.json"
    p.write_text(example)
    t = effective_layouts(p)
    lay = t.select(5, 9, 376)
    assert lay is not None and lay.level == "z/VM 7.4"
    rec = E.cmb_records(T, [E.CmbSpec(3, ((1, 2),) * 6)], layouts=t)[0]
    lay10 = t.select(5, 10, len(rec))
    assert lay10 is not None
    d = lay10.decode(rec, 0, len(rec))
    assert d.entries[0]["ap"] == 3


def test_documented_error_example(tmp_path: Path) -> None:
    p = tmp_path / "FILE"
    p.write_text(
        json.dumps(
            _doc(
                length=150,
                fields=[
                    {"name": "cryvserv", "offset": 24, "type": "u64"},
                    {"name": "crydserv", "offset": 144, "type": "u64"},
                ],
            )
        )
    )
    with pytest.raises(LayoutError) as exc:
        load_layout_file(p)
    assert str(exc.value) == (
        f"{p}: records[0] (D5R9/150).fields[1] (crydserv): "
        "ends at 152, beyond the record length 150"
    )
