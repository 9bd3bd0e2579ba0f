"""Speed of a Monte Carlo prediction of a calibrated CG-style model (issue 25).

A conjugate-gradient mini-app as a model whose computation is calibrated
jitter: each of 150 iterations runs three kernels (sparse matrix-vector
product, two dot products with vector updates), each a ``gamma(t, sd)``
draw, a two-neighbour halo exchange (``MPI_Irecv`` from both neighbours,
``MPI_Send`` to both, ``MPI_Wait`` on both) and three 8-byte
``MPI_Allreduce`` calls.  It predicts ``--runs`` runs at each ``--ranks``
count on a measured profile (the built-in ``default`` profile) as ``pevpm
predict`` does (a steady loop may be simulated in part and extrapolated;
``--exact`` simulates every iteration of every run), and prints the wall
seconds, the CPU seconds of this process and its workers together (steadier
on a shared machine), the mean, how the loop was run and which engine ran (the
prediction's notes).  With ``--repeats k`` each prediction is made k times
and a last line per rank count gives the median CPU and wall seconds with
their range (the machine is shared: compare with a baseline run alternated
with this one, e.g. ``PYTHONPATH=<old checkout>/src`` for the old code).

    .venv/bin/python benchmarks/engine_cg_calibrated.py [--ranks 1024] [--runs 100]
        [--workers 2] [--machine default] [--exact] [--repeats 3] [--by-iteration]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

from pevpm.machine.presets import parse_machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.strategies.montecarlo import predict

#: Calibrated kernel times (mean, sd in seconds) per iteration at 1,024 ranks.
KERNELS = {"spmv": (4.0e-4, 6.0e-5), "dot": (6.0e-5, 1.2e-5), "axpy": (9.0e-5, 1.5e-5)}
HALO_BYTES = 8 * 2048


def cg_model(iterations: int = 150, by_iteration: bool = False):
    """The CG-style model: ``iterations`` of three gamma-timed kernels, a halo
    exchange with both ring neighbours and three 8-byte Allreduces; with
    ``by_iteration`` each kernel's mean follows the iteration (1% more per
    iteration, in a cycle of four), so its draws cannot be folded per rank."""
    params = {f"t_{k}": t for k, (t, _) in KERNELS.items()}
    params.update({f"sd_{k}": sd for k, (_, sd) in KERNELS.items()})
    b = ModelBuilder(constants={"halo": HALO_BYTES}, parameters=params)
    left, right = "(procnum + numprocs - 1) % numprocs", "(procnum + 1) % numprocs"
    drift = " * (1 + (i % 4) / 100.0)" if by_iteration else ""
    with b.loop(iterations, index="i" if by_iteration else None):
        b.irecv("halo", source=left, request="from_left")
        b.irecv("halo", source=right, request="from_right")
        b.send("halo", dest=right)
        b.send("halo", dest=left)
        b.wait("from_left")
        b.wait("from_right")
        b.serial(f"gamma(parameter t_spmv{drift}, parameter sd_spmv)")
        b.collective("MPI_Allreduce", 8)
        b.serial(f"gamma(parameter t_dot{drift}, parameter sd_dot)")
        b.collective("MPI_Allreduce", 8)
        b.serial(f"gamma(parameter t_axpy{drift}, parameter sd_axpy)")
        b.collective("MPI_Allreduce", 8)
    return b.build()


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished workers (the pool is shut
    down when :func:`predict` returns, so its workers count)."""
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[1024])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--iterations", type=int, default=150)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--machine", default="default")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exact", action="store_true", help="simulate every iteration")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--by-iteration", action="store_true",
                        help="kernel means that follow the iteration (not folded)")
    args = parser.parse_args()
    model = cg_model(args.iterations, args.by_iteration)
    machine = parse_machine(args.machine)
    print(f"{'ranks':>6} {'runs':>5} {'wall s':>8} {'CPU s':>8} {'mean s':>10} {'sd s':>9} "
          f"{'messages':>11}  loop; engine")
    for n in args.ranks:
        walls, cpus = [], []
        for _ in range(args.repeats):
            start, cpu = time.perf_counter(), cpu_seconds()
            p = predict(model, n, machine, runs=args.runs, seed=args.seed,
                        workers=args.workers, bounds=False, exact=args.exact)
            walls.append(time.perf_counter() - start)
            cpus.append(cpu_seconds() - cpu)
            extrapolation = p.extrapolation or {}
            loop = ("every iteration" if not extrapolation.get("extrapolated")
                    else f"extrapolated from iteration {extrapolation['from_iteration']}")
            engine = "; ".join(getattr(p, "engine_notes", ())) or "compiled core only"
            print(f"{n:>6} {p.runs:>5} {walls[-1]:>8.1f} {cpus[-1]:>8.1f} {p.mean:>10.5f} "
                  f"{p.sd:>9.2e} {p.messages_simulated:>11}  {loop}; {engine}", flush=True)
        if args.repeats > 1:
            print(f"{n:>6} median of {args.repeats}: CPU {statistics.median(cpus):.1f} s "
                  f"({min(cpus):.1f}-{max(cpus):.1f}), {statistics.median(cpus) / args.runs:.2f} "
                  f"CPU s a run; wall {statistics.median(walls):.1f} s "
                  f"({min(walls):.1f}-{max(walls):.1f})")


if __name__ == "__main__":
    main()
