"""How steady is a node's CPU speed from one minute to the next?

The node validation predicts the Jacobi from calibrations taken minutes
before and after its timed runs; on a shared virtual machine the same
stencil sweep can take a quarter longer in one minute than in the next,
and then no model of the program is within 10%.  This probe times the
Jacobi example's own stencil sweep (the 256 x 256 float32 grid of the
validation runs) in short batches for ``--seconds``, and every
``--program-every`` seconds one one-rank run of the real program
(``program_iteration_time``, the calibration the model uses; its
iterations cycle through ``--program-iterations``, since the calibration
runs 5,000 iterations and the timed runs 10,000), and prints each reading
with its time, then the spread of each kind.

    PYTHONPATH=src python benchmarks/node_cpu_drift.py --seconds 20

Needs mpi4py importable (the example imports it), as on the node after
``benchmarks/node_validation.sh``'s set-up.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from pevpm.validate.calibration import load_example, program_iteration_time  # noqa: E402


def sweep_batches(seconds: float, batch: float, size: int, program_every: float,
                  program_iterations: list[int]):
    """Yields ``(elapsed, kind, microseconds per sweep or iteration)`` readings."""
    jacobi = load_example("jacobi")
    grid = np.random.default_rng(0).random((size + 2, size), dtype=np.float32)
    out, work = grid.copy(), np.empty((size, size - 2), dtype=np.float32)
    sweep = functools.partial(jacobi.stencil, grid, out, 1, size + 1, work)
    lengths = itertools.cycle(program_iterations)
    start = next_program = time.perf_counter()
    while (now := time.perf_counter()) - start < seconds:
        if now >= next_program:
            iterations = next(lengths)
            result = program_iteration_time("jacobi", ["--size", str(size)],
                                            iterations, repeats=1)
            yield time.perf_counter() - start, f"program-{iterations}", result["median"] * 1e6
            next_program = time.perf_counter() + program_every
        calls, began = 0, time.perf_counter()
        while time.perf_counter() - began < batch:
            sweep()
            calls += 1
        yield time.perf_counter() - start, "sweep", (time.perf_counter() - began) / calls * 1e6


def spread(values: list[float]) -> str:
    """``median (min-max, max/min)`` of a list of microsecond readings."""
    low, high = min(values), max(values)
    return (f"median {statistics.median(values):.1f} us ({low:.1f}-{high:.1f}, "
            f"max/min x{high / low:.2f}, n={len(values)})")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="how long to probe (20)")
    parser.add_argument("--batch", type=float, default=0.25, help="seconds per sweep batch (0.25)")
    parser.add_argument("--size", type=int, default=256, help="grid rows and columns (256)")
    parser.add_argument("--program-every", type=float, default=4.0,
                        help="seconds between one-rank runs of the real program (4)")
    parser.add_argument("--program-iterations", default="5000,10000",
                        help="iterations of the real-program runs, cycled (5000,10000)")
    args = parser.parse_args(argv)
    try:
        lengths = [int(n) for n in args.program_iterations.split(",")]
    except ValueError:
        parser.error(f"--program-iterations: comma-separated counts, got {args.program_iterations!r}")
    if min(args.seconds, args.batch, args.program_every, *lengths) <= 0 or args.size < 3:
        parser.error("seconds, batch, program-every and iterations must be > 0, size >= 3")
    print(f"# cores {len(os.sched_getaffinity(0))}, load {os.getloadavg()[0]:.2f}, "
          f"grid {args.size}, batches of {args.batch} s")
    readings: dict[str, list[float]] = {}
    for elapsed, kind, micros in sweep_batches(args.seconds, args.batch, args.size,
                                               args.program_every, lengths):
        readings.setdefault(kind, []).append(micros)
        print(f"{elapsed:7.2f} s  {kind:7s} {micros:8.1f} us", flush=True)
    for kind, values in readings.items():
        print(f"# {kind}: {spread(values)}")
    print(f"# load at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
