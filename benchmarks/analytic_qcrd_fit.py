"""Fit the BUS-AIO model to the QCRD speedup surface built from the paper's Table 4.

42 points (p = 1..64, d = 1..32, powers of two, as many as the paper's QCRD
surface), c = 1, g(p) = 1/p, n_io = 1, S_par fixed at 0.71 (speedups are
scale-free, so one time anchors the unit). Six unknowns are fitted from a
deliberately wrong start, once on the exact surface and once with 1%
multiplicative noise; the script prints the fitted values, their standard
errors, the paper's average error and the wall time.

Run: PYTHONPATH=src python benchmarks/analytic_qcrd_fit.py [--starts 8] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pevpm.analytic import QCRD_TABLE4, fit_spmd, speedup
from pevpm.analytic.fitting import DEFAULT_FREE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--noise", type=float, default=0.01)
    args = parser.parse_args()
    p, d = (a.ravel() for a in np.meshgrid([1, 2, 4, 8, 16, 32, 64], [1, 2, 4, 8, 16, 32],
                                           indexing="ij"))
    exact = speedup("bus-aio", QCRD_TABLE4, p, d)
    start = QCRD_TABLE4.replace(w=0.5, s_ser=0.01, s0_com=0.02, sr_com=0.2, s0_io=0.01,
                                sr_io=0.01)
    rng = np.random.default_rng(args.seed)
    noisy = exact * (1 + args.noise * rng.standard_normal(exact.shape))
    print(f"QCRD surface: {p.size} points, free {', '.join(DEFAULT_FREE)}, {args.starts} starts, "
          f"seed {args.seed}")
    print(f"{'parameter':>10} {'Table 4':>9} {'exact fit':>12} {'noisy fit':>12} {'+- std':>9}")
    fits = []
    for observed in (exact, noisy):
        begin = time.perf_counter()
        fits.append((fit_spmd("bus-aio", p, d, observed, start, starts=args.starts,
                              seed=args.seed), time.perf_counter() - begin))
    (clean, t_clean), (rough, t_rough) = fits
    for name in DEFAULT_FREE:
        print(f"{name:>10} {getattr(QCRD_TABLE4, name):9.4g} {clean.values[name]:12.6g} "
              f"{rough.values[name]:12.6g} {rough.std[name]:9.2g}")
    print(f"average error: exact {clean.average_error:.2e}, with {args.noise:.0%} noise "
          f"{rough.average_error:.4%} (paper: 0.2% against measurements)")
    print(f"wall time: exact {t_clean:.1f} s, noisy {t_rough:.1f} s")


if __name__ == "__main__":
    main()
