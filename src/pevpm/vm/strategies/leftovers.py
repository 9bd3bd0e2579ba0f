"""Requests left at the end of runs, over a Monte Carlo prediction, and the
warnings they give.

Each run reports the requests it left behind
(:attr:`pevpm.vm.kernel.result.RunResult.outstanding`); a :class:`LeftoverTally`
counts, for each (place, rank, operation, peer, tag, state), in how many runs
it happened and the most such requests one run left; :func:`warning_lines`
turns the tallies of several predictions into a few lines for a user.

>>> from pevpm.vm.kernel.result import NEVER_MATCHED, Outstanding
>>> tally = LeftoverTally()
>>> for run in range(3):
...     tally.add((Outstanding("ring.c:4:5", 3, "MPI_Isend", 4, 7, NEVER_MATCHED, 2),)
...               if run else ())
>>> (left,) = tally.build()
>>> left.runs, left.most
(2, 2)
>>> warning_lines([(8, 3, tally.build())])
['ring.c:4:5: rank 3: MPI_Isend to rank 4 tag 7 never matched (2 requests a run, in 2 of 3 \
runs on 8 ranks)']
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pevpm.model.expr import ANY_SOURCE, ANY_TAG, PROC_NULL
from pevpm.vm.kernel.result import NEVER_COMPLETED, NEVER_MATCHED, Outstanding

#: Warning lines printed per state before the rest are counted in one line.
WARNINGS_SHOWN = 5


@dataclass(frozen=True)
class LeftoverSummary:
    """One kind of left-over request over the runs of a prediction: ``runs``
    runs left it, at most ``most`` requests in one run."""

    request: Outstanding
    runs: int
    most: int

    def to_dict(self) -> dict:
        """Plain data for JSON (wildcard and null peers by name)."""
        r = self.request
        names = {ANY_SOURCE: "MPI_ANY_SOURCE", PROC_NULL: "MPI_PROC_NULL"}
        return {"where": r.where, "rank": r.rank, "op": r.op, "peer": names.get(r.peer, r.peer),
                "tag": "MPI_ANY_TAG" if r.tag == ANY_TAG else r.tag, "state": r.state,
                "runs": self.runs, "most_in_a_run": self.most}


class LeftoverTally:
    """Counts the left-over requests of runs added in run order."""

    def __init__(self):
        self._seen: dict[tuple, list] = {}    # key -> [request, runs, most]

    def add(self, outstanding: Iterable[Outstanding]) -> None:
        """Fold in one run's left-over requests."""
        for request in outstanding:
            entry = self._seen.get(request.key)
            if entry is None:
                self._seen[request.key] = [request, 1, request.count]
            else:
                entry[1] += 1
                entry[2] = max(entry[2], request.count)

    def build(self) -> tuple[LeftoverSummary, ...]:
        """One summary per kind of request, in the order runs first left them."""
        return tuple(LeftoverSummary(request, runs, most)
                     for request, runs, most in self._seen.values())


def warning_lines(tallies: Iterable[tuple[int, int, tuple[LeftoverSummary, ...]]],
                  shown: int = WARNINGS_SHOWN) -> list[str]:
    """Warning lines (without a ``warning:`` prefix) for ``(numprocs, runs,
    summaries)`` of several predictions: the first ``shown`` of each state,
    then how many more there are."""
    tallies = list(tallies)
    lines: list[str] = []
    for state in (NEVER_MATCHED, NEVER_COMPLETED):
        found = [(n, runs, s) for n, runs, summaries in tallies for s in summaries
                 if s.request.state == state]
        for n, runs, s in found[:shown]:
            r = s.request
            many = f"{s.most} requests a run, " if s.most > 1 else ""
            lines.append(f"{r.where}: rank {r.rank}: {r.describe()} ({many}in {s.runs} of "
                         f"{runs} runs on {n} rank{'s' if n > 1 else ''})")
        if len(found) > shown:
            lines.append(f"and {len(found) - shown} more kinds of request {state} "
                         "(--json lists them all)")
    return lines
