"""How one step of the simulated clock differs from the next: seeded, small, honest.

Two kinds of variation, both functions of the seed and the moment only (so however the clock
is advanced, a step's values are the same):

* **Sampling** (:func:`draw`): an interval varies around the windows' mean rates as much
  as that many seconds of the window itself do. A step short against its window is an
  actual stretch of it (:func:`stretch`), so every value is a sum over simulated
  operations, physically possible however few there are; a longer one, which averages
  more operations than a window holds, is the mean plus a Gaussian deviation with the
  window's batch covariance scaled by ``batch length / step length`` (:func:`gaussian`).
  Either way the counters move together as the mechanisms moved them: more operations
  bring their service times and CPU costs along.
* **Workload** (:func:`drift`, :class:`Variability`): people and batch jobs are not a
  profile curve. The day profile's levels wander smoothly around it, each Linux guest's
  background load wanders on its own, and per step the background, PR/SM steal and the
  split of work between processors get a little white noise.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from esatui.sim.batches import Spread

Z_LIMIT = 3.5
"""Standard normal draws are clamped to this (no absurd interval from a freak draw)."""
PICKS = 3
"""Batches of a window each step's Gaussian deviation combines."""
STRETCH_SHARE = 0.25
"""A step at most this share of its window long is an actual stretch of the window."""
GOLDEN = 0.6180339887498949
"""Where consecutive steps' stretches start: ``position`` moves on by this (mod 1), so
consecutive steps never take the same or overlapping stretches, and all are used evenly."""


@dataclass(frozen=True, slots=True)
class Variability:
    """The workload's variability. *Assumed*: nothing published pins these down; they are
    chosen small enough that a profile's shape stays what it is, large enough that
    consecutive intervals look like measurements. White noise is given as the standard
    deviation of a one-minute average; a step of ``s`` seconds gets ``sqrt(60 / s)`` times
    that."""

    interactive_drift: float = 0.06
    """Day profile: relative wander of the interactive level (SSL rate, background)."""
    interactive_knot_s: float = 600.0
    batch_drift: float = 0.05
    """Day profile: relative wander of the z/VSE batch level."""
    batch_knot_s: float = 900.0
    background_drift: float = 0.10
    """Day profile: each Linux guest's own wander of its background load."""
    background_knot_s: float = 300.0
    background_white: float = 0.03
    """Per step: a guest's (and a z/VSE guest's) background load."""
    steal_white: float = 0.10
    """Per step and shared processor: PR/SM steal (the other LPARs' demand varies)."""
    placement_white: float = 0.015
    """Per step and processor: its share of its type's work (dispatching is not even)."""


VARIABILITY = Variability()


def gauss(rng: random.Random) -> float:
    """A standard normal draw, clamped to ±:data:`Z_LIMIT`."""
    return max(-Z_LIMIT, min(Z_LIMIT, rng.gauss(0.0, 1.0)))


def white(rng: random.Random, per_minute: float, step_s: float) -> float:
    """A multiplicative factor around 1 for one step (never negative)."""
    return max(0.0, 1.0 + per_minute * math.sqrt(60.0 / step_s) * gauss(rng))


@functools.lru_cache(maxsize=4096)
def _knot(seed: int, stream: int, index: int) -> float:
    rng = random.Random(f"esatui-sim/{seed}/{stream}/{index}")
    return max(-2.5, min(2.5, rng.gauss(0.0, 1.0)))


def drift(seed: int, stream: int, time_s: float, knot_s: float) -> float:
    """A smooth wander at absolute time ``time_s``: independent standard normal values
    every ``knot_s`` seconds (clamped to ±2.5), joined by smoothstep curves."""
    x = time_s / knot_s
    i = math.floor(x)
    u = x - i
    u = u * u * (3.0 - 2.0 * u)
    return _knot(seed, stream, i) * (1.0 - u) + _knot(seed, stream, i + 1) * u


