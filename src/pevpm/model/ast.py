"""The PEVPM model: what a message-passing program does, as a tree.

A model is the program's structure, not its arithmetic: ``Serial`` segments
that take time, ``Message`` operations, and control flow (``Loop``,
``Repeat`` until a condition holds, ``Condition`` for random branches,
``Runon`` for per-rank branches, ``Call``
of subroutines, which are inlined).  Only ``Serial`` and ``Message`` take
virtual time.  Values are :class:`~pevpm.model.expr.Expr` over ``procnum``,
``numprocs``, parameters and program constants.  Times are in seconds at
the processor's timing basis; sizes in bytes.

Nodes are frozen dataclasses; equality ignores source locations, so a model
printed to directives and parsed back compares equal to the original.

>>> from pevpm.model.expr import Expr
>>> body = (Serial(Expr.of(0.5)),
...         Message("MPI_Send", size=Expr.of(8), dst=Expr.of("procnum + 1")))
>>> Loop(Expr.of(10), body) == Loop(Expr.of("10"), body)
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pevpm.errors import ModelError, did_you_mean
from pevpm.model.expr import Expr, Number


@dataclass(frozen=True)
class Location:
    """A place in a model's source: ``jacobi.c:42:17``."""

    path: str
    line: int
    col: int = 1

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


def _where(loc: Location | None) -> str | None:
    return str(loc) if loc else None


# Operations, grouped by how the virtual machine treats them.
BLOCKING_SENDS = frozenset({"MPI_Send", "MPI_Ssend", "MPI_Rsend", "MPI_Bsend"})
NONBLOCKING_SENDS = frozenset({"MPI_Isend", "MPI_Issend"})
BLOCKING_RECVS = frozenset({"MPI_Recv"})
NONBLOCKING_RECVS = frozenset({"MPI_Irecv"})
COMPLETIONS = frozenset({"MPI_Wait", "MPI_Waitall", "MPI_Test"})
EXCHANGES = frozenset({"MPI_Sendrecv"})
COLLECTIVES = frozenset({
    "MPI_Bcast", "MPI_Barrier", "MPI_Scatter", "MPI_Scatterv", "MPI_Gather",
    "MPI_Gatherv", "MPI_Allgather", "MPI_Alltoall", "MPI_Reduce", "MPI_Allreduce",
    "MPI_Reduce_scatter", "MPI_Scan",
})
SENDS = BLOCKING_SENDS | NONBLOCKING_SENDS
RECVS = BLOCKING_RECVS | NONBLOCKING_RECVS
POINT_TO_POINT = SENDS | RECVS | EXCHANGES
ALL_OPERATIONS = POINT_TO_POINT | COMPLETIONS | COLLECTIVES
ROOTED_COLLECTIVES = frozenset({"MPI_Bcast", "MPI_Scatter", "MPI_Scatterv", "MPI_Gather",
                                "MPI_Gatherv", "MPI_Reduce"})


@dataclass(frozen=True)
class Serial:
    """Local computation taking ``time`` seconds at the timing basis.

    With ``on`` set, the segment applies only to ranks whose processor model
    has that id (several ``Serial on`` nodes in a row give one time per model).
    With ``sleep`` the rank waits without using its core (a ``sleep()``, I/O):
    the time neither scales with processor speed nor stretches when ranks
    share cores (:mod:`pevpm.vm.kernel.sharing`).
    """

    time: Expr
    on: str | None = None
    sleep: bool = False
    loc: Location | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Message:
    """One MPI operation.

    ``src``/``dst`` are the thesis's ``from``/``to``: the executing rank is
    ``src`` of a send and ``dst`` of a receive; the other end is the partner.
    ``MPI_Sendrecv`` sends ``size`` bytes to ``dst`` and receives
    ``recv_size`` (default ``size``) bytes from ``src``.  ``request`` names the
    request of a non-blocking operation, a Wait or a Test; ``requests`` lists
    those of a Waitall (empty: every outstanding request of the rank).
    Collectives use ``size`` and ``root``.
    """

    op: str
    size: Expr = field(default_factory=lambda: Expr.of(0))
    src: Expr | None = None
    dst: Expr | None = None
    tag: Expr | None = None
    request: str | None = None
    requests: tuple[str, ...] = ()
    root: Expr | None = None
    recv_size: Expr | None = None
    loc: Location | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        where = _where(self.loc)
        if self.op not in ALL_OPERATIONS:
            raise ModelError(f"unknown MPI operation {self.op!r}"
                             + did_you_mean(self.op, ALL_OPERATIONS), where)
        if self.op in SENDS and self.dst is None:
            raise ModelError(f"{self.op} needs a destination ('to')", where)
        if self.op in RECVS and self.src is None:
            raise ModelError(f"{self.op} needs a source ('from'; MPI_ANY_SOURCE allowed)", where)
        if self.op in EXCHANGES and (self.src is None or self.dst is None):
            raise ModelError("MPI_Sendrecv needs both 'from' (its source) and 'to' "
                             "(its destination)", where)
        if self.op in (NONBLOCKING_SENDS | NONBLOCKING_RECVS | {"MPI_Wait", "MPI_Test"}) \
                and not self.request:
            raise ModelError(f"{self.op} needs a request id ('req')", where)


@dataclass(frozen=True)
class Loop:
    """Repeat ``body`` ``count`` times; ``index`` (optional) names the counter 0..count-1."""

    count: Expr
    body: tuple[Statement, ...]
    index: str | None = None
    loc: Location | None = field(default=None, compare=False)


#: Passes a ``Repeat`` may make when its model gives no ``max``.
REPEAT_CAP = 1_000_000


