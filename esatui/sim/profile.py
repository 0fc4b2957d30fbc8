"""How the load varies over a simulated day (``profile=day``) or does not (``flat``).

``interactive`` scales the open crypto workload (SSL handshakes) and the Linux guests'
background load: quiet at night, a ramp from 06:00, a morning peak 09:00-11:00, a steady
afternoon, an evening decline. ``batch`` scales the z/VSE guests: their batch runs at night
(seed 000's CP at 00:59 is 96% busy with it), a light online load by day.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from esatui.sim.params import Profile

_INTERACTIVE = (
    (0, 0.25),
    (6, 0.25),
    (8, 1.0),
    (9, 1.6),
    (11, 1.6),
    (12, 1.0),
    (20, 1.0),
    (23, 0.25),
    (24, 0.25),
)
_BATCH = ((0, 0.12), (0.9, 0.12), (1.0, 1.0), (5.0, 1.0), (5.5, 0.12), (24, 0.12))

LEVEL_STEP = 0.05
"""Event-level windows are simulated at multiples of this interactive level; a level in
between is a linear interpolation of the two windows around it."""


@dataclass(frozen=True, slots=True)
class Levels:
    interactive: float = 1.0
    batch: float = 1.0


def _interpolate(points: tuple[tuple[float, float], ...], hour: float) -> float:
    hours = [p[0] for p in points]
    i = bisect_right(hours, hour) - 1
    i = min(max(i, 0), len(points) - 2)
    (h0, v0), (h1, v1) = points[i], points[i + 1]
    return v0 + (v1 - v0) * (hour - h0) / (h1 - h0)


def levels(profile: Profile, seconds_of_day: float) -> Levels:
    if profile == "flat":
        return Levels()
    hour = (seconds_of_day % 86400.0) / 3600.0
    return Levels(_interpolate(_INTERACTIVE, hour), _interpolate(_BATCH, hour))
