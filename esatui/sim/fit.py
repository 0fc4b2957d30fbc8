"""Fitting the mechanism constants to seed 002 Tables 1-3, and leaving each run out.

Two kinds of constants are fitted (docs/MODEL.md, "Fitting and leave-one-out"):

* **Timing constants** (:data:`TIMING_GRID`): latencies that shape the service times and
  the throughput through the event-level simulation. Each is searched on a small grid; every
  point of the grid is simulated once for every published run (:func:`grid`), so a fit on
  any subset of runs is a choice among simulated points, never an extrapolation.
* **CPU costs** (:data:`GUEST_COSTS`, :data:`CP_COSTS`): µs of guest or CP time per event
  the model counts (an operation, a DQAP, a timer tick, a wake-up, a loop pass, ...). Busy
  time is linear in them, so for each grid point they are solved by least squares on the
  runs' per-operation event counts, relative to the published busy figures, with a weak
  pull towards assumed round values so that a constant no run pins down stays plausible.

:func:`leave_one_out` fits on eight runs and predicts the ninth, for each run, through the
whole model (:func:`esatui.sim.calibration.measure`). ``python -m esatui.sim.fit`` runs the
grid (about 10 minutes on two cores) and prints the fitted constants and the tables of
docs/MODEL.md; ``--cached FILE`` reuses a grid written by ``--save FILE``.

This module reads the published numbers (it is a fitting tool, like the calibration report);
the model itself never does.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from esatui.sim.calibration import measure
from esatui.sim.lpar import logical_processors
from esatui.sim.mechanism import DEFAULT, Mechanism
from esatui.sim.published import METRICS, TABLES
from esatui.sim.scenarios import scenario
from esatui.sim.window import WindowResult, simulate_steady
from esatui.sim.world import Load

TIMING_GRID: dict[str, tuple[float, ...]] = {
    "vcpu_wake_us": (40.0, 49.0, 58.0),
    "cp_task_wake_us": (28.0, 34.0, 40.0),
    "cp_loop_wake_us": (70.0, 80.0, 90.0),
    "cp_nq_poll_min_us": (114.0, 123.0, 132.0, 141.0),
}
"""The timing constants searched, with the values tried (the middle ones are the documented
defaults before the fit)."""

GUEST_COSTS: tuple[str, ...] = ("guest_op_us", "guest_dqap_us", "guest_tick_us", "guest_wake_us")
"""Guest CPU per operation, per DQAP, per poll tasklet, per wake-up out of the wait state."""
CP_COSTS: tuple[str, ...] = ("cp_vap_us", "cp_vwake_us", "cp_vtimer_us", "cp_pass_us", "cp_int_us")
"""CP CPU per simulated guest AP instruction (NQAP or DQAP), per dispatch of a waiting
virtual CPU, per interruption presented, per polling-loop pass, per adapter interrupt."""

TIME_METRICS: tuple[str, ...] = ("NSERV", "RSERV", "DSERV", "VSERV", "ETR")
BUSY_METRICS: tuple[str, ...] = ("guest", "CP", "total")
FIT_SEED = 0
PRIOR_COSTS: dict[str, float] = {
    "guest_op_us": 3.0,
    "guest_dqap_us": 0.5,
    "guest_tick_us": 2.5,
    "guest_wake_us": 1.5,
    "cp_vap_us": 0.5,
    "cp_vwake_us": 3.0,
    "cp_vtimer_us": 1.0,
    "cp_pass_us": 1.5,
    "cp_int_us": 1.5,
}
"""Assumed round path lengths (µs on an IFL), never fitted: what a cost tends to when no
run pins it down, so that a fit without some runs does not borrow from them."""
PRIOR_WEIGHT = 0.05
"""Pull of each cost towards :data:`PRIOR_COSTS`, relative to one published figure."""


@dataclass(frozen=True, slots=True)
class RunPoint:
    """One run simulated at one grid point: its service times and its event counts."""

    timing: dict[str, float]
    guest_counts: tuple[float, ...]
    """Per operation, in :data:`GUEST_COSTS` order."""
    cp_counts: tuple[float, ...]
    """Per operation, in :data:`CP_COSTS` order, times SMT's path-length factor."""
    cp_fixed_us: float
    """CP µs per operation the costs do not cover: real NQ/DQ, lock spins, idle time."""


Setting = tuple[float, ...]
"""Values of :data:`TIMING_GRID`'s constants, in its order."""


def settings() -> list[Setting]:
    return list(itertools.product(*TIMING_GRID.values()))


