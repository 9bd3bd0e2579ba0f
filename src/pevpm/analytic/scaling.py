"""Speedup and efficiency of run times over process counts, strong or weak.

*Strong scaling* keeps the problem fixed: the speedup over the smallest
count ``b`` is ``t(b) / t(p)`` and the parallel efficiency ``speedup * b / p``
(1 when the time falls in proportion to the ranks added).  *Weak scaling*
grows the problem with the ranks (each rank keeps its share of the work), so
a speedup means nothing: the efficiency is ``t(b) / t(p)`` (1 when the time
stays flat) and the time per rank of work ``t(p) / p`` says how long one
rank's share of the whole problem takes.

>>> [round(v["efficiency"], 3) for v in scaling_views([1, 2, 4], [8.0, 4.4, 2.5])]
[1.0, 0.909, 0.8]
>>> weak = scaling_views([1, 2, 4], [1.0, 1.25, 2.0], weak=True)
>>> [(v["efficiency"], v["seconds_per_rank_work"]) for v in weak]
[(1.0, 1.0), (0.8, 0.625), (0.5, 0.5)]
"""

from __future__ import annotations

from collections.abc import Sequence

#: The two kinds of scaling :func:`scaling_views` knows.
SCALINGS = ("strong", "weak")


def scaling_views(counts: Sequence[int], means: Sequence[float],
                  weak: bool = False) -> list[dict[str, float | None]]:
    """One dict per count: ``speedup`` and ``efficiency`` (strong scaling) or
    ``efficiency`` and ``seconds_per_rank_work`` (``weak``), relative to the
    first count; ``None`` where a time is zero.

    >>> scaling_views([2, 4], [0.5, 0.25])
    [{'speedup': 1.0, 'efficiency': 1.0}, {'speedup': 2.0, 'efficiency': 1.0}]
    """
    if len(counts) != len(means):
        raise ValueError("one mean time per count")
    if not counts:
        return []
    base_n, base_t = counts[0], means[0]
    views: list[dict[str, float | None]] = []
    for n, t in zip(counts, means):
        ratio = base_t / t if t else None
        if weak:
            views.append({"efficiency": ratio, "seconds_per_rank_work": t / n})
        else:
            views.append({"speedup": ratio,
                          "efficiency": None if ratio is None else ratio * base_n / n})
    return views


__all__ = ["SCALINGS", "scaling_views"]
