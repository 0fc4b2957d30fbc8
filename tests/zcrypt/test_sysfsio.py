"""Kept descriptors: budget, re-reads, files that go away or are replaced."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from esatui.collectors.sysfsio import AttrReader, WholeFile


def write(path: Path, text: str) -> None:
    path.write_text(text)


def test_kept_descriptor_sees_in_place_rewrites(tmp_path: Path) -> None:
    f = tmp_path / "request_count"
    write(f, "1\n")
    reader = AttrReader(budget=10)
    assert reader.pin(str(f))
    write(f, "22\n")  # 'w' truncates the same inode
    assert reader.read(str(f)) == b"22\n"
    assert reader.kept == 1


def test_budget_limits_kept_descriptors(tmp_path: Path) -> None:
    paths = []
    for n in range(5):
        write(tmp_path / f"f{n}", f"{n}\n")
        paths.append(str(tmp_path / f"f{n}"))
    reader = AttrReader(budget=2)
    assert [reader.pin(p) for p in paths] == [True, True, False, False, False]
    assert reader.read_all(paths) == [f"{n}\n".encode() for n in range(5)]
    assert reader.reads == 5


def test_replaced_file_is_reopened(tmp_path: Path) -> None:
    f = tmp_path / "online"
    write(f, "1\n")
    reader = AttrReader(budget=10)
    reader.pin(str(f))
    os.truncate(f, 0)  # what a fixture does before removing an attribute
    f.unlink()
    write(f, "0\n")  # a new file (new inode) under the same name
    assert reader.read(str(f)) == b"0\n"
    assert str(f) in reader.reopened


def test_vanished_file_reads_none(tmp_path: Path) -> None:
    f = tmp_path / "online"
    write(f, "1\n")
    reader = AttrReader(budget=10)
    reader.pin(str(f))
    plan = reader.plan([str(f), str(tmp_path / "absent")])
    assert plan[1] is None
    assert reader.read_plan(plan) == [b"1\n", None]
    os.truncate(f, 0)
    f.unlink()
    assert reader.read_plan(plan) is None  # the caller falls back to read_all
    assert reader.read_all([str(f)]) == [None]
    assert reader.kept == 0
    assert not reader.errors  # gone is not an error


def test_forget_and_close(tmp_path: Path) -> None:
    (tmp_path / "card01").mkdir()
    write(tmp_path / "card01/a", "1\n")
    write(tmp_path / "b", "2\n")
    reader = AttrReader(budget=10)
    reader.pin(str(tmp_path / "card01/a"))
    reader.pin(str(tmp_path / "b"))
    reader.forget(str(tmp_path / "card01") + "/")
    assert reader.kept == 1
    reader.close()
    assert reader.kept == 0


def test_whole_file_reads_past_one_buffer_and_sees_rewrites(tmp_path: Path) -> None:
    f = tmp_path / "stat"
    big = b"".join(b"cpu%d 1 2 3 4 5 6 7 8 9 10\n" % n for n in range(400))  # > 4 KiB
    f.write_bytes(big)
    whole = WholeFile(str(f))
    assert whole.read() == big
    f.write_bytes(b"cpu0 1 2 3 4\n")  # the same inode, shorter
    assert whole.read() == b"cpu0 1 2 3 4\n"
    f.write_bytes(big + big)
    assert whole.read() == big + big
    whole.close()
    whole.close()


def test_whole_file_reopens_after_an_empty_read_and_raises_when_gone(tmp_path: Path) -> None:
    f = tmp_path / "stat"
    f.write_bytes(b"old\n")
    whole = WholeFile(str(f))
    assert whole.read() == b"old\n"
    f.write_bytes(b"")  # truncated under the kept descriptor: opened afresh
    _written(tmp_path / "new", b"new\n").replace(f)
    assert whole.read() == b"new\n"
    f.write_bytes(b"")  # emptied, then gone: the fresh open fails
    f.unlink()
    with pytest.raises(FileNotFoundError):
        whole.read()


def _written(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_a_shared_file_gives_a_recent_read_of_another_reader_once(tmp_path: Path) -> None:
    f = tmp_path / "stat"
    f.write_bytes(b"one\n")
    host, steal = WholeFile.shared(str(f)), WholeFile.shared(str(f))
    assert host is steal
    seen, data = steal.recent(10**9, 0)  # nobody read it yet: a read of its own
    assert (seen, data) == (1, b"one\n")
    f.write_bytes(b"two\n")
    assert steal.recent(10**9, seen) == (2, b"two\n")  # never its own read again
    f.write_bytes(b"three\n")
    assert host.read() == b"three\n"  # the other reader's, a moment ago
    f.write_bytes(b"four\n")
    assert steal.recent(10**9, 2) == (3, b"three\n")
    assert steal.recent(0, 3) == (4, b"four\n")  # too old, or already seen: read anew
    host.close()
    assert WholeFile.shared(str(f)) is steal  # still given out: one caller has it
    steal.close()
    steal.close()
    again = WholeFile.shared(str(f))
    assert again is not steal  # the last gave it back: closed, let go
    again.close()