def mechanism_for(setting: Setting, costs: Mapping[str, float] | None = None) -> Mechanism:
    """DEFAULT with ``setting``'s timing constants and ``costs`` (``cp_vap_us`` sets the
    three CP costs of simulating a guest NQAP or DQAP)."""
    changes: dict[str, float] = dict(zip(TIMING_GRID, setting, strict=True))
    for name, value in (costs or {}).items():
        if name == "cp_vap_us":
            changes.update(cp_vnq_us=value, cp_vdq_us=value, cp_vdq_empty_us=value)
        else:
            changes[name] = value
    values: dict[str, object] = {**dataclasses.asdict(DEFAULT), **changes}
    return Mechanism(**values)  # type: ignore[arg-type]


def documented_costs(mech: Mechanism = DEFAULT) -> dict[str, float]:
    costs = {name: float(getattr(mech, name)) for name in GUEST_COSTS}
    costs["cp_vap_us"] = (mech.cp_vnq_us + mech.cp_vdq_us + mech.cp_vdq_empty_us) / 3.0
    costs.update({name: float(getattr(mech, name)) for name in CP_COSTS if name != "cp_vap_us"})
    return costs


def run_point(name: str, mech: Mechanism, *, seed: int = FIT_SEED) -> RunPoint:
    """Simulate run ``name``'s steady window under ``mech`` and reduce it to a point."""
    params = scenario(name)
    w = simulate_steady(params, mech, Load(), seed)
    return _point(w, mech, len(logical_processors(params)))


def _point(w: WindowResult, mech: Mechanism, processors: int) -> RunPoint:
    ops = w.vnq
    vnq = ops
    timing = {
        "NSERV": w.nserv / vnq,
        "RSERV": w.rserv / vnq,
        "DSERV": w.dserv / vnq,
        "VSERV": w.vserv / vnq,
        "ETR": ops,
    }
    wakes = sum(g.vcpu_wakes for g in w.guests)
    tasklets = sum(g.tasklets for g in w.guests)
    guest = (1.0, w.vdq / ops, tasklets / ops, wakes / ops)
    f = w.cp_factor
    vap = w.vnq + w.vdq
    passes = w.nq_passes + w.dq_passes
    cp = tuple(f * x / ops for x in (vap, wakes, tasklets, passes, w.cp_interrupts))
    real = f * (
        w.rnq * mech.cp_rnq_us + w.rdone * mech.cp_rdq_us + w.rdq_empty * mech.cp_rdq_empty_us
    )
    idle = mech.idle_system_fraction * processors * 1e6
    return RunPoint(timing, guest, cp, (real + w.spin_us + idle) / ops)


def _grid_task(args: tuple[str, Setting]) -> tuple[str, Setting, RunPoint]:
    name, setting = args
    return name, setting, run_point(name, mechanism_for(setting))


def grid(
    runs: Sequence[str] = tuple(TABLES),
    *,
    workers: int = 2,
    known: Mapping[Setting, Mapping[str, RunPoint]] | None = None,
) -> dict[Setting, dict[str, RunPoint]]:
    """Every run at every point of the timing grid (points in ``known`` are reused)."""
    known = known or {}
    out: dict[Setting, dict[str, RunPoint]] = {s: dict(known.get(s, {})) for s in settings()}
    tasks = [(name, s) for s in settings() for name in runs if name not in out[s]]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for name, setting, point in pool.map(_grid_task, tasks, chunksize=4):
            out[setting][name] = point
    return out


# --- least squares for the costs -------------------------------------------------------


def _solve(rows: list[list[float]], rhs: list[float]) -> list[float]:
    """Least squares by the normal equations (small, well-conditioned systems)."""
    n = len(rows[0])
    a = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
    b = [sum(r[i] * y for r, y in zip(rows, rhs, strict=True)) for i in range(n)]
    for col in range(n):  # Gauss-Jordan with partial pivoting
        pivot = max(range(col, n), key=lambda k: abs(a[k][col]))
        a[col], a[pivot] = a[pivot], a[col]
        b[col], b[pivot] = b[pivot], b[col]
        d = a[col][col]
        if abs(d) < 1e-15:
            continue
        for k in range(n):
            if k != col:
                factor = a[k][col] / d
                a[k] = [x - factor * y for x, y in zip(a[k], a[col], strict=True)]
                b[k] -= factor * b[col]
    return [b[i] / a[i][i] if abs(a[i][i]) > 1e-15 else 0.0 for i in range(n)]


