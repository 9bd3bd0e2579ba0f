"""A recorded trace and a predicted run side by side in one Perfetto file.

Process group 1 is the recorded run (each rank's MPI calls as communication
slices named after the call, the gaps between them as computation), group 2
the simulated replay of it (:func:`pevpm.report.trace.trace_document`).  Both
start at 0: the recorded times are taken from the earliest rank's program
start (the end of its MPI_Init).  Open the file in https://ui.perfetto.dev.

>>> from pevpm.trace.events import Call, Send, Trace
>>> calls = (Call("MPI_Init", 0.0, 1.0), Call("MPI_Send", 1.5, 1.75, (Send(0, 0, 8),)),
...          Call("MPI_Finalize", 2.0, 2.1))
>>> [(s.kind, s.label, s.start, s.end) for s in recorded_slices(Trace((calls,)))]
[('compute', 'computation', 0.0, 0.5), ('communication', 'MPI_Send', 0.5, 0.75), \
('compute', 'computation', 0.75, 1.0)]
"""

from __future__ import annotations

import json
from pathlib import Path

from pevpm.errors import PevpmError
from pevpm.report.trace import rank_track, slice_event, trace_document
from pevpm.trace.events import Trace
from pevpm.vm.result import COMMUNICATION, COMPUTE, RunResult, Slice

RECORDED_PID, PREDICTED_PID = 1, 2


def recorded_slices(trace: Trace) -> list[Slice]:
    """Every rank's calls and the computation between them, from program start to end."""
    origin = min(trace.begin(r) for r in range(trace.numprocs))
    slices = []
    for rank, calls in enumerate(trace.ranks):
        previous, finish = trace.begin(rank), trace.finish(rank)
        for call in calls:
            if call.is_init or call.name == "MPI_Finalize" or call.start < previous:
                continue
            if call.start > previous:
                slices.append(Slice(rank, COMPUTE, previous - origin, call.start - origin,
                                    "computation"))
            slices.append(Slice(rank, COMMUNICATION, call.start - origin, call.end - origin,
                                call.name))
            previous = call.end
        if finish > previous:
            slices.append(Slice(rank, COMPUTE, previous - origin, finish - origin,
                                "computation"))
    return slices


def side_by_side_document(trace: Trace, predicted: RunResult, title: str) -> dict:
    """The trace-event JSON with the recorded run (group 1) above the prediction (group 2)."""
    events: list[dict] = [{"name": "process_name", "ph": "M", "pid": RECORDED_PID,
                           "args": {"name": f"recorded: {title}"}},
                          {"name": "process_sort_index", "ph": "M", "pid": RECORDED_PID,
                           "args": {"sort_index": 0}}]
    for rank in range(trace.numprocs):
        events += rank_track(RECORDED_PID, rank)
    events += [slice_event(s, RECORDED_PID) for s in recorded_slices(trace)]
    doc = trace_document(predicted, f"predicted: {title}", pid=PREDICTED_PID)
    doc["traceEvents"] = events + doc["traceEvents"] + [
        {"name": "process_sort_index", "ph": "M", "pid": PREDICTED_PID,
         "args": {"sort_index": 1}}]
    doc["otherData"]["recorded_seconds"] = trace.elapsed
    return doc


def write_side_by_side(trace: Trace, predicted: RunResult, path: str | Path,
                       title: str) -> Path:
    """Write :func:`side_by_side_document` to ``path`` (JSON) and return the path."""
    path = Path(path)
    try:
        path.write_text(json.dumps(side_by_side_document(trace, predicted, title)))
    except OSError as exc:
        raise PevpmError(f"cannot write trace: {exc.strerror}", where=str(path)) from exc
    return path
