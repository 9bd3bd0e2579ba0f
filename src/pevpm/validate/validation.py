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
real runs of each count, one calibration before every timed repeat and one
after the last (calibrate, run, calibrate, run, calibrate), and predicts the
count from those calibrations' model parameters (:func:`interleaved_params`),
so the serial times and the measured times come from the same stretch of
the machine; the table notes a point whose calibrations and runs still saw
different loads (other processes' CPU, :class:`pevpm.host.BusyMeter`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pevpm.analytic.laws import amdahl_speedup, fit_amdahl
from pevpm.host import loads_differ
from pevpm.machine.profile_model import machine_from_profile
from pevpm.model.loader import load_model
from pevpm.validate.cases import Case, ProblemSize, with_machine
from pevpm.validate.runner import (
    LocalLauncher,
    Measurement,
    disturbance_notes,
    run_example,
    with_others,
)
from pevpm.vm.strategies.montecarlo import predict

#: Models compared at every point ("full" is PEVPM proper; see
#: :data:`pevpm.machine.profile_model.COMM_MODELS`).
PROFILE_MODELS = ("full", "min2x1", "mean2x1", "mean-nxp", "latency-bandwidth")


def measure(case: Case, counts: list[int], size: ProblemSize, repeats: int,
            progress: Callable[[str], None] = lambda _: None,
            between: Callable[[], None] | None = None) -> dict[int, Measurement]:
    """Real runs of ``case`` at every count (a warm-up, then ``repeats``);
    ``between`` is called before each timed repeat and after the last
    (:func:`pevpm.validate.runner.run_example`)."""
    launcher = LocalLauncher(env=dict(case.environment))
    out = {}
    for n in counts:
        progress(f"{case.name}: running for real on {n} process(es), {repeats} repeats")
        out[n] = run_example(case.name, n, case.program_args(size), repeats=repeats,
                             launcher=launcher, between=between)
    return out


def predict_point(case: Case, n: int, profile_path: str, params: dict, runs: int, seed: int,
                  progress: Callable[[str], None] = lambda _: None) -> dict:
    """Predicted mean run time of ``case`` on ``n`` processes with model
    parameters ``params`` (:meth:`Case.model_params`), per model:
    ``{"predictions": {model: seconds}, "full_sd": ..., "breakdown": ...}``,
    the last the full prediction's per-rank compute/communication/waiting."""
    return predict_models(load_model(case.model_path), n, profile_path, params, runs, seed,
                          collectives=case.collectives,
                          progress=lambda model: progress(
                              f"{case.name}: predicting {n} process(es) with the {model} model"))


def predict_models(model, n: int, profile_path: str, params: dict, runs: int, seed: int,
                   collectives: str | None = None,
                   progress: Callable[[str], None] = lambda _: None) -> dict:
    """:func:`predict_point` for any loaded ``model``: every rank on one host of
    the profile, ``full`` with ``runs`` runs and each baseline of
    :data:`PROFILE_MODELS` with a quarter of them; ``progress(model_name)``
    before each.

    >>> from pevpm.model.builder import ModelBuilder
    >>> b = ModelBuilder()
    >>> b.serial("0.5")
    >>> row = predict_models(b.build(), 2, "default", {}, runs=2, seed=1)
    >>> row["predictions"]["full"], sorted(row["predictions"]) == sorted(PROFILE_MODELS)
    (0.5, True)
    """
    row: dict = {"predictions": {}}
    for name in PROFILE_MODELS:
        progress(name)
        machine = machine_from_profile(profile_path, ppn=n, model=name, collectives=collectives)
        pred = predict(model, n, machine, runs=runs if name == "full" else max(1, runs // 4),
                       seed=seed, params=with_machine(params, model, machine),
                       bounds=False, workers=1)
        row["predictions"][name] = pred.mean
        if name == "full":
            row["full_sd"] = pred.sd
            row["breakdown"] = {k: [float(x) for x in v] for k, v in pred.breakdown().items()}
    return row


def interleaved_params(params: list[dict]) -> dict:
    """The model parameters that predict the mean of ``len(params) - 1`` real
    runs interleaved with ``len(params)`` calibrations (one before each run,
    one after the last), from each calibration's parameters in order.

    Each run is best predicted from the mean of the calibrations either side
    of it, and the runs' mean from the mean of those: a trapezoid weighting
    in which the first and last calibrations count half as much as the ones
    between two runs.  A run time is, to first order, linear in the serial
    times, so one prediction from these parameters is the mean of the
    per-run predictions, at the cost of one Monte Carlo prediction (with one
    seed) instead of one per run.  Parameters equal in every calibration
    (sizes, counts) are kept as they are.

    >>> interleaved_params([{"N": 256, "t": 1.0}, {"N": 256, "t": 2.0},
    ...                     {"N": 256, "t": 4.0}])
    {'N': 256, 't': 2.25}
    >>> interleaved_params([{"t": 1.0}])
    {'t': 1.0}
    """
    weights = np.ones(len(params))
    weights[[0, -1]] = 0.5
    weights /= weights.sum()
    return {key: first if all(p[key] == first for p in params)
            else float(np.dot(weights, [p[key] for p in params]))
            for key, first in params[0].items()}


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


def interleaved_runs(case: Case, n: int, size: ProblemSize, repeats: int,
                     recalibrate: Callable[[], dict],
                     progress: Callable[[str], None] = lambda _: None
                     ) -> tuple[Measurement, dict, float]:
    """The real runs of ``case`` on ``n`` processes with ``recalibrate()`` called
    before each timed repeat and after the last (``repeats + 1`` calibrations).

    Returns the runs, the model parameters for their mean
    (:func:`interleaved_params`) and the most CPU other processes used
    during one calibration (cores).
    """
    calibrations, others = [], []

    def calibrate_again() -> None:
        progress(f"{case.name}: calibrating ({len(calibrations) + 1} of {repeats + 1}) "
                 f"between the runs on {n} process(es)")
        calibration, used = with_others(recalibrate)
        calibrations.append(calibration)
        others.append(used)

    m = measure(case, [n], size, repeats, progress, between=calibrate_again)[n]
    params = interleaved_params([case.model_params(c, n, size) for c in calibrations])
    return m, params, max(others)


def validate_case(case: Case, counts: list[int], profile_path: str, calibration: dict | None,
                  size: ProblemSize, repeats: int, runs: int, seed: int,
                  progress: Callable[[str], None] = lambda _: None,
                  recalibrate: Callable[[], dict] | None = None) -> list[dict]:
    """Measured vs predicted rows for ``case`` at each count (see module doc).

    ``recalibrate``: called before each of a count's timed repeats and after
    the last (:func:`interleaved_runs`); its calibrations (instead of
    ``calibration``) predict that count, and the row records the most CPU
    other processes used during one of them (``calibration_others``).

    >>> from pevpm.validate.calibration import calibrate
    >>> from pevpm.validate.cases import CASES
    >>> rows = validate_case(CASES["jacobi"], [1, 2], "default", None, ProblemSize.quick(),
    ...                      repeats=3, runs=12, seed=1,
    ...                      recalibrate=lambda: calibrate(["jacobi"]))  # doctest: +SKIP
    >>> rows[0]["n"], len(rows[0]["measured_times"])  # doctest: +SKIP
    (1, 3)
    """
    case.check_procs(counts, size)
    rows = []
    for n in counts:
        if recalibrate is None:
            m = measure(case, [n], size, repeats, progress)[n]
            params, calibration_others = case.model_params(calibration, n, size), None
        else:
            m, params, calibration_others = interleaved_runs(case, n, size, repeats,
                                                             recalibrate, progress)
        rows.append({"n": n, "measured_mean": m.mean, "measured_sd": m.sd,
                     "measured_times": list(m.times), "measured_others": m.busiest,
                     "calibration_others": calibration_others,
                     **predict_point(case, n, profile_path, params, runs, seed, progress)})
    add_amdahl(rows)
    return rows


def condition_notes(rows: list[dict]) -> list[str]:
    """Notes for the points whose calibrations and real runs saw different loads
    (:func:`pevpm.host.loads_differ`; the busiest calibration against the busiest run).

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
