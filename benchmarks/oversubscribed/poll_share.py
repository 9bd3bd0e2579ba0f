"""How much of a core an MPI rank blocked in a receive takes while others compute.

Run ``mpiexec -n RANKS python poll_share.py COMPUTING SPINS ROUNDS`` on a
node with fewer cores than ranks.  Ranks ``0..COMPUTING-1`` do a fixed
amount of CPU work (``SPINS`` additions) in each round; the other ranks
wait for it, once asleep (``time.sleep``: they want no core) and once
blocked in ``MPI_Recv`` (the library's own wait).  Rank 0 prints one line
``sleeping-wall blocked-wall`` per round: the computing ranks' slowest
wall time for the work in each case, the two cases alternating.
"""

import sys
import time

from mpi4py import MPI


def work(spins: int) -> None:
    total = 0
    for i in range(spins):
        total += i


def timed_round(comm, computing: int, spins: int, blocked: bool, nap: float) -> float:
    """The computing ranks' slowest wall time for ``spins`` additions."""
    buf = bytearray(1)
    comm.Barrier()
    start, cpu = time.perf_counter(), time.process_time()
    if comm.rank < computing:
        work(spins)
        elapsed = time.perf_counter() - start
        if comm.rank == 0:
            for peer in range(computing, comm.size):
                comm.Send(buf, dest=peer)
    else:
        if not blocked:
            time.sleep(nap)
        comm.Recv(buf, source=0)
        elapsed = 0.0
    share = (time.process_time() - cpu) / (time.perf_counter() - start)
    shares = comm.gather(share)
    wall = comm.allreduce(elapsed, op=MPI.MAX)
    if comm.rank == 0:
        return wall, sum(shares[:computing]) / computing, sum(shares[computing:]) / (comm.size - computing)
    return wall, 0.0, 0.0


def main() -> None:
    computing, spins, rounds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    comm = MPI.COMM_WORLD
    # The sleepers' nap outlasts the work even if it runs at 1/size speed.
    start = time.perf_counter()
    work(spins)
    nap = (time.perf_counter() - start) * comm.size + 0.05
    nap = comm.allreduce(nap, op=MPI.MAX)
    for _ in range(rounds):
        asleep = timed_round(comm, computing, spins, False, nap)
        polling = timed_round(comm, computing, spins, True, nap)
        if comm.rank == 0:
            print(" ".join(f"{x:.4f}" for x in (*asleep, *polling)), flush=True)


if __name__ == "__main__":
    main()
