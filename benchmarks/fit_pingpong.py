"""Predict a real 2-rank ping-pong from a real MPIBench profile, and compare.

Each round (``--rounds``) does, printing what it runs:

1. benchmark this machine into a fresh profile: ``mpiexec -n 2`` (the 1x2
   placement, the contention a lone ping-pong sees) and ``mpiexec -n 4``
   (1x4), tests ``send,isend,isendlocal``.  ``--launch one`` instead
   measures both placements inside one ``mpiexec -n 4`` launch
   (``--placements 1x2,1x4``, the other two ranks asleep during 1x2).
   The ping-pong sends back to back, so MPIBench's repetitions are chained
   back to back too (``--start chain``; ``--start barrier`` shows the
   difference: a message that follows a barrier took 15-35% longer here),
   and the ranks are left unbound (``--no-bind``) as mpiexec leaves the
   ping-pong's;
2. ``pevpm fit`` the profile (so ``--source fitted`` works too);
3. run the real ping-pong under ``mpiexec -n 2`` (this file with
   ``--worker``): blocking Send/Recv of ``size`` bytes between page-aligned
   buffers, the mean round trip over ``--seconds`` of iterations after a
   warm-up, ``--repeats`` times;
4. simulate the same ping-pong in the PEVPM virtual machine from that
   round's profile with the ``full`` model and the baselines.

This machine is noisy: one-second runs of the same ping-pong differ by
20-40%, and so do MPIBench blocks taken minutes apart.  Profile and target
are therefore measured together in every round, and the summary pools the
rounds: the mean of every real run against the mean of the rounds'
predictions, with the median and range of the per-round errors.  With
``--profile`` one round uses that profile instead of benchmarking.

    PYTHONPATH=src python benchmarks/fit_pingpong.py                 # 8 rounds, ~12 min
    PYTHONPATH=src python benchmarks/fit_pingpong.py --rounds 3 --launch one
    PYTHONPATH=src python benchmarks/fit_pingpong.py --profile m.db
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PYTHON = sys.executable
MPIEXEC = str(Path(PYTHON).with_name("mpiexec"))
BENCH_TESTS = "send,isend,isendlocal"


def worker(size: int, seconds: float) -> None:
    """The real ping-pong (run under mpiexec -n 2) for about ``seconds`` after a
    warm-up; rank 0 prints the mean round trip."""
    from mpi4py import MPI

    from pevpm.bench.operations import aligned_buffer

    comm = MPI.COMM_WORLD
    outgoing, incoming = aligned_buffer(size, fill=1), aligned_buffer(size)
    partner = 1 - comm.rank

    def run(count: int) -> float:
        comm.Barrier()
        start = MPI.Wtime()
        for _ in range(count):
            if comm.rank == 0:
                comm.Send(outgoing, dest=partner)
                comm.Recv(incoming, source=partner)
            else:
                comm.Recv(incoming, source=partner)
                comm.Send(outgoing, dest=partner)
        return MPI.Wtime() - start

    run(200)
    probe = 2000
    per_iteration = comm.bcast(run(probe) / probe, root=0)
    count = max(probe, int(seconds / per_iteration))
    elapsed = run(count)
    if comm.rank == 0:
        print(elapsed / count)


def environment() -> dict:
    return dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))


def measure(size: int, seconds: float, repeats: int) -> list[float]:
    """The real ping-pong's mean round trip (seconds) in each of ``repeats`` runs."""
    means = []
    for _ in range(repeats):
        out = subprocess.run(
            [MPIEXEC, "-n", "2", PYTHON, __file__, "--worker", str(size), str(seconds)],
            check=True, capture_output=True, text=True, env=environment(),
        ).stdout
        means.append(float(out.split()[-1]))
    return means


def pingpong_model(size: int, reps: int):
    from pevpm.model.kernels import blocking_pingpong

    return blocking_pingpong(size, reps)


def predict(comm_model, size: int, reps: int, runs: int, seed: int) -> float:
    """Mean predicted round trip over ``runs`` Monte Carlo runs of ``reps`` iterations."""
    import numpy as np

    from pevpm.machine.machine import Machine
    from pevpm.machine.topology import Topology
    from pevpm.vm.kernel.fastengine import simulate

    machine = Machine(comm_model, Topology(procs_per_node=2))
    model = pingpong_model(size, reps)
    seeds = np.random.SeedSequence(seed).spawn(runs)
    spans = [simulate(model, 2, machine, rng=np.random.default_rng(s)).makespan for s in seeds]
    return statistics.fmean(spans) / reps


def run(command: list[str]) -> None:
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=True, env=environment(), stdout=subprocess.DEVNULL)