def fit_costs(
    points: Mapping[str, RunPoint], targets: Mapping[str, Mapping[str, float]]
) -> dict[str, float]:
    """Guest and CP costs minimising the relative error of guest and CP busy per 1000
    VNQs over ``points`` (run -> point; ``targets``: run -> published metrics), with a
    weak pull towards :data:`PRIOR_COSTS`; never negative."""
    guest = {r: (p.guest_counts, 0.0, targets[r]["guest"]) for r, p in points.items()}
    cp = {r: (p.cp_counts, p.cp_fixed_us, targets[r]["CP"]) for r, p in points.items()}
    return {**_least_squares(GUEST_COSTS, guest), **_least_squares(CP_COSTS, cp)}


def _least_squares(
    names: Sequence[str], runs: Mapping[str, tuple[tuple[float, ...], float, float]]
) -> dict[str, float]:
    """Costs ``names`` for runs of (counts per operation, fixed µs, busy per kVNQ), by
    relative error, non-negative (a cost that would go negative is held at zero)."""
    prior = {n: PRIOR_COSTS[n] for n in names}
    free = list(names)
    while True:
        rows: list[list[float]] = []
        rhs: list[float] = []
        for counts, fixed_us, busy in runs.values():
            target_us = busy * 10.0  # busy per kVNQ -> µs per operation
            fixed = fixed_us + sum(
                c * prior[n] for n, c in zip(names, counts, strict=True) if n not in free
            )
            rows.append([c / target_us for n, c in zip(names, counts, strict=True) if n in free])
            rhs.append((target_us - fixed) / target_us)
        for n in free:
            w = PRIOR_WEIGHT / prior[n]
            rows.append([w if m == n else 0.0 for m in free])
            rhs.append(w * prior[n])
        values = dict(zip(free, _solve(rows, rhs), strict=True))
        negative = [n for n, v in values.items() if v < 0]
        if not negative:
            return {n: values.get(n, prior[n]) for n in names}
        for n in negative:  # held at zero: active set
            free.remove(n)
            prior[n] = 0.0


def busy_of(point: RunPoint, costs: Mapping[str, float]) -> dict[str, float]:
    guest = sum(c * costs[n] for n, c in zip(GUEST_COSTS, point.guest_counts, strict=True))
    cp = point.cp_fixed_us + sum(
        c * costs[n] for n, c in zip(CP_COSTS, point.cp_counts, strict=True)
    )
    return {"guest": guest / 10.0, "CP": cp / 10.0, "total": (guest + cp) / 10.0}


def published(run: str) -> dict[str, float]:
    return dict(zip(METRICS, TABLES[run][1], strict=True))


BAR = 0.20
"""Relative errors beyond this (inside the calibration's 25% bar) are penalised on top."""
BAR_PENALTY = 10.0


def error(points: Mapping[str, RunPoint], costs: Mapping[str, float]) -> float:
    """Mean squared log error over the runs' service times, ETR and busy figures, plus a
    steep penalty on every figure further off than :data:`BAR`: the best fit on average
    among those that keep each figure near the published one."""
    total = 0.0
    n = 0
    for run, p in points.items():
        pub = published(run)
        values = {**p.timing, **busy_of(p, costs)}
        for m in (*TIME_METRICS, *BUSY_METRICS):
            ratio = max(values[m], 1e-9) / pub[m]
            excess = max(0.0, abs(ratio - 1.0) - BAR)
            total += math.log(ratio) ** 2 + BAR_PENALTY * excess**2
            n += 1
    return total / max(n, 1)


@dataclass(frozen=True, slots=True)
class Fit:
    setting: Setting
    costs: dict[str, float]
    error: float

    @property
    def mechanism(self) -> Mechanism:
        return mechanism_for(self.setting, self.costs)

    def constants(self) -> dict[str, float]:
        return {**dict(zip(TIMING_GRID, self.setting, strict=True)), **self.costs}


def fit(table: Mapping[Setting, Mapping[str, RunPoint]], runs: Iterable[str]) -> Fit:
    """The grid point and costs that fit ``runs`` best."""
    chosen = tuple(runs)
    targets = {r: published(r) for r in chosen}
    best: Fit | None = None
    for setting, by_run in table.items():
        points = {r: by_run[r] for r in chosen}
        costs = fit_costs(points, targets)
        e = error(points, costs)
        if best is None or e < best.error:
            best = Fit(setting, costs, e)
    assert best is not None
    return best


@dataclass(frozen=True, slots=True)
class Prediction:
    run: str
    fit: Fit
    values: dict[str, float]

    def error(self, metric: str) -> float:
        return self.values[metric] / published(self.run)[metric] - 1.0


def predict(run: str, f: Fit, *, seed: int = FIT_SEED) -> Prediction:
    """``run`` through the whole model with ``f``'s constants (one 60-s interval)."""
    sim = measure_with(run, f.mechanism, seed=seed)
    return Prediction(run, f, sim)


