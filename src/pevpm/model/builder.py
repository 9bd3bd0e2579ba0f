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

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from pevpm.errors import ModelError
from pevpm.model.ast import (
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
    Runon,
    Serial,
    Statement,
)
from pevpm.model.expr import Expr, Number

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
    """Append statements in program order; ``build()`` returns the :class:`Model`."""

    def __init__(self, constants: Mapping[str, Number] | None = None,
                 parameters: Mapping[str, Number] | None = None, source: str | None = None):
        self._stack: list[list[Statement]] = [[]]
        self._subroutines: dict[str, tuple[Statement, ...]] = {}
        self._processors: dict[str, Processor] = {}
        self._networks: dict[str, Network] = {}
        self._defaults = Defaults()
        self._constants = dict(constants or {})
        self._parameters = dict(parameters or {})
        self._source = source

    # -- plumbing -----------------------------------------------------------------
    def add(self, statement: Statement) -> None:
        """Append any AST statement (what the helpers below do)."""
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
    def serial(self, time, on: str | None = None) -> None:
        """Local computation of ``time`` seconds (at the timing basis)."""
        self.add(Serial(Expr.of(time), on))

    @contextmanager
    def loop(self, count, index: str | None = None) -> Iterator[None]:
        """Repeat the block ``count`` times; ``index`` names the counter."""
        with self._block() as body:
            yield
        self.add(Loop(Expr.of(count), tuple(body), index))

    @contextmanager
    def condition(self) -> Iterator[_Arms]:
        """Random branch; open arms with ``case(weight)``."""
        arms = _Arms(self, "c")
        yield arms
        self.add(Condition(tuple(arms.branches)))

    @contextmanager
    def runon(self) -> Iterator[_Arms]:
        """Per-rank branch; open arms with ``case(predicate)``; first true arm runs."""
        arms = _Arms(self, "c")
        yield arms
        self.add(Runon(tuple(arms.branches)))

    @contextmanager
    def on_ranks(self, predicate) -> Iterator[None]:
        """Shorthand for a one-arm Runon: only ranks where ``predicate`` holds run the block."""
        with self.runon() as arms, arms.case(predicate):
            yield

    @contextmanager
    def subroutine(self, name: str) -> Iterator[None]:
        """Define subroutine ``name``; use it with :meth:`call`."""
        if name in self._subroutines:
            raise ModelError(f"subroutine {name!r} defined twice")
        with self._block() as body:
            yield
        self._subroutines[name] = tuple(body)

    def call(self, name: str) -> None:
        self.add(Call(name))

    # -- messages -----------------------------------------------------------------
    def message(self, op: str, size=0, *, source=None, dest=None, tag=None,
                request: str | None = None, requests: Sequence[str] = (), root=None,
                recv_size=None) -> None:
        """Any MPI operation; the named helpers below fill in the usual fields."""
        def opt(v):
            return None if v is None else Expr.of(v)
        self.add(Message(op, Expr.of(size), opt(source), opt(dest), opt(tag), request,
                                tuple(requests), opt(root), opt(recv_size)))

    def send(self, size, dest, tag=None) -> None:
        return self.message("MPI_Send", size, source="procnum", dest=dest, tag=tag)

    def recv(self, size, source, tag=None) -> None:
        return self.message("MPI_Recv", size, source=source, dest="procnum", tag=tag)

    def isend(self, size, dest, request: str, tag=None) -> None:
        return self.message("MPI_Isend", size, source="procnum", dest=dest, tag=tag,
                            request=request)

    def irecv(self, size, source, request: str, tag=None) -> None:
        return self.message("MPI_Irecv", size, source=source, dest="procnum", tag=tag,
                            request=request)

    def sendrecv(self, size, dest, source, tag=None, recv_size=None) -> None:
        return self.message("MPI_Sendrecv", size, source=source, dest=dest, tag=tag,
                            recv_size=recv_size)

    def wait(self, request: str) -> None:
        return self.message("MPI_Wait", request=request)

    def waitall(self, requests: Sequence[str] = ()) -> None:
        return self.message("MPI_Waitall", requests=requests)

    def test(self, request: str) -> None:
        return self.message("MPI_Test", request=request)

    def collective(self, op: str, size=0, root=None) -> None:
        """A collective operation, e.g. ``collective("MPI_Bcast", 1024, root=0)``."""
        return self.message(op, size, root=root)

    # -- machine declarations -----------------------------------------------------
    def processor(self, name: str, timing_basis: float) -> None:
        self._processors[name] = Processor(name, float(timing_basis))

    def defaults(self, **fields) -> None:
        """Set ``Default`` fields: processor, numprocs, speed, speeds, network."""
        self._defaults = Defaults(**{**self._defaults.__dict__, **fields})

    def network(self, network: Network) -> None:
        self._networks[network.name] = network

    def build(self) -> Model:
        if len(self._stack) != 1:
            raise ModelError("build() called inside an open block")
        return Model(tuple(self._stack[0]), dict(self._subroutines), dict(self._processors),
                     dict(self._networks), self._defaults, dict(self._constants),
                     dict(self._parameters), self._source)


__all__ = ["Location", "ModelBuilder"]
