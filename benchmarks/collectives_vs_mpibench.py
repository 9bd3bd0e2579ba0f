"""Predicted vs measured per-rank completion of MPI_Bcast and MPI_Alltoall.

Measures this machine with MPIBench under ``mpiexec -n 4`` (isend and
isendlocal point-to-point tests, bcast and alltoall collectives), or reads
an existing profile, then predicts each collective by running the chosen
point-to-point algorithm in the virtual machine with message times
resampled from the measured isend / isendlocal distributions, and prints
measured and predicted mean completion time per rank and the error.

    PYTHONPATH=src python benchmarks/collectives_vs_mpibench.py \
        --profile /tmp/coll4.db --sizes 1024,65536 --runs 400 --seed 0
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import scipy.stats as st

from pevpm.machine.comm_models import PerSizeDistribution
from pevpm.machine.machine import Machine
from pevpm.machine.topology import Topology
from pevpm.model.builder import ModelBuilder
from pevpm.profile.store import Profile
from pevpm.vm.kernel.collectives import CollectiveConfig, algorithm_for
from pevpm.vm.kernel.fastengine import simulate

TESTS = {"MPI_Bcast": "bcast", "MPI_Alltoall": "alltoall"}
#: ``pevpm bench`` without the rest of the command line's modules.
_BENCH = ("import argparse, sys; from pevpm.bench import commands; "
          "p = argparse.ArgumentParser(); commands.register(p.add_subparsers()); "
          "a = p.parse_args(); sys.exit(a.func(a))")


def measure(path: Path, numprocs: int, sizes: list[int], reps: int) -> None:
    """Run MPIBench for the tests this comparison needs."""
    mpiexec = Path(sys.executable).with_name("mpiexec")
    command = [str(mpiexec), "-n", str(numprocs), sys.executable, "-c", _BENCH, "bench",
               "-o", str(path), "--tests", "isend,isendlocal,bcast,alltoalleach",
               "--sizes", ",".join(map(str, sizes)), "--reps", str(reps), "--budget", "20s",
               "--no-progress"]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))
    print("measuring:", " ".join(command[:3]), "... pevpm bench", " ".join(command[7:]))
    subprocess.run(command, check=True, env=env)


def empirical(samples: np.ndarray):
    """A scipy distribution resampling the measured times (outliers kept)."""
    return st.rv_histogram(np.histogram(samples, bins=min(200, max(10, samples.size // 20))),
                           density=False)


def predict(op: str, size: int, numprocs: int, profile: Profile, args) -> np.ndarray:
    """Per-rank completion times (runs x ranks) from a synchronised start."""
    comm = PerSizeDistribution({size: empirical(profile.samples("isend", size))},
                               local=empirical(profile.samples("isendlocal", size)))
    machine = Machine(comm, Topology(procs_per_node=numprocs), eager_limit=args.eager_limit,
                      collectives=CollectiveConfig.parse(args.coll))
    builder = ModelBuilder()
    builder.collective(op, size, root=0)
    model = builder.build()
    rng = np.random.default_rng(args.seed)
    return np.array([simulate(model, numprocs, machine, rng=rng).collectives[0].completion
                     for _ in range(args.runs)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="collectives-mpibench.db",
                        help="MPIBench profile; measured first if missing")
    parser.add_argument("-n", "--numprocs", type=int, default=4)
    parser.add_argument("--sizes", default="1024,65536",
                        help="bytes (bcast buffer; alltoall block per pair)")
    parser.add_argument("--reps", type=int, default=300, help="MPIBench repetitions")
    parser.add_argument("--runs", type=int, default=400, help="simulated calls per case")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eager-limit", type=int, default=16384,
                        help="largest message an Isend completes locally (bytes)")
    parser.add_argument("--coll", default="library=mpich", help="collective algorithm options")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    path = Path(args.profile)
    if not path.exists():
        measure(path, args.numprocs, sizes, args.reps)
    profile = Profile.open(path)
    cfg = CollectiveConfig.parse(args.coll)
    print(f"\n{'op':13} {'size':>6} {'algorithm':18} {'rank':>4} {'mean: measured':>15} "
          f"{'predicted':>10} {'error':>7} {'median: measured':>17} {'predicted':>10}")
    for op, test in TESTS.items():
        for size in sizes:
            measured = profile.samples(test, size, by_rank=True)
            predicted = predict(op, size, args.numprocs, profile, args)
            m, p = measured.mean(axis=1), predicted.mean(axis=0)
            m50, p50 = np.median(measured, axis=1), np.median(predicted, axis=0)
            name = algorithm_for(op, size, args.numprocs, cfg)
            for rank in range(args.numprocs):
                print(f"{op:13} {size:>6} {name:18} {rank:>4} {m[rank] * 1e6:>13.1f}us "
                      f"{p[rank] * 1e6:>8.1f}us {100 * (p[rank] - m[rank]) / m[rank]:>6.1f}% "
                      f"{m50[rank] * 1e6:>15.1f}us {p50[rank] * 1e6:>8.1f}us")
            error = np.mean(np.abs(p - m) / m) * 100
            print(f"{op:13} {size:>6} mean |error| per rank {error:.1f}%  "
                  f"(measured spread across ranks {m.min() * 1e6:.1f}-{m.max() * 1e6:.1f}us)\n")


if __name__ == "__main__":
    main()
