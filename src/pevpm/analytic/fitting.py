"""Least-squares fitting of SPMD model parameters to observed speedups (paper sec. 5.2).

The residuals are relative, ``(s(p, d) - s_obs) / s_obs``, so minimising
them also minimises the paper's average error
``(1 / N_P) sqrt(sum ((s - s_obs) / s_obs) ** 2)``. Speedups are unchanged
when every time is scaled by the same factor, so at least one time
parameter must stay fixed (by default ``s_par`` anchors the scale); the
free times are then expressed in the same unit.

>>> from pevpm.analytic.spmd import QCRD_TABLE4, speedup
>>> p, d = [16, 32, 64, 16, 32, 64], [1, 1, 1, 4, 4, 4]
>>> observed = speedup("bus-aio", QCRD_TABLE4, p, d)
>>> fit = fit_spmd("bus-aio", p, d, observed, QCRD_TABLE4.replace(w=0.5),
...                free=("w",), starts=2, seed=1)
>>> round(fit.values["w"], 6), fit.average_error < 1e-9
(0.19, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pevpm.analytic.spmd import TIME_PARAMETERS, SpmdParameters, speedups
from pevpm.errors import AnalyticError

FITTABLE = ("w",) + TIME_PARAMETERS
DEFAULT_FREE = ("w", "s_ser", "s0_com", "sr_com", "s0_io", "sr_io")


def average_error(predicted, observed) -> float:
    """The paper's average error ``(1/N_P) sqrt(sum ((s - s_obs)/s_obs) ** 2)``.

    >>> round(average_error([1.0, 2.2], [1.0, 2.0]), 12)
    0.05
    """
    s = np.asarray(predicted, dtype=float).ravel()
    s_obs = np.asarray(observed, dtype=float).ravel()
    return float(np.sqrt(np.sum(((s - s_obs) / s_obs) ** 2)) / s_obs.size)


@dataclass(frozen=True)
class SpmdFit:
    """Result of :func:`fit_spmd`.

    ``params``: best parameters (fixed ones as given); ``values``/``std``:
    the free parameters and their standard errors from the Jacobian at the
    optimum (``cov = s^2 (J^T J)^+`` with ``s^2`` the residual variance;
    0 when the data are matched exactly, NaN if there are no spare points);
    ``average_error``: the paper's measure; ``residuals``: relative
    residuals per point; ``starts``: how many starts ran to completion.

    The module example's ``fit`` is one:

    >>> from pevpm.analytic.spmd import QCRD_TABLE4, speedup
    >>> observed = speedup("bus-aio", QCRD_TABLE4, [16, 64], [1, 1])
    >>> fit = fit_spmd("bus-aio", [16, 64], [1, 1], observed, QCRD_TABLE4, free=("w",),
    ...                starts=1)
    >>> fit.model, round(fit.values["w"], 4), fit.residuals.shape
    ('bus-aio', 0.19, (2,))
    """

    model: str
    params: SpmdParameters
    values: dict
    std: dict
    average_error: float
    residuals: np.ndarray
    starts: int


def _check_free(free, base: SpmdParameters) -> tuple[str, ...]:
    free = tuple(dict.fromkeys(free))
    unknown = [name for name in free if name not in FITTABLE]
    if unknown:
        raise AnalyticError(f"cannot fit {', '.join(unknown)}; fittable parameters are "
                            f"{', '.join(FITTABLE)}")
    if not free:
        raise AnalyticError("nothing to fit: give at least one free parameter")
    anchors = [t for t in TIME_PARAMETERS if t not in free and getattr(base, t) > 0]
    if not anchors:
        raise AnalyticError("speedup is unchanged when all times are scaled together, so keep "
                            "at least one time parameter fixed and positive (e.g. s_par)")
    return free


def _start_points(free, base: SpmdParameters, starts: int, rng: np.random.Generator):
    """The given parameters first; then w stratified over [0, 1] and the times jittered.

    Queueing enters the speedup only at second order in the queue demand, so
    w = 0 is a stationary point that traps local searches; spreading the
    starts over w is what makes the multi-start search find the global fit.
    """
    points = [[getattr(base, name) for name in free]]
    strata = (rng.permutation(starts - 1) + rng.uniform(0, 1, starts - 1)) / max(starts - 1, 1)
    for w in strata:
        points.append([w if name == "w" else getattr(base, name) * 10 ** rng.uniform(-0.5, 0.5)
                       for name in free])
    return np.array(points, dtype=float)


def fit_spmd(model: str, p, d, observed, base: SpmdParameters, free=DEFAULT_FREE,
             starts: int = 8, seed: int | None = 0, upper_time: float | None = None) -> SpmdFit:
    """Fit the ``free`` parameters of ``model`` to observed speedups s_obs(p, d).

    ``base`` supplies the fixed parameters and the first start; ``starts - 1``
    more starts are drawn from ``numpy.random.default_rng(seed)``. Bounds:
    w in [0, 1], times in [0, upper_time] (default 100 T1 of ``base``).
    Needs at least as many points as free parameters.
    """
    free = _check_free(free, base)
    p = np.asarray(p).ravel()
    d = np.asarray(d).ravel()
    s_obs = np.asarray(observed, dtype=float).ravel()
    if not (p.size == d.size == s_obs.size):
        raise AnalyticError("p, d and observed speedups must have the same length")
    if np.any(~np.isfinite(s_obs)) or np.any(s_obs <= 0):
        raise AnalyticError("observed speedups must be positive and finite")
    if s_obs.size < len(free):
        raise AnalyticError(f"{s_obs.size} observations cannot determine {len(free)} parameters")
    if starts < 1:
        raise AnalyticError("starts must be >= 1")
    top = 100.0 * base.reference_time if upper_time is None else float(upper_time)
    lower = np.zeros(len(free))
    upper = np.array([1.0 if name == "w" else top for name in free])

    def parameters(x) -> SpmdParameters:
        return base.replace(**dict(zip(free, (float(v) for v in x))))

    def residuals(x):
        return (speedups(model, [parameters(x)], p, d)[0] - s_obs) / s_obs

    def jacobian(x):
        """Forward differences (backward at an upper bound), all columns in one MVA pass."""
        step = np.sqrt(np.finfo(float).eps) * np.maximum(1.0, np.abs(x))
        step = np.where(x + step > upper, -step, step)
        shifted = [x] + [x + step[i] * np.eye(len(x))[i] for i in range(len(x))]
        s = speedups(model, [parameters(v) for v in shifted], p, d)
        return ((s[1:] - s[0]) / step[:, None] / s_obs).T

    from scipy.optimize import least_squares  # here, so `pevpm analytic --help` stays light

    best, completed = None, 0
    for x0 in _start_points(free, base, starts, np.random.default_rng(seed)):
        try:
            result = least_squares(residuals, np.clip(x0, lower, upper), jac=jacobian,
                                   bounds=(lower, upper), xtol=1e-13, ftol=1e-13, gtol=1e-13)
        except AnalyticError:
            continue  # a start in an invalid corner (e.g. no CPU work); try the next one
        completed += 1
        if best is None or result.cost < best.cost:
            best = result
    if best is None:
        raise AnalyticError("no start point gave a valid model; check the fixed parameters")
    dof = s_obs.size - len(free)
    jac = best.jac
    variance = 2.0 * best.cost / dof if dof > 0 else np.nan
    cov = variance * np.linalg.pinv(jac.T @ jac)
    return SpmdFit(
        model=model,
        params=parameters(best.x),
        values=dict(zip(free, (float(v) for v in best.x))),
        std=dict(zip(free, (float(v) for v in np.sqrt(np.abs(np.diag(cov)))))),
        average_error=average_error(s_obs + best.fun * s_obs, s_obs),
        residuals=best.fun,
        starts=completed,
    )
