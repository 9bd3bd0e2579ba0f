"""pevpm extract across rank counts on the examples: events in, model lines out,
extract time, and the extracted model's predictions against the measured runs
and the hand-written models.

For each example: ``pevpm trace`` runs the program at 1, 2 and 4 ranks (the
arguments and environment of ``pevpm validate``); the traces at ``--fit``
counts (default 2 and 4) go into one ``extract``; the extracted model is then
predicted on ``--machine`` at 1, 2 and 4 ranks (against the traced run time
and the hand-written model with ``--calibration``'s parameters) and at the
``--scale`` counts (against the hand-written model only).  The FFT's
calibration has serial times at the calibrated counts only; beyond them its
hand-written model takes the largest calibrated count's serial time per rank,
scaled by the count ratio (said in the output).

Run: PYTHONPATH=src python benchmarks/trace_extract.py --machine prof.db
     --calibration calibration.json [--quick] [--examples jacobi,fft2d]
     [--scale 64,256,1024] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from trace_replay_examples import case_machine, trace_example

from pevpm.errors import PevpmError
from pevpm.machine.presets import parse_machine
from pevpm.model.loader import load_model
from pevpm.trace.extract import extract
from pevpm.trace.otf2_read import read_archive
from pevpm.validate.cases import CASES, ProblemSize
from pevpm.vm.montecarlo import predict


def hand_params(case, calibration: dict, n: int, size: ProblemSize) -> tuple[dict, str]:
    """The hand-written model's parameters at ``n`` ranks, and how they were had."""
    try:
        return case.model_params(calibration, n, size), ""
    except PevpmError:
        counts = sorted(int(k) for k in calibration["fft2d"]["row_ffts"])
        base = max(c for c in counts if c <= n)
        params = case.model_params(calibration, base, size)
        for key in ("t_serial", "t_sd"):
            params[key] *= base / n
        return params, f" (serial time from {base} ranks x {base}/{n})"


def mean_time(model, n: int, machine, runs: int, params=None) -> str:
    try:
        result = predict(model, n, machine, runs=runs, seed=0, params=params, workers=1,
                         bounds=False)
        return f"{result.mean:.4f}"
    except PevpmError as err:
        return f"fails ({err.message[:60]}...)"


def error(a: str, b: float) -> str:
    try:
        return f"{float(a) / b - 1:+.1%}"
    except ValueError:
        return "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", required=True)
    parser.add_argument("--calibration", required=True)
    parser.add_argument("--examples", default="jacobi,fft2d")
    parser.add_argument("--quick", action="store_true", help="half-size problems")
    parser.add_argument("--fit", default="2,4", help="rank counts extract fits (2,4)")
    parser.add_argument("--scale", default="64,256,1024")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    size = ProblemSize.quick() if args.quick else ProblemSize()
    calibration = json.loads(Path(args.calibration).read_text())
    fit_counts = [int(n) for n in args.fit.split(",")]
    base = parse_machine(args.machine)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.examples.split(","):
            case = CASES[name]
            machine = case_machine(base, case)
            traces = {}
            for n in sorted({1, 2, 4, *fit_counts}):
                out = Path(tmp) / f"{name}-{n}"
                trace_example(name, n, size, out)
                traces[n] = read_archive(out)
            start = time.perf_counter()
            x = extract([traces[n] for n in fit_counts], f"{name} at {args.fit} ranks")
            took = time.perf_counter() - start
            path = Path(tmp) / f"{name}_model.py"
            path.write_text(x.text)
            model = load_model(str(path))
            hand = load_model(str(case.model_path))
            print(f"{name}: {x.events} MPI calls -> {x.lines} lines of model in {took:.1f} s "
                  f"(fitted at {args.fit} ranks)", flush=True)
            for note in x.notes[2:]:
                print(f"    note: {note}")
            for n in (1, 2, 4, *(int(s) for s in args.scale.split(","))):
                params, how = hand_params(case, calibration, n, size)
                want = mean_time(hand, n, machine, args.runs, params)
                got = mean_time(model, n, machine, args.runs)
                line = f"  n={n:5}: extracted {got} s, hand-written {want} s{how}"
                line += f" ({error(got, float(want)) if want[0].isdigit() else '-'})"
                if n in traces:
                    measured = traces[n].elapsed
                    line += (f", measured {measured:.4f} s (extracted {error(got, measured)}, "
                             f"hand-written {error(want, measured)})")
                print(line, flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
