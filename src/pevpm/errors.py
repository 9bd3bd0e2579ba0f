"""Errors a user can act on.

Every error that bad input can cause derives from :class:`PevpmError`; the
command line prints it as one line (``file:line:col: message`` where the
place is known) and exits non-zero, never with a traceback.

>>> err = PevpmError("negative message size -4", where="jacobi.c:12:9")
>>> str(err)
'jacobi.c:12:9: negative message size -4'
>>> "unknown name 'xsiz'" + did_you_mean("xsiz", ["xsize", "ysize", "procnum"])
"unknown name 'xsiz' (did you mean 'xsize'?)"
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class PevpmError(Exception):
    """Base class of every user-facing pevpm error.

    ``where`` is a place in the user's input (``file:line:col``, a profile
    path, a rank), prefixed to the message when present.
    """

    def __init__(self, message: str, where: str | None = None):
        super().__init__(message)
        self.message = message
        self.where = where

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class ModelError(PevpmError):
    """A model is inconsistent: unknown name, bad rank, negative size, ..."""


class DirectiveError(ModelError):
    """Annotated source could not be parsed into a model."""


class SimulationError(PevpmError):
    """The virtual machine could not finish a run (deadlock, limits)."""


class DeadlockError(SimulationError):
    """No virtual processor can move and not all have terminated."""


class EventLimitError(SimulationError):
    """A run took more instructions and matches than ``Limits.max_events`` allowed."""


class WallClockLimitError(SimulationError):
    """A run took longer in real time than ``Limits.max_wall`` allowed."""


class TruncationError(SimulationError):
    """A receive matched a message larger than it takes (MPI_ERR_TRUNCATE)."""


class ProfileError(PevpmError):
    """A machine profile is missing, corrupt, foreign or lacks what is asked."""


class BenchmarkError(PevpmError):
    """MPIBench options or a benchmark run are invalid."""


class AnalyticError(PevpmError):
    """Parameters of an analytic model are invalid."""


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """A `` (did you mean 'x'?)`` hint for a misspelt ``name``, or ``""``.

    Every "unknown ..." message in pevpm ends with this hint when a known
    name is close enough (difflib's default cutoff).
    """
    close = difflib.get_close_matches(name, sorted(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
