"""Predict a real 2-rank ping-pong from a real MPIBench profile, and compare.

What it does (each step prints what it runs):

1. unless ``--profile`` names an existing one, benchmark this machine:
   ``mpiexec -n 4 python -m pevpm bench --quick --tests isend,isendlocal``
   (and with ``--with-n2`` also a 2-rank run into the same profile, which
   adds the 1x2 placement: the contention a ping-pong actually sees);
2. ``pevpm fit`` the profile (so ``--source fitted`` works too);
3. run a real ping-pong under ``mpiexec -n 2`` (this file with ``--worker``):
   rank 0 sends ``size`` bytes, rank 1 sends them back; the mean round trip
   over ``--reps`` iterations, repeated ``--repeats`` times (median);
4. simulate the same ping-pong in the PEVPM virtual machine with the
   profile-driven models (``full`` and the baselines) and print the
   predicted mean round trip and its error against the measured one.

    PYTHONPATH=src python benchmarks/fit_pingpong.py
    PYTHONPATH=src python benchmarks/fit_pingpong.py --profile m.db --sizes 0,1024,16384
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


def worker(size: int, reps: int, warmup: int) -> None:
    """The real ping-pong (run under mpiexec -n 2); rank 0 prints the mean round trip."""
    import numpy as np
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    buffer = np.zeros(max(size, 1), dtype=np.uint8)
    view = [buffer[:size], MPI.BYTE] if size else [buffer, 0, MPI.BYTE]
    partner = 1 - comm.rank

    def run(count: int) -> float:
        comm.Barrier()
        start = MPI.Wtime()
        for _ in range(count):
            if comm.rank == 0:
                comm.Send(view, dest=partner)
                comm.Recv(view, source=partner)
            else:
                comm.Recv(view, source=partner)
                comm.Send(view, dest=partner)
        return MPI.Wtime() - start

    run(warmup)
    elapsed = run(reps)
    if comm.rank == 0:
        print(elapsed / reps)


def measure(size: int, reps: int, repeats: int) -> tuple[float, float, float]:
    """Median, smallest and largest over ``repeats`` runs of the real ping-pong's
    mean round trip (seconds): the spread shows how repeatable the target is."""
    means = []
    for _ in range(repeats):
        out = subprocess.run(
            [MPIEXEC, "-n", "2", PYTHON, __file__, "--worker", str(size), str(reps)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        means.append(float(out.split()[-1]))
    return statistics.median(means), min(means), max(means)


def pingpong_model(size: int, reps: int):
    from pevpm.model.builder import ModelBuilder

    b = ModelBuilder()
    with b.loop(reps), b.runon() as ranks:
        with ranks.case("procnum == 0"):
            b.send(size, dest=1)
            b.recv(size, source=1)
        with ranks.case("procnum == 1"):
            b.recv(size, source=0)
            b.send(size, dest=0)
    return b.build()


def predict(comm_model, size: int, reps: int, runs: int, seed: int) -> float:
    """Mean predicted round trip over ``runs`` Monte Carlo runs of ``reps`` iterations."""
    import numpy as np

    from pevpm.machine.machine import Machine
    from pevpm.machine.topology import Topology
    from pevpm.vm.engine import simulate

    machine = Machine(comm_model, Topology(procs_per_node=2))
    model = pingpong_model(size, reps)
    seeds = np.random.SeedSequence(seed).spawn(runs)
    spans = [simulate(model, 2, machine, rng=np.random.default_rng(s)).makespan for s in seeds]
    return statistics.fmean(spans) / reps


def run(command: list[str]) -> None:
    print("$", " ".join(command), flush=True)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", help="existing profile (default: benchmark now)")
    parser.add_argument("--with-n2", action="store_true", help="also benchmark 2 ranks (1x2)")
    parser.add_argument(
        "--bench-reps", type=int, help="MPIBench repetitions per size (default: --quick's 100)"
    )
    parser.add_argument("--sizes", default="0,1024,16384", help="ping-pong sizes (bytes)")
    parser.add_argument("--reps", type=int, default=4000, help="ping-pong iterations")
    parser.add_argument("--repeats", type=int, default=3, help="real runs per size (median)")
    parser.add_argument("--runs", type=int, default=5, help="simulated runs per size")
    parser.add_argument("--source", choices=("empirical", "fitted"), default="empirical")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from pevpm.machine.profile import Profile
    from pevpm.machine.profile_comm import compare_models

    profile = Path(args.profile) if args.profile else Path(tempfile.mkdtemp()) / "machine.db"
    if not profile.exists():
        bench = [
            PYTHON,
            "-m",
            "pevpm",
            "bench",
            "--quick",
            "--tests",
            "isend,isendlocal",
            "--no-progress",
            "-o",
            str(profile),
        ]
        if args.bench_reps:
            bench += ["--reps", str(args.bench_reps), "--budget", "60s"]
        run([MPIEXEC, "-n", "4", *bench])
        if args.with_n2:
            run([MPIEXEC, "-n", "2", *bench])
    run(
        [
            PYTHON,
            "-m",
            "pevpm",
            "fit",
            str(profile),
            "--tests",
            "isend,isendlocal",
            "--no-plots",
            "--no-progress",
        ]
    )
    with Profile.open(profile) as opened:
        placements = sorted({key.nxp for key in opened.blocks(test="isend")})
    print(f"profile {profile}: isend placements {', '.join(placements)}")

    models = compare_models(profile, source=args.source)
    sizes = [int(s) for s in args.sizes.split(",")]
    names = list(models)
    header = f"{'size':>6} {'measured':>11} {'real runs range':>19} "
    print(header + " ".join(f"{n:>17}" for n in names))
    errors = {name: [] for name in names}
    for size in sizes:
        measured, low, high = measure(size, args.reps, args.repeats)
        cells = []
        for name in names:
            predicted = predict(models[name], size, args.reps, args.runs, args.seed)
            error = 100 * (predicted - measured) / measured
            errors[name].append(error)
            cells.append(f"{predicted * 1e6:8.2f}us {error:+6.1f}%")
        spread = f"{low * 1e6:.1f}-{high * 1e6:.1f}us"
        line = f"{size:>6} {measured * 1e6:9.2f}us {spread:>19} "
        print(line + " ".join(f"{c:>17}" for c in cells), flush=True)
    for name in names:
        mean_abs = statistics.fmean(abs(e) for e in errors[name])
        print(f"{name}: mean |error| {mean_abs:.1f}% over sizes {args.sizes}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), warmup=200)
    else:
        sys.exit(main())
