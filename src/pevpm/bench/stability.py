"""Is a block stable?  Its first and second halves of repetitions, compared.

Where ranks share cores, or other jobs come and go, a block's times can
shift while it runs, and two profiles taken a minute apart then disagree.
MPIBench checks every block with a stated test: the samples of the first
half of the repetitions (all ranks) against those of the second half,

* a two-sided Mann-Whitney U test (normal approximation with tie and
  continuity corrections, in numpy: a benchmark rank does not load scipy),
  unstable when ``p <`` :data:`P_VALUE`,
* and only when the medians also differ by more than :data:`SHIFT` (a
  significant but small difference does not matter to a prediction).

An unstable block is measured again (``--stability-retries``, default 1);
the last measurement is kept and the profile marks it
(:class:`~pevpm.profile.store.BlockStability`).  A block can also be steady
while it runs and still differ from the same block measured later, when the
machine's load has changed in between: :func:`compare_repeat` applies the
same rule to a block and a *repeat* of it at the end of the run
(``check="repeat"``).

>>> rng = np.random.default_rng(0)
>>> steady = rng.normal(1e-6, 1e-8, size=(2, 200))
>>> compare_halves(steady).stable
True
>>> drifting = steady.copy(); drifting[:, 100:] *= 1.5
>>> verdict = compare_halves(drifting, retries=1)
>>> verdict.stable, f"{verdict.shift:+.0%}", verdict.retries
(False, '+50%', 1)
"""

from __future__ import annotations

import math

import numpy as np

from pevpm.profile.store import BlockStability

#: Significance level of the halves' Mann-Whitney U test.
P_VALUE = 0.001
#: Smallest relative difference of the halves' medians that makes a block unstable.
SHIFT = 0.10
#: Fewest repetitions per half worth testing; smaller blocks count as stable.
MIN_HALF = 5


def compare_halves(times: np.ndarray, retries: int = 0) -> BlockStability:
    """The verdict on a block's ``(ranks, reps)`` times (``retries``: measurements
    repeated before this one)."""
    times = np.atleast_2d(np.asarray(times, dtype=float))
    half = times.shape[1] // 2
    return _compare(times[:, :half].ravel(), times[:, half:2 * half].ravel(), retries,
                    "halves")


def compare_repeat(times: np.ndarray, repeat: np.ndarray, retries: int = 0) -> BlockStability:
    """The verdict on a block's times against a repeat of it measured later.

    >>> rng = np.random.default_rng(0)
    >>> block = rng.normal(1e-6, 1e-8, size=(2, 200))
    >>> later = compare_repeat(block, 1.75 * rng.normal(1e-6, 1e-8, size=(2, 50)))
    >>> later.stable, later.check, f"{later.shift:+.0%}"
    (False, 'repeat', '+75%')
    """
    return _compare(np.ravel(times), np.ravel(repeat), retries, "repeat")


def _compare(first: np.ndarray, second: np.ndarray, retries: int, check: str
             ) -> BlockStability:
    if min(first.size, second.size) < MIN_HALF:
        median = float(np.median(np.concatenate([first, second])))
        return BlockStability(median, median, 1.0, retries, SHIFT, P_VALUE, check)
    return BlockStability(float(np.median(first)), float(np.median(second)),
                          mann_whitney_p(first, second), retries, SHIFT, P_VALUE, check)


def mann_whitney_p(first: np.ndarray, second: np.ndarray) -> float:
    """Two-sided p-value of the Mann-Whitney U test of two samples (normal
    approximation, average ranks for ties, continuity correction).

    >>> mann_whitney_p(np.arange(50.0), np.arange(50.0) + 25) < 1e-9
    True
    >>> mann_whitney_p(np.ones(10), np.ones(10))
    1.0
    """
    n1, n2 = len(first), len(second)
    both = np.concatenate([first, second])
    order = np.argsort(both, kind="stable")
    _, inverse, counts = np.unique(both[order], return_inverse=True, return_counts=True)
    average = np.cumsum(counts) - (counts - 1) / 2.0
    ranks = np.empty(both.size)
    ranks[order] = average[inverse]
    u = ranks[:n1].sum() - n1 * (n1 + 1) / 2.0
    n = n1 + n2
    ties = float((counts.astype(float) ** 3 - counts).sum())
    variance = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)))
    if variance <= 0:
        return 1.0
    z = max(abs(u - n1 * n2 / 2.0) - 0.5, 0.0) / math.sqrt(variance)
    return min(1.0, math.erfc(z / math.sqrt(2.0)))
