"""Probability distributions of message-passing times.

Every family here feels like a frozen :mod:`scipy.stats` distribution
(``rvs``, ``pdf``, ``logpdf``, ``cdf``, ``ppf``, ``mean``, ``var``, ``fit``)
and adds what the virtual machine needs: the hard lower bound
:meth:`Distribution.min_value` (the location, i.e. the minimum latency), a
usable upper bound :meth:`Distribution.max_value`, and a plain ``params``
dictionary for storing a fit.  Instances are small picklable objects, so they
travel to process-pool workers.

Families (the thesis, sec. 4.7): Pearson type V (inverse gamma with a
location), 3-parameter Weibull, gamma, shifted lognormal, shifted
exponential, the generalised gamma in Prentice's parameterisation, and an
:class:`Empirical` distribution built from a histogram or from raw samples.

>>> d = PearsonV(shape=4.0, scale=30e-6, loc=50e-6)
>>> round(d.mean() * 1e6, 3)
60.0
>>> d.rvs(size=3, random_state=1).shape
(3,)
>>> d.min_value() == 50e-6
True
"""

from __future__ import annotations

import importlib
import math
from typing import Any, ClassVar

import numpy as np

from pevpm.errors import ModelError


class _OnFirstUse:
    """A module imported when one of its names is first read: scipy takes 1-2 CPU
    seconds to import, and a command that only draws (``pevpm replay`` on a profile)
    never reads it.

    >>> _OnFirstUse("math").sqrt(4.0)
    2.0
    """

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        return getattr(importlib.import_module(self._name), attr)


special, stats = _OnFirstUse("scipy.special"), _OnFirstUse("scipy.stats")

#: Quantile used by :meth:`Distribution.max_value` for unbounded families.
DEFAULT_MAX_QUANTILE = 0.999


def as_generator(random_state: Any = None) -> np.random.Generator:
    """Turn ``None``, an int seed, a SeedSequence or a Generator into a Generator.

    >>> int(as_generator(3).integers(10)) == int(as_generator(3).integers(10))
    True
    """
    return np.random.default_rng(random_state)


def _require(condition: bool, family: str, message: str) -> None:
    if not condition:
        raise ModelError(f"{family} distribution: {message}")


