"""The Jacobi's last percent against SimGrid SMPI: where each rank starts.

benchmarks/topology_vs_smpi.py times each rank of topo_kernels.c from its
own exit from the opening ``MPI_Barrier`` and reports the largest; SMPI's
barrier lets the ranks go up to 16 us apart at 1,024 ranks (a tree of
messages), while pevpm's model starts every rank at 0.  This runs
benchmarks/smpi/topo_jacobi_probe.c (the same Jacobi, each rank printing
when it left the barrier and when it ended) to read those exits, then
pevpm's Jacobi (20 iterations, flows from the match, ``"simgrid"``
sharing) twice: every rank from 0, and every rank idle until its SMPI exit,
each rank timed from its own start as SMPI times it.  Prints both beside
SMPI's figure from the probe's run.

    PYTHONPATH=src python benchmarks/topology_jacobi_vs_smpi.py --ranks 64,256,1024
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
from engine_vs_smpi import SMPI_CONFIG, ensure_smpi
from topology_vs_smpi import kernel_model, platform, smpi_program

from pevpm.machine.presets import parse_machine
from pevpm.vm.kernel import fastengine

ITERATIONS = 20


def smpi_probe(binary: Path, kind: str, numprocs: int, work: Path) -> tuple[list[float], float]:
    """Each rank's barrier exit in SMPI (seconds), and the largest time from
    a rank's exit to its end (topo_kernels.c's figure)."""
    hosts = work / f"hosts{numprocs}"
    hosts.write_text("".join(f"node-{i}\n" for i in range(numprocs)))
    out = subprocess.run(["smpirun", "-np", str(numprocs), "-platform",
                          str(platform(kind, numprocs)), "-hostfile", str(hosts), *SMPI_CONFIG,
                          str(binary), str(ITERATIONS)],
                         capture_output=True, text=True, check=True).stdout
    times = {"start": [0.0] * numprocs, "end": [0.0] * numprocs}
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0] in times:
            times[fields[0]][int(fields[1])] = float(fields[2])
    starts = times["start"]
    return starts, max(end - start for start, end in zip(starts, times["end"]))


def pevpm_jacobi(kind: str, numprocs: int, starts: list[float] | None) -> float:
    """The largest time from a rank's start to its end in pevpm's Jacobi."""
    machine = parse_machine("constant:latency=0,eager=65536",
                            topology=str(platform(kind, numprocs)))
    machine = replace(machine, flow_start="match", flow_sharing="simgrid")
    run = fastengine.simulate(kernel_model("jacobi", numprocs, starts, ITERATIONS), numprocs,
                              machine, rng=np.random.default_rng(0))
    return max(rank.finish - (starts[r] if starts else 0.0) for r, rank in enumerate(run.ranks))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="64,256,1024")
    parser.add_argument("--kinds", default="fat-tree,torus,dragonfly")
    args = parser.parse_args(argv)
    if not ensure_smpi():                   # it says why
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        binary = smpi_program("topo_jacobi_probe.c", work)
        print(f"Jacobi, {ITERATIONS} iterations; largest time from a rank's start to its end, us")
        print(f"{'network':>10} {'ranks':>6} {'exits (us)':>14} {'SMPI':>9} {'pevpm at 0':>11} "
              f"{'diff':>7} {'pevpm at exits':>15} {'diff':>7}")
        for kind in args.kinds.split(","):
            for numprocs in (int(n) for n in args.ranks.split(",")):
                starts, smpi = smpi_probe(binary, kind, numprocs, work)
                at_zero = pevpm_jacobi(kind, numprocs, None)
                at_exits = pevpm_jacobi(kind, numprocs, starts)
                print(f"{kind:>10} {numprocs:>6} {min(starts) * 1e6:>6.1f}-{max(starts) * 1e6:<7.1f}"
                      f"{smpi * 1e6:>9.3f} {at_zero * 1e6:>11.3f} "
                      f"{(at_zero / smpi - 1) * 100:>+6.1f}% {at_exits * 1e6:>15.3f} "
                      f"{(at_exits / smpi - 1) * 100:>+6.1f}%", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
