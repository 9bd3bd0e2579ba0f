"""A recorded run against a predicted one, rank by rank: the report's
"recorded vs predicted" section.

Times are seconds from the earliest rank's program start (the end of its
MPI_Init), as in the side-by-side Perfetto file (:mod:`pevpm.report.side_by_side`).
A rank's recorded MPI time is the time inside its MPI calls (MPI_Init and
MPI_Finalize left out), its compute time the rest; its predicted MPI time is
the simulated communication and waiting, its compute time the simulated
computation (a replay's traced delays inside calls are replayed as
computation, so they count there).

>>> from pevpm.trace.events import Call, Recv, Send, Trace
>>> from pevpm.vm.kernel.result import RankTimes, RunResult
>>> trace = Trace(((Call("MPI_Init", 0.0, 1.0), Call("MPI_Send", 3.0, 4.0, (Send(1, 0, 8),)),
...                 Call("MPI_Finalize", 5.0, 5.0)),
...                (Call("MPI_Init", 0.0, 1.0), Call("MPI_Recv", 1.0, 4.0, (Recv(0, 0, 8),)),
...                 Call("MPI_Finalize", 4.0, 4.0))))
>>> run = RunResult(3.5, [RankTimes(2.0, 1.0, 0.0, 3.5), RankTimes(0.0, 0.5, 2.5, 3.0)], {})
>>> [(r.rank, r.recorded, r.recorded_mpi, r.predicted, r.predicted_mpi)
...  for r in rank_comparisons(trace, run)]
[(0, 4.0, 1.0, 3.5, 1.0), (1, 3.0, 3.0, 3.0, 3.0)]
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from pevpm.errors import PevpmError
from pevpm.report.side_by_side import recorded_slices
from pevpm.trace.events import Trace
from pevpm.vm.kernel.result import COMMUNICATION, COMPUTE, RunResult


@dataclass(frozen=True)
class RankComparison:
    """One rank of the recorded run and of the predicted one: when it ended
    (seconds from the first program start) and its MPI and compute seconds."""

    rank: int
    recorded: float
    recorded_mpi: float
    recorded_compute: float
    predicted: float
    predicted_mpi: float
    predicted_compute: float


def rank_comparisons(trace: Trace, predicted: RunResult) -> list[RankComparison]:
    """Each rank's recorded and predicted end, MPI and compute time."""
    if len(predicted.ranks) != trace.numprocs:
        raise PevpmError(f"the prediction has {len(predicted.ranks)} ranks, the recorded "
                         f"trace {trace.numprocs}")
    origin = min(trace.begin(r) for r in range(trace.numprocs))
    spent = [{COMPUTE: 0.0, COMMUNICATION: 0.0} for _ in range(trace.numprocs)]
    for s in recorded_slices(trace):
        spent[s.rank][s.kind] += s.end - s.start
    return [RankComparison(rank, trace.finish(rank) - origin, spent[rank][COMMUNICATION],
                           spent[rank][COMPUTE], times.finish,
                           times.communication + times.waiting, times.compute)
            for rank, times in enumerate(predicted.ranks)]


def comparison_section(trace: Trace, predicted: RunResult, *, source: str, predicted_by: str,
                       machine: str, perfetto: str) -> dict:
    """The ``"recorded"`` entry of a report's ``results.json``: the trace ``source``,
    what predicted it (``predicted_by``: a model and its parameters, or the replay),
    on which ``machine``, the side-by-side file ``perfetto`` (relative to the report)
    and every rank's :class:`RankComparison`."""
    return {"trace": source, "predicted_by": predicted_by, "machine": machine,
            "perfetto": perfetto, "numprocs": trace.numprocs,
            "recorded_seconds": trace.elapsed, "predicted_seconds": predicted.makespan,
            "ranks": [asdict(r) for r in rank_comparisons(trace, predicted)]}
