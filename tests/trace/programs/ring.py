"""mpi4py calls the tracer must see: a ring of Send/Recv, Isend/Irecv/Waitall,
a pickled sendrecv, Alltoall, Bcast and a split communicator's Barrier."""

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
right, left = (rank + 1) % size, (rank - 1) % size
out = np.arange(100, dtype=np.float64)
into = np.empty_like(out)
if rank % 2 == 0:
    comm.Send(out, dest=right, tag=11)
    comm.Recv(into, source=left, tag=11)
else:
    comm.Recv(into, source=left, tag=11)
    comm.Send(out, dest=right, tag=11)
requests = [comm.Irecv(into[:10], source=left, tag=12), comm.Isend(out[:10], dest=right, tag=12)]
MPI.Request.Waitall(requests)
got = comm.sendrecv(rank, dest=right, source=left)
chunks = np.zeros((size, 4))
comm.Alltoall(chunks, np.empty_like(chunks))
comm.Bcast(out[:25], root=0)
half = comm.Split(rank % 2, rank)
half.Barrier()
half.Free()
if rank == 0:
    print(f"ring done on {size} ranks, got {got}")
