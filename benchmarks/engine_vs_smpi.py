"""Speed of the PEVPM engine on the thesis's Jacobi model, beside SimGrid SMPI.

Simulates the Jacobi iteration of the thesis (Figures 85/86: one-dimensional
decomposition, blocking sends and receives of one 256-float row to each
neighbour, even ranks sending first; 4 message operations per interior rank
per iteration; ``Serial on perseus time = 3.24/numprocs``) for 100
iterations on 64 and 1024 ranks of a Perseus-like cluster (160 us, 91 Mbit/s
Hockney links), and prints simulated messages per CPU second and the peak
resident memory of a fresh process running one simulation.  Then it compiles benchmarks/smpi/jacobi.c, the same program in
C, with ``smpicc`` and runs it under ``smpirun`` on the equivalent SimGrid
cluster (benchmarks/smpi/cluster.xml, correction factors off), and prints
the wall-time ratio pevpm/SMPI (and the CPU-time ratio, steadier on a busy
machine).

    PYTHONPATH=src python benchmarks/engine_vs_smpi.py              # 64 and 1024 ranks
    PYTHONPATH=src python benchmarks/engine_vs_smpi.py --ranks 64 --repeats 5
    PYTHONPATH=src python benchmarks/engine_vs_smpi.py --iterations 1000 --collectives \
        --memory-ranks 8192 --profile-machine

pevpm runs on the compiled core when it is built (``--engine reference`` for
the pure-Python engine); msg/s is per CPU second of the simulating process.
``--collectives`` also times one MPI_Alltoall, MPI_Allreduce and MPI_Allgather call
(1 KiB) at 64-1,024 ranks; ``--memory-ranks`` adds Jacobi rows measured by
pevpm only (messages per CPU second, peak memory).

SMPI comes from the Debian package libsimgrid-dev; when ``smpicc`` is missing
the script installs it with ``apt-get update && apt-get install -y
libsimgrid-dev`` (as root), or skips SMPI with ``--no-smpi``.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from pevpm.machine.presets import parse_machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import engine, fastengine

HERE = Path(__file__).resolve().parent
SMPI_DIR = HERE / "smpi"
MACHINE = "perseus"  # Hockney: 160 us + size / 91 Mbit/s, one rank per node
XSIZE = 256
SERIAL = 3.24
SMPI_CONFIG = [
    "--cfg=smpi/bw-factor:0:1", "--cfg=smpi/lat-factor:0:1",  # plain latency/bandwidth
    "--cfg=network/crosstraffic:0",  # no reverse (acknowledgement) flows
    "--cfg=smpi/privatization:no",  # the program has no global state
    "--log=root.thres:critical",
]


def jacobi_model(iterations: int):
    """The thesis's Figure 86 model, for ``iterations`` iterations."""
    b = ModelBuilder(constants={"xsize": XSIZE}, parameters={"iterations": iterations})
    row = "xsize * sizeof(float)"
    up, down = "procnum - 1", "procnum + 1"
    has_up, has_down = "procnum != 0", "procnum != numprocs - 1"
    with b.loop("parameter iterations"):
        with b.runon() as ranks:
            with ranks.case("procnum % 2 == 0"):
                with b.on_ranks(has_up):
                    b.send(row, dest=up)
                with b.on_ranks(has_down):
                    b.send(row, dest=down)
                    b.recv(row, source=down)
                with b.on_ranks(has_up):
                    b.recv(row, source=up)
            with ranks.case("procnum % 2 == 1"):
                with b.on_ranks(has_down):
                    b.recv(row, source=down)
                b.recv(row, source=up)
                b.send(row, dest=up)
                with b.on_ranks(has_down):
                    b.send(row, dest=down)
        b.serial(f"{SERIAL} / numprocs", on="perseus")
    return b.build()


def time_pevpm(model, numprocs: int, repeats: int, simulate, machine_name: str = MACHINE,
               memory: str | None = None, engine_name: str = "auto") -> dict:
    """Median wall and CPU seconds of ``repeats`` runs; ``memory`` (a model
    spec for :func:`build_model`): also the peak RSS of a fresh process running it once."""
    machine = parse_machine(machine_name)
    walls, cpus, result = [], [], None
    for i in range(repeats):
        rng = np.random.default_rng(i)
        start, cpu = time.perf_counter(), time.process_time()
        result = simulate(model, numprocs, machine, rng=rng)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        if getattr(result, "engine_note", None):
            print(f"note: {numprocs} ranks: {result.engine_note}", file=sys.stderr)
    peak = child_peak_rss(memory, numprocs, machine_name, engine_name) if memory else 0.0
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    return {"wall": wall, "cpu": cpu, "makespan": result.makespan,
            "messages": result.messages_simulated,
            "rate": result.messages_simulated / max(cpu, 1e-9), "peak_mb": peak}


