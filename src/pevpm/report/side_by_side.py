"""A recorded trace and a predicted run side by side in one Perfetto file.

Process group 1 is the recorded run (each rank's MPI calls as communication
slices named after the call, the gaps between them as computation), group 2
a simulated run (:func:`pevpm.report.trace.trace_document`): the replay of the
trace (``pevpm replay --perfetto``, ``pevpm report --recorded``) or a model's
run at the trace's rank count (``pevpm predict --recorded``).  Both start at 0:
the recorded times are taken from the earliest rank's program start (the end
of its MPI_Init).  A predicted collective's steps are named after the
collective (``MPI_Barrier``, the step's own name in ``args.step``), as the
recorded call is, where the model says which collective it was.  Open the
file in https://ui.perfetto.dev.

>>> from pevpm.trace.events import Call, Send, Trace
>>> calls = (Call("MPI_Init", 0.0, 1.0), Call("MPI_Send", 1.5, 1.75, (Send(0, 0, 8),)),
...          Call("MPI_Finalize", 2.0, 2.1))
>>> [(s.kind, s.label, s.start, s.end) for s in recorded_slices(Trace((calls,)))]
[('compute', 'computation', 0.0, 0.5), ('communication', 'MPI_Send', 0.5, 0.75), \
('compute', 'computation', 0.75, 1.0)]
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pevpm.errors import PevpmError
from pevpm.report.trace import rank_track, slice_event, trace_document
from pevpm.trace.events import Trace
from pevpm.vm.kernel.result import COMMUNICATION, COMPUTE, RunResult, Slice

RECORDED_PID, PREDICTED_PID = 1, 2

#: The collective a simulated step belongs to, in its slice's ``where``
#: (``model: statement 2 (MPI_Barrier): MPI_Sendrecv``).
_COLLECTIVE_STEP = re.compile(r"\((MPI_[A-Za-z_]+)\)(?: in [^:]*)?: [A-Za-z_]+$")


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


def collective_of(event: dict) -> str | None:
    """The collective a predicted slice event is a step of, or None.

    >>> collective_of({"name": "MPI_Sendrecv",
    ...                "args": {"where": "model: statement 2 (MPI_Barrier): MPI_Sendrecv"}})
    'MPI_Barrier'
    >>> collective_of({"name": "MPI_Send", "args": {"where": "model: statement 1 (MPI_Send)"}})
    """
    found = _COLLECTIVE_STEP.search(event.get("args", {}).get("where", ""))
    return found.group(1) if found else None


def _name_collective_steps(events: list[dict]) -> None:
    for event in events:
        collective = event["ph"] == "X" and collective_of(event)
        if collective:
            event["args"]["step"], event["name"] = event["name"], collective


def side_by_side_document(trace: Trace, predicted: RunResult, title: str,
                          predicted_title: str | None = None) -> dict:
    """The trace-event JSON with the recorded run (group 1, ``recorded: title``) above
    the prediction (group 2, ``predicted: predicted_title``, by default ``title``)."""
    events: list[dict] = [{"name": "process_name", "ph": "M", "pid": RECORDED_PID,
                           "args": {"name": f"recorded: {title}"}},
                          {"name": "process_sort_index", "ph": "M", "pid": RECORDED_PID,
                           "args": {"sort_index": 0}}]
    for rank in range(trace.numprocs):
        events += rank_track(RECORDED_PID, rank)
    events += [slice_event(s, RECORDED_PID) for s in recorded_slices(trace)]
    doc = trace_document(predicted, f"predicted: {predicted_title or title}",
                         pid=PREDICTED_PID)
    _name_collective_steps(doc["traceEvents"])
    doc["traceEvents"] = events + doc["traceEvents"] + [
        {"name": "process_sort_index", "ph": "M", "pid": PREDICTED_PID,
         "args": {"sort_index": 1}}]
    doc["otherData"]["recorded_seconds"] = trace.elapsed
    return doc


def write_side_by_side(trace: Trace, predicted: RunResult, path: str | Path,
                       title: str, predicted_title: str | None = None) -> Path:
    """Write :func:`side_by_side_document` to ``path`` (JSON) and return the path."""
    path = Path(path)
    document = side_by_side_document(trace, predicted, title, predicted_title)
    try:
        path.write_text(json.dumps(document))
    except OSError as exc:
        raise PevpmError(f"cannot write trace: {exc.strerror}", where=str(path)) from exc
    return path
