"""The analyse phase of ``benchmarks/node_validation.py``: predictions for what the node measured.

Reads ``OUT/node.json``, the node's profile ``OUT/machine.db`` and its traces
``OUT/traces``; writes ``OUT/results.json``, ``OUT/tables.md`` and an HTML
report in ``OUT/report``.  Every prediction puts all ranks on one node like
the measured one (its cores come from the profile), so each measured point
has a core per rank.

* Case studies: the model parameters of a point are those of its two
  calibrations (before and after its runs, :func:`interleaved_params`); the
  ``full`` model and the baselines as ``pevpm validate`` predicts them.
* The tutorial's CG: the mean of the two calibrations' ``-D`` values.
* The run's own clock (Jacobi, FFT; runs measured since the per-rank
  breakdowns are kept): every serial parameter times :func:`clock_factor`,
  the kernels' seconds inside the timed runs over the calibrations' seconds
  for the same kernels on the same strips.  On a node whose CPU speed
  drifts between a calibration and the runs, ``full`` at the runs' clock
  is the model's own error.
* Extraction: the timed section of each traced case study (first barrier to
  the final gather) extracted from all traced counts, predicted at every
  measured count against the real runs, and at 64, 256 and 1,024 ranks
  (nodes like this one) against the hand-written model, whose loop of
  thousands of iterations is simulated for 100 and 200 and extrapolated
  (``benchmarks/trace_extract.py``'s :func:`mean_time`).
"""

from __future__ import annotations

import json
import statistics
import tarfile
import tempfile
from pathlib import Path

from node_cases import CG_ARGS, SCALE, SECTION
from trace_extract import extracted, hand_params, mean_time
from trace_replay_examples import case_machine

from pevpm.errors import PevpmError
from pevpm.machine.presets import parse_machine
from pevpm.machine.profile_model import machine_from_profile
from pevpm.model.loader import load_model
from pevpm.report.html import write_report
from pevpm.trace.otf2.read import read_archive
from pevpm.validate.cases import CASES, ProblemSize, fft_kernels
from pevpm.validate.runner import EXAMPLES_DIR
from pevpm.validate.validation import (
    PROFILE_MODELS,
    add_amdahl,
    interleaved_params,
    predict_models,
    predict_point,
)

SEED = 1


def measured(point: dict) -> dict:
    """A row's measured columns from the node's times."""
    times = point["times"]
    return {"measured_mean": statistics.fmean(times),
            "measured_sd": statistics.stdev(times) if len(times) > 1 else 0.0,
            "measured_times": times, "measured_others": max(point.get("others", [0.0]))}


def rows_of(points: dict, predicted) -> list[dict]:
    """Measured against predicted rows, by rank count: ``predicted(n, point)`` is
    :func:`predict_models`' row for one measured point; Amdahl fitted to them all."""
    rows = []
    for n in sorted(int(k) for k in points):
        row = {"n": n, **measured(points[str(n)]), **predicted(n, points[str(n)])}
        row.pop("breakdown")
        rows.append(row)
    add_amdahl(rows)
    return rows


#: The phases of an iteration each program times inside its run (its result
#: line's per-rank breakdown) that the calibration times as kernels.
IN_RUN_KERNELS = {"jacobi": ("compute",), "fft2d": ("compute", "transpose")}


def calibrated_kernels(name: str, calibration: dict, n: int) -> float:
    """Seconds one iteration of ``IN_RUN_KERNELS[name]`` takes on one of ``n``
    ranks by one calibration: the Jacobi's stencil on its strip, the FFT's
    two row-FFT phases and its pack and unpack (each timed with the
    neighbours busy)."""
    data = calibration[name]
    if name == "jacobi":
        return data["strip"][str(n)]["median"]
    return fft_kernels(data, str(n))


def clock_factor(name: str, point: dict, n: int, iterations: int,
                 over_ranks=statistics.fmean) -> float | None:
    """How much slower the kernels ran inside the timed runs than in the
    calibrations around them: the runs' median of ``over_ranks`` (the mean,
    or ``max`` for the slowest rank) of the ranks' kernel seconds per
    iteration, over the calibrations' mean.  None where the point kept no
    per-rank breakdown or the program times no kernels.

    >>> point = {"ranks": [[{"compute": 2.0}, {"compute": 2.2}]],
    ...          "calibrations": [{"jacobi": {"strip": {"2": {"median": 1e-4}}}}]}
    >>> round(clock_factor("jacobi", point, 2, 10000), 3), round(
    ...     clock_factor("jacobi", point, 2, 10000, max), 3)
    (2.1, 2.2)
    """
    if name not in IN_RUN_KERNELS or not point.get("ranks"):
        return None
    in_run = statistics.median(
        over_ranks([sum(rank[k] for k in IN_RUN_KERNELS[name]) for rank in ranks])
        for ranks in point["ranks"]) / iterations
    calibrated = statistics.fmean(calibrated_kernels(name, c, n) for c in point["calibrations"])
    return in_run / calibrated


