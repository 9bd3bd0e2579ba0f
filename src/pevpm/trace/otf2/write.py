"""Write the tracer's raw records as an OTF2 archive (Score-P's conventions).

One location per rank (location group ``MPI Rank R``); every call is an
Enter/Leave of a region named after the MPI function; inside it the MPI
records: ``MpiSend`` at the start of a send, ``MpiRecv`` at the end of a
receive, ``MpiIsend``/``MpiIrecvRequest`` when a non-blocking call is
posted, ``MpiIsendComplete``/``MpiIrecv`` in the Wait or Test that
completed it, ``MpiRequestTest`` for an unsuccessful test,
``MpiCollectiveBegin``/``MpiCollectiveEnd`` around collectives (sizes are
the rank's totals, see :data:`pevpm.trace.events.COLLECTIVE_SIZES`), and
communicator creation as a ``CREATE_HANDLE`` collective on the parent,
and a Cartesian communicator's grid as a ``CartTopology`` definition.
Peers in the records are ranks of the record's communicator, as OTF2
requires.  Time stamps are nanoseconds from the earliest record, after
each rank's clock offset is added.

    write_archive(read_raw(Path("run/raw")), Path("run"))   # -> run/traces.otf2
"""

from __future__ import annotations

from pathlib import Path

import otf2
from otf2.enums import (
    CartPeriodicity,
    CollectiveOp,
    GroupType,
    LocationGroupType,
    Paradigm,
    RegionRole,
    Type,
)

from pevpm.trace.events import (
    ANY_SOURCE_ATTRIBUTE,
    CORES_PROPERTY,
    CPU_ATTRIBUTE,
    SLEEP_ATTRIBUTE,
    totals,
)
from pevpm.trace.raw import RawRank

ARCHIVE = "traces"
TICKS_PER_SECOND = 10**9

BLOCKING_SENDS = {"SEND", "SSEND", "BSEND", "RSEND"}
NONBLOCKING_SENDS = {"ISEND", "ISSEND"}
COMPLETIONS = {"WAIT", "WAITALL", "WAITANY", "WAITSOME", "TEST", "TESTALL", "TESTANY",
               "TESTSOME"}
CREATIONS = {"COMM_DUP", "COMM_SPLIT", "COMM_CREATE", "CART_CREATE", "CART_SUB"}
NO_PEER = -1
#: Receives whose Enter says whether they asked for MPI_ANY_SOURCE.
RECEIVES = {"RECV", "IRECV", "MRECV", "IMRECV"}
#: The tracer's code for MPI_ANY_SOURCE as a requested source.
TRACED_ANY_SOURCE = -2


def function_name(op: str) -> str:
    """The MPI function of a tracer op code name.

    >>> function_name("SENDRECV_REPLACE"), function_name("CART_CREATE")
    ('MPI_Sendrecv_replace', 'MPI_Cart_create')
    """
    return "MPI_" + op.capitalize()


def comm_keys(rank: RawRank) -> dict[int, tuple]:
    """A key per communicator of ``rank`` that every member rank computes alike:
    the members and how many communicators with the same members this rank
    created before it (creation is collective, so the order agrees)."""
    seen: dict[tuple[int, ...], int] = {}
    keys = {}
    for cid in sorted(rank.comms):
        members = rank.comms[cid]
        keys[cid] = (members, seen.get(members, 0))
        seen[members] = seen.get(members, 0) + 1
    return keys


