"""Run the seed 002 scenarios and compare what an analyst computes with the published table.

Used by the calibration tests and to regenerate the tables in docs/MODEL.md
(``python -m esatui.sim.calibration``; ``--table4`` for the model's prediction of seed 002's
withheld Table 4, ``--whatif`` for section 7's poll-timeout table).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass

from esatui.sim.analysis import PollingMetrics, polling_metrics
from esatui.sim.mechanism import DEFAULT, Mechanism
from esatui.sim.model import SimulatedSystem
from esatui.sim.published import METRICS, TABLES, TOLERANCE
from esatui.sim.scenarios import identity, scenario

INTERVAL_S = 60.0


@dataclass(frozen=True, slots=True)
class Comparison:
    scenario: str
    run_id: str
    published: dict[str, float]
    simulated: dict[str, float]

    def error(self, metric: str) -> float:
        return self.simulated[metric] / self.published[metric] - 1.0

    @property
    def worst(self) -> float:
        return max(abs(self.error(m)) for m in METRICS)

    @property
    def within_tolerance(self) -> bool:
        return self.worst <= TOLERANCE


def measure(
    name: str,
    changes: Mapping[str, object] | None = None,
    *,
    seed: int = 0,
    interval_s: float = INTERVAL_S,
    mechanism: Mechanism = DEFAULT,
) -> PollingMetrics:
    """One monitor interval of scenario ``name`` (with ``changes``), after one to settle."""
    params = scenario(name).replace(**changes) if changes else scenario(name)
    system = SimulatedSystem(params, seed=seed, identity=identity(name), mechanism=mechanism)
    system.advance(interval_s)
    before = system.snapshot()
    system.advance(interval_s)
    return polling_metrics(before, system.snapshot())


def compare(name: str, *, seed: int = 0) -> Comparison:
    run_id, values = TABLES[name]
    sim = measure(name, seed=seed).as_row()
    return Comparison(name, run_id, dict(zip(METRICS, values, strict=True)), sim)


def markdown_table(comparisons: list[Comparison]) -> str:
    """Published against simulated, one row per run and metric group."""
    fmt = {"ETR": "{:.0f}", "total": "{:.3f}", "guest": "{:.3f}", "CP": "{:.3f}"}
    lines = [
        "| run | scenario | " + " | ".join(METRICS) + " |",
        "|---|---|" + "---|" * len(METRICS),
    ]
    for c in comparisons:
        cells = []
        for m in METRICS:
            f = fmt.get(m, "{:.1f}")
            pub, sim = f.format(c.published[m]), f.format(c.simulated[m])
            cells.append(f"{pub} / {sim} ({c.error(m) * 100:+.0f}%)")
        lines.append(f"| {c.run_id} | `{c.scenario}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


TABLE4_RUNS: tuple[tuple[str, str], ...] = (
    ("CB5N", "seed002-t3-baseline"),
    ("CP5N", "seed002-t3-polling"),
    ("CI5N", "seed002-t3-interrupts"),
)
"""Seed 002's Table 4: Table 3's runs with a 50 µs Linux poll time (values withheld)."""
MONITOR_INTERVAL_S = 30.0
"""IBM's monitor interval in seed 002 (200,000 unsuccessful DQs = 6,666/s x 30 s)."""


def table4_markdown(*, seed: int = 0) -> str:
    """The model's prediction of seed 002's withheld Table 4 (30-s intervals)."""
    head = [*METRICS, "unsuccessful DQ / interval"]
    lines = ["| run | " + " | ".join(head) + " |", "|---|" + "---|" * len(head)]
    fmt = {"ETR": "{:,.0f}", "total": "{:.3f}", "guest": "{:.3f}", "CP": "{:.3f}"}
    for run_id, name in TABLE4_RUNS:
        m = measure(name, {"poll_timeout_us": 50.0}, seed=seed, interval_s=MONITOR_INTERVAL_S)
        row = m.as_row()
        cells = [fmt.get(k, "{:.1f}").format(row[k]) for k in METRICS]
        cells.append(f"{m.unsuccessful_vdq:,}")
        lines.append(f"| {run_id} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


WHATIF: tuple[tuple[str, float | str], ...] = (
    ("seed002-t3-baseline", 1500.0),
    ("seed002-t3-baseline", 250.0),
    ("seed002-t3-baseline", 50.0),
    ("seed002-t3-polling", 1500.0),
    ("seed002-t3-polling", 50.0),
    ("seed002-t3-polling", "irq"),
    ("seed002-t3-interrupts", 1500.0),
    ("seed002-t3-interrupts", 50.0),
    ("seed002-t1-interrupts", 1500.0),
    ("seed002-t1-interrupts", 50.0),
)
"""docs/MODEL.md section 7: the poll timeout's what-if, 30-s intervals."""


def whatif_markdown(*, seed: int = 0) -> str:
    lines = [
        "| scenario | poll µs | ETR | VSERV µs | DSERV µs | unsuccessful DQ / interval "
        "| guest CPU % | guest busy/kVNQ | CP busy/kVNQ |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, poll in WHATIF:
        m = measure(name, {"poll_timeout_us": poll}, seed=seed, interval_s=MONITOR_INTERVAL_S)
        cpu = m.guest_cpu_us / 1e6 / m.interval_s * 100
        shown = poll if isinstance(poll, str) else f"{poll:g}"
        lines.append(
            f"| `{name}` | {shown} | {m.etr:,.0f} | {m.vserv_us:.0f} | {m.dserv_us:.0f} | "
            f"{m.unsuccessful_vdq:,} | {cpu:.1f} | {m.guest_busy_per_kvnq:.3f} | "
            f"{m.cp_busy_per_kvnq:.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "--table4" in args:
        print(table4_markdown())
        return 0
    if "--whatif" in args:
        print(whatif_markdown())
        return 0
    comparisons = [compare(name) for name in TABLES]
    print(markdown_table(comparisons))
    worst = max(c.worst for c in comparisons)
    print(f"\nworst deviation: {worst * 100:.1f}% (bar: {TOLERANCE * 100:.0f}%)")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
