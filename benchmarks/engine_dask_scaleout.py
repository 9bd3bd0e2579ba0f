"""Monte Carlo scale-out: the same prediction on a local Dask cluster of 1 and 2 workers.

Predicts the Jacobi example (``examples/jacobi/jacobi.c``) with ``--runs``
Monte Carlo runs on a fresh local Dask cluster of each worker count (one
thread per worker process) and prints the wall time, the speed-up over one
worker and whether the predictions agree (they must: every run draws from
its own seeded stream whatever executes it).  ``--exact`` simulates every
iteration (the default extrapolates the steady loop, see docs/engine.md).

On a machine shared with other work the wall time says as much about the
other work as about Dask, so the benchmark also reads the CPU seconds the
workers spent (``time.process_time`` in each worker, before and after) and
prints them with the load average:

* ``worker CPU s``: the simulation work, summed over the workers (it should
  not grow with the number of workers: what it grows by is the cost of
  spreading the runs);
* ``cores got``: worker CPU seconds per wall second, how many cores the
  workers actually had (2.0 would be two free cores);
* ``CPU speed-up``: ``workers x (1-worker CPU s) / (this CPU s)``, the
  speed-up if each worker had a core to itself for the whole time;
* ``per core``: the wall speed-up divided by the cores the workers got
  relative to the 1-worker run, i.e. how well the work spread over the
  cores that were there.

Each worker runs a tiny simulation of the model before the clock starts
(imports, the compiled core, the machine's tables: cluster start-up
excluded).

    PYTHONPATH=src python benchmarks/engine_dask_scaleout.py --ranks 64 --runs 100 --exact
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from pevpm.machine.presets import parse_machine
from pevpm.model.loader import load_model
from pevpm.vm.strategies.montecarlo import predict, simulate_runs

MODEL = Path(__file__).resolve().parents[1] / "examples" / "jacobi" / "jacobi.c"


def _warm(model, machine) -> float:
    """Run a two-rank, two-iteration simulation in a worker (imports, the
    core, the machine's tables) and say the worker's CPU seconds so far."""
    simulate_runs(model, 2, machine, {"iterations": 2}, 0, 0, 1)
    return time.process_time()


def _cpu_seconds() -> float:
    return time.process_time()


def measure(workers: int, model, machine, args, params) -> dict:
    """One prediction on a fresh local cluster of ``workers`` processes."""
    from distributed import Client

    with Client(n_workers=workers, threads_per_worker=1, processes=True,
                dashboard_address=":0") as client:
        client.wait_for_workers(workers)
        before = client.run(_warm, model, machine)
        load = os.getloadavg()[0]
        start, own = time.perf_counter(), time.process_time()
        prediction = predict(model, args.ranks, machine, runs=args.runs, seed=1, params=params,
                             executor=client.get_executor(), workers=workers,
                             exact=args.exact)
        wall, own = time.perf_counter() - start, time.process_time() - own
        after = client.run(_cpu_seconds)
    cpu = sum(after[w] - before[w] for w in after)
    return {"workers": workers, "wall": wall, "cpu": cpu, "client": own, "prediction": prediction,
            "load": (load, os.getloadavg()[0])}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--machine", default="default")
    parser.add_argument("--ppn", type=int, default=1,
                        help="ranks per node (1: one rank per node, as docs/engine.md measures)")
    parser.add_argument("--workers", default="1,2", help="worker counts to compare (1,2)")
    parser.add_argument("--exact", action="store_true", help="simulate every iteration")
    args = parser.parse_args(argv)
    params = {"iterations": args.iterations}
    model = load_model(str(MODEL), params)
    machine = parse_machine(args.machine, ppn=args.ppn)
    print(f"Jacobi {args.ranks} ranks, {args.iterations} iterations, {args.runs} runs, "
          f"machine {args.machine} --ppn {args.ppn}{', exact' if args.exact else ''}; "
          "local Dask clusters")
    print(f"{'workers':>7} {'wall s':>7} {'speed-up':>8} {'worker CPU s':>12} {'cores got':>9} "
          f"{'CPU speed-up':>12} {'per core':>8} {'client CPU s':>12} {'load':>9} "
          f"{'mean s':>10}  runs")
    base = None
    for workers in [int(w) for w in args.workers.split(",")]:
        m = measure(workers, model, machine, args, params)
        base = base or m
        speedup = base["wall"] / m["wall"]
        cores, base_cores = m["cpu"] / m["wall"], base["cpu"] / base["wall"]
        cpu_speedup = workers * base["cpu"] / m["cpu"] / base["workers"]
        per_core = speedup / (cores / base_cores)
        same = ("same runs" if m["prediction"].makespans.tolist()
                == base["prediction"].makespans.tolist() else "RUNS DIFFER")
        print(f"{workers:>7} {m['wall']:>7.2f} {speedup:>8.2f} {m['cpu']:>12.2f} {cores:>9.2f} "
              f"{cpu_speedup:>12.2f} {per_core:>8.2f} {m['client']:>12.2f} "
              f"{m['load'][0]:>4.1f}-{m['load'][1]:<4.1f} {m['prediction'].mean:>10.6f}  {same}",
              flush=True)
    print("wall: predict() on an open, warmed cluster; speed-up: 1-worker wall / this wall; "
          "load: 1-minute load average before-after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
