"""One full SMAPI sample (system + 200 guests) against the loopback test server.

Measures the client side only: wall time of ``SmapiSource.sample()`` and the CPU time of
the calling thread (``getrusage(RUSAGE_THREAD)``), so the server's threads, which run in
this process, are not counted. Prints medians and maxima over several runs.
"""

from __future__ import annotations

import resource
import statistics
import time
from collections.abc import Callable

from esatui.collectors.smapi.client import SmapiClient
from esatui.collectors.smapi.credentials import Secret
from esatui.collectors.smapi.source import SmapiSource
from esatui.collectors.smapi.transport import TcpTransport
from esatui.fakesys.smapi_server import SimCpu, SimGuest, SimLpar, SmapiTestServer

GUESTS = 200
RUNS = 25
_PASSWORD = b"bench-pw"


def _thread_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_THREAD)
    return usage.ru_utime + usage.ru_stime


def _measure(
    make_source: Callable[[], SmapiSource], runs: int
) -> tuple[list[float], list[float], int, int]:
    walls: list[float] = []
    cpus: list[float] = []
    readings = reads = 0
    for _ in range(runs):
        source = make_source()
        wall0, cpu0 = time.perf_counter(), _thread_cpu_s()
        sample = source.sample()
        walls.append(time.perf_counter() - wall0)
        cpus.append(_thread_cpu_s() - cpu0)
        readings, reads = len(sample.readings), sample.reads
        assert not sample.warnings, sample.warnings
    return walls, cpus, readings, reads


def main() -> None:
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
            return SmapiSource(client, target="BENCH")

        steady_source = fresh()
        steady_source.sample()  # system information read: later samples skip it

        print(f"smapi: one full sample, {GUESTS} guests + 18 logical CPUs, loopback test server")
        cases: list[tuple[str, Callable[[], SmapiSource]]] = [
            ("first sample (4 calls)", fresh),
            ("steady sample (3 calls)", lambda: steady_source),
        ]
        for label, factory in cases:
            walls, cpus, readings, reads = _measure(factory, RUNS)
            wall, cpu = statistics.median(walls) * 1000, statistics.median(cpus) * 1000
            print(
                f"  {label}: {readings} readings, {reads} SMAPI calls; "
                f"wall median {wall:.2f} ms (max {max(walls) * 1000:.2f}); "
                f"client CPU median {cpu:.2f} ms (max {max(cpus) * 1000:.2f}) over {RUNS} runs"
            )


if __name__ == "__main__":
    main()
