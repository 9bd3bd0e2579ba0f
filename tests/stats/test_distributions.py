"""Distribution families: scipy agreement, sampling, bounds, pickling, gengamma cases."""

import math
import pickle

import numpy as np
import pytest
from scipy import stats

from pevpm.errors import ModelError
from pevpm.stats.distributions import (
    Empirical,
    Exponential,
    Gamma,
    GeneralisedGamma,
    LogNormal,
    PearsonV,
    Weibull,
    from_params,
)

# Each family beside the scipy distribution it must equal.
PAIRS = [
    (PearsonV(shape=4.0, scale=30.0, loc=50.0), stats.invgamma(4.0, loc=50.0, scale=30.0)),
    (Weibull(shape=3.6, scale=20.0, loc=50.0), stats.weibull_min(3.6, loc=50.0, scale=20.0)),
    (Gamma(shape=2.5, scale=8.0, loc=50.0), stats.gamma(2.5, loc=50.0, scale=8.0)),
    (LogNormal(mu=2.5, sigma=0.5, loc=50.0), stats.lognorm(0.5, loc=50.0, scale=math.exp(2.5))),
    (Exponential(scale=10.0, loc=50.0), stats.expon(loc=50.0, scale=10.0)),
]
IDS = [d.family for d, _ in PAIRS]
X = np.array([49.0, 50.0, 51.0, 55.0, 60.0, 70.0, 90.0, 150.0])
Q = np.array([0.001, 0.1, 0.5, 0.9, 0.999])


