"""Run the seed 002 scenarios and compare what an analyst computes with the published table.

Used by the calibration tests and to regenerate the table in docs/MODEL.md
(``python -m esatui.sim.calibration``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass

from esatui.sim.analysis import PollingMetrics, polling_metrics
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
) -> PollingMetrics:
    """One monitor interval of scenario ``name`` (with ``changes``), after one to settle."""
    params = scenario(name).replace(**changes) if changes else scenario(name)
    system = SimulatedSystem(params, seed=seed, identity=identity(name))
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


def main() -> int:
    comparisons = [compare(name) for name in TABLES]
    print(markdown_table(comparisons))
    worst = max(c.worst for c in comparisons)
    print(f"\nworst deviation: {worst * 100:.1f}% (bar: {TOLERANCE * 100:.0f}%)")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
