"""Read an OTF2 archive (``pevpm trace``'s or Score-P's) into a :class:`Trace`.

Ranks are the locations in the order of the archive's MPI ``COMM_LOCATIONS``
group (Score-P's rank order), or in definition order when there is none.
Every top-level Enter/Leave of a region whose name starts with ``MPI_`` is
a :class:`Call`; the MPI records between them become its events, with
peers translated from communicator ranks to world ranks.  Other regions
(user functions) are computation and are skipped.

    trace = read_archive(Path("run/traces.otf2"))
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import _otf2
import otf2
from _otf2.Config import conf
from otf2.enums import CartPeriodicity, GroupType, Paradigm

from pevpm.errors import PevpmError
from pevpm.files import check_regular
from pevpm.trace.events import (
    ANY_SOURCE_ATTRIBUTE,
    CORES_PROPERTY,
    CPU_ATTRIBUTE,
    SLEEP_ATTRIBUTE,
    Call,
    Collective,
    Grid,
    Posted,
    Recv,
    Send,
    SendDone,
    Trace,
)
from pevpm.trace.otf2.callbacks import events
from pevpm.trace.otf2.columns import CallTable, read_columns
from pevpm.trace.otf2.columns import read_table as read_table_columns

ARCHIVE_NAME = "traces.otf2"


def anchor_file(path: Path) -> Path:
    """The ``.otf2`` anchor file of ``path`` (the file itself or a directory holding one)."""
    path = Path(path)
    if path.is_dir():
        found = sorted(path.glob("*.otf2"))
        if not found:
            raise PevpmError("no OTF2 archive (*.otf2) in this directory", str(path))
        path = found[0]
    check_regular(path, "trace (a directory or an .otf2 file)")
    if not path.is_file():
        raise PevpmError("no such trace", str(path))
    for part in (path.with_suffix(".def"), *sorted(path.with_suffix("").rglob("*"))):
        if not part.is_dir():
            check_regular(part, "trace file")  # a FIFO would block the OTF2 library forever
    with open(path, "rb") as f:
        if b"OTF2" not in f.read(16):
            raise PevpmError("not an OTF2 anchor file", str(path))
    return path


def _rank_order(definitions) -> list:
    for group in definitions.groups:
        if group.group_type == GroupType.COMM_LOCATIONS and group.paradigm == Paradigm.MPI:
            return list(group.members)
    return list(definitions.locations)


class _Open:
    """A call being read: its region, start, CPU seconds before it and events so far."""

    __slots__ = ("any_source", "cpu", "events", "name", "slept", "start")

    def __init__(self, name: str, start: float, cpu: float | None = None, slept: float = 0.0,
                 any_source: bool | None = None):
        self.name, self.start, self.cpu, self.slept, self.events = name, start, cpu, slept, []
        self.any_source = any_source


#: OTF2's error callback: ``(user data, file, line, function, code, format, va_list)``.
_ErrorCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p,
                                  ctypes.c_uint64, ctypes.c_char_p, ctypes.c_int,
                                  ctypes.c_char_p, ctypes.c_void_p)


@_ErrorCallback
def _return_code(user_data, file, line, function, code, message, arguments):
    return code


@contextlib.contextmanager
def quiet_otf2():
    """OTF2 without its own reports on standard error: the C library's ``[OTF2] ...``
    lines (an error callback that only returns the error's code) and the Python
    binding's tracebacks of exceptions in its reader callbacks (yielded as text), which
    the error :func:`read_archive` raises replaces."""
    register = conf.lib.OTF2_Error_RegisterCallback
    register.argtypes = [_ErrorCallback, ctypes.c_void_p]
    register.restype = ctypes.c_void_p
    previous = register(_return_code, None)
    reports = io.StringIO()
    try:
        with contextlib.redirect_stderr(reports):
            yield reports
    finally:
        register(_ErrorCallback(previous) if previous else _ErrorCallback(), None)


def read_archive(path: Path, reference: bool = False) -> Trace:
    """Every rank's MPI calls in the archive at ``path``: read in C
    (:mod:`pevpm.trace.otf2.columns`) where it can be, else (and with
    ``reference``) by the ``otf2`` package's Python reader."""
    anchor = anchor_file(path)
    with quiet_otf2() as reports:
        try:
            if not reference:
                with otf2.reader.open(str(anchor)) as trace:
                    calls = read_columns(trace, _rank_order(trace.definitions))
                    if calls is not None:
                        return _trace(trace.definitions, calls, str(anchor))
            with otf2.reader.open(str(anchor)) as trace:
                return _read(trace, str(anchor))
        except (_otf2.ErrorCodes.Error, otf2.error.Error) as exc:
            cause = reports.getvalue().strip().rpartition("\n")[2] or str(exc)
            raise PevpmError(f"not a readable OTF2 archive ({cause})", str(anchor)) from None
        except (TypeError, ValueError) as exc:  # the otf2 package decoding a damaged record
            raise PevpmError(f"not a readable OTF2 archive (a record the otf2 package cannot "
                             f"decode: {exc})", str(anchor)) from None


def read_table(path: Path) -> CallTable | None:
    """The archive at ``path`` as a :class:`~pevpm.trace.otf2.columns.CallTable`
    (with its cores), read in C; None where the reference reader must read it
    (:func:`read_archive` then does, and reports what it finds)."""
    anchor = anchor_file(path)
    with quiet_otf2():
        try:
            with otf2.reader.open(str(anchor)) as trace:
                table = read_table_columns(trace, _rank_order(trace.definitions))
                if table is None:
                    return None
                return replace(table, cores=_cores(trace.definitions))
        except (_otf2.ErrorCodes.Error, otf2.error.Error, TypeError, ValueError):
            return None


def _cores(defs) -> int | None:
    """The cores the traced ranks shared, where the archive says."""
    cores = [p.value for p in defs.system_tree_node_properties if p.name == CORES_PROPERTY]
    return int(cores[0]) if len(cores) == 1 else None


def _attribute(named: dict, name: str, default, rank: int, where: str):
    """The Enter's attribute ``name``: seconds, finite and not negative."""
    value = named.get(name, default)
    if value is not None and not (isinstance(value, int | float) and math.isfinite(value)
                                  and value >= 0):
        raise PevpmError(f"rank {rank}: an Enter's {name} attribute is {value!r}, not "
                         "a finite number of seconds >= 0", where)
    return value


def _world(rank_of: dict, where: str, rank: Callable[[], int]) -> Callable:
    """``world(comm, rank in comm) -> world rank``; ``rank()``: the rank reading it."""
    def world(comm, rank_in_comm: int) -> int:
        members = comm.group.members
        if not 0 <= rank_in_comm < len(members) or members[rank_in_comm] not in rank_of:
            raise PevpmError(f"rank {rank()}: a message names rank {rank_in_comm} of "
                             f"{comm.name}, which has {len(members)} ranks", where)
        return rank_of[members[rank_in_comm]]
    return world


def _trace(defs, calls, where: str) -> Trace:
    """The trace of ``calls`` (per rank) with the archive's cores and grids."""
    rank_of = {loc: r for r, loc in enumerate(_rank_order(defs))}
    world = _world(rank_of, where, lambda: 0)
    grids = tuple(Grid(tuple(world(t.communicator, i)
                             for i in range(len(t.communicator.group.members))),
                       tuple(d.size for d in t.dimensions),
                       tuple(d.cart_periodicity == CartPeriodicity.TRUE for d in t.dimensions))
                  for t in defs.cart_topologies)
    return Trace(tuple(tuple(c) for c in calls), _cores(defs), grids)


def _read(trace, where: str) -> Trace:
    defs = trace.definitions
    clock = defs.clock_properties
    scale = 1.0 / clock.timer_resolution
    zero = clock.global_offset
    locations = _rank_order(defs)
    rank_of = {loc: r for r, loc in enumerate(locations)}
    calls: list[list[Call]] = [[] for _ in locations]
    open_calls: dict[int, list] = {r: [] for r in range(len(locations))}
    r = 0
    world = _world(rank_of, where, lambda: r)

    for location, event in events(trace):     # otf2_events: several times faster
        if location not in rank_of:
            continue
        r = rank_of[location]
        stack = open_calls[r]
        kind = type(event).__name__
        t = (event.time - zero) * scale
        if kind == "Enter":
            named = {a.name: v for a, v in (event.attributes or {}).items()}
            asked = named.get(ANY_SOURCE_ATTRIBUTE)
            stack.append(_Open(event.region.name, t,
                               _attribute(named, CPU_ATTRIBUTE, None, r, where),
                               _attribute(named, SLEEP_ATTRIBUTE, 0.0, r, where),
                               None if asked is None else bool(asked)))
            continue
        if kind == "Leave":
            if not stack:
                raise PevpmError(f"rank {r}: Leave of {event.region.name} without Enter",
                                 where)
            top = stack.pop()
            if top.name != event.region.name:
                raise PevpmError(f"rank {r}: Leave of {event.region.name} inside {top.name}",
                                 where)
            if top.name.startswith("MPI_") and not any(o.name.startswith("MPI_") for o in stack):
                calls[r].append(Call(top.name, top.start, t, tuple(top.events), top.cpu,
                                     top.slept, top.any_source))
            continue
        mpi = next((o for o in stack if o.name.startswith("MPI_")), None)
        if mpi is None:
            continue
        item = _event(kind, event, world)
        if item is not None:
            mpi.events.append(item)
    return _trace(defs, calls, where)


def _event(kind, event, world):
    if kind == "MpiSend":
        return Send(world(event.communicator, event.receiver), event.msg_tag, event.msg_length)
    if kind == "MpiIsend":
        return Send(world(event.communicator, event.receiver), event.msg_tag, event.msg_length,
                    event.request_id)
    if kind == "MpiRecv":
        return Recv(world(event.communicator, event.sender), event.msg_tag, event.msg_length)
    if kind == "MpiIrecv":
        return Recv(world(event.communicator, event.sender), event.msg_tag, event.msg_length,
                    event.request_id)
    if kind == "MpiIrecvRequest":
        return Posted(event.request_id)
    if kind == "MpiIsendComplete":
        return SendDone(event.request_id)
    if kind == "MpiCollectiveEnd":
        comm = event.communicator
        members = tuple(world(comm, i) for i in range(len(comm.group.members)))
        root = (None if event.root == otf2.Undefined.UINT32 or event.root >= len(members)
                else members[event.root])
        return Collective(str(event.collective_op).rpartition(".")[2], members, root, event.size_sent,
                          event.size_received)
    return None  # MpiCollectiveBegin, MpiRequestTest and others add nothing
