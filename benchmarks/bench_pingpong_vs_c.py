"""Harness overhead of Python: pevpm's isend test vs a C ping-pong, both at 2 ranks.

Builds benchmarks/c/pingpong.c with the pip MPICH's mpicc, then, in each of
--rounds rounds, times the C ping-pong (half round trip, ~1 s per size) and
runs ``pevpm bench --tests isend`` (one-way end-to-end on the global clock)
at the same sizes.  Prints per size the median over rounds of both medians
and of both minima, and the ratio pevpm / C.

    PYTHONPATH=src python benchmarks/bench_pingpong_vs_c.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
#: The MPI beside this Python (the pip MPICH in a venv), else the first mpiexec on PATH.
BIN = (Path(sys.executable).parent if (Path(sys.executable).parent / "mpiexec").exists()
       else Path(shutil.which("mpiexec") or "mpiexec").resolve().parent)
SIZES = (0, 1024, 65536)


def build(workdir: Path) -> Path:
    exe = workdir / "pingpong"
    subprocess.run([str(BIN / "mpicc"), "-O2", "-o", str(exe), str(HERE / "c" / "pingpong.c")],
                   check=True)
    return exe


def c_pingpong(exe: Path, size: int, seconds: float) -> tuple[float, float]:
    out = subprocess.run([str(BIN / "mpiexec"), "-bind-to", "core", "-n", "2", str(exe),
                          str(size), str(seconds)],
                         check=True, capture_output=True, text=True).stdout
    median = float(re.search(r"median_half_rtt_us=([0-9.]+)", out).group(1))
    minimum = float(re.search(r"min_half_rtt_us=([0-9.]+)", out).group(1))
    return median, minimum


def pevpm_isend(workdir: Path, reps: int) -> dict[int, tuple[float, float]]:
    sys.path.insert(0, str(SRC))
    from pevpm.profile.store import Profile

    db = workdir / "isend.db"
    db.unlink(missing_ok=True)
    env = dict(os.environ, PYTHONPATH=str(SRC))
    subprocess.run([str(BIN / "mpiexec"), "-n", "2", sys.executable, "-m", "pevpm", "bench",
                    "--binding", "python",     # the Python harness's overhead is the point
                    "--start", "barrier",      # as measured for docs/ before the auto rule
                    "--tests", "isend", "--sizes", ",".join(map(str, SIZES)), "--reps", str(reps),
                    "--budget", "120s", "--no-progress", "-o", str(db)],
                   check=True, env=env, capture_output=True)
    with Profile.open(db) as prof:
        return {size: (prof.summary("isend", size).median * 1e6,
                       prof.summary("isend", size).min * 1e6) for size in SIZES}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=5000, help="pevpm repetitions per size")
    parser.add_argument("--seconds", type=float, default=1.0, help="C run time per size")
    args = parser.parse_args()
    c_runs = {size: [] for size in SIZES}
    py_runs = {size: [] for size in SIZES}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        exe = build(workdir)
        for _ in range(args.rounds):
            for size in SIZES:
                c_runs[size].append(c_pingpong(exe, size, args.seconds))
            for size, values in pevpm_isend(workdir, args.reps).items():
                py_runs[size].append(values)
    print(f"ping-pong at 2 ranks, medians over {args.rounds} rounds (microseconds)")
    print(f"{'bytes':>7} {'C median':>9} {'pevpm median':>13} {'ratio':>6}   "
          f"{'C min':>7} {'pevpm min':>10} {'ratio':>6}")
    for size in SIZES:
        c_med = statistics.median(m for m, _ in c_runs[size])
        c_min = statistics.median(m for _, m in c_runs[size])
        p_med = statistics.median(m for m, _ in py_runs[size])
        p_min = statistics.median(m for _, m in py_runs[size])
        print(f"{size:>7} {c_med:>9.2f} {p_med:>13.2f} {p_med / c_med:>6.2f}   "
              f"{c_min:>7.2f} {p_min:>10.2f} {p_min / c_min:>6.2f}")
    print("C: half round trip of MPI_Isend+Wait / MPI_Recv timed with MPI_Wtime on rank 0,")
    print("ranks bound to cores by mpiexec -bind-to core (pevpm binds its ranks itself);")
    print("pevpm: isend end-to-end time (send start at the sender to receive completion at")
    print("the receiver) on the synchronised global clock, barrier-started repetitions.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
