"""Plots of fitted distributions and of Pearson V trends.

* :func:`plot_block_fits`: one PNG per (test, variant, placement), a panel
  per message size with the histogram of the fitted times and the pdf of
  every fitted family (the best drawn bold), as the thesis's figs. 40-45.
* :func:`plot_trends`: one PNG per point-to-point test and node class with
  the Pearson V location, shape and scale against message size, one line
  per contention level, and the fitted trend models dashed (the plots the
  thesis proposes as further work).

>>> blocks = fit_profile("machine.db").blocks             # doctest: +SKIP
>>> plot_block_fits(blocks, "fits/")                      # doctest: +SKIP
[PosixPath('fits/isend.1x4.png'), ...]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pevpm.profile.fits import BlockFit, TrendGroup
from pevpm.report.pyplot import plt, save

MICRO = 1e6
#: Histograms show the body up to this quantile; the tail would squash it.
DISPLAY_QUANTILE = 0.97


def _size_label(size: int) -> str:
    return f"{size // 1024}K" if size >= 1024 and size % 1024 == 0 else str(size)


def _draw_block(ax, block: BlockFit) -> None:
    data = block.data * MICRO
    high = np.quantile(data, DISPLAY_QUANTILE)
    shown = data[data <= high]
    weights = np.full(shown.size, 1.0 / data.size)  # density of all the data, not of the part shown
    counts, edges = np.histogram(shown, bins=min(50, max(10, shown.size // 8)), weights=weights)
    ax.stairs(counts / np.diff(edges), edges, fill=True, color="0.82", label="measured")
    grid = np.linspace(shown.min(), high, 400)
    for i, fit in enumerate(block.selection.fits):
        density = fit.distribution.pdf(grid / MICRO) / MICRO
        ax.plot(
            grid,
            density,
            lw=2.2 if i == 0 else 0.9,
            label=f"{fit.family} (KS p={fit.ks_pvalue:.2g})",
        )
    ax.set_title(f"{_size_label(block.key.size)} B", fontsize=9)
    ax.set_xlabel("time (us)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=6)


def plot_block_fits(blocks: Sequence[BlockFit], directory) -> list[Path]:
    """Histogram + fitted pdfs, a page per (test, variant, placement)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    pages: dict[tuple[str, str, str], list[BlockFit]] = {}
    for block in blocks:
        pages.setdefault((block.key.test, block.key.variant, block.key.nxp), []).append(block)
    written = []
    for (test, variant, nxp), page in sorted(pages.items()):
        page.sort(key=lambda b: b.key.size)
        columns = min(3, len(page))
        rows = math.ceil(len(page) / columns)
        fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.2 * rows), squeeze=False)
        for ax, block in zip(axes.flat, page):
            _draw_block(ax, block)
        for ax in list(axes.flat)[len(page) :]:
            ax.set_visible(False)
        fig.suptitle(f"{test}{variant} {nxp}: measured times and fitted distributions")
        written.append(save(fig, directory / f"{test}{variant}.{nxp}.fits.png"))
    return written


def plot_trends(groups: Sequence[TrendGroup], directory) -> list[Path]:
    """Pearson V location, shape and scale against size, a line per contention."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for group in groups:
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
        levels = sorted({p.contention for p in group.points})
        sizes = np.array(sorted({p.size for p in group.points}), dtype=float)
        smooth = np.unique(np.concatenate([sizes, np.geomspace(1.0, max(sizes.max(), 2.0), 200)]))
        smooth = smooth[(smooth >= sizes.min()) & (smooth <= sizes.max())]
        for level in levels:
            points = sorted(
                (p for p in group.points if p.contention == level), key=lambda p: p.size
            )
            x = [p.size for p in points]
            line = axes[0].plot(
                x, [p.distribution.loc * MICRO for p in points], "o-", label=f"c={level}"
            )
            colour = line[0].get_color()
            axes[1].plot(x, [p.distribution.shape for p in points], "o-", color=colour)
            axes[2].plot(x, [p.distribution.scale * MICRO for p in points], "o-", color=colour)
            axes[1].plot(smooth, group.trend.shape(smooth, level), "--", color=colour, lw=0.8)
            axes[2].plot(
                smooth, group.trend.scale(smooth, level) * MICRO, "--", color=colour, lw=0.8
            )
        axes[0].plot(smooth, group.trend.location(smooth) * MICRO, "k--", lw=0.8, label="l + s/W")
        for ax, name in zip(axes, ("location (us)", "shape", "scale (us)")):
            ax.set_xlabel("message size (bytes)")
            ax.set_xscale("symlog", linthresh=max(1.0, float(sizes[sizes > 0].min(initial=1.0))))
            ax.set_ylabel(name)
        axes[0].legend(fontsize=7)
        fig.suptitle(f"Pearson V parameters: {group.label} (dashed: fitted trends)")
        kind = "intra" if group.intra_node else "inter"
        written.append(save(fig, directory / f"{group.test}.{kind}.trends.png"))
    return written
