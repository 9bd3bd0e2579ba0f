"""A real 2-rank Sendrecv ring at 8 KiB against the time pevpm's model draws for it.

Runs the ring under ``mpiexec -n 2`` (mpi4py): each rank calls
``MPI_Sendrecv`` with its neighbour (with two ranks, the other one) over and
over; each of ``--repeats`` rounds lasts at least ``--seconds`` and yields
the median time of one call (one message each way).  Then it asks the
profile model what it draws for that message: a duplex ``MPI_Sendrecv``
transfer on one node at 2 ranks per node (its block, the median of
100,000 draws, and the per-message time of a simulated ring, the makespan
over the iterations: a Sendrecv ends with the later of its two messages).
With ``--bench`` it first benchmarks a fresh profile here (``sendrecv`` and
``isend`` at 8 KiB, 1x2) and compares against that too.  The machine's load
(others' CPU) is probed before and after.

    PYTHONPATH=src python benchmarks/accuracy_sendrecv.py [--bench] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
SRC = HERE.parent.parent / "src"
BIN = Path(sys.executable).parent
SIZE = 8192
ITERATIONS = 2000          # iterations of the simulated ring


def worker(repeats: int, seconds: float) -> None:
    """Under mpiexec: time the ring; rank 0 prints the per-round medians as JSON."""
    import numpy as np
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    right, left = (rank + 1) % size, (rank - 1) % size
    send, recv = np.ones(SIZE, np.uint8), np.empty(SIZE, np.uint8)
    now = time.perf_counter_ns

    def loop(count: int) -> list[int]:
        times = [0] * count
        comm.Barrier()
        for i in range(count):
            start = now()
            comm.Sendrecv(send, right, 7, recv, left, 7)
            times[i] = now() - start
        return times

    loop(1000)                                   # warm up
    probe = loop(1000)
    count = comm.bcast(int(seconds * 1e9 / max(statistics.median(probe), 1)) + 1, root=0)
    rounds = []
    for _ in range(repeats):
        started = now()
        times = loop(count)
        elapsed = (now() - started) / count
        rounds.append((statistics.median(times) / 1e9, elapsed / 1e9))
    gathered = comm.gather(rounds, root=0)
    if rank == 0:
        print(json.dumps({"calls_per_round": count, "rounds": gathered}))


def real_ring(repeats: int, seconds: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    out = subprocess.run([str(BIN / "mpiexec"), "-n", "2", sys.executable, str(HERE),
                          "--worker", "--repeats", str(repeats), "--seconds", str(seconds)],
                         check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def bench_profile(path: Path, reps: int) -> None:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    subprocess.run([str(BIN / "mpiexec"), "-n", "2", sys.executable, "-m", "pevpm", "bench",
                    "--binding", "python",     # the ring runs through mpi4py
                    "--start", "barrier",      # as measured for docs/ before the auto rule
                    "--tests", "sendrecv,isend", "--sizes", str(SIZE), "--reps", str(reps),
                    "--budget", "120s", "--no-progress", "-o", str(path)],
                   check=True, env=env, capture_output=True)


def model_side(profile: str) -> dict:
    """What the profile model draws for the ring's message, and a simulated ring."""
    import numpy as np

    from pevpm.machine.presets import parse_machine
    from pevpm.machine.transfer import Transfer, for_placement
    from pevpm.model.builder import ModelBuilder
    from pevpm.vm.kernel.fastengine import simulate
    from pevpm.vm.strategies.explain import explain

    machine = parse_machine(profile, ppn=2)
    comm = for_placement(machine.comm, [0, 0])
    transfer = Transfer("MPI_Sendrecv", SIZE, 0, 1, intra_node=True, contention=1, duplex=True)
    rng = np.random.default_rng(1)
    draws = [comm.transfer_time(transfer, rng) for _ in range(100_000)]
    series = comm.series_for(transfer)
    b = ModelBuilder()
    with b.loop(ITERATIONS):
        b.sendrecv(SIZE, dest="(procnum + 1) % numprocs", source="(procnum + 1) % numprocs")
    model = b.build()
    run = simulate(model, 2, machine, rng=np.random.default_rng(2))
    uses = explain(model, 2, machine)
    return {"block": f"{series.test} {series.nxp}", "draw_median": float(np.median(draws)),
            "draw_mean": float(np.mean(draws)), "ring_per_message": run.makespan / ITERATIONS,
            "explained": [use.row() for use in uses]}


def block_median(profile: str) -> float | None:
    """The median of the profile's own 1x2 sendrecv block at 8 KiB, if it has one."""
    from pevpm.errors import ProfileError
    from pevpm.profile.builtin import open_profile

    with open_profile(profile) as prof:
        try:
            return prof.summary("sendrecv", SIZE, nxp="1x2").median
        except ProfileError:
            return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds (5)")
    parser.add_argument("--seconds", type=float, default=1.0, help="least seconds a round (1)")
    parser.add_argument("--bench", action="store_true",
                        help="also benchmark a fresh profile here and compare with it")
    parser.add_argument("--reps", type=int, default=5000, help="MPIBench repetitions (5000)")
    args = parser.parse_args()
    if args.worker:
        worker(args.repeats, args.seconds)
        return 0
    sys.path.insert(0, str(SRC))
    from pevpm.host import probe_machine

    before = probe_machine()
    real = real_ring(args.repeats, args.seconds)
    after = probe_machine()
    per_rank = [[median for median, _ in rounds] for rounds in real["rounds"]]
    call_median = statistics.median([m for rank in per_rank for m in rank])
    loop_mean = statistics.median([mean for rounds in real["rounds"] for _, mean in rounds])
    print(f"machine: others used {before.others:.2f} cores before, {after.others:.2f} after; "
          f"load {before.load:.2f} / {after.load:.2f}")
    print(f"real 2-rank Sendrecv ring, {SIZE} B: {args.repeats} rounds x "
          f"{real['calls_per_round']} calls per rank")
    print(f"  median call {call_median * 1e6:.2f} us (per round and rank: "
          + ", ".join(f"{m * 1e6:.2f}" for rank in per_rank for m in rank)
          + f"); loop time per call {loop_mean * 1e6:.2f} us")
    profiles = ["default"]
    with tempfile.TemporaryDirectory() as tmp:
        if args.bench:
            fresh = Path(tmp) / "fresh.db"
            bench_profile(fresh, args.reps)
            profiles.append(str(fresh))
        for profile in profiles:
            side = model_side(profile)
            measured = block_median(profile)
            name = "default profile" if profile == "default" else "fresh profile (--bench)"
            print(f"{name}: block {side['block']}"
                  + (f", its median {measured * 1e6:.2f} us" if measured else
                     " (no 8 KiB block: interpolated between the sizes around it)"))
            print(f"  model draw median {side['draw_median'] * 1e6:.2f} us "
                  f"(mean {side['draw_mean'] * 1e6:.2f}); ratio to the real median call "
                  f"{side['draw_median'] / call_median:.3f}"
                  + (f"; to the block's median {side['draw_median'] / measured:.3f}"
                     if measured else ""))
            print(f"  simulated ring: {side['ring_per_message'] * 1e6:.2f} us per message "
                  f"(ratio to real {side['ring_per_message'] / call_median:.3f}); "
                  f"explained: {side['explained']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