def at_clock(params: dict, factor: float) -> dict:
    """Model parameters with every serial time (``t_...``) scaled by ``factor``."""
    return {k: v * factor if k.startswith("t_") else v for k, v in params.items()}


def case_rows(name: str, points: dict, profile: str, size: ProblemSize, runs: int) -> list[dict]:
    """One case study's rows: the parameters of the calibrations around each point,
    and (where the point has a :func:`clock_factor`) ``full`` at the runs' clock."""
    case = CASES[name]

    def predicted(n: int, point: dict) -> dict:
        params = interleaved_params([case.model_params(c, n, size)
                                     for c in point["calibrations"]])
        row = predict_point(case, n, profile, params, runs, SEED)
        iterations = params.get("iterations")
        if iterations and clock_factor(name, point, n, iterations) is not None:
            row["clock"] = {}
            for label, over_ranks in (("mean", statistics.fmean), ("slowest", max)):
                factor = clock_factor(name, point, n, iterations, over_ranks)
                clocked = predict_point(case, n, profile, at_clock(params, factor), runs, SEED)
                row["clock"][label] = {"factor": factor, "full": clocked["predictions"]["full"]}
        return row

    return rows_of(points, predicted)


def cg_rows(points: dict, profile: str, runs: int) -> list[dict]:
    """The tutorial CG's rows: its hand-written model with the mean calibration."""
    model = load_model(EXAMPLES_DIR / "tutorial" / "cg.py")
    problem = {k.lstrip("-"): int(v) for k, v in zip(CG_ARGS[::2], CG_ARGS[1::2])}

    def predicted(n: int, point: dict) -> dict:
        flags = {k: statistics.fmean(c[k] for c in point["calibrations"])
                 for k in point["calibrations"][0]}
        return predict_models(model, n, profile, {**problem, **flags}, runs, SEED)

    return rows_of(points, predicted)


def extraction_rows(out: Path, record: dict, validation: dict, profile: str,
                    runs: int) -> dict:
    """Extracted models of the traced case studies against real runs and hand models."""
    size, cores = ProblemSize(**record["size"]), record["conditions"]["cores"]
    result = {}
    scratch = Path(tempfile.mkdtemp(prefix="pevpm-node-"))
    for name in ("jacobi", "bag_of_tasks"):
        case = CASES[name]
        counts = [n for n in record["trace_counts"] if f"{name}-{n}" in record["traces"]]
        if len(counts) < 2:
            result[name] = {"error": f"traced at {counts or 'no'} counts; extraction needs two"}
            continue
        traces = {n: read_archive(out / record["traces"][f"{name}-{n}"]) for n in counts}
        try:
            x, took, model = extracted(traces, counts, name, scratch, SECTION)
        except PevpmError as err:
            result[name] = {"error": err.message}
            continue
        (out / f"{name}_extracted.py").write_text(x.text)
        here = case_machine(parse_machine(profile), case)
        beyond = machine_from_profile(profile, ppn=cores, collectives=case.collectives)
        largest = max(validation[name], key=lambda r: r["n"], default=None)
        calibration = (record["cases"][name][str(largest["n"])]["calibrations"][0]
                       if largest else None)
        rows = []
        for row in validation[name]:
            got = mean_time(model, row["n"], here, runs, {}, None)
            rows.append({"n": row["n"], "extracted": got, "measured": row["measured_mean"],
                         "hand_written": f"{row['predictions']['full']:.4f}"})
        for n in SCALE if calibration else ():
            params, how = hand_params(case, calibration, n, size)
            sample = 100 if name == "jacobi" else None
            rows.append({"n": n, "extracted": mean_time(model, n, beyond, 3, {}, sample),
                         "hand_written": mean_time(load_model(case.model_path), n, beyond, 3,
                                                   params, sample), "how": how})
        result[name] = {"fitted_counts": counts, "calls": x.events, "lines": x.lines,
                        "extract_seconds": round(took, 2), "notes": x.notes, "rows": rows}
    return result


def percent(a, b) -> str:
    try:
        return f"{float(a) / float(b) - 1:+.1%}"
    except (TypeError, ValueError, ZeroDivisionError):
        return "-"


