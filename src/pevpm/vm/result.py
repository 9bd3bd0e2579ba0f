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

#: Kinds of time a rank spends; every second of a rank's run is one of these.
COMPUTE, COMMUNICATION, WAITING = "compute", "communication", "waiting"
KINDS = (COMPUTE, COMMUNICATION, WAITING)


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
    #: messages matched so far); only for a loop marked by pevpm.vm.steady
    marks: list[list[tuple]] | None = None
