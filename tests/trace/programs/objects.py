"""mpi4py's collectives of Python objects, which it builds from point-to-point
messages: a ring exchange, then comm.reduce, comm.allreduce and comm.scan."""

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
for _ in range(3):
    comm.sendrecv(rank, dest=(rank + 1) % size, source=(rank - 1) % size)
total = comm.reduce(rank, op=MPI.SUM, root=0)
everyone = comm.allreduce(rank * 2.0, op=MPI.SUM)
prefix = comm.scan(rank, op=MPI.SUM)
assert everyone == size * (size - 1) and prefix == rank * (rank + 1) // 2
