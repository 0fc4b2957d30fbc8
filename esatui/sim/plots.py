"""Charts of the simulator's sweeps as SVG: plotext draws, Rich's SVG export renders.

plotext draws a chart as terminal text (with ANSI colours); Rich reads that text and exports
it as an SVG image of the terminal, so the same chart can be shown in a terminal, in the
Textual app or in a document. Nothing else imports this module.

``python -m esatui.sim.plots docs/model`` runs every sweep of :mod:`esatui.sim.sweep`,
writes ``sweep-NAME.svg`` there and prints the tables and image links of docs/MODEL.md
section 16.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import plotext as plt
from rich.console import Console
from rich.text import Text

from esatui.sim.sweep import SWEEP_BY_NAME, SWEEPS, Point, Sweep, markdown, run

WIDTH = 132
"""Characters across (the screens' default width)."""
HEIGHT = 30
"""Lines of the chart."""

_RATES: tuple[tuple[str, Callable[[Point], float]], ...] = (
    ("operations/s (ETR)", lambda p: p.etr),
    ("unsuccessful guest DQ/s", lambda p: p.unsuccessful_dq_s),
)
_TIMES: tuple[tuple[str, Callable[[Point], float]], ...] = (
    ("VSERV µs", lambda p: p.vserv_us),
    ("RSERV µs", lambda p: p.rserv_us),
    ("DSERV µs", lambda p: p.dserv_us),
    ("NSERV µs", lambda p: p.nserv_us),
)


def _xs(sweep: Sweep) -> tuple[list[float], list[str], bool]:
    """The x positions, their labels, and whether the axis is logarithmic."""
    if all(isinstance(v, bool) for v in sweep.values):
        return [0.0, 1.0][: len(sweep.values)], ["on" if v else "off" for v in sweep.values], False
    return [float(v) for v in sweep.values], [f"{v:g}" for v in sweep.values], True


def sweep_text(sweep: Sweep, points: Sequence[Point]) -> str:
    """The chart as terminal text with ANSI colours: rates left, service times right."""
    xs, labels, log = _xs(sweep)
    plt.main()  # the whole figure, not the subplot the last chart left active
    plt.clear_figure()
    plt.limitsize(False, False)  # the size asked for, not the terminal's (there is none)
    plt.subplots(1, 2)
    plt.plotsize(WIDTH, HEIGHT)
    panels = ((_RATES, "rates per second"), (_TIMES, "µs per operation"))
    for col, (series, title) in enumerate(panels, 1):
        plt.subplot(1, col)
        plt.theme("clear")
        plt.title(title)
        plt.xlabel(sweep.param)
        if log:
            plt.xscale("log")
        plt.xticks(xs, labels)
        plt.yscale("log")
        for name, value in series:
            pairs = [(x, value(p)) for x, p in zip(xs, points, strict=True) if value(p) > 0]
            if pairs:
                plt.plot([a for a, _ in pairs], [b for _, b in pairs], label=name, marker="braille")
    return str(plt.build())


def sweep_svg(sweep: Sweep, points: Sequence[Point]) -> str:
    """The chart as an SVG image (Rich's terminal export)."""
    console = Console(record=True, width=WIDTH, file=io.StringIO(), color_system="truecolor")
    console.print(Text.from_ansi(sweep_text(sweep, points)))
    return console.export_svg(title=sweep.title)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m esatui.sim.plots", description=__doc__)
    ap.add_argument("directory", type=Path, help="where the SVG files go (docs/model)")
    ap.add_argument("names", nargs="*", help=f"sweeps (default all: {', '.join(SWEEP_BY_NAME)})")
    args = ap.parse_args(argv)
    args.directory.mkdir(parents=True, exist_ok=True)
    for sweep in [SWEEP_BY_NAME[n] for n in args.names] if args.names else SWEEPS:
        points = run(sweep)
        path = args.directory / f"sweep-{sweep.name}.svg"
        path.write_text(sweep_svg(sweep, points))
        print(f"### {sweep.title}\n\n![{sweep.title}](model/{path.name})\n")
        print(f"{markdown(sweep, points)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
