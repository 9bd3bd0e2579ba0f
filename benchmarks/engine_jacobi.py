"""Speed of the PEVPM engine on the thesis's Jacobi model (Figure 86).

Simulates 100 iterations of the even/odd halo exchange (each rank sends two
and receives two rows per iteration) at 64 and 1024 ranks on a Hockney
machine, and prints matched messages per second of wall time and of CPU time
(the process's own CPU seconds: steadier on a shared machine) and the peak
memory the run allocated (tracemalloc, in a separate measured run).

    PYTHONPATH=src python benchmarks/engine_jacobi.py [--ranks 64 1024] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "vm"))

from engine_models import jacobi_model

from pevpm.machine.comm_models import Hockney
from pevpm.machine.machine import Machine
from pevpm.machine.topology import Topology
from pevpm.vm.engine import simulate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[64, 1024])
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    model = jacobi_model(args.iterations)
    machine = Machine(Hockney(latency=5e-5, bandwidth=1.0e8), Topology(procs_per_node=2))
    print(f"{'ranks':>6} {'messages':>9} {'wall s':>8} {'msgs/s wall':>12} {'cpu s':>8} "
          f"{'msgs/s cpu':>11} {'peak MiB':>9} {'makespan s':>11}   (medians of {args.repeats})")
    for n in args.ranks:
        walls, cpus = [], []
        for _ in range(args.repeats):
            start, cpu = time.perf_counter(), time.process_time()
            run = simulate(model, n, machine)
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
        tracemalloc.start()
        simulate(model, n, machine)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        print(f"{n:>6} {run.messages_simulated:>9} {wall:>8.3f} "
              f"{run.messages_simulated / wall:>12.0f} {cpu:>8.3f} "
              f"{run.messages_simulated / cpu:>11.0f} {peak / 2**20:>9.1f} "
              f"{run.makespan:>11.4f}")


if __name__ == "__main__":
    main()
