"""What MPIBench's harness choices do to a message time, measured in one job.

Under ``mpiexec -n 2`` this interleaves, ``--rounds`` times, loops of
``--reps`` round trips of each variant, so a change in the machine's load
hits all of them alike, and prints per size each variant's median (over
rounds) of the mean half round trip and its median ratio to the target, a
plain blocking Send/Recv ping-pong run back to back:

* ``send/chain``: MPIBench's ``send`` test with chained repetitions;
* ``send/barrier``: the same after a barrier in every repetition (the default);
* ``send/gap``: after 60 us of computation and a barrier (``--gap 60us``);
* ``isend/chain``, ``isend/barrier``: the ``isend`` test (Irecv posted
  first, Isend, Waits), chained or after a barrier;
* ``unaligned``: the target ping-pong between numpy buffers whose addresses
  differ by 16 bytes modulo 4 KiB (MPIBench's buffers are page aligned).

    PYTHONPATH=src mpiexec -n 2 python benchmarks/bench_harness_effects.py
    PYTHONPATH=src mpiexec -n 2 python benchmarks/bench_harness_effects.py --sizes 0,16384
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pevpm.bench.mpi import MPI
from pevpm.bench.operations import (
    BarrierStart,
    ChainStart,
    ComputeGap,
    aligned_buffer,
    build_operation,
)

COMM = MPI.COMM_WORLD
PEER = 1 - COMM.rank
NOW = time.perf_counter_ns


def ping_pong(outgoing, incoming, reps: int) -> float:
    """Mean half round trip (seconds) of a back-to-back blocking ping-pong."""
    send, recv, first = COMM.Send, COMM.Recv, COMM.rank == 0
    COMM.Barrier()
    began = NOW()
    for _ in range(reps):
        if first:
            send(outgoing, PEER)
            recv(incoming, PEER)
        else:
            recv(incoming, PEER)
            send(outgoing, PEER)
    return (NOW() - began) / reps / 2e9


def harness(test: str, size: int, start, reps: int) -> float:
    """Mean half round trip (seconds) of MPIBench's ``test`` loop, from rank 0's stamps."""
    operation = build_operation(COMM, test, "", size, (PEER, COMM.rank == 0))
    stamps = operation.run(reps, start, NOW)
    return float(np.mean(stamps["recv_done"] - stamps["send_start"])) / 2e9


def unaligned_buffers(size: int) -> tuple[np.ndarray, np.ndarray]:
    """Two buffers 16 bytes apart modulo 4 KiB (the slow case seen here)."""
    block = aligned_buffer(2 * size + 8192)
    return block[64:64 + size], block[size + 4096 + 80:2 * size + 4096 + 80]


def variants(size: int):
    aligned = aligned_buffer(size, fill=1), aligned_buffer(size)
    unaligned = unaligned_buffers(size)
    return {
        "target": lambda reps: ping_pong(*aligned, reps),
        "send/chain": lambda reps: harness("send", size, ChainStart(), reps),
        "send/barrier": lambda reps: harness("send", size, BarrierStart(COMM), reps),
        "send/gap": lambda reps: harness("send", size, ComputeGap(BarrierStart(COMM), 60e-6, NOW),
                                         reps),
        "isend/chain": lambda reps: harness("isend", size, ChainStart(), reps),
        "isend/barrier": lambda reps: harness("isend", size, BarrierStart(COMM), reps),
        "unaligned": lambda reps: ping_pong(*unaligned, reps),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0,1024,16384")
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    if COMM.size != 2:
        raise SystemExit("run under mpiexec -n 2")
    for size in (int(s) for s in args.sizes.split(",")):
        loops = variants(size)
        for loop in loops.values():
            loop(300)
        times = {name: [] for name in loops}
        for _ in range(args.rounds):
            for name, loop in loops.items():
                times[name].append(loop(args.reps))
        if COMM.rank == 0:
            target = np.array(times["target"])
            cells = [f"target {np.median(target) * 1e6:.2f} us"]
            for name, values in times.items():
                if name != "target":
                    ratio = np.median(np.array(values) / target)
                    cells.append(f"{name} {np.median(values) * 1e6:.2f} us (x{ratio:.2f})")
            print(f"{size:>6} B: " + ", ".join(cells), flush=True)


if __name__ == "__main__":
    main()
