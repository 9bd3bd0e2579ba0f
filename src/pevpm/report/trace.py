"""Export a simulated run as Chrome/Perfetto trace-event JSON.

Open the file in https://ui.perfetto.dev or ``chrome://tracing``.  Each rank
is one track (thread ``rank r`` of a process named after the model);
computation, communication and waiting are complete (``"X"``) slices; each
matched message is a flow arrow (``"s"`` then ``"f"`` with a shared ``id``)
from the slice where the send started to the slice where the receive
completed.  Times are microseconds of virtual time.

>>> from pevpm.vm.kernel.result import MessageRecord, RankTimes, RunResult, Slice
>>> run = RunResult(2e-3, [RankTimes(1e-3, 1e-3, 0, 2e-3), RankTimes(0, 1e-3, 1e-3, 2e-3)],
...                 {}, slices=[Slice(0, "compute", 0, 1e-3, "Serial"),
...                             Slice(0, "communication", 1e-3, 2e-3, "MPI_Send"),
...                             Slice(1, "waiting", 0, 1e-3, "MPI_Recv"),
...                             Slice(1, "communication", 1e-3, 2e-3, "MPI_Recv")],
...                 messages=[MessageRecord(0, 1, 0, 8, 1e-3, 2e-3)])
>>> doc = trace_document(run)
>>> sorted({e["ph"] for e in doc["traceEvents"]})
['M', 'X', 'f', 's']
"""

from __future__ import annotations

import bisect
import json
from pathlib import Path

from pevpm.errors import PevpmError
from pevpm.vm.kernel.result import COMMUNICATION, COMPUTE, WAITING, RunResult, Slice

#: Colour names the Chrome viewer knows, one per kind of time.
COLOURS = {COMPUTE: "thread_state_running", COMMUNICATION: "thread_state_iowait",
           WAITING: "thread_state_sleeping"}

PID = 1
MICROSECONDS = 1e6


def trace_document(result: RunResult, title: str = "pevpm simulation", pid: int = PID) -> dict:
    """The trace-event JSON object (``{"traceEvents": [...], ...}``) of a traced run;
    ``pid`` numbers its process group (another group can sit beside it)."""
    if result.slices is None:
        raise PevpmError("this run was not traced; simulate it with trace=True")
    numprocs = len(result.ranks)
    events: list[dict] = [{"name": "process_name", "ph": "M", "pid": pid,
                           "args": {"name": title}}]
    for rank in range(numprocs):
        events += rank_track(pid, rank)
    for s in result.slices:
        events.append(slice_event(s, pid))
    finder = _SliceFinder(result.slices, numprocs)
    for flow_id, m in enumerate(result.messages or (), start=1):
        args = {"src": m.src, "dst": m.dst, "tag": m.tag, "size": m.size}
        start = finder.at(m.src, m.send_start, closing=False)
        end = finder.at(m.dst, m.recv_end, closing=True)
        events.append({"name": "message", "cat": start.kind if start else "message",
                       "ph": "s", "id": flow_id, "pid": pid, "tid": m.src,
                       "ts": _us(start.start if start else m.send_start), "args": args})
        events.append({"name": "message", "cat": end.kind if end else "message",
                       "ph": "f", "bp": "e", "id": flow_id, "pid": pid, "tid": m.dst,
                       "ts": _us(end.start if end else m.recv_end), "args": args})
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"makespan_seconds": result.makespan, "numprocs": numprocs,
                          "messages": len(result.messages or ())}}


def write_trace(result: RunResult, path: str | Path, title: str = "pevpm simulation") -> Path:
    """Write the trace of ``result`` to ``path`` (JSON) and return the path."""
    path = Path(path)
    try:
        path.write_text(json.dumps(trace_document(result, title)))
    except OSError as exc:
        raise PevpmError(f"cannot write trace: {exc.strerror}", where=str(path)) from exc
    return path


def _us(seconds: float) -> float:
    return seconds * MICROSECONDS


def rank_track(pid: int, rank: int) -> list[dict]:
    """Metadata naming rank ``rank``'s track of process group ``pid``, in rank order."""
    return [{"name": "thread_name", "ph": "M", "pid": pid, "tid": rank,
             "args": {"name": f"rank {rank}"}},
            {"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": rank,
             "args": {"sort_index": rank}}]


def slice_event(s: Slice, pid: int = PID) -> dict:
    """A complete (``"X"``) event for slice ``s`` on its rank's track of group ``pid``."""
    args = {"kind": s.kind}
    if s.where:
        args["where"] = s.where
    event = {"name": s.label, "cat": s.kind, "ph": "X", "pid": pid, "tid": s.rank,
             "ts": _us(s.start), "dur": _us(s.end - s.start), "args": args}
    if s.kind in COLOURS:
        event["cname"] = COLOURS[s.kind]
    return event


class _SliceFinder:
    """Finds the slice of a rank that contains a time, so flow arrows bind to it.

    Viewers attach a flow event to the slice of the same track that starts at
    (Chrome) or encloses (Perfetto, ``bp: "e"``) its timestamp; placing the
    event at the found slice's start satisfies both.
    """

    def __init__(self, slices: list[Slice], numprocs: int):
        self._by_rank: list[list[Slice]] = [[] for _ in range(numprocs)]
        for s in slices:
            if s.end > s.start and 0 <= s.rank < numprocs:
                self._by_rank[s.rank].append(s)
        for rank_slices in self._by_rank:
            rank_slices.sort(key=lambda s: s.start)
        self._starts = [[s.start for s in r] for r in self._by_rank]

    def at(self, rank: int, time: float, closing: bool) -> Slice | None:
        """The slice on ``rank`` holding ``time``: ``(start, end]`` when ``closing``
        (a receive completing), else ``[start, end)`` (a send starting)."""
        if not 0 <= rank < len(self._by_rank):
            return None
        starts = self._starts[rank]
        i = (bisect.bisect_left(starts, time) if closing else bisect.bisect_right(starts, time))
        if i == 0:
            return None
        candidate = self._by_rank[rank][i - 1]
        inside = candidate.end >= time if closing else candidate.end > time
        return candidate if inside else None
