"""What MPI_THREAD_MULTIPLE costs MPIBench's chained ping-pong loops.

mpi4py initialises MPI at ``MPI_THREAD_MULTIPLE`` unless told otherwise;
``pevpm bench`` now asks for ``MPI_THREAD_FUNNELED`` (``pevpm.bench.mpi``).
This builds ``benchmarks/c/thread_level.c`` with the mpicc next to this
Python and, in each of ``--rounds`` rounds, runs it under ``mpiexec -n 2
-bind-to core`` once per thread level, alternating, so load that comes and
goes falls on every level alike.  Each run times MPIBench's ``isend`` and
``send`` loops and the plain C ping-pong (``benchmarks/c/pingpong.c``'s
loop) at ``--size`` bytes.  It prints, per loop and level, the median over
rounds of the runs' median half round trips (us) with their range, and each
loop's excess at ``multiple`` over ``single``.

    PYTHONPATH=src python benchmarks/bench_thread_level.py [--size 8] [--reps 4000]
        [--rounds 9] [--workdir /tmp/thread-level]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
LEVELS = ("single", "funneled", "multiple")
LINE = re.compile(r"loop=(\w+) median_half_rtt_us=([0-9.]+)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8)
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="thread-level-"))
    workdir.mkdir(parents=True, exist_ok=True)
    exe = workdir / "thread_level"
    subprocess.run([str(BIN / "mpicc"), "-O2", "-o", str(exe), str(HERE / "c" / "thread_level.c")],
                   check=True)
    figures: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for level in LEVELS:
            out = subprocess.run([str(BIN / "mpiexec"), "-bind-to", "core", "-n", "2", str(exe),
                                  level, str(args.size), str(args.reps)],
                                 check=True, capture_output=True, text=True).stdout
            for loop, value in LINE.findall(out):
                figures.setdefault((loop, level), []).append(float(value))
    print(f"{args.size} B, {args.reps} chained repetitions a run, {args.rounds} rounds: "
          "median half round trip (us), median over rounds (range)")
    loops = list(dict.fromkeys(loop for loop, _ in figures))
    print(f"{'loop':<10}" + "".join(f"{level:>22}" for level in LEVELS)
          + f"{'multiple - single':>20}")
    for loop in loops:
        cells = [figures[(loop, level)] for level in LEVELS]
        text = "".join(f"{statistics.median(v):8.3f} ({min(v):.3f}-{max(v):.3f})" for v in cells)
        excess = statistics.median(cells[2]) - statistics.median(cells[0])
        print(f"{loop:<10}{text}{excess:+20.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
