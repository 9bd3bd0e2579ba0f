"""Speed of the PEVPM engine on the thesis's Jacobi model (Figure 86).

Simulates 100 iterations of the even/odd halo exchange (each rank sends two
and receives two rows per iteration) at 64 and 1024 ranks on a Hockney
machine, and prints matched messages per second of wall time and of CPU time on the compiled
core (the pure-Python engine when it is not built)
(the process's own CPU seconds: steadier on a shared machine), the peak
memory the run allocated (tracemalloc, in a separate measured run; ``--untraced``
skips it, slow at 65,536 ranks), the process's peak resident set so far, and
a note when a run did not run on the compiled core (and why).

    PYTHONPATH=src python benchmarks/engine_jacobi.py [--ranks 64 1024] [--repeats 3]
        [--iterations 100] [--untraced]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
import tracemalloc

from pevpm.machine.comm_models import Hockney
from pevpm.machine.machine import Machine
from pevpm.machine.topology import Topology
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel.fastengine import simulate

ROW = "xsize * sizeof(float)"


def jacobi_model(iterations: int, t: float = 3.24, xsize: int = 256):
    """The thesis's Figure 86 Jacobi: even/odd blocking halo exchange, then
    ``Serial t/numprocs`` (numprocs even)."""
    b = ModelBuilder(constants={"xsize": xsize}, parameters={"t": t})
    with b.loop(iterations):
        with b.runon() as parity:
            with parity.case("procnum % 2 == 0"):
                with b.on_ranks("procnum != 0"):
                    b.send(ROW, dest="procnum - 1")
                b.send(ROW, dest="procnum + 1")
                b.recv(ROW, source="procnum + 1")
                with b.on_ranks("procnum != 0"):
                    b.recv(ROW, source="procnum - 1")
            with parity.case("procnum % 2 != 0"):
                with b.on_ranks("procnum != numprocs - 1"):
                    b.recv(ROW, source="procnum + 1")
                b.recv(ROW, source="procnum - 1")
                b.send(ROW, dest="procnum - 1")
                with b.on_ranks("procnum != numprocs - 1"):
                    b.send(ROW, dest="procnum + 1")
        b.serial("parameter t / numprocs")
    return b.build()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[64, 1024])
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--untraced", action="store_true", help="no tracemalloc run")
    args = parser.parse_args()
    model = jacobi_model(args.iterations)
    machine = Machine(Hockney(latency=5e-5, bandwidth=1.0e8), Topology(procs_per_node=2))
    print(f"{'ranks':>6} {'messages':>9} {'wall s':>8} {'msgs/s wall':>12} {'cpu s':>8} "
          f"{'msgs/s cpu':>11} {'peak MiB':>9} {'RSS MiB':>8} {'makespan s':>11}"
          f"   (medians of {args.repeats}, CPU range)")
    for n in args.ranks:
        walls, cpus = [], []
        for _ in range(args.repeats):
            start, cpu = time.perf_counter(), time.process_time()
            run = simulate(model, n, machine)
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        peak = float("nan")
        if not args.untraced:
            tracemalloc.start()
            simulate(model, n, machine)
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        print(f"{n:>6} {run.messages_simulated:>9} {wall:>8.3f} "
              f"{run.messages_simulated / wall:>12.0f} {cpu:>8.3f} "
              f"{run.messages_simulated / cpu:>11.0f} {peak:>9.1f} {rss:>8.0f} "
              f"{run.makespan:>11.4f}  CPU s {min(cpus):.3f}-{max(cpus):.3f}")
        if run.engine_note:
            print(f"note: {n} ranks: {run.engine_note}")


if __name__ == "__main__":
    main()
