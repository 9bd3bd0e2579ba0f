"""Plots of analytic models, drawn with matplotlib's Agg canvas (no display needed).

The figures are built directly on :class:`matplotlib.figure.Figure`, so no
global pyplot state or backend switch is involved.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "laws.png")
>>> plot_speedup_curves([1, 2, 4], {"Amdahl": [1, 1.8, 3.1]}, path)
>>> os.path.getsize(path) > 0
True
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pevpm.errors import AnalyticError

SURFACE_KINDS = ("heatmap", "3d")


def _figure(size: tuple[float, float]):
    """A new Agg figure (matplotlib is imported here, so ``pevpm analytic --help``
    and the laws load without it)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: str | Path) -> None:
    try:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    except (OSError, ValueError) as exc:
        raise AnalyticError(f"cannot write plot {path}: {exc}") from None


def plot_speedup_curves(counts, curves: dict, path: str | Path, xlabel: str = "processors",
                        title: str = "Speedup") -> None:
    """One speedup curve per entry of ``curves`` (label -> values at ``counts``)."""
    fig = _figure((6.4, 4.4))
    ax = fig.add_subplot()
    for label, values in curves.items():
        ax.plot(counts, values, marker="o", markersize=3, label=label)
    ax.plot(counts, counts, color="grey", linestyle=":", label="linear")
    ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("speedup")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    _save(fig, path)


def plot_speedup_surface(p_values, d_values, surface, path: str | Path, kind: str = "heatmap",
                         title: str = "Speedup s(p, d)") -> None:
    """The speedup surface s(p, d) as a heat map or a 3-D surface (log2 axes).

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "surface.png")
    >>> plot_speedup_surface([16, 64], [1, 8], [[5.7, 5.7], [8.9, 8.9]], path)
    >>> os.path.getsize(path) > 0
    True
    """
    if kind not in SURFACE_KINDS:
        raise AnalyticError(f"surface kind must be one of {', '.join(SURFACE_KINDS)}")
    s = np.asarray(surface, dtype=float)
    lp, ld = np.log2(np.asarray(p_values, float)), np.log2(np.asarray(d_values, float))
    fig = _figure((6.4, 4.8))
    if kind == "heatmap":
        ax = fig.add_subplot()
        image = ax.imshow(s.T, origin="lower", aspect="auto", cmap="viridis")
        ax.set_xticks(range(len(p_values)), [str(v) for v in p_values])
        ax.set_yticks(range(len(d_values)), [str(v) for v in d_values])
        middle = (np.nanmin(s) + np.nanmax(s)) / 2
        for (i, j), value in np.ndenumerate(s):
            ax.text(i, j, f"{value:.2f}", ha="center", va="center", fontsize=6,
                    color="black" if value > middle else "white")
        fig.colorbar(image, ax=ax, label="speedup")
    else:
        ax = fig.add_subplot(projection="3d")
        grid_p, grid_d = np.meshgrid(lp, ld, indexing="ij")
        ax.plot_surface(grid_p, grid_d, s, cmap="viridis", edgecolor="k", linewidth=0.2)
        ax.set_zlabel("speedup")
    ax.set_xlabel("processors p (log2)" if kind == "3d" else "processors p")
    ax.set_ylabel("disks d (log2)" if kind == "3d" else "disks d")
    ax.set_title(title)
    _save(fig, path)
