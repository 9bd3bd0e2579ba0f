"""Trace the three examples on 2 ranks, replay each trace on a measured profile, extract models.

For every example and repeat: ``pevpm trace`` runs the program (the same
arguments and environment as ``pevpm validate``), then the trace is replayed
on ``--machine`` (10 Monte Carlo runs) and the predicted mean is compared
with the traced run time (MPI_Init to MPI_Finalize); ``pevpm extract``'s
compression of the same trace (MPI calls in, model lines out) is printed
too.  Prints each pair and, per example, the median error and its range.

Run: PYTHONPATH=src python benchmarks/trace_replay_examples.py --machine machine.db
     [--repeats 3] [--quick] [-n 2]
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
from pevpm.trace.extract import extract
from pevpm.trace.otf2_read import read_archive
from pevpm.trace.replay import replay
from pevpm.validate.cases import CASES, ProblemSize

ROOT = Path(__file__).resolve().parents[1]
MPIEXEC = str(Path(sys.executable).with_name("mpiexec"))


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
    subprocess.run([sys.executable, "-m", "pevpm", "trace", "-o", str(out), "--", MPIEXEC,
                    "-n", str(nprocs), sys.executable, str(program),
                    *case.program_args(size)], env=env, check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("-n", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="half-size problems")
    parser.add_argument("--examples", default=",".join(CASES))
    args = parser.parse_args()
    size = ProblemSize.quick() if args.quick else ProblemSize()
    base = parse_machine(args.machine)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.examples.split(","):
            case = CASES[name]
            machine = case_machine(base, case)
            errors = []
            for i in range(args.repeats):
                out = Path(tmp) / f"{name}-{i}"
                trace_example(name, args.n, size, out)
                trace = read_archive(out)
                start = time.perf_counter()
                result = replay(trace, machine, runs=10, seed=i)
                took = time.perf_counter() - start
                errors.append(result.error)
                model = extract(trace)
                print(f"{name:13} n={args.n} traced {result.traced:.4f} s  predicted "
                      f"{result.prediction.mean:.4f} s (sd {result.prediction.sd:.2g})  "
                      f"{result.error:+.1%}  [replay took {took:.1f} s; extract: "
                      f"{model.events} calls -> {model.lines} lines]", flush=True)
            print(f"{name:13} median error {statistics.median(errors):+.1%} "
                  f"({min(errors):+.1%}..{max(errors):+.1%})", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
