"""The bag of tasks in the contention lab: real runs against two PEVPM models.

The real program runs in :class:`~pevpm.validate.lab.ContentionLab`, one
rank per node (namespace), so every job's input leaves over the master's
shaped link and every result comes back over it. The same configurations are
predicted on the lab's own machine profile (MPIBench run inside the lab) with
one rank per node:

``full``
    PEVPM proper: each message is costed with the profile block that matches
    the contention the scoreboard counts on the links it crosses;
``restricted``
    the same, but every message costed at contention 1 (no node-link
    contention), the model the thesis compares against.

The lab's switch is an unshaped bridge, so only node links queue: the
predicted machine's backplane never limits (:data:`LAB_SWITCH_CAPACITY`).

Speedups are against each series' own one-process time; a series
*saturates* at the first count after which no larger count raises its
speedup by more than ``rise`` (5 %).

>>> rows = [{"n": n, "measured_mean": t, "measured_sd": 0.0, "predictions": {}}
...         for n, t in [(1, 2.0), (2, 1.0), (4, 0.7), (8, 0.69)]]
>>> saturation(rows, "measured")
4
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

from pevpm.errors import PevpmError
from pevpm.machine.machine import Machine
from pevpm.machine.profile_model import machine_from_profile
from pevpm.machine.topology import Topology
from pevpm.model.loader import load_model
from pevpm.validate.cases import CASES, ProblemSize, with_machine
from pevpm.validate.lab import measure_in_lab
from pevpm.validate.runner import Measurement
from pevpm.validate.validation import format_rows
from pevpm.vm.strategies.montecarlo import predict

CASE = CASES["bag_of_tasks"]
#: Messages the lab's (unshaped) switch carries at once: never the bottleneck.
LAB_SWITCH_CAPACITY = 1 << 20
#: Largest send that completes before its data crossed the link. Measured in
#: the lab at 80 Mbit/s (Isend then Test until complete, receive posted first,
#: medians of 20): 24 B completed after 0.064 ms, its receive after 0.076 ms;
#: 1 KiB after 0.31 ms against 0.11 ms; 64 KiB after 8.1 ms against 7.9 ms.
LAB_EAGER_LIMIT = 256
#: model name -> whether it counts node-link contention
LAB_MODELS = {"full": True, "restricted": False}
#: Smallest relative speedup gain that still counts as rising.
RISE = 0.05


def lab_machine(profile_path: str, node_contention: bool = True) -> Machine:
    """The lab as a simulated machine: the profile's message times, one rank
    per node, a switch that never limits, no eager sends; ``node_contention=False``
    is the restricted PEVPM.

    Over the lab's TCP transport only tiny sends complete locally (see
    :data:`LAB_EAGER_LIMIT`); larger ones complete with their receive.
    """
    machine = machine_from_profile(profile_path, ppn=1, node_contention=node_contention,
                                   eager_limit=LAB_EAGER_LIMIT)
    return replace(machine, topology=Topology(procs_per_node=1,
                                              backplane_capacity=LAB_SWITCH_CAPACITY))


def predict_in_lab(counts: list[int], profile_path: str, calibration: dict, size: ProblemSize,
                   runs: int, seed: int,
                   progress: Callable[[str], None] = lambda _: None) -> dict[int, dict]:
    """``{n: {"predictions": {model: mean seconds}, "sd": {model: sd}}}`` for both models."""
    model = load_model(CASE.model_path)
    machines = {name: lab_machine(profile_path, counted) for name, counted in LAB_MODELS.items()}
    out: dict[int, dict] = {}
    for n in counts:
        params = CASE.model_params(calibration, n, size)
        row: dict = {"predictions": {}, "sd": {}}
        for name, machine in machines.items():
            progress(f"bag_of_tasks: predicting {n} process(es) with the {name} model")
            pred = predict(model, n, machine, runs=runs, seed=seed,
                           params=with_machine(params, model, machine), bounds=False, workers=1)
            row["predictions"][name], row["sd"][name] = pred.mean, pred.sd
        out[n] = row
    return out


def validate_in_lab(counts: list[int], profile_path: str, calibration: dict,
                    size: ProblemSize | None = None, rate: str | None = "80mbit",
                    burst: str = "4kb", repeats: int = 3, runs: int = 12, seed: int = 1,
                    timeout: float = 300.0,
                    progress: Callable[[str], None] = lambda _: None,
                    measure: Callable[..., dict] = measure_in_lab) -> list[dict]:
    """Measured (in a lab with links of ``rate``) and predicted rows, one per count
    (``size``: the problem, default :class:`~pevpm.validate.cases.ProblemSize`).

    ``measure`` is :func:`~pevpm.validate.lab.measure_in_lab` or a stand-in
    with its signature (tests).
    """
    counts = sorted(set(counts))
    size = size or ProblemSize()
    CASE.check_procs(counts, size)
    if 1 not in counts:
        raise PevpmError("lab validation needs the 1-process run (the speedups' base); "
                         "add 1 to the process counts")

    def report(n, m):
        progress(f"bag_of_tasks in the lab: -n {n} median {m.median:.4f} s "
                 f"over {len(m.times)} runs")

    progress(f"bag_of_tasks: real runs in the lab, {rate or 'unshaped'} links, "
             f"-n {','.join(map(str, counts))}, {repeats} repeats each")
    measured = measure("bag_of_tasks", counts, lab_args(size), rate=rate,
                       burst=burst, ranks_per_node=1, repeats=repeats, warmup=1,
                       timeout=timeout, progress=report)
    predicted = predict_in_lab(counts, profile_path, calibration, size, runs, seed, progress)
    return [{"n": n, "measured_mean": measured[n].mean, "measured_sd": measured[n].sd,
             "measured_times": list(measured[n].times), **predicted[n]} for n in counts]


def lab_args(size: ProblemSize) -> list[str]:
    """The bag of tasks' arguments in the lab for ``size``."""
    return CASE.program_args(size)


