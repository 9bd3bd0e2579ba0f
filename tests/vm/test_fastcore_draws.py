"""The compiled core's inverse-CDF draws: np.interp's numbers to the bit,
with the bisection started from a bucket table."""

from __future__ import annotations

import numpy as np
import pytest

fastcore = pytest.importorskip("pevpm.vm.kernel.fastcore")


def cdfs(rng):
    """Empirical CDFs as profiles hold them, and harder ones: steps (repeated
    values), values bunched in one bucket, a single point, values at bucket
    edges."""
    n = 1000
    yield np.linspace(0, 1, n), np.sort(rng.gamma(2.0, 1e-6, n))
    steps = np.sort(np.round(rng.random(n), 2))
    yield steps, np.sort(rng.random(n))
    yield np.sort(0.5 + 1e-4 * rng.random(50)), np.sort(rng.random(50))
    yield np.array([0.3]), np.array([7.0])
    yield np.arange(1025) / 1024, np.cumsum(rng.random(1025))


def test_inverse_cdf_matches_np_interp_bit_for_bit():
    rng = np.random.default_rng(7)
    for cdf, knots in cdfs(rng):
        inverse = fastcore.InverseCdf(cdf, knots)
        us = np.concatenate([rng.random(5000), cdf, np.nextafter(cdf, 2), np.nextafter(cdf, -1),
                             np.arange(1025) / 1024, [0.0, np.nextafter(1.0, 0)]])
        us = us[(us >= 0) & (us < 1)]
        got = np.array([inverse.at(u) for u in us])
        want = np.interp(us, cdf, knots)
        assert np.array_equal(got, want), (cdf[:3], us[got != want][:3])
