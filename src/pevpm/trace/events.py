"""A trace in memory: each rank's MPI calls with what happened inside them.

Both the tracer's archives and foreign (Score-P) OTF2 archives read into
this shape (:mod:`pevpm.trace.otf2.read`); replay reads only this.  Ranks
are ranks of ``MPI_COMM_WORLD``; times are seconds on one clock.

Inside a call, events mirror OTF2's MPI records: :class:`Send` (blocking or
non-blocking, with its request), :class:`Recv` (a completed receive: of a
blocking call, or of a non-blocking one at its Wait/Test), :class:`Posted`
(an ``MPI_Irecv`` was posted), :class:`SendDone` (an ``MPI_Isend``
completed), :class:`Collective`.

>>> c = Call("MPI_Send", 1.0, 1.5, (Send(dest=1, tag=0, size=8),))
>>> t = Trace(((Call("MPI_Init", 0.0, 0.5), c, Call("MPI_Finalize", 2.0, 2.1)),))
>>> t.numprocs, t.begin(0), t.finish(0), t.elapsed
(1, 0.5, 2.0, 1.5)
>>> per_peer_size("ALLTOALL", sent=64, received=64, numprocs=4, is_root=False)
16
"""

from __future__ import annotations

from dataclasses import dataclass

from pevpm.errors import PevpmError


@dataclass(frozen=True)
class Send:
    dest: int
    tag: int
    size: int
    request: int | None = None


@dataclass(frozen=True)
class Recv:
    source: int
    tag: int
    size: int
    request: int | None = None


@dataclass(frozen=True)
class Posted:
    request: int


@dataclass(frozen=True)
class SendDone:
    request: int


@dataclass(frozen=True)
class Collective:
    op: str                      # OTF2 collective op name: "BCAST", "ALLTOALL", ...
    members: tuple[int, ...]     # world ranks of the communicator, in its rank order
    root: int | None             # world rank of the root, if any
    sent: int                    # bytes this rank sent in total (OTF2 sizeSent)
    received: int                # bytes it received in total (OTF2 sizeReceived)


Event = Send | Recv | Posted | SendDone | Collective


#: The OTF2 attribute of an MPI call's Enter event that holds ``Call.cpu``.
CPU_ATTRIBUTE = "pevpm::cpu"
#: The OTF2 attribute of an MPI call's Enter event that holds ``Call.slept``.
SLEEP_ATTRIBUTE = "pevpm::sleep"
#: The OTF2 attribute of a receive's Enter event that holds ``Call.any_source``.
ANY_SOURCE_ATTRIBUTE = "pevpm::any_source"


@dataclass(frozen=True)
class Call:
    """One MPI call: its function name, start and end (seconds) and events;
    ``cpu``: the CPU seconds the rank used from its previous call's end to this
    call's start, when the trace has them (``pevpm trace`` records them);
    ``slept``: the seconds it slept in that gap (``sleep``, ``nanosleep``...;
    ``pevpm trace`` records them); ``any_source``: of a receive, whether it asked
    for ``MPI_ANY_SOURCE`` (its events hold the rank it matched), None where the
    trace does not say (Score-P's)."""

    name: str
    start: float
    end: float
    events: tuple[Event, ...] = ()
    cpu: float | None = None
    slept: float = 0.0
    any_source: bool | None = None

    @property
    def is_init(self) -> bool:
        return self.name in ("MPI_Init", "MPI_Init_thread")


#: The OTF2 system tree node property holding the cores the traced ranks shared.
CORES_PROPERTY = "pevpm::cores"


@dataclass(frozen=True)
class Grid:
    """A Cartesian communicator (``MPI_Cart_create``, ``MPI_Cart_sub``): its
    members (world ranks, in its rank order), dimensions and periodicity.

    >>> Grid((0, 1, 2, 3), (1, 2, 2), (True, True, True)).spans(4)
    True
    """

    members: tuple[int, ...]
    dims: tuple[int, ...]
    periodic: tuple[bool, ...]

    def spans(self, numprocs: int) -> bool:
        """Whether the grid holds every rank of the world in world order."""
        return self.members == tuple(range(numprocs))


