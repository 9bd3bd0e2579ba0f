"""What ``pevpm demo`` runs (:mod:`pevpm.cli.demo` is its command line): the whole pipeline on this machine, ending in an HTML report.

1. measure this machine with MPIBench (``mpiexec -n 2`` and ``-n 4``), or use
   the profile shipped with pevpm (``--profile default``) or a given one;
2. fit distributions to every block and plot them;
3. calibrate the examples' serial segments (their kernels on one rank) and
   store the figures in the profile;
4. validate the three case studies: real runs against predictions from the
   full distributions and from the baselines, calibrating again before each
   timed repeat and after the last (calibrate, run, calibrate, run,
   calibrate at every process count) so that prediction and measurement
   see the same stretch of the machine;
5. predict each case out to 64 and 1024 processes (beyond what this
   machine runs: hypothetical nodes like this one; past the FFT grid's rows
   the grid grows with the ranks, see :func:`fft_beyond_grid`);
6. the collective "Pascal triangle", a Perfetto trace of one simulated run,
   and the report (``pevpm-report/index.html``).

>>> plan = DemoPlan.for_mode(quick=True)
>>> plan.counts["bag_of_tasks"], plan.scaling_counts[-1]
([1, 2, 4, 8], 64)
"""

from __future__ import annotations

import functools
import json
import math
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pevpm.errors import PevpmError
from pevpm.machine.profile_model import machine_from_profile
from pevpm.model.loader import load_model
from pevpm.profile.builtin import open_profile, resolve_profile
from pevpm.profile.fits import fit_profile, pearson_trends
from pevpm.profile.store import Profile, ProfileWriter
from pevpm.report.fit_plots import plot_block_fits, plot_trends
from pevpm.report.html import write_report
from pevpm.report.trace import write_trace
from pevpm.validate import calibration as calib
from pevpm.validate.cases import CASES, ProblemSize
from pevpm.validate.runner import find_mpiexec
from pevpm.validate.signature import EAGER, bcast_completion_times
from pevpm.validate.validation import format_rows, validate_case
from pevpm.vm.kernel.fastengine import simulate
from pevpm.vm.strategies.montecarlo import predict

Progress = Callable[[str], None]


@dataclass
class DemoPlan:
    """What the demo runs: process counts, repeats, Monte Carlo runs, sizes."""

    size: ProblemSize
    counts: dict[str, list[int]]
    scaling_counts: list[int]
    repeats: int
    runs: int
    bench_procs: list[int] = field(default_factory=lambda: [2, 4])
    #: Timed batches of each calibration taken again between a count's real runs.
    recalibration_repeats: int = 5

    @classmethod
    def for_mode(cls, quick: bool) -> DemoPlan:
        """The full demo (under 5 minutes here) or the CI smoke test (``--quick``)."""
        if quick:
            return cls(ProblemSize.quick(), {"jacobi": [1, 2], "fft2d": [1, 2],
                                             "bag_of_tasks": [1, 2, 4, 8]},
                       [4, 16, 64], repeats=2, runs=4, bench_procs=[2],
                       recalibration_repeats=2)
        return cls(ProblemSize(), {"jacobi": [1, 2], "fft2d": [1, 2],
                                   "bag_of_tasks": [1, 2, 4, 8]},
                   [4, 16, 64, 256, 1024], repeats=3, runs=12)


def run_benchmark(path: Path, procs: list[int], progress: Progress) -> None:
    """MPIBench's quick run at each process count, into one profile file."""
    mpiexec = find_mpiexec()
    for n in procs:
        progress(f"benchmarking this machine with {n} processes (MPIBench --quick)")
        # The case studies run through mpi4py and compute between their messages:
        # time MPI as they call it, every repetition after a barrier.
        command = [mpiexec, "-n", str(n), sys.executable, "-m", "pevpm", "bench", "--quick",
                   "--binding", "python", "--start", "barrier",
                   "--machine", platform.node() or "this-machine", "-o", str(path)]
        proc = subprocess.run(command, check=False, capture_output=True, text=True,
                              timeout=600)
        if proc.returncode != 0:
            raise PevpmError(f"MPIBench failed (exit {proc.returncode}):\n"
                             f"{(proc.stdout + proc.stderr)[-3000:]}", where=" ".join(command))


