"""Acceptance check for CPU sharing (issue 14): more ranks than cores.

Runs ``benchmarks/oversubscribed/master_worker.py`` for real under
``mpiexec -n RANKS`` (8 by default, on however many cores this machine has),
takes the median of ``--repeats`` runs, and predicts the same run with its
PEVPM model (``benchmarks/oversubscribed/model.py``) on this host: every rank
on one node with the cores this process may use and the MPI wait style of
:func:`pevpm.host.mpi_wait_style`.  It prints both, the error, and the
prediction without CPU sharing (what pevpm predicted before cores existed).

The model's two parameters are measured here, alone, before each real run
(calibration interleaved with the runs, so both see the same machine): the
master's CPU seconds per task and a worker's real sleep per task.

    PYTHONPATH=src python benchmarks/accuracy_oversubscribed.py --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent / "oversubscribed"
sys.path.insert(0, str(HERE))

from master_worker import generate

from pevpm.host import mpi_wait_style, probe_machine, usable_cores
from pevpm.machine.profile_model import machine_from_profile
from pevpm.machine.topology import Topology
from pevpm.model.loader import load_model
from pevpm.validate.runner import find_mpiexec
from pevpm.vm.strategies.montecarlo import predict


def median_seconds(action, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def real_run(ranks: int, tasks: int, spins: int, nap: float) -> float:
    out = subprocess.run([find_mpiexec(), "-n", str(ranks), sys.executable,
                          str(HERE / "master_worker.py"), str(tasks), str(spins), str(nap)],
                         capture_output=True, text=True, check=True, timeout=600)
    return float(out.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--tasks", type=int, default=400)
    parser.add_argument("--spins", type=int, default=40000,
                        help="additions per task on the master (about 1 ms in CPython)")
    parser.add_argument("--nap", type=float, default=0.005, help="worker sleep per task (s)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--runs", type=int, default=20, help="Monte Carlo runs")
    args = parser.parse_args()

    before = probe_machine()
    print(f"machine before: {before.describe()}")
    task_times, nap_times, real = [], [], []
    for i in range(args.repeats):
        task_times.append(median_seconds(lambda: generate(args.spins), 30))
        nap_times.append(median_seconds(lambda: time.sleep(args.nap), 10))
        real.append(real_run(args.ranks, args.tasks, args.spins, args.nap))
        print(f"  run {i + 1}: {real[-1]:.4f} s (task {task_times[-1] * 1e3:.3f} ms alone, "
              f"sleep {nap_times[-1] * 1e3:.3f} ms)", flush=True)
    after = probe_machine()
    print(f"machine after:  {after.describe()}")

    params = {"tasks": args.tasks, "t_task": statistics.median(task_times),
              "t_nap": statistics.median(nap_times)}
    model = load_model(str(HERE / "model.py"))
    cores = usable_cores()
    shared = replace(machine_from_profile("default"),
                     topology=Topology(procs_per_node=None, nodes=1, cores=cores,
                                       wait=mpi_wait_style()))
    alone = replace(shared, topology=Topology(procs_per_node=None, nodes=1))
    measured = statistics.median(real)
    print(f"{args.ranks} ranks on {cores} cores ({shared.topology.wait} waits), "
          f"{args.tasks} tasks, t_task {params['t_task'] * 1e3:.3f} ms, "
          f"t_nap {params['t_nap'] * 1e3:.3f} ms")
    print(f"measured (median of {args.repeats}): {measured:.4f} s")
    for label, machine in (("predicted", shared), ("without CPU sharing", alone)):
        p = predict(model, args.ranks, machine, runs=args.runs, seed=0, params=params)
        print(f"{label}: {p.mean:.4f} s  error {(p.mean - measured) / measured:+.1%}")


if __name__ == "__main__":
    main()