def build_model(spec: str):
    """``jacobi:ITERATIONS``, ``MPI_Alltoall`` (any collective, 1 KiB) or ``none``."""
    if spec == "none":
        return None
    if spec.startswith("jacobi:"):
        return jacobi_model(int(spec.split(":")[1]))
    return collective_model(spec)


def child_peak_rss(spec: str, numprocs: int, machine_name: str, engine_name: str) -> float:
    """Peak resident set (MB) of a fresh Python process that imports pevpm and
    simulates ``spec`` once on ``numprocs`` ranks (``none``: imports only)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--rss-child",
           f"{spec},{numprocs},{machine_name}", "--engine", engine_name]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return float(out.split()[-1]) / 1024


def rss_child(arg: str, simulate) -> int:
    """Run one simulation and print this process's peak resident set in KiB:
    VmHWM belongs to this program image (a child's ``ru_maxrss`` would start
    from its parent's size at the fork)."""
    spec, numprocs, machine_name = arg.split(",")
    model = build_model(spec)
    if model is not None:
        simulate(model, int(numprocs), parse_machine(machine_name), rng=np.random.default_rng(0))
    status = Path("/proc/self/status").read_text()
    print(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))
    return 0


def collective_model(op: str, size: int = 1024):
    b = ModelBuilder()
    b.collective(op, size)
    return b.build()


def print_collectives(simulate, counts, engine_name: str) -> None:
    print("\nOne collective call (1 KiB), machine perseus: CPU seconds of a first run "
          "(expansion included) and a second (expansion cached), messages per CPU second")
    print(f"{'op':>14} {'ranks':>6} {'messages':>9} {'first s':>8} {'again s':>8} {'msg/s':>9} "
          f"{'RSS MB':>7}  (RSS: peak of a fresh process making one call)")
    for op in ("MPI_Alltoall", "MPI_Allreduce", "MPI_Allgather"):
        for n in counts:
            model = collective_model(op)
            first = time_pevpm(model, n, 1, simulate)
            again = time_pevpm(model, n, 1, simulate, memory=op, engine_name=engine_name)
            print(f"{op:>14} {n:>6} {again['messages']:>9} {first['cpu']:>8.3f} "
                  f"{again['cpu']:>8.3f} {again['rate']:>9.0f} {again['peak_mb']:>7.0f}",
                  flush=True)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ensure_smpi() -> bool:
    if shutil.which("smpicc") and shutil.which("smpirun"):
        return True
    if os.geteuid() != 0:
        print("smpicc not found and not root: install libsimgrid-dev, or pass --no-smpi",
              file=sys.stderr)
        return False
    print("installing libsimgrid-dev (apt-get) ...", file=sys.stderr)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-q", "libsimgrid-dev"], check=True, env=env)
    return bool(shutil.which("smpicc"))