@dataclass(frozen=True)
class Repeat:
    """Run ``body``, then again, until ``until`` holds after a pass (a
    do-while loop): the loop of a worker that receives until the tag says
    stop.  ``until`` may use receive statuses (``t.MPI_TAG``), ``index`` (the
    passes made so far, 0 during the first) and every name a value may use.
    A rank that makes ``cap`` passes with ``until`` still false stops the run
    with an error naming the loop.

    >>> from pevpm.model.expr import Expr
    >>> Repeat(Expr.of("t.MPI_TAG == 99"), ()).cap
    Expr('1000000')
    """

    until: Expr
    body: tuple[Statement, ...]
    cap: Expr = field(default_factory=lambda: Expr.of(REPEAT_CAP))
    index: str | None = None
    loc: Location | None = field(default=None, compare=False)


def reused_index(index: str, outer: str) -> str:
    """Why a loop may not take ``index`` when a loop it is nested in (at
    ``outer``) has it already.  A rank has one variable per name, so the inner
    loop would leave its last value in the outer's index for the rest of the
    outer body; in C a nested loop sharing its counter changes the outer
    loop's trip count.

    >>> print(reused_index("i", "a.c:3:1"))
    loop index 'i' is taken by the enclosing loop at a.c:3:1; nested loops need distinct indices
    """
    return (f"loop index {index!r} is taken by the enclosing loop at {outer}; "
            "nested loops need distinct indices")


@dataclass(frozen=True)
class Branch:
    """One arm of a Condition (``guard`` is a weight) or Runon (``guard`` is a predicate)."""

    name: str
    guard: Expr
    body: tuple[Statement, ...]
    loc: Location | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Condition:
    """A random branch: arm i is taken with probability weight_i / sum(weights),
    drawn afresh each time the Condition is reached."""

    branches: tuple[Branch, ...]
    loc: Location | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Runon:
    """A per-rank branch: a rank runs the first arm whose predicate holds, or
    nothing when none does."""

    branches: tuple[Branch, ...]
    loc: Location | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Call:
    """Run subroutine ``name`` of the model here (inlined)."""

    name: str
    loc: Location | None = field(default=None, compare=False)


Statement = Serial | Message | Loop | Repeat | Condition | Runon | Call


@dataclass(frozen=True)
class Processor:
    """A processor model: ``Serial`` times are valid at ``timing_basis`` MHz."""

    name: str
    timing_basis: float
    loc: Location | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Link:
    """A named network link between two endpoints with a performance profile name."""

    name: str
    src: str
    dst: str
    profile: str


@dataclass(frozen=True)
class Network:
    name: str
    links: tuple[Link, ...] = ()
    loc: Location | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Defaults:
    """The ``Default`` directive: processor model, process count, clock speeds."""

    processor: str | None = None
    numprocs: int | None = None
    speed: float | None = None
    speeds: Mapping[int, float] = field(default_factory=dict)
    network: str | None = None
    loc: Location | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Model:
    """A whole program: main body, subroutines, machine declarations, constants.

    ``constants`` are program constants picked up from the annotated source
    (``int xsize = 256;``); ``parameters`` are default values of names the
    model leaves to evaluation time (``parameter iterations``).
    """

    body: tuple[Statement, ...]
    subroutines: Mapping[str, tuple[Statement, ...]] = field(default_factory=dict)
    processors: Mapping[str, Processor] = field(default_factory=dict)
    networks: Mapping[str, Network] = field(default_factory=dict)
    defaults: Defaults = field(default_factory=Defaults)
    constants: Mapping[str, Number] = field(default_factory=dict)
    parameters: Mapping[str, Number] = field(default_factory=dict)
    source: str | None = field(default=None, compare=False)


def walk(statements: tuple[Statement, ...]):
    """Yield every statement in ``statements`` depth-first (not entering Calls).

    >>> from pevpm.model.expr import Expr
    >>> [type(s).__name__ for s in walk((Loop(Expr.of(2), (Serial(Expr.of(1)),)),))]
    ['Loop', 'Serial']
    """
    for stmt in statements:
        yield stmt
        if isinstance(stmt, (Loop, Repeat)):
            yield from walk(stmt.body)
        elif isinstance(stmt, (Condition, Runon)):
            for branch in stmt.branches:
                yield from walk(branch.body)


def status_fields(status: str) -> tuple[str, str]:
    """The names a receive's ``req/stat`` id binds: the matched sender and tag."""
    return f"{status}.MPI_SOURCE", f"{status}.MPI_TAG"


def status_names(model: Model) -> set[str]:
    """Names bound by receives, as in C's ``MPI_Status``: after a receive with
    ``req/stat = s`` matches, ``s.MPI_SOURCE`` is the sender's rank and
    ``s.MPI_TAG`` the message's tag (before, they are MPI_ANY_SOURCE and
    MPI_ANY_TAG), so a master can answer whichever worker MPI_ANY_SOURCE delivered.

    >>> from pevpm.model.builder import ModelBuilder
    >>> b = ModelBuilder()
    >>> b.message("MPI_Recv", 8, source="MPI_ANY_SOURCE", request="s")
    >>> b.send(8, dest="s.MPI_SOURCE")
    >>> sorted(status_names(b.build()))
    ['s.MPI_SOURCE', 's.MPI_TAG']
    """
    bodies = [model.body, *model.subroutines.values()]
    return {name for body in bodies for stmt in walk(body)
            if isinstance(stmt, Message) and stmt.op in RECVS and stmt.request
            for name in status_fields(stmt.request)}
