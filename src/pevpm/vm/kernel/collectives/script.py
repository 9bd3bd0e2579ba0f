"""Write one rank's part of a collective as point-to-point statements.

Every algorithm in this package describes, for one rank, the MPI calls that
rank makes; :class:`RankScript` turns those calls into AST ``Message`` (and
``Serial``) nodes with constant operands, collective-only tags and request
ids in a reserved namespace, so the engine runs them like user statements
without ever confusing them with the user's own messages.

>>> s = RankScript(rank=0, tag=-2_000_001)
>>> req = s.isend(dst=1, size=64)
>>> s.waitall()
>>> [m.op for m in s.statements()]
['MPI_Isend', 'MPI_Waitall']
>>> s.statements()[1].requests == (req,)
True
"""

from __future__ import annotations

from pevpm.model.ast import Message, Serial, Statement
from pevpm.model.expr import Expr

#: Prefix of every request id a collective creates (user ids never start so).
REQUEST_PREFIX = "__coll"


#: Kinds of :attr:`RankScript.steps`: ``(MESSAGE, op, size, src, dst, tag, request)``,
#: ``(EXCHANGE, size, src, dst, tag, recv_size)``, ``(WAITALL, requests)``, ``(COMPUTE, seconds)``.
MESSAGE, EXCHANGE, WAITALL, COMPUTE = range(4)


class RankScript:
    """The statements one rank runs for one collective call.

    ``tag`` is the collective tag used unless a call gives its own.  Sizes
    and ranks are plain ints; negative sizes are clamped to zero (they only
    arise from integer division of empty blocks).  :attr:`steps` holds the
    calls as small tuples of numbers (what the engines compile, see
    :mod:`pevpm.vm.kernel.collectives.compiled`); :meth:`statements` spells them as AST.
    """

    def __init__(self, rank: int, tag: int):
        self.rank = rank
        self.tag = tag
        self.steps: list[tuple] = []
        self._pending: list[str] = []
        self._next_request = 0

    # -- point-to-point -----------------------------------------------------------
    def send(self, dst: int, size: int, tag: int | None = None) -> None:
        self._message("MPI_Send", size, self.rank, dst, tag)

    def recv(self, src: int, size: int, tag: int | None = None) -> None:
        self._message("MPI_Recv", size, src, self.rank, tag)

    def isend(self, dst: int, size: int, tag: int | None = None) -> str:
        """Start a send; the request is completed by the next :meth:`waitall`."""
        return self._message("MPI_Isend", size, self.rank, dst, tag, self._new_request())

    def irecv(self, src: int, size: int, tag: int | None = None) -> str:
        """Post a receive; the request is completed by the next :meth:`waitall`."""
        return self._message("MPI_Irecv", size, src, self.rank, tag, self._new_request())

    def sendrecv(self, dst: int, size: int, src: int, recv_size: int | None = None,
                 tag: int | None = None) -> None:
        """Send ``size`` bytes to ``dst`` while receiving ``recv_size`` from ``src``."""
        recv = size if recv_size is None else recv_size
        self.steps.append((EXCHANGE, max(size, 0), src, dst, self._tag(tag), max(recv, 0)))

    def waitall(self) -> None:
        """Wait for every request started since the last waitall (if any)."""
        if self._pending:
            self.steps.append((WAITALL, tuple(self._pending)))
            self._pending = []

    # -- computation ----------------------------------------------------------------
    def compute(self, seconds: float) -> None:
        """Local work (e.g. applying a reduction operator); zero time adds nothing."""
        if seconds > 0:
            self.steps.append((COMPUTE, float(seconds)))

    def finish(self) -> list[tuple]:
        """The finished :attr:`steps`; outstanding requests are waited for at the end."""
        self.waitall()
        return self.steps

    def statements(self) -> tuple[Statement, ...]:
        """The finished script as AST statements."""
        return tuple(statement_of(step) for step in self.finish())

    # -- plumbing -------------------------------------------------------------------
    def _tag(self, tag: int | None) -> int:
        return self.tag if tag is None else tag

    def _new_request(self) -> str:
        name = f"{REQUEST_PREFIX}{self._next_request}"
        self._next_request += 1
        self._pending.append(name)
        return name

    def _message(self, op: str, size: int, src: int, dst: int, tag: int | None,
                 request: str | None = None) -> str | None:
        self.steps.append((MESSAGE, op, max(size, 0), src, dst, self._tag(tag), request))
        return request


def statement_of(step: tuple) -> Statement:
    """One step of :attr:`RankScript.steps` as an AST statement."""
    kind = step[0]
    if kind == MESSAGE:
        _, op, size, src, dst, tag, request = step
        return Message(op, _const(size), src=_const(src), dst=_const(dst), tag=_const(tag),
                       request=request)
    if kind == EXCHANGE:
        _, size, src, dst, tag, recv = step
        return Message("MPI_Sendrecv", _const(size), src=_const(src), dst=_const(dst),
                       tag=_const(tag), recv_size=_const(recv))
    if kind == WAITALL:
        return Message("MPI_Waitall", requests=step[1])
    return Serial(_const(step[1]))


def _const(value: float) -> Expr:
    return Expr.of(value)
