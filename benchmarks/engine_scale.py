"""Time and memory of one run at very large rank counts (issue 25).

Runs, each in a fresh process (so its peak resident set is its own), one
8-byte ``MPI_Allreduce`` and ``--iterations`` of the Jacobi benchmark's
halo exchange (:mod:`engine_jacobi`) on the perseus machine (Hockney, two
ranks per node), and prints wall and CPU seconds, the peak resident set and
which engine ran (a run that leaves the compiled core says why).

    .venv/bin/python benchmarks/engine_scale.py [--ranks 65536 1048576]
        [--cases allreduce jacobi] [--iterations 1] [--ppn 16]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _one(case: str, numprocs: int, iterations: int, ppn: int | None) -> dict:
    """Simulate ``case`` once in this process; its figures."""
    sys.path.insert(0, str(HERE))
    from engine_jacobi import jacobi_model

    from pevpm.machine.presets import parse_machine
    from pevpm.model.builder import ModelBuilder
    from pevpm.vm.kernel.fastengine import simulate

    if case == "allreduce":
        b = ModelBuilder()
        b.collective("MPI_Allreduce", 8)
        model = b.build()
    else:
        model = jacobi_model(iterations)
    start, cpu = time.perf_counter(), time.process_time()
    run = simulate(model, numprocs, parse_machine("perseus", ppn=ppn))
    return {"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "messages": run.messages_simulated, "makespan": run.makespan,
            "engine": run.engine_note or "compiled core"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[65536, 1048576])
    parser.add_argument("--cases", nargs="+", default=["allreduce", "jacobi"],
                        choices=["allreduce", "jacobi"])
    parser.add_argument("--iterations", type=int, default=1, help="Jacobi iterations")
    parser.add_argument("--ppn", type=int, help="ranks per node (perseus: 2; the single "
                        "switch builds at most 131,072 nodes)")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)   # CASE RANKS: the child
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_one(args.one[0], int(args.one[1]), args.iterations, args.ppn)))
        return
    print(f"{'case':>10} {'ranks':>9} {'messages':>10} {'wall s':>8} {'CPU s':>8} "
          f"{'peak RSS MB':>12} {'makespan s':>11}  engine")
    for n in args.ranks:
        for case in args.cases:
            ppn = ["--ppn", str(args.ppn)] if args.ppn else []
            child = subprocess.run([sys.executable, __file__, "--one", case, str(n),
                                    "--iterations", str(args.iterations), *ppn],
                                   capture_output=True, text=True, check=False)
            if child.returncode:
                print(f"{case:>10} {n:>9}  failed: {child.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads(child.stdout)
            print(f"{case:>10} {n:>9} {r['messages']:>10} {r['wall']:>8.1f} {r['cpu']:>8.1f} "
                  f"{r['rss_mb']:>12.0f} {r['makespan']:>11.6f}  {r['engine']}")


if __name__ == "__main__":
    main()
