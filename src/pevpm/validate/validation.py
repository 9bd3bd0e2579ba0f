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
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pevpm.analytic.laws import amdahl_speedup, fit_amdahl
from pevpm.machine.profile_model import machine_from_profile
from pevpm.model.loader import load_model
from pevpm.validate.cases import Case, ProblemSize
from pevpm.validate.runner import LocalLauncher, Measurement, disturbance_notes, run_example
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
                           seed=seed, params=params, bounds=False, workers=1)
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


def validate_case(case: Case, counts: list[int], profile_path: str, calibration: dict,
                  size: ProblemSize, repeats: int, runs: int, seed: int,
                  progress: Callable[[str], None] = lambda _: None) -> list[dict]:
    """Measured vs predicted rows for ``case`` at each count (see module doc)."""
    case.check_procs(counts, size)
    measured = measure(case, counts, size, repeats, progress)
    predicted = predict_case(case, counts, profile_path, calibration, size, runs, seed,
                             progress)
    rows = []
    for n in counts:
        m = measured[n]
        rows.append({"n": n, "measured_mean": m.mean, "measured_sd": m.sd,
                     "measured_times": list(m.times), "measured_others": m.busiest,
                     **predicted[n]})
    add_amdahl(rows)
    return rows


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
    return "\n".join(lines)
