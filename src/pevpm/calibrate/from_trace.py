"""The computation between MPI calls, taken from a ``pevpm trace`` archive.

A traced run needs no region marks: every gap between the end of one MPI
call and the start of the next is computation.  :func:`trace_segments`
names each gap by the calls around it, ``BEFORE_to_AFTER``, with each call
labelled by :func:`call_label` (its function without ``MPI_``, and the tag of
its point-to-point messages when they share one, because a trace records
no source line and the tag is what usually tells two call sites of one
function apart), and pools the gaps of every rank and every repetition
under that name.  :func:`calibration_from_trace` summarises them robustly
into the calibration file ``pevpm predict --calibration`` reads, the
parameters named ``t_Sendrecv_tag1_to_Allreduce`` and so on.

>>> from pevpm.trace.events import Call, Recv, Trace
>>> calls = (Call("MPI_Init", 0.0, 1.0), Call("MPI_Recv", 1.5, 1.6, (Recv(1, 7, 8),)),
...          Call("MPI_Allreduce", 2.1, 2.2), Call("MPI_Finalize", 2.4, 2.5))
>>> segments = trace_segments(Trace((calls,)))
>>> {name: [round(t, 3) for t in times] for name, times in segments.items()}
{'Init_to_Recv_tag7': [0.5], 'Recv_tag7_to_Allreduce': [0.5], 'Allreduce_to_Finalize': [0.2]}
"""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

from pevpm.calibrate.parameters import Calibration
from pevpm.errors import PevpmError
from pevpm.trace.events import Recv, Send, Trace
from pevpm.trace.otf2.read import read_archive

#: Below this share of their computation time on a core (of the share their own
#: number of cores gives them), the traced ranks were held off their cores by other
#: processes, and the calibration says so.
BUSY_CPU_SHARE = 0.9

#: More segments than this are named without tags (as many as the region library keeps).
MAX_SEGMENTS = 64

_NOT_IN_A_NAME = re.compile(r"[^A-Za-z0-9_]+")


def call_label(call, tags: bool = True) -> str:
    """A call's part of a segment name: the MPI function without its ``MPI_``
    prefix, with ``_tagN`` when ``tags`` and the messages sent and received in it
    share one tag (``m`` for a negative tag; a call that moves no message, to
    ``MPI_PROC_NULL``, has none).

    >>> from pevpm.trace.events import Call, Send
    >>> call_label(Call("MPI_Isend", 0, 0, (Send(1, 3, 64, request=1),)))
    'Isend_tag3'
    >>> call_label(Call("MPI_Barrier", 0, 0))
    'Barrier'
    """
    name = _NOT_IN_A_NAME.sub("_", call.name.removeprefix("MPI_")).strip("_") or "call"
    used = {event.tag for event in call.events if isinstance(event, Send | Recv)} if tags else ()
    if len(used) == 1:
        tag = used.pop()
        name += f"_tag{tag}" if tag >= 0 else f"_tagm{-tag}"
    return name


def trace_segments(trace: Trace, tags: bool = True) -> dict[str, list[float]]:
    """Every rank's gaps between consecutive MPI calls (seconds), from the end of
    ``MPI_Init`` to the start of ``MPI_Finalize``, pooled by :func:`call_label`
    names ``BEFORE_to_AFTER`` in the order each name first occurs."""
    segments: dict[str, list[float]] = {}
    for calls in trace.ranks:
        for before, after in pairwise(calls):
            if after.is_init:
                continue
            name = f"{call_label(before, tags)}_to_{call_label(after, tags)}"
            segments.setdefault(name, []).append(max(after.start - before.end, 0.0))
    return segments


def cpu_share(trace: Trace) -> float | None:
    """The CPU seconds the ranks used between their calls over the wall seconds
    those gaps lasted (less slept time), or None when the trace has no CPU times
    (Score-P's) or no computation.

    >>> from pevpm.trace.events import Call, Trace
    >>> calls = (Call("MPI_Init", 0.0, 1.0), Call("MPI_Barrier", 3.0, 3.5, cpu=1.0))
    >>> cpu_share(Trace((calls,)))
    0.5
    """
    if not trace.has_cpu:
        return None
    used = wall = 0.0
    for calls in trace.ranks:
        for before, after in pairwise(calls):
            if not after.is_init:
                used += after.cpu
                wall += max(after.start - before.end - after.slept, 0.0)
    return used / wall if wall > 0 else None


#: The note for a trace without the ranks' CPU times.
NO_CPU_NOTE = ("the trace holds no CPU times of the ranks (pevpm trace records them where "
               "ranks outnumber cores, or with PEVPM_TRACE_CPU=1), so whether other processes "
               "held the ranks off their cores is not known")


def calibration_from_trace(path: str | Path, prefix: str = "t_") -> tuple[Calibration, list[str]]:
    """The calibration of the archive at ``path`` (a ``pevpm trace`` folder or an
    ``.otf2`` anchor): each segment of :func:`trace_segments` as a region, with
    ``disturbed`` saying why the times may be too long (the ranks shared their
    cores with each other or were held off them), and notes on what the trace
    cannot tell.  A damaged archive, or one with no computation between calls,
    is a :class:`~pevpm.errors.PevpmError`.

    >>> calibration_from_trace("/no/such/run")
    Traceback (most recent call last):
    ...
    pevpm.errors.PevpmError: /no/such/run: no such trace
    """
    trace = read_archive(Path(path))
    segments, notes = trace_segments(trace), []
    if len(segments) > MAX_SEGMENTS:
        notes.append(f"more than {MAX_SEGMENTS} segments named with their calls' tags (tags "
                     "that change from call to call): named without tags")
        segments = trace_segments(trace, tags=False)
    if not segments:
        raise PevpmError("the trace has no computation between MPI calls (fewer than two "
                         "calls per rank)", str(path))
    why = []
    if trace.oversubscribed:
        why.append(f"running {trace.numprocs} ranks on {trace.cores} cores")
    share = cpu_share(trace)
    own = min(1.0, trace.cores / trace.numprocs) if trace.cores else 1.0  # cores shared out
    if share is not None and share < BUSY_CPU_SHARE * own:
        why.append(f"busy: the ranks had a core for {share:.0%} of their computation time"
                   + (f", where sharing {trace.cores} cores among themselves gives {own:.0%}"
                      if own < 1 else ""))
    calibration = Calibration.from_region_times(segments, f"trace {path}", prefix,
                                                disturbed="; ".join(why) or None)
    return calibration, notes if trace.has_cpu else [*notes, NO_CPU_NOTE]
