"""What one simulated run of the virtual machine produces.

The engine fills a :class:`RunResult` per run; the Monte Carlo driver
aggregates many into a prediction; trace export reads ``slices`` and
``messages`` (recorded only when a run is traced).

>>> r = RunResult(makespan=2.0, ranks=[RankTimes(1.5, 0.25, 0.25, 2.0)],
...               critical_path={"compute": 1.5, "communication": 0.5, "waiting": 0.0})
>>> r.ranks[0].total
2.0
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pevpm.model.expr import ANY_SOURCE, ANY_TAG, PROC_NULL

#: Kinds of time a rank spends; every second of a rank's run is one of these.
COMPUTE, COMMUNICATION, WAITING = "compute", "communication", "waiting"
KINDS = (COMPUTE, COMMUNICATION, WAITING)

#: What became of a request still outstanding when a run ended: no partner ever
#: took it, or it was matched but never waited on (nor tested complete).
NEVER_MATCHED, NEVER_COMPLETED = "never matched", "never completed"


@dataclass(frozen=True)
class RankTimes:
    """Seconds a rank spent computing, communicating (transfer and local
    completion) and waiting (blocked for a partner), and when it finished."""

    compute: float
    communication: float
    waiting: float
    finish: float

    @property
    def total(self) -> float:
        return self.compute + self.communication + self.waiting


@dataclass(frozen=True)
class Slice:
    """An interval of one rank's time line, for traces."""

    rank: int
    kind: str
    start: float
    end: float
    label: str
    where: str | None = None


@dataclass(frozen=True)
class MessageRecord:
    """One matched point-to-point message, for traces (flow arrows)."""

    src: int
    dst: int
    tag: int
    size: int
    send_start: float
    recv_end: float


@dataclass(frozen=True)
class CollectiveRecord:
    """Per-rank completion times of one collective call (occurrence-th time
    the collective at ``where`` ran)."""

    op: str
    where: str | None
    occurrence: int
    completion: np.ndarray


@dataclass(frozen=True)
class Outstanding:
    """``count`` requests a rank left behind at the end of a run, all posted by
    the statement at ``where`` with the same operation, peer and tag.

    ``peer`` is the destination of a send or the source of a receive (maybe
    ``MPI_ANY_SOURCE``); ``state`` is :data:`NEVER_MATCHED` (an Isend nobody
    received, an Irecv nobody sent to, an eager send never received) or
    :data:`NEVER_COMPLETED` (matched, but never waited on or tested complete).

    >>> Outstanding("ring.c:4:5", 3, "MPI_Isend", 4, 7, NEVER_MATCHED).describe()
    'MPI_Isend to rank 4 tag 7 never matched'
    """

    where: str | None
    rank: int
    op: str
    peer: int
    tag: int
    state: str
    count: int = 1

    @property
    def key(self) -> tuple:
        """Everything but the count: what identifies the request across runs."""
        return (self.where, self.rank, self.op, self.peer, self.tag, self.state)

    def describe(self) -> str:
        """The operation, its peer and tag, and what became of it."""
        receiving = "recv" in self.op.lower() and "sendrecv" not in self.op.lower()
        if self.peer == PROC_NULL:
            peer = "MPI_PROC_NULL"
        elif self.peer == ANY_SOURCE:
            peer = "any source"
        else:
            peer = f"rank {self.peer}"
        tag = "any tag" if self.tag == ANY_TAG else f"tag {self.tag}"
        how = " by MPI_Wait or MPI_Test" if self.state == NEVER_COMPLETED else ""
        return f"{self.op} {'from' if receiving else 'to'} {peer} {tag} {self.state}{how}"


@dataclass
class RunResult:
    """Outcome of one simulated run."""

    makespan: float
    ranks: list[RankTimes]
    critical_path: dict[str, float]
    messages_simulated: int = 0
    collectives: list[CollectiveRecord] = field(default_factory=list)
    slices: list[Slice] | None = None
    messages: list[MessageRecord] | None = None
    #: per rank, at each marked loop end: (clock, compute, communication, waiting,
    #: messages matched so far); only for a loop marked by pevpm.vm.strategies.steady
    marks: list[list[tuple]] | None = None
    #: requests left at the end of the run (user code only, not collectives' own)
    outstanding: tuple[Outstanding, ...] = ()
    #: None when the compiled core ran the run, else why the pure-Python
    #: engine ran it (:func:`pevpm.vm.kernel.fastengine.simulate`)
    engine_note: str | None = None
