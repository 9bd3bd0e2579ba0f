"""Where MPIBench's small-message one-way time departs from half a round trip.

Both ranks run on this host, whose ``CLOCK_MONOTONIC`` every process shares, so
the C core's raw stamps already lie on one clock: the true one-way time of
every message can be read off them directly, and the offset the clock
synchronisation estimates for rank 1 is its error (the true offset is zero).
Under ``mpiexec -n 2`` this runs MPIBench's own C loops (``send``: Send then
Recv; ``isend``: Irecv, Isend + Wait) with barrier and with chained starts,
``--reps`` repetitions per size, and prints per block, in microseconds:

* ``half rtt``: the pinger's median round trip / 2 (one clock, no offset);
* ``osu``: chained only, the pinger's median repetition period / 2, which is
  what osu_latency's loop measures (round trip plus the loop's own work);
* ``osu mean``: chained only, the pinger's *mean* repetition period / 2 over
  the block: osu_latency's own statistic (its total loop time / 2 / iterations)
  computed on MPIBench's loop, slow repetitions included;
* ``ping`` / ``pong``: median true one-way times of the two directions;
* ``gap``: the ponger's median time between stamping the ping's arrival and
  stamping its reply's start (one clock read and one store: the C loop's
  own work inside a round trip);
* ``offset``: rank 1's estimated offset at the block (should be 0);
* ``stored``: the median and mean of the one-way times MPIBench stores
  (both directions, synchronised clock), and ``excess``: stored median over
  half rtt.

    PYTHONPATH=src python benchmarks/bench_oneway_components.py [--reps 2000]
        [--sizes 0,8,1024,16384,65536] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parent.parent / "src"
MPIEXEC = Path(sys.executable).with_name("mpiexec")
TESTS = ("send", "isend")
STARTS = ("barrier", "chain")
WARMUP = 200


def measure(comm, core, clock, test: str, start_mode: str, size: int, reps: int) -> dict:
    """One block of MPIBench's C loop; rank 0 returns its components (us), others None."""
    from pevpm.bench.clock import synchronise
    from pevpm.bench.operations import BarrierStart, ChainStart, derive_times

    rank = comm.Get_rank()
    partner = (1, True) if rank == 0 else (0, False)
    op = core.operation(comm, test, "", size, partner)
    op.run(WARMUP, BarrierStart(comm))
    start = BarrierStart(comm) if start_mode == "barrier" else ChainStart()
    local = op.run(reps, start)
    clock.add(synchronise(comm, clock.local, "pairwise", exchange=core.exchange))
    gathered = {name: comm.gather(stamps, root=0) for name, stamps in local.items()}
    synced = {name: comm.gather(clock.to_global(stamps), root=0)
              for name, stamps in local.items()}
    offset = comm.gather(clock.points[-1].offset_ns, root=0)
    if rank != 0:
        return None
    raw = {name: np.array(rows, dtype=np.int64) for name, rows in gathered.items()}
    send_start, recv_done = raw["send_start"], raw["recv_done"]
    stored = derive_times("end_to_end", {k: np.array(v) for k, v in synced.items()}, [1, 0])
    row = {
        "half rtt": np.median(recv_done[0] - send_start[0]) / 2,
        "osu": np.median(np.diff(send_start[0])) / 2 if start_mode == "chain" else np.nan,
        "osu mean": (np.mean(np.diff(send_start[0])) / 2 if start_mode == "chain"
                     else np.nan),
        "ping": np.median(recv_done[1] - send_start[0]),
        "pong": np.median(recv_done[0] - send_start[1]),
        "gap": np.median(send_start[1] - recv_done[1]),
        "offset": offset[1],
        "stored median": np.median(stored) * 1e9,
        "stored mean": np.mean(stored) * 1e9,
    }
    row = {k: v / 1e3 for k, v in row.items()}
    row["excess"] = row["stored median"] - row["half rtt"]
    return row


def worker(args) -> None:
    from pevpm.bench.ccore import CoreClock, load_core
    from pevpm.bench.clock import GlobalClock, synchronise
    from pevpm.bench.mpi import MPI     # at MPIBench's thread level

    comm = MPI.COMM_WORLD
    if args.bind and hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cores[comm.Get_rank() % len(cores)]})
    core = load_core()
    clock = GlobalClock(CoreClock(core))
    clock.add(synchronise(comm, clock.local, "pairwise", exchange=core.exchange))
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    for round_ in range(args.rounds):
        for test in TESTS:
            for start_mode in args.starts.split(","):
                for size in sizes:
                    row = measure(comm, core, clock, test, start_mode, size, args.reps)
                    if row is not None:
                        rows.append(((test, start_mode, size), row))
    if comm.Get_rank() == 0:
        report(rows, args.rounds)


def report(rows: list, rounds: int) -> None:
    columns = ("half rtt", "osu", "osu mean", "ping", "pong", "gap", "offset", "stored median",
               "stored mean", "excess")
    print(f"microseconds, median over {rounds} round(s) (range in brackets for excess)")
    print(f"{'block':<22}" + "".join(f"{c:>14}" for c in columns))
    keys = list(dict.fromkeys(key for key, _ in rows))
    for key in keys:
        mine = [row for k, row in rows if k == key]
        cells = []
        for c in columns:
            values = [row[c] for row in mine]
            cells.append(f"{np.median(values):14.3f}")
        excess = [row["excess"] for row in mine]
        test, start_mode, size = key
        print(f"{test + ' ' + start_mode + ' ' + str(size):<22}" + "".join(cells)
              + f"  ({min(excess):+.3f}..{max(excess):+.3f})")
    every = [row for _, row in rows]
    print("\ncomponents over every block (medians of the per-block medians, us):")
    print(f"  clock read + store inside a round trip (gap): "
          f"{np.median([r['gap'] for r in every]):.3f}")
    print(f"  |offset error| of the synchronised clock: "
          f"{np.median([abs(r['offset']) for r in every]):.3f} "
          f"(largest {max(abs(r['offset']) for r in every):.3f})")
    print(f"  stored one-way median - half round trip: "
          f"{np.median([r['excess'] for r in every]):+.3f}")
    chained = [r for k, r in rows if k[1] == "chain"]
    if chained:
        print(f"  the C loop's own work per repetition (osu - half rtt, chained): "
              f"{np.median([r['osu'] - r['half rtt'] for r in chained]):.3f}")
        print(f"  slow repetitions in osu_latency's statistic (osu mean - osu, chained): "
              f"{np.median([r['osu mean'] - r['osu'] for r in chained]):+.3f}")
    if {k[1] for k in keys} != set(STARTS):
        return
    for test in TESTS:
        for size in dict.fromkeys(k[2] for k in keys):
            def half(start_mode, test=test, size=size):
                return np.median([r["half rtt"] for k, r in rows
                                  if k == (test, start_mode, size)])
            print(f"  barrier start adds to {test} {size} B (half rtt, barrier - chain): "
                  f"{half('barrier') - half('chain'):+.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--sizes", default="0,8,1024,16384,65536")
    parser.add_argument("--starts", default=",".join(STARTS),
                        help="start rules to run: barrier, chain or both")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-bind", dest="bind", action="store_false",
                        help="leave the ranks unpinned (MPIBench pins them by default)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return 0
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(SRC), os.environ.get("PYTHONPATH")])))
    command = [str(MPIEXEC), "-n", "2", sys.executable, __file__, "--worker",
               "--reps", str(args.reps), "--sizes", args.sizes, "--rounds", str(args.rounds),
               "--starts", args.starts]
    if not args.bind:
        command.append("--no-bind")
    return subprocess.run(command, env=env, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main())
