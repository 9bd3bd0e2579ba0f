"""Plots of the HTML report, drawn from plain result dictionaries.

Each function takes the JSON-ready data the demo saves (so ``pevpm report``
can redraw everything from ``results.json``) and writes one PNG.

>>> import tempfile, os
>>> out = os.path.join(tempfile.mkdtemp(), "s.png")
>>> speedup_figure("jacobi", [{"n": 1, "measured_mean": 2.0, "measured_sd": 0.1,
...                            "predictions": {"full": 2.1}},
...                           {"n": 2, "measured_mean": 1.1, "measured_sd": 0.1,
...                            "predictions": {"full": 1.0}}], [], out)
>>> os.path.getsize(out) > 0
True
"""

from __future__ import annotations

import numpy as np

from pevpm.report.pyplot import plt, save

KIND_COLOURS = {"compute": "#4C72B0", "communication": "#DD8452", "waiting": "#C44E52"}


def speedup_figure(example: str, validation_rows: list[dict], scaling: list[dict],
                   path: str) -> None:
    """Measured speedup with error bars against every model's prediction.

    ``validation_rows``: ``{"n", "measured_mean", "measured_sd", "predictions":
    {model: mean time}}``; ``scaling``: ``{"n", "mean", "sd"}`` points of the
    full model beyond what was measured.  Speedup at n is T(n0) / T(n) x n0,
    n0 the smallest measured process count (n0 = 1 gives the usual speedup).
    """
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    if validation_rows:
        base = validation_rows[0]
        ref_n, ref_t = base["n"], base["measured_mean"]
        ns = np.array([r["n"] for r in validation_rows], float)
        means = np.array([r["measured_mean"] for r in validation_rows])
        sds = np.array([r["measured_sd"] for r in validation_rows])
        speed = ref_t / means
        err = speed * sds / means
        ax.errorbar(ns, speed * ref_n, yerr=err * ref_n, fmt="ko", capsize=3,
                    label="measured", zorder=5)
        models = sorted({m for r in validation_rows for m in r["predictions"]})
        for model in models:
            pts = [(r["n"], r["predictions"][model]) for r in validation_rows
                   if model in r["predictions"]]
            x = np.array([p[0] for p in pts], float)
            y = ref_t / np.array([p[1] for p in pts]) * ref_n
            ax.plot(x, y, marker=".", label=f"predicted ({model})")
        ref_label = ref_t
    else:
        ref_n, ref_label = None, None
    if scaling:
        x = np.array([s["n"] for s in scaling], float)
        t = np.array([s["mean"] for s in scaling])
        ref_t = ref_label if ref_label is not None else t[0]
        ref_n = ref_n if ref_n is not None else x[0]
        ax.plot(x, ref_t / t * ref_n, "--", color="0.4", label="predicted (full), beyond measured")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("processes")
    ax.set_ylabel("speedup")
    ax.set_title(f"{example}: measured vs predicted speedup")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, path, dpi=100)


def breakdown_figure(example: str, numprocs: int, ranks: list[dict], path: str) -> None:
    """Stacked bars per rank: computation, communication, waiting (seconds)."""
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    x = np.arange(len(ranks))
    bottom = np.zeros(len(ranks))
    for kind, colour in KIND_COLOURS.items():
        vals = np.array([r[kind] for r in ranks])
        ax.bar(x, vals, bottom=bottom, color=colour, label=kind, width=0.8)
        bottom += vals
    ax.set_xlabel("rank")
    ax.set_ylabel("seconds (mean over runs)")
    ax.set_title(f"{example} on {numprocs} processes: where the time goes")
    ax.legend(fontsize=8)
    save(fig, path, dpi=100)


def completion_histogram(title: str, completions: list[float], path: str,
                         bins: int = 60) -> None:
    """Histogram of per-rank completion times (e.g. a broadcast's Pascal peaks)."""
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    ax.hist(np.asarray(completions) * 1e6, bins=bins, color="#55A868")
    ax.set_xlabel("completion time (µs)")
    ax.set_ylabel("count")
    ax.set_title(title)
    save(fig, path, dpi=100)