def fit_and_plot(profile: Path, outdir: Path, progress: Progress) -> list[dict]:
    """Fit every block, store the fits, and plot a few blocks and the trends."""
    progress("fitting distributions to every benchmark block")
    fits = fit_profile(profile, tests=["isend"], store=True)
    shown = [b for b in fits.blocks if b.key.size in (0, 1024, 65536)][:6]
    files = plot_block_fits(shown, outdir) + plot_trends(pearson_trends(fits.blocks), outdir)
    return [{"title": Path(f).stem.replace("-", " "), "file": Path(f).name,
             "caption": "Histogram of measured isend times with the fitted densities."}
            for f in files]


def calibrate_example(name: str, plan: DemoPlan, counts, repeats: int = 5) -> dict:
    """``{name: serial times}`` of one example's kernels on one rank (the FFT's
    at each of ``counts``)."""
    if name == "jacobi":
        return {name: calib.calibrate_jacobi(plan.size.grid, nprocs=(1, 2), repeats=repeats)}
    if name == "fft2d":
        return {name: calib.calibrate_fft2d(plan.size.grid, nprocs=counts, repeats=repeats)}
    return {name: calib.calibrate_bag_of_tasks(repeats=repeats)}


def calibrate_examples(profile: Path, plan: DemoPlan, progress: Progress) -> dict:
    """Serial times of the examples' kernels for the scaling predictions, stored in
    the profile too (the validation calibrates again between each count's runs)."""
    progress("calibrating the examples' serial segments on one rank")
    fft_counts = sorted({n for n in [1, 2, 4, *plan.scaling_counts]
                         if plan.size.grid % n == 0})
    data = {"format": calib.FORMAT}
    for name in CASES:
        data.update(calibrate_example(name, plan, fft_counts))
    with ProfileWriter.open(profile) as writer:
        for name in CASES:
            writer.set_calibration(name, data[name])
    return data


#: Point-to-point messages one iteration of a stationary case sends on n ranks.
MESSAGES_PER_ITERATION = {"jacobi": lambda n: 2 * n, "fft2d": lambda n: n * n}
#: Messages simulated per run at most when extrapolating a stationary case.
MESSAGE_BUDGET = 20000
#: Simulated iterations, over all runs, each point of a stationary curve rests on
#: at least: an iteration's time has a long tail (a message drawn from the
#: profile's tail now and then), and a mean over a few iterations misses it.
MIN_ITERATION_SAMPLES = 32


