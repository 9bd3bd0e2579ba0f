"""A master hands out tasks; its workers sleep through them (waiting on a
device, say).  Generating a task costs the master CPU time; a worker's task
costs none.  Run: ``mpiexec -n 8 python master_worker.py TASKS SPINS NAP``;
rank 0 prints the seconds between two barriers.

With more ranks than cores, the workers waiting in ``MPI_Recv`` busy-poll
(MPICH's default) and take CPU from the master: the master's task generation
slows down although the workers do no work.
"""

import sys
import time

from mpi4py import MPI

WORK, RESULT, STOP = 1, 2, 3


def generate(spins: int) -> int:
    """The master's CPU work for one task: a fixed count of additions."""
    total = 0
    for i in range(spins):
        total += i
    return total


def master(comm, tasks: int, spins: int) -> None:
    buf = bytearray(8)
    status = MPI.Status()
    workers = comm.Get_size() - 1
    sent = 0
    for worker in range(1, workers + 1):
        generate(spins)
        comm.Send(buf, dest=worker, tag=WORK)
        sent += 1
    for _ in range(tasks):
        comm.Recv(buf, source=MPI.ANY_SOURCE, tag=RESULT, status=status)
        if sent < tasks:
            generate(spins)
            comm.Send(buf, dest=status.Get_source(), tag=WORK)
            sent += 1
        else:
            comm.Send(buf, dest=status.Get_source(), tag=STOP)


def worker(comm, nap: float) -> None:
    buf = bytearray(8)
    status = MPI.Status()
    while True:
        comm.Recv(buf, source=0, tag=MPI.ANY_TAG, status=status)
        if status.Get_tag() == STOP:
            return
        time.sleep(nap)
        comm.Send(buf, dest=0, tag=RESULT)


def main() -> None:
    tasks, spins, nap = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    comm = MPI.COMM_WORLD
    if not 1 <= comm.Get_size() - 1 <= tasks:
        raise SystemExit("master_worker.py: need 2 ranks or more and a task per worker")
    comm.Barrier()
    start = time.perf_counter()
    if comm.Get_rank() == 0:
        master(comm, tasks, spins)
    else:
        worker(comm, nap)
    comm.Barrier()
    if comm.Get_rank() == 0:
        print(f"{time.perf_counter() - start:.6f}")


if __name__ == "__main__":
    main()