def tables(record: dict, validation: dict, extraction: dict) -> str:
    """Markdown tables of everything, with the conditions."""
    c = record["conditions"]
    lines = [(f"Node: {c['host']}, {c['cores']} cores ({c['processor'] or 'processor unknown'}),"
              f" Python {c['python']}, {c['date']}; load average {c['load']:.2f} at the start, "
              f"{c.get('load_end', float('nan')):.2f} at the end. {record['repeats']} timed runs "
              "per point after a warm-up."), ""]
    if record["skipped"] or record["failed"]:
        lines += [(f"Skipped for time: {', '.join(record['skipped']) or 'nothing'}; failed: "
                   f"{', '.join(record['failed']) or 'nothing'}."), ""]
    for name, rows in validation.items():
        lines += [f"### {name}", "", "| ranks | measured (s) | sd | "
                  + " | ".join(f"{m} | err" for m in (*PROFILE_MODELS, "amdahl")) + " |",
                  "|---" * (3 + 2 * (len(PROFILE_MODELS) + 1)) + "|"]
        for r in rows:
            cells = [f"{r['predictions'].get(m, float('nan')):.4f} | "
                     f"{percent(r['predictions'].get(m), r['measured_mean'])}"
                     for m in (*PROFILE_MODELS, "amdahl")]
            lines.append(f"| {r['n']} | {r['measured_mean']:.4f} | {r['measured_sd']:.4f} | "
                         + " | ".join(cells) + " |")
        lines.append("")
        clocked = [r for r in rows if "clock" in r]
        if clocked:
            lines += [f"{name} at the timed runs' own clock (kernels inside the runs over "
                      "the calibrations' kernels; the ranks' mean, and the slowest rank):", "",
                      "| ranks | measured (s) | full | err | mean clock | full | err "
                      "| slowest clock | full | err |", "|---" * 10 + "|"]
            for r in clocked:
                full, m = r["predictions"]["full"], r["measured_mean"]
                cells = [f"{c['factor']:.3f} | {c['full']:.4f} | {percent(c['full'], m)}"
                         for c in (r["clock"]["mean"], r["clock"]["slowest"])]
                lines.append(f"| {r['n']} | {m:.4f} | {full:.4f} | {percent(full, m)} | "
                             + " | ".join(cells) + " |")
            lines.append("")
    for name, x in extraction.items():
        lines += [f"### {name}: extracted model (section {SECTION[0]} to {SECTION[1]})", ""]
        if "error" in x:
            lines += [f"not extracted: {x['error']}", ""]
            continue
        lines += [(f"Fitted at {x['fitted_counts']} ranks: {x['calls']} MPI calls -> "
                   f"{x['lines']} lines in {x['extract_seconds']} s."), "",
                  ("| ranks | extracted (s) | hand-written full (s) | measured (s) | "
                   "extracted vs measured | extracted vs hand-written |"), "|---" * 6 + "|"]
        for r in x["rows"]:
            m = r.get("measured")
            lines.append(f"| {r['n']} | {r['extracted']} | {r['hand_written']}{r.get('how', '')}"
                         f" | {'-' if m is None else f'{m:.4f}'} | {percent(r['extracted'], m)}"
                         f" | {percent(r['extracted'], r['hand_written'])} |")
        lines.append("")
    return "\n".join(lines)


def analyse(out: Path, runs: int) -> dict:
    """Predict everything ``out/node.json`` measured; write results, tables, report."""
    record = json.loads((out / "node.json").read_text())
    if not (out / "traces").is_dir() and (out / "traces.tar.gz").is_file():
        with tarfile.open(out / "traces.tar.gz") as packed:
            packed.extractall(out, filter="data")
    profile = str(out / "machine.db")
    size = ProblemSize(**record["size"])
    validation = {name: case_rows(name, record["cases"][name], profile, size, runs)
                  for name in CASES if record["cases"][name]}
    if record["cases"]["cg"]:
        validation["cg"] = cg_rows(record["cases"]["cg"], profile, runs)
    extraction = extraction_rows(out, record, validation, profile, runs)
    text = tables(record, validation, extraction)
    (out / "tables.md").write_text(text + "\n")
    c = record["conditions"]
    results = {"title": f"pevpm on a {c['cores']}-core node ({c['host']})",
               "notes": [text.split("\n", 1)[0]], "machine": {
                   k: str(v) for k, v in c.items()},
               "validation": validation, "extraction": extraction, "node": record}
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    write_report({k: v for k, v in results.items() if k not in ("extraction", "node")},
                 str(out / "report"))
    print(text)
    return results
