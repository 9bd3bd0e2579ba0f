"""How a traced quantity scales with the rank count: Extra-P style fits.

A value measured at several rank counts ``p`` (a loop count, a message
size, a computation's mean seconds) is fitted, by least squares, with each
model of a small family: one term ``c * f(p)`` for ``f`` in
:data:`TERMS` (``1``, ``p``, ``1/p``, ``log2(p)``, ``sqrt(p)``, ``1/sqrt(p)``,
``p*log2(p)``, ``p^2``, ``1/p^2``) and, given three counts or more,
``a + c * f(p)``.  The
criterion: the smallest largest relative error over the measured counts;
a fit within :data:`TOLERANCE` of the best that has fewer coefficients (then
comes earlier in the family) wins, so a constant is preferred to a slope it
cannot be told from.  One count, or a best fit off by more than
:data:`MAX_ERROR`, gives the value at the largest count, flagged as not
generalised.

>>> f = fit([2, 4, 8], [5000, 2500, 1250], whole=True)
>>> f.text, f.error
('10000 / numprocs', 0.0)
>>> fit([2, 4, 8], [0.5, 1.0, 1.5]).text, fit([2, 4, 8], [3.0, 3.5, 4.0]).form
('0.5 * log2(numprocs)', 'a + c*log2(p)')
>>> fit([4], [7]).generalised
False
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from pevpm.model.expr import Expr

#: The terms ``f(p)``: name, function, expression text over ``numprocs``.
TERMS: tuple[tuple[str, object, str], ...] = (
    ("1", lambda p: 1.0, ""),
    ("p", lambda p: p, "numprocs"),
    ("1/p", lambda p: 1.0 / p, "/ numprocs"),
    ("log2(p)", math.log2, "log2(numprocs)"),
    ("sqrt(p)", math.sqrt, "sqrt(numprocs)"),
    ("1/sqrt(p)", lambda p: 1.0 / math.sqrt(p), "/ sqrt(numprocs)"),
    ("p*log2(p)", lambda p: p * math.log2(p), "numprocs * log2(numprocs)"),
    ("p^2", lambda p: p * p, "numprocs * numprocs"),
    ("1/p^2", lambda p: 1.0 / (p * p), "/ (numprocs * numprocs)"),
)

def _normal_form() -> tuple[tuple[str, object, str], ...]:
    """Extra-P's normal form ``p^i * log2(p)^j`` (i in -2..3 by halves, j in 0..2)
    less what :data:`TERMS` has: for computations only, after TERMS."""
    have = {"1": (0, 0), "p": (1, 0), "1/p": (-1, 0), "log2(p)": (0, 1), "sqrt(p)": (0.5, 0),
            "1/sqrt(p)": (-0.5, 0), "p*log2(p)": (1, 1), "p^2": (2, 0), "1/p^2": (-2, 0)}
    out = []
    for i in (-2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5, 3):
        for j in (0, 1, 2):
            if (i, j) in have.values():
                continue
            power = "" if i == 0 else "p" if i == 1 else f"p^{i:g}"
            logs = "" if j == 0 else "log2(p)" if j == 1 else f"log2(p)^{j}"
            name = "*".join(x for x in (power, logs) if x)
            parts = ([f"pow(numprocs, {i:g})"] if i else []) + ["log2(numprocs)"] * j
            out.append((name, lambda p, i=i, j=j: p ** i * math.log2(p) ** j,
                        " * ".join(parts)))
    return tuple(out)


#: The rest of the normal form, tried for computations after :data:`TERMS`.
NORMAL_FORM = _normal_form()

#: Leave-one-out errors (relative) within this, or within the traced noise, of
#: the smallest count as ties: the law tried first of those wins (the program's
#: own before the rest of the family).
CV_TIE = 0.05

#: A best fit whose largest relative error is over this generalises nothing:
#: the value at the largest count is used instead (and the note says so).
MAX_ERROR = 0.25

#: Fits whose largest relative error is within this of the best count as ties.
TOLERANCE = 0.01

#: A measured computation is never taken as more certain than this (relative):
#: one traced run per count shows the spread within the run, not from run to run.
MIN_NOISE = 0.05

#: A law explains a measured mean when it misses it by at most this many
#: standard errors (:func:`fit_within_noise`).
NOISE_WIDTH = 2.0

#: The relative noise assumed of a computation traced with more ranks than
#: cores: its CPU time is disturbed too (caches refilled after every switch).
DISTURBED_NOISE = 0.25

#: Seconds below which two computation times are not told apart (the clock
#: reads and the tracer's own work around each call).
TIMER_NOISE = 1e-6


@dataclass(frozen=True)
class Fit:
    """A fitted model: ``text`` is the expression, ``error`` its largest relative
    error at the measured counts, ``form`` the family member (``a + c*log2(p)``)."""

    text: str
    error: float
    form: str
    generalised: bool       # fitted over two rank counts or more
    noise: float | None = None  # the largest relative tolerance it was held to, if any
    within_noise: bool = False  # the simplest law the noise does not reject
    cv: float | None = None     # its largest leave-one-out relative error, if taken so

    def evaluate(self, numprocs: int) -> float:
        """The fitted value at ``numprocs`` ranks.

        >>> fit([2, 4], [10, 20]).evaluate(64)
        320.0
        """
        return float(Expr.parse(self.text).evaluate({"numprocs": numprocs}))


def _number(value: float, whole: bool) -> str:
    if whole and value == round(value):
        return str(round(value))
    return f"{value:.6g}"


def _term_text(coef: float, term: str, whole: bool) -> str:
    c = _number(coef, whole)
    if not term:
        return c
    if term.startswith("/"):
        return f"{c} {term}"
    return f"{c} * {term}"


def _candidates(ps: list[int], ys: list[float], whole: bool):
    """(coefficients, relative error, text, form) of every family member."""
    p = np.asarray(ps, dtype=float)
    y = np.asarray(ys, dtype=float)
    scale = np.maximum(np.abs(y), 1e-300)
    two_term = len(set(ps)) >= 3
    for name, f, text in TERMS:
        column = np.array([f(v) for v in p])
        shapes = [("one", column[:, None])]
        if two_term and name != "1":
            shapes.append(("two", np.column_stack([np.ones_like(column), column])))
        for kind, design in shapes:
            coef, *_ = np.linalg.lstsq(design, y, rcond=None)
            if whole:           # whole numbers: round coefficients that are nearly whole
                coef = np.where(np.abs(coef - np.round(coef)) < 1e-9 * np.maximum(
                    1, np.abs(coef)), np.round(coef), coef)
            predicted = design @ coef
            error = float(np.max(np.abs(predicted - y) / scale))
            term = f"c/{name[2:]}" if name.startswith("1/") else f"c*{name}"
            if kind == "one":
                expr, form = _term_text(float(coef[0]), text, whole), term
            else:
                a, c = float(coef[0]), float(coef[1])
                sign = "-" if c < 0 else "+"
                expr = f"{_number(a, whole)} {sign} {_term_text(abs(c), text, whole)}"
                form = f"a + {term}"
            yield len(coef), error, expr, form


def fit(ps: list[int], values: list[float], whole: bool = False) -> Fit:
    """The best member of the family for ``values`` measured at rank counts ``ps``.

    ``whole``: the quantity is a whole number (a count, a size); the text then
    rounds to the nearest whole number unless it already gives every measured
    value exactly (``10000 / numprocs`` truncates as C does).
    """
    if len(set(ps)) < 2 or len(set(values)) == 1:
        text = _number(float(values[-1]), whole)
        return Fit(text, 0.0 if len(set(values)) == 1 else _spread(values), "c",
                   len(set(ps)) >= 2)
    found = list(_candidates(list(ps), list(values), whole))
    best = min(error for _, error, _, _ in found)
    _, error, text, form = min((c for c in found if c[1] <= best + TOLERANCE),
                                  key=lambda c: (c[0], found.index(c)))
    if error > MAX_ERROR:
        return Fit(_number(float(values[ps.index(max(ps))]), whole), error, "c", False)
    result = Fit(text, error, form, True)
    if whole and any(result.evaluate(p) != v for p, v in zip(ps, values)):
        result = Fit(f"floor({text} + 0.5)", error, form, True)
    return result


#: Rank counts a computation's law must stay non-negative at (1 to 2^20).
EXTRAPOLATED = tuple(2 ** k for k in range(21))


def fit_within_noise(ps: list[int], values: list[float], noise: list[float],
                     preferred: tuple[str, ...] = (), disturbed: tuple[int, ...] = (),
                     first: tuple[str, ...] = ()) -> Fit:
    """The law of the measured computation times (seconds): the constant unless
    the counts contradict it, else the one-term law of Extra-P's normal form
    that the noise does not reject and that predicts each count best from the
    others.

    ``noise``: each value's relative standard error; at least :data:`MIN_NOISE`
    is assumed, :data:`DISTURBED_NOISE` at the ``disturbed`` counts (traced
    with more ranks than cores), and :data:`TIMER_NOISE` seconds.  Each law
    ``c * f(p)`` is fitted by least squares weighted by the tolerances and is
    rejected when it misses a value by more than :data:`NOISE_WIDTH` times its
    noise (``noise`` on the Fit is the largest relative tolerance).  The
    constant is tried first and taken if not rejected.  Then the laws named
    in ``first`` (those of the sizes moved in the same loop: its work is
    divided as its data are), those named in ``preferred`` (those the
    program's own sizes and counts follow, e.g. ``1/p^2``), the rest of
    :data:`TERMS` and :data:`NORMAL_FORM`, in that order: of those not
    rejected, the one whose largest leave-one-out error (each count predicted
    from the others, ``cv`` on the Fit) is smallest, the first within
    :data:`CV_TIE` or the largest tolerance of it (the data do not tell such
    laws apart).  With fewer than two counts traced with no more ranks than
    cores, no law that grows with ``p`` is tried: sharing cores slows a rank
    down (its caches refilled after every switch), so growth seen only there
    is no evidence.  When all are rejected, the whole family competes
    (:func:`fit`) over the undisturbed counts if there are two or more; with
    fewer, or when the family's best law turns negative at some count of
    :data:`EXTRAPOLATED`, the value at the largest undisturbed count is kept,
    not generalised.

    >>> fit_within_noise([2, 4, 8], [1.666e-5, 2.088e-5, 1.14e-5], [0.01] * 3).text
    '1.14e-05'

    >>> f = fit_within_noise([2, 4], [0.026, 0.030], [0.05, 0.05])
    >>> f.text, f.form, f.noise
    ('0.0277157', 'c', 0.1)
    >>> fit_within_noise([2, 4, 8], [0.026, 0.052, 0.104], [0.01] * 3).form    # grows
    'c*p'
    >>> fit_within_noise([2, 4], [0.004, 0.001], [0.05, 0.05], ("1/p^2",)).text
    '0.016 / (numprocs * numprocs)'
    >>> fit_within_noise([2, 4], [3.3e-5, 4.6e-5], [0.01, 0.01], disturbed=(4,)).form
    'c'
    >>> fit_within_noise([2, 4], [3.3e-4, 2.1e-4], [0.01, 0.01], disturbed=(4,),
    ...                  first=("1/p",)).form
    'c/p'
    >>> fit_within_noise([2, 4], [0.0151, 0.0298], [0.2, 0.915],
    ...                  first=("p",)).text      # a noisy set-up time stays constant
    '0.0152781'
    >>> f = fit_within_noise([1, 2, 4, 8], [1.0, 2.83, 8.0, 22.6], [0.01] * 4)
    >>> f.form, round(f.cv, 3)
    ('c*p^1.5', 0.001)
    """
    if len(set(ps)) < 2:
        return fit(ps, values)
    y = np.asarray(values, dtype=float)
    scale = np.maximum(np.abs(y), 1e-300)
    floor = np.array([DISTURBED_NOISE if p in disturbed else MIN_NOISE for p in ps])
    tolerance = np.maximum(NOISE_WIDTH * np.maximum(floor, noise), TIMER_NOISE / scale)
    weights = 1.0 / (scale * tolerance) ** 2
    named = [t for t in TERMS if t[0] in first] + [t for t in TERMS if t[0] in preferred]
    order = list(dict.fromkeys([TERMS[0], *named, *TERMS, *NORMAL_FORM]))
    growth_seen = len({p for p in ps if p not in disturbed}) >= 2
    passed = []
    for name, f, text in order:
        column = np.array([f(v) for v in ps], dtype=float)
        if not column.any() or (not growth_seen and f(max(ps)) > f(min(ps))):
            continue
        coef = float(np.sum(weights * column * y) / np.sum(weights * column * column))
        misses = np.abs(coef * column - y) / scale
        if np.all(misses <= tolerance):
            form = "c" if name == "1" else (f"c/{name[2:]}" if name.startswith("1/")
                                            else f"c*{name}")
            found = Fit(_term_text(coef, text, False), float(misses.max()), form, True,
                        float(tolerance.max()), True, _leave_one_out(column, y, weights))
            if name == "1":
                return found
            passed.append(found)
    if passed:
        best = min(f.cv for f in passed) + max(CV_TIE, float(tolerance.max()))
        return next(f for f in passed if f.cv <= best)
    steady = [i for i, p in enumerate(ps) if p not in disturbed]
    if len({ps[i] for i in steady}) >= 2 or not steady:
        chosen = steady or list(range(len(ps)))
        found = fit([ps[i] for i in chosen], [values[i] for i in chosen])
        # a time is never negative: a two-term law that turns so where it
        # extrapolates is no law of this computation
        if all(found.evaluate(p) >= 0 for p in EXTRAPOLATED):
            return replace(found, noise=float(tolerance.max()))
        steady = chosen
    last = max(steady, key=lambda i: ps[i])
    return Fit(_number(values[last], False), float((np.abs(y - values[last]) / scale).max()),
               "c", False, float(tolerance.max()))


def _leave_one_out(column: np.ndarray, y: np.ndarray, weights: np.ndarray) -> float:
    """The largest relative error of ``c * column`` at each point when ``c`` is
    fitted (weighted least squares) to the other points only.

    >>> _leave_one_out(np.array([1.0, 2.0, 4.0]), np.array([1.0, 2.0, 4.0]), np.ones(3))
    0.0
    """
    errors = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        denominator = np.sum(weights[keep] * column[keep] ** 2)
        if denominator == 0:
            return math.inf
        coef = np.sum(weights[keep] * column[keep] * y[keep]) / denominator
        errors.append(abs(coef * column[i] - y[i]) / max(abs(y[i]), 1e-300))
    return float(max(errors))


def _spread(values) -> float:
    mean = float(np.mean(values))
    return float(np.max(np.abs(np.asarray(values) - mean)) / abs(mean)) if mean else 0.0
