"""Conjugate gradients on a 2-D Poisson problem, rows split across ranks.

A program of the kind pevpm is for, used by docs/tutorial.md: each rank owns
``ny / numprocs`` consecutive rows of an ``nx`` x ``ny`` grid.  Every iteration
swaps one boundary row with each neighbour (``Isend``/``Irecv``/``Waitall``),
applies the 5-point Laplacian, and needs two global dot products
(``Allreduce`` of 8 bytes each).  Rank 0 broadcasts the problem size first
(``Bcast``) and collects the solution at the end (blocking ``Send``/``Recv``).

    mpiexec -n 2 python examples/tutorial/cg.py --nx 512 --ny 512 --iterations 200

Rank 0 prints one line: ranks, grid, iterations, seconds, final residual.
The ``# PEVPM`` comments are the program's performance model (the same
model as ``model.py``, written with the Python builder): ``pevpm show
examples/tutorial/cg.py`` prints it, ``pevpm predict`` simulates it.
"""

from __future__ import annotations

import argparse
import os

# One thread per rank: numpy's BLAS would otherwise start a thread per core in
# every rank, and ranks sharing cores run many times slower.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np
from mpi4py import MPI

# PEVPM Parameter nx = 512
# PEVPM &         ny = 512
# PEVPM &         iterations = 200
# PEVPM &         t_matvec_call = 2e-05
# PEVPM &         t_matvec_cell = 5e-09
# PEVPM &         t_update_call = 2e-05
# PEVPM &         t_update_cell = 5e-09
# PEVPM &         t_direction_call = 1e-05
# PEVPM &         t_direction_cell = 2e-09


def strip(ny: int, nprocs: int, rank: int) -> tuple[int, int]:
    """(first row, row count) of ``rank``'s strip; the first ``ny % nprocs`` get one more.

    >>> [strip(10, 4, r) for r in range(4)]
    [(0, 3), (3, 3), (6, 2), (8, 2)]
    """
    base, extra = divmod(ny, nprocs)
    return rank * base + min(rank, extra), base + (rank < extra)


def laplacian(p: np.ndarray, out: np.ndarray) -> None:
    """out = A p for the 5-point Laplacian, on the rows of ``p`` between its two ghost rows."""
    inner = p[1:-1]
    np.multiply(inner, 4.0, out=out)
    out -= p[:-2]
    out -= p[2:]
    out[:, 1:] -= inner[:, :-1]
    out[:, :-1] -= inner[:, 1:]


def matvec_and_dot(p: np.ndarray, ap: np.ndarray) -> float:
    """The first serial segment of an iteration: A p and this rank's part of p.Ap."""
    laplacian(p, ap)
    return float(np.vdot(p[1:-1], ap))


def update_and_dot(x, r, p, ap, alpha: float) -> float:
    """The second serial segment: x += alpha p, r -= alpha Ap, and this rank's r.r."""
    x += alpha * p[1:-1]
    r -= alpha * ap
    return float(np.vdot(r, r))


def update_direction(p: np.ndarray, r: np.ndarray, beta: float) -> None:
    """The third serial segment: the search direction p = r + beta p on this
    rank's rows (the ghost rows are refreshed by the next exchange)."""
    p[1:-1] = r + beta * p[1:-1]


# PEVPM Subroutine name = exchange
# PEVPM {
def exchange(comm, p: np.ndarray) -> None:
    """Send this strip's edge rows of ``p`` to the neighbours, receive their edges into
    the ghost rows (none beyond the first and last rank)."""
    rank, size = comm.rank, comm.size
    requests = []
    # PEVPM Runon c1 = procnum > 0
    # PEVPM {
    if rank > 0:
        # PEVPM Message type = MPI_Irecv
        # PEVPM &       size = nx * 8
        # PEVPM &       from = procnum - 1
        # PEVPM &       to = procnum
        # PEVPM &       req = up_in
        requests.append(comm.Irecv(p[0], source=rank - 1))
        # PEVPM Message type = MPI_Isend
        # PEVPM &       size = nx * 8
        # PEVPM &       from = procnum
        # PEVPM &       to = procnum - 1
        # PEVPM &       req = up_out
        requests.append(comm.Isend(p[1], dest=rank - 1))
    # PEVPM }
    # PEVPM Runon c1 = procnum < numprocs - 1
    # PEVPM {
    if rank < size - 1:
        # PEVPM Message type = MPI_Irecv
        # PEVPM &       size = nx * 8
        # PEVPM &       from = procnum + 1
        # PEVPM &       to = procnum
        # PEVPM &       req = down_in
        requests.append(comm.Irecv(p[-1], source=rank + 1))
        # PEVPM Message type = MPI_Isend
        # PEVPM &       size = nx * 8
        # PEVPM &       from = procnum
        # PEVPM &       to = procnum + 1
        # PEVPM &       req = down_out
        requests.append(comm.Isend(p[-2], dest=rank + 1))
    # PEVPM }
    # PEVPM Message type = MPI_Waitall
    MPI.Request.Waitall(requests)
