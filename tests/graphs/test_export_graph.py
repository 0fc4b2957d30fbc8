"""``esatui export --format svg|plot --column``: a picture a browser draws, and text."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from esatui.cli import main
from tests.exposition.test_web import CHROMIUM_FLAGS, chromium_binary, png_pixels

# Rich's SVG: a style class per colour, and the text drawn in it
SVG_FILL = re.compile(r"\.(terminal-\d+-r\d+) \{ fill: #([0-9a-f]{6})")
SVG_BRAILLE = re.compile(r'class="(terminal-\d+-r\d+)"[^>]*>[^<]*[\u2800-\u28ff]')


def line_colours(svg: str) -> set[bytes]:
    """The colours of the plotted lines in an SVG export: the fills of its braille text
    (plotext draws the lines in braille dots; frame, ticks and titles are other text)."""
    fills = dict(SVG_FILL.findall(svg))
    return {bytes.fromhex(fills[c]) for c in SVG_BRAILLE.findall(svg)}


def test_plot_is_text_with_a_line_per_entity(
    sim_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "ESACPUU", "--db", str(sim_db), "--format", "plot", "--column",
                 "total", "--column", "steal", "--width", "100"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("ESACPUU total [%] and steal [%] (right axis)")
    assert "\x1b[" not in out  # no colour codes: for a mail
    for entity in ("CP 0", "IFL 1", "IFL 2", "IFL Tot (subtotal)"):
        assert entity in out
    assert len(lines) == 30 and max(len(line) for line in lines) <= 100


@pytest.mark.parametrize("overlay", [[], ["--column", "steal"]])
def test_no_value_lies_under_the_legend(
    overlay: list[str], sim_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """plotext writes its legend over the canvas's top rows: the axes leave them to it
    (before: the CPs' busiest hours were under 'CP 0', 'IFL 1' ...)."""
    argv = ["export", "ESACPUU", "--db", str(sim_db), "--format", "plot", "--column", "total"]
    assert main([*argv, *overlay, "--width", "100"]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]  # the heading names them too
    labels = ("CP 0", "CP Tot (subtotal)", "IFL 1", "IFL 2", "IFL Tot (subtotal)", "steal: CP Tot")
    found = 0
    for label in labels[: 6 if overlay else 5]:
        (row,) = [line for line in lines if f" {label} " in line or line.endswith(f" {label}")]
        beside = row.split(f" {label}", 1)[1]
        assert re.split("[│┤├]", beside)[0].strip() == "", row  # nothing drawn beside it
        found += 1
    assert found >= 5


def test_svg_is_a_picture_a_browser_draws(sim_db: Path, tmp_path: Path) -> None:
    svg = tmp_path / "poll.svg"
    argv = ["export", "ESAUSR2", "--db", str(sim_db), "--format", "svg", "--column", "cpu_pct"]
    assert main([*argv, "--output", str(svg)]) == 0
    text = svg.read_text()
    assert text.startswith("<svg") and text.rstrip().endswith("</svg>")
    png = tmp_path / "poll.png"
    run = subprocess.run(
        [
            chromium_binary(),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={png}",
            svg.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert png.exists(), run.stderr.decode(errors="replace")[-2000:]
    colours = line_colours(text)
    assert len(colours) >= 2  # the guests' lines, in the palette's colours
    missing = colours - png_pixels(png.read_bytes())
    assert not missing, f"line colours the browser did not draw: {sorted(missing)}"


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--format", "svg"], "--format svg needs --column COL"),
        (["--column", "total"], "--column is for --format svg or plot"),
        (["--format", "plot", "--column", "nope"], "ESACPUU has no numeric column 'nope'"),
        (["--format", "plot"] + ["--column", "total"] * 3, "--column at most twice"),
        (["--format", "plot"] + ["--column", "total"] * 2, "--column total twice"),
        (
            ["--format", "plot", "--column", "total", "--interval-len", "10s"],
            "--interval-len 10s is shorter than the recorded intervals (1m)",
        ),
        (
            ["--format", "svg", "--column", "total", "--interval-len", "5m", "--stats", "mean"],
            "--stats is for --format text, csv, json or jsonl, not svg",
        ),
        (
            ["--format", "plot", "--column", "total", "--order", "asc"],
            "--order is for --format text, csv, json or jsonl, not plot",
        ),
        (["--format", "plot", "--column", "total", "--order", "desc"], "--order is for"),
    ],
)
def test_bad_graph_arguments_are_one_line(
    sim_db: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    assert main(["export", "ESACPUU", "--db", str(sim_db), *argv]) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert says in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and captured.out == ""


def test_export_svg_starts_without_textual(sim_db: Path) -> None:
    code = (
        "import sys\n"
        "from esatui.cli import main\n"
        f"main(['export', 'ESAPOLL', '--db', {str(sim_db)!r}, '--format', 'svg',"
        " '--column', 'vserv_us', '--output', '/dev/null'])\n"
        "assert not any(m == 'textual' or m.startswith('textual.') for m in sys.modules), "
        "'textual loaded'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
