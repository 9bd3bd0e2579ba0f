"""Computations of an extracted model: their laws across rank counts, their
spread, and how they are written.

>>> seconds_source({2: (0.5, 0.5), 4: (0.25, 0.25)}, [], "in loop 1", ("1/p",))
"'1 / numprocs'"
>>> seconds_source({2: (), 4: (1e-6, 2e-6, 1.5e-6)}, [], "in loop 1")   # none at 2
"'gamma(1.5e-06, 7.41e-07)'"
"""

from __future__ import annotations

import math
import statistics

from pevpm.trace.extract.scaling import fit_within_noise

#: A computation whose sd is at most this fraction of its mean is written as a constant
#: (the spread of a clock's rounding, not of the program).
NEGLIGIBLE_SPREAD = 1e-6

def seconds_source(samples: dict[int, tuple[float, ...]], notes: list, where: str,
             laws: tuple[str, ...] = (), disturbed: tuple[int, ...] = (),
             own: tuple[str, ...] = ()) -> str:
    """Python source of a computation measured at each count (its samples: the
    aligned gaps of every rank and repetition): a constant or a quoted
    ``gamma(mean, sd)`` draw (its sd the smaller of the faster half's,
    :func:`lower_sd`, and the pass-to-pass spread, :func:`step_sd`) (0 when there is none: a rank loop of one pass,
    :mod:`pevpm.trace.extract.rank_loops`; counts without samples are left out).  The
    mean's law is the simplest its noise (the standard error of the samples)
    does not reject, trying the program's own ``laws`` after the constant
    (:func:`pevpm.trace.extract.scaling.fit_within_noise`)."""
    samples = {p: v for p, v in samples.items() if v}
    if not samples:
        return "0"
    means = {p: statistics.fmean(v) for p, v in samples.items()}
    sds = {p: robust_sd(v) for p, v in samples.items()}
    ps = sorted(means)
    noise = [sds[p] / means[p] / math.sqrt(len(samples[p])) if means[p] > 0 else 0.0
             for p in ps]
    result = fit_within_noise(ps, [means[p] for p in ps], noise, laws, disturbed, own)
    mean = result.text
    if len(ps) > 1:
        what = f"{where}: computation mean = {mean}"
        counts = f"at {', '.join(map(str, ps))} ranks"
        if not result.generalised:
            notes.append(f"{what}, a traced value (off by up to {result.error:.1%} "
                         f"{counts}): no law fits within the noise, +-{result.noise:.0%}, "
                         "and the counts traced with no more ranks than cores are too few "
                         "to choose one; not generalised")
        elif result.within_noise:
            alone = [p for p in ps if p not in disturbed]
            caveat = (f"; only {alone[0]} ranks were traced with no more ranks than cores, so "
                      "this law is not contradicted, not confirmed" if len(alone) == 1 else "")
            cv = ("" if result.cv is None else
                  f"; each count predicted from the others within {result.cv:.1%}")
            notes.append(f"{what} ({result.form}: within the traced noise, off by at most "
                         f"{result.error:.1%} where +-{result.noise:.0%} is allowed {counts}"
                         f"{cv}{caveat}; means {evidence(means)})")
        else:
            notes.append(f"{what} (fitted {result.form}, largest error {result.error:.1%} "
                         f"{counts}: every one-term law misses by more than the traced "
                         f"noise, +-{result.noise:.0%}; means {evidence(means)})")
    if all(sds[p] <= NEGLIGIBLE_SPREAD * means[p] for p in means):
        return argument(mean)
    # sd in units of the mean, over the counts with a mean (a poll's lateness can be
    # 0 at every repetition of a count): the pass-to-pass spread or the faster half's
    spreads = {p: min(lower_sd(samples[p]), step_sd(samples[p])) for p in means}
    cv = statistics.fmean([spreads[p] / means[p] for p in means if means[p] > 0] or [0.0])
    if argument(mean) == mean:
        return repr(f"gamma({mean}, {float(mean) * cv:.3g})")
    return repr(f"gamma({mean}, {cv:.3g} * ({mean}))")


