"""Start-up waves: project a loop whose ranks settle one after another.

Some loops settle rank by rank.  In the Jacobi example every rank starts at
time zero and the even/odd exchange first runs in a slow pattern; the edge
rank, with one neighbour only, falls into the fast pattern at once, and the
change then travels through the ranks at a fixed speed (about two ranks per
iteration).  With 1,024 ranks the last rank changes pace near iteration 510,
so waiting for *every* rank to settle would mean simulating half of a
1,000-iteration loop.  The front is plain to see much earlier, though: ranks
behind it all advance at one pace ``f`` per iteration, ranks ahead of it at
their own steady pace, and the iteration at which each rank changed pace is
a straight line in its rank number.

:func:`project_wave` reads one run's clocks at the loop's iteration ends and,
when the picture is exactly that (to :data:`EXACT` relative: the runs of a
deterministic machine), projects every rank's clock over the remaining
iterations: a rank still ahead of the front keeps its own pace until the
line says the front reaches it, then moves at ``f``.  The projection's
error is what the uncertainty of that line (its residuals, the standard
error of a prediction from it, and the change of its slope between the
first and second half of the ranks it was fitted to) does to the latest
rank's clock.  Anything else (noisy advances, paces that differ without a
moving front, a front that is not a straight line in rank number, too few
ranks changed, ranks still to settle on both sides of the front) is
reported as a reason, and the loop is not extrapolated this way.

>>> import numpy as np
>>> ranks, m = np.arange(64)[:, None], np.arange(1, 33)[None, :]
>>> switch = 1 + ranks / 2                      # the front: two ranks per iteration
>>> clocks = np.where(m < switch, 1.0 * m, 1.0 * switch + 0.75 * (m - switch))
>>> wave = project_wave(clocks, 968, 8)      # rank 63 changes pace in iteration 33
>>> wave.settled_by, round(float(wave.shift[0]), 2), round(float(wave.shift[63]), 2)
(33, 726.0, 726.18)
>>> bool(abs(wave.shift[63] - (0.5 + 967.5 * 0.75)) <= wave.error)   # the exact advance
True
>>> project_wave(clocks + np.sin(m) * 1e-3 * ranks, 968, 8)   # noise: no front to see
'the ranks do not advance in lockstep and only 0 changed pace (no moving front)'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Relative agreement that counts as the same advance (floating-point
#: rounding only: the runs of a deterministic machine).
EXACT = 1e-9
#: Fewest ranks whose change of pace the front's line is fitted to.
MIN_FRONT = 8
#: Standard errors of the fitted line allowed for in the projection's error.
LINE_SE = 3.0
#: Largest residual of a straight front, as a share of the iterations it spans.
STRAIGHT = 0.1


@dataclass(frozen=True)
class Wave:
    """One run's projection: each rank's clock advance over the remaining
    iterations (seconds), how far the latest rank's clock may be off
    (seconds), how much the latest clock moves, and the iteration by which
    the front reaches the last rank."""

    shift: np.ndarray
    error: float
    growth: float
    settled_by: int


def project_wave(clocks: np.ndarray, remaining: int, window: int) -> Wave | str:
    """Project ``clocks`` (ranks x iterations simulated, each rank's clock at
    every iteration end) over ``remaining`` more iterations, or say why not.
    A rank counts as settled once its advance per iteration has been the same
    for at least ``window`` iterations and equals the pace of the ranks that
    settled last."""
    ranks, done = clocks.shape
    if done < 2 * window + 2:
        return "too few iterations to see a front"
    advance = np.diff(clocks, axis=1)
    final = advance[:, -1:]
    same = np.abs(advance - final) <= EXACT * np.abs(final)
    # from which iteration on each rank's advance has been its final one
    constant_for = np.cumprod(same[:, ::-1], axis=1).sum(axis=1)
    since = done - constant_for
    steady = constant_for >= window
    if not steady.any():
        return "the ranks advance by varying amounts per iteration (no steady front)"
    latest = int(np.argmax(np.where(steady, since, -1)))
    pace = float(final[latest, 0])
    settled = steady & (np.abs(final[:, 0] - pace) <= EXACT * abs(pace))
    ahead = np.flatnonzero(~settled)
    if ahead.size == 0:
        return "every rank has settled (no front)"
    moved = np.flatnonzero(settled & (since > 1))
    if moved.size < MIN_FRONT:
        return (f"the ranks do not advance in lockstep and only {moved.size} changed pace "
                "(no moving front)")
    line = _Line.fit(moved.astype(float), since[moved].astype(float))
    if line.slope == 0:
        return "the ranks changed pace all at once (no moving front)"
    beyond = ahead > moved.max() if line.slope > 0 else ahead < moved.min()
    if not beyond.all() or line.spread > max(2.0, STRAIGHT * np.ptp(since[moved])):
        return "the ranks change pace in no straight front moving one way through them"
    reach = line.at(ahead.astype(float))
    if np.any(reach < done - window - line.spread - 1):
        return "ranks ahead of the front should already have settled (no straight front)"
    reach = np.clip(reach, done, done + remaining)
    own = (clocks[ahead, -1] - clocks[ahead, -1 - window]) / window
    shift = np.full(ranks, remaining * pace)
    shift[ahead] = (reach - done) * own + (done + remaining - reach) * pace
    late = np.zeros(ranks)
    late[ahead] = line.uncertainty(ahead.astype(float)) * np.abs(own - pace)
    projected = clocks[:, -1] + shift
    error = float(max((projected + late).max() - projected.max(),
                      projected.max() - (projected - late).max()))
    return Wave(shift, error, float(projected.max() - clocks[:, -1].max()),
                int(np.ceil(reach.max())))


@dataclass(frozen=True)
class _Line:
    """A least-squares line ``y = a + b x`` through the iterations at which
    ranks changed pace, with what it needs to say how far off it may be."""

    a: float
    slope: float
    spread: float              # largest residual
    se: float                  # residual standard error
    x_mean: float
    sxx: float
    count: int
    drift: float               # slope of the second half of the points minus the first's

    @classmethod
    def fit(cls, x: np.ndarray, y: np.ndarray) -> _Line:
        a, b = _least_squares(x, y)
        residuals = y - (a + b * x)
        order = np.argsort(y, kind="stable")
        half = len(order) // 2
        early, late = order[:half], order[half:]
        drift = 0.0
        if min(len(early), len(late)) >= 2 and np.ptp(x[early]) > 0 and np.ptp(x[late]) > 0:
            drift = _least_squares(x[late], y[late])[1] - _least_squares(x[early], y[early])[1]
        se = float(np.sqrt(np.sum(residuals ** 2) / max(len(x) - 2, 1)))
        return cls(a, b, float(np.abs(residuals).max()), se, float(x.mean()),
                   float(np.sum((x - x.mean()) ** 2)), len(x), float(drift))

    def at(self, x: np.ndarray) -> np.ndarray:
        return self.a + self.slope * x

    def uncertainty(self, x: np.ndarray) -> np.ndarray:
        """Iterations by which the line's value at ``x`` may be off."""
        distance = np.abs(x - self.x_mean)
        se = self.se * np.sqrt(1 / self.count + distance ** 2 / max(self.sxx, 1e-300))
        return self.spread + LINE_SE * se + np.abs(self.drift) * distance


def _least_squares(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    b, a = np.polyfit(x, y, 1)
    return float(a), float(b)
