"""Calibrate cg.py's three serial segments: seconds per call and per grid point.

Runs the three kernels of one CG iteration in the loop's order, on strips
of several sizes, timing each call: inside the loop each kernel finds the
caches as the others left them, as in the program (timed on its own, each
ran 16-32% faster than in the real loop).  It keeps, per kernel, the
fastest batch mean of many short batches taken in turn (on a machine
shared with other jobs, time spent waiting for a core only ever adds, so
the minimum is what the kernel itself costs), fits ``t = call + cell * points`` by least squares, and prints the fitted
numbers as ``-D`` options for ``pevpm predict``; the measurements and the
fit's worst relative error go to standard error.

    python examples/tutorial/calibrate.py --nx 512 > cg.flags
    pevpm predict examples/tutorial/cg.py -n 1,2 --machine machine.db $(cat cg.flags)
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cg  # the program next to this script

#: The serial segments of an iteration, in the loop's order.
SEGMENTS = ("matvec", "update", "direction")


def kernels(nx: int, rows: int) -> dict:
    """The three serial segments of an iteration on a strip of ``rows`` x ``nx`` points."""
    rng = np.random.default_rng(0)
    p = rng.random((rows + 2, nx))
    x, r, ap = np.zeros((rows, nx)), rng.random((rows, nx)), np.empty((rows, nx))
    return {"matvec": functools.partial(cg.matvec_and_dot, p, ap),
            "update": functools.partial(cg.update_and_dot, x, r, p, ap, 1e-9),
            "direction": functools.partial(cg.update_direction, p, r, 0.5)}


def loop_batch(fns: dict, seconds: float) -> dict:
    """Mean seconds per call of each of ``fns``, called one after another in
    turn (as an iteration calls them) for about ``seconds``.

    >>> means = loop_batch(kernels(16, 8), 0.001)
    >>> list(means) == list(SEGMENTS) and min(means.values()) > 0
    True
    """
    clock = time.perf_counter
    spent, calls = dict.fromkeys(fns, 0.0), 0
    end = clock() + seconds
    while calls == 0 or clock() < end:
        for name, fn in fns.items():
            start = clock()
            fn()
            spent[name] += clock() - start
        calls += 1
    return {name: total / calls for name, total in spent.items()}


def fastest_times(strips: dict, rounds: int, batch: float) -> dict:
    """Fastest batch mean per call of every kernel on every strip over ``rounds``
    rounds, each round running one :func:`loop_batch` per strip in turn, so that
    a stretch of time when other jobs hold the cores slows one batch, not all.

    >>> best = fastest_times({8: kernels(16, 8)}, rounds=2, batch=0.001)
    >>> sorted(best[8]), best[8]["matvec"] > 0
    (['direction', 'matvec', 'update'], True)
    """
    best = {h: dict.fromkeys(fns, np.inf) for h, fns in strips.items()}
    for _ in range(rounds):
        for h, fns in strips.items():
            for name, mean in loop_batch(fns, batch).items():
                best[h][name] = min(best[h][name], mean)
    return best


def fit_line(points: np.ndarray, times: np.ndarray) -> tuple[float, float]:
    """Least-squares ``t = call + cell * points`` with neither term negative (noise on
    a loaded machine can tilt a free fit below zero).

    >>> [round(v, 9) for v in fit_line(np.array([1.0, 2.0, 3.0]), np.array([3.0, 5.0, 7.0]))]
    [1.0, 2.0]
    >>> fit_line(np.array([1.0, 2.0]), np.array([5.0, 4.0]))       # falls: a constant
    (4.5, 0.0)
    """
    cell, call = np.polyfit(points, times, 1)
    if cell < 0:
        return float(np.mean(times)), 0.0
    if call < 0:
        return 0.0, float(np.dot(points, times) / np.dot(points, points))
    return float(call), float(cell)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nx", type=int, default=512, help="grid columns (512)")
    parser.add_argument("--rows", default="64,128,256,512",
                        help="strip heights to time (64,128,256,512)")
    parser.add_argument("--repeats", type=int, default=21,
                        help="rounds: timed batches per kernel and strip (21)")
    parser.add_argument("--batch", type=float, default=0.005,
                        help="seconds per timed batch (0.005): short, so that some batches "
                             "run while no other job has the core")
    args = parser.parse_args(argv)
    heights = [int(v) for v in args.rows.split(",")]
    points = np.array([h * args.nx for h in heights], dtype=float)
    fastest = fastest_times({h: kernels(args.nx, h) for h in heights}, args.repeats, args.batch)
    flags = []
    for name in SEGMENTS:
        times = np.array([fastest[h][name] for h in heights])
        call, cell = fit_line(points, times)
        worst = np.max(np.abs(call + cell * points - times) / times)
        print(f"{name}: " + ", ".join(f"{h} rows {t * 1e6:.1f} us"
                                      for h, t in zip(heights, times))
              + f"; fit {call * 1e6:.2f} us + {cell * 1e9:.3f} ns/point "
              f"(worst error {worst:.0%})", file=sys.stderr)
        flags += [f"-D t_{name}_call={call:.4g}", f"-D t_{name}_cell={cell:.4g}"]
    print(" ".join(flags))


if __name__ == "__main__":
    main()