def evidence(values: dict[int, float]) -> str:
    """Measured values by rank count, as notes give them.

    >>> evidence({2: 0.0125, 4: 0.00625}), evidence({1: 64, 4: 256})
    ('0.0125 at 2, 0.00625 at 4 ranks', '64 at 1, 256 at 4 ranks')
    """
    return ", ".join(f"{v:.4g} at {p}" for p, v in sorted(values.items())) + " ranks"


#: The law of a quantity's per-rank total when the quantity is per peer.
TIMES_P = {"1/p^2": "1/p", "1/p": "1", "1/sqrt(p)": "sqrt(p)", "p": "p^2",
            "log2(p)": "p*log2(p)"}


def law_of(form: str) -> str | None:
    """The TERMS name of a one-term fitted form (``c/p^2`` -> ``1/p^2``), else None.

    >>> law_of("c/p^2"), law_of("c*log2(p)"), law_of("a + c*p")
    ('1/p^2', 'log2(p)', None)
    """
    if form.startswith("c/"):
        return "1/" + form[2:]
    if form.startswith("c*"):
        return form[2:]
    return None


def robust_sd(values) -> float:
    """The spread of ``values`` from their median absolute deviation (times
    1.4826, the sd of a normal sample), so that one slow repetition -- a first
    iteration warming caches up -- adds to a loop's mean but is not taken as
    every repetition's variability; the sample sd when the MAD is 0 but the
    values differ.

    >>> robust_sd([1.0, 1.1, 0.9, 1.0, 9.0]) < 0.2, robust_sd([2.0])
    (True, 0.0)
    """
    if len(values) < 2:
        return 0.0
    middle = statistics.median(values)
    mad = statistics.median(abs(v - middle) for v in values)
    return 1.4826 * mad if mad > 0 else statistics.stdev(values)


def lower_sd(values) -> float:
    """The spread of ``values`` from their faster half: the median distance of
    the values below the median from it, times 1.4826 (a normal sample's
    sd); :func:`robust_sd` where that is 0.  A host's other work only ever
    lengthens a computation, so the slower half holds its interruptions as
    well as the program's own variability, and a model that drew them on every
    rank would have a thousand ranks wait for the slowest at each collective;
    the faster half holds the program's (and the timer's) alone.

    >>> times = [1.0, 0.9, 1.1, 1.0, 1.3, 1.6, 2.0]
    >>> round(lower_sd(times), 3), round(robust_sd(times), 3)
    (0.148, 0.297)
    """
    if len(values) < 2:
        return 0.0
    middle = statistics.median(values)
    below = [middle - v for v in values if v < middle]
    low = statistics.median(below) if below else 0.0
    return 1.4826 * low if low > 0 else robust_sd(values)


def step_sd(values) -> float:
    """The spread of ``values`` from one sample to the next: the median absolute
    difference of neighbours, times 1.4826 / sqrt(2) (a normal sample's sd);
    :func:`robust_sd` where that is 0 or there are fewer than 3.  A gap's
    samples are each rank's passes in order, rank after rank, so a rank that is
    slower throughout (a busier core) or a host whose load changes during the
    run moves the level of a run of samples, which the spread of them all
    would count as each pass's randomness (drawn independently on every rank
    at every pass); neighbours differ by that only where the level moves.
    HPCCG's sweep at 2 ranks on a loaded host: 4.29 and 5.11 ms on its two
    ranks, 3-4% from pass to pass on each, 17% over both.

    >>> ranks = [1.0, 1.02, 0.98, 1.01, 0.99, 2.0, 2.02, 1.98, 2.01, 1.99]
    >>> round(step_sd(ranks), 3), round(lower_sd(ranks), 3)
    (0.031, 0.741)
    """
    if len(values) < 3:
        return robust_sd(values)
    steps = [abs(b - a) for a, b in zip(values, values[1:])]
    spread = 1.4826 * statistics.median(steps) / math.sqrt(2)
    return spread if spread > 0 else robust_sd(values)


def argument(text: str) -> str:
    """A value as a builder argument: a number as it is, an expression quoted.

    >>> argument("12"), argument("10000 / numprocs")
    ('12', "'10000 / numprocs'")
    """
    try:
        float(text)
    except ValueError:
        return repr(text)
    return text
