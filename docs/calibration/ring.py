"""A ring pipeline: compute, then pass 8 KiB to the right neighbour (Sendrecv).

Not one of pevpm's examples: the program docs/calibration.md calibrates and
predicts.  Each iteration every rank runs a small numpy kernel (the serial
region ``compute``, reported with pevpm.calibrate.region) and then swaps a
block with its ring neighbours.

    mpiexec -n 2 python ring.py --iterations 200
"""

import argparse
import time

import numpy as np
from mpi4py import MPI

from pevpm.calibrate import region


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--size", type=int, default=8192, help="bytes passed per iteration")
    parser.add_argument("--work", type=int, default=200_000, help="elements of the kernel")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    right, left = (rank + 1) % size, (rank - 1) % size
    outgoing = np.full(args.size, rank, dtype=np.uint8)
    incoming = np.empty(args.size, dtype=np.uint8)
    data = np.random.default_rng(rank).random(args.work)
    comm.Barrier()
    began = time.perf_counter()
    for _ in range(args.iterations):
        with region("compute"):
            data = np.sqrt(data * data + 1.0) - 0.5
        comm.Sendrecv(outgoing, dest=right, recvbuf=incoming, source=left)
    comm.Barrier()
    if rank == 0:
        print(f"ring: {size} ranks, {args.iterations} iterations, "
              f"{time.perf_counter() - began:.4f} s")


if __name__ == "__main__":
    main()
