"""Maximum-likelihood fitting, goodness of fit, independence, family choice.

How the location (the minimum latency) is estimated
---------------------------------------------------
A free 3-parameter MLE is unstable near the exponential: for shapes at or
below one the density at the location is infinite or finite-and-maximal, so
the likelihood climbs without bound as the location approaches the sample
minimum.  We therefore *profile* the likelihood over the location: for a
candidate location ``g`` the two remaining parameters have a stable (closed
form or one-dimensional) MLE on ``x - g``, and we maximise that profile over
``g`` in ``[lower, min(x) - delta]`` where ``delta = (mean(x) - min(x)) / n``
is the expected gap between the location and the minimum of ``n``
exponential samples.  The bound keeps the location strictly below every
sample, and when the profile runs into it the answer is the
exponential-style estimate, which is what the data support.  ``lower`` is 0
for positive data (a latency is never negative).  The search is a
logarithmic grid in ``min(x) - g`` refined by bounded Brent.

Goodness of fit uses Kolmogorov-Smirnov and Anderson-Darling on a random
subsample of about 500 points (both tests become over-sensitive with many
thousands); since the parameters are estimated from the data the p-values
are optimistic, so use them to rank and to flag poor fits, not as exact
probabilities.  The best family is the one with the lowest AIC.

>>> import numpy as np
>>> from pevpm.stats.distributions import PearsonV
>>> x = PearsonV(shape=5.0, scale=40.0, loc=100.0).rvs(4000, random_state=7)
>>> choice = select_family(x, random_state=7)
>>> choice.best.family
'pearson5'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize, special, stats

from pevpm.errors import ModelError
from pevpm.stats.distributions import (
    Distribution,
    Exponential,
    Gamma,
    GeneralisedGamma,
    LogNormal,
    PearsonV,
    Weibull,
    as_generator,
)
from pevpm.stats.family_names import DEFAULT_FAMILIES

#: Points used for the goodness-of-fit tests (the thesis used 500).
GOF_POINTS = 500

#: At most this many points are used for the likelihood (a random subsample).
FIT_POINTS = 5000

#: Significance level of the independence tests (as in the thesis).
INDEPENDENCE_ALPHA = 0.01

_GRID_POINTS = 16


@dataclass(frozen=True)
class FitResult:
    """One family fitted to one data set.

    ``loglik`` and ``aic`` refer to the ``n_fit`` points used for the fit;
    the KS and Anderson-Darling figures to a subsample of ``n_gof`` points.
    """

    family: str
    distribution: Distribution
    loglik: float
    aic: float
    n_fit: int
    ks_stat: float
    ks_pvalue: float
    ad_stat: float
    ad_pvalue: float
    n_gof: int

    @property
    def params(self) -> dict[str, float]:
        return self.distribution.params


@dataclass(frozen=True)
class FamilySelection:
    """All fits of one data set, best (lowest AIC) first."""

    fits: tuple[FitResult, ...]
    failures: dict[str, str] = field(default_factory=dict)

    @property
    def best(self) -> FitResult:
        return self.fits[0]


@dataclass(frozen=True)
class IndependenceResult:
    """Runs test (above/below the median) and lag-1 autocorrelation."""

    runs_z: float
    runs_pvalue: float
    lag1: float
    lag1_pvalue: float
    alpha: float = INDEPENDENCE_ALPHA

    @property
    def independent(self) -> bool:
        """True unless either test rejects independence at ``alpha``."""
        return self.runs_pvalue >= self.alpha and self.lag1_pvalue >= self.alpha


# ---------------------------------------------------------------------------
# Two-parameter MLEs at a fixed location (y = x - loc > 0)
# ---------------------------------------------------------------------------


def _gamma_shape(mean_log_gap: float) -> float:
    """Solve ln k - digamma(k) = s for the gamma shape k (s > 0)."""
    s = max(mean_log_gap, 1e-12)
    k = (3 - s + math.sqrt((s - 3) ** 2 + 24 * s)) / (12 * s)
    for _ in range(50):
        step = (math.log(k) - special.digamma(k) - s) / (1 / k - special.polygamma(1, k))
        k_new = k - step
        k = k_new if k_new > 0 else k / 2
        if abs(step) < 1e-12 * k:
            break
    return k


def _gamma_at(y: np.ndarray) -> tuple[dict[str, float], float]:
    mean = y.mean()
    k = _gamma_shape(math.log(mean) - np.log(y).mean())
    scale = mean / k
    return {"shape": k, "scale": scale}, float(stats.gamma.logpdf(y, k, scale=scale).sum())


def _pearson5_at(y: np.ndarray) -> tuple[dict[str, float], float]:
    # 1/y is gamma distributed; the Jacobian does not depend on the parameters.
    z = 1.0 / y
    mean = z.mean()
    a = _gamma_shape(math.log(mean) - np.log(z).mean())
    scale = a / mean
    return {"shape": a, "scale": scale}, float(stats.invgamma.logpdf(y, a, scale=scale).sum())


def _weibull_at(y: np.ndarray) -> tuple[dict[str, float], float]:
    u = np.log(y)
    u = u - u.max()
    mean_u = u.mean()

    def score(log_beta: float) -> float:
        beta = math.exp(log_beta)
        weights = np.exp(beta * u)
        return float((weights * u).sum() / weights.sum() - 1 / beta - mean_u)

    low, high = -8.0, 6.0
    if score(low) > 0 or score(high) < 0:
        raise ModelError("weibull fit: shape outside [3e-4, 400]")
    beta = math.exp(optimize.brentq(score, low, high, xtol=1e-10))
    scale = float(np.mean(y**beta) ** (1 / beta))
    return {"shape": beta, "scale": scale}, float(
        stats.weibull_min.logpdf(y, beta, scale=scale).sum()
    )


def _lognormal_at(y: np.ndarray) -> tuple[dict[str, float], float]:
    logs = np.log(y)
    mu, sigma = float(logs.mean()), float(logs.std())
    if sigma <= 0:
        raise ModelError("lognormal fit: all samples equal")
    return {"mu": mu, "sigma": sigma}, float(
        stats.lognorm.logpdf(y, sigma, scale=math.exp(mu)).sum()
    )


_FIT_AT_LOCATION: dict[str, Callable[[np.ndarray], tuple[dict[str, float], float]]] = {
    "pearson5": _pearson5_at,
    "weibull": _weibull_at,
    "gamma": _gamma_at,
    "lognormal": _lognormal_at,
}

_CLASSES: dict[str, type[Distribution]] = {
    "pearson5": PearsonV,
    "weibull": Weibull,
    "gamma": Gamma,
    "lognormal": LogNormal,
    "exponential": Exponential,
    "gengamma": GeneralisedGamma,
}


# ---------------------------------------------------------------------------
# Location by profile likelihood
# ---------------------------------------------------------------------------


def location_bounds(x: np.ndarray) -> tuple[float, float]:
    """The interval searched for the location: ``(lower, min(x) - delta)``.

    >>> location_bounds(np.array([1.0, 2.0, 3.0]))
    (0.0, 0.6666666666666667)
    """
    x_min = float(x.min())
    delta = (float(x.mean()) - x_min) / x.size
    lower = 0.0 if x_min > 0 else x_min - 10 * (float(np.median(x)) - x_min)
    return lower, x_min - delta


def _profile_location(x: np.ndarray, fit_at: Callable) -> tuple[float, dict[str, float], float]:
    """Maximise the profile log-likelihood over the location."""
    lower, upper = location_bounds(x)
    x_min = float(x.min())
    gap_low, gap_high = x_min - upper, x_min - lower  # gaps below the minimum
    if not gap_high > gap_low:
        gap_high = gap_low * 1e6

    cache: dict[float, tuple[dict[str, float], float]] = {}

    def profile(log_gap: float) -> float:
        if log_gap not in cache:
            try:
                cache[log_gap] = fit_at(x - (x_min - math.exp(log_gap)))
            except (ModelError, ValueError, FloatingPointError, ZeroDivisionError):
                cache[log_gap] = ({}, -math.inf)
        value = cache[log_gap][1]
        return value if math.isfinite(value) else -math.inf

    grid = np.linspace(math.log(gap_low), math.log(gap_high), _GRID_POINTS)
    values = [profile(g) for g in grid]
    i = int(np.argmax(values))
    if not math.isfinite(values[i]):
        raise ModelError("no location gives a finite likelihood")
    best_gap = float(grid[i])
    left, right = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    refined = optimize.minimize_scalar(
        lambda g: -profile(g), bounds=(left, right), method="bounded", options={"xatol": 1e-6}
    )
    if profile(refined.x) > values[i]:
        best_gap = float(refined.x)
    params, loglik = cache[best_gap]
    return x_min - math.exp(best_gap), params, loglik


# ---------------------------------------------------------------------------
# Goodness of fit
# ---------------------------------------------------------------------------


def _anderson_darling_asymptotic_cdf(a2: float) -> float:
    """P(A^2 <= a2) for a fully specified distribution (Marsaglia & Marsaglia, 2004)."""
    if a2 <= 0:
        return 0.0
    if a2 < 2:
        poly = (
            2.00012
            + (0.247105 - (0.0649821 - (0.0347962 - (0.011672 - 0.00168691 * a2) * a2) * a2) * a2)
            * a2
        )
        return math.exp(-1.2337141 / a2) / math.sqrt(a2) * poly
    poly = (
        1.0776
        - (2.30695 - (0.43424 - (0.082433 - (0.008056 - 0.0003146 * a2) * a2) * a2) * a2) * a2
    )
    return math.exp(-math.exp(poly))


def anderson_darling(data, cdf: Callable) -> tuple[float, float]:
    """Anderson-Darling statistic A^2 and its (asymptotic) p-value.

    >>> from scipy import stats
    >>> u = np.random.default_rng(0).random(500)
    >>> a2, p = anderson_darling(0.8 * u, stats.uniform.cdf)   # not uniform on [0, 1]
    >>> p < 1e-6
    True
    """
    x = np.sort(np.asarray(data, dtype=float))
    n = x.size
    f = np.clip(np.asarray(cdf(x), dtype=float), 1e-300, 1 - 1e-16)
    i = np.arange(1, n + 1)
    a2 = float(-n - np.sum((2 * i - 1) * (np.log(f) + np.log1p(-f[::-1]))) / n)
    return a2, min(max(1.0 - _anderson_darling_asymptotic_cdf(a2), 0.0), 1.0)


def subsample(data, points: int, random_state: Any = None) -> np.ndarray:
    """A random subsample without replacement (all the data if it is small)."""
    x = np.asarray(data, dtype=float).ravel()
    if x.size <= points:
        return x
    return as_generator(random_state).choice(x, size=points, replace=False)


def goodness_of_fit(
    distribution: Distribution, data, points: int = GOF_POINTS, random_state: Any = None
) -> tuple[float, float, float, float, int]:
    """KS statistic, KS p-value, A^2, A-D p-value and the subsample size."""
    sample = subsample(data, points, random_state)
    ks = stats.kstest(sample, distribution.cdf)
    a2, ad_p = anderson_darling(sample, distribution.cdf)
    return float(ks.statistic), float(ks.pvalue), a2, ad_p, int(sample.size)


# ---------------------------------------------------------------------------
# Public fitting entry points
# ---------------------------------------------------------------------------


def _clean(data) -> np.ndarray:
    x = np.asarray(data, dtype=float).ravel()
    x = x[np.isfinite(x)]
    if x.size < 10:
        raise ModelError(f"need at least 10 finite samples to fit a distribution, got {x.size}")
    if not x.max() > x.min():
        raise ModelError(f"cannot fit a distribution to {x.size} identical samples ({x[0]:g})")
    return x


def _fit_generalised_gamma(x: np.ndarray) -> tuple[Distribution, float]:
    """Joint MLE of all four parameters, started from the best special case.

    Every simpler family is a generalised gamma, so starting from the best of
    them can only improve the likelihood; the location stays bounded as in
    :func:`location_bounds`.
    """
    start_fits = [_fit_distribution(f, x) for f in ("pearson5", "weibull", "gamma", "lognormal")]
    start = max(start_fits, key=lambda fit: fit[1])[0].as_generalised_gamma()
    lower, upper = location_bounds(x)
    x_min = float(x.min())

    def unpack(theta: np.ndarray) -> GeneralisedGamma:
        mu, log_sigma, lam, log_gap = theta
        return GeneralisedGamma(mu, math.exp(log_sigma), lam, x_min - math.exp(log_gap))

    def negloglik(theta: np.ndarray) -> float:
        value = unpack(theta).loglik(x)
        return -value if math.isfinite(value) else 1e300

    gap_bounds = (math.log(x_min - upper), math.log(max(x_min - lower, 2 * (x_min - upper))))
    theta0 = [start.mu, math.log(start.sigma), start.lam, math.log(x_min - start.loc)]
    theta0[3] = min(max(theta0[3], gap_bounds[0]), gap_bounds[1])
    result = optimize.minimize(
        negloglik,
        theta0,
        method="L-BFGS-B",
        bounds=[(None, None), (None, None), (-20.0, 20.0), gap_bounds],
    )
    best = (
        unpack(result.x) if result.fun < negloglik(np.array(theta0)) else unpack(np.array(theta0))
    )
    return best, best.loglik(x)


def _fit_distribution(family: str, x: np.ndarray) -> tuple[Distribution, float]:
    if family == "exponential":
        loc = location_bounds(x)[1]
        dist = Exponential(scale=float(np.mean(x - loc)), loc=loc)
        return dist, dist.loglik(x)
    if family == "gengamma":
        return _fit_generalised_gamma(x)
    loc, params, loglik = _profile_location(x, _FIT_AT_LOCATION[family])
    return _CLASSES[family](**params, loc=loc), loglik


def check_families(families: Sequence[str]) -> None:
    """Raise :class:`~pevpm.errors.ModelError` naming any family that cannot be fitted."""
    unknown = [family for family in families if family not in _CLASSES]
    if unknown or not families:
        raise ModelError(
            f"cannot fit unknown family {', '.join(map(repr, unknown)) or '(none given)'}; "
            f"known: {', '.join(sorted(_CLASSES))}"
        )


def fit_family(
    family: str,
    data,
    *,
    fit_points: int = FIT_POINTS,
    gof_points: int = GOF_POINTS,
    random_state: Any = None,
) -> FitResult:
    """Fit one family by maximum likelihood and test the fit.

    ``random_state`` seeds the subsamples used for fitting (when there are
    more than ``fit_points`` samples) and for the goodness-of-fit tests.

    >>> from pevpm.stats.distributions import Weibull
    >>> x = Weibull(shape=3.6, scale=20.0, loc=50.0).rvs(3000, random_state=2)
    >>> r = fit_family("weibull", x, random_state=2)
    >>> abs(r.params["shape"] - 3.6) < 0.5
    True
    """
    check_families([family])
    rng = as_generator(random_state)
    x = subsample(_clean(data), fit_points, rng)
    distribution, loglik = _fit_distribution(family, x)
    n_params = len(distribution.param_names)
    ks_stat, ks_p, ad_stat, ad_p, n_gof = goodness_of_fit(distribution, x, gof_points, rng)
    return FitResult(
        family,
        distribution,
        loglik,
        2 * n_params - 2 * loglik,
        int(x.size),
        ks_stat,
        ks_p,
        ad_stat,
        ad_p,
        n_gof,
    )


def select_family(
    data,
    families: Sequence[str] = DEFAULT_FAMILIES,
    *,
    fit_points: int = FIT_POINTS,
    gof_points: int = GOF_POINTS,
    random_state: Any = None,
) -> FamilySelection:
    """Fit every family in ``families`` and rank them by AIC (best first).

    All families see the same fitting subsample and the same test subsample.
    A family whose fit fails is left out and its reason recorded in
    ``failures``; if all fail, :class:`~pevpm.errors.ModelError` is raised.
    """
    check_families(families)
    data = _clean(data)
    seed = as_generator(random_state).integers(2**63)
    fits, failures = [], {}
    for family in families:
        try:
            fits.append(
                fit_family(
                    family, data, fit_points=fit_points, gof_points=gof_points, random_state=seed
                )
            )
        except ModelError as exc:
            failures[family] = str(exc)
    if not fits:
        raise ModelError(
            "no family could be fitted: " + "; ".join(f"{k}: {v}" for k, v in failures.items())
        )
    return FamilySelection(tuple(sorted(fits, key=lambda r: r.aic)), failures)


def independence(data, alpha: float = INDEPENDENCE_ALPHA) -> IndependenceResult:
    """Runs test about the median and lag-1 autocorrelation, in measurement order.

    >>> r = independence(np.random.default_rng(1).random(1000))
    >>> r.independent
    True
    >>> independence(np.arange(1000.0)).independent
    False
    """
    x = np.asarray(data, dtype=float).ravel()
    if x.size < 20:
        raise ModelError(f"independence tests need at least 20 samples in order, got {x.size}")
    above = x[x != np.median(x)] > np.median(x)
    n1, n2 = int(above.sum()), int((~above).sum())
    n = n1 + n2
    runs = 1 + int(np.count_nonzero(above[1:] != above[:-1]))
    expected = 2 * n1 * n2 / n + 1
    variance = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1))
    runs_z = (runs - expected) / math.sqrt(variance) if variance > 0 else math.inf
    centred = x - x.mean()
    denominator = float(np.dot(centred, centred))
    lag1 = float(np.dot(centred[:-1], centred[1:]) / denominator) if denominator > 0 else 1.0
    lag1_z = (lag1 + 1 / x.size) * math.sqrt(x.size)
    return IndependenceResult(
        float(runs_z),
        float(2 * stats.norm.sf(abs(runs_z))),
        lag1,
        float(2 * stats.norm.sf(abs(lag1_z))),
        alpha,
    )


def independence_by_rank(series_by_rank, alpha: float = INDEPENDENCE_ALPHA) -> IndependenceResult:
    """Independence of each rank's series in measurement order; the worst rank is
    returned, judged at ``alpha / ranks`` (Bonferroni), since ranks differ in level.

    >>> rows = np.random.default_rng(4).random((4, 200)) + np.arange(4)[:, None]
    >>> independence_by_rank(rows).independent
    True
    """
    rows = [np.asarray(row, dtype=float).ravel() for row in series_by_rank]
    rows = [row for row in rows if row.size >= 20]
    if not rows:
        raise ModelError("independence tests need a rank with at least 20 samples in order")
    results = [independence(row, alpha / len(rows)) for row in rows]
    return min(results, key=lambda r: min(r.runs_pvalue, r.lag1_pvalue))
