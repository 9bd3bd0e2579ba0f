"""Cost of tracing: per MPI call (C microbenchmark) and the Jacobi example's slowdown.

1. Per call: a C program times N calls of a cheap MPI operation on 2 ranks
   (``MPI_Iprobe`` that finds nothing; an 8-byte ``MPI_Sendrecv`` between the
   two ranks), once plainly and once with the tracer preloaded exactly as
   ``pevpm trace`` does (records go to a scratch directory); the overhead is
   the difference of the per-call times.
2. Jacobi: ``examples/jacobi/jacobi.py`` on 2 ranks, untraced and under
   ``pevpm trace``, alternating; compared by the program's own wall time of
   its iteration loop (``PEVPM-RESULT wall_time``) and by the whole
   command's time (which for ``pevpm trace`` includes writing the OTF2
   archive).

Every figure is the median of ``--repeats`` runs, with min..max.  The
machine this runs on may be shared: say so when quoting.

Run: PYTHONPATH=src python benchmarks/trace_overhead.py [--repeats 7] [--iterations 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pevpm.trace.record.build import find_mpicc, tracer_library

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
MPIEXEC = str(BIN / "mpiexec")

MICRO = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int n = atoi(argv[1]), rank, flag;
    double in = 0, out = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int peer = 1 - rank;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++)
        MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    double t1 = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    for (int i = 0; i < n / 10; i++)
        MPI_Sendrecv(&out, 1, MPI_DOUBLE, peer, 0, &in, 1, MPI_DOUBLE, peer, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double t3 = MPI_Wtime();
    if (rank == 0) printf("%g %g\n", (t1 - t0) / n, (t3 - t2) / (n / 10));
    MPI_Finalize();
    return 0;
}
"""


def summary(values: list[float], scale: float = 1.0, unit: str = "") -> str:
    v = sorted(x * scale for x in values)
    return f"{statistics.median(v):.3g}{unit} ({v[0]:.3g}..{v[-1]:.3g})"


def traced_env(library: Path, scratch: Path) -> dict:
    env = dict(os.environ)
    env["PEVPM_TRACE_DIR"] = str(scratch)
    env["LD_PRELOAD"] = str(library)
    return env


def per_call(repeats: int, calls: int, library: Path, work: Path) -> None:
    exe = work / "micro"
    (work / "micro.c").write_text(MICRO)
    subprocess.run([find_mpicc(MPIEXEC), "-O2", "-o", str(exe), str(work / "micro.c")],
                   check=True)
    scratch = work / "raw"
    scratch.mkdir()
    plain = {"iprobe": [], "sendrecv": []}
    traced = {"iprobe": [], "sendrecv": []}
    for _ in range(repeats):
        for env, into in ((dict(os.environ), plain), (traced_env(library, scratch), traced)):
            out = subprocess.run([MPIEXEC, "-n", "2", str(exe), str(calls)], env=env,
                                 check=True, capture_output=True, text=True).stdout.split()
            into["iprobe"].append(float(out[0]))
            into["sendrecv"].append(float(out[1]))
    print(f"per call, {repeats} runs of {calls} MPI_Iprobe and {calls // 10} MPI_Sendrecv "
          "(8 bytes) on 2 ranks; median (min..max):")
    for name in ("iprobe", "sendrecv"):
        extra = [t - p for t, p in zip(traced[name], plain[name], strict=True)]
        print(f"  {name:9} plain {summary(plain[name], 1e9, ' ns')}, traced "
              f"{summary(traced[name], 1e9, ' ns')}, overhead {summary(extra, 1e9, ' ns')}")


def jacobi_run(command: list[str], env: dict) -> tuple[float, float]:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    total = time.perf_counter() - start
    line = next(x for x in done.stdout.splitlines() if x.startswith("PEVPM-RESULT "))
    return json.loads(line.split(" ", 1)[1])["wall_time"], total


def jacobi(repeats: int, iterations: int, work: Path) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    program = [MPIEXEC, "-n", "2", sys.executable, str(ROOT / "examples/jacobi/jacobi.py"),
               "--iterations", str(iterations)]
    plain, traced = [], []
    for i in range(repeats):
        plain.append(jacobi_run(program, env))
        out = work / f"jacobi-{i}"
        traced.append(jacobi_run([sys.executable, "-m", "pevpm", "trace", "-o", str(out),
                                  "--", *program], env))
    loop = [t[0] / p[0] - 1 for t, p in zip(traced, plain, strict=True)]
    whole = [t[1] / p[1] - 1 for t, p in zip(traced, plain, strict=True)]
    print(f"jacobi.py, 2 ranks, {iterations} iterations, {repeats} alternating pairs; "
          "median (min..max):")
    print(f"  loop wall time: plain {summary([p[0] for p in plain], 1, ' s')}, traced "
          f"{summary([t[0] for t in traced], 1, ' s')}, slowdown {summary(loop, 100, '%')}")
    print(f"  whole command:  plain {summary([p[1] for p in plain], 1, ' s')}, traced "
          f"{summary([t[1] for t in traced], 1, ' s')} (with the OTF2 conversion), "
          f"slowdown {summary(whole, 100, '%')}")
    print(f"  ratio of medians, loop: {statistics.median([t[0] for t in traced]) / statistics.median([p[0] for p in plain]) - 1:+.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--iterations", type=int, default=10000)
    args = parser.parse_args()
    library = tracer_library(find_mpicc(MPIEXEC))
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        per_call(args.repeats, args.calls, library, Path(tmp))
        jacobi(args.repeats, args.iterations, Path(tmp))
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
