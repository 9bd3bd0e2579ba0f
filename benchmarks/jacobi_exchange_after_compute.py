"""How long the Jacobi example's halo exchange takes alone, after a spin, after its stencil.

Under ``mpiexec -n 2``: loops of ``--iterations`` iterations of the example's
own ``exchange_halos`` (1 KiB rows, blocking Send/Recv), alone, each after a
60 us busy wait, and each after the real stencil sweep, interleaved
``--rounds`` times; prints rank 0's mean exchange time per iteration for each,
and each rank's mean and standard deviation of one stencil sweep.
The difference is what an MPIBench profile measured back to back does not see.

    PYTHONPATH=src mpiexec -n 2 python benchmarks/jacobi_exchange_after_compute.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
from mpi4py import MPI

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "jacobi"))
import jacobi  # the example program, imported for its kernels

COMM = MPI.COMM_WORLD
SIZE = 256


class Strip:
    """This rank's rows of the example's grid, and a loop over exchange + something."""

    def __init__(self):
        first, count = jacobi.strip_rows(SIZE, COMM.size, COMM.rank)
        self.grid = jacobi.local_strip(SIZE, 1, first, count)
        self.new = self.grid.copy()
        self.lo, self.hi = jacobi.updated_rows(first, count, SIZE)
        self.work = np.empty((self.hi - self.lo, SIZE - 2), dtype=np.float32)
        self.sweeps: list[float] = []

    def stencil(self) -> None:
        began = MPI.Wtime()
        jacobi.stencil(self.grid, self.new, self.lo, self.hi, self.work)
        self.grid, self.new = self.new, self.grid
        self.sweeps.append(MPI.Wtime() - began)

    def exchange_time(self, iterations: int, between) -> float:
        """Mean seconds per iteration spent in the halo exchange."""
        spent = 0.0
        COMM.Barrier()
        for _ in range(iterations):
            began = MPI.Wtime()
            jacobi.exchange_halos(COMM, self.grid)
            spent += MPI.Wtime() - began
            between()
        return spent / iterations


def spin(seconds: float) -> None:
    until = MPI.Wtime() + seconds
    while MPI.Wtime() < until:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if COMM.size != 2:
        raise SystemExit("run under mpiexec -n 2")
    strip = Strip()
    variants = {"alone": lambda: None, "after 60 us spin": lambda: spin(60e-6),
                "after the stencil": strip.stencil}
    times = {name: [] for name in variants}
    for _ in range(args.rounds):
        for name, between in variants.items():
            times[name].append(strip.exchange_time(args.iterations, between))
    sweeps = COMM.gather((np.mean(strip.sweeps), np.std(strip.sweeps)), root=0)
    if COMM.rank == 0:
        print("halo exchange per iteration (median over rounds): " + ", ".join(
            f"{name} {statistics.median(values) * 1e6:.1f} us" for name, values in times.items()))
        print("one stencil sweep: " + ", ".join(
            f"rank {rank} {mean * 1e6:.1f} us (sd {sd * 1e6:.1f})"
            for rank, (mean, sd) in enumerate(sweeps)))


if __name__ == "__main__":
    main()
