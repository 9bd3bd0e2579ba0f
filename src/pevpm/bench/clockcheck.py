"""Check the global clock on this machine: ``mpiexec -n N python -m pevpm.bench.clockcheck``.

Synchronises twice, ``--interval`` seconds apart, and prints one JSON object
(on rank 0) with every rank's estimated offset, drift and error bound.  With
``--skew-rank R --skew-offset 5ms --skew-drift 1e-4`` rank R's clock is made
wrong on purpose; the check then also reports, for probe times between the
two syncs, how far the reconstructed global time is from the true time.  On
one host every true offset is zero, so the estimated offsets themselves must
lie within the bound.

    mpiexec -n 4 python -m pevpm.bench.clockcheck --method hierarchical
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def main(argv: list[str] | None = None) -> int:
    from pevpm.bench.options import parse_duration

    parser = argparse.ArgumentParser(prog="python -m pevpm.bench.clockcheck")
    parser.add_argument("--method", default="pairwise", choices=("pairwise", "hierarchical"))
    parser.add_argument("--resend-limit", type=int, default=1000)
    parser.add_argument("--interval", default="0.3s", help="time between the two syncs")
    parser.add_argument("--probes", type=int, default=5, help="probe times between syncs")
    parser.add_argument("--skew-rank", type=int, default=-1)
    parser.add_argument("--skew-offset", default="0s")
    parser.add_argument("--skew-drift", type=float, default=0.0)
    args = parser.parse_args(argv)

    from pevpm.bench.clock import GlobalClock, LocalClock, SkewedClock, synchronise
    from pevpm.bench.mpi import MPI

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    skewed = rank == args.skew_rank
    offset_ns = round(parse_duration(args.skew_offset) * 1e9)
    local = SkewedClock(offset_ns, args.skew_drift) if skewed else LocalClock()
    clock = GlobalClock(local)
    began = time.perf_counter()
    clock.add(synchronise(comm, local, args.method, args.resend_limit))
    first_sync_s = time.perf_counter() - began
    probes = []
    pause = parse_duration(args.interval) / (args.probes + 1)
    for _ in range(args.probes):
        time.sleep(pause)
        probes.append(local.now())
    time.sleep(pause)
    clock.add(synchronise(comm, local, args.method, args.resend_limit))
    readings = np.array(probes, dtype=np.int64)
    true = (readings - offset_ns) / (1.0 + args.skew_drift) if skewed else readings
    probe_error = np.abs(clock.to_global(readings) - true)
    row = {
        "rank": rank,
        "offset_ns": [p.offset_ns for p in clock.points],
        "best_rtt_ns": [p.rtt_ns for p in clock.points],
        "error_bound_ns": clock.error_between(0, 1),
        "drift": clock.drift,
        "expected_drift": -args.skew_drift / (1.0 + args.skew_drift) if skewed else 0.0,
        "max_probe_error_ns": float(probe_error.max()),
        "interval_ns": clock.points[1].local_ns - clock.points[0].local_ns,
        "first_sync_s": first_sync_s,
    }
    rows = comm.gather(row, root=0)
    if rank == 0:
        print(json.dumps({"method": args.method, "ranks": comm.Get_size(),
                          "resend_limit": args.resend_limit, "rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
