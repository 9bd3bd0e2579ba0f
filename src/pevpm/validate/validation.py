"""Run a case study for real, predict it several ways, and compare.

For each process count the real program runs ``repeats`` times under
mpiexec; the model is predicted with the profile-driven machine under the
full measured distributions and under the thesis's baselines (minimum and
mean of the two-process ping-pong, mean of the matching n x p block), plus
two analytic baselines: Amdahl's law with its serial fraction fitted to the
measured speedups, and a latency/bandwidth (DP*Graph-style linear) model
fitted to the ping-pong means and evaluated on the same program structure.

>>> row = {"n": 2, "measured_mean": 1.0, "measured_sd": 0.02,
...        "predictions": {"full": 1.04, "mean2x1": 0.8}}
>>> print(format_rows("jacobi", [row]))
jacobi
    n      measured mean ± sd              full   err %           mean2x1   err %
    2       1.0000 s ± 0.0200          1.0400 s    +4.0          0.8000 s   -20.0

With ``recalibrate`` :func:`validate_case` interleaves calibration with the
real runs (calibrate, run at 1 rank, calibrate, run at 2 ranks, ...), so a
point's prediction uses serial times measured in the conditions of its own
runs; the table notes a point whose calibration and runs still saw different
loads (other processes' CPU, :class:`pevpm.host.BusyMeter`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pevpm.analytic.laws import amdahl_speedup, fit_amdahl
from pevpm.host import BusyMeter, loads_differ
from pevpm.machine.profile_model import machine_from_profile
from pevpm.model.loader import load_model
from pevpm.validate.cases import Case, ProblemSize, with_machine
from pevpm.validate.runner import (
    LocalLauncher,
    Measurement,
    disturbance_notes,
    job_cpu_seconds,
    run_example,
)
from pevpm.vm.montecarlo import predict

#: Models compared at every point ("full" is PEVPM proper; see
#: :data:`pevpm.machine.profile_model.COMM_MODELS`).
PROFILE_MODELS = ("full", "min2x1", "mean2x1", "mean-nxp", "latency-bandwidth")


def measure(case: Case, counts: list[int], size: ProblemSize, repeats: int,
            progress: Callable[[str], None] = lambda _: None) -> dict[int, Measurement]:
    """Real runs of ``case`` at every count (a warm-up, then ``repeats``)."""
    launcher = LocalLauncher(env=dict(case.environment))
    out = {}
    for n in counts:
        progress(f"{case.name}: running for real on {n} process(es), {repeats} repeats")
        out[n] = run_example(case.name, n, case.program_args(size), repeats=repeats,
                             launcher=launcher)
    return out


def predict_case(case: Case, counts: list[int], profile_path: str, calibration: dict,
                 size: ProblemSize, runs: int, seed: int,
                 progress: Callable[[str], None] = lambda _: None) -> dict[int, dict]:
    """Predicted mean run time per count and model: ``{n: {model: seconds}}``,
    plus ``full_sd`` and the full prediction's per-rank breakdown."""
    model = load_model(case.model_path)
    out: dict[int, dict] = {}
    for n in counts:
        params = case.model_params(calibration, n, size)
        row: dict = {"predictions": {}}
        for name in PROFILE_MODELS:
            progress(f"{case.name}: predicting {n} process(es) with the {name} model")
            machine = machine_from_profile(profile_path, ppn=n, model=name,
                                           collectives=case.collectives)
            pred = predict(model, n, machine, runs=runs if name == "full" else max(1, runs // 4),
                           seed=seed, params=with_machine(params, model, machine),
                           bounds=False, workers=1)
            row["predictions"][name] = pred.mean
            if name == "full":
                row["full_sd"] = pred.sd
                row["breakdown"] = {k: [float(x) for x in v]
                                    for k, v in pred.breakdown().items()}
        out[n] = row
    return out


def add_amdahl(rows: list[dict]) -> None:
    """Add Amdahl's law, serial fraction fitted to the measured speedups, to
    each row (needs a measured 1-process time)."""
    base = next((r for r in rows if r["n"] == 1), None)
    if base is None or len(rows) < 2:
        return
    t1 = base["measured_mean"]
    procs = np.array([r["n"] for r in rows], float)
    speedups = t1 / np.array([r["measured_mean"] for r in rows])
    serial = fit_amdahl(procs, speedups)
    for r in rows:
        r["predictions"]["amdahl"] = float(t1 / amdahl_speedup(r["n"], 1.0 - serial))


def validate_case(case: Case, counts: list[int], profile_path: str, calibration: dict | None,
                  size: ProblemSize, repeats: int, runs: int, seed: int,
                  progress: Callable[[str], None] = lambda _: None,
                  recalibrate: Callable[[], dict] | None = None) -> list[dict]:
    """Measured vs predicted rows for ``case`` at each count (see module doc).

    ``recalibrate``: called right before the real runs at each count; its
    calibration (instead of ``calibration``) predicts that count, and the
    row records the other processes' CPU during it (``calibration_others``).
    """
    case.check_procs(counts, size)
    rows = []
    for n in counts:
        row_calibration, calibration_others = calibration, None
        if recalibrate is not None:
            progress(f"{case.name}: calibrating again before the runs on {n} process(es)")
            meter, began = BusyMeter().start(), job_cpu_seconds()
            row_calibration = recalibrate()
            calibration_others = round(meter.others(job_cpu_seconds() - began), 3)
        m = measure(case, [n], size, repeats, progress)[n]
        predicted = predict_case(case, [n], profile_path, row_calibration, size, runs, seed,
                                 progress)
        rows.append({"n": n, "measured_mean": m.mean, "measured_sd": m.sd,
                     "measured_times": list(m.times), "measured_others": m.busiest,
                     "calibration_others": calibration_others, **predicted[n]})
    add_amdahl(rows)
    return rows


def condition_notes(rows: list[dict]) -> list[str]:
    """Notes for the points whose calibration and real runs saw different loads
    (:func:`pevpm.host.loads_differ`).

    >>> condition_notes([{"n": 1, "calibration_others": 0.05, "measured_others": 0.1},
    ...                  {"n": 4, "calibration_others": 0.05, "measured_others": 1.1}])
    ['note: at n=4 the calibration and the real runs saw different loads: other processes used 0.05 cores during the calibration, up to 1.10 during the runs']
    """
    notes = []
    for r in rows:
        during = r.get("calibration_others")
        if not loads_differ(r.get("measured_others", 0.0), during):
            continue
        notes.append(f"note: at n={r['n']} the calibration and the real runs saw different "
                     f"loads: other processes used {during:.2f} cores during the calibration, "
                     f"up to {r['measured_others']:.2f} during the runs")
    return notes


def format_rows(example: str, rows: list[dict]) -> str:
    """The validation table: measured mean ± sd, each prediction and its error %."""
    models = list(dict.fromkeys(m for r in rows for m in r["predictions"]))
    lines = [example, f"{'n':>5}  {'measured mean ± sd':>22}"
             + "".join(f"{m:>18}{'err %':>8}" for m in models)]
    for r in rows:
        cells = ""
        for m in models:
            p = r["predictions"].get(m)
            if p is None:
                cells += f"{'-':>18}{'-':>8}"
                continue
            err = (p - r["measured_mean"]) / r["measured_mean"] * 100
            cells += f"{p:16.4f} s{err:+8.1f}"
        measured = f"{r['measured_mean']:.4f} s ± {r['measured_sd']:.4f}"
        lines.append(f"{r['n']:5d}  {measured:>22}{cells}")
    lines += disturbance_notes({r["n"]: r.get("measured_others", 0.0) for r in rows})
    lines += condition_notes(rows)
    return "\n".join(lines)