@dataclass(frozen=True)
class Trace:
    """Every rank's calls, in program order; ``cores``: the cores the ranks ran
    on, when the trace says so (``pevpm trace`` records its host's); ``grids``:
    the Cartesian communicators the program made."""

    ranks: tuple[tuple[Call, ...], ...]
    cores: int | None = None
    grids: tuple[Grid, ...] = ()

    @property
    def oversubscribed(self) -> bool:
        """Whether the ranks outnumbered the cores they ran on.

        >>> calls = (Call("MPI_Init", 0, 0),)
        >>> Trace((calls,) * 4, cores=2).oversubscribed, Trace((calls,) * 4).oversubscribed
        (True, False)
        """
        return self.cores is not None and self.numprocs > self.cores

    @property
    def numprocs(self) -> int:
        return len(self.ranks)

    def begin(self, rank: int) -> float:
        """When the rank's program starts: the end of MPI_Init, else its first call."""
        calls = self.ranks[rank]
        inits = [c.end for c in calls if c.is_init]
        if inits:
            return inits[-1]
        if not calls:
            raise PevpmError(f"rank {rank} made no MPI calls", "trace")
        return calls[0].start

    def finish(self, rank: int) -> float:
        """When the rank's program ends: the start of MPI_Finalize, else its last call's end."""
        calls = self.ranks[rank]
        ends = [c.start for c in calls if c.name == "MPI_Finalize"]
        return ends[0] if ends else calls[-1].end

    @property
    def elapsed(self) -> float:
        """The traced run time: first program start to last program end."""
        ranks = range(self.numprocs)
        return max(self.finish(r) for r in ranks) - min(self.begin(r) for r in ranks)

    def call_count(self) -> int:
        return sum(len(calls) for calls in self.ranks)

    @property
    def has_cpu(self) -> bool:
        """Whether every call after MPI_Init says how much CPU time preceded it."""
        return all(c.cpu is not None for calls in self.ranks for c in calls if not c.is_init)

    def section(self, start: str, stop: str) -> Trace:
        """Each rank's run from the end of its first ``start`` call to the start
        of the first ``stop`` call after it (the timed part of a program that
        starts its clock after a barrier and reports with a gather: ``section(
        "MPI_Barrier", "MPI_Gather")``), as a trace of its own: MPI_Init ends
        where the section begins, MPI_Finalize starts where it ends.

        >>> calls = (Call("MPI_Init", 0, 1), Call("MPI_Barrier", 2, 3),
        ...          Call("MPI_Gather", 5, 6), Call("MPI_Finalize", 9, 9))
        >>> Trace((calls,)).section("MPI_Barrier", "MPI_Gather").elapsed
        2
        """
        ranks = []
        for r, calls in enumerate(self.ranks):
            names = [c.name for c in calls]
            if start not in names:
                raise PevpmError(f"rank {r} makes no {start} call", "the section's start")
            first = names.index(start)
            if stop not in names[first + 1:]:
                raise PevpmError(f"rank {r} makes no {stop} call after its first {start}",
                                 "the section's end")
            last = names.index(stop, first + 1)
            begin, end = calls[first].end, calls[last].start
            ranks.append((Call("MPI_Init", begin, begin), *calls[first + 1:last],
                          Call("MPI_Finalize", end, end, cpu=calls[last].cpu,
                               slept=calls[last].slept)))
        return Trace(tuple(ranks), self.cores, self.grids)


#: How OTF2's per-rank totals (sizeSent, sizeReceived) relate to the message
#: size a PEVPM collective takes (bytes per peer): for each op, the
#: multiplier of sent and received at the root and at the other ranks ("n":
#: the communicator's size) and the field the size is read back from.
COLLECTIVE_SIZES: dict[str, tuple[str, str, str, str, str]] = {
    #                      sent@root sent@other recv@root recv@other from
    "BARRIER":              ("0", "0", "0", "0", "sent"),
    "CREATE_HANDLE":        ("0", "0", "0", "0", "sent"),
    "BCAST":                ("n", "0", "1", "1", "received"),
    "REDUCE":               ("1", "1", "n", "0", "sent"),
    "ALLREDUCE":            ("1", "1", "1", "1", "sent"),
    "SCAN":                 ("1", "1", "1", "1", "sent"),
    "EXSCAN":               ("1", "1", "1", "1", "sent"),
    "REDUCE_SCATTER_BLOCK": ("n", "n", "1", "1", "received"),
    "GATHER":               ("1", "1", "n", "0", "sent"),
    "GATHERV":              ("1", "1", "n", "0", "sent"),
    "SCATTER":              ("n", "0", "1", "1", "received"),
    "SCATTERV":             ("n", "0", "1", "1", "received"),
    "ALLGATHER":            ("1", "1", "n", "n", "sent"),
    "ALLGATHERV":           ("1", "1", "n", "n", "sent"),
    "ALLTOALL":             ("n", "n", "n", "n", "sent"),
    "ALLTOALLV":            ("n", "n", "n", "n", "sent"),
}


def _mult(text: str, numprocs: int) -> int:
    return numprocs if text == "n" else int(text)


def _multipliers(op: str, numprocs: int, is_root: bool) -> tuple[int, int, str]:
    if op not in COLLECTIVE_SIZES:
        raise PevpmError(f"collective operation {op} is not supported", "trace")
    sr, so, rr, ro, field = COLLECTIVE_SIZES[op]
    sent, received = (sr, rr) if is_root else (so, ro)
    return _mult(sent, numprocs), _mult(received, numprocs), field


def totals(op: str, size: int, numprocs: int, is_root: bool) -> tuple[int, int]:
    """(sizeSent, sizeReceived) of a rank whose collective moves ``size`` bytes per peer.

    >>> totals("BCAST", 100, 4, is_root=True), totals("BCAST", 100, 4, is_root=False)
    ((400, 100), (0, 100))
    """
    sent, received, _ = _multipliers(op, numprocs, is_root)
    return size * sent, size * received


def per_peer_size(op: str, sent: int, received: int, numprocs: int, is_root: bool) -> int:
    """The bytes per peer of a collective from its OTF2 totals (inverse of :func:`totals`)."""
    ms, mr, field = _multipliers(op, numprocs, is_root)
    value, mult = (sent, ms) if field == "sent" else (received, mr)
    return value // mult if mult else 0
