"""docs/own-program.md's accuracy check: examples/heat/heat.c, calibrated with the
region library, predicted at 1 and 2 ranks against the medians of real runs (issue 29).

``benchmarks/own_program_runs.sh`` builds heat.c with the region library and, at
1 and 2 ranks (interleaved), makes a warm-up run, 3 calibration runs and 7
measured runs, each keeping its loop time and its region times.  This script
runs it here with the mpich wheel's ``mpicc`` and ``mpiexec`` (the machine's
load probed before and after), or reads what it wrote on another machine
(``--recorded DIR``), summarises each count's calibration runs as ``pevpm
calibrate`` does (:meth:`pevpm.calibrate.Calibration.from_region_times`) and
predicts the count with ``pevpm predict --calibration`` under ``robust`` and
``calibrated`` noise.  The table gives the measured median (min-max), each
prediction and its error, and ``regions``: the median over measured runs of
the slowest rank's summed region times over the run's loop time (what the
model's computation can account for; the rest is time inside MPI calls).

    .venv/bin/python benchmarks/own_program_accuracy.py [--runs 20] [--machine default]
    .venv/bin/python benchmarks/own_program_accuracy.py --recorded DIR
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from pevpm.calibrate import Calibration, parse_region_lines
from pevpm.host import probe_machine

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
LOOP_TIME = re.compile(r"(\d+) iterations: ([0-9.]+) s")


def read_run(folder: Path) -> tuple[float, int, list[dict[str, list[float]]]]:
    """One run's loop time, its iterations and each rank's region times."""
    found = LOOP_TIME.search((folder / "out.txt").read_text())
    ranks = [parse_region_lines(path.read_text(), str(path))
             for path in sorted(folder.glob("regions-*.txt"))]
    return float(found.group(2)), int(found.group(1)), ranks


def predicted(calibration: Path, n: int, iterations: int, noise: str, args) -> float:
    out = subprocess.run([str(BIN / "pevpm"), "predict", str(ROOT / "examples" / "heat" /
                                                             "model.py"),
                          "-n", str(n), "-D", f"iterations={iterations}", "--machine",
                          args.machine, "--calibration", str(calibration), "--compute-noise",
                          noise, "--runs", str(args.runs), "--json"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["predictions"][0]["mean"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recorded", metavar="DIR",
                        help="the runs own_program_runs.sh wrote (elsewhere); without it, "
                             "run them here")
    parser.add_argument("--runs", type=int, default=20, help="Monte Carlo runs (20)")
    parser.add_argument("--machine", default="default", help="pevpm predict's --machine")
    args = parser.parse_args()
    if args.recorded:
        folder = Path(args.recorded)
    else:
        folder = Path(tempfile.mkdtemp(prefix="heat-accuracy-"))
        print(f"machine before: {probe_machine(1.0).describe()}", flush=True)
        subprocess.run(["bash", str(ROOT / "benchmarks" / "own_program_runs.sh"), str(folder),
                        str(BIN / "mpicc"), str(BIN / "mpiexec")], check=True)
        print(f"machine after: {probe_machine(1.0).describe()}")
    print((folder / "machine.txt").read_text().strip())
    print("| ranks | measured median (min-max) | robust | error | calibrated | error | "
          "regions |")
    print("|---|---|---|---|---|---|---|")
    for n in (1, 2):
        pooled: dict[str, list[float]] = {}
        for run in sorted(folder.glob(f"cal-{n}-*")):
            for rank in read_run(run)[2]:
                for name, times in rank.items():
                    pooled.setdefault(name, []).extend(times)
        calibration = folder / f"heat-{n}.json"
        Calibration.from_region_times(pooled, f"{folder} cal-{n}-*").save(calibration)
        runs = [read_run(run) for run in sorted(folder.glob(f"run-{n}-*"))]
        loops = sorted(loop for loop, _, _ in runs)
        measured = statistics.median(loops)
        share = statistics.median(max(sum(map(sum, rank.values())) for rank in ranks) / loop
                                  for loop, _, ranks in runs)
        cells = []
        for noise in ("robust", "calibrated"):
            seconds = predicted(calibration, n, runs[0][1], noise, args)
            cells.append(f"{seconds:.3f} s | {(seconds / measured - 1) * 100:+.1f}%")
        print(f"| {n} | {measured:.3f} s ({loops[0]:.3f}-{loops[-1]:.3f}) | "
              f"{' | '.join(cells)} | {share:.1%} |", flush=True)


if __name__ == "__main__":
    main()
