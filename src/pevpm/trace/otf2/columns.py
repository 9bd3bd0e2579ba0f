"""An OTF2 archive's calls read in C (:mod:`pevpm.trace.otf2.fastread`), then made a Trace.

:func:`read_columns` gives the :class:`~pevpm.trace.events.Trace` that
:func:`pevpm.trace.otf2.read.read_archive`'s reference reader gives, call
for call, with no Python object per OTF2 record: the library calls C
functions that keep each rank's Enter/Leave stack and write the calls and
their MPI records into arrays; typed loops then put the calls in rank order
and their records after them, turn times into seconds and peers into world
ranks (:func:`~pevpm.trace.otf2.fastread.table_columns`), and one object is
made per call and per event.
Where the archive holds something the reference reader reports (a Leave
without its Enter, an attribute that is not a number of seconds, a peer
outside its communicator, a reference to no definition...) or reads its own
way (regions nested under another name, attributes other than numbers),
:func:`read_columns` returns None and the reference reader
runs, so errors read the same.  :data:`UNAVAILABLE` says why the C reader
cannot be used at all (then the reference reader runs and ``pevpm replay``
says so).

    with otf2.reader.open("run/traces.otf2") as reader:
        trace = read_columns(reader)    # None: read it with the reference reader
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import numpy as np
from _otf2.Config import conf
from otf2.enums import CollectiveOp

from pevpm.trace.events import (
    ANY_SOURCE_ATTRIBUTE,
    CPU_ATTRIBUTE,
    SLEEP_ATTRIBUTE,
    Call,
    Collective,
    Posted,
    Recv,
    Send,
    SendDone,
)
from pevpm.trace.table import CallTable

try:
    from pevpm.trace.otf2 import fastread
except ImportError as exc:          # not built: the reference reader reads every archive
    fastread = None
    UNAVAILABLE: str | None = (f"the compiled OTF2 reader is not built ({exc}); reading "
                               "with the otf2 package's Python reader (slower)")
else:
    UNAVAILABLE = None

#: The library's functions the C reader calls, found by name in the ``otf2`` package's library.
FUNCTIONS = ("OTF2_AttributeList_GetNumberOfElements", "OTF2_AttributeList_GetAttributeByIndex",
             "OTF2_GlobalEvtReaderCallbacks_New", "OTF2_GlobalEvtReaderCallbacks_Delete",
             "OTF2_GlobalEvtReader_SetCallbacks", "OTF2_GlobalEvtReader_ReadEvents",
             *(f"OTF2_GlobalEvtReaderCallbacks_Set{name}Callback" for name in (
                 "Enter", "Leave", "MpiSend", "MpiIsend", "MpiIsendComplete",
                 "MpiIrecvRequest", "MpiRecv", "MpiIrecv", "MpiCollectiveEnd")))
NO_REF = 2**32 - 1      # OTF2's undefined 32-bit reference (no such attribute, no root)
#: Region references the C reader's table covers (one byte each); beyond, the reference reads.
MAX_REGION_REF = 1 << 24

#: OTF2's collective operation codes and their names (as ``Collective.op`` holds them).
COLLECTIVE_NAMES = {int(getattr(CollectiveOp, name).value): name
                    for name in dir(CollectiveOp) if name.isupper()}


def read_table(reader, locations: list) -> CallTable | None:
    """:func:`read_columns`' arrays, without the calls; None where the reference
    reader must read the archive."""
    if fastread is None:
        return None
    try:
        return _Columns(reader, locations).table()
    except (_Unusual, fastread.Unusual, KeyError, IndexError):
        return None


def record_arrays(reader, locations: list) -> tuple[np.ndarray, np.ndarray]:
    """The C reader's arrays alone (:data:`~pevpm.trace.otf2.fastread.CALL` and
    :data:`~pevpm.trace.otf2.fastread.EVENT` records, refs not yet translated),
    for timing the read without the objects; raises where :func:`read_columns`
    gives None."""
    if fastread is None:
        raise RuntimeError(UNAVAILABLE)
    return _Columns(reader, locations).records()


class _Unusual(Exception):
    """The reference reader must read (or report) this archive."""


def read_columns(reader, locations: list) -> tuple[tuple[Call, ...], ...] | None:
    """Every rank's calls (ranks are ``locations``, the archive's locations in rank
    order) from ``reader`` (an open ``otf2.reader.Reader`` whose events are not
    read yet), as the reference reader gives them; None where it must read them."""
    if fastread is None:
        return None
    try:
        return _Columns(reader, locations).calls()
    except (_Unusual, fastread.Unusual, KeyError, IndexError):  # a definition not there
        return None


class _Columns:
    """One archive's definitions as the C reader needs them, and its arrays made calls."""

    def __init__(self, reader, locations: list):
        self.reader, self.defs = reader, reader.definitions
        clock = self.defs.clock_properties
        self.scale, self.zero = 1.0 / clock.timer_resolution, clock.global_offset
        self.locations = locations
        self.rank_of = {loc: r for r, loc in enumerate(locations)}
        self.region_names = {region._ref: region.name for region in self.defs.regions}

    def attribute_refs(self) -> tuple[int, int, int]:
        refs = []
        for name in (CPU_ATTRIBUTE, SLEEP_ATTRIBUTE, ANY_SOURCE_ATTRIBUTE):
            found = [a._ref for a in self.defs.attributes if a.name == name]
            if len(found) > 1:
                raise _Unusual(f"{len(found)} attributes named {name}")
            refs.append(found[0] if found else NO_REF)
        return tuple(refs)

    def records(self) -> tuple[np.ndarray, np.ndarray]:
        functions = {name: ctypes.cast(getattr(conf.lib, name), ctypes.c_void_p).value
                     for name in FUNCTIONS}
        refs = np.array([loc._ref for loc in self.locations], dtype=np.uint64)
        order = np.argsort(refs, kind="stable")
        if len(np.unique(refs)) != len(refs):
            raise _Unusual("two ranks on one location")
        size = max(self.region_names, default=-1) + 1
        if size > MAX_REGION_REF:
            raise _Unusual(f"region references up to {size}")
        mpi = np.zeros(size, dtype=np.uint8)
        for ref, name in self.region_names.items():
            mpi[ref] = name.startswith("MPI_")
        handle = ctypes.cast(self.reader._get_global_evt_reader_handle(None),
                             ctypes.c_void_p).value
        if not handle:                  # no events to read: the reference reader says why
            raise _Unusual("no global event reader")
        return fastread.read_records(functions, handle, refs[order], order.astype(np.intc),
                                     mpi, self.attribute_refs())

    def world(self, comm_ref: int) -> np.ndarray:
        """World rank of each member of communicator ``comm_ref``."""
        members = self.defs.comms[comm_ref].group.members
        ranks = [self.rank_of.get(m) for m in members]
        if None in ranks:
            raise _Unusual(f"a member of communicator {comm_ref} is no rank")
        return np.array(ranks, dtype=np.int64)

    def table(self) -> CallTable:
        """The archive's calls as a :class:`CallTable` (made in C from the reader's arrays)."""
        calls, events = self.records()
        # every event's peer, those of calls never left too: a peer outside its
        # communicator anywhere sends the archive to the reference reader, which names it
        comms = fastread.communicators(events)
        worlds = [self.world(comm) for comm in comms.tolist()]
        starts = np.concatenate([[0], np.cumsum([len(w) for w in worlds])]).astype(np.int64)
        flat = np.concatenate(worlds + [np.zeros(0, dtype=np.int64)]).astype(np.int64)
        columns = fastread.table_columns(calls, events, len(self.locations), comms, starts,
                                         flat, self.zero, self.scale)
        del calls, events
        names = [self.region_names.get(ref, "") for ref in range(max(self.region_names,
                                                                       default=-1) + 1)]
        return CallTable(numprocs=len(self.locations), names=names,
                         members={comm: tuple(w.tolist()) for comm, w in zip(comms.tolist(),
                                                                             worlds)},
                         operations=COLLECTIVE_NAMES, **columns)

    def calls(self) -> tuple[tuple[Call, ...], ...]:
        t = self.table()
        names = [t.names[ref] for ref in t.region.tolist()]
        starts, ends = t.start.tolist(), t.end.tolist()
        cpus = [None if c != c else c for c in t.cpu.tolist()]
        asked = [None if a < 0 else bool(a) for a in t.any_source.tolist()]
        build = self.builders(t.members)
        items = [build[kind](comm, peer, tag, size, request, root) for
                 kind, comm, peer, tag, size, request, root in zip(
                     t.kind.tolist(), t.comm.tolist(), t.peer.tolist(), t.tag.tolist(),
                     t.size.tolist(), t.request.tolist(), t.root.tolist())]
        bounds = t.event_starts.tolist()
        slept = t.slept.tolist()
        out = []
        for rank in range(t.numprocs):
            out.append(tuple(Call(names[k], starts[k], ends[k],
                                  tuple(items[bounds[k]:bounds[k + 1]]), cpus[k], slept[k],
                                  asked[k])
                             for k in range(t.rank_starts[rank], t.rank_starts[rank + 1])))
        return tuple(out)

    def builders(self, members: dict[int, tuple]) -> list[Callable]:
        """Per event kind, ``f(comm, world peer, tag, size, request, root) -> event``."""
        def collective(comm, _peer, op, sent, received, root):
            name = COLLECTIVE_NAMES.get(op)
            if name is None:
                raise _Unusual(f"collective operation {op}")
            ranks = members[comm]
            return Collective(name, ranks, None if root >= len(ranks) else ranks[root],
                              sent, received)
        return [lambda comm, peer, tag, size, request, root: Send(peer, tag, size),
                lambda comm, peer, tag, size, request, root: Send(peer, tag, size, request),
                lambda comm, peer, tag, size, request, root: SendDone(request),
                lambda comm, peer, tag, size, request, root: Posted(request),
                lambda comm, peer, tag, size, request, root: Recv(peer, tag, size),
                lambda comm, peer, tag, size, request, root: Recv(peer, tag, size, request),
                collective]
