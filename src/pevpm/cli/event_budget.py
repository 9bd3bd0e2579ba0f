"""The default event limit of a ``predict`` run, and what a run it stopped says.

The limit itself follows the model's own loop counts
(:mod:`pevpm.model.event_estimate`); a run stopped by the default says the
figure its loop counts need (when they cannot tell, a larger one to try) and
the option to pass it.

>>> EventBudget(1024, 88_065_024).limit
176130048
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from pevpm.cli.numbers import MAX_EVENTS
from pevpm.errors import EventLimitError
from pevpm.model import ast
from pevpm.model.event_estimate import (
    ABSURD,
    CEILING,
    MARGIN,
    default_max_events,
    estimated_events,
)


@dataclass(frozen=True)
class EventBudget:
    """The default event limit of runs on ``numprocs`` ranks of a model whose run
    :func:`estimated_events` puts at ``estimate`` events.

    >>> budget = EventBudget(1024, 1_500_000_000)
    >>> budget.limit
    500000000
    >>> print(budget.stopped(EventLimitError("simulation stopped after 500000000 events")))
    simulation stopped after 500000000 events; the default limit at 1024 ranks is \
500,000,000, its most (the model's loop counts imply about 1,500,000,000 events a run): \
--max-events 3000000000 allows them (0: no limit)
    """

    numprocs: int
    estimate: int

    @classmethod
    def of(cls, model: ast.Model, numprocs: int,
           params: Mapping[str, float] | None = None) -> EventBudget:
        return cls(numprocs, estimated_events(model, numprocs, params))

    @property
    def limit(self) -> int:
        return default_max_events(self.numprocs, self.estimate)

    def stopped(self, error: EventLimitError) -> EventLimitError:
        """``error``, of a run this default limit stopped, saying what the limit was
        and what to pass: the figure the loop counts need when the ceiling cut it
        (or they are absurd), else (the run went past what its counts imply) ten
        times the limit."""
        ranks = f"{self.numprocs} rank{'s' if self.numprocs > 1 else ''}"
        implied = f"the model's loop counts imply about {self.estimate:,} events a run"
        if MARGIN * self.estimate > MAX_EVENTS:
            why = (f" ({implied}, more than --max-events can allow: check the counts)")
        elif self.estimate > ABSURD:
            why = (f" ({implied}, a day or more of simulation: check the counts; "
                   f"--max-events {_round_up(MARGIN * self.estimate)} allows them)")
        elif MARGIN * self.estimate > CEILING:
            why = (f", its most ({implied}): --max-events "
                   f"{_round_up(MARGIN * self.estimate)} allows them")
        else:
            why = (f" ({implied}, a Repeat's passes and a count the run decides counted "
                   f"once): --max-events {_round_up(10 * self.limit)} allows ten times as many")
        return EventLimitError(f"{error.message}; the default limit at {ranks} is "
                               f"{self.limit:,}{why} (0: no limit)", error.where)


def _round_up(events: float) -> int:
    """``events`` rounded up to two significant digits.

    >>> _round_up(196608000), _round_up(2000)
    (200000000, 2000)
    """
    digits = max(0, len(str(int(events))) - 2)
    return math.ceil(events / 10**digits) * 10**digits
