"""Does a simulated binomial MPI_Bcast show the thesis's Pascal's-triangle peaks?

The thesis (sec. 5.2) measured, for a 16-process 128-byte broadcast on
Perseus, log2(16)+1 = 5 peaks in the per-process completion-time
distribution with areas 1:4:6:4:1, the root in the first.  This script
simulates the broadcast with random point-to-point times (transfer t_s from
a Pearson V distribution, Isend local completion t_lc uniform) under four
configurations of the algorithm and the send protocol, finds the peaks of
each pooled completion-time distribution, prints their areas (ranks per
call) and where the root falls, and plots the four histograms.

    PYTHONPATH=src python benchmarks/collectives_bcast_pascal.py --runs 1000 --seed 1 \
        --plot docs/img/bcast_pascal_16.png
"""

from __future__ import annotations

import argparse
from itertools import pairwise

import numpy as np
from scipy.signal import find_peaks

from pevpm.validate.signature import CONFIGURATIONS, SIZE
from pevpm.validate.signature import bcast_completion_times as completion_times


def peaks(times: np.ndarray, bin_width: float = 2e-6):
    """Peak positions and the mean number of ranks per call under each peak
    (the distribution is split at the lowest point between neighbouring peaks)."""
    flat = times.ravel()
    edges = np.arange(flat.min(), flat.max() + 2 * bin_width, bin_width)
    counts, _ = np.histogram(flat, edges)
    smooth = np.convolve(counts, np.ones(3) / 3, mode="same")
    tops, _ = find_peaks(smooth, prominence=0.05 * smooth.max())
    cuts = [edges[a + np.argmin(smooth[a:b])] for a, b in pairwise(tops)]
    bounds = np.concatenate(([-np.inf], cuts, [np.inf]))
    areas = np.histogram(flat, bounds)[0] / times.shape[0]
    root_peak = int(np.searchsorted(cuts, np.median(times[:, 0])))
    return edges[tops] + bin_width / 2, areas, root_peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--numprocs", type=int, default=16)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plot", help="write the four histograms to this PNG")
    args = parser.parse_args()

    results = {}
    for label, (spec, eager) in CONFIGURATIONS.items():
        times = completion_times(spec, eager, args.numprocs, args.runs, args.seed)
        where, areas, root_peak = peaks(times)
        results[label] = times
        ratio = ":".join(f"{a:.2f}".rstrip("0").rstrip(".") for a in areas)
        print(f"{label}\n  {len(where)} peaks at "
              f"{', '.join(f'{w * 1e6:.0f}' for w in where)} us; ranks per peak {ratio}; "
              f"root in peak {root_peak + 1}")
    if args.plot:
        plot(results, args)


def plot(results: dict, args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(results), 1, figsize=(7, 2.2 * len(results)), sharex=True)
    every = np.concatenate([t.ravel() for t in results.values()]) * 1e6
    bins = np.linspace(every.min(), every.max(), 200)
    for ax, (label, times) in zip(axes, results.items()):
        ax.hist([times[:, 1:].ravel() * 1e6, times[:, 0] * 1e6], bins=bins, stacked=True,
                color=["tab:blue", "tab:red"], label=["other ranks", "root"])
        ax.set_title(label, fontsize=9)
        ax.set_ylabel("count")
    axes[0].legend(fontsize=8)
    axes[-1].set_xlabel(f"completion time (us), {args.numprocs}-rank {SIZE}-byte MPI_Bcast, "
                        f"{args.runs} runs")
    fig.tight_layout()
    fig.savefig(args.plot, dpi=110)
    print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
