"""The sweeps' charts: real SVG images from plotext's drawing through Rich's SVG export."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from esatui.sim.plots import HEIGHT, WIDTH, sweep_svg, sweep_text
from esatui.sim.sweep import SWEEP_BY_NAME, Point


def _points(values: tuple[float | int | bool, ...]) -> list[Point]:
    return [
        Point(
            value=v,
            etr=1000.0 * (i + 1),
            vserv_us=200.0 / (i + 1),
            nserv_us=2.0,
            rserv_us=100.0,
            dserv_us=98.0 / (i + 1),
            unsuccessful_dq_s=500.0 * (i + 1),
            guest_busy_per_kvnq=0.8,
            cp_busy_per_kvnq=1.0,
            guest_cpu=0.1,
            cp_cpu=0.1,
            threads=10,
            cycle_us=1000.0,
            pending_avg=1.0,
            card_util=0.1,
            vcpu_util=0.1,
            lpar_util=0.1,
        )
        for i, v in enumerate(values)
    ]


def test_charts_are_svg_images_of_the_drawn_text() -> None:
    for name in ("poll", "smt", "poll"):  # one after the other: no state leaks between charts
        sweep = SWEEP_BY_NAME[name]
        points = _points(sweep.values)
        text = re.sub(r"\x1b\[[0-9;]*m", "", sweep_text(sweep, points))
        lines = text.splitlines()
        assert len(lines) == HEIGHT
        assert max(len(line) for line in lines) == WIDTH
        assert "operations/s (ETR)" in text and "VSERV µs" in text
        svg = sweep_svg(sweep, points)
        root = ET.fromstring(svg)
        assert root.tag.endswith("svg")
        shown = svg.replace("&#160;", " ")
        assert sweep.title in shown
        assert "operations/s (ETR)" in shown
