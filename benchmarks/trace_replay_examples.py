"""Trace the three examples on 2 ranks, replay each trace on a measured profile, extract models.

For every example and repeat: ``pevpm trace`` runs the program (the same
arguments and environment as ``pevpm validate``), then the trace is replayed
on ``--machine`` (3 Monte Carlo runs) and the predicted mean is compared
with the traced run time (MPI_Init to MPI_Finalize); the same replay
without the traced delays inside MPI calls (``--no-delays``, 3 runs) shows
how much of the run those were, and ``pevpm extract``'s compression of the
same trace (MPI calls in, model lines out) is printed too.  Prints each
pair with the load average at the time and, per example and rank count,
the median error and its range.

Run: PYTHONPATH=src python benchmarks/trace_replay_examples.py --machine machine.db
     [--repeats 3] [--quick] [-n 2,4]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from pevpm.machine.collectives import CollectiveConfig
from pevpm.machine.presets import parse_machine
from pevpm.trace.extract.extract import extract
from pevpm.trace.otf2.read import read_archive
from pevpm.trace.replay.replay import replay
from pevpm.validate.cases import CASES, ProblemSize
from pevpm.validate.runner import find_mpiexec

ROOT = Path(__file__).resolve().parents[1]


def case_machine(base, case):
    """``base`` with the example's collective algorithms (the FFT's pairwise alltoall)."""
    if not case.collectives:
        return base
    return replace(base, collectives=CollectiveConfig.parse([case.collectives],
                                                            base.collectives))


def trace_example(name: str, nprocs: int, size: ProblemSize, out: Path) -> None:
    case = CASES[name]
    env = {**os.environ, **case.environment}
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    program = ROOT / "examples" / name / f"{name}.py"
    subprocess.run([sys.executable, "-m", "pevpm", "trace", "-o", str(out), "--", find_mpiexec(),
                    "-n", str(nprocs), sys.executable, str(program),
                    *case.program_args(size)], env=env, check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("-n", default="2", help="rank counts, comma-separated (2)")
    parser.add_argument("--quick", action="store_true", help="half-size problems")
    parser.add_argument("--examples", default=",".join(CASES))
    parser.add_argument("--keep", metavar="DIR", help="keep the traces in DIR")
    args = parser.parse_args()
    size = ProblemSize.quick() if args.quick else ProblemSize()
    base = parse_machine(args.machine)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        for nprocs in (int(n) for n in args.n.split(",")):
            for name in args.examples.split(","):
                replay_example(name, nprocs, size, case_machine(base, CASES[name]),
                               args.repeats, Path(args.keep or tmp))
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def replay_example(name, nprocs, size, machine, repeats, tmp) -> None:
    errors, dropped = [], []
    for i in range(repeats):
        out = tmp / f"{name}-{nprocs}-{i}"
        load = os.getloadavg()[0]
        trace_example(name, nprocs, size, out)
        trace = read_archive(out)
        start = time.perf_counter()
        result = replay(trace, machine, runs=3, seed=i)
        took = time.perf_counter() - start
        quiet = replay(trace, machine, runs=3, seed=i, delays=False)
        errors.append(result.error)
        dropped.append(quiet.error)
        model = extract(trace)
        delay = max(r.delay for r in result.ranks)
        print(f"{name:13} n={nprocs} load {load:4.1f} traced {result.traced:.4f} s  predicted "
              f"{result.prediction.mean:.4f} s (sd {result.prediction.sd:.2g})  "
              f"{result.error:+.1%}; without the delays ({delay:.3f} s on the most delayed "
              f"rank) {quiet.error:+.1%}  [replay took {took:.1f} s; extract: "
              f"{model.events} calls -> {model.lines} lines]", flush=True)
    print(f"{name:13} n={nprocs} median error {statistics.median(errors):+.1%} "
          f"({min(errors):+.1%}..{max(errors):+.1%}); without the delays "
          f"{statistics.median(dropped):+.1%} ({min(dropped):+.1%}..{max(dropped):+.1%})",
          flush=True)


if __name__ == "__main__":
    main()