@pytest.mark.parametrize(("dist", "ref"), PAIRS, ids=IDS)
def test_density_cdf_quantiles_and_moments_match_scipy(dist, ref):
    np.testing.assert_allclose(dist.pdf(X), ref.pdf(X), rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(dist.cdf(X), ref.cdf(X), rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(dist.ppf(Q), ref.ppf(Q), rtol=1e-10)
    assert dist.mean() == pytest.approx(ref.mean(), rel=1e-12)
    assert dist.var() == pytest.approx(ref.var(), rel=1e-12)


@pytest.mark.parametrize(("dist", "ref"), PAIRS, ids=IDS)
def test_vectorised_sampling_follows_the_distribution(dist, ref):
    # KS on 20000 draws: a wrong sampler fails with p << 1e-3 (seeded, deterministic).
    draws = dist.rvs(size=20000, random_state=11)
    assert draws.shape == (20000,)
    assert draws.min() > dist.min_value()
    assert stats.kstest(draws, ref.cdf).pvalue > 1e-3


@pytest.mark.parametrize(("dist", "ref"), PAIRS, ids=IDS)
def test_sampling_is_reproducible_from_a_seed(dist, ref):
    a = dist.rvs(size=(3, 4), random_state=np.random.default_rng(5))
    b = dist.rvs(size=(3, 4), random_state=5)
    assert a.shape == (3, 4)
    np.testing.assert_array_equal(a, b)
    assert isinstance(dist.rvs(random_state=1), float)


@pytest.mark.parametrize(("dist", "ref"), PAIRS, ids=IDS)
def test_bounds_are_location_and_high_quantile(dist, ref):
    assert dist.min_value() == 50.0
    assert dist.max_value() == pytest.approx(ref.ppf(0.999))
    assert dist.max_value(0.5) == pytest.approx(ref.median())


@pytest.mark.parametrize(("dist", "ref"), PAIRS, ids=IDS)
def test_pickle_and_params_round_trip(dist, ref):
    assert pickle.loads(pickle.dumps(dist)) == dist
    assert from_params(dist.family, dist.params) == dist


def test_invalid_parameters_are_model_errors():
    with pytest.raises(ModelError, match="pearson5 distribution: needs shape > 0"):
        PearsonV(shape=-1.0, scale=1.0)
    with pytest.raises(ModelError, match="unknown distribution family 'normal'; known: "):
        from_params("normal", {})
    with pytest.raises(ModelError, match="needs parameter\\(s\\) scale"):
        from_params("weibull", {"shape": 1.0})


# -- generalised gamma --------------------------------------------------------

T = np.array([0.05, 0.3, 1.0, 2.0, 4.5, 9.0])


@pytest.mark.parametrize(
    ("gengamma", "ref"),
    [
        (GeneralisedGamma(mu=math.log(2.0), sigma=1.0, lam=1.0), stats.expon(scale=2.0)),
        # lam = sigma: gamma with shape 1/lam^2, scale e^mu lam^2
        (
            GeneralisedGamma(mu=math.log(3.0 / 0.25), sigma=0.5, lam=0.5),
            stats.gamma(4.0, scale=3.0),
        ),
        # lam = -sigma: inverse gamma with shape 1/lam^2, scale e^mu / lam^2
        (
            GeneralisedGamma(mu=math.log(2.0 * 0.25), sigma=0.5, lam=-0.5),
            stats.invgamma(4.0, scale=2.0),
        ),
        # lam = 0: lognormal
        (GeneralisedGamma(mu=0.3, sigma=0.7, lam=0.0), stats.lognorm(0.7, scale=math.exp(0.3))),
        # lam = 1: Weibull with shape 1/sigma and scale e^mu (corrected errata)
        (GeneralisedGamma(mu=math.log(2.5), sigma=0.4, lam=1.0), stats.weibull_min(2.5, scale=2.5)),
    ],
    ids=["exponential", "gamma", "inverse-gamma", "lognormal", "weibull"],
)
def test_generalised_gamma_reduces_to_its_special_cases(gengamma, ref):
    np.testing.assert_allclose(gengamma.pdf(T), ref.pdf(T), rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(gengamma.cdf(T), ref.cdf(T), rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(gengamma.ppf(Q), ref.ppf(Q), rtol=1e-9)
    assert gengamma.mean() == pytest.approx(ref.mean(), rel=1e-9)
    assert gengamma.var() == pytest.approx(ref.var(), rel=1e-9)


@pytest.mark.parametrize("lam", [1e-2, -1e-2, 2e-3])
def test_generalised_gamma_tends_to_lognormal_as_lambda_vanishes(lam):
    ref = stats.lognorm(0.7, scale=math.exp(0.3))
    g = GeneralisedGamma(mu=0.3, sigma=0.7, lam=lam)
    # The difference is first order in lam: |lam| * (a few) in relative terms.
    np.testing.assert_allclose(g.pdf(T[1:]), ref.pdf(T[1:]), rtol=5 * abs(lam))
    np.testing.assert_allclose(g.cdf(T), ref.cdf(T), atol=abs(lam))


def test_generalised_gamma_from_stacy_uses_corrected_sigma():
    k, beta, theta = 2.0, 1.5, 3.0
    g = GeneralisedGamma.from_stacy(k, beta, theta)
    assert g.sigma == pytest.approx(1 / (beta * math.sqrt(k)))
    stacy = stats.gengamma(k, beta, scale=theta)
    np.testing.assert_allclose(g.pdf(T), stacy.pdf(T), rtol=1e-9)
    draws = g.rvs(size=20000, random_state=3)
    assert stats.kstest(draws, stacy.cdf).pvalue > 1e-3


def test_generalised_gamma_location_shifts_and_infinite_moments():
    g = GeneralisedGamma(mu=0.0, sigma=1.0, lam=1.0, loc=5.0)
    assert g.cdf(5.0) == 0.0 and g.pdf(4.0) == 0.0
    assert g.mean() == pytest.approx(6.0)
    # inverse gamma with shape 1 (lam = -sigma = -1): no finite mean
    assert GeneralisedGamma(mu=0.0, sigma=1.0, lam=-1.0).mean() == math.inf


# -- empirical ---------------------------------------------------------------


def test_empirical_histogram_samples_uniformly_inside_bins():
    e = Empirical.from_histogram([0.0, 1.0, 2.0, 4.0], [2, 0, 2])
    draws = e.rvs(size=40000, random_state=0)
    assert not np.any((draws > 1.0) & (draws < 2.0))  # the empty bin is never hit
    assert np.mean(draws < 1.0) == pytest.approx(0.5, abs=0.01)
    # uniform inside the last bin: its quartiles at 2.5, 3, 3.5
    upper = draws[draws >= 2.0]
    np.testing.assert_allclose(np.quantile(upper, [0.25, 0.5, 0.75]), [2.5, 3.0, 3.5], atol=0.03)
    assert e.mean() == pytest.approx(0.5 * 0.5 + 0.5 * 3.0)
    assert e.var() == pytest.approx(0.5 * (1 / 3) + 0.5 * (28 / 3) - e.mean() ** 2)
    np.testing.assert_allclose(e.pdf([0.5, 1.5, 3.0, 5.0]), [0.5, 0.0, 0.25, 0.0])
    assert (e.min_value(), e.max_value()) == (0.0, 4.0)


def test_empirical_from_samples_reproduces_the_sample():
    x = PearsonV(shape=4.0, scale=30.0, loc=50.0).rvs(size=5000, random_state=2)
    e = Empirical.from_samples(x)
    assert e.min_value() == x.min() and e.max_value() == x.max()
    assert e.mean() == pytest.approx(x.mean(), rel=2e-3)
    draws = e.rvs(size=20000, random_state=4)
    assert stats.ks_2samp(draws, x).pvalue > 1e-3
    assert pickle.loads(pickle.dumps(e)) == e


def test_empirical_rejects_bad_histograms():
    with pytest.raises(ModelError, match="one more edge than counts, got 3 and 3"):
        Empirical.from_histogram([0, 1, 2], [1, 2, 3])
    with pytest.raises(ModelError, match="not all zero"):
        Empirical.from_histogram([0, 1, 2], [0, 0])
    with pytest.raises(ModelError, match="two distinct samples"):
        Empirical.from_samples([3.0, 3.0])
