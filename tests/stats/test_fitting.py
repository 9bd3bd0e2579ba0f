"""Fitting: parameter recovery, family choice, goodness of fit, independence."""

from collections import Counter

import numpy as np
import pytest
from scipy import stats

from pevpm.errors import ModelError
from pevpm.stats.distributions import (
    Exponential,
    Gamma,
    GeneralisedGamma,
    LogNormal,
    PearsonV,
    Weibull,
)
from pevpm.stats.fitting import (
    anderson_darling,
    fit_family,
    independence,
    independence_by_rank,
    location_bounds,
    select_family,
)

# Times in microseconds: a 50 us minimum latency and a contention body.
GENERATORS = [
    PearsonV(shape=4.0, scale=30.0, loc=50.0),
    Weibull(shape=3.6, scale=20.0, loc=50.0),
    Gamma(shape=2.5, scale=8.0, loc=50.0),
    LogNormal(mu=2.5, sigma=0.5, loc=50.0),
    Exponential(scale=10.0, loc=50.0),
]
IDS = [g.family for g in GENERATORS]


@pytest.mark.parametrize("truth", GENERATORS, ids=IDS)
def test_fit_recovers_known_parameters(truth):
    # 4000 draws, fixed seed. Tolerances: shape-like parameters within 10%,
    # scale within 10%, location within 15% of the standard deviation.
    x = truth.rvs(4000, random_state=21)
    fitted = fit_family(truth.family, x, random_state=1).distribution
    assert type(fitted) is type(truth)
    for name, value in truth.params.items():
        if name == "loc":
            assert fitted.loc == pytest.approx(value, abs=0.15 * truth.std())
        else:
            assert fitted.params[name] == pytest.approx(value, rel=0.10), name
    assert fitted.loc < x.min()


@pytest.mark.parametrize("truth", GENERATORS, ids=IDS)
def test_selection_picks_the_generating_family_in_a_clear_majority(truth):
    # 8 independent data sets of 5000 points each; at least 6 must pick the truth.
    # (With 3000 points lognormal sigma=0.5 and Pearson V are hard to tell apart: 5/8.)
    picks = Counter(
        select_family(truth.rvs(5000, random_state=100 + trial), random_state=trial).best.family
        for trial in range(8)
    )
    assert picks[truth.family] >= 6, picks


def test_selection_reports_all_fits_ranked_with_goodness_of_fit():
    x = PearsonV(shape=4.0, scale=30.0, loc=50.0).rvs(4000, random_state=3)
    choice = select_family(x, random_state=0)
    assert [f.aic for f in choice.fits] == sorted(f.aic for f in choice.fits)
    assert {f.family for f in choice.fits} == set(IDS)
    best = choice.best
    assert best.n_gof == 500 and best.n_fit == 4000
    assert best.ks_pvalue > 0.01 and best.ad_pvalue > 0.01
    exponential = next(f for f in choice.fits if f.family == "exponential")
    assert exponential.ks_pvalue < 1e-6 and exponential.ad_pvalue < 1e-6


def test_fit_uses_a_seeded_subsample_of_large_data():
    x = Gamma(shape=2.0, scale=5.0, loc=10.0).rvs(20000, random_state=8)
    a = fit_family("gamma", x, fit_points=2000, random_state=4)
    b = fit_family("gamma", x, fit_points=2000, random_state=4)
    assert a.n_fit == 2000 and a.params == b.params


def test_location_stays_below_the_minimum_near_the_exponential():
    # Gamma shape 0.8 has an infinite density at its location: the free MLE
    # runs away; the bounded profile keeps the location just below min(x).
    x = Gamma(shape=0.8, scale=10.0, loc=50.0).rvs(3000, random_state=6)
    fitted = fit_family("gamma", x, random_state=0).distribution
    lower, upper = location_bounds(x)
    assert lower == 0.0 and fitted.loc <= upper < x.min()
    assert fitted.loc == pytest.approx(50.0, abs=0.05)
    assert fitted.shape == pytest.approx(0.8, rel=0.1)


def test_generalised_gamma_fit_is_at_least_as_likely_as_the_truth():
    truth = GeneralisedGamma(mu=2.5, sigma=0.3, lam=0.5, loc=50.0)
    x = truth.rvs(3000, random_state=3)
    result = fit_family("gengamma", x, random_state=1)
    assert result.loglik >= truth.loglik(x) - 1.0
    grid = np.linspace(50.0, 150.0, 400)
    assert np.max(np.abs(result.distribution.cdf(grid) - truth.cdf(grid))) < 0.02


def test_fit_rejects_unusable_data():
    with pytest.raises(ModelError, match="at least 10 finite samples to fit a distribution, got 3"):
        fit_family("gamma", [1.0, 2.0, 3.0])
    with pytest.raises(ModelError, match="12 identical samples"):
        fit_family("gamma", [5.0] * 12)
    with pytest.raises(ModelError, match="unknown family 'normal'"):
        fit_family("normal", np.arange(20.0))


def test_anderson_darling_p_values_are_calibrated_under_the_null():
    # Under the null hypothesis p-values are uniform: ~5% fall below 0.05.
    rng = np.random.default_rng(0)
    p = np.array([anderson_darling(rng.random(500), stats.uniform.cdf)[1] for _ in range(400)])
    assert np.mean(p < 0.05) == pytest.approx(0.05, abs=0.03)
    _, p_shifted = anderson_darling(rng.random(500) * 0.8, stats.uniform.cdf)
    assert p_shifted < 1e-6


def test_independence_accepts_iid_and_rejects_autocorrelated_series():
    rng = np.random.default_rng(2)
    iid = PearsonV(shape=4.0, scale=30.0, loc=50.0).rvs(2000, random_state=rng)
    assert independence(iid).independent
    ar = np.empty(2000)
    ar[0] = 0.0
    noise = rng.standard_normal(2000)
    for t in range(1, 2000):
        ar[t] = 0.3 * ar[t - 1] + noise[t]
    result = independence(ar)
    assert not result.independent
    assert result.lag1 == pytest.approx(0.3, abs=0.06)
    assert result.runs_z < -3  # positive correlation: too few runs
    with pytest.raises(ModelError, match="at least 20 samples"):
        independence(np.arange(5.0))


def test_independence_by_rank_ignores_level_differences_but_finds_a_bad_rank():
    rng = np.random.default_rng(3)
    rows = rng.random((4, 300)) + np.arange(4)[:, None]  # ranks differ in level only
    assert independence_by_rank(rows).independent
    assert not independence(rows.ravel()).independent  # pooled in rank order it looks dependent
    rows[2] = np.sort(rows[2])  # one rank drifts
    worst = independence_by_rank(rows)
    assert not worst.independent and worst.alpha == pytest.approx(0.01 / 4)
