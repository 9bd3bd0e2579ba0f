"""pevpm extract across rank counts on the examples: events in, model lines out,
extract time, and the extracted models' predictions against the measured runs
and the hand-written models.

For each example ``pevpm trace`` runs the program at 1, 2 and 4 ranks (the
arguments and environment of ``pevpm validate``) and the traces at ``--fit``
counts (default 2 and 4) go into two extractions:

* the **section** model, of each rank's run from the end of its first
  ``MPI_Barrier`` to its ``MPI_Gather`` (``--section``; the examples start
  their clock after a barrier and gather their timings at the end, so this
  is the part the hand-written models describe, Jacobi's checksum reduction
  included).  It is predicted on ``--machine`` at 1, 2 and 4 ranks (every
  rank on this host, as in the traced runs) against the traced section's
  time and the hand-written model with ``--calibration``'s parameters, and
  at the ``--scale`` counts against the hand-written model, both with 2
  ranks per node (nodes like this one, as ``pevpm demo`` predicts);
* the **whole** model (MPI_Init to MPI_Finalize), predicted at the same
  counts to show it runs there.

Beyond 4 ranks a loop of thousands of iterations over 1,024 ranks takes
minutes to simulate, so each model's main loop (the hand-written model's
``iterations``, the extracted model's largest ``loopK`` parameter) runs
``--sample`` and ``2 * --sample`` iterations and the time is extrapolated
linearly to the full count (both runs share their random numbers; the
examples' iterations are alike).  Counts the program itself cannot run at
(Jacobi beyond one row per rank) are predicted all the same and said so; the
FFT's are skipped (its model needs whole rows per rank).  The FFT's calibration has serial times at
the calibrated counts only; beyond them its hand-written model takes the
largest calibrated count's serial time per rank, scaled by the count ratio
(said in the output).

The bag of tasks (``--examples bag_of_tasks``) has no loop of its own count
to sample: its workers' loop is a Repeat until the stop tag and its master's
are counted in jobs, so it is predicted whole at every count.

Run: PYTHONPATH=src python benchmarks/trace_extract.py --machine prof.db
     --calibration calibration.json [--quick] [--examples jacobi,fft2d,bag_of_tasks]
     [--fit 2,4] [--scale 64,256,1024] [--runs 3] [--sample 100] [--keep DIR]
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
from pevpm.machine.profile_model import machine_from_profile
from pevpm.model.loader import load_model
from pevpm.trace.extract.extract import extract
from pevpm.trace.otf2.read import read_archive
from pevpm.validate.cases import CASES, ProblemSize
from pevpm.vm.strategies.montecarlo import predict


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


def main_loop(model, params: dict) -> str | None:
    """The parameter that counts the model's main loop: ``iterations``, else the
    largest ``loopK``."""
    values = {**model.parameters, **params}
    if "iterations" in values:
        return "iterations"
    loops = [k for k in values if k.startswith("loop")]
    return max(loops, key=lambda k: values[k]) if loops else None


def mean_time(model, n: int, machine, runs: int, params: dict, sample: int | None) -> str:
    """The predicted mean as text; with ``sample``, from ``sample`` and
    ``2 * sample`` iterations of the main loop, extrapolated to its count."""
    def once(overrides):
        return predict(model, n, machine, runs=runs, seed=0, params={**params, **overrides},
                       workers=1, bounds=False).mean
    try:
        loop = main_loop(model, params)
        full = {**model.parameters, **params}.get(loop) if loop else None
        if sample is None or full is None or full <= 2 * sample:
            return f"{once({}):.4f}"
        short, long = once({loop: sample}), once({loop: 2 * sample})
        return f"{long + (full - 2 * sample) * (long - short) / sample:.4f}"
    except PevpmError as err:
        return f"fails ({err.message[:60]}...)"


def error(a: str, b: float) -> str:
    try:
        return f"{float(a) / b - 1:+.1%}"
    except ValueError:
        return "-"


def extracted(traces: dict, counts: list[int], name: str, tmp: Path, section):
    """The model extracted from ``traces`` at ``counts`` (of their ``section``, if any)."""
    chosen = [traces[n].section(*section) if section else traces[n] for n in counts]
    start = time.perf_counter()
    x = extract(chosen, f"{name} at {','.join(map(str, counts))} ranks")
    took = time.perf_counter() - start
    path = tmp / f"{name}_{'section' if section else 'whole'}.py"
    path.write_text(x.text)
    return x, took, load_model(str(path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", required=True, help="profile of this machine")
    parser.add_argument("--calibration", required=True)
    parser.add_argument("--examples", default="jacobi,fft2d,bag_of_tasks")
    parser.add_argument("--quick", action="store_true", help="half-size problems")
    parser.add_argument("--fit", default="2,4", help="rank counts extract fits (2,4)")
    parser.add_argument("--section", default="MPI_Barrier:MPI_Gather", metavar="START:STOP")
    parser.add_argument("--scale", default="64,256,1024")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sample", type=int, default=100,
                        help="iterations simulated (and twice that) beyond 4 ranks")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep the traces and the extracted models in DIR")
    args = parser.parse_args()
    size = ProblemSize.quick() if args.quick else ProblemSize()
    calibration = json.loads(Path(args.calibration).read_text())
    fit_counts = [int(n) for n in args.fit.split(",")]
    section = tuple(args.section.split(":"))
    scale = [int(s) for s in args.scale.split(",")]
    base = parse_machine(args.machine)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or scratch
        Path(tmp).mkdir(parents=True, exist_ok=True)
        for name in args.examples.split(","):
            case = CASES[name]
            here = case_machine(base, case)
            beyond = machine_from_profile(args.machine, ppn=2, collectives=case.collectives)
            traces = {}
            for n in sorted({1, 2, 4, *fit_counts}):
                out = Path(tmp) / f"{name}-{n}"
                trace_example(name, n, size, out)
                traces[n] = read_archive(out)
            whole, took, whole_model = extracted(traces, fit_counts, name, Path(tmp), None)
            part, _, model = extracted(traces, fit_counts, name, Path(tmp), section)
            hand = load_model(str(case.model_path))
            print(f"{name}: {whole.events} MPI calls -> {whole.lines} lines of model in "
                  f"{took:.1f} s (whole run, fitted at {args.fit} ranks); the section "
                  f"{args.section}: {part.lines} lines", flush=True)
            for note in part.notes[2:]:
                print(f"    note: {note}")
            for n in (1, 2, 4, *scale):
                try:
                    case.check_procs([n], size)
                except PevpmError as err:
                    if name == "fft2d":     # its model needs whole rows per rank
                        print(f"  n={n:5}: skipped: {err.message}")
                        continue
                    print(f"  n={n:5}: (models only: {err.message})")
                machine = here if n <= 4 else beyond
                sample = None if n <= 4 else args.sample
                params, how = hand_params(case, calibration, n, size)
                want = mean_time(hand, n, machine, args.runs, params, sample)
                got = mean_time(model, n, machine, args.runs, {}, sample)
                all_of_it = mean_time(whole_model, n, machine, args.runs, {}, sample)
                line = (f"  n={n:5}: section extracted {got} s, hand-written {want} s{how} "
                        f"({error(got, float(want)) if want[0].isdigit() else '-'})")
                if n in traces:
                    measured = traces[n].section(*section).elapsed
                    line += (f", measured {measured:.4f} s (extracted {error(got, measured)}, "
                             f"hand-written {error(want, measured)})")
                line += f"; whole run: extracted {all_of_it} s"
                if n in traces:
                    line += (f", measured {traces[n].elapsed:.4f} s "
                             f"({error(all_of_it, traces[n].elapsed)})")
                print(line, flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
