"""Jacobi iteration on an N x N float32 grid, split into strips of rows.

Each rank owns a block of consecutive rows plus one ghost row above and
below. Every iteration it swaps edge rows with its neighbours (even ranks
send first, odd ranks receive first, as in the thesis's Figure 85) and then
applies the 4-point stencil to the rows it owns. The grid's outer rows and
columns are fixed boundary values.

    mpiexec -n 2 python examples/jacobi/jacobi.py --size 256 --iterations 10000 --seed 1

Rank 0 prints one ``PEVPM-RESULT {...}`` JSON line (see pevpm.validate.result)
with the wall time of the iteration loop and each rank's time in the stencil
(``compute``) and in the halo exchange (``comm``).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from mpi4py import MPI

from pevpm.validate.result import report

TAG = 0  # one tag for every halo message; the source tells them apart


def strip_rows(size: int, nprocs: int, rank: int) -> tuple[int, int]:
    """(first global row, number of rows) owned by ``rank``.

    The first ``size % nprocs`` ranks own one extra row.

    >>> [strip_rows(10, 4, r) for r in range(4)]
    [(0, 3), (3, 3), (6, 2), (8, 2)]
    """
    base, extra = divmod(size, nprocs)
    count = base + (1 if rank < extra else 0)
    first = rank * base + min(rank, extra)
    return first, count


def stencil(grid: np.ndarray, out: np.ndarray, lo: int, hi: int, work: np.ndarray) -> None:
    """out[j, k] = 0.25 * (four neighbours of grid[j, k]) for rows lo..hi-1, inner columns.

    ``work`` is a scratch array of shape (hi - lo, ncols - 2) so the update
    allocates nothing.
    """
    rows = slice(lo, hi)
    np.add(grid[rows, :-2], grid[rows, 2:], out=work)
    np.add(work, grid[lo - 1:hi - 1, 1:-1], out=work)
    np.add(work, grid[lo + 1:hi + 1, 1:-1], out=work)
    np.multiply(work, np.float32(0.25), out=out[rows, 1:-1])


def exchange_halos(comm, grid: np.ndarray) -> None:
    """Swap edge rows with the neighbouring strips (even/odd ordering, 4 bytes x ncols each)."""
    rank, nprocs = comm.rank, comm.size
    has_up, has_down = rank > 0, rank < nprocs - 1
    if rank % 2 == 0:
        if has_up:
            comm.Send(grid[1], dest=rank - 1, tag=TAG)
        if has_down:
            comm.Send(grid[-2], dest=rank + 1, tag=TAG)
            comm.Recv(grid[-1], source=rank + 1, tag=TAG)
        if has_up:
            comm.Recv(grid[0], source=rank - 1, tag=TAG)
    else:
        if has_down:
            comm.Recv(grid[-1], source=rank + 1, tag=TAG)
        comm.Recv(grid[0], source=rank - 1, tag=TAG)
        comm.Send(grid[1], dest=rank - 1, tag=TAG)
        if has_down:
            comm.Send(grid[-2], dest=rank + 1, tag=TAG)


def local_strip(size: int, seed: int, first: int, count: int) -> np.ndarray:
    """This rank's rows of the seeded initial grid, with a ghost row on each side."""
    full = np.random.default_rng(seed).random((size, size), dtype=np.float32)
    strip = np.zeros((count + 2, size), dtype=np.float32)
    strip[1:-1] = full[first:first + count]
    return strip


def updated_rows(first: int, count: int, size: int) -> tuple[int, int]:
    """Local row range [lo, hi) this rank updates: its rows minus the global boundary rows."""
    lo = 2 if first == 0 else 1
    hi = count if first + count == size else count + 1
    return lo, max(lo, hi)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256, help="grid is SIZE x SIZE (default 256)")
    parser.add_argument("--iterations", type=int, default=10000, help="default 10000")
    parser.add_argument("--seed", type=int, default=1, help="seed of the initial grid")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    comm = MPI.COMM_WORLD
    if args.size < 3 or args.size < comm.size or args.iterations < 0:
        if comm.rank == 0:
            print(f"jacobi: need size >= 3, size >= nprocs ({comm.size}) and iterations >= 0",
                  file=sys.stderr)
        return 2
    first, count = strip_rows(args.size, comm.size, comm.rank)
    grid = local_strip(args.size, args.seed, first, count)
    new = grid.copy()
    lo, hi = updated_rows(first, count, args.size)
    work = np.empty((hi - lo, args.size - 2), dtype=np.float32)

    compute = communicate = 0.0
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(args.iterations):
        t0 = MPI.Wtime()
        exchange_halos(comm, grid)
        t1 = MPI.Wtime()
        stencil(grid, new, lo, hi, work)
        grid, new = new, grid
        t2 = MPI.Wtime()
        communicate += t1 - t0
        compute += t2 - t1
    elapsed = MPI.Wtime() - start
    local_sum = float(grid[1:-1].sum(dtype=np.float64))
    checksum = comm.reduce(local_sum, op=MPI.SUM, root=0)
    report(comm, "jacobi", vars(args), elapsed,
           {"compute": compute, "comm": communicate, "rows": count},
           extra={"checksum": checksum})
    return 0


if __name__ == "__main__":
    sys.exit(main())
