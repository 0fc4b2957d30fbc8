"""How far a configuration lies from what the model was fitted to, and how sure it is there.

The model's constants were fitted to seed 002's Tables 1-3 (docs/MODEL.md, "Fitting and
leave-one-out"). :func:`assess` compares each parameter with the published runs: **inside**
(a published value, or between two: 1 to 10 threads), **near** (one step beyond, where the
same mechanisms apply and the error grows little), **outside** (no published run comes
close: the mechanisms extrapolate). The typical errors come from the leave-one-out fits
(``fit_summary.json``, written by ``python -m esatui.sim.fit``): leaving one run out for a
configuration inside, leaving a whole table out (ten threads predicted from one, SMT from
no SMT, ...) for one near; outside, only that error is known as a lower bound.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Literal

from esatui.sim.locks import HOLD_US, HOLD_US_430
from esatui.sim.params import SimParams, parse_lpar_cpus

Standing = Literal["inside", "near", "outside"]
_ORDER: dict[Standing, int] = {"inside": 0, "near": 1, "outside": 2}
PUBLISHED = "seed 002's published runs (Tables 1-3)"


@dataclass(frozen=True, slots=True)
class Assessment:
    standing: Standing
    reasons: tuple[str, ...] = field(default=())
    """For each parameter not inside: what it is and what was published."""


def _numeric(value: float, inside: tuple[float, float], near: tuple[float, float]) -> Standing:
    if inside[0] <= value <= inside[1]:
        return "inside"
    return "near" if near[0] <= value <= near[1] else "outside"


def _checks(p: SimParams) -> list[tuple[Standing, str]]:
    out: list[tuple[Standing, str]] = []

    def add(standing: Standing, text: str) -> None:
        if standing != "inside":
            out.append((standing, text))

    add(_numeric(p.guests, (10, 10), (5, 20)), f"guests {p.guests} (published 10)")
    if p.closed_loop:
        add(_numeric(p.threads, (1, 10), (1, 20)), f"threads {p.threads} (published 1 and 10)")
    else:
        add("outside", f"rate {p.rate:g}/s, an open workload (published: closed loops)")
    op_standing: Standing = "inside" if p.op == "rsa_sign_verify" else "near"
    add(op_standing, f"op {p.op} (published rsa_sign_verify)")
    key: Standing = {1024: "inside", 2048: "near"}.get(p.key_bits, "outside")  # type: ignore[assignment]
    add(key, f"key_bits {p.key_bits} (published 1024)")
    add(_numeric(p.cards, (2, 2), (1, 4)), f"cards {p.cards} (published 2)")
    card: Standing = (
        "inside"
        if p.card_type == "CEX7A"
        else "near"
        if p.card_type in ("CEX6A", "CEX8A")
        else "outside"
    )
    add(card, f"card_type {p.card_type} (published CEX7A)")
    if p.poll_timeout_us == "irq":
        add("outside", "poll_timeout_us irq (published: polling guests)")
    else:
        add(
            _numeric(float(p.poll_timeout_us), (1500, 1500), (500, 4500)),
            f"poll_timeout_us {p.poll_timeout_us:g} (published 1500)",
        )
    counts = parse_lpar_cpus(p.lpar_cpus)
    lpar: Standing = (
        "inside"
        if counts == {"IFL": 8}
        else "near"
        if set(counts) == {"IFL"} and counts["IFL"] >= 4
        else "outside"
    )
    add(lpar, f"lpar_cpus {p.lpar_cpus} (published 8IFL)")
    add(_numeric(p.cpu_load, (0, 0), (0, 0.3)), f"cpu_load {p.cpu_load:g} (published 0)")
    add(_numeric(p.vcpus, (4, 4), (2, 8)), f"vcpus {p.vcpus} (assumed 4; not published)")
    add(_numeric(p.domains, (1, 1), (1, 4)), f"domains {p.domains} (published 1)")
    if p.foreign_rate > 0:
        add("near", f"foreign_rate {p.foreign_rate:g}/s (published: the pool's cards alone)")
    if p.cp_speed < 1 and "CP" in counts:
        add("outside", f"cp_speed {p.cp_speed:g} (published: full-speed IFLs)")
    if not p.dedicated:
        add("near", "shared processors (published: dedicated)")
    if p.profile != "flat":
        add("near", f"profile {p.profile} (published: steady runs)")
    if p.vse_guests:
        add("near", f"{p.vse_guests} z/VSE guests (published: Linux guests only)")
    hold = _numeric(p.lock_hold_us, (HOLD_US, HOLD_US), (0.0, HOLD_US_430))
    held = "; a busier lock spins more but never slows the operations" if hold == "outside" else ""
    add(
        hold,
        f"lock_hold_us {p.lock_hold_us:g} (seed 001: {HOLD_US:g} since z/VM 4.4.0, "
        f"{HOLD_US_430:g} before{held})",
    )
    return out


def assess(params: SimParams) -> Assessment:
    checks = _checks(params)
    if not checks:
        return Assessment("inside")
    worst = max((s for s, _ in checks), key=lambda s: _ORDER[s])
    ordered = sorted(checks, key=lambda c: -_ORDER[c[0]])
    return Assessment(worst, tuple(text for _, text in ordered))


@cache
def summary() -> dict[str, dict[str, float]]:
    """The leave-one-out errors (fractions): ``run`` and ``table`` -> ``median``, ``p90``,
    ``worst``, from ``fit_summary.json``."""
    text = resources.files("esatui.sim").joinpath("fit_summary.json").read_text()
    data: dict[str, dict[str, float]] = json.loads(text)
    return data


def describe(params: SimParams) -> str:
    """One line for ``esatui sim``: the standing and the typical error there."""
    a = assess(params)
    s = summary()
    run, table = s["run"], s["table"]
    if a.standing == "inside":
        return (
            f"Calibration: inside {PUBLISHED}; leave-one-out error there: median "
            f"{run['median']:.0%}, 90% within {run['p90']:.0%}, worst {run['worst']:.0%} "
            "(docs/MODEL.md section 6)."
        )
    more = len(a.reasons) - 3
    why = "; ".join(a.reasons[:3]) + (f"; {more} more" if more > 0 else "")
    if a.standing == "near":
        return (
            f"Calibration: near {PUBLISHED}: {why}. Leaving a whole table out errs by median "
            f"{table['median']:.0%}, 90% within {table['p90']:.0%}, worst {table['worst']:.0%} "
            "(docs/MODEL.md section 6)."
        )
    return (
        f"Calibration: outside {PUBLISHED}: {why}. The mechanisms extrapolate; no published "
        f"run measures the error there, at least the {table['worst']:.0%} worst of leaving a "
        "whole table out (docs/MODEL.md section 6)."
    )
