"""About how many events one run of a model takes, and the event limit that follows.

A run's event limit is there to stop a run that never ends (a ``Repeat``
whose condition never holds runs to its cap of a million iterations, a typo
sets a count to 10^12), not a legitimate model that is merely long: so the
default grows with the events the model's own loop counts imply at the rank
count asked for, up to :data:`CEILING` (minutes of one worker).  Counts that
imply more than :data:`ABSURD` events (a day of one worker) are taken for a
run that never ends: the least limit applies, and the run stops within
seconds.  ``pevpm predict`` (:mod:`pevpm.cli.event_budget`) and the Python
API's :func:`pevpm.vm.strategies.montecarlo.predict` both use it.

>>> from pevpm.model.builder import ModelBuilder
>>> b = ModelBuilder(parameters={"iterations": 2000})
>>> with b.loop("parameter iterations"):
...     b.serial("1e-4")
...     b.collective("MPI_Allreduce", 8)
>>> estimated_events(b.build(), 1024)
88065024
>>> default_max_events(1024), default_max_events(1024, estimated_events(b.build(), 1024))
(51200000, 176130048)
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from pevpm.errors import PevpmError
from pevpm.model import ast

#: The least default limit: a model that never ends stops within seconds
#: (the compiled engine runs one to two million events a second) ...
DEFAULT_MAX_EVENTS = 5 * 10**6
#: ... and at least this many per rank (1,024 ranks: 5.1 x 10^7) ...
DEFAULT_EVENTS_PER_RANK = 50_000
#: ... and this many times what the model's loop counts imply ...
MARGIN = 2
#: ... but never more than this by default (4-8 minutes of one worker) ...
CEILING = 5 * 10**8
#: ... and only the least when the counts imply more than this (about a day of
#: one worker: a count of 10^12 is a mistake, or as good as a run that never ends).
ABSURD = 10**11
#: Events a rank spends on a point-to-point call: the instruction, its match and
#: completion (measured: 2.2-2.3 on the examples).
POINT_TO_POINT_EVENTS = 3
#: Events a rank spends per step of a collective's point-to-point expansion
#: (a send, a receive, their matches and completion).
COLLECTIVE_STEP_EVENTS = 4
#: Collectives whose expansion takes ``numprocs - 1`` steps a rank; the others
#: take about log2(numprocs) (trees, recursive doubling).
LINEAR_COLLECTIVES = frozenset({"MPI_Alltoall", "MPI_Allgather", "MPI_Reduce_scatter"})
#: Ranks whose events are counted (evenly spaced, the first and last
#: included); the total is scaled up from them.
SAMPLED_RANKS = 64
#: Statements the estimate looks at, over all the ranks it samples, before it samples
#: fewer (a straight-line model extracted from a long trace has many).
MAX_VISITS = 200_000


def default_max_events(numprocs: int, estimate: int = 0) -> int:
    """The event limit of a run on ``numprocs`` ranks when ``--max-events`` is not
    given, for a model whose run :func:`estimated_events` puts at ``estimate``.

    >>> [default_max_events(4, events) for events in (0, 10**8, 10**10, 10**12)]
    [5000000, 200000000, 500000000, 5000000]
    """
    floor = max(DEFAULT_MAX_EVENTS, DEFAULT_EVENTS_PER_RANK * numprocs)
    if estimate > ABSURD:
        return floor
    return max(floor, min(CEILING, MARGIN * estimate))


def estimated_events(model: ast.Model, numprocs: int,
                     params: Mapping[str, float] | None = None) -> int:
    """About how many events one run of ``model`` on ``numprocs`` ranks takes when every
    iteration is simulated: each statement once per pass, loop bodies times their counts
    (a body judged at its middle iteration), collectives by their expansion.  What cannot
    be known before the run counts once: a ``Repeat`` body, a loop whose count the ranks
    learn at run time or cannot evaluate (the run reports that).  Ranks are sampled evenly,
    fewer for a model of many statements (:data:`MAX_VISITS`)."""
    base = {**model.constants, **model.parameters, **(params or {}), "numprocs": numprocs}
    counter = _Counter(model.subroutines, numprocs)
    total = counter.block(model.body, {**base, "procnum": 0})
    samples = min(SAMPLED_RANKS, numprocs, MAX_VISITS // max(1, counter.visits))
    ranks = sorted({round(i * (numprocs - 1) / (samples - 1)) for i in range(1, samples)}
                   if samples > 1 else set())
    total += sum(counter.block(model.body, {**base, "procnum": rank}) for rank in ranks)
    return int(total * numprocs / (1 + len(ranks)))


class _Counter:
    """Counts one rank's events through a block of statements."""

    def __init__(self, subroutines: Mapping[str, tuple], numprocs: int):
        self.subroutines = subroutines
        self.steps = max(1, math.ceil(math.log2(numprocs))) if numprocs > 1 else 0
        self.linear = numprocs - 1
        self.calling: set[str] = set()
        self.visits = 0

    def block(self, statements, env: dict) -> float:
        self.visits += len(statements)
        return sum(self.statement(s, env) for s in statements)

    def statement(self, s, env: dict) -> float:
        if isinstance(s, ast.Message):
            if s.op not in ast.COLLECTIVES:
                return POINT_TO_POINT_EVENTS
            steps = self.linear if s.op in LINEAR_COLLECTIVES else self.steps
            return 1 + COLLECTIVE_STEP_EVENTS * steps
        if isinstance(s, ast.Loop):
            count = max(0, int(_value(s.count, env, 1)))
            if count == 0:
                return 1
            middle = {**env, s.index: count // 2} if s.index else env
            return 1 + count * (1 + self.block(s.body, middle))
        if isinstance(s, ast.Repeat):
            return 2 + self.block(s.body, {**env, s.index: 0} if s.index else env)
        if isinstance(s, ast.Runon):
            for branch in s.branches:
                taken = _value(branch.guard, env, None)
                if taken is None:       # a guard the run decides: the costliest arm
                    return 1 + max(self.block(b.body, env) for b in s.branches)
                if taken:
                    return 1 + self.block(branch.body, env)
            return 1
        if isinstance(s, ast.Condition):
            return 1 + max(self.block(b.body, env) for b in s.branches)
        if isinstance(s, ast.Call):
            if s.name in self.calling or s.name not in self.subroutines:
                return 1
            self.calling.add(s.name)
            try:
                return self.block(self.subroutines[s.name], env)
            finally:
                self.calling.discard(s.name)
        return 1


def _value(expr, env: dict, default):
    """``expr`` in ``env``, or ``default`` when it cannot be known before the run
    (a random draw, a receive's status, a name the run checks itself)."""
    try:
        value = expr.evaluate(env)
    except PevpmError:
        return default
    return value if isinstance(value, (int, float)) and math.isfinite(value) else default