def draw(
    parts: Sequence[tuple[float, Sequence[float], Spread]],
    rng: random.Random,
    step_s: float,
    position: float,
) -> list[float]:
    """One step's rates around the windows' interpolated mean rates; never negative.

    ``parts`` are windows (weight, mean rates, spread) with weights summing to 1: a level
    between two windows takes ``1 - a`` of one and ``a`` of the other. A step short
    against its windows is an actual stretch of one of them (:func:`stretch`; which one:
    at random by weight; where: ``position``, 0 to 1); a longer one, which averages more
    operations than a window holds, is the mean plus a Gaussian deviation with the
    windows' batch covariance (:func:`gaussian`)."""
    chosen = parts[1] if len(parts) > 1 and rng.random() < parts[1][0] else parts[0]
    mean = _interpolated(parts)
    rates = stretch(chosen[2], step_s, position)
    if rates is None:
        return gaussian(parts, mean, rng, step_s)
    # scaled, counter by counter, from the chosen window's level to the step's
    return [r * m / w if w > 0.0 else 0.0 for r, m, w in zip(rates, mean, chosen[1], strict=True)]


def _interpolated(parts: Sequence[tuple[float, Sequence[float], Spread]]) -> list[float]:
    if len(parts) == 1:
        return list(parts[0][1])
    (a, x), (b, y) = parts[0][:2], parts[1][:2]
    return [a * u + b * v for u, v in zip(x, y, strict=True)]


def stretch(spread: Spread, step_s: float, position: float) -> list[float] | None:
    """The rates of an actual stretch of the window as long as the step (to the nearest
    mark), starting at ``position`` (0 to 1) of the possible starts; None when the step
    is longer than :data:`STRETCH_SHARE` of the window."""
    marks = spread.mark_count
    if marks < 2 or spread.mark_s <= 0.0:
        return None
    k = max(1, round(step_s / spread.mark_s))
    if k > STRETCH_SHARE * (marks - 1):
        return None
    starts = marks - k
    return spread.stretch(min(int(position * starts), starts - 1), k)


def gaussian(
    parts: Sequence[tuple[float, Sequence[float], Spread]],
    mean: Sequence[float],
    rng: random.Random,
    step_s: float,
) -> list[float]:
    """``mean`` plus a deviation: from each window :data:`PICKS` distinct batches combined
    with independent normal weights, ``sqrt(weight)`` each, so the deviation has the
    covariance of the windows' batch rates times ``batch_s / step_s`` (interpolated like
    the means). It keeps what holds in every batch; negative rates are clipped to 0."""
    vectors: list[Sequence[float]] = [mean]
    coefs: list[float] = [1.0]
    for weight, _, spread in parts[:2]:
        n = len(spread.rows)
        if weight <= 0.0 or n < 2:
            continue
        picks = min(PICKS, n)
        scale = math.sqrt(weight * spread.batch_s / step_s * n / (n - 1) / picks)
        for b in rng.sample(range(n), picks):
            vectors.append(spread.rows[b])
            coefs.append(gauss(rng) * scale)
    # One pass over the vector with a fixed number of terms (this runs every step).
    width = 4 if len(vectors) <= 4 else 8
    zero = (0.0,) * len(mean)
    vectors += [zero] * (width - len(vectors))
    coefs += [0.0] * (width - len(coefs))
    if width == 4:
        c0, c1, c2, c3 = coefs
        return [
            max(c0 * a + c1 * b + c2 * c + c3 * d, 0.0) for a, b, c, d in zip(*vectors, strict=True)
        ]
    c0, c1, c2, c3, c4, c5, c6, c7 = coefs
    return [
        max(c0 * a + c1 * b + c2 * c + c3 * d + c4 * e + c5 * f + c6 * g + c7 * h, 0.0)
        for a, b, c, d, e, f, g, h in zip(*vectors, strict=True)
    ]