def simulated_iterations(name: str, counts: list[int], full: int) -> int:
    """Iterations a stationary case simulates per run at *every* count of its curve:
    what :data:`MESSAGE_BUDGET` allows at the largest count, so all points of a curve
    are estimated alike (each point's own budget once gave the FFT 78 iterations at 16
    ranks and 4 at 64, whose mean missed the tail and fell five-fold).

    >>> simulated_iterations("fft2d", [4, 16, 64], 100), simulated_iterations("jacobi", [4], 50)
    (4, 50)
    """
    largest = max(counts)
    return max(1, min(full, MESSAGE_BUDGET // MESSAGES_PER_ITERATION[name](largest)))


def scaling_predictions(profile: Path, calibration: dict, plan: DemoPlan,
                        progress: Progress, cases=CASES) -> dict[str, list[dict]]:
    """Full-model predictions beyond this machine, 2 ranks per node (one per core here).

    One curve is one problem size: the FFT's points past its grid's rows (where
    the grid grows with the ranks, :func:`fft_beyond_grid`) are a curve of their
    own, ``fft2d (grid = ranks)``.  Jacobi and the FFT are stationary from one
    iteration to the next, so they simulate the same number of iterations at
    every count of a curve (:func:`simulated_iterations`), in enough runs for
    :data:`MIN_ITERATION_SAMPLES` iterations, and scale the time to the full
    count (the sd by the square root of that factor, iterations being
    independent).  Every point says how it was obtained: ``grid``,
    ``iterations``, ``simulated_iterations``, ``runs``, ``scaled_by`` and
    ``calibration``.
    """
    out: dict[str, list[dict]] = {}
    for name, case in cases.items():
        model = load_model(case.model_path)
        curves: dict[str, list[tuple[int, dict, str]]] = {}
        for n in plan.scaling_counts:
            if name == "fft2d" and plan.size.grid % n:
                params = fft_beyond_grid(calibration, n, plan.size)
                if params is None:
                    continue
                how = (f"a {params['N']} x {params['N']} grid, one row per rank; serial time "
                       f"from the kernels calibrated at {plan.size.grid ** 2 // n} ranks "
                       "(as many points per rank), scaled by log2 of the row length")
                curves.setdefault(f"{name} (grid = ranks)", []).append((n, params, how))
            else:
                params = case.model_params(calibration, n, plan.size)
                how = f"serial time from the kernels calibrated for {n} ranks on this machine"
                curves.setdefault(name, []).append((n, params, how))
        for curve, entries in curves.items():
            counts = [n for n, _, _ in entries]
            points = []
            for n, params, how in entries:
                full = simulated = params.get("iterations", 1)
                if name in MESSAGES_PER_ITERATION:
                    simulated = simulated_iterations(name, counts, full)
                runs = max(2, plan.runs // 4, math.ceil(MIN_ITERATION_SAMPLES / simulated)
                           if simulated < full else 0)
                progress(f"{curve}: predicting {n} processes")
                machine = machine_from_profile(str(profile), ppn=2,
                                               collectives=case.collectives)
                pred = predict(model, n, machine, runs=runs, seed=1,
                               params={**params, "iterations": simulated}
                               if "iterations" in params else params,
                               bounds=False, workers=1)
                scale = full / simulated
                points.append({"n": n, "mean": pred.mean * scale,
                               "sd": pred.sd * math.sqrt(scale),
                               "grid": params.get("N", plan.size.grid), "iterations": full,
                               "simulated_iterations": simulated, "runs": runs,
                               "scaled_by": scale, "calibration": how})
            out[curve] = points
    return out


def fft_beyond_grid(calibration: dict, numprocs: int, size: ProblemSize) -> dict | None:
    """The FFT's parameters on more ranks than its grid has rows: the grid grows to
    ``numprocs`` rows (one row per rank), and a rank's serial time is that of the
    calibrated count holding as many grid points, ``grid**2 / numprocs`` ranks, scaled
    by ``log2`` of the row length (an FFT's work per point); None when that count was
    not calibrated.

    >>> cal = {"fft2d": {"row_ffts": {"64": {"median": 1e-4}}, "transpose": {},
    ...                  "program_iteration": {"median": 6.4e-3}}}
    >>> p = fft_beyond_grid(cal, 1024, ProblemSize())
    >>> p["N"], round(p["t_serial"] / 1e-4, 6)
    (1024, 1.25)
    >>> fft_beyond_grid(cal, 512, ProblemSize()) is None     # 128 ranks not calibrated
    True
    """
    grid = size.grid
    if numprocs <= grid or numprocs % grid or (grid * grid) % numprocs:
        return None
    same_points = grid * grid // numprocs
    if str(same_points) not in calibration.get("fft2d", {}).get("row_ffts", {}):
        return None
    params = CASES["fft2d"].model_params(calibration, same_points, size)
    longer = math.log2(numprocs) / math.log2(grid)
    return {**params, "N": numprocs, "t_serial": params["t_serial"] * longer,
            "t_sd": params["t_sd"] * longer}


def pascal_triangle(runs: int = 200, numprocs: int = 16) -> dict:
    """Per-rank completion times of a broadcast with random point-to-point times."""
    times = bcast_completion_times("library=mpich-1.2", EAGER, numprocs, runs, seed=1)
    return {"title": f"MPI_Bcast, {numprocs} ranks, MPICH-1.2 binomial tree: "
                     "per-rank completion times",
            "completions": [float(t) for t in times.ravel()],
            "caption": "Simulated with Pearson V point-to-point times and uniform Isend local "
                       "completion: log2(n)+1 peaks in the ratios 1:4:6:4:1, the root first, as "
                       "the thesis measured (ch. 5; docs/collectives.md)."}


def run_demo(outdir: str = "pevpm-report", quick: bool = False, profile: str | None = None,
             progress: Progress = lambda _: None) -> dict:
    """Run every step and write ``outdir/index.html``; returns the results."""
    started = time.monotonic()
    plan = DemoPlan.for_mode(quick)
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    machine_db = out / "machine.db"
    if profile is None:
        machine_db.unlink(missing_ok=True)
        run_benchmark(machine_db, plan.bench_procs, progress)
    else:
        open_profile(profile).close()         # a clear error for a foreign file
        shutil.copyfile(resolve_profile(profile), machine_db)
    figures = fit_and_plot(machine_db, out, progress)
    calibration = calibrate_examples(machine_db, plan, progress)
    validation, breakdowns = {}, {}
    for name, case in CASES.items():
        again = functools.partial(calibrate_example, name, plan, plan.counts[name],
                                  plan.recalibration_repeats)
        rows = validate_case(case, plan.counts[name], str(machine_db), calibration, plan.size,
                             plan.repeats, plan.runs, seed=1, progress=progress,
                             recalibrate=again)
        progress("\n" + format_rows(name, rows))
        largest = rows[-1]
        breakdowns[name] = {"numprocs": largest["n"], "ranks": [
            {kind: largest["breakdown"][kind][r] for kind in ("compute", "communication",
                                                              "waiting")}
            for r in range(largest["n"])]}
        validation[name] = [{k: v for k, v in r.items() if k != "breakdown"} for r in rows]
    scaling = scaling_predictions(machine_db, calibration, plan, progress)
    progress("simulating the broadcast's per-rank completion and a traced Jacobi run")
    collectives = [pascal_triangle(runs=60 if quick else 200)]
    jacobi = CASES["jacobi"]
    traced = simulate(load_model(jacobi.model_path), 4,
                      machine_from_profile(str(machine_db), ppn=4), trace=True,
                      params={**jacobi.model_params(calibration, 4, plan.size), "iterations": 20})
    if traced.engine_note:
        progress(f"note: the pure-Python engine ran the traced Jacobi run: "
                 f"{traced.engine_note}")
    write_trace(traced, out / "trace.json", title="jacobi, 4 ranks, 20 iterations")
    with Profile.open(machine_db) as prof:
        info = prof.machine
        described = {"name": info.name, "hosts": ", ".join(info.hosts),
                     "MPI library": " ".join(info.mpi_library.split()),
                     "MPI version": info.mpi_version,
                     "benchmarked placements": ", ".join(info.placements)}
    results = {
        "title": "pevpm demo: " + (platform.node() or "this machine"),
        "notes": [(f"Generated by 'pevpm demo{' --quick' if quick else ''}' in "
                   f"{time.monotonic() - started:.0f} s. Real runs: {plan.repeats} repeats "
                   "after a warm-up; predictions: Monte Carlo over the measured distributions. "
                   "Predictions beyond the measured counts assume nodes like this one, 2 ranks "
                   "each, on a network that behaves like its shared memory.")]
                 + [("Predictions beyond the measured counts: each curve is one problem size "
                    "(the table under each says the grid, the iterations simulated and how "
                    "the time was scaled to all of them, and which calibration gave the "
                    "serial times).")],
        "machine": described, "validation": validation, "scaling": scaling,
        "breakdowns": breakdowns, "collectives": collectives, "figures": figures,
        "trace": "trace.json",
    }
    write_report(results, str(out))
    with open(out / "calibration.json", "w", encoding="utf-8") as fh:
        json.dump(calibration, fh, indent=1)
    return results


__all__ = ["DemoPlan", "run_demo", "scaling_predictions", "simulated_iterations"]
