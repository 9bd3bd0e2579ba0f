"""docs/own-program.md's accuracy check: examples/heat/heat.c, calibrated with the
region library, predicted at 1 and 2 ranks against the medians of real runs (issue 29).

It builds heat.c with the mpich wheel's ``mpicc``, then at each rank count:
a warm-up run, ``pevpm calibrate --repeats 3`` (the guide's command), and
``--repeats`` real runs whose printed loop times are the measurement; then
``pevpm predict --calibration`` under ``robust`` and ``calibrated`` noise.
Every real run also writes its region times, so the table shows how much of
each run the regions explain (``regions``: rank 0's summed region times over
the run's loop time); the machine's load is probed before and after.

    .venv/bin/python benchmarks/own_program_accuracy.py [--points 200000]
        [--iterations 2000] [--repeats 7] [--runs 20] [--machine default]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pevpm.calibrate.regions import build_flags, parse_region_lines
from pevpm.host import probe_machine

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
LOOP_TIME = re.compile(r"iterations: ([0-9.]+) s")


def run_heat(heat: Path, n: int, args) -> tuple[float, float]:
    """One real run: its printed loop time, and rank 0's region times summed."""
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run([str(BIN / "mpiexec"), "-n", str(n), str(heat), "--points",
                               str(args.points), "--iterations", str(args.iterations)],
                              capture_output=True, text=True, check=True,
                              env={**os.environ, "PEVPM_REGION_DIR": folder})
        files = sorted(Path(folder).iterdir(), key=lambda p: p.stat().st_mtime)
        per_rank = [sum(sum(t) for t in parse_region_lines(f.read_text()).values())
                    for f in files]
    return float(LOOP_TIME.search(done.stdout).group(1)), max(per_rank)


def pevpm(*arguments: str) -> str:
    done = subprocess.run([str(BIN / "pevpm"), *arguments], capture_output=True, text=True,
                          check=True)
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=200000)
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--machine", default="default")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="heat-accuracy-"))
    heat = scratch / "heat"
    subprocess.run([str(BIN / "mpicc"), "-O2", str(ROOT / "examples" / "heat" / "heat.c"),
                    build_flags("cflags"), build_flags("libs"), "-lm", "-o", str(heat)],
                   check=True)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, machine before: "
          f"{probe_machine(1.0).describe()}")
    rows = []
    for n in (1, 2):
        run_heat(heat, n, args)                                 # warm-up
        calibration = scratch / f"heat-{n}.json"
        command = [str(BIN / "mpiexec"), "-n", str(n), str(heat), "--points", str(args.points),
                   "--iterations", str(args.iterations)]
        pevpm("calibrate", "-o", str(calibration), "--repeats", "3", "--", *command)
        runs = [run_heat(heat, n, args) for _ in range(args.repeats)]
        loops = sorted(t for t, _ in runs)
        explained = statistics.median(r / t for t, r in runs)
        predicted = {}
        for noise in ("robust", "calibrated"):
            out = pevpm("predict", str(ROOT / "examples" / "heat" / "model.py"), "-n", str(n),
                        "--machine", args.machine, "--calibration", str(calibration),
                        "--compute-noise", noise, "--runs", str(args.runs), "-D",
                        f"iterations={args.iterations}", "--json")
            predicted[noise] = json.loads(out)["predictions"][0]["mean"]
        regions = json.loads(calibration.read_text())["regions"]
        rows.append((n, loops, explained, predicted, regions))
        print(f"{n} rank(s): loop times {', '.join(f'{t:.3f}' for t in loops)} s; "
              f"regions/loop (median) {explained:.3f}; " + "; ".join(
                  f"{name}: median {r['median'] * 1e3:.4f} ms, mean {r['body_mean'] * 1e3:.4f} ms,"
                  f" robust cv {r['median'] and r['robust_sd'] / r['median']:.3f}"
                  for name, r in regions.items()), flush=True)
    print(f"machine after: {probe_machine(1.0).describe()}")
    print("| ranks | measured median (min-max) | predicted, robust | error | "
          "predicted, calibrated | error |")
    print("|---|---|---|---|---|---|")
    for n, loops, _, predicted, _ in rows:
        measured = statistics.median(loops)
        cells = " | ".join(f"{predicted[k]:.3f} s | {(predicted[k] / measured - 1) * 100:+.1f}%"
                           for k in ("robust", "calibrated"))
        print(f"| {n} | {measured:.3f} s ({loops[0]:.3f}-{loops[-1]:.3f}) | {cells} |")


if __name__ == "__main__":
    main()