class _ArchiveWriter:
    def __init__(self, trace, ranks: list[RawRank], cores: int | None):
        self.trace = trace
        self.defs = trace.definitions
        self.ranks = ranks
        self.origin = min((r.records["t0"].min() + r.offset for r in ranks if len(r.records)),
                          default=0.0)
        node = self.defs.system_tree_node("machine")
        if cores is not None:
            self.defs.system_tree_node_property(node, CORES_PROPERTY, value=int(cores))
        self.writers = []
        locations = []
        for r in ranks:
            group = self.defs.location_group(f"MPI Rank {r.rank}",
                                             location_group_type=LocationGroupType.PROCESS,
                                             system_tree_parent=node)
            location = self.defs.location("Master thread", group=group)
            self.writers.append(trace.event_writer_from_location(location))
            locations.append(location)
        self.defs.group("MPI locations", group_type=GroupType.COMM_LOCATIONS,
                        paradigm=Paradigm.MPI, members=locations)
        self.comms: dict[tuple, object] = {}
        self.regions: dict[str, object] = {}
        self.cpu = self.defs.attribute(CPU_ATTRIBUTE, "CPU seconds of the calling thread "
                                       "from the end of its previous MPI call", Type.DOUBLE)
        self.slept = self.defs.attribute(SLEEP_ATTRIBUTE, "seconds the calling thread slept "
                                         "since the end of its previous MPI call", Type.DOUBLE)
        self.any_source = self.defs.attribute(ANY_SOURCE_ATTRIBUTE, "1 when the receive asked "
                                              "for MPI_ANY_SOURCE, 0 when for one rank",
                                              Type.UINT8)
        self.topologies: set[tuple] = set()

    def grids(self, rank: RawRank) -> None:
        """A ``CartTopology`` definition for each Cartesian communicator of ``rank``
        not defined yet (every member records the same grid)."""
        keys = comm_keys(rank)
        for cid, (dims, periodic) in sorted(rank.grids.items()):
            if keys[cid] in self.topologies:
                continue
            self.topologies.add(keys[cid])
            name = f"grid {len(self.topologies)}"
            dimensions = [self.defs.cart_dimension(
                f"{name} dimension {d}", size, CartPeriodicity.TRUE if cyclic
                else CartPeriodicity.FALSE) for d, (size, cyclic) in enumerate(zip(dims, periodic))]
            self.defs.cart_topology(name, self.comm(keys[cid]), tuple(dimensions))

    def comm(self, key: tuple):
        if key not in self.comms:
            members, index = key
            name = ("MPI_COMM_WORLD" if key == (tuple(range(len(self.ranks))), 0)
                    else f"MPI_COMM_SELF {members[0]}" if len(members) == 1 and index == 0
                    else f"communicator {len(self.comms)}")
            group = self.defs.group(f"group of {name}", group_type=GroupType.COMM_GROUP,
                                    paradigm=Paradigm.MPI, members=list(members))
            self.comms[key] = self.defs.comm(name, group=group)
        return self.comms[key]

    def region(self, op: str):
        if op not in self.regions:
            role = (RegionRole.COLL_ONE2ALL if op in ("BCAST", "SCATTER", "SCATTERV")
                    else RegionRole.BARRIER if op == "BARRIER"
                    else RegionRole.POINT2POINT)
            self.regions[op] = self.defs.region(function_name(op), paradigm=Paradigm.MPI,
                                                region_role=role)
        return self.regions[op]

    def write_rank(self, rank: RawRank) -> None:
        w = self.writers[rank.rank]
        keys = comm_keys(rank)
        names = rank.ops
        records = rank.records
        ticks = ((records["t0"] + rank.offset - self.origin) * TICKS_PER_SECOND).round()
        ends = ((records["t1"] + rank.offset - self.origin) * TICKS_PER_SECOND).round()
        ticks, ends = ticks.astype("int64").tolist(), ends.astype("int64").tolist()
        is_send: dict[int, bool] = {}
        complete = names.index("COMPLETE")
        last = 0
        i, n = 0, len(records)
        while i < n:
            rec = records[i]
            op = names[rec["op"]]
            t0, t1 = max(ticks[i], last), max(ends[i], ticks[i], last)
            j = i + 1
            while j < n and records[j]["op"] == complete:
                j += 1
            comm = self.comm(keys[int(rec["comm"])]) if rec["comm"] >= 0 else None
            members = keys[int(rec["comm"])][0] if rec["comm"] >= 0 else ()
            region = self.region(op)
            w.enter(t0, region, attributes=self.enter_attributes(op, rec))
            self._events(w, op, rec, records[i + 1:j], comm, members, keys, is_send, t0, t1)
            w.leave(t1, region)
            last = t1
            i = j

    def enter_attributes(self, op: str, rec) -> dict | None:
        """The Enter event's attributes: the gap's CPU seconds (when recorded: >= 0),
        the seconds slept in it (when any), and of a receive whether it asked for
        ``MPI_ANY_SOURCE`` (the records hold only the rank it matched)."""
        cpu, slept = float(rec["cpu"]), float(rec["sleep"])
        attributes = {self.cpu: cpu} if cpu >= 0 else {}
        if slept > 0:
            attributes[self.slept] = slept
        if op in RECEIVES:
            attributes[self.any_source] = int(rec["peer2"] == TRACED_ANY_SOURCE)
        return attributes or None

    def _events(self, w, op, rec, completions, comm, members, keys, is_send, t0, t1) -> None:
        def local(world: int) -> int:
            return members.index(world)

        peer, tag, req = int(rec["peer"]), int(rec["tag"]), int(rec["req"])
        if op in BLOCKING_SENDS and peer >= 0:
            w.mpi_send(t0, local(peer), comm, tag, int(rec["bytes"]))
        elif op in NONBLOCKING_SENDS:
            is_send[req] = True
            if peer >= 0:
                w.mpi_isend(t0, local(peer), comm, tag, int(rec["bytes"]), req)
        elif op in ("IRECV", "IMRECV"):
            is_send[req] = False
            w.mpi_irecv_request(t0, req)
        elif op in ("RECV", "MRECV") and peer >= 0:
            w.mpi_recv(t1, local(peer), comm, tag, int(rec["rbytes"]))
        elif op in ("SENDRECV", "SENDRECV_REPLACE"):
            if peer >= 0:
                w.mpi_send(t0, local(peer), comm, tag, int(rec["bytes"]))
            if rec["peer2"] >= 0:
                w.mpi_recv(t1, local(int(rec["peer2"])), comm, int(rec["tag2"]),
                           int(rec["rbytes"]))
        elif op in COMPLETIONS:
            for c in completions:
                creq = int(c["req"])
                if is_send.pop(creq, True):
                    w.mpi_isend_complete(t1, creq)
                elif c["peer"] >= 0:
                    cmembers = keys[int(c["comm"])][0]
                    w.mpi_irecv(t1, cmembers.index(int(c["peer"])), self.comm(keys[int(c["comm"])]),
                                int(c["tag"]), int(c["rbytes"]), creq)
            if op == "TEST" and not rec["aux"] and rec["tag2"] > 0:
                w.mpi_request_test(t1, int(rec["tag2"]))
        elif op in CREATIONS or hasattr(CollectiveOp, op):
            coll = "CREATE_HANDLE" if op in CREATIONS else op
            root = local(peer) if peer >= 0 else otf2.Undefined.UINT32
            is_root = peer >= 0 and peer == self._world_rank(w)
            size = int(rec["bytes"]) or int(rec["rbytes"])  # bytes per peer
            sent, received = totals(coll, size, len(members), is_root)
            w.mpi_collective_begin(t0)
            w.mpi_collective_end(t1, getattr(CollectiveOp, coll), comm, root, sent, received)

    def _world_rank(self, writer) -> int:
        return self.writers.index(writer)


def write_archive(ranks: list[RawRank], directory: Path, cores: int | None = None) -> Path:
    """Write ``ranks`` as ``directory/traces.otf2``; returns the anchor file's path.
    ``cores``: the cores the ranks ran on (one host), kept as the system tree
    node's ``pevpm::cores`` property."""
    directory = Path(directory)
    with otf2.writer.open(str(directory), archive_name=ARCHIVE,
                          timer_resolution=TICKS_PER_SECOND) as trace:
        archive = _ArchiveWriter(trace, ranks, cores)
        for rank in ranks:
            archive.grids(rank)
            archive.write_rank(rank)
    return directory / f"{ARCHIVE}.otf2"
