"""Tags of collective-internal messages.

User tags are >= 0 and the wildcard / null values of :mod:`pevpm.model.expr`
sit around -1e6, so every collective tag is at or below
``COLLECTIVE_TAG_BASE`` = -2e6.  Each collective family and each phase of
it (first data phase, second phase, acknowledgements) has its own tag, so messages of one
phase never match receives of another; calls of the same family in sequence
share tags and are kept apart by MPI's non-overtaking order, as in MPICH.
A receive with ``MPI_ANY_TAG`` in the user's program must never match a tag
at or below the base (the engine's rule).

>>> collective_tag("bcast") == COLLECTIVE_TAG_BASE - 16
True
>>> is_collective_tag(collective_tag("alltoall", "ack")), is_collective_tag(5)
(True, False)
"""

from __future__ import annotations

from pevpm.machine.collectives import FAMILIES

COLLECTIVE_TAG_BASE = -2_000_000

PHASES = ("data", "second", "ack")
_STRIDE = 16


def collective_tag(family: str, phase: str = "data") -> int:
    """The tag of ``phase`` messages of a ``family`` collective."""
    return COLLECTIVE_TAG_BASE - _STRIDE * FAMILIES.index(family) - PHASES.index(phase)


def is_collective_tag(tag: int) -> bool:
    return tag <= COLLECTIVE_TAG_BASE