def benchmark(profile: Path, sizes: str, args) -> None:
    # The real ping-pong is mpi4py's: measure MPI through the same binding.
    bench = [PYTHON, "-m", "pevpm", "bench", "--binding", "python", "--tests", BENCH_TESTS,
             "--sizes", sizes,
             "--reps", str(args.bench_reps), "--budget", "8s", "--start", args.start,
             "--no-bind", "--no-progress", "-o", str(profile)]
    if args.launch == "one":
        run([MPIEXEC, "-n", "4", *bench, "--placements", "1x2,1x4"])
    else:
        run([MPIEXEC, "-n", "2", *bench])
        run([MPIEXEC, "-n", "4", *bench])
    run([PYTHON, "-m", "pevpm", "fit", str(profile), "--tests", BENCH_TESTS, "--no-plots",
         "--no-progress"])


Round = dict[int, tuple[list[float], dict[str, float]]]


def one_round(profile: Path, args, sizes: list[int]) -> Round:
    """Per size: the real runs' mean round trips and each model's prediction."""
    from pevpm.machine.profile_comm import compare_models

    models = compare_models(profile, source=args.source)
    for note in models["full"].notes:
        print(f"note: {note}")
    print(f"{'size':>6} {'measured':>11} {'real runs range':>19} "
          + " ".join(f"{n:>17}" for n in models))
    result: Round = {}
    for size in sizes:
        runs = measure(size, args.seconds, args.repeats)
        measured = statistics.fmean(runs)
        predicted = {name: predict(model, size, args.reps, args.runs, args.seed)
                     for name, model in models.items()}
        result[size] = (runs, predicted)
        cells = [f"{t * 1e6:8.2f}us {error(t, measured):+6.1f}%" for t in predicted.values()]
        spread = f"{min(runs) * 1e6:.1f}-{max(runs) * 1e6:.1f}us"
        print(f"{size:>6} {measured * 1e6:9.2f}us {spread:>19} "
              + " ".join(f"{c:>17}" for c in cells), flush=True)
    return result


def error(predicted: float, measured: float) -> float:
    return 100 * (predicted - measured) / measured


def summarise(rounds: list[Round], sizes: list[int]) -> None:
    names = list(rounds[0][sizes[0]][1])
    print(f"\nover {len(rounds)} round(s), per size: pooled error (mean of the predictions "
          "against the mean of every real run), then the median and range of the "
          "per-round errors")
    for name in names:
        cells, pooled_errors = [], []
        for size in sizes:
            real = [t for result in rounds for t in result[size][0]]
            predictions = [result[size][1][name] for result in rounds]
            pooled = error(statistics.fmean(predictions), statistics.fmean(real))
            pooled_errors.append(pooled)
            per_round = [error(result[size][1][name], statistics.fmean(result[size][0]))
                         for result in rounds]
            cells.append(f"{size} B {pooled:+.1f}% (median {statistics.median(per_round):+.1f}%,"
                         f" {min(per_round):+.1f}..{max(per_round):+.1f})")
        mean_abs = statistics.fmean(abs(e) for e in pooled_errors)
        print(f"{name:>9}: " + "; ".join(cells) + f"; mean |pooled error| {mean_abs:.1f}%")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", help="use this profile (one round, no benchmarking)")
    parser.add_argument("--rounds", type=int, default=8, help="benchmark+measure rounds (8)")
    parser.add_argument("--launch", choices=("separate", "one"), default="separate",
                        help="1x2 and 1x4 from separate -n 2 and -n 4 launches, or both "
                             "from one -n 4 launch (separate)")
    parser.add_argument("--bench-reps", type=int, default=50000,
                        help="MPIBench repetitions per size, within a budget of 8 s per "
                             "test and placement (50000)")
    parser.add_argument("--start", choices=("chain", "barrier", "time"), default="chain",
                        help="MPIBench's repetition start (chain)")
    parser.add_argument("--sizes", default="0,1024,16384", help="ping-pong sizes (bytes)")
    parser.add_argument("--seconds", type=float, default=1.0,
                        help="length of one real ping-pong run (1 s)")
    parser.add_argument("--repeats", type=int, default=5, help="real runs per size (5)")
    parser.add_argument("--reps", type=int, default=4000,
                        help="iterations of one simulated ping-pong (4000)")
    parser.add_argument("--runs", type=int, default=3, help="simulated runs per size")
    parser.add_argument("--source", choices=("empirical", "fitted"), default="empirical")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    sizes = [int(s) for s in args.sizes.split(",")]
    bench_sizes = ",".join(str(s) for s in sorted({*sizes, 65536}))
    workdir = Path(tempfile.mkdtemp(prefix="pingpong-"))
    rounds = []
    for index in range(1 if args.profile else args.rounds):
        print(f"\n== round {index + 1}", flush=True)
        profile = Path(args.profile) if args.profile else workdir / f"round{index + 1}.db"
        if not args.profile:
            benchmark(profile, bench_sizes, args)
        rounds.append(one_round(profile, args, sizes))
    summarise(rounds, sizes)
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), float(sys.argv[3]))
    else:
        sys.exit(main())
