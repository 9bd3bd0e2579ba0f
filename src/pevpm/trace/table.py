"""A trace as arrays: every call and MPI record in numpy columns, no object per call.

The C OTF2 reader (:mod:`pevpm.trace.otf2.columns`) fills a :class:`CallTable`;
a replay reads it without making the trace's objects
(:mod:`pevpm.trace.replay.fast`).

>>> KINDS.index("MpiIrecvRequest") == POSTED
True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

#: The kinds of MPI record, as the C reader numbers them.
KINDS = ("MpiSend", "MpiIsend", "MpiIsendComplete", "MpiIrecvRequest", "MpiRecv", "MpiIrecv",
         "MpiCollectiveEnd")
SEND, ISEND, SEND_DONE, POSTED, RECV, IRECV, COLLECTIVE = range(len(KINDS))


@dataclass(frozen=True)
class CallTable:
    """Every rank's calls as arrays, in rank order and each rank's program order
    (what the C reader makes a trace's calls from; a replay reads it as it is).

    Per call (``start``, ``end``, ``slept`` in seconds; ``cpu`` NaN where not
    recorded; ``any_source`` -1 where not recorded): the calls of rank ``r`` are
    ``rank_starts[r]:rank_starts[r + 1]``, its name ``names[region[k]]``, its
    events ``event_starts[k]:event_starts[k + 1]``.  Per event: its kind (index
    in :data:`KINDS`), communicator, world ``peer``,
    ``tag``, ``size`` and ``request``; a collective's ``tag`` is its operation
    (named ``operations[tag]``), ``size`` and ``request`` the bytes it sent and
    received, ``root`` its root in the communicator (past its end: none), and
    ``members[comm]`` the communicator's world ranks.
    """

    numprocs: int
    names: list[str]
    rank_starts: np.ndarray
    region: np.ndarray
    start: np.ndarray
    end: np.ndarray
    cpu: np.ndarray
    slept: np.ndarray
    any_source: np.ndarray
    event_starts: np.ndarray
    kind: np.ndarray
    comm: np.ndarray
    peer: np.ndarray
    tag: np.ndarray
    size: np.ndarray
    request: np.ndarray
    root: np.ndarray
    members: dict[int, tuple]
    operations: dict[int, str]
    cores: int | None = None

    @property
    def calls(self) -> int:
        return len(self.region)

    @cached_property
    def event_call(self) -> np.ndarray:
        """The call each event is in (made once: delays and conversion both read it)."""
        return np.repeat(np.arange(self.calls), np.diff(self.event_starts))

    @cached_property
    def call_rank(self) -> np.ndarray:
        """The rank of each call."""
        return np.repeat(np.arange(self.numprocs), np.diff(self.rank_starts))
