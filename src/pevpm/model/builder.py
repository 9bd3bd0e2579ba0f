"""Build PEVPM models from Python, reading like the program they describe.

Values are numbers or C-like expression text (see :mod:`pevpm.model.expr`).
Blocks are ``with`` statements, so the model's shape is the code's shape.

>>> b = ModelBuilder(constants={"xsize": 256}, parameters={"iterations": 100})
>>> row = "xsize * sizeof(float)"
>>> with b.loop("parameter iterations"):
...     with b.runon() as ranks:
...         with ranks.case("procnum % 2 == 0"):
...             b.send(row, dest="(procnum + 1) % numprocs")
...             b.recv(row, source="(procnum + numprocs - 1) % numprocs")
...         with ranks.case("procnum % 2 == 1"):
...             b.recv(row, source="(procnum + numprocs - 1) % numprocs")
...             b.send(row, dest="(procnum + 1) % numprocs")
...     b.serial("0.01 / numprocs")
>>> model = b.build()
>>> len(model.body), type(model.body[0]).__name__
(1, 'Loop')
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace

from pevpm.errors import ModelError
from pevpm.model.ast import (
    REPEAT_CAP,
    Branch,
    Call,
    Condition,
    Defaults,
    Location,
    Loop,
    Message,
    Model,
    Network,
    Processor,
    Repeat,
    Runon,
    Serial,
    Statement,
)
from pevpm.model.expr import Expr, Number
from pevpm.model.printer import to_directives

Value = "Expr | Number | str"


class _Arms:
    """Collects the arms of a Condition or Runon opened with ``with``."""

    def __init__(self, builder: ModelBuilder, prefix: str):
        self._builder = builder
        self._prefix = prefix
        self.branches: list[Branch] = []

    @contextmanager
    def case(self, guard, name: str | None = None) -> Iterator[None]:
        """One arm: ``guard`` is a weight (Condition) or a predicate (Runon)."""
        with self._builder._block() as body:
            yield
        self.branches.append(Branch(name or f"{self._prefix}{len(self.branches) + 1}",
                                    Expr.of(guard), tuple(body)))


class ModelBuilder:
    """Append statements in program order; :meth:`build` returns the :class:`Model`.

    ``constants`` are fixed names (``#define`` in C), ``parameters`` names a
    prediction may override (``pevpm predict -D name=value``); ``source``
    names the file the model describes, for messages; with ``lines`` each
    statement is located at the line of the file that added it, which
    messages then name (``model.py:12:1``, not ``statement 1.3``; the models
    ``pevpm extract`` writes do so).  Every size, time,
    rank and count is a number or C-like expression text over ``procnum``
    (this rank), ``numprocs``, the constants, the parameters and loop indices.
    :meth:`directives` prints the same model as ``PEVPM`` directives, so a
    model can be written either way:

    >>> b = ModelBuilder(parameters={"iterations": 10})
    >>> with b.loop("parameter iterations"):
    ...     b.isend(1024, dest="(procnum + 1) % numprocs", request="s")
    ...     b.irecv(1024, source="(procnum + numprocs - 1) % numprocs", request="r")
    ...     b.serial("0.001 / numprocs")
    ...     b.waitall(["s", "r"])
    ...     b.collective("MPI_Allreduce", 8)
    >>> print(b.directives(), end="")
    // PEVPM Parameter iterations = 10
    // PEVPM Loop iterations = parameter iterations
    // PEVPM {
    // PEVPM   Message type = MPI_Isend
    // PEVPM   &       size = 1024
    // PEVPM   &       from = procnum
    // PEVPM   &       to = (procnum + 1) % numprocs
    // PEVPM   &       req = s
    // PEVPM   Message type = MPI_Irecv
    // PEVPM   &       size = 1024
    // PEVPM   &       from = (procnum + numprocs - 1) % numprocs
    // PEVPM   &       to = procnum
    // PEVPM   &       req = r
    // PEVPM   Serial time = 0.001 / numprocs
    // PEVPM   Message type = MPI_Waitall
    // PEVPM   &       size = 0
    // PEVPM   &       req = s, r
    // PEVPM   Message type = MPI_Allreduce
    // PEVPM   &       size = 8
    // PEVPM }
    """

    def __init__(self, constants: Mapping[str, Number] | None = None,
                 parameters: Mapping[str, Number] | None = None, source: str | None = None,
                 lines: bool = False):
        self._stack: list[list[Statement]] = [[]]
        self._lines = lines
        self._subroutines: dict[str, tuple[Statement, ...]] = {}
        self._processors: dict[str, Processor] = {}
        self._networks: dict[str, Network] = {}
        self._defaults = Defaults()
        self._constants = dict(constants or {})
        self._parameters = dict(parameters or {})
        self._source = source

    # -- plumbing -----------------------------------------------------------------
    def add(self, statement: Statement) -> None:
        """Append any AST statement (what the helpers below do).

        >>> from pevpm.model.ast import Serial
        >>> b = ModelBuilder()
        >>> b.add(Serial(Expr.of(0.5)))
        >>> b.build().body
        (Serial(time=Expr('0.5'), on=None, sleep=False, loc=None),)
        """
        if getattr(statement, "loc", False) is None:
            loc = _caller_location(always=self._lines)
            if loc is not None:
                statement = replace(statement, loc=loc)
        self._stack[-1].append(statement)

    @contextmanager
    def _block(self) -> Iterator[list[Statement]]:
        body: list[Statement] = []
        self._stack.append(body)
        try:
            yield body
        finally:
            self._stack.pop()

    # -- computation and control flow ---------------------------------------------
    def serial(self, time, on: str | None = None, sleep: bool = False) -> None:
        """Local computation of ``time`` seconds (at the timing basis); ``on`` names the
        processor this time applies to (``Serial on ID``; other processors skip it);
        ``sleep``: the rank waits ``time`` seconds without using its core (``kind = sleep``).

        >>> b = ModelBuilder(constants={"n": 1000})
        >>> b.serial("0.002 * n")
        >>> b.serial(0.5, on="fast")
        >>> b.serial(0.01, sleep=True)
        >>> print(b.directives(), end="")
        #define n 1000
        // PEVPM Serial time = 0.002 * n
        // PEVPM Serial on fast time = 0.5
        // PEVPM Serial time = 0.01
        // PEVPM &      kind = sleep
        """
        self.add(Serial(Expr.of(time), on, sleep))

    @contextmanager
    def loop(self, count, index: str | None = None) -> Iterator[None]:
        """Repeat the block ``count`` times; ``index`` names the counter.

        >>> b = ModelBuilder()
        >>> with b.loop(3, index="i"):
        ...     b.serial("0.001 * (i + 1)")
        >>> b.build().body[0].count, b.build().body[0].index
        (Expr('3'), 'i')
        """
        with self._block() as body:
            yield
        self.add(Loop(Expr.of(count), tuple(body), index))

    @contextmanager
    def repeat(self, until, max=None, index: str | None = None) -> Iterator[None]:
        """Run the block, then again, until ``until`` holds after a pass (at most
        ``max`` passes, default :data:`~pevpm.model.ast.REPEAT_CAP`); ``index``
        counts the passes made.  A worker that receives jobs until the tag says stop:

        >>> b = ModelBuilder(constants={"DIE": 2})
        >>> with b.repeat("job.MPI_TAG == DIE", max=1000):
        ...     b.message("MPI_Recv", 8, source=0, request="job")
        ...     with b.on_ranks("job.MPI_TAG != DIE"):
        ...         b.serial(0.001)
        ...         b.send(8, dest=0)
        >>> print(b.directives().splitlines()[1])
        // PEVPM Repeat until = job.MPI_TAG == DIE
        """
        with self._block() as body:
            yield
        cap = Expr.of(REPEAT_CAP) if max is None else Expr.of(max)
        self.add(Repeat(Expr.of(until), tuple(body), cap, index))

    @contextmanager
    def condition(self) -> Iterator[_Arms]:
        """Random branch; open arms with ``case(weight)``: each run takes one arm, with
        probability proportional to its weight.

        >>> b = ModelBuilder()
        >>> with b.condition() as arms:
        ...     with arms.case(0.9):
        ...         b.serial(0.001)
        ...     with arms.case(0.1):
        ...         b.serial(0.010)
        >>> print(b.directives(), end="")
        // PEVPM Condition c1 = 0.9
        // PEVPM {
        // PEVPM   Serial time = 0.001
        // PEVPM }
        // PEVPM &         c2 = 0.1
        // PEVPM {
        // PEVPM   Serial time = 0.01
        // PEVPM }
        """
        arms = _Arms(self, "c")
        yield arms
        self.add(Condition(tuple(arms.branches)))

    @contextmanager
    def runon(self) -> Iterator[_Arms]:
        """Per-rank branch; open arms with ``case(predicate)``; first true arm runs.

        >>> b = ModelBuilder()
        >>> with b.runon() as ranks:
        ...     with ranks.case("procnum == 0"):
        ...         b.serial(0.002)
        ...     with ranks.case("procnum != 0"):
        ...         b.serial(0.001)
        >>> [arm.guard for arm in b.build().body[0].branches]
        [Expr('procnum == 0'), Expr('procnum != 0')]
        """
        arms = _Arms(self, "c")
        yield arms
        self.add(Runon(tuple(arms.branches)))

    @contextmanager
    def on_ranks(self, predicate) -> Iterator[None]:
        """Shorthand for a one-arm Runon: only ranks where ``predicate`` holds run the block.

        >>> b = ModelBuilder()
        >>> with b.on_ranks("procnum == 0"):
        ...     b.serial(0.002)
        >>> print(b.directives(), end="")
        // PEVPM Runon c1 = procnum == 0
        // PEVPM {
        // PEVPM   Serial time = 0.002
        // PEVPM }
        """
        with self.runon() as arms, arms.case(predicate):
            yield

    @contextmanager
    def subroutine(self, name: str) -> Iterator[None]:
        """Define subroutine ``name``; use it with :meth:`call`.

        >>> b = ModelBuilder()
        >>> with b.subroutine("halo"):
        ...     b.sendrecv(64, dest="(procnum + 1) % numprocs",
        ...                source="(procnum + numprocs - 1) % numprocs")
        >>> sorted(b.build().subroutines)
        ['halo']
        """
        if name in self._subroutines:
            raise ModelError(f"subroutine {name!r} defined twice")
        with self._block() as body:
            yield
        self._subroutines[name] = tuple(body)

    def call(self, name: str) -> None:
        """Run subroutine ``name`` here (defined before or after, with :meth:`subroutine`).

        >>> b = ModelBuilder()
        >>> with b.subroutine("step"):
        ...     b.serial(0.1)
        >>> b.call("step"); b.call("step")
        >>> print(b.directives(), end="")
        // PEVPM Subroutine name = step
        // PEVPM {
        // PEVPM   Serial time = 0.1
        // PEVPM }
        // PEVPM Call name = step
        // PEVPM Call name = step
        """
        self.add(Call(name))

    # -- messages -----------------------------------------------------------------
    def message(self, op: str, size=0, *, source=None, dest=None, tag=None,
                request: str | None = None, requests: Sequence[str] = (), root=None,
                recv_size=None) -> None:
        """Any MPI operation; the named helpers below fill in the usual fields.

        ``size`` is in bytes; ``source``/``dest`` are ranks; ``request`` names the
        request a non-blocking call starts, ``requests`` those a completion call
        waits for; ``root`` is a collective's root; ``recv_size`` a
        ``MPI_Sendrecv``'s receive size when it differs.

        >>> b = ModelBuilder()
        >>> b.message("MPI_Ssend", 4096, source="procnum", dest=0)
        >>> b.build().body[0].op
        'MPI_Ssend'
        """
        def opt(v):
            return None if v is None else Expr.of(v)
        self.add(Message(op, Expr.of(size), opt(source), opt(dest), opt(tag), request,
                                tuple(requests), opt(root), opt(recv_size)))

    def send(self, size, dest, tag=None) -> None:
        """Blocking ``MPI_Send`` of ``size`` bytes from this rank to ``dest``.

        Small sends return once the message is buffered (eagerly), larger ones
        when it is received; the machine's eager limit decides.

        >>> b = ModelBuilder()
        >>> b.send("8 * 1024", dest="(procnum + 1) % numprocs", tag=7)
        >>> print(b.directives(), end="")
        // PEVPM Message type = MPI_Send
        // PEVPM &       size = 8 * 1024
        // PEVPM &       from = procnum
        // PEVPM &       to = (procnum + 1) % numprocs
        // PEVPM &       tag = 7
        """
        return self.message("MPI_Send", size, source="procnum", dest=dest, tag=tag)

    def recv(self, size, source, tag=None) -> None:
        """Blocking ``MPI_Recv`` of ``size`` bytes from ``source`` into this rank.

        >>> b = ModelBuilder()
        >>> b.recv(1024, source=0)
        >>> m = b.build().body[0]
        >>> m.op, m.src, m.dst
        ('MPI_Recv', Expr('0'), Expr('procnum'))
        """
        return self.message("MPI_Recv", size, source=source, dest="procnum", tag=tag)

    def isend(self, size, dest, request: str, tag=None) -> None:
        """Non-blocking ``MPI_Isend`` to ``dest``; complete it with :meth:`wait`,
        :meth:`waitall` or :meth:`test` naming the same ``request``.

        The call itself costs the machine's local completion time (``isendlocal``
        in a profile); the message travels while the rank goes on.

        >>> b = ModelBuilder()
        >>> b.isend(1024, dest="(procnum + 1) % numprocs", request="right")
        >>> b.wait("right")
        >>> [(m.op, m.request, m.requests) for m in b.build().body]
        [('MPI_Isend', 'right', ()), ('MPI_Wait', 'right', ())]
        """
        return self.message("MPI_Isend", size, source="procnum", dest=dest, tag=tag,
                            request=request)

    def irecv(self, size, source, request: str, tag=None) -> None:
        """Non-blocking ``MPI_Irecv`` from ``source``; the data has arrived once a
        :meth:`wait` or :meth:`waitall` on ``request`` returns.

        >>> b = ModelBuilder()
        >>> b.irecv(1024, source="(procnum + numprocs - 1) % numprocs", request="left")
        >>> print(b.directives(), end="")
        // PEVPM Message type = MPI_Irecv
        // PEVPM &       size = 1024
        // PEVPM &       from = (procnum + numprocs - 1) % numprocs
        // PEVPM &       to = procnum
        // PEVPM &       req = left
        """
        return self.message("MPI_Irecv", size, source=source, dest="procnum", tag=tag,
                            request=request)

    def sendrecv(self, size, dest, source, tag=None, recv_size=None) -> None:
        """``MPI_Sendrecv``: send ``size`` bytes to ``dest`` and receive from ``source``
        (``recv_size`` bytes if given) in one call, the usual shift or halo exchange.

        >>> b = ModelBuilder()
        >>> b.sendrecv(64, dest="(procnum + 1) % numprocs",
        ...            source="(procnum + numprocs - 1) % numprocs")
        >>> print(b.directives(), end="")
        // PEVPM Message type = MPI_Sendrecv
        // PEVPM &       size = 64
        // PEVPM &       from = (procnum + numprocs - 1) % numprocs
        // PEVPM &       to = (procnum + 1) % numprocs
        """
        return self.message("MPI_Sendrecv", size, source=source, dest=dest, tag=tag,
                            recv_size=recv_size)

    def wait(self, request: str) -> None:
        """``MPI_Wait``: block until the non-blocking call named ``request`` completes.

        >>> b = ModelBuilder()
        >>> b.irecv(8, source=0, request="r")
        >>> b.wait("r")
        >>> print(b.directives().splitlines()[-3:])
        ['// PEVPM Message type = MPI_Wait', '// PEVPM &       size = 0', '// PEVPM &       req = r']
        """
        return self.message("MPI_Wait", request=request)

    def waitall(self, requests: Sequence[str] = ()) -> None:
        """``MPI_Waitall``: block until every named request completes.

        >>> b = ModelBuilder()
        >>> b.isend(8, dest=1, request="s")
        >>> b.irecv(8, source=1, request="r")
        >>> b.waitall(["s", "r"])
        >>> b.build().body[-1].requests
        ('s', 'r')
        """
        return self.message("MPI_Waitall", requests=requests)

    def test(self, request: str) -> None:
        """``MPI_Test``: check once, without blocking, whether ``request`` has completed
        (a polling loop is a :meth:`loop` around it).

        >>> b = ModelBuilder()
        >>> b.irecv(8, source=0, request="r")
        >>> with b.loop(10):
        ...     b.serial(1e-5)
        ...     b.test("r")
        >>> b.build().body[1].body[1].op
        'MPI_Test'
        """
        return self.message("MPI_Test", request=request)

    def collective(self, op: str, size=0, root=None) -> None:
        """A collective operation, e.g. ``collective("MPI_Bcast", 1024, root=0)``.

        Every rank calls it; the machine's collective configuration picks the
        algorithm (``--coll``, docs/collectives.md).

        >>> b = ModelBuilder()
        >>> b.collective("MPI_Allreduce", 8)
        >>> b.collective("MPI_Bcast", 1024, root=0)
        >>> print(b.directives(), end="")
        // PEVPM Message type = MPI_Allreduce
        // PEVPM &       size = 8
        // PEVPM Message type = MPI_Bcast
        // PEVPM &       size = 1024
        // PEVPM &       root = 0
        """
        return self.message(op, size, root=root)

    # -- machine declarations -----------------------------------------------------
    def processor(self, name: str, timing_basis: float) -> None:
        """Declare processor model ``name`` whose Serial times were measured at
        ``timing_basis`` MHz (a rank at speed S takes time x basis / S).

        >>> b = ModelBuilder()
        >>> b.processor("perseus", 500)
        >>> b.build().processors["perseus"].timing_basis
        500.0
        """
        self._processors[name] = Processor(name, float(timing_basis))

    def defaults(self, **fields) -> None:
        """Set ``Default`` fields: processor, numprocs, speed, speeds, network.

        >>> b = ModelBuilder()
        >>> b.defaults(numprocs=4)
        >>> b.build().defaults.numprocs
        4
        """
        self._defaults = Defaults(**{**self._defaults.__dict__, **fields})

    def network(self, network: Network) -> None:
        """Declare a :class:`~pevpm.model.ast.Network` (a ``Network`` directive).

        >>> from pevpm.model.ast import Network
        >>> b = ModelBuilder()
        >>> b.network(Network("ether", "switch"))
        >>> list(b.build().networks)
        ['ether']
        """
        self._networks[network.name] = network

    def build(self) -> Model:
        """The :class:`~pevpm.model.ast.Model` built so far (the builder stays usable).

        >>> b = ModelBuilder(parameters={"iterations": 5})
        >>> b.serial(0.1)
        >>> model = b.build()
        >>> model.parameters, len(model.body)
        ({'iterations': 5}, 1)
        """
        if len(self._stack) != 1:
            raise ModelError("build() called inside an open block")
        return Model(tuple(self._stack[0]), dict(self._subroutines), dict(self._processors),
                     dict(self._networks), self._defaults, dict(self._constants),
                     dict(self._parameters), self._source)

    def directives(self, language: str = "c") -> str:
        """The model as ``PEVPM`` directives to paste into the program's source
        (``language``: ``c``, ``fortran`` or ``python``); ``pevpm show`` reads them back.

        >>> b = ModelBuilder()
        >>> b.send(8, dest=1)
        >>> print(b.directives("python"), end="")
        # PEVPM Message type = MPI_Send
        # PEVPM &       size = 8
        # PEVPM &       from = procnum
        # PEVPM &       to = 1
        """
        return to_directives(self.build(), language)


__all__ = ["Location", "ModelBuilder"]


#: Files whose frames are the builder's own, not the model's.
_OWN_FILES = frozenset({__file__, contextlib.__file__})

#: Whether builders note the model file's line of each statement (while
#: :func:`noting_lines` runs; a model built in a test or a notebook keeps
#: ``statement 1.2``-style places, which do not move when the file is edited).
_NOTING_LINES: ContextVar[bool] = ContextVar("pevpm_noting_lines", default=False)


@contextmanager
def noting_lines() -> Iterator[None]:
    """Builders used inside this block give each statement the place in the
    calling file (``model.py:12:9``), so every error names a line of the
    model file (:func:`pevpm.model.model_file.run_model_file` runs model files so).

    >>> with noting_lines():
    ...     b = ModelBuilder()
    ...     b.serial(1.0)
    >>> b.build().body[0].loc is None          # a doctest has no file to point into
    True
    """
    token = _NOTING_LINES.set(True)
    try:
        yield
    finally:
        _NOTING_LINES.reset(token)


@functools.lru_cache(maxsize=64)
def _positions(code) -> tuple:
    """The source positions of ``code``'s instructions, listed once per code
    object (an extracted model's ``model()`` has thousands of statements: listing
    them again at each made building it quadratic, over 10 minutes for 9,000 lines)."""
    return tuple(code.co_positions())


def _caller_location(always: bool = False) -> Location | None:
    """Where the model's code called the builder, inside :func:`noting_lines`
    (or ``always``: a ``ModelBuilder(lines=True)``); None otherwise and for
    code that has no file."""
    if not (always or _NOTING_LINES.get()):
        return None
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename in _OWN_FILES:
        frame = frame.f_back
    if frame is None or frame.f_code.co_filename.startswith("<"):
        return None
    line, col = frame.f_lineno, None
    positions = _positions(frame.f_code)
    if 0 <= frame.f_lasti // 2 < len(positions):
        start_line, _, col, _ = positions[frame.f_lasti // 2]
        line = start_line or line
    return Location(frame.f_code.co_filename, line, (col or 0) + 1)