def run_smpi(workdir: Path, numprocs: int, iterations: int, repeats: int) -> dict:
    hosts = workdir / f"hosts{numprocs}"
    hosts.write_text("".join(f"node-{i}\n" for i in range(numprocs)))
    cmd = ["smpirun", "-np", str(numprocs), "-platform", str(SMPI_DIR / "cluster.xml"),
           "-hostfile", str(hosts), *SMPI_CONFIG,
           str(workdir / "jacobi"), str(iterations), str(XSIZE), str(SERIAL)]
    walls, cpus, rss, out = [], [], [], ""
    for _ in range(repeats):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, cwd=workdir)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        cpus.append(usage.ru_utime + usage.ru_stime)
        rss.append(usage.ru_maxrss / 1024)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise RuntimeError(f"smpirun failed ({proc.returncode}):\n{out[-2000:]}")
    match = re.search(r"simulated_seconds=([\d.eE+-]+) messages=(\d+)", out)
    if not match:
        raise RuntimeError(f"no result line in SMPI output:\n{out[-2000:]}")
    wall = statistics.median(walls)
    messages = int(match.group(2))
    return {"wall": wall, "cpu": statistics.median(cpus), "makespan": float(match.group(1)),
            "messages": messages, "rate": messages / wall, "peak_mb": max(rss)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="64,1024", help="process counts (64,1024)")
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3, help="timed pevpm runs (median)")
    parser.add_argument("--smpi-repeats", type=int, default=1,
                        help="timed SMPI runs (median; one 1024-rank run takes minutes)")
    parser.add_argument("--no-smpi", action="store_true", help="time pevpm only")
    parser.add_argument("--engine", choices=("auto", "reference"), default="auto",
                        help="auto: the compiled core when built; reference: pure Python")
    parser.add_argument("--collectives", action="store_true",
                        help="also time MPI_Alltoall and MPI_Allreduce at 64-1024 ranks")
    parser.add_argument("--memory-ranks", default="",
                        help="extra rank counts timed by pevpm only (e.g. 8192)")
    parser.add_argument("--profile-machine", action="store_true",
                        help="also time the Jacobi on the shipped measured profile (default)")
    parser.add_argument("--rss-child", help=argparse.SUPPRESS)  # SPEC,RANKS,MACHINE: one run
    args = parser.parse_args(argv)
    simulate = fastengine.simulate if args.engine == "auto" else engine.simulate
    if args.rss_child:
        return rss_child(args.rss_child, simulate)
    counts = [int(n) for n in args.ranks.split(",")]
    model = jacobi_model(args.iterations)
    jacobi = f"jacobi:{args.iterations}"
    print(f"pevpm engine: {args.engine}"
          + ("" if args.engine == "reference" or fastengine.AVAILABLE
             else f" ({fastengine.UNAVAILABLE})"))

    smpi = not args.no_smpi and ensure_smpi()
    if not smpi:
        print("SMPI: unavailable (no smpicc/smpirun, or --no-smpi): pevpm figures only")
    workdir = Path(tempfile.mkdtemp(prefix="pevpm-smpi-"))
    if smpi:
        subprocess.run(["smpicc", "-O2", "-o", str(workdir / "jacobi"),
                        str(SMPI_DIR / "jacobi.c")], check=True, capture_output=True)

    print(f"Jacobi, {args.iterations} iterations, xsize {XSIZE}, machine {MACHINE}; "
          f"pevpm median of {args.repeats}, SMPI median of {args.smpi_repeats}")
    header = (f"{'ranks':>6} {'messages':>9} {'pevpm s':>8} {'cpu s':>7} {'msg/s':>8} "
              f"{'RSS MB':>7} {'predicted':>9} | {'SMPI s':>7} {'cpu s':>7} {'msg/s':>7} "
              f"{'RSS MB':>6} {'simulated':>9} | {'wall ratio':>10} {'cpu ratio':>9}")
    print(header)
    print("-" * len(header))
    for n in counts:
        ours = time_pevpm(model, n, args.repeats, simulate, memory=jacobi,
                          engine_name=args.engine)
        line = (f"{n:>6} {ours['messages']:>9} {ours['wall']:>8.3f} {ours['cpu']:>7.3f} "
                f"{ours['rate']:>8.0f} {ours['peak_mb']:>7.1f} {ours['makespan']:>9.4f}")
        if smpi:
            theirs = run_smpi(workdir, n, args.iterations, args.smpi_repeats)
            line += (f" | {theirs['wall']:>7.2f} {theirs['cpu']:>7.2f} {theirs['rate']:>7.0f} "
                     f"{theirs['peak_mb']:>6.1f} {theirs['makespan']:>9.4f} | "
                     f"{ours['wall'] / theirs['wall']:>10.3f} "
                     f"{ours['cpu'] / theirs['cpu']:>9.3f}")
        print(line, flush=True)
    for n in [int(n) for n in args.memory_ranks.split(",") if n]:
        ours = time_pevpm(model, n, 1, simulate, memory=jacobi, engine_name=args.engine)
        print(f"{n:>6} {ours['messages']:>9} {ours['wall']:>8.3f} {ours['cpu']:>7.3f} "
              f"{ours['rate']:>8.0f} {ours['peak_mb']:>7.1f} {ours['makespan']:>9.4f}",
              flush=True)
    if args.profile_machine:
        print("\nThe same Jacobi on the shipped measured profile (--machine default):")
        for n in counts:
            ours = time_pevpm(model, n, args.repeats, simulate, "default", memory=jacobi,
                              engine_name=args.engine)
            print(f"{n:>6} {ours['messages']:>9} {ours['wall']:>8.3f} {ours['cpu']:>7.3f} "
                  f"{ours['rate']:>8.0f} {ours['peak_mb']:>7.1f} {ours['makespan']:>9.4f}",
                  flush=True)
    if args.collectives:
        print_collectives(simulate, (64, 256, 1024), args.engine)
    print("messages: matched point-to-point messages; msg/s: per CPU second; cpu s: CPU "
          "seconds (steadier on a shared machine); RSS MB: peak resident set of a fresh "
          "process running one simulation (pevpm: "
          f"{child_peak_rss('none', 1, MACHINE, args.engine):.0f} MB of it imports alone; "
          "SMPI: the simulation process); "
          "predicted / simulated: virtual run time (s) from each simulator; ratios: "
          "pevpm / SMPI (below 1: pevpm is faster)")
    print(f"process max RSS (pevpm side): "
          f"{_peak_rss_mb():.1f} MB")
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
