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

from pathlib import Path

import _otf2
import otf2
from otf2.enums import GroupType, Paradigm

from pevpm.errors import PevpmError
from pevpm.trace.events import (
    CORES_PROPERTY,
    CPU_ATTRIBUTE,
    Call,
    Collective,
    Posted,
    Recv,
    Send,
    SendDone,
    Trace,
)
from pevpm.trace.otf2_events import events

ARCHIVE_NAME = "traces.otf2"


def anchor_file(path: Path) -> Path:
    """The ``.otf2`` anchor file of ``path`` (the file itself or a directory holding one)."""
    path = Path(path)
    if path.is_dir():
        found = sorted(path.glob("*.otf2"))
        if not found:
            raise PevpmError("no OTF2 archive (*.otf2) in this directory", str(path))
        path = found[0]
    if not path.is_file():
        raise PevpmError("no such trace", str(path))
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

    __slots__ = ("cpu", "events", "name", "start")

    def __init__(self, name: str, start: float, cpu: float | None = None):
        self.name, self.start, self.cpu, self.events = name, start, cpu, []


def read_archive(path: Path) -> Trace:
    """Every rank's MPI calls in the archive at ``path``."""
    anchor = anchor_file(path)
    try:
        with otf2.reader.open(str(anchor)) as trace:
            return _read(trace)
    except (_otf2.ErrorCodes.Error, otf2.error.Error) as exc:
        raise PevpmError(f"not a readable OTF2 archive ({exc})", str(anchor)) from None


def _read(trace) -> Trace:
    defs = trace.definitions
    clock = defs.clock_properties
    scale = 1.0 / clock.timer_resolution
    zero = clock.global_offset
    locations = _rank_order(defs)
    rank_of = {loc: r for r, loc in enumerate(locations)}
    calls: list[list[Call]] = [[] for _ in locations]
    open_calls: dict[int, list] = {r: [] for r in range(len(locations))}

    def world(comm, rank_in_comm: int) -> int:
        return rank_of[comm.group.members[rank_in_comm]]

    for location, event in events(trace):     # otf2_events: several times faster
        if location not in rank_of:
            continue
        r = rank_of[location]
        stack = open_calls[r]
        kind = type(event).__name__
        t = (event.time - zero) * scale
        if kind == "Enter":
            cpu = next((v for a, v in (event.attributes or {}).items()
                        if a.name == CPU_ATTRIBUTE), None)
            stack.append(_Open(event.region.name, t, cpu))
            continue
        if kind == "Leave":
            if not stack:
                raise PevpmError(f"rank {r}: Leave of {event.region.name} without Enter",
                                 "trace")
            top = stack.pop()
            if top.name.startswith("MPI_") and not any(o.name.startswith("MPI_") for o in stack):
                calls[r].append(Call(top.name, top.start, t, tuple(top.events), top.cpu))
            continue
        mpi = next((o for o in stack if o.name.startswith("MPI_")), None)
        if mpi is None:
            continue
        item = _event(kind, event, world, rank_of)
        if item is not None:
            mpi.events.append(item)
    cores = [p.value for p in defs.system_tree_node_properties if p.name == CORES_PROPERTY]
    return Trace(tuple(tuple(c) for c in calls), int(cores[0]) if len(cores) == 1 else None)


def _event(kind, event, world, rank_of):
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
        members = tuple(rank_of[loc] for loc in comm.group.members)
        root = (None if event.root == otf2.Undefined.UINT32 or event.root >= len(members)
                else members[event.root])
        return Collective(str(event.collective_op).rpartition(".")[2], members, root, event.size_sent,
                          event.size_received)
    return None  # MpiCollectiveBegin, MpiRequestTest and others add nothing
