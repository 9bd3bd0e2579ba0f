"""Three ``pevpm bench --quick`` profiles in a row, and how far their predictions differ.

Issue 31's stability check: three profiles taken one after the other at
``-n 4`` on this host (4 ranks on however many cores it has), each used to
predict ``examples/tutorial/cg.py`` (halo exchange + Allreduce) at 4 ranks
with 20 Monte Carlo runs, seed 0.  Prints per profile its wall time, the
predicted mean and the blocks ``predict`` names as unstable, then the spread
between the extreme predictions (the target: within 15%, or ``predict``
says which blocks are unstable).  Extra ``bench`` options (``--start
barrier``, ``--binding python``) go after ``--``.

    PYTHONPATH=src python benchmarks/bench_quick_stability.py [--workdir /tmp/q] [-- --start barrier]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
MPIEXEC = Path(sys.executable).with_name("mpiexec")
MODEL = ROOT / "examples" / "tutorial" / "cg.py"
PROFILES = 3


def environment() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(SRC), os.environ.get("PYTHONPATH")])))


def bench(profile: Path, extra: list[str]) -> float:
    """Take one quick profile at 4 ranks; its wall time (s)."""
    profile.unlink(missing_ok=True)
    command = [str(MPIEXEC), "-n", "4", sys.executable, "-m", "pevpm", "bench", "--quick",
               "--no-progress", *extra, "-o", str(profile)]
    print("$", " ".join(command), flush=True)
    began = time.perf_counter()
    subprocess.run(command, check=True, env=environment(), capture_output=True)
    return time.perf_counter() - began


def predict(profile: Path) -> tuple[float, list[str]]:
    """The predicted mean (s) of cg.py at 4 ranks and the unstable-block lines."""
    command = [sys.executable, "-m", "pevpm", "predict", str(MODEL), "-n", "4", "--runs", "20",
               "--machine", str(profile)]
    done = subprocess.run(command, check=True, env=environment(), capture_output=True,
                          text=True)
    row = next(line for line in done.stdout.splitlines() if line.split()[:1] == ["4"])
    unstable = [line.strip() for line in done.stderr.splitlines() if "unstable" in line]
    return float(row.split()[1]), unstable


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="where the profiles go (kept)")
    parser.add_argument("extra", nargs="*", help="options passed on to pevpm bench")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="quick-stability-"))
    workdir.mkdir(parents=True, exist_ok=True)
    means = []
    for index in range(PROFILES):
        profile = workdir / f"q{index}.db"
        wall = bench(profile, args.extra)
        mean, unstable = predict(profile)
        means.append(mean)
        print(f"profile {index}: {wall:5.1f} s to measure, cg.py -n 4 predicted {mean:.4f} s")
        for line in unstable:
            print(f"    {line}")
    spread = (max(means) - min(means)) / min(means)
    print(f"between the extremes: {100 * spread:.1f}% (target: within 15%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
