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


class RankScript:
    """The statements one rank runs for one collective call.

    ``tag`` is the collective tag used unless a call gives its own.  Sizes
    and ranks are plain ints; negative sizes are clamped to zero (they only
    arise from integer division of empty blocks).
    """

    def __init__(self, rank: int, tag: int):
        self.rank = rank
        self.tag = tag
        self._body: list[Statement] = []
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
        self._body.append(Message("MPI_Sendrecv", _const(max(size, 0)), src=_const(src),
                                  dst=_const(dst), tag=_const(self._tag(tag)),
                                  recv_size=_const(max(recv, 0))))

    def waitall(self) -> None:
        """Wait for every request started since the last waitall (if any)."""
        if self._pending:
            self._body.append(Message("MPI_Waitall", requests=tuple(self._pending)))
            self._pending = []

    # -- computation ----------------------------------------------------------------
    def compute(self, seconds: float) -> None:
        """Local work (e.g. applying a reduction operator); zero time adds nothing."""
        if seconds > 0:
            self._body.append(Serial(_const(float(seconds))))

    def statements(self) -> tuple[Statement, ...]:
        """The finished script; outstanding requests are waited for at the end."""
        self.waitall()
        return tuple(self._body)

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
        self._body.append(Message(op, _const(max(size, 0)), src=_const(src), dst=_const(dst),
                                  tag=_const(self._tag(tag)), request=request))
        return request


def _const(value: float) -> Expr:
    return Expr.of(value)
