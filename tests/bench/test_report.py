"""The benchmark report's own logic (no benchmark runs here): statistics, the JSON kept
between runs, and the splice that regenerates docs/BENCHMARKS.md between its markers."""

from __future__ import annotations

from pathlib import Path

from bench.__main__ import update_doc
from bench.core import Measure, Result, fmt, ratios, summary
from bench.report import NEW_SECTIONS, block, splice, summary_rows


def test_measure_statistics() -> None:
    m = Measure("x", (3.0, 1.0, 2.0, 10.0), "ms")
    assert (m.median, m.low, m.high, m.n) == (2.5, 1.0, 10.0, 4)
    assert m.quantile(0.5) == 2.0
    assert m.quantile(1.0) == 10.0
    assert summary(m) == "2.50 ms (1.00-10.0, n=4)"


def test_result_round_trips_through_json() -> None:
    r = Result("host", "title")
    r.add("a", [1.0, 2.0], "ms", "note")
    r.target("what", "< 5 ms", "1.5 ms", True)
    r.target("other", "< 1 s", "not built", None)
    r.notes.append("n")
    back = Result.from_json(r.to_json())
    assert back == r


def test_fmt_keeps_three_significant_digits() -> None:
    assert fmt(0.08412) == "0.0841"
    assert fmt(1.234, "ms") == "1.23 ms"
    assert fmt(45.67) == "45.7"
    assert fmt(1234.5, "B") == "1,234 B"
    assert fmt(float("nan")) == "n/a"


def test_ratios_pair_runs_and_skip_zero_denominators() -> None:
    assert ratios([2.0, 3.0, 4.0], [1.0, 0.0, 2.0]) == [2.0, 2.0]


def test_splice_replaces_only_its_block() -> None:
    doc = "intro\n" + block("host", ["old"]) + "\nmiddle\n" + block("tui", ["keep"]) + "\nend\n"
    out = splice(doc, {"host": block("host", ["new", "lines"])})
    assert "old" not in out
    assert "new\nlines" in out
    assert out.startswith("intro\n") and out.endswith("\nend\n")
    assert "middle" in out and "keep" in out


def test_splice_inserts_new_blocks_before_the_marker_or_at_the_end() -> None:
    doc = f"intro\n\n{NEW_SECTIONS}\n"
    out = splice(doc, {"sim": block("sim", ["x"])})
    assert out.index("bench:sim:begin") < out.index(NEW_SECTIONS)
    bare = splice("intro\n", {"sim": block("sim", ["x"])})
    assert bare.rstrip().endswith("<!-- bench:sim:end -->")


def test_splice_text_with_backslashes_and_group_references_is_kept_verbatim() -> None:
    doc = block("a", ["old"])
    out = splice(doc, {"a": block("a", [r"| 1 \| 2 | \1 \g<0> |"])})
    assert r"| 1 \| 2 | \1 \g<0> |" in out


def _summary_doc(*rows: str) -> str:
    return "\n".join(
        [
            "# Benchmarks",
            "<!-- bench:summary:begin -->",
            "| bar | what | measured | met |",
            "|---|---|---|---|",
            *rows,
            "<!-- bench:summary:end -->",
            "",
        ]
    )


def test_a_run_without_kept_figures_leaves_the_other_benchmarks_summary_rows(
    tmp_path: Path,
) -> None:
    """A new checkout has no bench/out/results.json: a partial run with --write-doc once
    wiped every other benchmark's rows from the summary."""
    store_row = "| < 2048 B | bytes per interval ([store](#store)) | 1,338 B | yes |"
    tui_row = "| < 50 ms | a key \\| its repaint ([tui](#tui)) | 67.9 ms | **no** |"
    old_host = "| <= 0.5 x | recorder ([host](#host)) | 1.14 x | **no** |"
    assert summary_rows(_summary_doc(old_host, store_row, tui_row)) == {
        "host": [old_host],
        "store": [store_row],
        "tui": [tui_row],
    }
    doc = tmp_path / "BENCHMARKS.md"
    doc.write_text(_summary_doc(old_host, store_row, tui_row))
    host = Result("host", "title")
    host.target("recorder", "<= 0.5 x", "1.59 x", False)
    update_doc(doc, {"host": host}, {}, [("run", "now")], "now")
    rows = summary_rows(doc.read_text())
    assert rows["host"] == ["| <= 0.5 x | recorder ([host](#host)) | 1.59 x | **no** |"]
    assert rows["store"] == [store_row] and rows["tui"] == [tui_row]
    text = doc.read_text()
    assert text.index("([host](#host))") < text.index("([store](#store))")  # BENCHMARKS order
