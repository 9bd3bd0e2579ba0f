"""Two-dimensional FFT of an N x N complex grid: row FFTs, transpose, row FFTs again.

Each rank owns N/n consecutive rows (a "slice"). One iteration, as in the
thesis's Figure 100:

1. FFT of every local row (numpy);
2. pack the slice into n square chunks of (N/n) x (N/n) values, one per rank;
3. MPI_Alltoall of the chunks (16 * (N/n)^2 bytes to and from every rank);
4. unpack: transpose the received chunks so each rank now owns N/n columns as rows;
5. FFT of every local row again (the original columns).

After an iteration each rank holds its slice of the transposed 2-D FFT; the
FFTs are unitary (``norm="ortho"``), so repeating them keeps values bounded.

    mpiexec -n 2 python examples/fft2d/fft2d.py --size 256 --iterations 200 --seed 1

N must be divisible by the number of ranks. Rank 0 prints one
``PEVPM-RESULT {...}`` JSON line (see pevpm.validate.result) with each rank's
time in FFTs (``compute``), in packing and unpacking (``transpose``) and in
MPI_Alltoall (``comm``). ``--check`` also gathers the result after the timed
section and reports its largest difference from numpy's serial fft2.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from mpi4py import MPI

from pevpm.validate.result import report


def row_ffts(slice_: np.ndarray) -> np.ndarray:
    """Unitary FFT of every row."""
    return np.fft.fft(slice_, axis=1, norm="ortho")


def pack_chunks(slice_: np.ndarray, nprocs: int, chunks: np.ndarray) -> None:
    """chunks[c] = columns c*s..(c+1)*s-1 of the slice (s = rows per rank)."""
    rows = slice_.shape[0]
    chunks[...] = slice_.reshape(rows, nprocs, rows).transpose(1, 0, 2)


def unpack_chunks(received: np.ndarray, slice_: np.ndarray) -> None:
    """slice_[j, k] = received global row k, local column j (finish the transpose)."""
    nprocs, rows, _ = received.shape
    slice_[...] = received.reshape(nprocs * rows, rows).T


def initial_slice(size: int, seed: int, rank: int, rows: int) -> np.ndarray:
    """This rank's rows of the seeded complex grid."""
    rng = np.random.default_rng(seed)
    full = rng.random((size, size)) + 1j * rng.random((size, size))
    return full[rank * rows:(rank + 1) * rows].copy()


def check_error(comm, slice_: np.ndarray, size: int, seed: int, iterations: int) -> float | None:
    """Largest |difference| between the gathered result and numpy's serial answer (rank 0)."""
    gathered = comm.gather(slice_, root=0)
    if comm.rank != 0:
        return None
    expected = initial_slice(size, seed, 0, size)
    for _ in range(iterations):
        expected = np.fft.fft2(expected, norm="ortho").T
    return float(np.abs(np.vstack(gathered) - expected).max())


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256, help="grid is SIZE x SIZE (default 256)")
    parser.add_argument("--iterations", type=int, default=200, help="default 200")
    parser.add_argument("--seed", type=int, default=1, help="seed of the initial grid")
    parser.add_argument("--check", action="store_true",
                        help="compare the result with numpy's fft2 after the timed section")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    comm = MPI.COMM_WORLD
    nprocs = comm.size
    if args.size < 1 or args.size % nprocs or args.iterations < 0:
        if comm.rank == 0:
            print(f"fft2d: size must be a positive multiple of nprocs ({nprocs}) "
                  "and iterations >= 0", file=sys.stderr)
        return 2
    rows = args.size // nprocs
    slice_ = initial_slice(args.size, args.seed, comm.rank, rows)
    chunks = np.empty((nprocs, rows, rows), dtype=complex)
    received = np.empty_like(chunks)

    compute = transpose = communicate = 0.0
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(args.iterations):
        t0 = MPI.Wtime()
        slice_ = row_ffts(slice_)
        t1 = MPI.Wtime()
        pack_chunks(slice_, nprocs, chunks)
        t2 = MPI.Wtime()
        comm.Alltoall(chunks, received)
        t3 = MPI.Wtime()
        unpack_chunks(received, slice_)
        t4 = MPI.Wtime()
        slice_ = row_ffts(slice_)
        t5 = MPI.Wtime()
        compute += (t1 - t0) + (t5 - t4)
        transpose += (t2 - t1) + (t4 - t3)
        communicate += t3 - t2
    elapsed = MPI.Wtime() - start
    extra = {}
    if args.check:
        extra["check_error"] = check_error(comm, slice_, args.size, args.seed, args.iterations)
    report(comm, "fft2d", vars(args), elapsed,
           {"compute": compute, "transpose": transpose, "comm": communicate}, extra=extra)
    return 0


if __name__ == "__main__":
    sys.exit(main())
