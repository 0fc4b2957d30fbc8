"""A screen's notes in a header of limited height (the monitor's narrow windows)."""

from __future__ import annotations

from esatui.screens.model import Column, ScreenModel
from esatui.screens.render import header_lines, line_text

COLUMNS = (Column("time", ("", "Time"), 8, key=True), Column("ops_s", ("Oper", "/sec"), 8, 1))
NOTES = tuple(f"Note {n}: " + "words that wrap " * 6 for n in range(4))


def _header(width: int, height: int | None) -> list[str]:
    model = ScreenModel("ESAPOLL", "Crypto Polling Analysis", COLUMNS, (), notes=NOTES)
    return [line_text(line) for line in header_lines(model, COLUMNS, 0, 1, width, None, height)]


def test_without_a_height_every_note_is_shown_whole() -> None:
    lines = _header(40, None)
    assert sum(line.startswith("Note ") for line in lines) == 4
    assert not any(line.startswith("… ") for line in lines)
    assert _header(40, len(lines)) == lines  # room enough: the same


def test_notes_are_cut_to_the_room_left_with_a_line_saying_how_many_more() -> None:
    whole = _header(40, None)
    title = 2  # the title's two lines; the column headers and the rule follow the notes
    fixed = len(whole) - sum("wrap" in line for line in whole)
    note_lines = len(whole) - fixed
    cut = _header(40, fixed + 3)
    assert len(cut) == fixed + 3
    assert cut[title : title + 2] == whole[title : title + 2]  # the first lines, as they were
    assert cut[title + 2] == f"… {note_lines - 2} more note lines: widen or export"
    assert cut[title + 3 :] == whole[title + note_lines :]  # the column headers whole
    wide = _header(132, fixed + 1)
    assert wide[title].startswith("… ") and "a wider window or the export shows them" in wide[2]


def test_no_room_leaves_the_line_saying_so() -> None:
    for height in (0, 5):
        lines = _header(40, height)
        assert [line for line in lines if "Note " in line] == []
        assert sum(line.startswith("… ") for line in lines) == 1
