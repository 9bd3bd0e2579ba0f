"""Pearson V trends across size and contention, from exact and from fitted points."""

import math

import pytest

from pevpm.errors import ModelError
from pevpm.stats.distributions import PearsonV
from pevpm.stats.fitting import fit_family
from pevpm.stats.trends import PearsonVTrend, TrendPoint

SIZES = (0, 1024, 16384, 65536)
CONTENTIONS = (2, 4, 8, 16)
LATENCY, BANDWIDTH = 20e-6, 1e9  # 20 us, 1 GB/s


HALF_LENGTH = LATENCY * BANDWIDTH  # Hockney's n_1/2: 20000 bytes


def true_distribution(size, contention):
    relative = 1 + size / HALF_LENGTH  # contention-free time over latency
    shape = 8.0 * contention**-0.4 * relative**-0.1
    scale = 3e-6 * contention**0.5 * relative
    return PearsonV(shape=shape, scale=scale, loc=LATENCY + size / BANDWIDTH)


def test_exact_points_give_back_the_generating_models():
    points = [TrendPoint(s, c, true_distribution(s, c)) for s in SIZES for c in CONTENTIONS]
    trend = PearsonVTrend.fit(points)
    assert trend.latency == pytest.approx(LATENCY, rel=1e-9)
    assert trend.bandwidth == pytest.approx(BANDWIDTH, rel=1e-9)
    assert trend.half_length == pytest.approx(HALF_LENGTH, rel=1e-9)
    assert trend.shape_coefficients == pytest.approx((math.log(8.0), -0.4, -0.1), abs=1e-6)
    assert trend.scale_coefficients == pytest.approx((math.log(3e-6), 0.5, 1.0), abs=1e-6)
    inside = trend.at(size=4096, contention=6)
    assert not inside.extrapolated and inside.notes == ()
    assert inside.distribution.params == pytest.approx(true_distribution(4096, 6).params, rel=1e-9)


def test_trends_from_fitted_samples_recover_latency_bandwidth_and_falling_shape():
    points = []
    for i, s in enumerate(SIZES):
        for j, c in enumerate(CONTENTIONS):
            x = true_distribution(s, c).rvs(2000, random_state=10 * i + j)
            points.append(TrendPoint(s, c, fit_family("pearson5", x, random_state=0).distribution))
    trend = PearsonVTrend.fit(points)
    # 16 fits of 2000 samples: location within 0.3 us, bandwidth within 5%.
    assert trend.latency == pytest.approx(LATENCY, abs=0.3e-6)
    assert trend.bandwidth == pytest.approx(BANDWIDTH, rel=0.05)
    # shape falls with contention (true exponent -0.4)
    assert trend.shape_coefficients[1] == pytest.approx(-0.4, abs=0.1)
    assert trend.shape(1024, 16) < trend.shape(1024, 2)


def test_queries_outside_the_benchmarks_are_flagged():
    points = [TrendPoint(s, c, true_distribution(s, c)) for s in SIZES for c in CONTENTIONS]
    trend = PearsonVTrend.fit(points)
    answer = trend.at(size=1 << 20, contention=64)
    assert answer.extrapolated
    assert answer.notes == (
        "size 1048576 above the largest benchmarked size 65536",
        "contention 64 above the highest benchmarked 16",
    )
    assert answer.distribution.loc == pytest.approx(LATENCY + (1 << 20) / BANDWIDTH)
    assert trend.at(size=0, contention=1).notes == ("contention 1 below the lowest benchmarked 2",)


def test_a_single_contention_level_leaves_the_contention_term_at_zero():
    points = [TrendPoint(s, 2, true_distribution(s, 2)) for s in SIZES]
    trend = PearsonVTrend.fit(points)
    assert trend.shape_coefficients[1] == 0.0
    assert trend.shape(1024, 2) == pytest.approx(true_distribution(1024, 2).shape, rel=1e-9)


def test_bad_trend_input_is_a_model_error():
    with pytest.raises(ModelError, match="no fits"):
        PearsonVTrend.fit([])
    trend = PearsonVTrend.fit([TrendPoint(0, 2, true_distribution(0, 2))])
    assert trend.bandwidth == math.inf
    with pytest.raises(ModelError, match="size >= 0 and contention >= 1, got -1, 2"):
        trend.at(-1, 2)