def measure_with(run: str, mech: Mechanism, *, seed: int = FIT_SEED) -> dict[str, float]:
    return measure(run, seed=seed, mechanism=mech).as_row()


def leave_one_out(table: Mapping[Setting, Mapping[str, RunPoint]]) -> list[Prediction]:
    """Each run predicted by the fit to the other eight."""
    runs = tuple(TABLES)
    return [predict(r, fit(table, [x for x in runs if x != r])) for r in runs]


def table_of(run: str) -> str:
    """``t1``, ``t2`` or ``t3``: the published table a run belongs to."""
    return run.split("-")[1]


def leave_table_out(table: Mapping[Setting, Mapping[str, RunPoint]]) -> list[Prediction]:
    """Each table's runs predicted by the fit to the other two tables: ten threads from
    one thread and SMT, one thread from ten, SMT from no SMT (a harder extrapolation)."""
    runs = tuple(TABLES)
    out: list[Prediction] = []
    for t in sorted({table_of(r) for r in runs}):
        f = fit(table, [r for r in runs if table_of(r) != t])
        out += [predict(r, f) for r in runs if table_of(r) == t]
    return out


def error_summary(predictions: Sequence[Prediction]) -> dict[str, float]:
    """Median, 90th percentile and worst absolute error over every published figure."""
    errors = sorted(abs(p.error(m)) for p in predictions for m in METRICS)
    n = len(errors)
    return {
        "median": round(errors[n // 2], 4),
        "p90": round(errors[min(n - 1, math.ceil(0.9 * n) - 1)], 4),
        "worst": round(errors[-1], 4),
    }


# --- reports ---------------------------------------------------------------------------

_FMT = {"ETR": "{:.0f}", "total": "{:.3f}", "guest": "{:.3f}", "CP": "{:.3f}"}


def markdown(predictions: Sequence[Prediction]) -> str:
    lines = [
        "| left out | " + " | ".join(METRICS) + " |",
        "|---|" + "---|" * len(METRICS),
    ]
    for p in predictions:
        pub = published(p.run)
        cells = []
        for m in METRICS:
            f = _FMT.get(m, "{:.1f}")
            cells.append(f"{f.format(pub[m])} / {f.format(p.values[m])} ({p.error(m) * 100:+.0f}%)")
        lines.append(f"| {TABLES[p.run][0]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def worst(predictions: Sequence[Prediction]) -> float:
    return max(abs(p.error(m)) for p in predictions for m in METRICS)


def _save(table: Mapping[Setting, Mapping[str, RunPoint]], path: Path) -> None:
    data = [
        {"setting": list(s), "runs": {r: dataclasses.asdict(p) for r, p in by_run.items()}}
        for s, by_run in table.items()
    ]
    path.write_text(json.dumps(data, indent=1) + "\n")


def load(path: Path) -> dict[Setting, dict[str, RunPoint]]:
    out: dict[Setting, dict[str, RunPoint]] = {}
    for item in json.loads(path.read_text()):
        out[tuple(item["setting"])] = {
            r: RunPoint(
                timing=p["timing"],
                guest_counts=tuple(p["guest_counts"]),
                cp_counts=tuple(p["cp_counts"]),
                cp_fixed_us=p["cp_fixed_us"],
            )
            for r, p in item["runs"].items()
        }
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m esatui.sim.fit", description=__doc__)
    ap.add_argument(
        "--cached", type=Path, help="a grid saved by --save: its points are not simulated again"
    )
    ap.add_argument("--save", type=Path, help="write the simulated grid here")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--summary", type=Path, help="write the errors esatui sim quotes (fit_summary.json)"
    )
    args = ap.parse_args(argv)
    known = load(args.cached) if args.cached else {}
    table = grid(workers=args.workers, known=known)
    if args.save:
        _save(table, args.save)
    full = fit(table, TABLES)
    print("All nine runs: constants", json.dumps(full.constants(), indent=1))
    print(f"training error (mean squared log): {full.error:.5f}\n")
    loo = leave_one_out(table)
    lto = leave_table_out(table)
    for title, predictions in (("Leave one run out", loo), ("Leave one table out", lto)):
        print(f"{title}:\n\n{markdown(predictions)}\n\nworst: {worst(predictions) * 100:.1f}%")
        for p in predictions:
            print(TABLES[p.run][0], json.dumps(p.fit.constants()))
        print()
    result = {"run": error_summary(loo), "table": error_summary(lto)}
    print("\nsummary:", json.dumps(result))
    if args.summary:
        args.summary.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
