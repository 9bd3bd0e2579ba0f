"""Where one rank's CG iteration goes: each segment timed inside the real loop,
beside the tutorial calibration's figure for the same segment.

The tutorial's model (examples/tutorial/cg.py) has three serial segments
per iteration, ``matvec``, ``update`` and ``direction`` (``p = r + beta p``,
which allocates two temporary arrays), calibrated by
``examples/tutorial/calibrate.py`` as the fastest of many short batches of
the three kernels run in turn.  (Until the 16-core node's runs showed it,
the model had no ``direction`` segment, and each kernel was timed on its
own, 16-32% faster than inside the loop.)  This script
runs the loop of one rank (no MPI: an allreduce on one rank returns its
argument) and prints, per iteration, each segment's mean time inside the
loop, the calibration's figure, and the whole iteration.

Run:  OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/cg_segment_costs.py
      [--nx 512 --ny 512 --iterations 1000]
Set MALLOC_MMAP_THRESHOLD_ (glibc) to a large value to see how much of the
direction update is the temporaries' fresh pages.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

TUTORIAL = Path(__file__).resolve().parents[1] / "examples" / "tutorial"
sys.path.insert(0, str(TUTORIAL))
import calibrate
import cg


def loop_segments(nx: int, ny: int, iterations: int) -> dict:
    """Mean seconds per iteration of each segment of one rank's CG loop, and in all."""
    x, r = np.zeros((ny, nx)), np.ones((ny, nx))
    p, ap = np.zeros((ny + 2, nx)), np.empty((ny, nx))
    p[1:-1] = r
    rr = float(np.vdot(r, r))
    spent = dict.fromkeys(("matvec", "update", "direction"), 0.0)
    clock = time.perf_counter
    start = clock()
    for _ in range(iterations):
        t0 = clock()
        alpha = rr / cg.matvec_and_dot(p, ap)
        t1 = clock()
        rr_new = cg.update_and_dot(x, r, p, ap, alpha)
        t2 = clock()
        cg.update_direction(p, r, rr_new / rr)
        rr = rr_new
        t3 = clock()
        spent["matvec"] += t1 - t0
        spent["update"] += t2 - t1
        spent["direction"] += t3 - t2
    total = clock() - start
    return {**{k: v / iterations for k, v in spent.items()}, "iteration": total / iterations}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nx", type=int, default=512)
    parser.add_argument("--ny", type=int, default=512)
    parser.add_argument("--iterations", type=int, default=1000)
    args = parser.parse_args()
    loop_segments(args.nx, args.ny, 20)                      # warm-up
    inside = loop_segments(args.nx, args.ny, args.iterations)
    fastest = calibrate.fastest_times({args.ny: calibrate.kernels(args.nx, args.ny)},
                                      rounds=21, batch=0.005)[args.ny]
    print(f"{args.nx} x {args.ny}, {args.iterations} iterations, one rank; "
          f"MALLOC_MMAP_THRESHOLD_={os.environ.get('MALLOC_MMAP_THRESHOLD_', 'unset')}")
    print(f"{'segment':10} {'in the loop (ms)':>17} {'calibration (ms)':>17}")
    for name in ("matvec", "update", "direction"):
        print(f"{name:10} {inside[name] * 1e3:17.3f} {fastest[name] * 1e3:17.3f}")
    print(f"{'iteration':10} {inside['iteration'] * 1e3:17.3f} "
          f"{sum(fastest.values()) * 1e3:17.3f}")


if __name__ == "__main__":
    main()