# PEVPM }


# PEVPM Subroutine name = solve
# PEVPM {
def solve(comm, nx: int, ny: int, iterations: int) -> tuple[float, np.ndarray]:
    """Run CG from x = 0 for ``iterations`` steps on A x = b (b = 1 everywhere);
    returns the final residual norm and this rank's rows of x."""
    rows = strip(ny, comm.size, comm.rank)[1]
    x = np.zeros((rows, nx))
    r = np.ones((rows, nx))
    p = np.zeros((rows + 2, nx))          # with a ghost row above and below
    p[1:-1] = r
    ap = np.empty((rows, nx))
    # PEVPM Message type = MPI_Allreduce
    # PEVPM &       size = 8
    rr = comm.allreduce(float(np.vdot(r, r)))
    # PEVPM Loop iterations = iterations
    # PEVPM {
    for _ in range(iterations):
        # PEVPM Call name = exchange
        exchange(comm, p)
        # PEVPM Serial time = t_matvec_call + t_matvec_cell * nx * (ny / numprocs)
        local = matvec_and_dot(p, ap)
        # PEVPM Message type = MPI_Allreduce
        # PEVPM &       size = 8
        alpha = rr / comm.allreduce(local)
        # PEVPM Serial time = t_update_call + t_update_cell * nx * (ny / numprocs)
        local = update_and_dot(x, r, p, ap, alpha)
        # PEVPM Message type = MPI_Allreduce
        # PEVPM &       size = 8
        rr_new = comm.allreduce(local)
        # PEVPM Serial time = t_direction_call + t_direction_cell * nx * (ny / numprocs)
        update_direction(p, r, rr_new / rr)
        rr = rr_new
    # PEVPM }
    return float(np.sqrt(rr)), x
# PEVPM }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nx", type=int, default=512, help="grid columns (512)")
    parser.add_argument("--ny", type=int, default=512, help="grid rows, split across ranks (512)")
    parser.add_argument("--iterations", type=int, default=200, help="CG iterations (200)")
    args = parser.parse_args(argv)
    comm = MPI.COMM_WORLD
    if args.ny < comm.size:
        parser.error(f"--ny {args.ny} gives some of the {comm.size} ranks no rows")
    problem = np.array([args.nx, args.ny, args.iterations], dtype=np.int64)
    # PEVPM Message type = MPI_Barrier
    comm.Barrier()
    start = MPI.Wtime()
    # PEVPM Message type = MPI_Bcast
    # PEVPM &       size = 24
    # PEVPM &       root = 0
    comm.Bcast(problem, root=0)
    nx, ny, iterations = (int(v) for v in problem)
    # PEVPM Call name = solve
    residual, x = solve(comm, nx, ny, iterations)
    # PEVPM Runon c1 = procnum == 0
    # PEVPM {
    if comm.rank == 0:
        solution = [x]
        # PEVPM Loop iterations = numprocs - 1
        # PEVPM &    index = source
        # PEVPM {
        for source in range(1, comm.size):
            part = np.empty((strip(ny, comm.size, source)[1], nx))
            # PEVPM Message type = MPI_Recv
            # PEVPM &       size = nx * 8 * (ny / numprocs + 1)
            # PEVPM &       from = source + 1
            # PEVPM &       to = procnum
            comm.Recv(part, source=source)
            solution.append(part)
        # PEVPM }
        elapsed = MPI.Wtime() - start
        print(f"cg: {comm.size} ranks, {nx} x {ny}, {iterations} iterations: "
              f"{elapsed:.4f} s (residual {residual:.3e})", flush=True)
    # PEVPM }
    # PEVPM &     c2 = procnum > 0
    # PEVPM {
    else:
        # PEVPM Message type = MPI_Send
        # PEVPM &       size = nx * 8 * (ny / numprocs)
        # PEVPM &       from = procnum
        # PEVPM &       to = 0
        comm.Send(x, dest=0)
    # PEVPM }


if __name__ == "__main__":
    main()
