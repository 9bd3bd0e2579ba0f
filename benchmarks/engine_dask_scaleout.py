"""Monte Carlo scale-out: the same prediction on a local Dask cluster of 1 and 2 workers.

Predicts the Jacobi example (``examples/jacobi/jacobi.c``) with ``--runs``
Monte Carlo runs on a fresh local Dask cluster of each worker count (one
thread per worker process) and prints the wall time, the speed-up over one
worker and whether the predictions agree (they must: every run draws from
its own seeded stream whatever executes it).  ``--exact`` simulates every
iteration (the default extrapolates the steady loop, see docs/engine.md).

    PYTHONPATH=src python benchmarks/engine_dask_scaleout.py --ranks 64 --runs 100
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pevpm.machine.presets import parse_machine
from pevpm.model.loader import load_model
from pevpm.vm.executors import open_executor
from pevpm.vm.montecarlo import predict

MODEL = Path(__file__).resolve().parents[1] / "examples" / "jacobi" / "jacobi.c"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--machine", default="default")
    parser.add_argument("--workers", default="1,2", help="worker counts to compare (1,2)")
    parser.add_argument("--exact", action="store_true", help="simulate every iteration")
    args = parser.parse_args(argv)
    params = {"iterations": args.iterations}
    model = load_model(str(MODEL), params)
    machine = parse_machine(args.machine)
    print(f"Jacobi {args.ranks} ranks, {args.iterations} iterations, {args.runs} runs, "
          f"machine {args.machine}{', exact' if args.exact else ''}; local Dask clusters")
    print(f"{'workers':>7} {'wall s':>8} {'speed-up':>8} {'mean s':>10}  extrapolated")
    base, first = None, None
    for workers in [int(w) for w in args.workers.split(",")]:
        with open_executor("dask", workers) as pool:
            start = time.perf_counter()
            p = predict(model, args.ranks, machine, runs=args.runs, seed=1, params=params,
                        executor=pool, workers=workers, exact=args.exact)
            wall = time.perf_counter() - start
        base = base or wall
        first = first if first is not None else p.makespans.tolist()
        same = "same runs" if p.makespans.tolist() == first else "RUNS DIFFER"
        extrapolated = bool(p.extrapolation and p.extrapolation["extrapolated"])
        print(f"{workers:>7} {wall:>8.2f} {base / wall:>8.2f} {p.mean:>10.6f}  "
              f"{extrapolated} ({same})", flush=True)
    print("wall: predict() on an open cluster (cluster start-up excluded); speed-up: "
          "1-worker wall / this wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
