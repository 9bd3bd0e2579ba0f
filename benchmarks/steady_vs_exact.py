"""Steady-state loops against the whole simulation: the same prediction with
the loop extrapolated and with every iteration simulated (``exact=True``).

For each case (an example model, a machine, ranks, parameters, runs) prints
the extrapolated and exact mean and standard deviation, their differences
relative to the exact mean, from which iteration the loop was extrapolated
(or why not), the estimated error and the CPU seconds of both.  Cases are
``EXAMPLE:MACHINE:RANKS:RUNS[:NAME=VALUE...]``; the default list is the
three examples at 4 ranks (as tests/vm/test_steady.py checks them) and the
Jacobi at 256 ranks.

    PYTHONPATH=src python benchmarks/steady_vs_exact.py
    PYTHONPATH=src python benchmarks/steady_vs_exact.py jacobi.c:default:1024:16 --ppn 1
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

from pevpm.machine.presets import parse_machine
from pevpm.model.loader import load_model
from pevpm.vm.strategies.montecarlo import predict

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CASES = (
    "jacobi:perseus:4:4:iterations=1000",
    "jacobi:default:4:40:iterations=1000:t_iter=2e-3",
    "fft2d:perseus:4:10:iterations=600:t_sd=1e-4",
    "fft2d:default:4:10:iterations=600",
    "bag_of_tasks:default:4:3:jobs=300",
    "jacobi:perseus:256:2:iterations=1000",
    "jacobi:default:256:20:iterations=1000",
)


def example(name: str):
    """An example's model: ``jacobi`` (examples/jacobi/model.py) or a file
    name inside examples/ such as ``jacobi.c``."""
    if "." in name:
        return load_model(str(EXAMPLES / name.split(".")[0] / name))
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / name / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.model().build()


def timed(model, ranks, machine, runs, params, exact):
    start = time.process_time()
    p = predict(model, ranks, machine, runs=runs, seed=3, params=params, workers=1, exact=exact)
    return p, time.process_time() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", default=CASES)
    parser.add_argument("--ppn", type=int, help="ranks per node of every machine")
    args = parser.parse_args(argv)
    print(f"{'case':<44} {'extrap. mean':>12} {'exact mean':>12} {'diff':>7} {'sd diff':>7} "
          f"{'from':>5} {'est.err':>7} {'CPU s':>11}")
    for case in args.cases:
        name, machine_name, ranks, runs, *defines = case.split(":")
        params = {k: float(v) for k, v in (d.split("=") for d in defines)}
        model, machine = example(name), parse_machine(machine_name, ppn=args.ppn)
        fast, fast_cpu = timed(model, int(ranks), machine, int(runs), params, False)
        exact, exact_cpu = timed(model, int(ranks), machine, int(runs), params, True)
        x = fast.extrapolation or {"extrapolated": False, "reason": "no long loop"}
        where = (f"{x['from_iteration']:>5} {x['estimated_error']:>7.2%}" if x["extrapolated"]
                 else f"{'-':>5} {'-':>7}")
        print(f"{case:<44} {fast.mean:>12.6g} {exact.mean:>12.6g} "
              f"{fast.mean / exact.mean - 1:>+7.2%} {(fast.sd - exact.sd) / exact.mean:>+7.2%} "
              f"{where} {fast_cpu:>5.1f}/{exact_cpu:<5.1f}", flush=True)
        if not x["extrapolated"]:
            print(f"    not extrapolated: {x['reason']}")
        elif x.get("wave_settles_by"):
            print(f"    through a start-up wave (last rank settles near iteration "
                  f"{x['wave_settles_by']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