class Distribution:
    """Common behaviour of all families; subclasses define the maths.

    Subclasses provide ``family``, ``param_names``, ``_draw(rng, size)`` and
    either ``_scipy()`` (a frozen scipy distribution used for pdf/cdf/ppf and
    moments) or their own ``logpdf``/``cdf``/``ppf``/``mean``/``var``.
    """

    family: ClassVar[str]
    param_names: ClassVar[tuple[str, ...]]

    # -- parameters -------------------------------------------------------
    @property
    def params(self) -> dict[str, float]:
        """The parameters as a plain dict (what a profile stores)."""
        return {name: float(getattr(self, name)) for name in self.param_names}

    def __repr__(self) -> str:
        inside = ", ".join(f"{k}={v:.6g}" for k, v in self.params.items())
        return f"{type(self).__name__}({inside})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.params == self.params

    def __hash__(self) -> int:
        return hash((self.family, tuple(self.params.values())))

    def __getstate__(self) -> dict[str, float]:
        return self.params

    def __setstate__(self, state: dict[str, float]) -> None:
        self.__init__(**state)

    # -- sampling -----------------------------------------------------------
    def rvs(self, size: int | tuple[int, ...] | None = None, random_state: Any = None):
        """Draw samples (a float when ``size`` is None, else an array)."""
        rng = as_generator(random_state)
        values = self._draw(rng, 1 if size is None else size)
        return float(values.reshape(-1)[0]) if size is None else values

    def _draw(self, rng: np.random.Generator, size) -> np.ndarray:
        raise NotImplementedError

    # -- density and quantiles --------------------------------------------
    # Located families give the CDF and quantiles of the excess over ``loc``
    # with special functions (fast enough to call once per message); density
    # and moments come from the equivalent frozen scipy distribution.
    def _scipy(self):
        raise NotImplementedError

    def _cdf_excess(self, excess: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _ppf_excess(self, q: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def pdf(self, x):
        return np.exp(self.logpdf(x))

    def logpdf(self, x):
        return self._scipy().logpdf(x)

    def cdf(self, x):
        excess = np.asarray(x, dtype=float) - self.loc
        positive = excess > 0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            values = self._cdf_excess(np.where(positive, excess, 1.0))
        return np.where(positive, values, 0.0)[()]

    def sf(self, x):
        return 1.0 - np.asarray(self.cdf(x))

    def ppf(self, q):
        with np.errstate(divide="ignore", over="ignore"):
            return (self.loc + self._ppf_excess(np.asarray(q, dtype=float)))[()]

    def mean(self) -> float:
        return float(self._scipy().mean())

    def var(self) -> float:
        return float(self._scipy().var())

    def std(self) -> float:
        return math.sqrt(self.var())

    def loglik(self, data) -> float:
        """Sum of ``logpdf`` over ``data`` (``-inf`` if any point is impossible)."""
        return float(np.sum(self.logpdf(np.asarray(data, dtype=float))))

    # -- bounds for deterministic runs ------------------------------------
    def min_value(self) -> float:
        """The hard lower bound of the support (the location parameter)."""
        return float(self.loc)

    def max_value(self, quantile: float = DEFAULT_MAX_QUANTILE) -> float:
        """A usable upper bound: the ``quantile`` point of the distribution."""
        return float(self.ppf(quantile))

    def as_generalised_gamma(self) -> GeneralisedGamma:
        """The same distribution as a :class:`GeneralisedGamma` (its special case)."""
        raise NotImplementedError(f"{self.family} is not a generalised gamma special case")


class PearsonV(Distribution):
    """Pearson type V: an inverse gamma shifted by a location.

    Density ``(1/(b Γ(a))) (b/(x-g))^(a+1) exp(-b/(x-g))`` for ``x > g``,
    i.e. ``scipy.stats.invgamma(a, loc=g, scale=b)``.  The mean is finite
    only for ``shape > 1`` and the variance only for ``shape > 2``.

    >>> PearsonV(shape=3.0, scale=2.0, loc=1.0).mean()
    2.0
    """

    family = "pearson5"
    param_names = ("shape", "scale", "loc")

    def __init__(self, shape: float, scale: float, loc: float = 0.0):
        _require(
            shape > 0 and scale > 0,
            "pearson5",
            f"needs shape > 0 and scale > 0, got {shape}, {scale}",
        )
        self.shape, self.scale, self.loc = float(shape), float(scale), float(loc)

    def _scipy(self):
        return stats.invgamma(self.shape, loc=self.loc, scale=self.scale)

    def _cdf_excess(self, excess):
        return special.gammaincc(self.shape, self.scale / excess)

    def _ppf_excess(self, q):
        return self.scale / special.gammainccinv(self.shape, q)

    def _draw(self, rng, size):
        return self.loc + self.scale / rng.standard_gamma(self.shape, size)

    def as_generalised_gamma(self) -> GeneralisedGamma:
        lam = 1.0 / math.sqrt(self.shape)
        return GeneralisedGamma(math.log(self.scale / self.shape), lam, -lam, self.loc)


class Weibull(Distribution):
    """Three-parameter Weibull: ``loc + scale * W`` with ``W ~ Weibull(shape)``.

    >>> round(Weibull(shape=1.0, scale=2.0, loc=1.0).mean(), 12)
    3.0
    """

    family = "weibull"
    param_names = ("shape", "scale", "loc")

    def __init__(self, shape: float, scale: float, loc: float = 0.0):
        _require(
            shape > 0 and scale > 0,
            "weibull",
            f"needs shape > 0 and scale > 0, got {shape}, {scale}",
        )
        self.shape, self.scale, self.loc = float(shape), float(scale), float(loc)

    def _scipy(self):
        return stats.weibull_min(self.shape, loc=self.loc, scale=self.scale)

    def _cdf_excess(self, excess):
        return -np.expm1(-((excess / self.scale) ** self.shape))

    def _ppf_excess(self, q):
        return self.scale * (-np.log1p(-q)) ** (1.0 / self.shape)

    def _draw(self, rng, size):
        return self.loc + self.scale * rng.weibull(self.shape, size)

    def as_generalised_gamma(self) -> GeneralisedGamma:
        return GeneralisedGamma(math.log(self.scale), 1.0 / self.shape, 1.0, self.loc)


class Gamma(Distribution):
    """Gamma with a location: ``loc + scale * G`` with ``G ~ Gamma(shape)``.

    >>> Gamma(shape=2.0, scale=3.0, loc=1.0).mean()
    7.0
    """

    family = "gamma"
    param_names = ("shape", "scale", "loc")

    def __init__(self, shape: float, scale: float, loc: float = 0.0):
        _require(
            shape > 0 and scale > 0, "gamma", f"needs shape > 0 and scale > 0, got {shape}, {scale}"
        )
        self.shape, self.scale, self.loc = float(shape), float(scale), float(loc)

    def _scipy(self):
        return stats.gamma(self.shape, loc=self.loc, scale=self.scale)

    def _cdf_excess(self, excess):
        return special.gammainc(self.shape, excess / self.scale)

    def _ppf_excess(self, q):
        return self.scale * special.gammaincinv(self.shape, q)

    def _draw(self, rng, size):
        return self.loc + self.scale * rng.standard_gamma(self.shape, size)

    def as_generalised_gamma(self) -> GeneralisedGamma:
        lam = 1.0 / math.sqrt(self.shape)
        return GeneralisedGamma(math.log(self.scale * self.shape), lam, lam, self.loc)


class LogNormal(Distribution):
    """Shifted lognormal: ``loc + exp(N(mu, sigma^2))``.

    >>> round(float(LogNormal(mu=0.0, sigma=1.0, loc=2.0).ppf(0.5)), 12)
    3.0
    """

    family = "lognormal"
    param_names = ("mu", "sigma", "loc")

    def __init__(self, mu: float, sigma: float, loc: float = 0.0):
        _require(
            sigma > 0 and math.isfinite(mu),
            "lognormal",
            f"needs finite mu and sigma > 0, got {mu}, {sigma}",
        )
        self.mu, self.sigma, self.loc = float(mu), float(sigma), float(loc)

    def _scipy(self):
        return stats.lognorm(self.sigma, loc=self.loc, scale=math.exp(self.mu))

    def _cdf_excess(self, excess):
        return special.ndtr((np.log(excess) - self.mu) / self.sigma)

    def _ppf_excess(self, q):
        return np.exp(self.mu + self.sigma * special.ndtri(q))

    def _draw(self, rng, size):
        return self.loc + np.exp(self.mu + self.sigma * rng.standard_normal(size))

    def as_generalised_gamma(self) -> GeneralisedGamma:
        return GeneralisedGamma(self.mu, self.sigma, 0.0, self.loc)


class Exponential(Distribution):
    """Shifted exponential: ``loc + scale * E`` with ``E ~ Exp(1)``.

    >>> Exponential(scale=2.0, loc=1.0).var()
    4.0
    """

    family = "exponential"
    param_names = ("scale", "loc")

    def __init__(self, scale: float, loc: float = 0.0):
        _require(scale > 0, "exponential", f"needs scale > 0, got {scale}")
        self.scale, self.loc = float(scale), float(loc)

    def _scipy(self):
        return stats.expon(loc=self.loc, scale=self.scale)

    def _cdf_excess(self, excess):
        return -np.expm1(-excess / self.scale)

    def _ppf_excess(self, q):
        return -self.scale * np.log1p(-q)

    def _draw(self, rng, size):
        return self.loc + self.scale * rng.standard_exponential(size)

    def as_generalised_gamma(self) -> GeneralisedGamma:
        return GeneralisedGamma(math.log(self.scale), 1.0, 1.0, self.loc)


class GeneralisedGamma(Distribution):
    """Generalised gamma in Prentice's (1974) parameterisation, with a location.

    With ``w = (ln(x - loc) - mu) / sigma`` and ``k = 1/lam^2`` the density is
    ``|lam| / (sigma (x-loc) Γ(k)) * k^k * exp(k (lam w - e^(lam w)))`` for
    ``lam != 0`` and the lognormal density for ``lam == 0``.  Relation to
    Stacy's form ``β/(Γ(k)θ) (t/θ)^(kβ-1) exp(-(t/θ)^β)``: ``lam = 1/sqrt(k)``,
    ``sigma = 1/(β sqrt(k))``, ``mu = ln θ + ln(k)/β``.  Special cases:
    ``lam = sigma = 1`` exponential, ``lam = sigma`` gamma, ``lam = -sigma``
    inverse gamma (Pearson V), ``lam = 0`` lognormal, ``lam = 1`` Weibull with
    shape ``1/sigma`` and scale ``e^mu``.

    >>> g = GeneralisedGamma(mu=0.0, sigma=1.0, lam=1.0)   # standard exponential
    >>> round(float(g.cdf(1.0)), 6)
    0.632121
    """

    family = "gengamma"
    param_names = ("mu", "sigma", "lam", "loc")

    #: Below this ``|lam|`` the lognormal limit is used (the two agree to ~1e-4).
    LOGNORMAL_LIMIT = 1e-4

    def __init__(self, mu: float, sigma: float, lam: float, loc: float = 0.0):
        _require(
            sigma > 0 and math.isfinite(mu) and math.isfinite(lam),
            "gengamma",
            f"needs finite mu, lam and sigma > 0, got {mu}, {sigma}, {lam}",
        )
        self.mu, self.sigma, self.lam, self.loc = float(mu), float(sigma), float(lam), float(loc)

    @classmethod
    def from_stacy(cls, k: float, beta: float, theta: float, loc: float = 0.0) -> GeneralisedGamma:
        """Build from Stacy's shape ``k``, power ``beta`` and scale ``theta``."""
        _require(
            k > 0 and beta > 0 and theta > 0, "gengamma", "Stacy form needs k, beta, theta > 0"
        )
        return cls(
            mu=math.log(theta) + math.log(k) / beta,
            sigma=1.0 / (beta * math.sqrt(k)),
            lam=1.0 / math.sqrt(k),
            loc=loc,
        )

    @property
    def _is_lognormal(self) -> bool:
        return abs(self.lam) < self.LOGNORMAL_LIMIT

    def _lognormal(self) -> LogNormal:
        return LogNormal(self.mu, self.sigma, self.loc)

    def _w(self, x):
        y = np.asarray(x, dtype=float) - self.loc
        with np.errstate(divide="ignore", invalid="ignore"):
            return (np.log(np.where(y > 0, y, np.nan)) - self.mu) / self.sigma, y

    def logpdf(self, x):
        if self._is_lognormal:
            return self._lognormal().logpdf(x)
        lam, k = self.lam, 1.0 / self.lam**2
        w, y = self._w(x)
        # k ln k - k - ln Γ(k) + ln|lam| stays near -ln(2π)/2 as lam -> 0.
        const = math.log(abs(lam)) + k * math.log(k) - k - special.gammaln(k)
        with np.errstate(invalid="ignore", over="ignore"):
            z = lam * w
            value = (
                const
                - math.log(self.sigma)
                - np.log(np.where(y > 0, y, np.nan))
                + k * (z - np.expm1(z))
            )
        return np.where(y > 0, np.nan_to_num(value, nan=-np.inf), -np.inf)[()]

    def cdf(self, x):
        if self._is_lognormal:
            return self._lognormal().cdf(x)
        k = 1.0 / self.lam**2
        w, y = self._w(x)
        with np.errstate(over="ignore", invalid="ignore"):
            g = k * np.exp(self.lam * w)
            p = special.gammainc(k, g) if self.lam > 0 else special.gammaincc(k, g)
        return np.where(y > 0, np.nan_to_num(p, nan=0.0), 0.0)[()]

    def ppf(self, q):
        if self._is_lognormal:
            return self._lognormal().ppf(q)
        k = 1.0 / self.lam**2
        q = np.asarray(q, dtype=float)
        g = special.gammaincinv(k, q) if self.lam > 0 else special.gammainccinv(k, q)
        with np.errstate(divide="ignore"):
            return (self.loc + np.exp(self.mu + self.sigma * np.log(g / k) / self.lam))[()]

    def _draw(self, rng, size):
        if self._is_lognormal:
            return self._lognormal()._draw(rng, size)
        k = 1.0 / self.lam**2
        g = rng.standard_gamma(k, size)
        return self.loc + np.exp(self.mu + self.sigma * np.log(g / k) / self.lam)

    def _raw_moment(self, order: int) -> float:
        """``E[(X - loc)^order]`` (``inf`` where it does not exist)."""
        if self._is_lognormal:
            return math.exp(order * self.mu + 0.5 * (order * self.sigma) ** 2)
        k = 1.0 / self.lam**2
        r = order * self.sigma / self.lam
        if k + r <= 0:
            return math.inf
        return math.exp(
            order * self.mu + special.gammaln(k + r) - special.gammaln(k) - r * math.log(k)
        )

    def mean(self) -> float:
        return self.loc + self._raw_moment(1)

    def var(self) -> float:
        m1, m2 = self._raw_moment(1), self._raw_moment(2)
        return math.inf if math.isinf(m2) else max(m2 - m1 * m1, 0.0)


class Empirical(Distribution):
    """A measured distribution: a piecewise-linear CDF through knots.

    Built from a histogram (:meth:`from_histogram`: knots at the bin edges, so
    a sample falls uniformly inside its bin) or from raw samples
    (:meth:`from_samples`: knots at the sorted samples, so a sample falls
    uniformly between two neighbouring order statistics).  Sampling is one
    vectorised interpolation of uniform numbers.

    >>> e = Empirical.from_histogram([0.0, 1.0, 3.0], [1, 1])
    >>> float(e.cdf(1.0)), float(e.ppf(0.75)), e.min_value(), e.max_value()
    (0.5, 2.0, 0.0, 3.0)
    """

    family = "empirical"
    param_names = ()

    def __init__(self, knots, cdf_values):
        knots = np.asarray(knots, dtype=float)
        cdf_values = np.asarray(cdf_values, dtype=float)
        _require(
            knots.ndim == 1 and knots.shape == cdf_values.shape and knots.size >= 2,
            "empirical",
            "needs at least two knots and one CDF value per knot",
        )
        _require(
            bool(np.all(np.isfinite(knots))) and bool(np.all(np.diff(knots) >= 0)),
            "empirical",
            "knots must be finite and non-decreasing",
        )
        _require(
            bool(np.all(np.diff(cdf_values) >= 0))
            and cdf_values[0] == 0.0
            and cdf_values[-1] == 1.0,
            "empirical",
            "CDF values must rise from 0 to 1",
        )
        self.knots, self.cdf_values = knots, cdf_values

    @classmethod
    def from_histogram(cls, edges, counts) -> Empirical:
        """From bin ``edges`` (n+1 values) and ``counts`` (n values, not all zero)."""
        edges = np.asarray(edges, dtype=float)
        counts = np.asarray(counts, dtype=float)
        _require(
            edges.ndim == 1 and counts.ndim == 1 and edges.size == counts.size + 1,
            "empirical",
            f"a histogram needs one more edge than counts, got {edges.size} and {counts.size}",
        )
        _require(
            bool(np.all(counts >= 0)) and counts.sum() > 0,
            "empirical",
            "counts must be >= 0 and not all zero",
        )
        cumulative = np.concatenate([[0.0], np.cumsum(counts)]) / counts.sum()
        cumulative[-1] = 1.0
        return cls(edges, cumulative)

    @classmethod
    def from_samples(cls, samples) -> Empirical:
        """From raw samples (at least two distinct values)."""
        x = np.sort(np.asarray(samples, dtype=float).ravel())
        _require(x.size >= 2 and x[-1] > x[0], "empirical", "needs at least two distinct samples")
        return cls(x, np.linspace(0.0, 1.0, x.size))

    @property
    def params(self) -> dict[str, float]:
        return {}

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is Empirical
            and np.array_equal(self.knots, other.knots)
            and np.array_equal(self.cdf_values, other.cdf_values)
        )

    def __hash__(self) -> int:
        return hash((self.knots.tobytes(), self.cdf_values.tobytes()))

    def __repr__(self) -> str:
        return f"Empirical({self.knots.size} knots on [{self.knots[0]:.6g}, {self.knots[-1]:.6g}])"

    def __getstate__(self):
        return {"knots": self.knots, "cdf_values": self.cdf_values}

    def _draw(self, rng, size):
        return np.interp(rng.random(size), self.cdf_values, self.knots)

    def cdf(self, x):
        return np.interp(x, self.knots, self.cdf_values, left=0.0, right=1.0)[()]

    def ppf(self, q):
        return np.interp(q, self.cdf_values, self.knots)[()]

    def _segments(self):
        mass = np.diff(self.cdf_values)
        return self.knots[:-1], self.knots[1:], mass

    def pdf(self, x):
        """Density of the piecewise-uniform distribution (0 outside the knots)."""
        a, b, mass = self._segments()
        width = b - a
        density = np.divide(mass, width, out=np.zeros_like(mass), where=width > 0)
        x = np.asarray(x, dtype=float)
        index = np.searchsorted(self.knots, x, side="right") - 1
        inside = (index >= 0) & (index < density.size)
        return np.where(inside, density[np.clip(index, 0, density.size - 1)], 0.0)[()]

    def logpdf(self, x):
        with np.errstate(divide="ignore"):
            return np.log(self.pdf(x))

    def mean(self) -> float:
        a, b, mass = self._segments()
        return float(np.sum(mass * (a + b) / 2))

    def var(self) -> float:
        a, b, mass = self._segments()
        second = float(np.sum(mass * (a * a + a * b + b * b) / 3))
        return max(second - self.mean() ** 2, 0.0)

    def min_value(self) -> float:
        return float(self.knots[0])

    def max_value(self, quantile: float = 1.0) -> float:
        """The largest knot by default (the measured maximum), or a quantile."""
        return float(self.ppf(quantile))


#: Parametric families by their stored name.
FAMILIES: dict[str, type[Distribution]] = {
    cls.family: cls for cls in (PearsonV, Weibull, Gamma, LogNormal, Exponential, GeneralisedGamma)
}


def from_params(family: str, params: dict[str, float]) -> Distribution:
    """Rebuild a parametric distribution from its family name and ``params``.

    >>> from_params("weibull", {"shape": 2.0, "scale": 1.0, "loc": 0.5})
    Weibull(shape=2, scale=1, loc=0.5)
    """
    try:
        cls = FAMILIES[family]
    except KeyError:
        raise ModelError(
            f"unknown distribution family {family!r}; known: {', '.join(sorted(FAMILIES))}"
        ) from None
    missing = [name for name in cls.param_names if name not in params and name != "loc"]
    if missing:
        raise ModelError(
            f"{family} distribution needs parameter(s) {', '.join(missing)}; got {sorted(params)}"
        )
    return cls(**{name: params[name] for name in cls.param_names if name in params})
