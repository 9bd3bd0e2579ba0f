"""Time the CLU-AIO model at p = 1024 processors, d = 64 disks (QCRD parameters, c = 1).

The network has 64 classes of 16 jobs: exact multiclass MVA would visit
17**64 ~ 5e78 population vectors, so pevpm solves it exactly through the
symmetry of its classes (normalising constants by convolution, see
``pevpm.analytic.spmd.symmetric_cluster_times``). For comparison the same
network goes through the generic solver, which switches to the approximate
Schweitzer/Bard MVA beyond 20 000 population vectors; the script prints
both times and the approximation's error.

Run: PYTHONPATH=src python benchmarks/analytic_clu_aio.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

from pevpm.analytic import QCRD_TABLE4, clu_aio_network, solve_closed_network, speedup
from pevpm.analytic.mva import MAX_EXACT_VECTORS


def median_time(call, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("-p", type=int, default=1024)
    parser.add_argument("-d", type=int, default=64)
    args = parser.parse_args()
    p, d = args.p, args.d
    jobs = p // QCRD_TABLE4.c // d
    print(f"CLU-AIO p = {p}, d = {d}: {d} classes x {jobs} jobs, "
          f"{float(jobs + 1) ** d:.3g} population vectors (exact-MVA bound {MAX_EXACT_VECTORS})")

    seconds, s_exact = median_time(lambda: float(speedup("clu-aio", QCRD_TABLE4, p, d)),
                                   args.repeats)
    print(f"exact (class symmetry):  s = {s_exact:.9f}   median {seconds * 1e3:8.2f} ms "
          f"over {args.repeats} runs")

    network = clu_aio_network(QCRD_TABLE4, p, d)
    seconds, result = median_time(lambda: solve_closed_network(*network), args.repeats)
    s_approx = QCRD_TABLE4.reference_time / float(result.cycle_time[0])
    print(f"generic solver ({result.method}): s = {s_approx:.9f}   median {seconds * 1e3:8.2f} ms"
          f"   relative error {abs(s_approx / s_exact - 1):.2%}")


if __name__ == "__main__":
    main()
