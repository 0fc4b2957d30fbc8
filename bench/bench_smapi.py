"""One full SMAPI sample (system + 200 guests) against the loopback test server.

Measures the client side only: wall time of ``SmapiSource.sample()`` and the CPU time of
the calling thread (``getrusage(RUSAGE_THREAD)``), so the server's threads, which run in
this process, are not counted. Reports medians and spreads over several runs.
Run: ``python -m bench smapi`` or ``python -m bench.bench_smapi``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from bench.core import Options, Result, thread_cpu_s
from bench.report import text_report
from esatui.collectors.base import SourceContext
from esatui.collectors.smapi.client import SmapiClient
from esatui.collectors.smapi.credentials import Secret
from esatui.collectors.smapi.source import SmapiSource
from esatui.collectors.smapi.transport import TcpTransport
from esatui.sim.interfaces.smapi_server import SimCpu, SimLpar
from tests.fakes.smapi_server import SimGuest, SmapiTestServer

NAME = "smapi"
TITLE = "One full SMAPI sample (system + 200 guests) against the loopback test server"
GUESTS = 200
_PASSWORD = b"bench-pw"


_WARNINGS: list[str] = []  # what the sources said (nothing, or the figures mean little)


def _measure(
    make_source: Callable[[], SmapiSource], runs: int
) -> tuple[list[float], list[float], int, int]:
    walls: list[float] = []
    cpus: list[float] = []
    readings = reads = 0
    for _ in range(runs):
        source = make_source()
        wall0, cpu0 = time.perf_counter(), thread_cpu_s()
        sample = source.sample()
        walls.append(time.perf_counter() - wall0)
        cpus.append(thread_cpu_s() - cpu0)
        readings, reads = len(sample.readings), sample.reads
        assert not _WARNINGS, _WARNINGS
    return walls, cpus, readings, reads


def run(opts: Options) -> Result:
    runs = opts.runs(25, 5)
    result = Result(NAME, TITLE)
    guests = [
        SimGuest(f"LNX{i:05d}", step_cpu_us=1000, step_elapsed_us=1_000_000) for i in range(GUESTS)
    ]
    lpars = [
        SimLpar("LP1", 1, [SimCpu("CP")] * 2 + [SimCpu("IFL")] * 8),
        SimLpar("LP2", 2, [SimCpu("IFL")] * 8),
    ]
    with SmapiTestServer(userid="BENCH", password=_PASSWORD, guests=guests, lpars=lpars) as srv:
        transport = TcpTransport("127.0.0.1", srv.port)

        def fresh() -> SmapiSource:
            client = SmapiClient(transport, "BENCH", Secret(_PASSWORD))
            return SmapiSource(client, target="BENCH", ctx=SourceContext(warn=_WARNINGS.append))

        steady_source = fresh()
        steady_source.sample()  # system information read: later samples skip it
        cases: list[tuple[str, Callable[[], SmapiSource]]] = [
            ("first sample", fresh),
            ("steady sample", lambda: steady_source),
        ]
        for label, factory in cases:
            walls, cpus, readings, reads = _measure(factory, runs)
            result.add(
                f"{label}: wall",
                [w * 1000 for w in walls],
                "ms",
                f"{reads} SMAPI calls, {readings} readings",
            )
            result.add(f"{label}: client CPU", [c * 1000 for c in cpus], "ms CPU")
    result.notes.append(
        f"{GUESTS} guests and 18 logical CPUs in 2 LPARs; the server "
        "(tests/fakes/smapi_server.py) runs in threads of this process on loopback, so the "
        "wall time includes its work "
        "and the machine's scheduling; the client CPU is the calling thread's alone."
    )
    return result


def main() -> None:
    print("\n".join(text_report(run(Options()))))


if __name__ == "__main__":
    main()