def _saved(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            saved = json.load(fh)
        saved["rows"] = {r["n"]: r for r in saved["rows"]}
        saved["args"] = list(saved["args"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise PevpmError(f"not a 'pevpm lab validate --json' file: {exc}", where=path) from None
    return saved


def saved_calibration(path: str) -> dict | None:
    """The calibration an earlier ``--json`` file was predicted with (None if it has none)."""
    return _saved(path).get("calibration")


def saved_measurements(path: str) -> Callable[..., dict]:
    """A stand-in for :func:`~pevpm.validate.lab.measure_in_lab` that returns the
    measurements of an earlier ``pevpm lab validate --json`` file (to predict
    again without root); it refuses counts or arguments the file does not hold."""
    saved = _saved(path)
    rows, args = saved["rows"], saved["args"]

    def measure(program, counts, program_args, **_options) -> dict:
        missing = [n for n in counts if n not in rows]
        if missing or list(program_args) != args:
            raise PevpmError(f"holds counts {sorted(rows)} of {program} {' '.join(args)}, "
                             f"not {counts} of {' '.join(program_args)}", where=path)
        return {n: Measurement(program, n, args, rows[n]["measured_times"]) for n in counts}

    return measure


def speedups(rows: list[dict], series: str) -> dict[int, float]:
    """Speedup of ``series`` ("measured" or a model name) against its own 1-process time."""
    def time(row):
        return row["measured_mean"] if series == "measured" else row["predictions"][series]

    base = next(time(r) for r in rows if r["n"] == 1)
    return {r["n"]: base / time(r) for r in rows}


def saturation(rows: list[dict], series: str, rise: float = RISE) -> int | None:
    """The count at which ``series``' speedup stops rising (see module doc);
    ``None`` while it still rises at the largest count."""
    curve = speedups(rows, series)
    counts = sorted(curve)
    for i, n in enumerate(counts[:-1]):
        if max(curve[m] for m in counts[i + 1:]) < curve[n] * (1 + rise):
            return n
    return None


def format_lab_report(rows: list[dict], rate: str | None) -> str:
    """The validation table, the speedups of every series and their saturation points."""
    series = ["measured", *rows[0]["predictions"]]
    curves = {s: speedups(rows, s) for s in series}
    lines = [format_rows(f"bag_of_tasks in the lab ({rate or 'unshaped'} links, "
                         "one rank per node)", rows), "",
             "speedup" + "".join(f"{s:>14}" for s in series)]
    for r in rows:
        lines.append(f"{r['n']:7d}" + "".join(f"{curves[s][r['n']]:14.2f}" for s in series))
    lines.append("")
    largest = rows[-1]["n"]
    for s in series:
        point = saturation(rows, s)
        peak = max(curves[s].values())
        where = (f"saturates at n = {point}" if point is not None
                 else f"still rising at n = {largest}")
        lines.append(f"{s:>12}: {where} (peak speedup {peak:.2f})")
    return "\n".join(lines)
